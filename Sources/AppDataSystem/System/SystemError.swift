#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An operating-system error: which call failed, on which path, and its `Errno`.
///
/// Decide by the errno's case, as with swift-system: `catch Errno.fileExists`, or
/// `switch error.errno { case .noSuchFileOrDirectory: ... }`.
public struct SystemError: Error, Equatable, CustomStringConvertible, Sendable {
  /// What the system said.
  public var errno: Errno
  /// The operation that failed (`.open`, `.readExtendedAttributes`); its `words` name it in messages.
  public var operation: Operation
  /// The path the operation was about, as the user should see it.
  public var path: String

  public init(errno: Errno, operation: Operation, path: String) {
    self.errno = errno
    self.operation = operation
    self.path = path
  }

  /// The OS's text for `errno` (strerror(3)); on a Mac, where the path is a folder macOS keeps
  /// private, what to do about it (`privacyHint`).
  public var reason: String {
    let text = errno.description
    guard let hint = Self.privacyHint(errno: errno, path: path, onMac: Self.isMac) else { return text }
    return "\(text); \(hint)"
  }

  #if os(macOS) || DARWIN_CHECK
  static let isMac = true
  #else
  static let isMac = false
  #endif

  /// Folders macOS's privacy protection (TCC) keeps from programs without Full Disk Access:
  /// the device backups Finder makes, and other apps' containers (macOS 14 and later also ask
  /// before one app reads another's data). Reading them fails with EPERM (not EACCES: the
  /// permissions allow it), which says nothing of the cause.
  static let privateFolders = ["/Library/Application Support/MobileSync/", "/Library/Containers/", "/Library/Group Containers/"]

  /// On a Mac, for EPERM on a path in or at one of `privateFolders`: where to grant Full Disk
  /// Access. `path` may be relative to the working folder.
  public static func privacyHint(errno: Errno, path: String, onMac: Bool) -> String? {
    guard onMac, errno == .notPermitted, !path.isEmpty else { return nil }
    let absolute = (path.hasPrefix("/") ? path : Syscalls.absolutePath(path)) + "/"
    guard privateFolders.contains(where: { absolute.contains($0) }) else { return nil }
    return "macOS keeps this folder private: give the app appdata runs in (Terminal, your CI agent) Full Disk Access in "
      + "System Settings > Privacy & Security > Full Disk Access, then run appdata again"
  }

  /// `path: cannot OPERATION: REASON`.
  public var description: String { "\(path): cannot \(operation.action): \(reason)" }

  /// The operation without its trailing preposition, for messages where the path is shown
  /// elsewhere: "read the extended attributes" rather than "read the extended attributes of".
  public var action: String { operation.action }

  /// What failed: one case per operation appdata names in a message, so code decides by the
  /// case and never by the words.
  public enum Operation: Sendable, Equatable, CustomStringConvertible {
    case open, openFolder, readFolder, readStatus, read, readTooLarge, readLink, readSource
    case write, create, createFolder, createFolderOverFile, createLink, move, replace, remove, flush
    case setTimes, setSize, setMode, copyData, copySpecialFile, findData
    /// Writing a report to NAME: refused for a FIFO, socket, device or folder, or a dangling link.
    case writeReport
    case readExtendedAttributes, readExtendedAttribute(String), setExtendedAttribute(String)
    case removeExtendedAttribute(String), copyExtendedAttributes
    /// A marker that did not stick (its name), or any marker (nil).
    case keepMarker(String?)

