#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
import CLibattr
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Errno plumbing

/// Reads errno the same way on every platform.
@inline(__always)
@usableFromInline package func currentErrno() -> Errno {
  #if canImport(Glibc) && !DARWIN_CHECK
  return Errno(rawValue: appdata_errno())
  #else
  return Errno(rawValue: errno)
  #endif
}

/// Sets errno (a signal handler puts back what the code it interrupted may still read).
@inline(__always)
package func setErrno(_ value: Errno) {
  #if canImport(Glibc) && !DARWIN_CHECK
  appdata_set_errno(value.rawValue)
  #else
  errno = value.rawValue
  #endif
}

/// Turns a `-1`/errno result into a thrown `SystemError`, retrying EINTR.
/// The one place where a C return value becomes a Swift error (swift-system's `valueOrErrno`).
@inline(__always)
package func valueOrErrno<I: FixedWidthInteger>(
  _ operation: @autoclosure () -> SystemError.Operation, path: @autoclosure () -> String,
  retryOnInterrupt: Bool = true, _ call: () -> I
) throws(SystemError) -> I {
  while true {
    let result = call()
    if result != -1 { return result }
    let errno = currentErrno()
    if retryOnInterrupt && errno == .interrupted { continue }
    throw SystemError(errno: errno, operation: operation(), path: path())
  }
}

/// Calls `body` with `name` as a NUL-terminated C string, without Foundation.
@inlinable @inline(__always)
package func withCName<R, E: Error>(_ name: [UInt8], _ body: (UnsafePointer<CChar>) throws(E) -> R) throws(E) -> R {
  var terminated = name
  terminated.append(0)
  let result: Result<R, E> = terminated.withUnsafeBufferPointer { buffer in
    buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { cName in
      do throws(E) { return .success(try body(cName)) } catch { return .failure(error) }
    }
  }
  return try result.get()
}

/// The open(2) flags the walk and the migration use, named for what they promise.
package struct OpenOptions: OptionSet, Sendable {
  package let rawValue: Int32
  package init(rawValue: Int32) { self.rawValue = rawValue }

  /// O_DIRECTORY | O_NOFOLLOW | O_RDONLY: a folder, never through a symlink.
  package static let directory = OpenOptions(rawValue: O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
  /// A folder opened only to be passed through (the folder of *at calls, or reopened), never
  /// through a symlink: Linux's O_PATH, which needs search permission on the folder holding it
  /// alone; macOS has no such open, and reads it (`directory`).
  #if canImport(Glibc) && !DARWIN_CHECK
  package static let passThroughFolder = OpenOptions(rawValue: appdata_pass_through_folder_flags())
  #else
  package static let passThroughFolder = directory
  #endif
  /// O_RDONLY | O_NOFOLLOW: read a file, never through a symlink.
  package static let readFile = OpenOptions(rawValue: O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
  /// O_WRONLY | O_APPEND | O_NOFOLLOW: add to an existing file (the journal).
  package static let appendFile = OpenOptions(rawValue: O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC)
  /// O_RDONLY | O_NOFOLLOW | O_NONBLOCK: a file that may turn out not to be one (a FIFO in a
  /// backup): opening does not wait for a writer, and the caller checks what it opened.
  package static let readMaybeFile = OpenOptions(rawValue: O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
  /// O_RDWR | O_NOFOLLOW | O_NONBLOCK: as `readMaybeFile`, for a file this run may rewrite in
  /// place once it has checked it (an owner record it claims).
  package static let readWriteMaybeFile = OpenOptions(rawValue: O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
  /// O_WRONLY | O_NONBLOCK: write to a FIFO whose reader is there (fails with ENXIO when none is).
  package static let writeToFIFO = OpenOptions(rawValue: O_WRONLY | O_NONBLOCK | O_CLOEXEC)
  /// O_WRONLY | O_NOFOLLOW: write a file that exists (one appdata made), never through a symlink.
  package static let writeExistingFile = OpenOptions(rawValue: O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
  /// O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW: create a new file, never an existing one.
  package static let createNewFile = OpenOptions(
    rawValue: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC)
  /// O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW: create a new file to write and read back (an owner
  /// record, an output's hidden file).
  package static let createNewReadWrite = OpenOptions(
    rawValue: O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC)
}

// MARK: - Thin wrappers, one per syscall

/// The calls appdata makes, each a thin wrapper over one C function, by concern:
/// Syscalls+Files.swift, Syscalls+Process.swift, Syscalls+Terminal.swift.
@usableFromInline package enum Syscalls {}

// The C library's open, read and write, by a name no wrapper of `Syscalls` shadows.
#if canImport(Glibc) && !DARWIN_CHECK
@inline(__always) package func Glibc_or_Darwin_open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 { Glibc.open(path, flags, mode) }
@inline(__always) package func Glibc_or_Darwin_read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { Glibc.read(fd, buffer, count) }
@inline(__always) package func Glibc_or_Darwin_write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { Glibc.write(fd, buffer, count) }
#else
@inline(__always) package func Glibc_or_Darwin_open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 { Darwin.open(path, flags, mode) }
@inline(__always) package func Glibc_or_Darwin_read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { Darwin.read(fd, buffer, count) }
@inline(__always) package func Glibc_or_Darwin_write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { Darwin.write(fd, buffer, count) }
#endif
