import AppDataSystem
import AppDataCore
/// What `appdata audit` reports for PATH: one container's report, or the reports of a folder of
/// containers (a report of many, with one row per container and every finding named by it).
public struct AuditSet: Sendable {
  /// PATH, absolute.
  public var source: String
  /// Sorted by container path.
  public var reports: [AuditReport]
  /// PATH names a folder of containers: the report of many, however many it holds.
  public var isCollection: Bool
  /// For a device backup: what the backup is (device, iOS version, date, snapshot state).
  public var backupInfo: BackupInfo?
  /// The policy file that applied, as given (`--config FILE`, or `appdata.json` found in the
  /// working folder); nil when none did. Shown in the table's header and in JSON's `policy`.
  public var policySource: String?

  public init(source: String, reports: [AuditReport], isCollection: Bool) {
    self.source = source
    self.reports = reports.sorted { $0.container < $1.container }
    self.isCollection = isCollection || reports.count > 1
  }

  /// The single report, when this is not a report of many.
  var single: AuditReport? { isCollection ? nil : reports.first }

  /// Every container's figures added up.
  public var categories: [Category: CategoryTotals] {
    var sum: [Category: CategoryTotals] = [:]
    for report in reports {
      for (category, totals) in report.categories { sum[category, default: CategoryTotals()].add(totals) }
    }
    return sum
  }

  public var directories: UInt64 { reports.reduce(0) { $0 + $1.directories } }
  /// What the backups carry (in a device backup, everything each domain holds), summed.
  public var backup: CategoryTotals {
    var sum = CategoryTotals()
    for report in reports { sum.add(report.backup) }
    return sum
  }

  /// Whether any container has a finding at or above `threshold`.
  public func fails(at threshold: Severity?) -> Bool { reports.contains { $0.fails(at: threshold) } }

  /// Containers largest backup first, then by name: the table's order.
  var byBackupSize: [AuditReport] {
    reports.sorted { a, b in a.backup.bytes != b.backup.bytes ? a.backup.bytes > b.backup.bytes : a.name < b.name }
  }

  /// Every finding with its container, most severe first, then by container name, then in each
  /// report's own order.
  var findings: [(report: AuditReport, finding: Finding)] {
    var all: [(AuditReport, Finding)] = []
    for report in reports.sorted(by: { $0.name < $1.name }) {
      for finding in report.findings { all.append((report, finding)) }
    }
    return all.enumerated().sorted { a, b in
      a.element.1.severity != b.element.1.severity ? a.element.1.severity > b.element.1.severity : a.offset < b.offset
    }.map(\.element)
  }

  func count(_ severity: Severity, in report: AuditReport) -> Int { report.findings.filter { $0.severity == severity }.count }
}

// MARK: - The table

