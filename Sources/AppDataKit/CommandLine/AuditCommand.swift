import Dispatch

/// `appdata audit`: options to `AuditOptions`, the report to the chosen format,
/// findings to the exit status.
struct AuditCommand {
  enum Format: String { case table, json, ndjson }

  let path: String
  let options: AuditOptions
  let format: Format
  let failOn: Severity?
  let exactBytes: Bool
  let quiet: Bool

  init(_ parsed: ParsedArguments) throws(UsageError) {
    path = parsed.operands[0]
    var options = AuditOptions()
    options.maxFileSize = try parsed.size("max-file-size")
    options.maxBackupSize = try parsed.size("max-backup-size")
    options.top = try parsed.integer("top") ?? 10
    options.jobs = try parsed.integer("jobs", minimum: 1, maximum: 256) ?? Syscalls.onlineProcessorCount
    for value in parsed.allValues("list") {
      for name in value.split(separator: ",") {
        if name == "all" { options.listedCategories.formUnion(Category.allCases) }
        else if let category = Category(rawValue: String(name)) { options.listedCategories.insert(category) }
      }
    }
    self.options = options

    // --json is short for --format json; whichever comes last wins.
    let lastFormatOption = parsed.order.last { $0 == "format" || $0 == "json" }
    if lastFormatOption == "json" && parsed.flag("json") {
      format = .json
    } else {
      format = Format(rawValue: parsed.value("format") ?? "table")!
    }
    switch parsed.value("fail-on") ?? "error" {
    case "never": failOn = nil
    case let level: failOn = Severity(rawValue: level)!
    }
    exactBytes = parsed.flag("bytes")
    quiet = parsed.flag("quiet")
  }

  func run(io: CommandIO) throws(UsageError) -> ExitCode {
    try ContainerPath.checkFolder(path)
    var auditor = Auditor(rootPath: path, options: options)
    if format == .ndjson && !options.listedCategories.isEmpty {
      let write = io.writeOutput
      auditor.entrySink = { lines in write(String(decoding: lines, as: UTF8.self)) }
    }
    let progress = quiet || !io.isErrorTerminal ? nil : WalkProgress()
    auditor.progress = progress
    let display = progress.map { ProgressLine(progress: $0, io: io) }
    display?.start()

    let report: AuditReport
    do {
      report = try auditor.run()
    } catch {
      display?.stop()
      throw UsageError(error.description)
    }
    display?.stop()

    switch format {
    case .table:
      io.writeOutput(report.table(exactBytes: exactBytes, failOn: failOn))
    case .json:
      io.writeOutput(report.jsonDocument().serialized(pretty: true) + "\n")
    case .ndjson:
      for finding in report.findings { io.writeOutput(finding.json(type: "finding").serialized(pretty: false) + "\n") }
      io.writeOutput(report.ndjsonSummaryLine().serialized(pretty: false) + "\n")
    }
    return report.fails(at: failOn) ? .failure : .success
  }
}

/// Checks for the PATH operand of audit and migrate.
enum ContainerPath {
  /// PATH must exist and be a folder (a symlink to a folder is accepted for the root).
  static func checkFolder(_ path: String) throws(UsageError) {
    if path.isEmpty { throw UsageError("the container path is empty") }
    do {
      var status = try Syscalls.status(ofPath: path)
      if status.kind == .symbolicLink {
        let descriptor = try Syscalls.openDirectory(atPath: path)
        status = try Syscalls.status(of: descriptor, displayPath: path)
        descriptor.close()
      }
      guard status.isDirectory else {
        throw UsageError("\(TerminalText.escaped(path)): not a folder; give the container root, the folder holding Documents, Library and tmp")
      }
    } catch let error as SystemError {
      if error.isNotFound { throw UsageError("\(TerminalText.escaped(path)): no such file or folder") }
      throw UsageError(TerminalText.escaped(error.description))
    } catch let error as UsageError {
      throw error
    } catch {
      throw UsageError(String(describing: error))
    }
  }
}

/// One line of stderr, refreshed while a long walk runs: entries and bytes so far.
/// Shown only on a terminal, only after half a second, and erased at the end.
final class ProgressLine: @unchecked Sendable {
  private let progress: WalkProgress
  private let io: CommandIO
  private let queue = DispatchQueue(label: "appdata.progress")
  private let timer: DispatchSourceTimer
  private var shown = false

  init(progress: WalkProgress, io: CommandIO) {
    self.progress = progress
    self.io = io
    timer = DispatchSource.makeTimerSource(queue: queue)
  }

  /// Half a second, so quick audits print nothing; `APPDATA_PROGRESS_DELAY_MS` lets tests shorten it.
  private static let delay = Int(Syscalls.environment("APPDATA_PROGRESS_DELAY_MS") ?? "") ?? 500

  func start() {
    timer.schedule(deadline: .now() + .milliseconds(Self.delay), repeating: .milliseconds(200))
    timer.setEventHandler { [self] in
      let (entries, bytes) = progress.snapshot
      shown = true
      io.writeError("\r\u{1B}[2KScanning: \(entries) entries, \(ByteSize.human(bytes))")
    }
    timer.resume()
  }

  func stop() {
    timer.cancel()
    // On the timer's queue: after any handler in flight, erase the line if one was drawn.
    queue.sync { if shown { io.writeError("\r\u{1B}[2K") } }
  }
}
