import AppDataSystem
import AppDataKit
import Synchronization
/// `appdata extract BACKUP --app ID [-o OUT]`: options to `ExtractOptions`, the library's
/// `extract` call, the report to the chosen format, an interrupt to a clean exit with nothing
/// left behind.
struct ExtractCommand: RefusingCommand {
  let path: String
  let id: String
  let output: String
  var options = ExtractOptions()
  let shown: ReportChoice
  let failOn: String
  let password: BackupPassword

  init(_ parsed: ParsedArguments) throws(UsageError) {
    path = parsed.operands[0]
    guard let id = parsed.value(.app), !id.isEmpty else {
      throw UsageError("'appdata extract' needs '--app ID': the app, app group or plugin to extract")
    }
    self.id = id
    options.withExtensions = parsed.flag(.withExtensions)
    output = try parsed.outputName(or: options.withExtensions ? id : id + ".xcappdata")
    options.force = parsed.flag(.force)
    options.dryRun = parsed.flag(.dryRun)
    shown = ReportChoice(parsed)
    failOn = parsed.value(.failOn) ?? "error"
    try options.readBounds(parsed, operand: "BACKUP")
    password = try BackupPassword(parsed)
    options.stopAfter = try parsed.integer(.testStopAfter, minimum: 1)
  }

  func run(io: CommandIO) throws(Refusal) -> ExitCode {
    // Ctrl-C, SIGTERM, SIGHUP: the extraction stops at its next file or chunk and removes what
    // it wrote; then the process ends with 128 + the signal's number.
    try password.runWriting(options, io: io, verb: "Extracting", showsProgress: shown.allowsProgress) { options, source throws(ExtractFailure) in
      try extract(backup: path, app: id, output: output, options: options, password: source)
    } then: { report, _ throws(Refusal) in
      show(report, io: io)
    }
  }

  /// The report, the entries not written, and the exit status `--fail-on` gives.
  private func show(_ report: ExtractReport, io: CommandIO) -> ExitCode {
    if let chosen = report.chosenID {
      io.warning("--app '\(TerminalText.escaped(id))' is \(TerminalText.escaped(chosen)), the one id that fits it")
    }
    io.writeReport(shown, document: report.jsonDocument, table: report.table)
    let notWritten = report.problems.filter(\.isError)
    let fails = report.fails(at: failOn)
    if !notWritten.isEmpty {
      // Which, too, where no table or JSON said it (-q): an entry by its path, a domain not
      // written at all (its finding has no path) by its name.
      let which = shown.quiet ? ": " + Plural.listed(notWritten.map { problem in
        TerminalText.escaped(problem.path.isEmpty ? problem.domain : RelativePath.display(problem.path))
      }, limit: 10) : ""
      let domains = notWritten.count(where: { $0.path.isEmpty })
      let counted = [notWritten.count > domains ? Plural.counted(notWritten.count - domains, "entry", "entries") : nil,
                     domains > 0 ? Plural.counted(domains, "domain") : nil].compactMap { $0 }.joined(separator: " and ")
      let line = "\(TerminalText.escaped(path)): \(counted) not written\(which) (the rest are in \(TerminalText.escaped(output)))"
      if fails { io.error(line) } else { io.warning(line) }
    }
    return fails ? .failure : .success
  }
}

/// `Extracting: 12.0 MiB of 1.0 GiB` on standard error, at most five times a second.
final class ExtractProgress: Sendable {
  private let io: CommandIO
  private let last = Atomic<UInt64>(0)
  /// `Extracting`, or `Restoring` (restore writes with extract's writer).
  private let verb: String

  init(io: CommandIO, verb: String = "Extracting") {
    self.io = io
    self.verb = verb
  }

  func show(_ done: UInt64, _ total: UInt64) {
    let now = Syscalls.monotonicNanoseconds()
    let before = last.load(ordering: .relaxed)
    guard now &- before >= 200_000_000, last.compareExchange(expected: before, desired: now, ordering: .relaxed).exchanged else { return }
    io.writeError("\r\u{1B}[2K\(verb): \(ByteSize.human(done)) of \(ByteSize.human(total))")
  }
}
