#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file descriptor. A value type like swift-system's: the owner closes it.
@usableFromInline package struct FileDescriptor: Hashable, Sendable {
  /// The raw descriptor number.
  @usableFromInline package let rawValue: Int32

  package init(rawValue: Int32) { self.rawValue = rawValue }

  /// The current working directory, for the `*at` calls (AT_FDCWD).
  package static let currentWorkingDirectory = FileDescriptor(rawValue: AT_FDCWD)
  /// Descriptors 1 and 2.
  package static let standardOutput = FileDescriptor(rawValue: 1)
  package static let standardError = FileDescriptor(rawValue: 2)

  /// close(2). Errors are ignored on purpose: the descriptor is gone either way,
  /// and a close error must never hide the error that made us close it.
  package func close() {
    _ = Glibc_or_Darwin_close(rawValue)
  }

  /// Runs `body`, then closes the descriptor, whatever `body` did.
  package func closeAfter<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
    defer { close() }
    return try body()
  }
}

@inline(__always)
package func Glibc_or_Darwin_close(_ fd: Int32) -> Int32 {
  #if canImport(Glibc) && !DARWIN_CHECK
  return Glibc.close(fd)
  #else
  return Darwin.close(fd)
  #endif
}

/// A descriptor and who closes it, checked by the compiler: not copyable, so it is closed once
/// (in `deinit`, when its one owner lets it go) and cannot be used after; `consume` moves it.
/// `borrowing:` is a view of a descriptor someone else owns (the partial folder, a root): its
/// `deinit` leaves it open. Where a function may return either (a folder that is the root, or
/// one it opened), the caller no longer carries an `isOwned` flag and a conditional `defer`.
package struct OwnedDescriptor: ~Copyable, Sendable {
  /// The descriptor, to pass to calls that borrow it.
  package let descriptor: FileDescriptor
  private let closes: Bool

  /// Takes ownership: closed when this value ends.
  package init(owning descriptor: FileDescriptor) {
    self.descriptor = descriptor
    closes = true
  }

  /// A view of a descriptor owned elsewhere: left open when this value ends.
  package init(borrowing descriptor: FileDescriptor) {
    self.descriptor = descriptor
    closes = false
  }

  /// Gives the descriptor up without closing it (its new owner closes it).
  package consuming func release() -> FileDescriptor {
    let descriptor = self.descriptor
    discard self
    return descriptor
  }

  deinit { if closes { descriptor.close() } }
}
