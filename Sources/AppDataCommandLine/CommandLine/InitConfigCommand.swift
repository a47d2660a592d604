import AppDataSystem
import AppDataKit
/// `appdata init-config`: a starting policy file from the container's current figures.
struct InitConfigCommand: RefusingCommand {
  let path: String
  let output: String
  let headroom: Int
  let force: Bool
  let quiet: Bool

  init(_ parsed: ParsedArguments) throws(UsageError) {
    path = parsed.operands[0]
    output = parsed.value(.output) ?? AuditPolicy.defaultFileName
    headroom = try parsed.integer(.headroom, minimum: 0, maximum: 10_000) ?? 20
    force = parsed.flag(.force)
    quiet = parsed.flag(.quiet)
  }

  func run(io: CommandIO) throws(Refusal) -> ExitCode {
    let source = try InputResolver.resolve(path)
    if !force, (try? Syscalls.status(ofPath: output)) != nil {
      throw Refusal(.conflict, path: output, "already exists; give --force to replace it, or --output FILE")
    }
    let reports = try source.audit(AuditRequest(options: { _ in AuditOptions() })).reports
    // A folder of containers: the top level allows the largest container's figures, and each
    // container with an id gets its own limits.
    var report = reports.max { $0.backup.bytes < $1.backup.bytes } ?? AuditReport(
      container: source.source, categories: [:], directories: 0, maxFileSize: nil, maxBackupSize: nil, findings: [], largest: [], entries: nil)
    report.largest = [reports.flatMap(\.largest).max { $0.bytes < $1.bytes }].compactMap { $0 }
    var document = Self.policy(for: report, headroom: headroom)
    if source.isCollection, case .object(var members) = document {
      var containers: [JSONKey: JSONValue] = [:]
      // A container holding nothing backed up gets no limits of its own (a 1 KiB budget would
      // fail it at its first file); the top level's apply to it.
      for item in reports where item.backup.bytes > 0 {
        guard let id = item.id else { continue }
        containers[id] = .object([
          "maxFileSize": .string(ByteSize.written(Self.withHeadroom(item.largest.first?.bytes ?? 0, headroom))),
          "maxBackupSize": .string(ByteSize.written(Self.withHeadroom(item.backup.bytes, headroom))),
        ])
      }
      members["containers"] = .object(containers)
      document = .object(members)
    }
    return try write(document, io: io, saying: "Wrote \(TerminalText.escaped(output)): maxBackupSize \(ByteSize.written(Self.withHeadroom(Self.carried(report), headroom))), "
                      + "maxFileSize \(ByteSize.written(Self.withHeadroom(report.largest.first?.bytes ?? 0, headroom))) (current figures + \(headroom)%)"
                      + (report.platform.policyNote.map { ", " + $0 } ?? "") + "\n")
  }

  /// Writes the policy file, complete or not at all (a hidden file beside it, renamed over it
  /// once written), then, unless quiet, `line` and, for the default name, that every later
  /// audit in this folder reads it (issue 41).
  private func write(_ document: JSONValue, io: CommandIO, saying line: @autoclosure () -> String) throws(Refusal) -> ExitCode {
    let text = document.serialized(pretty: true) + "\n"
    do {
      let file = try ReplacingFile(path: output)
      file.write(Array(text.utf8))
      try file.commit()
    } catch {
      throw Refusal(.cannotWrite, path: output, "cannot write: \(error.reason); it was left as it was")
    }
    if quiet { return .success }
    io.writeOutput(line())
    if output == AuditPolicy.defaultFileName {
      io.writeOutput("Every 'appdata audit' run in this folder now applies it, and names it on its report's Policy line ('--no-config' to not).\n")
    }
    return .success
  }

  /// Every key of the policy file, limits from `report`: maxBackupSize from the most a
  /// destination carries (iOS's one: the backup; Android's: the app's own limit on each, never
  /// Android's quota), the rules and the members its platform lists.
  static func policy(for report: AuditReport, headroom: Int) -> JSONValue {
    var rules: [JSONKey: JSONValue] = [:]
    for rule in report.platform.policyRules { rules[rule.id] = .string(rule.severity.rawValue) }
    var members: [JSONKey: JSONValue] = [
      "maxFileSize": .string(ByteSize.written(withHeadroom(report.largest.first?.bytes ?? 0, headroom))),
      "maxBackupSize": .string(ByteSize.written(withHeadroom(carried(report), headroom))),
      "warnAt": .double(0.9),
      "rules": .object(rules),
      "ignore": .array([]),
      "budgets": .array([]),
    ]
    members.merge(report.platform.policyMembers) { _, new in new }
    return .object(members)
  }

  /// The most bytes one of the report's destinations carries.
  static func carried(_ report: AuditReport) -> UInt64 { report.destinations.map(\.bytes).max() ?? 0 }

  /// `bytes` plus `percent`, rounded up to a whole KiB (and at least 1 KiB).
  static func withHeadroom(_ bytes: UInt64, _ percent: Int) -> UInt64 {
    let raised = Double(bytes) * (1 + Double(percent) / 100)
    let kib = max(1, UInt64((raised / 1024).rounded(.up)))
    return kib * 1024
  }
}