    /// The words after "cannot", with the preposition the path follows ("read the status of").
    public var description: String {
      switch self {
      case .open: return "open"
      case .openFolder: return "open the folder"
      case .readFolder: return "read the folder"
      case .readStatus: return "read the status of"
      case .read: return "read"
      case .readTooLarge: return "read (too large)"
      case .readLink: return "read the link"
      case .readSource: return "read the source of"
      case .write: return "write"
      case .create: return "create"
      case .createFolder: return "create the folder"
      case .createFolderOverFile: return "create the folder (a file has its name)"
      case .createLink: return "create the link"
      case .move: return "move"
      case .replace: return "replace"
      case .remove: return "remove"
      case .flush: return "flush to disk"
      case .setTimes: return "set the times of"
      case .setSize: return "set the size of"
      case .setMode: return "set the mode of"
      case .copyData: return "copy the data of"
      case .copySpecialFile: return "copy a special file (device, FIFO or socket)"
      case .findData: return "find the data of"
      case .writeReport: return "write a report to"
      case .readExtendedAttributes: return "read the extended attributes of"
      case .readExtendedAttribute(let name): return "read the extended attribute \(name) of"
      case .setExtendedAttribute(let name): return "set the extended attribute \(name) on"
      case .removeExtendedAttribute(let name): return "remove the extended attribute \(name) from"
      case .copyExtendedAttributes: return "copy extended attributes to"
      case .keepMarker(nil): return "keep a marker"
      case .keepMarker(let name?): return "keep the \(name) marker (it did not stick)"
      }
    }

    /// `description` without its trailing preposition.
    public var action: String {
      let words = description
      for suffix in [" of", " from", " on", " to"] where words.hasSuffix(suffix) {
        return String(words.dropLast(suffix.count))
      }
      return words
    }

    /// Whether the operation reads or writes extended attributes (markers).
    public var concernsExtendedAttributes: Bool {
      switch self {
      case .readExtendedAttributes, .readExtendedAttribute, .setExtendedAttribute, .removeExtendedAttribute,
           .copyExtendedAttributes, .keepMarker: return true
      default: return false
      }
    }
  }

}

