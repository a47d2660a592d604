#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
import CLibattr
#elseif canImport(Darwin)
import Darwin
#endif

// Files and folders: one thin wrapper per syscall, each relative to a descriptor where it can be.
extension Syscalls {
  /// openat(2) relative to `directory`. `displayPath` only names the file in errors.
  package static func open(
    _ name: [UInt8], in directory: FileDescriptor, options: OpenOptions, mode: UInt32 = 0o600,
    displayPath: @autoclosure () -> String
  ) throws(SystemError) -> FileDescriptor {
    try checkName(name, .open, path: displayPath())
    let fd = try withCName(name) { cName throws(SystemError) in
      try valueOrErrno(.open, path: displayPath()) {
        openat(directory.rawValue, cName, options.rawValue, mode_t(mode))
      }
    }
    return FileDescriptor(rawValue: fd)
  }

  /// openat(2) with a C string, for the walk's hot loop.
  package static func open(
    cName: UnsafePointer<CChar>, in directory: FileDescriptor, options: OpenOptions
  ) -> Result<FileDescriptor, Errno> {
    while true {
      let fd = openat(directory.rawValue, cName, options.rawValue)
      if fd >= 0 { return .success(FileDescriptor(rawValue: fd)) }
      let code = currentErrno()
      if code != .interrupted { return .failure(code) }
    }
  }

  /// Opens the folder at `path`, found below the folder `base` the user named (`path` starts with
  /// it): `base` as typed (a symlink to it is accepted), then each component below it with
  /// `O_NOFOLLOW | O_DIRECTORY`, so nothing found below PATH (a container of a device, a
  /// package's `AppData`) is reached through a symlink. Without `base`, `path` as typed.
  package static func openDirectory(atPath path: String, below base: String?) throws(SystemError) -> FileDescriptor {
    guard let base, path.hasPrefix(base) else { return try openDirectory(atPath: path) }
    let relativePath = Array(path.utf8.dropFirst(base.utf8.count))
    let top = OwnedDescriptor(owning: try openDirectory(atPath: base))
    if RelativePath.components(relativePath).isEmpty { return top.release() }
    return try Beneath.open(RelativePath.components(relativePath), below: top.descriptor, options: .directory, displayPath: path)
  }

  /// fstatat(2) with AT_SYMLINK_NOFOLLOW: the entry itself, never a symlink's target.
  @inlinable
  package static func status(cName: UnsafePointer<CChar>, in directory: FileDescriptor) -> Result<FileStatus, Errno> {
    var st = stat()
    if fstatat(directory.rawValue, cName, &st, AT_SYMLINK_NOFOLLOW) == 0 {
      return .success(FileStatus(st))
    }
    return .failure(currentErrno())
  }

  /// fstatat(2) with AT_SYMLINK_NOFOLLOW on a name relative to `directory`.
  package static func status(
    of name: [UInt8], in directory: FileDescriptor, displayPath: @autoclosure () -> String
  ) throws(SystemError) -> FileStatus {
    try checkName(name, .readStatus, path: displayPath())
    return try withCName(name) { cName throws(SystemError) in
      switch status(cName: cName, in: directory) {
      case .success(let st): return st
      case .failure(let error): throw SystemError(errno: error, operation: .readStatus, path: displayPath())
      }
    }
  }

  /// fstat(2) on an open descriptor.
  package static func status(of descriptor: FileDescriptor, displayPath: @autoclosure () -> String) throws(SystemError) -> FileStatus {
    var st = stat()
    _ = try valueOrErrno(.readStatus, path: displayPath()) { fstat(descriptor.rawValue, &st) }
    return FileStatus(st)
  }

  /// Which file `path` is, following symlinks (stat(2)): its device and inode; nil when it
  /// cannot be read. What tells an input named twice, or inside another PATH given.
  package static func identity(ofPath path: String) -> FileIdentity? {
    var st = stat()
    guard stat(path, &st) == 0 else { return nil }
    return FileIdentity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
  }