extension AuditSet {
  /// The table report: a single container's, or one row per container, the findings named by
  /// their container, and the totals.
  public func table(exactBytes: Bool, failOn: Severity?, colors: Bool = false, findingsOnly: Bool = false) -> String {
    if let single {
      return single.table(exactBytes: exactBytes, failOn: failOn, colors: colors, findingsOnly: findingsOnly, policyLine: policyLine)
    }
    func size(_ bytes: UInt64) -> String { exactBytes ? String(bytes) : ByteSize.human(bytes) }
    func paint(_ text: String, _ code: String) -> String { colors ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
    let all = findings
    let findingLines = all.map { item in
      let code = item.finding.severity == .error ? "31" : item.finding.severity == .warning ? "33" : "36"
      return "  " + paint(item.finding.severity.rawValue.padding(7), code) + " " + TerminalText.escaped(item.report.name) + ": "
        + TerminalText.escaped(item.finding.path) + ": " + TerminalText.escaped(item.finding.message) + " [\(item.finding.rule.id)]"
    }
    if findingsOnly { return findingLines.map { $0 + "\n" }.joined() }

    var lines = ["Source: \(TerminalText.escaped(source))", policyLine]
    if let info = backupInfo {
      lines.append("Backup: " + Self.backupLine(info))
    }
    lines.append("")
    // Containers holding nothing but system files (their metadata plist) and no finding: one line.
    let isEmpty = { (report: AuditReport) in
      report.findings.isEmpty && !report.categories.contains { $0.key != .system && $0.value.files > 0 }
    }
    let withFiles = byBackupSize.filter { !isEmpty($0) }
    let empty = byBackupSize.filter(isEmpty)
    if withFiles.isEmpty && empty.isEmpty {
      lines.append("No containers.")
    }
    if !withFiles.isEmpty {
      var rows: [[String]] = [["CONTAINER", "KIND", "FILES", "BACKED UP", "ERRORS", "WARNINGS"]]
      for report in withFiles {
        let files = report.categories.values.reduce(0) { $0 + $1.files }
        rows.append([TerminalText.escaped(report.name), report.kind.rawValue, String(files), size(report.backup.bytes),
                     String(count(.error, in: report)), String(count(.warning, in: report))])
      }
      lines.append(contentsOf: TextTable.render(rows, rightAligned: [2, 3, 4, 5]))
    }
    if !empty.isEmpty {
      let names = Plural.listed(empty.map { TerminalText.escaped($0.name) }.sorted(), limit: Self.namesOnOneLine)
      lines.append(Plural.counted(empty.count, "container") + " with no app files: \(names)")
    }
    lines.append("")
    lines.append("Findings: " + Severity.counted(all.map(\.finding.severity)))
    lines.append(contentsOf: findingLines)
    // With --list: each container's files.
    for report in reports.sorted(by: { $0.name < $1.name }) {
      guard let entries = report.entries, !entries.isEmpty else { continue }
      lines.append("")
      lines.append("Files of \(TerminalText.escaped(report.name)) (\(entries.count)):")
      let sizes = entries.map { size($0.bytes) }
      let width = sizes.map(\.count).max() ?? 0
      for (entry, text) in zip(entries, sizes) {
        lines.append("  " + entry.category.rawValue.padding(9) + "  " + String(repeating: " ", count: width - text.count) + text
                     + "  " + TerminalText.escaped(entry.path))
      }
    }
    lines.append("")
    let totalFiles = categories.values.reduce(0) { $0 + $1.files }
    let totalBytes = categories.values.reduce(0) { $0 + $1.bytes }
    lines.append("Total: \(Plural.counted(reports.count, "container")), \(Plural.counted(totalFiles, "file")), \(size(totalBytes));"
                 + " backup \(Plural.counted(backup.files, "file")), \(size(backup.bytes))")
    lines.append(fails(at: failOn) ? "Result: " + paint("FAIL", "1;31") + " (findings at or above --fail-on \(failOn!.rawValue))"
                 : "Result: " + paint("OK", "32"))
    return lines.joined(separator: "\n") + "\n"
  }
}

extension AuditSet {
  /// How many names a one-line list shows before `… and N more`.
  static let namesOnOneLine = 8

  /// What the table's `Backup:` line says: the device, iOS version, date, snapshot state and
  /// encryption the backup's plists give; when Info.plist gives none of the first three, it says
  /// so (the line is never empty).
  static func backupLine(_ info: BackupInfo) -> String {
    let nonEmpty = { (text: String?) in text.flatMap { $0.isEmpty ? nil : $0 } }
    var parts = [nonEmpty(info.deviceName), nonEmpty(info.productVersion).map { "iOS " + $0 }, nonEmpty(info.date)]
      .compactMap { $0 }.map(TerminalText.escaped)
    if parts.isEmpty { parts.append("Info.plist names no device, iOS version or date") }
    if let snapshot = nonEmpty(info.snapshotState) { parts.append("snapshot " + TerminalText.escaped(snapshot)) }
    if info.isEncrypted { parts.append("encrypted") }
    return parts.joined(separator: ", ")
  }
}

extension AuditSet {
  /// `Policy: FILE`, or what applies without one: the line under `Container:` or `Source:`.
  var policyLine: String {
    guard let policySource else { return "Policy: none (no limits but those given on the command line)" }
    return "Policy: " + TerminalText.escaped(policySource)
  }
}
