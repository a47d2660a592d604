import AppDataSystem
import AppDataKit
import Synchronization

/// One report `appdata audit` writes: a format and where (nil: standard output); and what the
/// command needs to write them: which `--output` goes with which `--format`, colours, the
/// hidden files an interrupt removes.
struct AuditOutput {
  var format: AuditFormat
  var file: String?

  /// Pairs each `--output` with the `--format` (or `--json`) just before it, or, for an
  /// `--output` given first, the first one after it. Formats without a file go to standard
  /// output (one at most); when every format has a file, the table goes there.
  static func outputs(_ parsed: ParsedArguments) throws(UsageError) -> [AuditOutput] {
    var outputs: [AuditOutput] = []
    var pendingFile: String?  // an --output seen before any --format
    var formatValues = parsed.allValues(.format).makeIterator()
    var fileValues = parsed.allValues(.output).makeIterator()
    for name in parsed.order {
      switch name {
      case .format, .json:
        // The parser checked the value against the choices; each --format has its value.
        guard let format = name == .json ? AuditFormat.json : formatValues.next().flatMap(AuditFormat.init(rawValue:)) else { continue }
        outputs.append(AuditOutput(format: format, file: pendingFile))
        pendingFile = nil
      case .output:
        guard let file = fileValues.next() else { continue }
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
      throw UsageError("'--output \(TerminalText.escaped(pendingFile))' needs a --format to write (json, ndjson, github, junit, sarif, html or table)")
    }
    if outputs.isEmpty { outputs = [AuditOutput(format: .table, file: nil)] }
    let toStandardOutput = outputs.filter { $0.file == nil }
    if toStandardOutput.count > 1 {
      throw UsageError("only one format can go to standard output; give --output FILE after the others")
    }
    if toStandardOutput.isEmpty && !outputs.contains(where: { $0.format == .table }) {
      outputs.append(AuditOutput(format: .table, file: nil))
    }
    return outputs
  }

  /// Each report in its format to its file (complete or not at all: a hidden file beside it,
  /// renamed over it once all is written; a streamed NDJSON report's file was opened before the
  /// audit) or to standard output; with `--format github`, the job summary too.
  static func write(_ outputs: [AuditOutput], everything: AuditSet, reports: AuditSet, style: RenderStyle, colorChoice: String,
                    streamFile: ReplacingFile?, io: CommandIO) throws(Refusal) {
    var style = style
    for output in outputs {
      let set = output.format == .html ? everything : reports
      style.colors = output.format == .table && usesColors(colorChoice, toTerminal: output.file == nil, io: io)
      style.width = output.file == nil ? io.outputWidth : nil
      if let file = output.file {
        let replacing: ReplacingFile
        if let streamFile { replacing = streamFile } else { replacing = try create(file) }
        set.render(format: output.format, style: style) { replacing.write($0) }
        do { try replacing.commit() } catch {
          throw Refusal(.cannotWrite, path: file, "cannot write the report: \(error.reason); it was left as it was")
        }
      } else {
        set.render(format: output.format, style: style) { chunk in
          if let write = io.writeOutputBytes { write(chunk) } else { io.writeOutput(String(decoding: chunk, as: UTF8.self)) }
        }
      }
      if output.format == .github, let summaryFile = io.environment("GITHUB_STEP_SUMMARY"), !summaryFile.isEmpty {
        appendSummary(reports.githubStepSummary(failOn: style.failOn), to: summaryFile, io: io)
      }
    }
  }

  /// SARIF's anchors: the checkout (`--sarif-root`, else GITHUB_WORKSPACE), and the policy file
  /// with the rules whose limit it set (those the command line did not).
  static func sarifAnchors(root: String?, policyFile: String?, overrides: AuditConfiguration.Overrides, io: CommandIO) -> SARIFAnchors {
    var anchors = SARIFAnchors()
    if let root = root ?? io.environment("GITHUB_WORKSPACE"), !root.isEmpty {
      anchors.root = Syscalls.absolutePath(root)
    }
    if let policyFile {
      anchors.policyFile = Syscalls.absolutePath(policyFile)
      var rules: Set<String> = [AuditRule.budgetExceeded.id, AuditRule.budgetNearLimit.id]
      if overrides.maxBackupSize == nil { rules.formUnion([AuditRule.backupTooLarge.id, AuditRule.backupNearLimit.id]) }
      if overrides.maxGrowth == nil && overrides.maxGrowthPercent == nil { rules.insert(AuditRule.backupGrew.id) }
      anchors.policyRules = rules
    }
    return anchors
  }

  /// Whether the terminal's locale is UTF-8 (LC_ALL, else LC_CTYPE, else LANG names UTF-8).
  static func localeIsUTF8(_ io: CommandIO) -> Bool {
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"].lazy.compactMap { io.environment($0) }.first { !$0.isEmpty } ?? ""
    let lowered = locale.lowercased()
    return lowered.contains("utf-8") || lowered.contains("utf8")
  }

  /// `--color`: always, never, or (auto) on a terminal that has not asked for none.
  static func usesColors(_ choice: String, toTerminal: Bool, io: CommandIO) -> Bool {
    switch choice {
    case "always": return true
    case "never": return false
    default: return toTerminal && io.isOutputTerminal && (io.environment("NO_COLOR") ?? "").isEmpty && io.environment("TERM") != "dumb"
    }
  }

  /// Appends the GitHub job summary; a failure is a warning (the report itself was written).
  static func appendSummary(_ text: String, to summaryFile: String, io: CommandIO) {
    do {
      let summary = OwnedDescriptor(owning: try Syscalls.openForAppending(atPath: summaryFile))
      try Syscalls.writeAll(summary.descriptor, Array(text.utf8), displayPath: summaryFile)
    } catch {
      io.warning("\(TerminalText.escaped(summaryFile)): cannot append the job summary: \(error.reason)")
    }
  }

  /// The report files being written, whose hidden files an interrupt removes.
  static let openReports = OpenReports()

  /// The report files of a run, for the signal handler.
  final class OpenReports: Sendable {
    private let files = Mutex<[ReplacingFile]>([])
    func add(_ file: ReplacingFile) { files.withLock { $0.append(file) } }
    func removeHiddenFiles() { for file in files.withLock({ $0 }) { file.removeHiddenFile() } }
  }

  /// A report file written to a hidden file beside it and renamed into place by `commit`.
  static func create(_ file: String) throws(Refusal) -> ReplacingFile {
    do {
      let replacing = try ReplacingFile(path: file)
      openReports.add(replacing)
      return replacing
    } catch {
      throw Refusal(.cannotWrite, path: file, ReplacingFile.problem(error, shown: TerminalText.escaped))
    }
  }
}
