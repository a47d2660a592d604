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
      let descriptor = try Syscalls.openForAppending(atPath: summaryFile)
      defer { descriptor.close() }
      try Syscalls.writeAll(descriptor, Array(text.utf8), displayPath: summaryFile)
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
      throw Refusal(.cannotWrite, path: file, ReplacingFile.problem(error))
    }
  }
}