  /// The folder `name` in `directory` (a plain name, or `..`), opened only to be passed through
  /// (Linux: O_PATH, which needs search permission on `directory` alone; macOS: read, as it has
  /// no such open), never through a symlink. Used as the folder of *at calls, or reopened
  /// (`Syscalls.reopen`).
  package static func openPassingThrough(_ name: [UInt8], in directory: FileDescriptor) -> Result<FileDescriptor, Errno> {
    if name != [0x2E, 0x2E] {
      do { try checkName(name, .openFolder, path: "") } catch { return .failure(error.errno) }
    }
    return passThrough(name, in: directory)
  }

  /// The root folder (`/`) or the working folder (`.`), opened as `openPassingThrough` opens.
  package static func openPassingThrough(root: Bool) -> Result<FileDescriptor, Errno> {
    passThrough(root ? [0x2F] : [0x2E], in: .currentWorkingDirectory)
  }

  private static func passThrough(_ name: [UInt8], in directory: FileDescriptor) -> Result<FileDescriptor, Errno> {
    withCName(name) { open(cName: $0, in: directory, options: .passThroughFolder) }
  }

  /// lstat(2) on a path (used only for paths the user typed).
  package static func status(ofPath path: String) throws(SystemError) -> FileStatus {
    var st = stat()
    _ = try valueOrErrno(.readStatus, path: path) { lstat(path, &st) }
    return FileStatus(st)
  }

  /// open(2) on a path the user typed, as a folder, following symlinks in it only
  /// if `followFinalSymlink` (a container root given as a symlink is still a container).
  package static func openDirectory(atPath path: String, followFinalSymlink: Bool = true) throws(SystemError) -> FileDescriptor {
    var flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC
    if !followFinalSymlink { flags |= O_NOFOLLOW }
    let fd = try valueOrErrno(.open, path: path) { Glibc_or_Darwin_open(path, flags) }
    return FileDescriptor(rawValue: fd)
  }

  /// open(2) of a file the user named, read-only, without waiting (O_NONBLOCK: a FIFO with no
  /// writer does not block the open), and fstat(2) of what was opened: the descriptor and
  /// whether it is a regular file. The caller refuses anything else.
  package static func openWithoutWaiting(atPath path: String) throws(SystemError) -> (FileDescriptor, FileStatus) {
    let fd = try valueOrErrno(.open, path: path) { Glibc_or_Darwin_open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
    let descriptor = OwnedDescriptor(owning: FileDescriptor(rawValue: fd))
    let fileStatus = try status(of: descriptor.descriptor, displayPath: path)
    return (descriptor.release(), fileStatus)
  }

  /// open(2) of a FIFO a test named, for writing without waiting (ENXIO when no reader is there).
  package static func openFIFOForWriting(atPath path: String) throws(SystemError) -> FileDescriptor {
    let fd = try valueOrErrno(.open, path: path) { Glibc_or_Darwin_open(path, OpenOptions.writeToFIFO.rawValue) }
    return FileDescriptor(rawValue: fd)
  }

  /// open(2) of a file the user named, read-only.
  package static func openFile(atPath path: String) throws(SystemError) -> FileDescriptor {
    let fd = try valueOrErrno(.open, path: path) { Glibc_or_Darwin_open(path, O_RDONLY | O_CLOEXEC) }
    return FileDescriptor(rawValue: fd)
  }

  /// open(2) with O_CREAT | O_TRUNC: a report file the user named.
  package static func createOrTruncate(atPath path: String) throws(SystemError) -> FileDescriptor {
    let fd = try valueOrErrno(.create, path: path) {
      Glibc_or_Darwin_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    }
    return FileDescriptor(rawValue: fd)
  }

  /// Whether `path` could be created or overwritten by this process, without touching it:
  /// faccessat(2) with W_OK on the file, or, when there is none, W_OK | X_OK on its folder.
  /// Throws the reason it could not (a folder in the way counts as EISDIR).
  package static func checkCanCreateOrWrite(atPath path: String) throws(SystemError) {
    if faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0 {
      var info = stat()
      if stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
        throw SystemError(errno: .isDirectory, operation: .create, path: path)
      }
      return
    }
    let code = currentErrno()
    guard code == .noSuchFileOrDirectory else { throw SystemError(errno: code, operation: .create, path: path) }
    let folder = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
    if faccessat(AT_FDCWD, folder.isEmpty ? "/" : folder, W_OK | X_OK, AT_EACCESS) != 0 {
      throw SystemError(errno: currentErrno(), operation: .create, path: path)
    }
  }

