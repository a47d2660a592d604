#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open folder being read: a descriptor for the `*at` calls and a DIR stream
/// for its names. Reference-counted, so that entries still waiting to be walked keep
/// their parent's descriptor alive, and the last one out closes it.
public final class DirectoryStream: @unchecked Sendable {
  private let stream: OpaquePointer
  /// The folder's descriptor, valid as long as this object lives.
  public let descriptor: FileDescriptor

  /// fdopendir(3): takes ownership of `descriptor`.
  public init(taking descriptor: FileDescriptor, displayPath: @autoclosure () -> String) throws(SystemError) {
    guard let stream = fdopendir(descriptor.rawValue) else {
      let code = currentErrno()
      descriptor.close()
      throw SystemError(code: code, operation: "read the folder", path: displayPath())
    }
    self.stream = stream
    self.descriptor = descriptor
  }

  deinit { closedir(stream) }

  /// readdir(3) over every name but `.` and `..`, each passed as a C string valid only
  /// during the call. Returns the errno of a failed read, or nil at the normal end.
  public func forEachName(_ body: (UnsafePointer<CChar>) -> Void) -> Int32? {
    while true {
      errno = 0
      guard let entry = readdir(stream) else {
        let code = currentErrno()
        return code == 0 ? nil : code
      }
      let isDotOrDotDot: Bool = withUnsafePointer(to: &entry.pointee.d_name) { tuple in
        tuple.withMemoryRebound(to: UInt8.self, capacity: 3) { name in
          name[0] == 0x2E && (name[1] == 0 || (name[1] == 0x2E && name[2] == 0))
        }
      }
      if isDotOrDotDot { continue }
      withUnsafePointer(to: &entry.pointee.d_name) { tuple in
        tuple.withMemoryRebound(to: CChar.self, capacity: 256) { body($0) }
      }
    }
  }

  /// Every name in the folder, as bytes (for the migration's small listings).
  public func names() throws(SystemError) -> [[UInt8]] {
    var result: [[UInt8]] = []
    let failure = forEachName { cName in result.append(cNameBytes(cName)) }
    if let failure { throw SystemError(code: failure, operation: "read the folder", path: "") }
    return result
  }
}

/// The bytes of a NUL-terminated C string.
@inline(__always)
func cNameBytes(_ cName: UnsafePointer<CChar>) -> [UInt8] {
  let length = strlen(cName)
  return cName.withMemoryRebound(to: UInt8.self, capacity: length) {
    Array(UnsafeBufferPointer(start: $0, count: length))
  }
}
