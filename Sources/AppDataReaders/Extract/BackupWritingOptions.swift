import AppDataSystem
import AppDataCore

/// What the options of the two jobs that write a backup's data out share (`ExtractOptions`,
/// `RestoreOptions`): the bounds on reading the backup, what they ask to know whether to stop,
/// and what they tell the bytes written to. The command line reads the bounds of both with one
/// function; an extraction request takes its running options from either.
package protocol BackupWritingOptions {
  /// The backup's folder inside the path given, by components, when it holds several (`--root`).
  var root: [[UInt8]]? { get set }
  var dryRun: Bool { get set }
  var maximumKeyRounds: UInt64 { get set }
  var maximumNameBytes: UInt64 { get set }
  var isInterrupted: @Sendable () -> Bool { get set }
  var progress: (@Sendable (UInt64, UInt64) -> Void)? { get set }
  /// Testing only (`--test-stop-after N`): SIGKILL at the Nth checkpoint.
  var stopAfter: Int? { get set }
}

extension RestoreOptions: BackupWritingOptions {}

extension BackupExtraction.Request {
  /// A request for `id` into `output`, run as `options` say: a dry run or not, the keybag's
  /// bound, the interrupt flag, the progress line and the test's stop.
  package init(id: String, output: String, options: some BackupWritingOptions) {
    self.init(id: id, output: output)
    dryRun = options.dryRun
    maximumKeyRounds = options.maximumKeyRounds
    isInterrupted = options.isInterrupted
    progress = options.progress
    stopAfter = options.stopAfter
  }
}
