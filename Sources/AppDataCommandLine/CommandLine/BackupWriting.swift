import AppDataSystem
import AppDataKit

/// The options of a job that writes a backup's data out (`ExtractOptions`, `RestoreOptions`):
/// the bounds on reading the backup, what it asks to know whether to stop, and what it tells
/// its bytes written to.
protocol BackupWritingOptions {
  var maximumKeyRounds: UInt64 { get set }
  var maximumNameBytes: UInt64 { get set }
  var root: [[UInt8]]? { get set }
  var isInterrupted: @Sendable () -> Bool { get set }
  var progress: (@Sendable (UInt64, UInt64) -> Void)? { get set }
}

extension BackupWritingOptions {
  /// `--max-key-rounds`, `--max-name-bytes` and `--root` (a backup's folder inside `operand`,
  /// as help names it), as extract and restore read them.
  mutating func readBounds(_ parsed: ParsedArguments, operand: String) throws(UsageError) {
    maximumKeyRounds = try parsed.integer(.maxKeyRounds, minimum: 1).map { UInt64($0) } ?? BackupKeybag.defaultMaximumRounds
    if let maximumNameBytes = try parsed.size(.maxNameBytes) { self.maximumNameBytes = maximumNameBytes }
    root = try parsed.root(inside: "a backup's folder inside \(operand)")
  }
}

extension ExtractOptions: BackupWritingOptions {}
extension RestoreOptions: BackupWritingOptions {}

extension BackupPassword {
  /// Extract's and restore's run of the library's call, with this password. Ctrl-C, SIGTERM and
  /// SIGHUP set a flag the job checks (it stops at its next file or chunk and removes what it
  /// wrote); on a terminal, when `showsProgress`, the progress line (`verb: 12.0 MiB of 1.0
  /// GiB`); the password is retried as `retrying` does; a failure ends as `ending` says; the
  /// progress line is erased after. `finish` shows the report while the signals are still
  /// caught (restore reads the flag there).
  func runWriting<Options: BackupWritingOptions, Report, Failure: CommandFailure>(
    _ options: Options, io: CommandIO, verb: String, showsProgress: Bool,
    _ job: (Options, @escaping PasswordSource) throws(Failure) -> Report,
    then finish: (Report, SignalFlag) throws(Refusal) -> ExitCode
  ) throws(Refusal) -> ExitCode {
    let caught = SignalFlag()
    let registration = SignalCatcher.shared.register { caught.set($0) }
    defer { registration.cancel() }
    var options = options
    options.isInterrupted = { caught.number != nil }
    let showing = io.isErrorTerminal && showsProgress
    if showing {
      let progress = ExtractProgress(io: io, verb: verb)
      options.progress = { done, total in progress.show(done, total) }
    }
    let report: Report
    do {
      report = try retrying(io: io, caught: caught) { source throws(Failure) in try job(options, source) }
    } catch {
      throw BackupPassword.ending(error, caught: caught, io: io, erasing: showing)
    }
    if showing { io.writeError("\r\u{1B}[2K") }
    return try finish(report, caught)
  }
}

extension CommandIO {
  /// A command's report on standard output: its JSON document, or, unless `quiet`, its table
  /// fitted to the output's width (extract, restore, migrate).
  func writeReport(json: Bool, quiet: Bool, document: () -> JSONValue, table: () -> String) {
    if json {
      writeOutput(document().serialized(pretty: true) + "\n")
    } else if !quiet {
      writeOutput(TextTable.wrapped(TextTable.$width.withValue(outputWidth) { table() }, width: outputWidth))
    }
  }
}
