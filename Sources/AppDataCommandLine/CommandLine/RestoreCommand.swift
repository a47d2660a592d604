import AppDataSystem
import AppDataKit
/// `appdata restore SOURCE --simulator DEVICE --app ID` and `appdata restore --undo DEVICE
/// --app ID`: options to `RestoreOptions`, the library's `Restore` call, the report.
struct RestoreCommand: RefusingCommand {
  /// The backup or folder to restore from; nil: `--undo`.
  let source: String?
  let device: String
  let id: String
  var options = RestoreOptions()
  let shown: ReportChoice
  let password: BackupPassword

  init(_ parsed: ParsedArguments) throws(UsageError) {
    let undo = parsed.flag(.undo)
    guard let id = parsed.value(.app), !id.isEmpty else {
      throw UsageError("'appdata restore' needs '--app ID': the app whose container to \(undo ? "put back" : "restore")")
    }
    self.id = id
    if undo {
      guard let device = parsed.value(.simulator) ?? parsed.operands.first, !device.isEmpty,
            parsed.operands.count <= (parsed.value(.simulator) == nil ? 1 : 0) else {
        throw UsageError("'appdata restore --undo' takes the device alone: 'appdata restore --undo DEVICE --app ID'")
      }
      self.device = device
      source = nil
    } else {
      guard let source = parsed.operands.first else { throw UsageError("'appdata restore' needs SOURCE: the device backup to restore from") }
      guard let device = parsed.value(.simulator), !device.isEmpty else {
        throw UsageError("'appdata restore' needs '--simulator DEVICE': the Simulator device's folder or UDID")
      }
      self.source = source
      self.device = device
    }
    options.withExtensions = parsed.flag(.withExtensions)
    options.dryRun = parsed.flag(.dryRun)
    shown = ReportChoice(parsed)
    try options.readBounds(parsed, operand: "SOURCE")
    password = try BackupPassword(parsed)
    options.stopAfter = try parsed.integer(.testStopAfter, minimum: 1)
  }

  func run(io: CommandIO) throws(Refusal) -> ExitCode {
    // Ctrl-C, SIGTERM, SIGHUP: the restore stops at its next file and removes what it wrote (the
    // device is left as it was); then the process ends with 128 + the signal's number.
    try password.runWriting(options, io: io, verb: "Restoring", showsProgress: shown.allowsProgress) { options, passwordSource throws(RestoreFailure) in
      if let source {
        return try restore(source: source, simulator: device, app: id, options: options, password: passwordSource)
      }
      return try undoRestore(simulator: device, app: id, options: options)
    } then: { report, caught throws(Refusal) in
      show(report, caught: caught, io: io)
    }
  }

  /// The report, then an interrupt's line and status, or the entries not written.
  private func show(_ report: RestoreReport, caught: SignalFlag, io: CommandIO) -> ExitCode {
    if let chosen = report.chosenID {
      io.warning("--app '\(TerminalText.escaped(id))' is \(TerminalText.escaped(chosen)), the one installed id that fits it")
    }
    io.writeReport(shown, document: report.jsonDocument, table: report.table)
    // Interrupted after some containers were swapped in (--with-extensions): those stay, the
    // report names the rest, and the run ends with the signal's status.
    if let number = caught.number {
      io.error("\(TerminalText.escaped(device)): interrupted; the containers listed were restored, the others left as they were")
      _ = WorkCounters.reportIfAsked()
      Syscalls.exitNow(128 + number)
    }
    let notWritten = report.problems.filter(\.isError)
    if !notWritten.isEmpty {
      let which = shown.quiet ? ": " + Plural.listed(notWritten.map { TerminalText.escaped(RelativePath.display($0.path)) }, limit: 10) : ""
      io.error("\(TerminalText.escaped(report.source)): \(Plural.counted(notWritten.count, "entry", "entries")) not written\(which) (the rest were restored)")
      return .failure
    }
    return .success
  }
}
