#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
import CLibattr
#elseif canImport(Darwin)
import Darwin
#endif

/// Extended-attribute calls: by (folder descriptor, name) in the walk, by path for
/// the marker verbs, by descriptor in the migration. Never follows a final symlink.
@usableFromInline package enum ExtendedAttributes {
  /// True when the `*xattrat` syscalls are not used: the kernel lacks them (ENOSYS,
  /// before Linux 6.13), or `APPDATA_FORCE_XATTR_FALLBACK=1` asks for the fallback
  /// so tests can exercise it on a new kernel.
  @usableFromInline package static let usesPathFallback: Bool = {
    if Syscalls.environment("APPDATA_FORCE_XATTR_FALLBACK") == "1" { return true }
    #if canImport(Glibc) && !DARWIN_CHECK
    var byte: CChar = 0
    if appdata_listxattrat(AT_FDCWD, ".", &byte, 0) < 0 && currentErrno() == .noFunction { return true }
    return false
    #else
    return true
    #endif
  }()

  // MARK: - Relative to an open folder (the walk)

  /// listxattrat(2): the NUL-separated attribute names of `cName` in `directory`
  /// written into `buffer` (grown as needed); returns their total length.
  /// `pathFallback` is `usesPathFallback`, passed in by the walk: it reads the global once per
  /// worker rather than once per entry.
  @inlinable
  package static func listNames(
    of cName: UnsafePointer<CChar>, in directory: FileDescriptor, into buffer: inout [UInt8],
    pathFallback: Bool = usesPathFallback
  ) -> Result<Int, Errno> {
    while true {
      let count: Int = buffer.withUnsafeMutableBytes { raw in
        let list = raw.baseAddress!.assumingMemoryBound(to: CChar.self)
        #if canImport(Glibc) && !DARWIN_CHECK
        if !pathFallback {
          return appdata_listxattrat(directory.rawValue, cName, list, raw.count)
        }
        return withFallbackPath(cName, in: directory) { llistxattr($0, list, raw.count) }
        #else
        return withEntryDescriptor(cName, in: directory) { flistxattr($0, list, raw.count, 0) }
        #endif
      }
      if count >= 0 { return .success(count) }
      let code = currentErrno()
      if code == .interrupted { continue }
      if code == .outOfRange { buffer = [UInt8](repeating: 0, count: buffer.count * 2); continue }
      return .failure(code)
    }
  }

  /// getxattrat(2): the value of `attribute` on `cName` in `directory`, or nil if absent.
  @usableFromInline package static func value(
    of attribute: String, on cName: UnsafePointer<CChar>, in directory: FileDescriptor
  ) -> Result<[UInt8]?, Errno> {
    var buffer = [UInt8](repeating: 0, count: 256)
    while true {
      let count: Int = buffer.withUnsafeMutableBytes { raw in
        #if canImport(Glibc) && !DARWIN_CHECK
        if !usesPathFallback {
          return appdata_getxattrat(directory.rawValue, cName, attribute, raw.baseAddress, raw.count)
        }
        return withFallbackPath(cName, in: directory) { lgetxattr($0, attribute, raw.baseAddress, raw.count) }
        #else
        return withEntryDescriptor(cName, in: directory) { fgetxattr($0, attribute, raw.baseAddress, raw.count, 0, 0) }
        #endif
      }
      if count >= 0 { return .success(Array(buffer[0..<count])) }
      let code = currentErrno()
      if code == .interrupted { continue }
      if code == .outOfRange && buffer.count < 1 << 20 { buffer = [UInt8](repeating: 0, count: buffer.count * 16); continue }
      if code == .noAttribute { return .success(nil) }
      return .failure(code)
    }
  }

  /// Sets `attribute` on `name` in `directory` without following a final symlink.
  /// (setxattrat(2) is not used: the short /proc/thread-self/fd path works on every kernel.)
  package static func setValue(
    _ value: [UInt8], of attribute: String, onEntry name: [UInt8], in directory: FileDescriptor,
    displayPath: @autoclosure () -> String
  ) throws(SystemError) {
    try checkName(name, .setExtendedAttribute(attribute), path: displayPath())
    _ = try valueOrErrno(.setExtendedAttribute(attribute), path: displayPath()) {
      withCName(name) { cName -> Int in
        value.withUnsafeBytes { raw -> Int in
          #if canImport(Glibc) && !DARWIN_CHECK
          return withFallbackPath(cName, in: directory) { Int(lsetxattr($0, attribute, raw.baseAddress, raw.count, 0)) }
          #else
          return withEntryDescriptor(cName, in: directory) { Int(fsetxattr($0, attribute, raw.baseAddress, raw.count, 0, 0)) }
          #endif
        }
      }
    }
  }

  /// Sets `attribute` on the open file `descriptor` (fsetxattr(2)): no name to resolve, so
  /// nothing another thread does to the folder changes which file it lands on.
  package static func setValue(_ value: [UInt8], of attribute: String, on descriptor: FileDescriptor, displayPath: @autoclosure () -> String) throws(SystemError) {
    _ = try valueOrErrno(.setExtendedAttribute(attribute), path: displayPath()) {
      value.withUnsafeBytes { raw -> Int32 in
        #if canImport(Glibc) && !DARWIN_CHECK
        return fsetxattr(descriptor.rawValue, attribute, raw.baseAddress, raw.count, 0)
        #else
        return fsetxattr(descriptor.rawValue, attribute, raw.baseAddress, raw.count, 0, 0)
        #endif
      }
    }
  }

  /// Removes `attribute` from the open file `descriptor` (fremovexattr(2)); false when it was
  /// not there.
  @discardableResult
  package static func removeValue(of attribute: String, on descriptor: FileDescriptor, displayPath: @autoclosure () -> String) throws(SystemError) -> Bool {
    #if canImport(Glibc) && !DARWIN_CHECK
    let result = fremovexattr(descriptor.rawValue, attribute)
    #else
    let result = fremovexattr(descriptor.rawValue, attribute, 0)
    #endif
    if result == 0 { return true }
    let code = currentErrno()
    if code == .noAttribute { return false }
    throw SystemError(errno: code, operation: .removeExtendedAttribute(attribute), path: displayPath())
  }

  /// The value of `attribute` on the open file `descriptor` (fgetxattr(2)), up to 64 bytes (a
  /// longer one reads as its first 64 bytes and a 65th, so it compares unequal to any shorter);
  /// nil when absent.
  package static func value(of attribute: String, on descriptor: FileDescriptor, displayPath: @autoclosure () -> String) throws(SystemError) -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: 64)
    let count: Int = buffer.withUnsafeMutableBytes { raw in
      #if canImport(Glibc) && !DARWIN_CHECK
      return fgetxattr(descriptor.rawValue, attribute, raw.baseAddress, raw.count)
      #else
      return fgetxattr(descriptor.rawValue, attribute, raw.baseAddress, raw.count, 0, 0)
      #endif
    }
    if count >= 0 { return Array(buffer[0..<count]) }
    let code = currentErrno()
    if code == .noAttribute { return nil }
    if code == .outOfRange { return buffer + [0] }
    throw SystemError(errno: code, operation: .readExtendedAttribute(attribute), path: displayPath())
  }

  /// Removes `attribute` from `name` in `directory`; false when it was not there.
  @discardableResult
  package static func removeValue(
    of attribute: String, onEntry name: [UInt8], in directory: FileDescriptor, displayPath: @autoclosure () -> String
  ) throws(SystemError) -> Bool {
    try checkName(name, .removeExtendedAttribute(attribute), path: displayPath())
    let result: Int = withCName(name) { cName in
      #if canImport(Glibc) && !DARWIN_CHECK
      return withFallbackPath(cName, in: directory) { Int(lremovexattr($0, attribute)) }
      #else
      return withEntryDescriptor(cName, in: directory) { Int(fremovexattr($0, attribute, 0)) }
      #endif
    }
    if result == 0 { return true }
    let code = currentErrno()
    if code == .noAttribute { return false }
    throw SystemError(errno: code, operation: .removeExtendedAttribute(attribute), path: displayPath())
  }

  /// The value of `attribute` on `name` in `directory`, or nil when absent.
  package static func value(
    of attribute: String, onEntry name: [UInt8], in directory: FileDescriptor, displayPath: @autoclosure () -> String
  ) throws(SystemError) -> [UInt8]? {
    try checkName(name, .readExtendedAttribute(attribute), path: displayPath())
    let result = withCName(name) { cName in value(of: attribute, on: cName, in: directory) }
    switch result {
    case .success(let value): return value
    case .failure(let error):
      throw SystemError(errno: error, operation: .readExtendedAttribute(attribute), path: displayPath())
    }
  }

  #if canImport(Glibc) && !DARWIN_CHECK
  /// The fallback for kernels without `*xattrat`: a short path through the folder's
  /// /proc/thread-self/fd link, so deep trees still work and the final name is not followed.
  /// `thread-self`, not `self`: the walk's workers each have their own descriptor table
  /// (`Syscalls.unshareDescriptorTable`), and /proc/self/fd shows the main thread's.
  @usableFromInline static func withFallbackPath(
    _ cName: UnsafePointer<CChar>, in directory: FileDescriptor, _ body: (UnsafePointer<CChar>) -> Int
  ) -> Int {
    let prefix = "/proc/thread-self/fd/\(directory.rawValue)/"
    var path = Array(prefix.utf8)
    path.append(contentsOf: cNameBytes(cName))
    path.append(0)
    return path.withUnsafeBufferPointer { buffer in
      buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { body($0) }
    }
  }
  #else
  /// Darwin: open the entry itself (O_SYMLINK: a link is opened as a link) and use the f* calls.
  @usableFromInline static func withEntryDescriptor(
    _ cName: UnsafePointer<CChar>, in directory: FileDescriptor, _ body: (Int32) -> Int
  ) -> Int {
    let fd = openat(directory.rawValue, cName, O_RDONLY | O_SYMLINK | O_NONBLOCK | O_CLOEXEC)
    if fd < 0 { return -1 }
    defer { _ = Darwin.close(fd) }
    return body(fd)
  }
  #endif

  // MARK: - By path (the marker verbs)

  /// llistxattr(2) on a path: every attribute name, as strings.
  package static func names(atPath path: String) throws(SystemError) -> [String] {
    var buffer = [UInt8](repeating: 0, count: 1024)
    while true {
      let count: Int = buffer.withUnsafeMutableBytes { raw in
        let list = raw.baseAddress!.assumingMemoryBound(to: CChar.self)
        #if canImport(Glibc) && !DARWIN_CHECK
        return llistxattr(path, list, raw.count)
        #else
        return listxattr(path, list, raw.count, XATTR_NOFOLLOW)
        #endif
      }
      if count >= 0 {
        return buffer[0..<count].split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
      }
      let code = currentErrno()
      if code == .interrupted { continue }
      if code == .outOfRange { buffer = [UInt8](repeating: 0, count: buffer.count * 4); continue }
      throw SystemError(errno: code, operation: .readExtendedAttributes, path: path)
    }
  }

  /// lgetxattr(2) on a path; nil when the attribute is absent.
  package static func value(of attribute: String, atPath path: String) throws(SystemError) -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count: Int = buffer.withUnsafeMutableBytes { raw in
        #if canImport(Glibc) && !DARWIN_CHECK
        return lgetxattr(path, attribute, raw.baseAddress, raw.count)
        #else
        return getxattr(path, attribute, raw.baseAddress, raw.count, 0, XATTR_NOFOLLOW)
        #endif
      }
      if count >= 0 { return Array(buffer[0..<count]) }
      let code = currentErrno()
      if code == .interrupted { continue }
      if code == .noAttribute { return nil }
      if code == .outOfRange && buffer.count < 1 << 20 { buffer = [UInt8](repeating: 0, count: buffer.count * 16); continue }
      throw SystemError(errno: code, operation: .readExtendedAttribute(attribute), path: path)
    }
  }

  /// lsetxattr(2) on a path.
  package static func setValue(_ value: [UInt8], of attribute: String, atPath path: String) throws(SystemError) {
    _ = try valueOrErrno(.setExtendedAttribute(attribute), path: path) {
      value.withUnsafeBytes { raw -> Int32 in
        #if canImport(Glibc) && !DARWIN_CHECK
        return lsetxattr(path, attribute, raw.baseAddress, raw.count, 0)
        #else
        return setxattr(path, attribute, raw.baseAddress, raw.count, 0, XATTR_NOFOLLOW)
        #endif
      }
    }
  }

  /// lremovexattr(2) on a path; returns false when the attribute was not there.
  @discardableResult
  package static func removeValue(of attribute: String, atPath path: String) throws(SystemError) -> Bool {
    while true {
      #if canImport(Glibc) && !DARWIN_CHECK
      let result = lremovexattr(path, attribute)
      #else
      let result = removexattr(path, attribute, XATTR_NOFOLLOW)
      #endif
      if result == 0 { return true }
      let code = currentErrno()
      if code == .interrupted { continue }
      if code == .noAttribute { return false }
      throw SystemError(errno: code, operation: .removeExtendedAttribute(attribute), path: path)
    }
  }

  // MARK: - By descriptor (the migration's cross-filesystem copy)

  /// attr_copy_fd(3) (libattr): every extended attribute of `source` onto `destination`.
  package static func copyAll(
    from source: FileDescriptor, to destination: FileDescriptor, displayPath: @autoclosure () -> String
  ) throws(SystemError) {
    #if canImport(Glibc) && !DARWIN_CHECK
    _ = try valueOrErrno(.copyExtendedAttributes, path: displayPath()) {
      appdata_attr_copy_fd(nil, source.rawValue, nil, destination.rawValue)
    }
    #else
    _ = try valueOrErrno(.copyExtendedAttributes, path: displayPath()) {
      fcopyfile(source.rawValue, destination.rawValue, nil, copyfile_flags_t(COPYFILE_XATTR))
    }
    #endif
  }
}