  /// open(2) with O_APPEND | O_CREAT: a file others also append to (GITHUB_STEP_SUMMARY).
  package static func openForAppending(atPath path: String) throws(SystemError) -> FileDescriptor {
    let fd = try valueOrErrno(.open, path: path) {
      Glibc_or_Darwin_open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
    }
    return FileDescriptor(rawValue: fd)
  }

  /// read(2) into `buffer`; returns the number of bytes read (0 at end of file).
  package static func read(
    _ descriptor: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, displayPath: @autoclosure () -> String
  ) throws(SystemError) -> Int {
    try valueOrErrno(.read, path: displayPath()) {
      Glibc_or_Darwin_read(descriptor.rawValue, buffer.baseAddress, buffer.count)
    }
  }

  /// pread(2): up to `buffer.count` bytes at `offset`; -1 on error.
  package static func readAt(_ descriptor: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, offset: UInt64) -> Int {
    while true {
      let count = pread(descriptor.rawValue, buffer.baseAddress, buffer.count, off_t(offset))
      if count >= 0 || currentErrno() != .interrupted { return count }
    }
  }

  /// write(2) of all of `buffer`, looping over short writes.
  package static func writeAll(
    _ descriptor: FileDescriptor, _ buffer: UnsafeRawBufferPointer, displayPath: @autoclosure () -> String
  ) throws(SystemError) {
    var offset = 0
    while offset < buffer.count {
      let written = try valueOrErrno(.write, path: displayPath()) {
        Glibc_or_Darwin_write(descriptor.rawValue, buffer.baseAddress! + offset, buffer.count - offset)
      }
      offset += written
    }
  }

