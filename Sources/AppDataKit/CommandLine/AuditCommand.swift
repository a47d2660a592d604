import Dispatch

/// The report formats of `appdata audit`.
public enum AuditFormat: String, CaseIterable, Sendable {
  case table, json, ndjson, github, junit, sarif
}

/// `appdata audit`: options (over the policy file) to `AuditOptions`, the report to each
/// chosen format and destination, findings to the exit status.
struct AuditCommand {
  /// One report to write: a format and where (nil: standard output).
  struct Output {
    var format: AuditFormat
    var file: String?
  }

  let path: String
  let options: AuditOptions
  let outputs: [Output]
  let failOn: Severity?
  let exactBytes: Bool
  let quiet: Bool
  let colorChoice: String
  let policyFile: String?
  let archiveRoot: [[UInt8]]?
  let maximumArchiveBytes: UInt64?

  init(_ parsed: ParsedArguments) throws(UsageError) {
    path = parsed.operands[0]

    // The policy file first; every command-line option then overrides it.
    var policy = AuditPolicy()
    var policyFile: String?
    if !parsed.flag("no-config") {
      if let file = parsed.value("config") {
        policyFile = file
      } else if (try? Syscalls.status(ofPath: AuditPolicy.defaultFileName)) != nil {
        policyFile = AuditPolicy.defaultFileName
      }
    }
    if let policyFile {
      do {
        policy = try AuditPolicy.load(path: policyFile)
      } catch {
        throw UsageError("\(TerminalText.escaped(policyFile)): \(error.message)")
      }
    }
    self.policyFile = policyFile

    var options = AuditOptions()
    options.maxFileSize = try parsed.size("max-file-size") ?? policy.maxFileSize
    options.maxBackupSize = try parsed.size("max-backup-size") ?? policy.maxBackupSize
    options.warnAt = policy.warnAt
    if let text = parsed.value("warn-at") {
      guard let fraction = Double(text), fraction > 0, fraction < 1 else {
        throw UsageError("invalid value '\(TerminalText.escaped(text))' for '--warn-at': expected a fraction between 0 and 1, such as 0.9")
      }
      options.warnAt = fraction
    }
    options.severities = policy.severities
    options.budgets = policy.budgets
    options.ignore = policy.ignore
    if parsed.contains("ignore") {
      options.ignore = []
      for pattern in parsed.allValues("ignore") {
        do {
          options.ignore.append(try Glob(pattern))
        } catch {
          throw UsageError("invalid glob '\(TerminalText.escaped(pattern))' for '--ignore': \(error.message)")
        }
      }
    }
    if let file = parsed.value("baseline") {
      do {
        options.baseline = try Baseline.load(path: file)
      } catch {
        throw UsageError("\(TerminalText.escaped(file)): \(error.message)")
      }
    }
    options.maxGrowth = try parsed.size("max-growth")
    if let text = parsed.value("max-growth-percent") {
      guard let percent = Double(text), percent >= 0, percent.isFinite else {
        throw UsageError("invalid value '\(TerminalText.escaped(text))' for '--max-growth-percent': expected a number of percent, such as 10")
      }
      options.maxGrowthPercent = percent
    }
    if (options.maxGrowth != nil || options.maxGrowthPercent != nil) && options.baseline == nil {
      throw UsageError("'--max-growth' and '--max-growth-percent' need '--baseline FILE' to compare with")
    }
    options.top = try parsed.integer("top") ?? 10
    options.jobs = try parsed.integer("jobs", minimum: 1, maximum: 256) ?? Syscalls.onlineProcessorCount
    for value in parsed.allValues("list") {
      for name in value.split(separator: ",") {
        if name == "all" { options.listedCategories.formUnion(Category.allCases) }
        else if let category = Category(rawValue: String(name)) { options.listedCategories.insert(category) }
      }
    }
    self.options = options
    outputs = try Self.outputs(parsed)
    switch parsed.value("fail-on") ?? "error" {
    case "never": failOn = nil
    case let level: failOn = Severity(rawValue: level)!
    }
    exactBytes = parsed.flag("bytes")
    quiet = parsed.flag("quiet")
    colorChoice = parsed.value("color") ?? "auto"
    if let text = parsed.value("root") {
      let components = RelativePath.components(Array(text.utf8))
      guard !components.contains([0x2E, 0x2E]) else {
        throw UsageError("invalid value '\(TerminalText.escaped(text))' for '--root': expected a folder inside the archive, without '..'")
      }
      archiveRoot = components.filter { $0 != [0x2E] }
    } else {
      archiveRoot = nil
    }
    maximumArchiveBytes = try parsed.size("max-archive-bytes")
  }

