#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An operating-system error: which call failed, on which path, and errno.
public struct SystemError: Error, Equatable, CustomStringConvertible, Sendable {
  /// The errno value.
  public var code: Int32
  /// The operation that failed, in words ("open", "read extended attributes of").
  public var operation: String
  /// The path the operation was about, as the user should see it.
  public var path: String

  public init(code: Int32, operation: String, path: String) {
    self.code = code
    self.operation = operation
    self.path = path
  }

  /// The OS's text for `code` (strerror(3)).
  public var reason: String { String(cString: strerror(code)) }

  /// `path: cannot OPERATION: REASON`.
  public var description: String { "\(path): cannot \(operation): \(reason)" }

  /// The operation without its trailing preposition, for messages where the path is shown
  /// elsewhere: "read the extended attributes" rather than "read the extended attributes of".
  public var action: String {
    for suffix in [" of", " from", " on", " to"] where operation.hasSuffix(suffix) {
      return String(operation.dropLast(suffix.count))
    }
    return operation
  }

  /// True for "no such file or directory".
  public var isNotFound: Bool { code == ENOENT }
  /// True for EPERM and EACCES.
  public var isPermissionDenied: Bool { code == EACCES || code == EPERM }
  /// True when the filesystem does not support (this kind of) extended attributes.
  public var isUnsupported: Bool { code == ENOTSUP || code == EOPNOTSUPP }
  /// True when a destination name already exists.
  public var isExists: Bool { code == EEXIST }
  /// True when a rename crossed filesystems.
  public var isCrossDevice: Bool { code == EXDEV }
}

/// The errno values the rest of the code needs to name, without importing libc.
public enum ErrnoValue {
  public static let notFound = ENOENT
  public static let notSupported = EOPNOTSUPP
  public static let noAttribute: Int32 = {
    #if canImport(Glibc)
    return ENODATA
    #else
    return ENOATTR
    #endif
  }()
}

/// A bare errno value, for the walk's hot loop where building a `SystemError`
/// (with its strings) for every call would cost more than the call.
public struct Errno: Error, Equatable, Sendable {
  public let code: Int32
  public init(code: Int32) { self.code = code }
}
