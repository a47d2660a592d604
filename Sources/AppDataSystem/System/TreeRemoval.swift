#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Removes a folder appdata made itself (a partial extraction, an extraction `--force`
/// replaces) and everything in it, without following a symlink, without recursion, and with
/// at most three descriptors open whatever the depth: the folder being emptied, and briefly its
/// listing or its parent (reached through its `..`, which in a folder appdata made, mode 0700,
/// nobody else can move). Each folder is listed once; the names of its subfolders wait in
/// memory (a few bytes each) while the first is emptied. Under `ulimit -n 8` a tree 10,000
/// folders deep goes as a flat one does.
extension Syscalls {
  /// Removes `name` in `directory`, a folder and what it holds or anything else; true when it
  /// is gone. A folder whose mode leaves out the owner's write or search permission is given
  /// them first (appdata set that mode itself, from a backup's manifest).
  @discardableResult
  public static func removeTree(_ name: [UInt8], in directory: FileDescriptor) -> Bool {
    if (try? remove(name, in: directory, isDirectory: false, displayPath: "")) != nil { return true }
    guard case .success(let top) = withCName(name, { open(cName: $0, in: directory, options: .directory) }) else { return false }
    // From the top folder down to the one being emptied: each one's name, and the subfolders
    // of it still to remove.
    var levels: [(name: [UInt8], folders: [[UInt8]])] = [(name, [])]
    var current = top
    var needsListing = true
    var retries = 0
    while true {
      if needsListing {
        needsListing = false
        _ = fchmod(current.rawValue, 0o700)
        guard case .success(let listing) = withCName([0x2E], { open(cName: $0, in: current, options: .directory) }),
              let stream = try? DirectoryStream(taking: listing, displayPath: "") else {
          current.close()
          return false
        }
        var folders: [[UInt8]] = []
        _ = stream.forEachEntry { cName, length, type in
          let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(cName).assumingMemoryBound(to: UInt8.self), count: length)
          if bytes.elementsEqual([0x2E]) || bytes.elementsEqual([0x2E, 0x2E]) { return }
          if type != .directory && unlinkat(current.rawValue, cName, 0) == 0 { return }
          folders.append(Array(bytes))
        }
        levels[levels.count - 1].folders = folders
      }
      if let next = levels[levels.count - 1].folders.popLast() {
        // A file whose type the listing did not give, or an empty folder: gone in one call.
        if (try? remove(next, in: current, isDirectory: false, displayPath: "")) != nil { continue }
        if (try? remove(next, in: current, isDirectory: true, displayPath: "")) != nil { continue }
        var opened = withCName(next, { open(cName: $0, in: current, options: .directory) })
        if case .failure(let error) = opened, error.code == EACCES {
          // A folder of mode 0000 (or without the owner's read or search bit), as `rm -rf`
          // does: given them, then opened. EACCES, not ELOOP or ENOTDIR, says it is a folder.
          _ = withCName(next) { fchmodat(current.rawValue, $0, 0o700, 0) }
          opened = withCName(next, { open(cName: $0, in: current, options: .directory) })
        }
        guard case .success(let child) = opened else {
          current.close()
          return false
        }
        current.close()
        current = child
        levels.append((next, []))
        needsListing = true
        continue
      }
      // Emptied: remove it from its parent and go on with the parent's next subfolder.
      let done = levels.removeLast()
      if levels.isEmpty {
        current.close()
        return (try? remove(done.name, in: directory, isDirectory: true, displayPath: "")) != nil
      }
      let parent = try? openParent(of: current, displayPath: "")
      current.close()
      guard let up = parent else { return false }
      current = up
      if (try? remove(done.name, in: current, isDirectory: true, displayPath: "")) == nil {
        // Something appeared in it meanwhile: list the parent again, a few times at most.
        retries += 1
        if retries > 3 {
          current.close()
          return false
        }
        needsListing = true
      }
    }
  }
}