  /// Pairs each `--output` with the `--format` (or `--json`) just before it, or, for an
  /// `--output` given first, the first one after it. Formats without a file go to standard
  /// output (one at most); when every format has a file, the table goes there.
  static func outputs(_ parsed: ParsedArguments) throws(UsageError) -> [Output] {
    var outputs: [Output] = []
    var pendingFile: String?  // an --output seen before any --format
    var formatValues = parsed.allValues("format").makeIterator()
    var fileValues = parsed.allValues("output").makeIterator()
    for name in parsed.order {
      switch name {
      case "format", "json":
        let format = name == "json" ? AuditFormat.json : AuditFormat(rawValue: formatValues.next()!)!
        outputs.append(Output(format: format, file: pendingFile))
        pendingFile = nil
      case "output":
        let file = fileValues.next()!
        if let last = outputs.indices.last, outputs[last].file == nil, pendingFile == nil {
          outputs[last].file = file
        } else if pendingFile == nil && outputs.isEmpty {
          pendingFile = file
        } else {
          throw UsageError("'--output \(TerminalText.escaped(file))' has no --format of its own; give one --format before each --output")
        }
      default:
        continue
      }
    }
    if let pendingFile {
      throw UsageError("'--output \(TerminalText.escaped(pendingFile))' needs a --format to write (json, ndjson, github, junit, sarif or table)")
    }
    if outputs.isEmpty { outputs = [Output(format: .table, file: nil)] }
    let toStandardOutput = outputs.filter { $0.file == nil }
    if toStandardOutput.count > 1 {
      throw UsageError("only one format can go to standard output; give --output FILE after the others")
    }
    if toStandardOutput.isEmpty && !outputs.contains(where: { $0.format == .table }) {
      outputs.append(Output(format: .table, file: nil))
    }
    return outputs
  }