/// An errno value, pattern-matchable as swift-system's `Errno` is: `case .fileExists:` in a
/// switch, `catch Errno.noSuchFileOrDirectory` for a thrown `Errno` or `SystemError`. Each
/// member takes the platform's own constant (Darwin's numbers differ from Linux's: ELOOP is 40 on
/// Linux and 62 on Darwin), so no code outside this file names an errno by number or by its C
/// name (`PortabilityTests.noErrnoIsANumericLiteral`). The walk's hot loop throws it bare, where
/// building a `SystemError` (with its strings) for every call would cost more than the call.
public struct Errno: Error, RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  /// The platform's number.
  public let rawValue: Int32
  @inlinable public init(rawValue: Int32) { self.rawValue = rawValue }

  /// The OS's text for it (strerror(3)).
  public var description: String { String(cString: strerror(rawValue)) }

  /// `catch Errno.fileExists`: matches a thrown `Errno`, or a `SystemError` carrying it.
  public static func ~= (pattern: Errno, error: any Error) -> Bool {
    if let errno = error as? Errno { return errno == pattern }
    if let error = error as? SystemError { return error.errno == pattern }
    return false
  }

  /// `catch Errno.fileExists` where the error is typed `SystemError`.
  public static func ~= (pattern: Errno, error: SystemError) -> Bool { error.errno == pattern }

  /// EPERM: not permitted (on a Mac, also what a folder macOS keeps private gives).
  public static var notPermitted: Errno { Errno(rawValue: EPERM) }
  /// ENOENT.
  public static var noSuchFileOrDirectory: Errno { Errno(rawValue: ENOENT) }
  /// EINTR: a call stopped by a signal (Ctrl-C, SIGTERM).
  public static var interrupted: Errno { Errno(rawValue: EINTR) }
  /// ENXIO: no data after an offset (lseek SEEK_DATA), no reader on a FIFO.
  public static var noSuchDeviceOrAddress: Errno { Errno(rawValue: ENXIO) }
  /// EBADF: a descriptor that is not open (a closed stdout).
  public static var badFileDescriptor: Errno { Errno(rawValue: EBADF) }
  /// EACCES.
  public static var permissionDenied: Errno { Errno(rawValue: EACCES) }
  /// EEXIST: a destination name already exists.
  public static var fileExists: Errno { Errno(rawValue: EEXIST) }
  /// EXDEV: a rename or a link across filesystems.
  public static var crossDevice: Errno { Errno(rawValue: EXDEV) }
  /// ENODEV: what appdata says of a report name that leads to a device or a system name.
  public static var noSuchDevice: Errno { Errno(rawValue: ENODEV) }
  /// ENOTDIR: a component that is not a folder (also what O_NOFOLLOW | O_DIRECTORY gives on a
  /// symlink).
  public static var notDirectory: Errno { Errno(rawValue: ENOTDIR) }
  /// EISDIR.
  public static var isDirectory: Errno { Errno(rawValue: EISDIR) }
  /// EINVAL: also what every name-taking wrapper gives a name that is not one plain component.
  public static var invalidArgument: Errno { Errno(rawValue: EINVAL) }
  /// EFBIG: a file larger than appdata reads.
  public static var fileTooLarge: Errno { Errno(rawValue: EFBIG) }
  /// ENOSPC: a full filesystem.
  public static var noSpace: Errno { Errno(rawValue: ENOSPC) }
  /// EMLINK.
  public static var tooManyLinks: Errno { Errno(rawValue: EMLINK) }
  /// EPIPE: the reader of a pipe went away.
  public static var brokenPipe: Errno { Errno(rawValue: EPIPE) }
  /// ERANGE: a buffer too small for an extended attribute or their list.
  public static var outOfRange: Errno { Errno(rawValue: ERANGE) }
  /// ENOTSUP: an operation the filesystem or the file does not support (Darwin's xattr calls
  /// fail with it). On Linux the same number as `notSupportedOnSocket`; on Darwin another.
  public static var notSupported: Errno { Errno(rawValue: ENOTSUP) }
  /// EOPNOTSUPP: Linux's "operation not supported" (its xattr calls, copy_file_range), which is
  /// `notSupported` there; on Darwin a number of its own.
  public static var notSupportedOnSocket: Errno { Errno(rawValue: EOPNOTSUPP) }
  /// ELOOP: a symlink where a folder was to be (O_NOFOLLOW, RESOLVE_BENEATH).
  public static var tooManySymbolicLinkLevels: Errno { Errno(rawValue: ELOOP) }
  /// ENAMETOOLONG.
  public static var fileNameTooLong: Errno { Errno(rawValue: ENAMETOOLONG) }
  /// ENOSYS: a syscall this kernel does not have (openat2, the *xattrat calls, copy_file_range).
  public static var noFunction: Errno { Errno(rawValue: ENOSYS) }
  /// ECANCELED: a copy its caller stopped between steps (`Syscalls.copyData(step:)`).
  public static var canceled: Errno { Errno(rawValue: ECANCELED) }
  /// EILSEQ: a name not valid on this filesystem.
  public static var illegalByteSequence: Errno { Errno(rawValue: EILSEQ) }
  /// ENODATA (Linux), ENOATTR (Darwin): no extended attribute of that name.
  public static var noAttribute: Errno {
    #if canImport(Glibc) && !DARWIN_CHECK
    return Errno(rawValue: ENODATA)
    #else
    return Errno(rawValue: ENOATTR)
    #endif
  }
  /// libarchive's ARCHIVE_ERRNO_FILE_FORMAT, bytes of no format it reads: EFTYPE on Darwin,
  /// EILSEQ on Linux, which has no EFTYPE (archive.h).
  public static var badFileTypeOrFormat: Errno {
    #if canImport(Glibc) && !DARWIN_CHECK
    return Errno(rawValue: EILSEQ)
    #else
    return Errno(rawValue: EFTYPE)
    #endif
  }

  /// True when what failed is the name or the entry asked for (too long, not valid on this
  /// filesystem, in the way, not a folder, a symlink), not the filesystem itself (full, read-only,
  /// failing, out of descriptors): an extraction reports that row and goes on.
  public var isCausedByEntry: Bool {
    switch self {
    case .fileNameTooLong, .invalidArgument, .illegalByteSequence, .fileExists, .notDirectory,
         .tooManySymbolicLinkLevels, .isDirectory, .noSuchFileOrDirectory, .tooManyLinks: return true
    default: return false
    }
  }
}
