import AppDataSystem
import AppDataCore

/// A migration that cannot start (a failed pre-check, nothing changed on disk), or, for the
/// defaults plist's cases, a step after the moves that could not be done.
///
/// A caller switches on the case. A `path` is as `message` shows it: relative to the container
/// and escaped for a terminal (`ContainerAccess.display`), except `container`, the container's
/// root as given. A `SystemError` is the call that failed, with its `errno`. `message` is the one
/// line `appdata` prints after `appdata: error: `; `cause` is the `Refusal.Cause` it is.
public enum MigrationError: JobFailure {
  /// The container's root could not be opened.
  case cannotOpenContainer(container: String, SystemError)
  /// Another appdata migrate holds the container's lock.
  case alreadyRunning(container: String)
  /// `--defaults-key` without `--bundle-id` or `--defaults-plist`, in a container with no
  /// metadata plist to read the bundle id from.
  case noBundleID(container: String)
  /// `--from` and `--to` overlap: a folder cannot be moved into itself.
  case overlap(source: String, destination: String)
  /// A folder of the plan (`role`: "source", "folder", "path") that cannot be opened or its
  /// status read: no such folder, a symlink, not a folder, or what the system said.
  case cannotOpen(path: String, role: String, SystemError)
  /// A folder's names could not be read.
  case cannotReadFolder(path: String, SystemError)
  /// A folder on the way to `--to` is a symlink or not a folder.
  case destinationNotAFolder(path: String, isSymlink: Bool)
  /// `--on-conflict merge` into an `--into` name that is not a folder.
  case cannotMergeInto(path: String)
  /// The folder holding an entry to measure could not be opened.
  case cannotOpenToMeasure(SystemError)
  /// An entry could not be measured (its files and bytes).
  case cannotMeasure(SystemError)
  /// A source folder whose entries this user cannot move out (no write permission).
  case cannotMoveOut(folder: String)
  /// The destination's nearest existing folder could not be opened.
  case cannotOpenDestination(path: String, SystemError)
  /// No file can be created in the destination.
  case cannotCreateInDestination(path: String, SystemError)
  /// The destination does not keep the backup marker (`SystemError.operation` says which step).
  case markerNotKept(path: String, SystemError)
  /// The journal could not be written.
  case cannotWriteJournal(container: String, SystemError)
  /// The journal could not be read (nil: an error that was not the system's).
  case cannotReadJournal(path: String, SystemError?)
  /// The journal's name is not a regular file.
  case journalNotAFile(path: String)
  /// The journal is not one this version of appdata reads.
  case journalNotReadable(path: String)
  /// The journal was not written by appdata migrate in this container (copied in, planted).
  case journalNotThisContainers(path: String)
  /// The journal names a path outside the plan's folders.
  case journalLeavesThePlan(path: String)
  /// The journal could not be opened to record progress.
  case cannotOpenJournal(path: String, SystemError)
  /// The defaults plist is not a property list appdata reads (`reason`: the reader's).
  case defaultsPlistNotAPropertyList(path: String, reason: String)
  /// The defaults plist holds no dictionary.
  case defaultsPlistNotADictionary(path: String)
  /// The key could not be cut out of the defaults plist (`reason`: the editor's).
  case cannotRemoveDefaultsKey(path: String, key: String, reason: String)
  /// The edited defaults plist could not be written in place.
  case cannotRewriteDefaultsPlist(path: String, SystemError)
  /// The defaults plist could not be read.
  case cannotReadDefaultsPlist(path: String, SystemError)

