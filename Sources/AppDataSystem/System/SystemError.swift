#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An operating-system error: which call failed, on which path, and errno.
public struct SystemError: Error, Equatable, CustomStringConvertible, Sendable {
  /// The errno value.
  public var code: Int32
  /// The operation that failed (`.open`, `.readExtendedAttributes`); its `words` name it in messages.
  public var operation: Operation
  /// The path the operation was about, as the user should see it.
  public var path: String

  public init(code: Int32, operation: Operation, path: String) {
    self.code = code
    self.operation = operation
    self.path = path
  }

  /// The OS's text for `code` (strerror(3)); on a Mac, where the path is a folder macOS keeps
  /// private, what to do about it (`privacyHint`).
  public var reason: String {
    let text = String(cString: strerror(code))
    guard let hint = Self.privacyHint(code: code, path: path, onMac: Self.isMac) else { return text }
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
  public static func privacyHint(code: Int32, path: String, onMac: Bool) -> String? {
    guard onMac, code == EPERM, !path.isEmpty else { return nil }
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

  /// True for "no such file or directory".
  public var isNotFound: Bool { code == ENOENT }
  /// True for EPERM and EACCES.
  public var isPermissionDenied: Bool { code == EACCES || code == EPERM }
  /// True when the filesystem does not support (this kind of) extended attributes.
  public var isUnsupported: Bool { code == ENOTSUP || code == EOPNOTSUPP }
  /// True when a destination name already exists.
  public var isExists: Bool { code == EEXIST }
  /// True when what failed is the name or the entry asked for (too long, not valid on this
  /// filesystem, in the way, not a folder, a symlink), not the filesystem itself (full, read-only,
  /// failing, out of descriptors): an extraction reports that row and goes on.
  public var isCausedByEntry: Bool { Errno(code: code).isCausedByEntry }
  /// True when a rename crossed filesystems.
  public var isCrossDevice: Bool { code == EXDEV }
}

/// The errno values the rest of the code needs to name, without importing libc.
public enum ErrnoValue {
  public static let notFound = ENOENT
  /// ENOSPC: a full filesystem.
  public static let noSpace = ENOSPC
  /// EBADF: a descriptor that is not open (a closed stdout).
  public static let badDescriptor = EBADF
  /// EPIPE: the reader of a pipe went away.
  public static let brokenPipe = EPIPE
  /// ELOOP: a symlink where a folder was to be.
  public static let loop = ELOOP
  /// EINTR: an operation stopped by an interrupt (Ctrl-C, SIGTERM).
  public static let interrupted = EINTR
  /// EOPNOTSUPP (Linux), ENOTSUP (Darwin, where xattr calls fail with it and EOPNOTSUPP is
  /// another number): an operation the filesystem or the file does not support.
  public static let notSupported: Int32 = {
    #if canImport(Glibc) && !DARWIN_CHECK
    return EOPNOTSUPP
    #else
    return ENOTSUP
    #endif
  }()
  /// ENOTDIR: a component that is not a folder (also what O_NOFOLLOW | O_DIRECTORY gives on a
  /// symlink).
  public static let notAFolder = ENOTDIR
  /// EFBIG: a file larger than appdata reads.
  public static let tooLarge = EFBIG
  /// ECANCELED: a copy its caller stopped between steps (`Syscalls.copyData(step:)`).
  public static let cancelled = ECANCELED
  /// libarchive's ARCHIVE_ERRNO_FILE_FORMAT: EILSEQ on Linux, EFTYPE on Darwin (archive.h).
  public static let illegalByteSequence: Int32 = {
    #if canImport(Glibc) && !DARWIN_CHECK
    return EILSEQ
    #else
    return EFTYPE
    #endif
  }()
  public static let noAttribute: Int32 = {
    #if canImport(Glibc) && !DARWIN_CHECK
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
  /// `SystemError.isCausedByEntry`.
  public var isCausedByEntry: Bool {
    [ENAMETOOLONG, EINVAL, EILSEQ, EEXIST, ENOTDIR, ELOOP, EISDIR, ENOENT, EMLINK].contains(code)
  }
}
