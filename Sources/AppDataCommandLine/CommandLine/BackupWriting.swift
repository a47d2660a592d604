import AppDataSystem
import AppDataKit

extension BackupWritingOptions {
  /// `--max-key-rounds`, `--max-name-bytes` and `--root` (a backup's folder inside `operand`,
  /// as help names it), as extract and restore read them.
  mutating func readBounds(_ parsed: ParsedArguments, operand: String) throws(UsageError) {
    maximumKeyRounds = try parsed.integer(.maxKeyRounds, minimum: 1).map { UInt64($0) } ?? BackupKeybag.defaultMaximumRounds
    if let maximumNameBytes = try parsed.size(.maxNameBytes) { self.maximumNameBytes = maximumNameBytes }
    root = try parsed.root(inside: "a backup's folder inside \(operand)")
  }
}


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