  /// The line shown after `appdata: error: `.
  public var message: String {
    switch self {
    case .cannotOpenContainer(let container, let error):
      return error.message(path: container)
    case .alreadyRunning(let container):
      return "\(TerminalText.escaped(container)): another appdata migrate is running on this container"
    case .noBundleID(let container):
      return "\(TerminalText.escaped(container)): --defaults-key needs the app's bundle id to find its plist; the container has no metadata plist: give --bundle-id or --defaults-plist"
    case .overlap(let source, let destination):
      return "--from \(source) and --to \(destination) overlap; a folder cannot be moved into itself"
    case .cannotOpen(let path, let role, let error):
      let shown = error.path.isEmpty ? path : error.path
      switch error.errno {
      case .noSuchFileOrDirectory: return "\(shown): no such folder (the \(role))"
      case .tooManySymbolicLinkLevels: return "\(shown): is a symlink; appdata never follows symlinks inside a container"
      case .notDirectory: return "\(shown): not a folder"
      default: return "\(shown): cannot \(error.operation): \(error.reason)"
      }
    case .cannotReadFolder(let path, let error):
      return "\(path): cannot read the folder: \(error.reason)"
    case .destinationNotAFolder(let path, let isSymlink):
      return "\(path): " + (isSymlink ? "is a symlink; appdata never follows symlinks inside a container" : "not a folder")
    case .cannotMergeInto(let path):
      return "\(path): exists and is not a folder; cannot merge into it"
    case .cannotOpenToMeasure(let error):
      return error.description
    case .cannotMeasure(let error):
      return "\(error.path): cannot \(error.operation): \(error.reason)"
    case .cannotMoveOut(let folder):
      return "\(folder): cannot move entries out of it: Permission denied; nothing was changed"
    case .cannotOpenDestination(let path, let error):
      return "\(path): cannot open: \(error.reason); nothing was changed"
    case .cannotCreateInDestination(let path, let error):
      return "\(path): cannot create files there: \(error.reason); nothing was changed"
    case .markerNotKept(let path, let error):
      var message = "\(path): the destination does not accept the backup marker: cannot \(error.action): \(error.reason); nothing was changed"
      if [Errno.notSupported, .notSupportedOnSocket].contains(error.errno) { message += " (use a filesystem with user extended attributes)" }
      return message
    case .cannotWriteJournal(let container, let error):
      return "\(TerminalText.escaped(container)): cannot write the migration journal: \(error.reason)"
    case .cannotReadJournal(let path, let error?):
      return "\(path): cannot read the journal: \(error.reason)"
    case .cannotReadJournal(let path, nil):
      return "\(path): cannot read the journal"
    case .journalNotAFile(let path):
      return "\(path): is not a file; it is not a journal appdata wrote, and was not followed; nothing was changed"
    case .journalNotReadable(let path):
      return "\(path): not a journal this version of appdata can read; nothing was changed; move it away to start over"
    case .journalNotThisContainers(let path):
      return "\(path): was not written by appdata migrate in this container (copied in, extracted from a backup, or planted); it is data, not a plan, and nothing was changed; move it away to start over"
    case .journalLeavesThePlan(let path):
      return "\(path): names a path outside the plan's folders (an absolute path, . or .., or a name with /); it was not followed and nothing was changed; move it away to start over"
    case .cannotOpenJournal(let path, let error):
      return "\(path): cannot open the journal: \(error.reason)"
    case .defaultsPlistNotAPropertyList(let path, let reason):
      return "\(path): not a property list appdata reads: \(reason)"
    case .defaultsPlistNotADictionary(let path):
      return "\(path): not a property list holding a dictionary"
    case .cannotRemoveDefaultsKey(let path, let key, let reason):
      return "\(path): cannot remove \(key): \(reason)"
    case .cannotRewriteDefaultsPlist(let path, let error):
      return "\(path): cannot rewrite the plist: \(error.reason)"
    case .cannotReadDefaultsPlist(let path, let error):
      return "\(path): cannot read the defaults plist: \(error.reason)"
    }
  }

  /// The refusal's cause, for a caller that refuses the run with it.
  public var cause: Refusal.Cause {
    switch self {
    case .cannotOpenContainer(_, let error), .cannotOpen(_, _, let error):
      switch error.errno {
      case .noSuchFileOrDirectory: return .notFound
      case .tooManySymbolicLinkLevels, .notDirectory: return .notAnInput
      default: return .unreadable
      }
    case .alreadyRunning, .noBundleID, .overlap, .destinationNotAFolder, .cannotMergeInto: return .conflict
    case .cannotReadFolder, .cannotOpenToMeasure, .cannotMeasure, .cannotReadJournal, .cannotReadDefaultsPlist: return .unreadable
    case .cannotMoveOut, .cannotOpenDestination, .cannotCreateInDestination, .markerNotKept, .cannotWriteJournal,
         .cannotOpenJournal, .cannotRewriteDefaultsPlist: return .cannotWrite
    case .journalNotAFile, .journalNotReadable, .journalNotThisContainers, .journalLeavesThePlan,
         .defaultsPlistNotAPropertyList, .defaultsPlistNotADictionary, .cannotRemoveDefaultsKey: return .damaged
    }
  }

  /// The failure as a `Refusal` (exit status 2).
  public var refusal: Refusal {
    switch self {
    case .cannotOpenContainer(let container, _), .alreadyRunning(let container), .noBundleID(let container),
         .cannotWriteJournal(let container, _):
      return Refusal(cause, path: container, message: message)
    default:
      return Refusal(cause, path: nil, message: message)
    }
  }
}