  func run(io: CommandIO) throws(UsageError) -> ExitCode {
    let isArchive = try ContainerPath.checkFolderOrArchive(path)
    if !isArchive && (archiveRoot != nil || maximumArchiveBytes != nil) {
      throw UsageError("\(TerminalText.escaped(path)): is a folder; --root and --max-archive-bytes apply to archives")
    }
    var auditor = Auditor(rootPath: path, options: options)
    // NDJSON streams entries as they are classified when it is the only report.
    let streamsNDJSON = outputs.count == 1 && outputs[0].format == .ndjson && !options.listedCategories.isEmpty
    var streamFile: FileDescriptor?
    if streamsNDJSON {
      if let file = outputs[0].file {
        let descriptor = try Self.create(file)
        streamFile = descriptor
        auditor.entrySink = { lines in try? Syscalls.writeAll(descriptor, lines, displayPath: file) }
      } else {
        let write = io.writeOutput
        auditor.entrySink = { lines in write(String(decoding: lines, as: UTF8.self)) }
      }
    }
    let progress = quiet || !io.isErrorTerminal ? nil : WalkProgress()
    auditor.progress = progress
    let display = progress.map { ProgressLine(progress: $0, io: io) }
    display?.start()

    let report: AuditReport
    if isArchive {
      display?.stop()
      var archive = ArchiveAuditor(archivePath: path, options: options)
      archive.root = archiveRoot
      if let maximumArchiveBytes { archive.maximumBytes = maximumArchiveBytes }
      archive.entrySink = auditor.entrySink
      do {
        report = try archive.run()
      } catch {
        streamFile?.close()
        throw UsageError("\(TerminalText.escaped(path)): \(TerminalText.escaped(error.message))")
      }
    } else {
      do {
        report = try auditor.run()
      } catch {
        display?.stop()
        streamFile?.close()
        throw UsageError(TerminalText.escaped(error.description))
      }
      display?.stop()
    }

    for output in outputs {
      let text = render(report, as: output.format, streamed: streamsNDJSON, toTerminal: output.file == nil, io: io)
      if let file = output.file {
        if let streamFile {
          try? Syscalls.writeAll(streamFile, Array(text.utf8), displayPath: file)
          streamFile.close()
        } else {
          let descriptor = try Self.create(file)
          defer { descriptor.close() }
          do {
            try Syscalls.writeAll(descriptor, Array(text.utf8), displayPath: file)
          } catch {
            throw UsageError("\(TerminalText.escaped(file)): cannot write the report: \(error.reason)")
          }
        }
      } else {
        io.writeOutput(text)
      }
      if output.format == .github, let summaryFile = io.environment("GITHUB_STEP_SUMMARY"), !summaryFile.isEmpty {
        do {
          let descriptor = try Syscalls.openForAppending(atPath: summaryFile)
          defer { descriptor.close() }
          try Syscalls.writeAll(descriptor, Array(report.githubStepSummary(failOn: failOn).utf8), displayPath: summaryFile)
        } catch {
          io.warning("\(TerminalText.escaped(summaryFile)): cannot append the job summary: \(error.reason)")
        }
      }
    }
    return report.fails(at: failOn) ? .failure : .success
  }

  private func render(_ report: AuditReport, as format: AuditFormat, streamed: Bool, toTerminal: Bool, io: CommandIO) -> String {
    switch format {
    case .table:
      let colors: Bool
      switch colorChoice {
      case "always": colors = true
      case "never": colors = false
      default:
        colors = toTerminal && io.isOutputTerminal && (io.environment("NO_COLOR") ?? "").isEmpty && io.environment("TERM") != "dumb"
      }
      return report.table(exactBytes: exactBytes, failOn: failOn, colors: colors, findingsOnly: quiet)
    case .json:
      return report.jsonDocument().serialized(pretty: true) + "\n"
    case .ndjson:
      var text = ""
      if !streamed {
        for entry in report.entries ?? [] { text += entry.json(type: "entry").serialized(pretty: false) + "\n" }
      }
      for finding in report.findings { text += finding.json(type: "finding").serialized(pretty: false) + "\n" }
      return text + report.ndjsonSummaryLine().serialized(pretty: false) + "\n"
    case .github:
      return report.githubCommands(hasStepSummary: !(io.environment("GITHUB_STEP_SUMMARY") ?? "").isEmpty)
    case .junit:
      let disabled = Set(options.severities.filter { $0.value == nil }.map(\.key))
      return report.junitXML(failOn: failOn, disabledRules: disabled)
    case .sarif:
      return report.sarifDocument().serialized(pretty: true) + "\n"
    }
  }

  private static func create(_ file: String) throws(UsageError) -> FileDescriptor {
    do {
      return try Syscalls.createOrTruncate(atPath: file)
    } catch {
      throw UsageError("\(TerminalText.escaped(file)): cannot write the report: \(error.reason)")
    }
  }
}

/// Checks for the PATH operand of audit and migrate.
enum ContainerPath {
  /// PATH must be a folder or a regular file (an archive); returns true for an archive.
  static func checkFolderOrArchive(_ path: String) throws(UsageError) -> Bool {
    if path.isEmpty { throw UsageError("the container path is empty") }
    do {
      let status = try Syscalls.status(ofPath: path)
      if status.kind == .regular { return true }
    } catch {
      if error.isNotFound { throw UsageError("\(TerminalText.escaped(path)): no such file or folder") }
    }
    try checkFolder(path)
    return false
  }

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
