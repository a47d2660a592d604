/// Removes a folder appdata made itself (a partial extraction) and everything in it, without
/// following a symlink and without recursion: an explicit stack of open folders, so a tree of
/// any depth costs one descriptor per level and no call stack.
extension Syscalls {
  /// Removes `name` in `directory`, a folder and what it holds or anything else; true when it
  /// is gone.
  @discardableResult
  public static func removeTree(_ name: [UInt8], in directory: FileDescriptor) -> Bool {
    if (try? remove(name, in: directory, isDirectory: false, displayPath: "")) != nil { return true }
    guard case .success(let top) = withCName(name, { open(cName: $0, in: directory, options: .directory) }) else { return false }
    var stack: [(descriptor: FileDescriptor, name: [UInt8])] = [(top, name)]
    func giveUp() -> Bool {
      for level in stack { level.descriptor.close() }
      return false
    }
    while let current = stack.last {
      // A new descriptor each time, so the listing starts from the folder's first entry.
      var names: [[UInt8]] = []
      if case .success(let listing) = withCName([0x2E], { open(cName: $0, in: current.descriptor, options: .directory) }),
         let stream = try? DirectoryStream(taking: listing, displayPath: "") {
        _ = stream.forEachEntry { cName, length, _ in
          let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(cName).assumingMemoryBound(to: UInt8.self), count: length))
          if bytes != [0x2E] && bytes != [0x2E, 0x2E] { names.append(bytes) }
        }
      }
      var descended = false
      for entry in names {
        if (try? remove(entry, in: current.descriptor, isDirectory: false, displayPath: "")) != nil { continue }
        if (try? remove(entry, in: current.descriptor, isDirectory: true, displayPath: "")) != nil { continue }
        guard case .success(let opened) = withCName(entry, { open(cName: $0, in: current.descriptor, options: .directory) }) else {
          return giveUp()
        }
        stack.append((opened, entry))
        descended = true
        break
      }
      if descended { continue }
      stack.removeLast()
      current.descriptor.close()
      guard (try? remove(current.name, in: stack.last?.descriptor ?? directory, isDirectory: true, displayPath: "")) != nil else {
        return giveUp()
      }
    }
    return true
  }
}
