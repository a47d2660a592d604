import AppDataSystem
import AppDataCore
/// What `appdata audit` reports for PATH: one container's report, or the reports of a folder of
/// containers (a report of many, with one row per container and every finding named by it), of
/// a folder of device backups (a row per backup, then its containers), or of several PATHs.
public struct AuditSet: Sendable {
  /// PATH, absolute (the working folder when several PATHs were given: see `sources`).
  public var source: String
  /// Several PATH operands, absolute, in the order given; empty for one.
  public var sources: [String] = []
  /// Every container, sorted by container path (a backup's are named `BACKUP//DOMAIN`).
  public var reports: [AuditReport]
  /// PATH names a folder of containers: the report of many, however many it holds.
  public var isCollection: Bool
  /// For a device backup: what the backup is (device, iOS version, date, snapshot state).
  package var backupInfo: BackupInfo?
  /// For a folder of backups (or several PATHs holding backups): each backup, read or not.
  package var backups: [BackupAudit] = []
  /// The policy file that applied, as given (`--config FILE`, or `appdata.json` found in the
  /// working folder); nil when none did. Shown in the table's header and in JSON's `policy`.
  public var policySource: String?
  /// With `--baseline` on a report of many: the baseline's name and its containers' ids, so
  /// that the containers new since it, and those gone, are named.
  public var baselineIDs: (file: String, ids: [String])?
  /// With `--baseline` on a report of many: each baseline container's backed-up bytes, by id
  /// (what the table's growth section shows for a container then, and for one now gone).
  public var baselineBytes: [String: UInt64] = [:]
  /// One line each about how PATH was read that the user should know (an input named twice,
  /// read once); `appdata audit` shows them as warnings.
  public var notices: [String] = []

