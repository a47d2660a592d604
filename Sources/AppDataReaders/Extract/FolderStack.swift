import AppDataSystem
import AppDataCore

/// The folders from a container's root down to where the current row goes, for rows that come
/// in path order (`BackupExtraction.Plan.each`): only the deepest is open, its parent is reached
/// through its `..` (a folder this run made, mode 0700 until the end, that nobody else can move),
/// so a tree of any depth holds one descriptor and each folder is entered and left once. A
/// folder's mode and time are set as the rows leave it, when nothing more is made in it; a mode
/// that leaves out some of the owner's permissions is kept with them until the end
/// (`restricted`).
final class FolderStack {
  struct Setting {
    var mode: UInt32?
    var time: Int64?
  }

  /// Why `move` could not reach a folder.
  enum MoveFailure: Error {
    /// A component could not be opened or made.
    case system(SystemError)
    /// A component is, on this filesystem, the same name as `other`, made before from another
    /// row (`Prefs` and `prefs` where case is ignored): entering it would write into `other`.
    case collision(folder: [UInt8], other: [UInt8])
    /// A component that may be neither made nor entered (`SymlinkCheck.folderBlocked`: a symlink
    /// row's path, or where the filesystem may take it for one), with why.
    case blocked(folder: [UInt8], why: String)
  }

  let root: FileDescriptor
  let rootPath: [UInt8]
  /// How the output's filesystem compares names. Unless it compares bytes, each open folder's
  /// names made so far are kept (`levels`, the root's first), so that a row whose name the
  /// filesystem takes for another's is a finding, not a write into the other.
  let comparison: NameComparison
  private var levels: [FolderNames]
  /// The deepest folder's path below the root, and where each of its components ends in it.
  private var joined: [UInt8] = []
  private var ends: [Int] = []
  private var settings: [Setting] = []
  private var current: FileDescriptor?
  private(set) var restricted: [(path: [UInt8], mode: UInt32)] = []

  init(root: FileDescriptor, rootPath: [UInt8], comparison: NameComparison) {
    self.root = root
    self.rootPath = rootPath
    self.comparison = comparison
    levels = [FolderNames(comparison)]
  }

  /// Records `name`, about to be made in the deepest folder; returns the other name made there
  /// before that the filesystem takes it for, if any (then it must not be made). Never one
  /// where names compare as bytes: a second row of the very same name is the filesystem's
  /// EEXIST, as before.
  func claim(_ name: [UInt8]) -> [UInt8]? {
    guard comparison != .bytes, let other = levels[levels.count - 1].insert(name), other != name else { return nil }
    return other
  }

  deinit { current?.close() }

  /// The deepest folder's descriptor (the root's when the stack is empty).
  var descriptor: FileDescriptor { current ?? root }
  /// The deepest folder's path relative to the partial folder.
  var path: [UInt8] { RelativePath.join(rootPath, joined) }

  /// Goes to the folder `folder` (a path below the root, empty for the root): leaves the
  /// folders not on its way, enters (or makes, where no symlink row holds the path) the ones
  /// missing. A component that is not a folder (a file, a symlink) stops it there with its error;
  /// one `blocked` names (neither made nor entered), with why.
  func move(to folder: ArraySlice<UInt8>, blocked: ([UInt8]) -> String?) -> Result<Void, MoveFailure> {
    // The folders kept: those whose whole path `folder` starts with, up to a `/` or its end.
    var same = 0
    joined.withUnsafeBufferPointer { have in
      folder.withUnsafeBufferPointer { want in
        let limit = min(have.count, want.count)
        while same < limit && have[same] == want[same] { same += 1 }
      }
    }
    var kept = 0
    while kept < ends.count && ends[kept] <= same && (ends[kept] == folder.count || folder[folder.startIndex + ends[kept]] == 0x2F) { kept += 1 }
    do {
      while ends.count > kept { try leave() }
      var start = folder.startIndex + joined.count + (joined.isEmpty ? 0 : 1)
      while start < folder.endIndex {
        let end = folder[start...].firstIndex(of: 0x2F) ?? folder.endIndex
        let name = Array(folder[start..<end])
        start = end + 1
        if let other = claim(name) { return .failure(.collision(folder: RelativePath.join(joined, name), other: other)) }
        // Neither made nor entered (the filesystem may find a folder made under another name).
        let path = RelativePath.join(joined, name)
        if let why = blocked(path) { return .failure(.blocked(folder: path, why: why)) }
        switch withCName(name, { Syscalls.open(cName: $0, in: descriptor, options: .directory) }) {
        case .success(let opened):
          // Made before and left: its mode and time are set already.
          enter(name, descriptor: opened, setting: Setting(mode: nil, time: nil))
        case .failure(.noSuchFileOrDirectory):
          try Syscalls.makeDirectory(name, in: descriptor, mode: 0o700, displayPath: "")
          enter(name, descriptor: try Syscalls.open(name, in: descriptor, options: .directory, displayPath: ""), setting: Setting(mode: 0o755, time: nil))
        case .failure(let error):
          return .failure(.system(SystemError(errno: error, operation: .openFolder, path: "")))
        }
      }
    } catch {
      return .failure(.system(error))
    }
    return .success(())
  }

  /// Makes `descriptor`, the folder `name` in the deepest one, the deepest.
  func enter(_ name: [UInt8], descriptor: FileDescriptor, setting: Setting) {
    if !joined.isEmpty { joined.append(0x2F) }
    joined.append(contentsOf: name)
    ends.append(joined.count)
    settings.append(setting)
    if comparison != .bytes { levels.append(FolderNames(comparison)) }
    current?.close()
    current = descriptor
  }

  /// Sets the deepest folder's mode and time and goes up to its parent.
  private func leave() throws(SystemError) {
    guard let deepest = current else { return }
    // Taken from the stack: closed once its parent is open (through it), or when that fails.
    let owner = OwnedDescriptor(owning: deepest)
    current = nil
    let folder = owner.descriptor
    let setting = settings.removeLast()
    if let mode = setting.mode {
      try? Syscalls.setMode(folder, mode | 0o700, displayPath: "")
      if mode & 0o700 != 0o700 { restricted.append((path, mode)) }
    }
    if let time = setting.time {
      try? Syscalls.setTimes(folder, access: ExtractionWriter.fileTime(time), modification: ExtractionWriter.fileTime(time), displayPath: "")
    }
    ends.removeLast()
    if comparison != .bytes { levels.removeLast() }
    joined.removeLast(joined.count - max(0, (ends.last ?? 0)))
    if !ends.isEmpty { current = try Syscalls.openParent(of: folder, displayPath: "..") }
  }

  /// Leaves every folder (the container's rows are all made).
  func leaveAll() throws(SystemError) {
    while !ends.isEmpty { try leave() }
  }
}

/// Closes a descriptor the first time it is asked to, and never again.
final class CloseOnce {
  private var isClosed = false
  func close(_ descriptor: FileDescriptor?) {
    guard !isClosed else { return }
    isClosed = true
    descriptor?.close()
  }
}

/// Why an entry is not written, in words for the report.
struct ExtractionProblem: Error {
  var message: String
  init(_ message: String) { self.message = message }
}
