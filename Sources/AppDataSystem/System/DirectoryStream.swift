#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
import CLibattr
#elseif canImport(Darwin)
import Darwin
#endif

/// What a folder listing says an entry is, before any stat(2).
@usableFromInline package enum DirectoryEntryType: Sendable {
  case directory, regular, symbolicLink, other
  /// The filesystem did not say (DT_UNKNOWN): stat to find out.
  case unknown
}

/// An open folder being read: a descriptor for the `*at` calls and its names.
/// Reference-counted, so that entries still waiting to be walked keep their parent's
/// descriptor alive, and the last one out closes it. On Linux the names come from
/// getdents64(2) directly; on Darwin from readdir(3).
// Unchecked Sendable: the descriptor is a constant, closed only in deinit (when no thread holds
// the stream); a stream is read by the one worker that opened it.
@usableFromInline package final class DirectoryStream: @unchecked Sendable {
  /// The folder's descriptor, valid as long as this object lives.
  @usableFromInline package let descriptor: FileDescriptor
  #if !canImport(Glibc) || DARWIN_CHECK
  /// Darwin's `DIR` is a complete struct (Libc's dirent.h), so fdopendir(3) gives a typed
  /// pointer, not an OpaquePointer. Usable from inlinable code: `forEachEntry` reads it.
  @usableFromInline let stream: UnsafeMutablePointer<DIR>
  #endif

  /// Takes ownership of `descriptor`.
  package init(taking descriptor: FileDescriptor, displayPath: @autoclosure () -> String) throws(SystemError) {
    self.descriptor = descriptor
    #if !canImport(Glibc) || DARWIN_CHECK
    guard let stream = fdopendir(descriptor.rawValue) else {
      let code = currentErrno()
      descriptor.close()
      throw SystemError(errno: code, operation: .readFolder, path: displayPath())
    }
    self.stream = stream
    #endif
  }

  deinit {
    #if canImport(Glibc) && !DARWIN_CHECK
    descriptor.close()
    #else
    closedir(stream)
    #endif
  }

  /// Every name but `.` and `..`, each passed as a NUL-terminated C string (valid only during
  /// the call), its length, and its type. Returns the `Errno` of a failed read, or nil at the end.
  package func forEachEntry(_ body: (UnsafePointer<CChar>, Int, DirectoryEntryType) -> Void) -> Errno? {
    let scratch = DirectoryBuffer()
    return forEachEntry(using: scratch, body)
  }

  /// `forEachEntry` reading through a caller's buffer, so a walk allocates one per thread
  /// instead of one per folder.
  @inlinable
  package func forEachEntry(using scratch: DirectoryBuffer, _ body: (UnsafePointer<CChar>, Int, DirectoryEntryType) -> Void) -> Errno? {
    #if canImport(Glibc) && !DARWIN_CHECK
    let size = scratch.size
    let buffer = scratch.pointer
    while true {
      let count = appdata_getdents64(descriptor.rawValue, buffer, size)
      if count == 0 { return nil }
      if count < 0 {
        let code = currentErrno()
        if code == .interrupted { continue }
        return code
      }
      var offset = 0
      while offset < count {
        // struct linux_dirent64 { u64 d_ino; s64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
        let record = buffer + offset
        let recordLength = Int(record.loadUnaligned(fromByteOffset: 16, as: UInt16.self))
        let type = record.load(fromByteOffset: 18, as: UInt8.self)
        let name = (record + 19).assumingMemoryBound(to: CChar.self)
        offset += recordLength
        let length = strlen(name)
        if name[0] == 0x2E && (length == 1 || (length == 2 && name[1] == 0x2E)) { continue }
        body(name, length, Self.type(type))
      }
    }
    #else
    while true {
      errno = 0
      guard let entry = readdir(stream) else {
        let code = currentErrno()
        return code.rawValue == 0 ? nil : code
      }
      let type = entry.pointee.d_type
      // bsd/sys/dirent.h: d_namlen is the name's length, d_name[1024] holds it NUL-terminated.
      let length = Int(entry.pointee.d_namlen)
      withUnsafePointer(to: &entry.pointee.d_name) { tuple in
        tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: tuple.pointee)) { name in
          if name[0] == 0x2E && (length == 1 || (length == 2 && name[1] == 0x2E)) { return }
          body(name, length, Self.type(type))
        }
      }
    }
    #endif
  }

  @usableFromInline static func type(_ raw: UInt8) -> DirectoryEntryType {
    switch Int32(raw) {
    case Int32(DT_DIR): return .directory
    case Int32(DT_REG): return .regular
    case Int32(DT_LNK): return .symbolicLink
    case Int32(DT_UNKNOWN): return .unknown
    default: return .other
    }
  }

  /// Every name in the folder, as bytes (for the migration's small listings).
  package func names() throws(SystemError) -> [[UInt8]] {
    var result: [[UInt8]] = []
    let failure = forEachEntry { cName, length, _ in
      result.append(cName.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) })
    }
    if let failure { throw SystemError(errno: failure, operation: .readFolder, path: "") }
    return result
  }
}

/// Memory for getdents64(2) records, reused across folders.
@usableFromInline package final class DirectoryBuffer {
  @usableFromInline package let size = 64 * 1024
  @usableFromInline package let pointer: UnsafeMutableRawPointer

  package init() { pointer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8) }
  deinit { pointer.deallocate() }
}

/// The bytes of a NUL-terminated C string.
@inline(__always)
package func cNameBytes(_ cName: UnsafePointer<CChar>) -> [UInt8] {
  let length = strlen(cName)
  return cName.withMemoryRebound(to: UInt8.self, capacity: length) {
    Array(UnsafeBufferPointer(start: $0, count: length))
  }
}