  /// The ids of the containers new since the baseline and of those no longer there, each
  /// sorted by bytes; nil without a baseline of many.
  var baselineChanges: (file: String, new: [String], removed: [String])? {
    guard let baselineIDs, isCollection || !backups.isEmpty else { return nil }
    let before = Set(baselineIDs.ids.map { JSONKey($0) })
    let now = Set(reports.compactMap(\.id).map { JSONKey($0) })
    return (baselineIDs.file, now.subtracting(before).map(\.string).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) },
            before.subtracting(now).map(\.string).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
  }

  public init(source: String, reports: [AuditReport], isCollection: Bool) {
    self.source = source
    self.reports = reports.sorted { $0.container.utf8.lexicographicallyPrecedes($1.container.utf8) }
    self.isCollection = isCollection || reports.count > 1
  }

  /// The single report, when this is not a report of many.
  var single: AuditReport? { isCollection || !backups.isEmpty ? nil : reports.first }

  /// Which of `reports` are in which of `backups`, found in one pass over each: everything a
  /// report of many says per backup goes through it, so the report is linear in backups and
  /// containers (issue 31: 10,000 backups took 46 s when each backup scanned every container).
  struct Grouping {
    /// For each backup, the indices in `reports` of its containers, in `reports`' order.
    var containers: [[Int]]
    /// For each report, the index in `backups` of the backup it was read from; nil for a
    /// container beside the backups (or of another PATH).
    var backup: [Int?]
    /// The indices of the containers in no backup.
    var loose: [Int]
  }

  /// Built once per report written; backups are told apart by their path's bytes.
  func grouping() -> Grouping {
    var byPath: [[UInt8]: Int] = [:]
    for (index, backup) in backups.enumerated() where byPath[Array(backup.path.utf8)] == nil { byPath[Array(backup.path.utf8)] = index }
    var grouping = Grouping(containers: Array(repeating: [], count: backups.count), backup: Array(repeating: nil, count: reports.count), loose: [])
    for (index, report) in reports.enumerated() {
      if let path = report.backupPath, let backup = byPath[Array(path.utf8)] {
        grouping.containers[backup].append(index)
        grouping.backup[index] = backup
      } else {
        grouping.loose.append(index)
      }
    }
    return grouping
  }

  /// The containers of one backup of `backups`.
  package func reports(of backup: BackupAudit) -> [AuditReport] {
    reports.filter { $0.backupPath.map { Array($0.utf8) == Array(backup.path.utf8) } ?? false }
  }

  /// The containers that are in none of `backups`.
  var looseReports: [AuditReport] { grouping().loose.map { reports[$0] } }

  /// Some containers' figures added up: the whole report's, or one backup's.
  struct Sums {
    var categories: [Category: CategoryTotals] = [:]
    /// What the backups carry (in a device backup, everything each domain holds).
    var backup = CategoryTotals()
    var directories: UInt64 = 0
  }

  static func sums(of reports: [AuditReport]) -> Sums { sums(of: reports.indices, in: reports) }

  /// The figures of the reports at `indices` added up, without copying a report.
  static func sums(of indices: some Sequence<Int>, in reports: [AuditReport]) -> Sums {
    var sums = Sums()
    for index in indices {
      for (category, totals) in reports[index].categories { sums.categories[category, default: CategoryTotals()].add(totals) }
      sums.backup.add(reports[index].backup)
      sums.directories = sums.directories.saturatingSum(reports[index].directories)
    }
    return sums
  }

  /// Every container's figures added up.
  public var categories: [Category: CategoryTotals] { Self.sums(of: reports).categories }
  public var directories: UInt64 { Self.sums(of: reports).directories }
  /// What the backups carry (in a device backup, everything each domain holds), summed.
  public var backup: CategoryTotals { Self.sums(of: reports).backup }

  /// Whether any container, or any backup that was not read, has a finding at or above `threshold`.
  public func fails(at threshold: Severity?) -> Bool {
    guard let threshold else { return false }
    return reports.contains { $0.fails(at: threshold) } || backups.contains { $0.finding.map { $0.severity >= threshold } ?? false }
  }

  /// Containers largest backup first, then by name: the table's order.
  var byBackupSize: [AuditReport] { Self.byBackupSize(reports) }

  static func byBackupSize(_ reports: [AuditReport]) -> [AuditReport] {
    reports.sorted { a, b in a.backup.bytes != b.backup.bytes ? a.backup.bytes > b.backup.bytes : a.name.utf8.lexicographicallyPrecedes(b.name.utf8) }
  }

  /// What a report of many calls each container: its name, told apart by where it is when two
  /// share it (the same app in two backups, two copies of one package).
  var labels: [JSONKey: String] { labels(grouping()) }

  func labels(_ grouping: Grouping) -> [JSONKey: String] {
    var count: [JSONKey: Int] = [:]
    for report in reports { count[JSONKey(report.name), default: 0] += 1 }
    var labels: [JSONKey: String] = [:]
    for (index, report) in reports.enumerated() {
      guard count[JSONKey(report.name), default: 0] > 1 else {
        labels[report.container] = report.name
        continue
      }
      if let backup = grouping.backup[index] {
        labels[report.container] = report.name + " (backup " + backups[backup].udid + ")"
      } else {
        labels[report.container] = report.name + " (" + report.container + ")"
      }
    }
    return labels
  }

  /// Every finding with the name of its container (or backup), most severe first, then by that
  /// name, then in each report's own order.
  var findings: [(name: String, finding: Finding)] { findings(labels: labels) }

  func findings(labels: [JSONKey: String]) -> [(name: String, finding: Finding)] {
    var all: [(String, Finding)] = []
    for backup in backups {
      if let finding = backup.finding { all.append(("backup " + backup.udid, finding)) }
    }
    for report in reports {
      for finding in report.findings { all.append((labels[report.container] ?? report.name, finding)) }
    }
    return all.enumerated().sorted { a, b in
      if a.element.1.severity != b.element.1.severity { return a.element.1.severity > b.element.1.severity }
      if a.element.0 != b.element.0 { return a.element.0 < b.element.0 }
      return a.offset < b.offset
    }.map(\.element)
  }

  func count(_ severity: Severity, in report: AuditReport) -> Int { report.findings.filter { $0.severity == severity }.count }
}

// MARK: - The table