  /// read(2) until end of file or `count` bytes, whichever comes first. Callers that must
  /// refuse large files ask for one byte more than they accept.
  package static func readUpTo(_ descriptor: FileDescriptor, _ count: Int, displayPath: @autoclosure () -> String) throws(SystemError) -> [UInt8] {
    var data: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: min(count, 1 << 16))
    while data.count < count {
      let wanted = min(chunk.count, count - data.count)
      let result: Result<Int, SystemError> = chunk.withUnsafeMutableBytes { raw in
        Result { () throws(SystemError) in try read(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: raw[..<wanted]), displayPath: displayPath()) }
      }
      let got = try result.get()
      if got == 0 { break }
      data.append(contentsOf: chunk[0..<got])
    }
    return data
  }

  /// write(2) of all of `bytes`.
  package static func writeAll(_ descriptor: FileDescriptor, _ bytes: [UInt8], displayPath: @autoclosure () -> String) throws(SystemError) {
    let result: Result<Void, SystemError> = bytes.withUnsafeBytes { raw in
      Result { () throws(SystemError) in try writeAll(descriptor, raw, displayPath: displayPath()) }
    }
    try result.get()
  }

  /// fsync(2): data and metadata reach the disk before we go on.
  package static func sync(_ descriptor: FileDescriptor, displayPath: @autoclosure () -> String) throws(SystemError) {
    #if canImport(Glibc) && !DARWIN_CHECK
    _ = try valueOrErrno(.flush, path: displayPath()) { fsync(descriptor.rawValue) }
    #else
    // Darwin's fsync(2) leaves the data in the drive's cache; fcntl(2) F_FULLFSYNC asks the
    // drive to write it (a journal must survive a power cut). A filesystem without it
    // (some network ones) gets fsync.
    if fcntl(descriptor.rawValue, F_FULLFSYNC) == 0 { return }
    _ = try valueOrErrno(.flush, path: displayPath()) { fsync(descriptor.rawValue) }
    #endif
  }

  // MARK: - Calls on names

  // Each wrapper below checks its names itself (`checkName`, before anything else), so that
  // the check stands where a reader of the wrapper sees it (PortabilityTests holds them to it).

  /// `body` with `name` as a C string, its -1/errno a `SystemError` of `operation`.
  private static func call<I: FixedWidthInteger>(
    _ operation: SystemError.Operation, on name: [UInt8], displayPath: () -> String,
    _ body: (UnsafePointer<CChar>) -> I
  ) throws(SystemError) {
    try withCName(name) { cName throws(SystemError) in
      _ = try valueOrErrno(operation, path: displayPath()) { body(cName) }
    }
  }

  /// `body` with both names as C strings (a rename, a link), its -1/errno a `SystemError` of
  /// `operation`.
  private static func call(
    _ operation: SystemError.Operation, on name: [UInt8], and otherName: [UInt8], displayPath: () -> String,
    _ body: (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Int32
  ) throws(SystemError) {
    try withCName(name) { old throws(SystemError) in
      try withCName(otherName) { new throws(SystemError) in
        _ = try valueOrErrno(operation, path: displayPath()) { body(old, new) }
      }
    }
  }

  /// renameat2(2) with RENAME_NOREPLACE, or with `exchanging` RENAME_EXCHANGE; on Darwin
  /// renameatx_np with RENAME_EXCL or RENAME_SWAP.
  private static func rename(
    _ old: UnsafePointer<CChar>, in source: FileDescriptor, to new: UnsafePointer<CChar>, in destination: FileDescriptor,
    exchanging: Bool
  ) -> Int32 {
    #if canImport(Glibc) && !DARWIN_CHECK
    if exchanging { return appdata_rename_exchange(source.rawValue, old, destination.rawValue, new) }
    return appdata_rename_noreplace(source.rawValue, old, destination.rawValue, new)
    #else
    return renameatx_np(source.rawValue, old, destination.rawValue, new, UInt32(exchanging ? RENAME_SWAP : RENAME_EXCL))
    #endif
  }

  /// mkdirat(2).
  package static func makeDirectory(
    _ name: [UInt8], in directory: FileDescriptor, mode: UInt32 = 0o755, displayPath: @autoclosure () -> String
  ) throws(SystemError) {
    try checkName(name, .createFolder, path: displayPath())
    try call(.createFolder, on: name, displayPath: displayPath) { mkdirat(directory.rawValue, $0, mode_t(mode)) }
  }

  /// unlinkat(2) of a file or (with `isDirectory`) an empty folder.
  package static func remove(
    _ name: [UInt8], in directory: FileDescriptor, isDirectory: Bool, displayPath: @autoclosure () -> String
  ) throws(SystemError) {
    try checkName(name, .remove, path: displayPath())
    try call(.remove, on: name, displayPath: displayPath) { unlinkat(directory.rawValue, $0, isDirectory ? AT_REMOVEDIR : 0) }
  }

  /// renameat2(2) with RENAME_NOREPLACE: fails with EEXIST instead of overwriting. Darwin:
  /// renameatx_np with RENAME_EXCL, which rename(2) documents to fail with EEXIST the same way.
  package static func renameWithoutReplacing(
    _ name: [UInt8], in source: FileDescriptor, to newName: [UInt8], in destination: FileDescriptor,
    displayPath: @autoclosure () -> String
  ) throws(SystemError) {
    try checkName(name, .move, path: displayPath())
    try checkName(newName, .move, path: displayPath())
    try call(.move, on: name, and: newName, displayPath: displayPath) { old, new in
      rename(old, in: source, to: new, in: destination, exchanging: false)
    }
  }

  /// renameat2(2) with RENAME_EXCHANGE (renamex_np with RENAME_SWAP on Darwin): both names
  /// exist, and each then names what the other did, in one step.
  package static func exchange(
    _ name: [UInt8], with otherName: [UInt8], in directory: FileDescriptor, displayPath: @autoclosure () -> String
  ) throws(SystemError) {
    try checkName(name, .move, path: displayPath())
    try checkName(otherName, .move, path: displayPath())
    try call(.move, on: name, and: otherName, displayPath: displayPath) { old, new in
      rename(old, in: directory, to: new, in: directory, exchanging: true)
    }
  }

  /// linkat(2) without following a symlink: `newName` in `destination` becomes a second name of
  /// the file `name` in `source` (restore keeps the container's metadata plist, the same file,
  /// in the container it builds). Fails with EEXIST rather than replace.
  package static func link(
    _ name: [UInt8], in source: FileDescriptor, to newName: [UInt8], in destination: FileDescriptor,
    displayPath: @autoclosure () -> String
  ) throws(SystemError) {
    try checkName(name, .createLink, path: displayPath())
    try checkName(newName, .createLink, path: displayPath())
    try call(.createLink, on: name, and: newName, displayPath: displayPath) { old, new in
      linkat(source.rawValue, old, destination.rawValue, new, 0)
    }
  }

  /// renameat(2), replacing `newName` if it exists: only for files appdata itself owns
  /// (the journal, a rewritten plist), never for user data.
  package static func renameReplacing(
    _ name: [UInt8], in source: FileDescriptor, to newName: [UInt8], in destination: FileDescriptor,
    displayPath: @autoclosure () -> String
  ) throws(SystemError) {
    try checkName(name, .move, path: displayPath())
    try checkName(newName, .move, path: displayPath())
    try call(.replace, on: name, and: newName, displayPath: displayPath) { old, new in
      renameat(source.rawValue, old, destination.rawValue, new)
    }
  }

  /// readlinkat(2): a symlink's target bytes, never followed.
  package static func readLink(
    _ name: [UInt8], in directory: FileDescriptor, displayPath: @autoclosure () -> String
  ) throws(SystemError) -> [UInt8] {
    try checkName(name, .readLink, path: displayPath())
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = try withCName(name) { cName throws(SystemError) in
      try valueOrErrno(.readLink, path: displayPath()) {
        buffer.withUnsafeMutableBytes { readlinkat(directory.rawValue, cName, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count) }
      }
    }
    return Array(buffer[0..<count])
  }

  /// symlinkat(2).
  package static func makeSymbolicLink(
    _ name: [UInt8], in directory: FileDescriptor, target: [UInt8], displayPath: @autoclosure () -> String
  ) throws(SystemError) {
    try checkName(name, .createLink, path: displayPath())
    try withCName(target) { cTarget throws(SystemError) in
      try withCName(name) { cName throws(SystemError) in
        _ = try valueOrErrno(.createLink, path: displayPath()) {
          symlinkat(cTarget, directory.rawValue, cName)
        }
      }
    }
  }

  /// fchmod(2).
  package static func setMode(_ descriptor: FileDescriptor, _ mode: UInt32, displayPath: @autoclosure () -> String) throws(SystemError) {
    _ = try valueOrErrno(.setMode, path: displayPath()) { fchmod(descriptor.rawValue, mode_t(mode)) }
  }

  /// utimensat(2) without following symlinks: access and modification times.
  package static func setTimes(
    _ name: [UInt8], in directory: FileDescriptor, access: FileTime, modification: FileTime,
    displayPath: @autoclosure () -> String
  ) throws(SystemError) {
    try checkName(name, .setTimes, path: displayPath())
    var times = timespecs(access: access, modification: modification)
    try call(.setTimes, on: name, displayPath: displayPath) { utimensat(directory.rawValue, $0, &times, AT_SYMLINK_NOFOLLOW) }
  }

  /// futimens(2): the access and modification times of an open file.
  package static func setTimes(_ descriptor: FileDescriptor, access: FileTime, modification: FileTime, displayPath: @autoclosure () -> String) throws(SystemError) {
    var times = timespecs(access: access, modification: modification)
    _ = try valueOrErrno(.setTimes, path: displayPath()) { futimens(descriptor.rawValue, &times) }
  }

  /// The two `timespec`s utimensat(2) and futimens(2) take: access, then modification.
  private static func timespecs(access: FileTime, modification: FileTime) -> [timespec] {
    [
      timespec(tv_sec: access.seconds, tv_nsec: access.nanoseconds),
      timespec(tv_sec: modification.seconds, tv_nsec: modification.nanoseconds),
    ]
  }

  /// realpath(3) of a path the user typed, nil when it cannot be resolved (a dangling link).
  package static func resolvedPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  /// realpath(3) of the folder a user named, for reports ("container": absolute path); the path
  /// as given when it cannot be resolved.
  package static func absolutePath(_ path: String) -> String { resolvedPath(path) ?? path }


  /// flock(2) with LOCK_EX | LOCK_NB: false when another process holds the lock.
  package static func lockExclusively(_ descriptor: FileDescriptor) -> Bool {
    flock(descriptor.rawValue, LOCK_EX | LOCK_NB) == 0
  }

  /// flock(2) with LOCK_EX, waiting while another process holds the lock (a signal's EINTR
  /// retried). Released when the descriptor is closed.
  package static func waitForExclusiveLock(_ descriptor: FileDescriptor) {
    while flock(descriptor.rawValue, LOCK_EX) != 0 && currentErrno() == .interrupted {}
  }

  /// faccessat(2) with AT_EACCESS: whether this process may create and remove entries in
  /// the open folder (write and search permission), as the kernel will judge it.
  package static func canModify(_ folder: FileDescriptor) -> Bool {
    faccessat(folder.rawValue, ".", W_OK | X_OK, AT_EACCESS) == 0
  }
}

