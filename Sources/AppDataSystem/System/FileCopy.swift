#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
import CLibattr
#elseif canImport(Darwin)
import Darwin
#endif

extension Syscalls {
  /// `APPDATA_FORCE_COPY_FALLBACK=1` makes every copy take the read/write path, as a kernel or
  /// filesystem that refuses `copy_file_range` would (tests).
  package static let forcesCopyFallback = environment("APPDATA_FORCE_COPY_FALLBACK") == "1"

  /// Copies `source` to `destination` (a new, empty file) keeping holes: each data extent found
  /// with `lseek(SEEK_DATA)`/`lseek(SEEK_HOLE)` is copied with `copy_file_range(2)` (Linux) where the
  /// kernel allows it (the data never passes through user space), else with `pread`/`pwrite`
  /// through a 128 KiB buffer, as cp uses (on `EXDEV`, `EINVAL`, `ENOSYS`, `EOPNOTSUPP`); holes are skipped,
  /// and the destination ends with the source's exact size (`ftruncate` for a trailing hole).
  /// A 2 GiB sparse file holding 4 MiB of data needs 4 MiB at the destination, not 2 GiB.
  /// Returns the bytes of data copied (holes are not). `step`, when given, is told the bytes of
  /// each step (at most 64 MiB, so that a progress line moves on a large file) and stops the copy
  /// by returning false: the copy then throws `ECANCELED`.
  ///
  /// A caller copying many files passes `context`: what a copy learns (the kernel refuses
  /// `copy_file_range` between these filesystems) is then learnt once, and its buffer is reused;
  /// and `sourceSize`, when it has just read it (no second `fstat`). A file no larger than one
  /// buffer is one extent (no `lseek`), and the length is set only after a trailing hole.
  package static func copyData(
    from source: FileDescriptor, to destination: FileDescriptor, displayPath: @autoclosure () -> String,
    step: ((UInt64) -> Bool)? = nil, sourceSize: UInt64? = nil, context: CopyContext? = nil
  ) throws(SystemError) -> UInt64 {
    let most: Int64 = step == nil ? 1 << 30 : 64 << 20
    let size: Int64
    if let sourceSize { size = Int64(sourceSize) } else { size = Int64(try status(of: source, displayPath: displayPath()).size) }
    var copied: UInt64 = 0
    var kernelCopies = !forcesCopyFallback && !(context?.kernelCopyRefused ?? false)
    var buffer: UnsafeMutableRawBufferPointer? = context?.buffer
    defer { if context == nil { buffer?.deallocate() } }
    var offset: Int64 = 0
    var dataEnd: Int64 = 0
    while offset < size {
      let (start, end) = size <= 128 << 10 ? (offset, size) : try nextExtent(source, from: offset, size: size, displayPath: displayPath())
      guard start < end else { break }  // only a hole is left
      var position = start
      while position < end {
        let wanted = Int(min(end - position, most))
        if kernelCopies {
          switch kernelCopy(from: source, to: destination, at: position, count: wanted) {
          case .success(0): position = end  // the source shrank under us: what is left reads as a hole
          case .success(let count):
            position += Int64(count)
            copied += UInt64(count)
            if let step, !step(UInt64(count)) { throw SystemError(errno: .canceled, operation: .copyData, path: displayPath()) }
          case .failure(.crossDevice), .failure(.invalidArgument), .failure(.noFunction), .failure(.notSupportedOnSocket), .failure(.notPermitted):
            kernelCopies = false
            context?.kernelCopyRefused = true
          case .failure(let error):
            throw SystemError(errno: error, operation: .copyData, path: displayPath())
          }
          continue
        }
        if buffer == nil {
          buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 128 << 10, alignment: 4096)
          context?.buffer = buffer
        }
        let chunk = buffer!
        let count = try valueOrErrno(.readSource, path: displayPath()) {
          pread(source.rawValue, chunk.baseAddress, min(wanted, chunk.count), off_t(position))
        }
        if count == 0 { break }
        var written = 0
        while written < count {
          written += try valueOrErrno(.write, path: displayPath()) {
            pwrite(destination.rawValue, chunk.baseAddress! + written, count - written, off_t(position) + off_t(written))
          }
        }
        position += Int64(count)
        copied += UInt64(count)
        if let step, !step(UInt64(count)) { throw SystemError(errno: .canceled, operation: .copyData, path: displayPath()) }
      }
      offset = end
      dataEnd = position
    }
    // Only a trailing hole (or a source that shrank) leaves the destination short.
    if dataEnd != size {
      _ = try valueOrErrno(.setSize, path: displayPath()) { ftruncate(destination.rawValue, off_t(size)) }
    }
    return copied
  }

  /// The next data extent at or after `offset`: `[start, end)`; `start == end` when only a hole is
  /// left. A filesystem without `SEEK_DATA` has one extent, the whole file.
  private static func nextExtent(
    _ file: FileDescriptor, from offset: Int64, size: Int64, displayPath: @autoclosure () -> String
  ) throws(SystemError) -> (Int64, Int64) {
    #if canImport(Glibc) && !DARWIN_CHECK
    let start = appdata_seek_data(file.rawValue, off_t(offset))
    if start < 0 {
      let code = currentErrno()
      if code == .noSuchDeviceOrAddress { return (size, size) }  // no data after offset
      if code == .invalidArgument || code == .notSupportedOnSocket { return (offset, size) }
      throw SystemError(errno: code, operation: .findData, path: displayPath())
    }
    let end = appdata_seek_hole(file.rawValue, start)
    return (Int64(start), end < 0 ? size : min(Int64(end), size))
    #else
    // lseek(2) on Darwin: the same SEEK_DATA and SEEK_HOLE (numbered 4 and 3, the other way
    // round from Linux), ENXIO when no data follows `offset`; a filesystem that keeps no holes
    // shows the whole file as one data region (APFS keeps them).
    let start = lseek(file.rawValue, off_t(offset), SEEK_DATA)
    if start < 0 {
      let code = currentErrno()
      if code == .noSuchDeviceOrAddress { return (size, size) }
      if code == .invalidArgument || code == .notSupported { return (offset, size) }
      throw SystemError(errno: code, operation: .findData, path: displayPath())
    }
    let end = lseek(file.rawValue, start, SEEK_HOLE)
    return (Int64(start), end < 0 ? size : min(Int64(end), size))
    #endif
  }

  /// One `copy_file_range(2)` call between equal offsets; the errno on failure.
  private static func kernelCopy(from source: FileDescriptor, to destination: FileDescriptor, at position: Int64, count: Int) -> Result<Int, Errno> {
    #if canImport(Glibc) && !DARWIN_CHECK
    var input = off_t(position)
    var output = off_t(position)
    while true {
      let copied = appdata_copy_file_range(source.rawValue, &input, destination.rawValue, &output, count)
      if copied >= 0 { return .success(copied) }
      let code = currentErrno()
      if code != .interrupted { return .failure(code) }
    }
    #else
    // Darwin has no copy_file_range: the read/write path copies. (APFS clones need the
    // destination made by fclonefileat(2), by name, which the extraction's writers, given an
    // open file, cannot use.)
    return .failure(.noFunction)
    #endif
  }
}

/// What copies of many files share (`Syscalls.copyData(context:)`): whether the kernel refused
/// `copy_file_range` (EXDEV between two filesystems, or no support), learnt by the first copy,
/// and the fallback's buffer. One per thread that copies: not shared between threads.
package final class CopyContext {
  package var kernelCopyRefused = false
  fileprivate var buffer: UnsafeMutableRawBufferPointer?
  package init() {}
  deinit { buffer?.deallocate() }
}
