#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
import CLibattr
#elseif canImport(Darwin)
import Darwin
#endif

/// Removes a folder appdata made itself (a partial extraction, an extraction `--force`
/// replaces) and everything in it, without following a symlink, without recursion, and with
/// at most three descriptors open whatever the depth: the folder being emptied, and briefly its
/// listing or its parent. Each folder is listed once; the names of its subfolders wait in memory
/// (a few bytes each) while the first is emptied. Under `ulimit -n 8` a tree 10,000 folders deep
/// goes as a flat one does.
///
/// Going back up is through `..`, and someone who can write in a folder of the tree (a folder a
/// backup's manifest made 0777) could move the folder being emptied elsewhere meanwhile: `..`
/// would then lead out of the tree. So the identity (device and inode) of every folder on the
/// way down is kept, and each `..` opened must be the folder recorded one level up, or the
/// removal stops there (false), having removed nothing outside. The tree's top is emptied
/// through the descriptor the caller proved (`emptyFolder`), and its name is removed only while
/// it still names that folder and it is empty (`rmdir` removes nothing else).
extension Syscalls {
  /// Removes `name` in `directory`, a folder and what it holds or anything else; true when it
  /// is gone. A folder whose mode leaves out the owner's write or search permission is given
  /// them first (appdata set that mode itself, from a backup's manifest).
  @discardableResult
  package static func removeTree(_ name: [UInt8], in directory: FileDescriptor) -> Bool {
    if (try? remove(name, in: directory, isDirectory: false, displayPath: "")) != nil { return true }
    guard case .success(let opened) = withCName(name, { open(cName: $0, in: directory, options: .directory) }) else { return false }
    let top = OwnedDescriptor(owning: opened)
    return removeFolder(name, in: directory, opened: top.descriptor)
  }

  /// Empties the folder open at `top` (a descriptor the caller proved is its own), then removes
  /// `name` in `directory` if it still names that folder. True when it is gone.
  @discardableResult
  package static func removeFolder(_ name: [UInt8], in directory: FileDescriptor, opened top: FileDescriptor) -> Bool {
    guard let identity = try? status(of: top, displayPath: "").identity, emptyFolder(top) else { return false }
    guard (try? status(of: name, in: directory, displayPath: ""))?.identity == identity else { return false }
    return (try? remove(name, in: directory, isDirectory: true, displayPath: "")) != nil
  }

  /// Removes everything in the folder open at `top` (which stays open: the caller's); true when
  /// it is empty.
  package static func emptyFolder(_ top: FileDescriptor) -> Bool {
    guard let topIdentity = try? status(of: top, displayPath: "").identity,
          let start = try? reopen(top, displayPath: "") else { return false }
    // From the top folder down to the one being emptied: each one's name (the top's is empty),
    // its identity, and the subfolders of it still to remove.
    var levels: [(name: [UInt8], identity: FileIdentity, folders: [[UInt8]])] = [([], topIdentity, [])]
    // The folder being emptied: closed when it is left (for a child, or back up), or returned from.
    var current = OwnedDescriptor(owning: start)
    var needsListing = true
    var retries = 0
    while true {
      let here = current.descriptor
      if needsListing {
        needsListing = false
        _ = fchmod(here.rawValue, 0o700)
        guard case .success(let listing) = withCName([0x2E], { open(cName: $0, in: here, options: .directory) }),
              let stream = try? DirectoryStream(taking: listing, displayPath: "") else {
          return false
        }
        var folders: [[UInt8]] = []
        _ = stream.forEachEntry { cName, length, type in
          let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(cName).assumingMemoryBound(to: UInt8.self), count: length)
          if bytes.elementsEqual([0x2E]) || bytes.elementsEqual([0x2E, 0x2E]) { return }
          if type != .directory && unlinkat(here.rawValue, cName, 0) == 0 { return }
          folders.append(Array(bytes))
        }
        levels[levels.count - 1].folders = folders
      }
      if let next = levels[levels.count - 1].folders.popLast() {
        // A file whose type the listing did not give, or an empty folder: gone in one call.
        if (try? remove(next, in: here, isDirectory: false, displayPath: "")) != nil { continue }
        if (try? remove(next, in: here, isDirectory: true, displayPath: "")) != nil { continue }
        guard let opened = openFolderToEmpty(next, in: here) else { return false }
        let child = OwnedDescriptor(owning: opened)
        guard let childIdentity = try? status(of: child.descriptor, displayPath: "").identity else { return false }
        current = child
        levels.append((next, childIdentity, []))
        // Tests: the instant a folder three levels below the top is entered, where someone who
        // can write in the tree could move it away (`ContainmentTests`).
        if levels.count == 4 { TestHooks.pause(at: "remove") }
        needsListing = true
        continue
      }
      // Emptied.
      let done = levels.removeLast()
      if levels.isEmpty { return true }
      // Back up to the parent through `..`, which must be the folder recorded there: one moved
      // elsewhere meanwhile leads out of the tree, and the removal stops.
      guard let opened = try? openParent(of: here, displayPath: "") else { return false }
      let up = OwnedDescriptor(owning: opened)
      guard (try? status(of: up.descriptor, displayPath: ""))?.identity == levels[levels.count - 1].identity else { return false }
      current = up
      let parent = current.descriptor
      // Removed only while the name still names the folder just emptied (rmdir removes nothing
      // that is not empty, so what took its name meanwhile keeps its contents).
      if (try? status(of: done.name, in: parent, displayPath: ""))?.identity != done.identity
          || (try? remove(done.name, in: parent, isDirectory: true, displayPath: "")) == nil {
        // Something appeared in it meanwhile: list the parent again, a few times at most.
        retries += 1
        if retries > 3 { return false }
        needsListing = true
      }
    }
  }

  /// Opens the subfolder `name` of `folder` to empty it. A folder of mode 0000 (or without the
  /// owner's read or search bit) is given them first, as `rm -rf` does, through a descriptor of
  /// that very folder (`O_PATH | O_NOFOLLOW` on Linux, the chmod through its /proc/self/fd link;
  /// `AT_SYMLINK_NOFOLLOW` on Darwin), so a symlink swapped in for it is never followed.
  private static func openFolderToEmpty(_ name: [UInt8], in folder: FileDescriptor) -> FileDescriptor? {
    let opened = withCName(name, { open(cName: $0, in: folder, options: .directory) })
    switch opened {
    case .success(let child): return child
    case .failure(.permissionDenied):
      guard makeOwnerAccessible(name, in: folder),
            case .success(let child) = withCName(name, { open(cName: $0, in: folder, options: .directory) }) else { return nil }
      return child
    case .failure: return nil
    }
  }

  private static func makeOwnerAccessible(_ name: [UInt8], in folder: FileDescriptor) -> Bool {
    #if canImport(Glibc) && !DARWIN_CHECK
    return withCName(name) { appdata_chmod_folder_nofollow(folder.rawValue, $0, 0o700) } == 0
    #else
    return withCName(name) { fchmodat(folder.rawValue, $0, 0o700, AT_SYMLINK_NOFOLLOW) } == 0
    #endif
  }
}