// Folders as a whole: what is in one, and where one is.
extension Syscalls {
  /// The names in the open folder (`.` and `..` left out), read through a descriptor of its own;
  /// none when it cannot be read.
  package static func entryNames(of folder: FileDescriptor) -> [[UInt8]] {
    guard let stream = listing(of: folder) else { return [] }
    return (try? stream.names()) ?? []
  }

  /// A stream over the open folder's entries, through a descriptor of its own (`.` opened
  /// again), so the caller's descriptor keeps its place; nil when it cannot be opened.
  private static func listing(of folder: FileDescriptor) -> DirectoryStream? {
    guard case .success(let listing) = withCName([0x2E], { open(cName: $0, in: folder, options: .directory) }) else { return nil }
    return try? DirectoryStream(taking: listing, displayPath: "")
  }

  /// The folder part of a path the user typed: `.` for a bare name, `/` for `/name`.
  package static func folderPart(of path: [UInt8]) -> String {
    guard let slash = path.lastIndex(of: 0x2F) else { return "." }
    return slash == 0 ? "/" : String(decoding: path[..<slash], as: UTF8.self)
  }

  /// The first name in the open folder (`.` and `..` left out), or nil when it is empty or
  /// cannot be read.
  package static func firstEntry(of folder: FileDescriptor) -> [UInt8]? {
    guard let stream = listing(of: folder) else { return nil }
    var first: [UInt8]?
    _ = stream.forEachEntry { cName, length, _ in
      guard first == nil else { return }
      let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(cName).assumingMemoryBound(to: UInt8.self), count: length)
      if !bytes.elementsEqual([0x2E]) && !bytes.elementsEqual([0x2E, 0x2E]) { first = Array(bytes) }
    }
    return first
  }

  /// Whether `identity` is the open folder or one of the folders above it, followed up through
  /// `..` to the root (at most 4,096 levels).
  package static func isAncestor(_ identity: FileIdentity, ofFolder folder: FileDescriptor) -> Bool {
    guard case .success(let opened) = withCName([0x2E], { open(cName: $0, in: folder, options: .directory) }) else { return false }
    var current = OwnedDescriptor(owning: opened)
    for _ in 0..<4096 {
      let folder = current.descriptor
      guard let here = try? status(of: folder, displayPath: "").identity else { return false }
      if here == identity { return true }
      guard case .success(let up) = withCName([0x2E, 0x2E], { open(cName: $0, in: folder, options: .directory) }) else { return false }
      let above = try? status(of: up, displayPath: "").identity
      current = OwnedDescriptor(owning: up)
      if above == here { return false }
    }
    return false
  }
}