extension AuditSet {
  /// The table report: a single container's, or one row per container, the findings named by
  /// their container, and the totals.
  /// `unicode`: the terminal's locale is UTF-8 (the history's sparklines use block characters).
  public func table(exactBytes: Bool, failOn: Severity?, colors: Bool = false, findingsOnly: Bool = false, unicode: Bool = true,
                    top: Int = 10) -> String {
    if let single {
      return single.table(exactBytes: exactBytes, failOn: failOn, colors: colors, findingsOnly: findingsOnly, policyLine: policyLine, top: top)
    }
    func size(_ bytes: UInt64) -> String { exactBytes ? String(bytes) : ByteSize.human(bytes) }
    func paint(_ text: String, _ code: String) -> String { colors ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
    let grouping = grouping()
    let labels = labels(grouping)
    let all = findings(labels: labels)
    let findingLines = all.map { item in
      let code = item.finding.severity == .error ? "31" : item.finding.severity == .warning ? "33" : "36"
      // The container's own findings are about it: its name alone.
      let subject = TerminalText.escaped(item.name)
        + (item.finding.path == Array(".".utf8) ? "" : ": " + TerminalText.escaped(item.finding.path))
      return "  " + paint(item.finding.severity.rawValue.padding(7), code) + " " + AuditReport.findingText(item.finding, subject: subject)
    }
    if findingsOnly { return findingLines.map { $0 + "\n" }.joined() }

    var lines = sources.isEmpty ? ["Source: \(TerminalText.escaped(source))"]
      : ["Sources: " + sources.map { TerminalText.escaped($0) }.joined(separator: ", ")]
    lines.append(policyLine)
    if let info = backupInfo {
      lines.append("Backup: " + Self.backupLine(info))
    }
    lines.append("")
    if !backups.isEmpty {
      lines.append(contentsOf: backupRows(grouping, size: size))
      lines.append("")
      for (index, backup) in backups.enumerated() where backup.status == .audited {
        lines.append("Backup \(TerminalText.escaped(backup.udid)): " + (backup.info.map(Self.backupLine) ?? ""))
        lines.append(contentsOf: containerRows(grouping.containers[index].map { reports[$0] }, labels: [:], size: size, indent: 2).map { "  " + $0 })
        lines.append("")
      }
      lines.append(contentsOf: historyLines(grouping, size: size, unicode: unicode))
    }
    let loose = grouping.loose.map { reports[$0] }
    if !loose.isEmpty || backups.isEmpty {
      if !backups.isEmpty { lines.append(sources.isEmpty ? "Containers beside the backups:" : "Containers:") }
      lines.append(contentsOf: containerRows(loose, labels: labels, size: size))
      lines.append("")
    }
    if baselineChanges != nil {
      lines.append(contentsOf: growthLines(labels: labels, size: size))
      lines.append("")
    }
    lines.append("Findings: " + Severity.counted(all.map(\.finding.severity)))
    lines.append(contentsOf: findingLines)
    // With --list: each container's files.
    // Only the reports with a listing are sorted (10,000 backups' reports have none).
    let listed = reports.filter { !($0.entries?.isEmpty ?? true) }
    for report in listed.sorted(by: { (labels[$0.container] ?? $0.name) < (labels[$1.container] ?? $1.name) }) {
      guard let entries = report.entries, !entries.isEmpty else { continue }
      lines.append("")
      lines.append("Files of \(TerminalText.escaped(labels[report.container] ?? report.name)) (\(entries.count)):")
      let sizes = entries.map { size($0.bytes) }
      let width = sizes.map(\.count).max() ?? 0
      for (entry, text) in zip(entries, sizes) {
        lines.append("  " + entry.category.rawValue.padding(9) + "  " + String(repeating: " ", count: width - text.count) + text
                     + "  " + TerminalText.escaped(entry.path))
      }
    }
    lines.append("")
    // A device's archived copies are its history, not more data: the totals count each
    // device's latest backup (and the containers beside the backups), and say so.
    let counted = countedReports(grouping)
    let sums = Self.sums(of: counted.indices, in: reports)
    let totalFiles = sums.categories.values.reduce(0) { $0 + $1.files }
    let totalBytes = sums.categories.values.reduce(0) { $0 + $1.bytes }
    let backupCount = backups.isEmpty ? "" : Self.backupCount(backups) + ", "
    let older = counted.olderCopies == 0 ? "" : " (the latest backup of each device; \(Plural.counted(counted.olderCopies, "older copy", "older copies")) not added)"
    lines.append("Total: \(backupCount)\(Plural.counted(counted.indices.count, "container")), \(Plural.counted(totalFiles, "file")), \(size(totalBytes));"
                 + " backup \(Plural.counted(sums.backup.files, "file")), \(size(sums.backup.bytes))" + older)
    lines.append(fails(at: failOn) ? "Result: " + paint("FAIL", "1;31") + " (findings at or above --fail-on \(failOn!.rawValue))"
                 : "Result: " + paint("OK", "32"))
    return lines.joined(separator: "\n") + "\n"
  }

  /// A row per container with app files, largest backup first; the containers holding nothing
  /// but system files (their metadata plist) and no finding on one line after them.
  private func containerRows(_ reports: [AuditReport], labels: [JSONKey: String], size: (UInt64) -> String, indent: Int = 0) -> [String] {
    let sorted = Self.byBackupSize(reports)
    let withFiles = sorted.filter { !Self.isEmpty($0) }
    let empty = sorted.filter(Self.isEmpty)
    var lines: [String] = []
    if withFiles.isEmpty && empty.isEmpty {
      lines.append("No containers.")
    }
    if !withFiles.isEmpty {
      var rows: [[String]] = [["CONTAINER", "KIND", "FILES", "BACKED UP", "ERRORS", "WARNINGS"]]
      for report in withFiles {
        let files = report.categories.values.reduce(0) { $0 + $1.files }
        rows.append([TerminalText.escaped(labels[report.container] ?? report.name), report.kind.rawValue, String(files), size(report.backup.bytes),
                     String(count(.error, in: report)), String(count(.warning, in: report))])
      }
      // Narrow terminals: the id is cut in the middle, then KIND, FILES, WARNINGS and ERRORS go.
      lines.append(contentsOf: TextTable.render(rows, rightAligned: [2, 3, 4, 5], indent: indent, dropOrder: [1, 2, 5, 4]))
    }
    if !empty.isEmpty {
      let names = Plural.listed(empty.map { TerminalText.escaped(labels[$0.container] ?? $0.name) }.sorted(), limit: Self.namesOnOneLine)
      lines.append(Plural.counted(empty.count, "container") + " with no app files: \(names)")
    }
    return lines
  }

  /// One container's backup then and now, for the growth section of a report of many.
  struct GrowthRow {
    var name: String
    /// nil: new since the baseline.
    var then: UInt64?
    /// nil: gone since the baseline.
    var now: UInt64?
    var change: Int64 { Int64(clamping: now ?? 0) - Int64(clamping: then ?? 0) }

    /// `new`, `gone`, or `+1.2 MiB (+25.0%)`.
    func changeText(_ size: (UInt64) -> String) -> String {
      guard let then else { return "new" }
      guard now != nil else { return "gone" }
      var text = (change >= 0 ? "+" : "-") + size(change.magnitude)
      if then > 0 { text += " (" + Plural.percent(Double(change) / Double(then) * 100) + "%)" }
      return text
    }
  }

  /// With `--baseline` on a report of many: what each container's backup was then and is now,
  /// largest change first; a container new since the baseline has no `then`, one gone no `now`;
  /// the unchanged are only counted. Containers are matched by id (one without an id has no
  /// baseline). The summary: `2 grew, 1 new, 1 gone, 5 unchanged`.
  func growth(labels: [JSONKey: String]) -> (file: String, summary: String, rows: [GrowthRow])? {
    guard let changes = baselineChanges else { return nil }
    var rows: [GrowthRow] = []
    var unchanged = 0
    var seen = Set<JSONKey>()
    for report in reports {
      guard let id = report.id else { continue }
      seen.insert(JSONKey(id))
      let then = baselineBytes[id]
      if then == report.backup.bytes { unchanged += 1; continue }
      rows.append(GrowthRow(name: labels[report.container] ?? report.name, then: then, now: report.backup.bytes))
    }
    for id in changes.removed where !seen.contains(JSONKey(id)) {
      rows.append(GrowthRow(name: id, then: baselineBytes[id] ?? 0, now: nil))
    }
    rows.sort { a, b in
      let (x, y) = (a.change.magnitude, b.change.magnitude)
      return x != y ? x > y : a.name.utf8.lexicographicallyPrecedes(b.name.utf8)
    }
    let new = rows.filter { $0.then == nil }.count
    let gone = rows.filter { $0.now == nil }.count
    let grew = rows.filter { $0.then != nil && $0.now != nil && $0.change > 0 }.count
    let counts = [(grew, "grew"), (rows.count - new - gone - grew, "shrank"), (new, "new"), (gone, "gone"), (unchanged, "unchanged")]
      .filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
    return (changes.file, counts.isEmpty ? "no containers" : counts.joined(separator: ", "), rows)
  }

  /// The growth section of the table.
  func growthLines(labels: [JSONKey: String], size: (UInt64) -> String) -> [String] {
    guard let growth = growth(labels: labels) else { return [] }
    var lines = ["Since \(TerminalText.escaped(growth.file)): \(growth.summary)"]
    guard !growth.rows.isEmpty else { return lines }
    var table: [[String]] = [["CONTAINER", "THEN", "NOW", "CHANGE"]]
    for row in growth.rows {
      table.append([TerminalText.escaped(row.name), row.then.map(size) ?? "-", row.now.map(size) ?? "-", row.changeText(size)])
    }
    lines += TextTable.render(table, rightAligned: [1, 2], indent: 2, dropOrder: [1]).map { "  " + $0 }
    return lines
  }

  /// A row per backup: what it is, whether it was read, and its files and backed-up bytes.
  private func backupRows(_ grouping: Grouping, size: (UInt64) -> String) -> [String] {
    var rows: [[String]] = [["BACKUP", "DEVICE", "IOS", "DATE", "ENCRYPTED", "SNAPSHOT", "STATUS", "FILES", "BACKED UP"]]
    for (index, backup) in backups.enumerated() {
      let info = backup.info
      let held = Self.sums(of: grouping.containers[index], in: reports).backup
      let files = backup.status == .audited ? String(held.files) : "-"
      let bytes = backup.status == .audited ? size(held.bytes) : "-"
      rows.append([TerminalText.escaped(backup.udid), info?.deviceName.map(TerminalText.escaped) ?? "-",
                   info?.productVersion.map(TerminalText.escaped) ?? "-", info?.date.map(TerminalText.escaped) ?? "-",
                   info.map { $0.isEncrypted ? "yes" : "no" } ?? "-", info?.snapshotState.map(TerminalText.escaped) ?? "-",
                   backup.status.words, files, bytes])
    }
    // Narrow terminals: the folder name and device cut in the middle, then SNAPSHOT, ENCRYPTED,
    // IOS, DEVICE, FILES and STATUS go; the date and the bytes stay.
    return TextTable.render(rows, rightAligned: [7, 8], cuttable: [0, 1], dropOrder: [5, 4, 2, 1, 7, 6])
  }

  /// `3 backups (2 audited, 1 locked)`.
  static func backupCount(_ backups: [BackupAudit]) -> String {
    let parts = BackupAudit.Status.allCases.compactMap { status -> String? in
      let count = backups.filter { $0.status == status }.count
      return count == 0 ? nil : "\(count) " + status.words
    }
    return Plural.counted(backups.count, "backup") + " (" + parts.joined(separator: ", ") + ")"
  }
}

extension AuditSet {
  /// Nothing but system files (the metadata plist) and no finding: one line among the others
  /// in the table and the HTML report, not a row or a section.
  static func isEmpty(_ report: AuditReport) -> Bool {
    report.findings.isEmpty && !report.categories.contains { $0.key != .system && $0.value.files > 0 }
  }

  /// How many names a one-line list shows before `… and N more`.
  static let namesOnOneLine = 8

  /// What the table's `Backup:` line says: the device, iOS version, date, snapshot state and
  /// encryption the backup's plists give; when Info.plist gives none of the first three, it says
  /// so (the line is never empty).
  static func backupLine(_ info: BackupInfo) -> String {
    let nonEmpty = { (text: String?) in text.flatMap { $0.isEmpty ? nil : $0 } }
    var parts = [nonEmpty(info.deviceName), nonEmpty(info.productVersion).map { "iOS " + $0 }, nonEmpty(info.date)]
      .compactMap { $0 }.map(TerminalText.escaped)
    if parts.isEmpty && info.unreadablePlists.isEmpty { parts.append("Info.plist names no device, iOS version or date") }
    if let snapshot = nonEmpty(info.snapshotState) { parts.append("snapshot " + TerminalText.escaped(snapshot)) }
    if info.isEncrypted { parts.append("encrypted") }
    parts += info.unreadablePlists.map(TerminalText.escaped)
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
