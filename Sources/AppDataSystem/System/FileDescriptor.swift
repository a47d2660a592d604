#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file descriptor. A value type like swift-system's: the owner closes it.
public struct FileDescriptor: Hashable, Sendable {
  /// The raw descriptor number.
  public let rawValue: Int32

  public init(rawValue: Int32) { self.rawValue = rawValue }

  /// The current working directory, for the `*at` calls (AT_FDCWD).
  public static let currentWorkingDirectory = FileDescriptor(rawValue: AT_FDCWD)
  /// Descriptors 1 and 2.
  public static let standardOutput = FileDescriptor(rawValue: 1)
  public static let standardError = FileDescriptor(rawValue: 2)

  /// close(2). Errors are ignored on purpose: the descriptor is gone either way,
  /// and a close error must never hide the error that made us close it.
  public func close() {
    _ = Glibc_or_Darwin_close(rawValue)
  }

  /// Runs `body`, then closes the descriptor, whatever `body` did.
  public func closeAfter<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
    defer { close() }
    return try body()
  }
}

@inline(__always)
package func Glibc_or_Darwin_close(_ fd: Int32) -> Int32 {
  #if canImport(Glibc)
  return Glibc.close(fd)
  #else
  return Darwin.close(fd)
  #endif
}
