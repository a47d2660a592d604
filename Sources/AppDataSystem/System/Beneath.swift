#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
import CLibattr
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The one way appdata reaches an entry below a folder it was given (a container, OUT, the
/// folder of an `-o` file): a folder descriptor and path *components*, never a path built from
/// text. The kernel keeps every open below the folder:
///
/// - Linux 5.6 and later: `openat2(2)` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
///   RESOLVE_NO_MAGICLINKS`, one call for the whole path;
/// - an older kernel (or a seccomp filter that refuses openat2): one `openat` per component,
///   each with `O_NOFOLLOW`;
/// - Darwin: one `openat` per component, each with `O_NOFOLLOW_ANY` (macOS 11), which refuses a
///   symlink anywhere in what it resolves.
///
/// Every component is checked first (`isPlainName`): not empty, not `.` or `..`, no `/` and no
/// NUL. The same check guards every name-taking wrapper in `Syscalls` (open, status, mkdir,
/// unlink, rename, exchange, link, times, extended attributes), so a name that is really a path
/// is refused (EINVAL) wherever it comes from: a journal, a manifest row, an archive entry.
/// `PortabilityTests.noPathIsBuiltOutsideBeneath` holds the rest of the code to this.
///
/// Sendable: its stored properties are constants; every method opens descriptors of its own.
@usableFromInline package final class Beneath: Sendable {
  /// The folder as the user named it, for messages.
  package let rootPath: String
  /// The open folder, closed when this value ends.
  package let root: FileDescriptor
  /// How components are shown in messages (escaped by the caller's rules); `.` for none.
  private let displayComponents: @Sendable ([[UInt8]]) -> String

  /// Takes ownership of `root`, a folder descriptor.
  package init(taking root: FileDescriptor, displayPath: String,
              display: @escaping @Sendable ([[UInt8]]) -> String = { RelativePath.display(RelativePath.join($0)) }) {
    self.root = root
    rootPath = displayPath
    displayComponents = display
  }

  /// Opens `path`, a folder the user named; when it was found below the folder `below` the user
  /// named, it is reached from there one component at a time, following no symlink.
  package convenience init(opening path: String, below: String? = nil,
                          display: @escaping @Sendable ([[UInt8]]) -> String = { RelativePath.display(RelativePath.join($0)) }) throws(SystemError) {
    self.init(taking: try Syscalls.openDirectory(atPath: path, below: below), displayPath: path, display: display)
  }

  deinit { root.close() }

  /// A name one entry can have: not empty, not `.` or `..`, without `/` or NUL.
  @inlinable
  package static func isPlainName(_ name: [UInt8]) -> Bool {
    if name.isEmpty || name == [0x2E] || name == [0x2E, 0x2E] { return false }
    return !name.contains(0x2F) && !name.contains(0)
  }

  /// Throws EINVAL unless every component is a plain name (and there are at most
  /// `RelativePath.maximumComponents`).
  package static func check(_ components: [[UInt8]], displayPath: @autoclosure () -> String) throws(SystemError) {
    guard components.count <= RelativePath.maximumComponents, components.allSatisfy(isPlainName) else {
      throw SystemError(errno: .invalidArgument, operation: .open, path: displayPath())
    }
  }

  /// `Library/Caches/x` for messages, as the caller shows names; `.` for the root.
  package func display(_ components: [[UInt8]]) -> String {
    components.isEmpty ? "." : displayComponents(components)
  }

  /// Opens the entry at `components` below the root with `options` (which all include
  /// `O_NOFOLLOW`); no components reopens the root. The caller closes the result.
  package func open(_ components: [[UInt8]], options: OpenOptions, mode: UInt32 = 0o600) throws(SystemError) -> FileDescriptor {
    try Self.open(components, below: root, options: options, mode: mode, display: display)
  }

  /// Opens the folder at `components` (the root itself for none), never through a symlink: one
  /// met on the way fails with ELOOP. The caller closes the result.
  package func openFolder(_ components: [[UInt8]]) throws(SystemError) -> FileDescriptor {
    try open(components, options: .directory)
  }

  /// The status of the entry at `components` (never following a symlink), or nil if absent.
  package func status(_ components: [[UInt8]]) throws(SystemError) -> FileStatus? {
    guard let name = components.last else { return try Syscalls.status(of: root, displayPath: rootPath) }
    let parent: OwnedDescriptor
    do {
      parent = OwnedDescriptor(owning: try openFolder(Array(components.dropLast())))
    } catch Errno.noSuchFileOrDirectory {
      return nil
    }
    do {
      return try Syscalls.status(of: name, in: parent.descriptor, displayPath: display(components))
    } catch Errno.noSuchFileOrDirectory {
      return nil
    }
  }

  /// Reads a whole (small) file below the root; a larger one fails with EFBIG.
  package func readFile(_ components: [[UInt8]], limit: Int = 64 << 20) throws(SystemError) -> [UInt8] {
    let file = OwnedDescriptor(owning: try open(components, options: .readFile))
    let data = try Syscalls.readUpTo(file.descriptor, limit + 1, displayPath: display(components))
    if data.count > limit { throw SystemError(errno: .fileTooLarge, operation: .readTooLarge, path: display(components)) }
    return data
  }

  // MARK: - The one open below a folder

  /// Set once openat2 turned out to be missing (ENOSYS): the walk is used from then on.
  private static let openat2Missing = Atomic<Bool>(false)

  /// Opens `components` below the folder `directory` (see the type's comment); no components
  /// reopens `directory`. `mode` is used when `options` create.
  package static func open(
    _ components: [[UInt8]], below directory: FileDescriptor, options: OpenOptions, mode: UInt32 = 0o600,
    displayPath: @autoclosure () -> String
  ) throws(SystemError) -> FileDescriptor {
    try open(components, below: directory, options: options, mode: mode, display: { _ in displayPath() })
  }

  /// `open`, naming in an error the components up to the one that failed (`display`).
  package static func open(
    _ components: [[UInt8]], below directory: FileDescriptor, options: OpenOptions, mode: UInt32 = 0o600,
    display: ([[UInt8]]) -> String
  ) throws(SystemError) -> FileDescriptor {
    try check(components, displayPath: display(components))
    if components.isEmpty { return try Syscalls.reopen(directory, displayPath: display(components)) }
    #if canImport(Glibc) && !DARWIN_CHECK
    if !openat2Missing.load(ordering: .relaxed) {
      let fd = withCName(RelativePath.join(components)) { path in
        while true {
          let fd = appdata_openat2_beneath(directory.rawValue, path, options.rawValue, mode)
          if fd >= 0 || currentErrno() != .interrupted { return fd }
        }
      }
      if fd >= 0 { return FileDescriptor(rawValue: fd) }
      let code = currentErrno()
      if code == .noFunction {
        openat2Missing.store(true, ordering: .relaxed)
      } else if components.count == 1 && code != .notDirectory {
        throw SystemError(errno: code == .crossDevice ? .notPermitted : code, operation: .open, path: display(components))
      }
      // Failed: the walk below fails too, at the component that fails, and says which and why
      // (a symlink as ELOOP, not ENOTDIR). Only the error path pays for it.
    }
    #endif
    return try walk(components, below: directory, options: options, mode: mode, display: display)
  }

  /// One `openat` per component, each refusing a symlink (`O_NOFOLLOW`; on Darwin
  /// `O_NOFOLLOW_ANY` too). Components are checked already.
  static func walk(
    _ components: [[UInt8]], below directory: FileDescriptor, options: OpenOptions, mode: UInt32,
    display: ([[UInt8]]) -> String
  ) throws(SystemError) -> FileDescriptor {
    #if canImport(Glibc) && !DARWIN_CHECK
    let noFollow: Int32 = 0
    #else
    let noFollow: Int32 = O_NOFOLLOW_ANY
    #endif
    // At least one component (its callers check), so what is returned was opened here.
    precondition(!components.isEmpty, "Beneath.walk: no component")
    // The folder reached so far: `directory` itself (the caller's, left open) at first, then
    // each one opened, closed when the next replaces it or when a step fails.
    var current = OwnedDescriptor(borrowing: directory)
    for (index, component) in components.enumerated() {
      let isLast = index == components.count - 1
      let flags = (isLast ? options.rawValue : OpenOptions.directory.rawValue) | noFollow
      let here = current.descriptor
      let fd = withCName(component) { name in
        while true {
          let fd = openat(here.rawValue, name, flags, mode_t(mode))
          if fd >= 0 || currentErrno() != .interrupted { return fd }
        }
      }
      guard fd >= 0 else {
        // O_NOFOLLOW | O_DIRECTORY on a symlink fails with ENOTDIR: say what it really is.
        var code = currentErrno()
        if code == .notDirectory, !isLast || options.rawValue & O_DIRECTORY != 0,
           case .success(let status) = withCName(component, { Syscalls.status(cName: $0, in: here) }),
           status.kind == .symbolicLink {
          code = .tooManySymbolicLinkLevels
        }
        throw SystemError(errno: code, operation: .open, path: display(Array(components[...index])))
      }
      current = OwnedDescriptor(owning: FileDescriptor(rawValue: fd))
    }
    return current.release()
  }
}

extension Syscalls {
  /// A new descriptor for the folder `directory` (`openat(directory, ".")`).
  package static func reopen(_ directory: FileDescriptor, displayPath: @autoclosure () -> String) throws(SystemError) -> FileDescriptor {
    let fd = try withCName([0x2E]) { dot throws(SystemError) in
      try valueOrErrno(.open, path: displayPath()) { openat(directory.rawValue, dot, OpenOptions.directory.rawValue) }
    }
    return FileDescriptor(rawValue: fd)
  }

  /// The folder above `directory` (`openat(directory, "..")`): only for walking back up a tree
  /// appdata walked down itself (a removal, the extraction's folder stack).
  package static func openParent(of directory: FileDescriptor, displayPath: @autoclosure () -> String) throws(SystemError) -> FileDescriptor {
    let fd = try withCName([0x2E, 0x2E]) { dotdot throws(SystemError) in
      try valueOrErrno(.open, path: displayPath()) { openat(directory.rawValue, dotdot, OpenOptions.directory.rawValue) }
    }
    return FileDescriptor(rawValue: fd)
  }
}

/// Throws EINVAL unless `name` is one plain component (`Beneath.isPlainName`): what every
/// name-taking wrapper in `Syscalls` and `ExtendedAttributes` checks before its syscall.
@inline(__always)
package func checkName(_ name: [UInt8], _ operation: @autoclosure () -> SystemError.Operation,
                       path: @autoclosure () -> String) throws(SystemError) {
  if !Beneath.isPlainName(name) { throw SystemError(errno: .invalidArgument, operation: operation(), path: path()) }
}

extension Syscalls {
  /// The folder at `path` (relative, `/`-separated) below `root`, through `Beneath.open`: the
  /// walk's handed-over folders, the extraction's folders, a backup's `xx` shards.
  package static func openFolder(relativePath path: [UInt8], below root: FileDescriptor) -> Result<FileDescriptor, Errno> {
    let components = RelativePath.components(path)
    if components.isEmpty { return .failure(.invalidArgument) }
    do {
      return .success(try Beneath.open(components, below: root, options: .directory, displayPath: ""))
    } catch {
      return .failure(error.errno)
    }
  }
}

extension Syscalls {
  /// geteuid(2): the user this process acts as (whose files it may call its own).
  package static var effectiveUserID: UInt32 { UInt32(geteuid()) }
}
