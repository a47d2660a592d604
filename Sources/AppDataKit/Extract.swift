import AppDataSystem
import AppDataCore
import AppDataReaders

/// How `extract(backup:app:output:options:password:)` writes.
public struct ExtractOptions: Sendable {
  /// The backup's folder inside BACKUP, by components, when BACKUP holds several (`--root`).
  public var root: [[UInt8]]?
  /// Also the app's groups (`group.ID…`) and plugins (`ID.…`): OUT is a folder of containers.
  public var withExtensions = false
  /// Replace OUT, only when it is an earlier extraction's output or an empty folder.
  public var force = false
  /// Plan and report, write nothing.
  public var dryRun = false
  /// The most key-derivation rounds an encrypted backup's keybag may ask for.
  public var maximumKeyRounds = BackupKeybag.defaultMaximumRounds
  /// A backup inside an archive: the most bytes of names its reader keeps (`--max-name-bytes`).
  public var maximumNameBytes = NameBudget.defaultMaximum
  /// Checked between files and between chunks: true stops the extraction, which then removes
  /// what it wrote and fails with `ExtractFailure.interrupted`.
  public var isInterrupted: @Sendable () -> Bool = { false }
  /// Told the bytes written so far and the bytes to write, from the writing threads.
  public var progress: (@Sendable (UInt64, UInt64) -> Void)?
  /// Testing only (`--test-stop-after N`): SIGKILL at the Nth checkpoint.
  package var stopAfter: Int?

  public init() {}
}

extension ExtractOptions: BackupWritingOptions {}

/// Why an extraction could not run. `message` is the one line a terminal shows, escaped.
public enum ExtractFailure: JobFailure {
  /// BACKUP could not be read (the refusal says why and where).
  case input(Refusal)
  /// BACKUP is not a device backup and holds none.
  case notABackup(path: String)
  /// BACKUP holds several backups and `root` names none of them.
  case severalBackups(path: String, names: [String])
  /// The password of an encrypted backup could not be had (the closure's own failure).
  case password(Refusal)
  /// The extraction refused: no such app, OUT exists, a damaged manifest, a write that failed
  /// (nothing is left at OUT).
  case refused(Refusal)
  /// `isInterrupted` said stop; nothing was written.
  case interrupted(output: String)

  /// The failure as a `Refusal` (exit status 2), for a caller that does not tell causes apart;
  /// `message` is its line.
  public var refusal: Refusal {
    switch self {
    case .input(let refusal), .password(let refusal), .refused(let refusal):
      return refusal
    case .notABackup(let path): return OneDeviceBackup.notABackup(path, "appdata extract reads backups")
    case .severalBackups(let path, let names): return OneDeviceBackup.several(path, names: names, toWhat: "extract from")
    case .interrupted(let output):
      return Refusal(.interrupted, path: output, message: "\(TerminalText.escaped(output)): interrupted; nothing was written")
    }
  }
}

/// Extracts app `id` (with `withExtensions`, its groups and plugins too) from the device backup
/// at `backup` into a new container at `output` (`.xcappdata`: an Xcode package), as
/// `appdata extract` does. The backup is only read. OUT appears whole or not at all: the tree is
/// made in a partial folder of the call's own and renamed into place.
///
/// - `password` is asked only when the backup is encrypted; it may prompt.
/// - `options.progress` and `options.isInterrupted` are called from the writing threads.
/// - Two calls may run at once on different outputs.
public func extract(backup path: String, app id: String, output: String, options: ExtractOptions = ExtractOptions(),
                    password: PasswordSource? = nil) throws(ExtractFailure) -> ExtractReport {
  let backup: BackupSource
  do throws(OneDeviceBackup.Problem) {
    backup = try OneDeviceBackup.at(path, root: options.root, maximumNameBytes: options.maximumNameBytes)
  } catch {
    switch error {
    case .input(let refusal): throw .input(refusal)
    case .none: throw .notABackup(path: path)
    case .several(let names): throw .severalBackups(path: path, names: names)
    }
  }
  var request = BackupExtraction.Request(id: id, output: output, options: options)
  request.withExtensions = options.withExtensions
  request.force = options.force
  do { request.password = try backup.secret(from: password) } catch { throw .password(error) }
  do {
    return try BackupExtraction.run(backup, request: request)
  } catch {
    if options.isInterrupted() { throw .interrupted(output: output) }
    throw .refused(error)
  }
}
