import AppDataSystem
import AppDataCore
// MARK: - The table report, for people

extension AuditReport {
  /// The `--format table` text. `exactBytes` prints sizes as byte counts (`--bytes`); `colors`
  /// adds ANSI colours to severities and the result; `findingsOnly` (`--quiet`) prints only
  /// the finding lines; `policyLine` (which policy file applied) goes under the `Container:` line.
  public func table(exactBytes: Bool, failOn: Severity?, colors: Bool = false, findingsOnly: Bool = false,
                    policyLine: String? = nil, top: Int = 10) -> String {
    let size: (UInt64) -> String = { exactBytes ? String($0) : ByteSize.human($0) }
    func paint(_ text: String, _ code: String) -> String { colors ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
    func findingLine(_ finding: Finding) -> String {
      let code = finding.severity == .error ? "31" : finding.severity == .warning ? "33" : "36"
      return "  " + paint(finding.severity.rawValue.padding(7), code) + " " + Self.findingText(finding, subject: subject(of: finding))
    }
    if findingsOnly { return findings.map { findingLine($0) + "\n" }.joined() }
    var lines: [String] = [platform.subjectLine(container: container)]
    if let policyLine { lines.append(policyLine) }
    lines.append("")
    lines += tableDestinationLines(size: size, exactBytes: exactBytes)
    lines += tableCategoryLines(size: size)
    lines += tableLimitLines(size: size)
    lines += tableGrowthLines(size: size, top: top)
    lines += tableBackupComparisonLines(size: size)
    lines += tableLargestLines(size: size)
    lines.append("")
    lines.append("Findings: " + Severity.counted(findings.map(\.severity)))
    for finding in findings { lines.append(findingLine(finding)) }
    lines += tableListingLines(size: size)
    lines.append("")
    lines.append(fails(at: failOn) ? "Result: " + paint("FAIL", "1;31") + " (findings at or above --fail-on \(failOn!.rawValue))"
                 : "Result: " + paint("OK", "32"))
    return lines.joined(separator: "\n") + "\n"
  }

  /// Where the platform spells its destinations out: the question a developer asks first, does
  /// each take the app (the last listed first), with its rules and the platform's own measure.
  private func tableDestinationLines(size: (UInt64) -> String, exactBytes: Bool) -> [String] {
    guard platform.itemizesDestinations else { return [] }
    var lines = platform.tableLines
    for destination in destinations.reversed() {
      lines.append("\(destination.title): " + (destination.carried ? "carried, \(Plural.counted(destination.files, "file")), \(size(destination.bytes))"
                                                                  : "NOT CARRIED, " + TerminalText.escaped(destination.reason ?? "")))
      var detail = "  rules: \(TerminalText.escaped(destination.rules)); \(platform.name) measures \(size(destination.measured))"
      if let quota = destination.quota { detail += " of \(exactBytes ? String(quota) : AndroidBackupModel.quotaText(quota)) allowed" }
      lines.append(detail)
    }
    return lines + [""]
  }

  /// The platform's categories, each with whether its files are backed up, and their total.
  private func tableCategoryLines(size: (UInt64) -> String) -> [String] {
    var rows: [[String]] = [["CATEGORY", "FILES", "SIZE", "ALLOCATED", platform.backedUpHeading]]
    var total = CategoryTotals()
    let destinations = destinations
    for category in platform.categories {
      let totals = categories[category] ?? CategoryTotals()
      total.add(totals)
      let backedUp = platform.isBackedUp(category, destinations: destinations)
      rows.append([category.rawValue, String(totals.files), size(totals.bytes), size(totals.allocatedBytes),
                   backedUp ? "yes" : category == .critical ? platform.criticalNotBackedUp : "no"])
    }
    rows.append(["total", String(total.files), size(total.bytes), size(total.allocatedBytes), ""])
    return TextTable.render(rows, rightAligned: [1, 2, 3]) + [""]
  }

  /// The backup against its limit (where the platform's one destination is the backup), the
  /// budgets, the folders.
  private func tableLimitLines(size: (UInt64) -> String) -> [String] {
    var lines: [String] = []
    if !platform.itemizesDestinations {
      var backupLine = "Backup: \(Plural.counted(backup.files, "file")), \(size(backup.bytes))"
      if let maxBackupSize {
        backupLine += " of \(size(maxBackupSize)) allowed"
        backupLine += backup.bytes > maxBackupSize ? " (OVER THE LIMIT)" : ""
      } else {
        backupLine += " (no limit: --max-backup-size sets one)"
      }
      lines.append(backupLine)
    }
    for item in budgets {
      lines.append("Budget \(TerminalText.escaped(item.budget.path.pattern)): \(size(item.bytes)) of \(size(item.budget.maxBytes))"
                   + (item.bytes > item.budget.maxBytes ? " (OVER THE BUDGET)" : ""))
    }
    lines.append("Folders: \(directories)")
    return lines
  }

  /// With `--baseline`: the backup then and now, and the paths that grew most.
  private func tableGrowthLines(size: (UInt64) -> String, top: Int) -> [String] {
    guard let comparison else { return [] }
    var lines = [""]
    var growth = "Since \(TerminalText.escaped(comparison.file)): backup \(size(comparison.backupBefore)) -> \(size(comparison.backupAfter))"
    growth += " (" + (comparison.delta >= 0 ? "+" : "-") + size(comparison.delta.magnitude)
    if let percent = comparison.percent { growth += ", " + Plural.percent(percent) + "%" }
    lines.append(growth + ")")
    let paths = comparison.growingPaths(top: top)
    if !paths.isEmpty {
      lines.append("  Grown and new, largest growth first:")
      let sizes = paths.map { "+" + size($0.growth) + ($0.beforeIsBound ? " or more" : "") }
      let width = sizes.map(\.count).max() ?? 0
      for (item, text) in zip(paths, sizes) {
        var line = "  " + String(repeating: " ", count: width - text.count) + text + "  " + TerminalText.escaped(item.path)
        if item.isFolder { line += "/" }
        if item.isNew { line += " (new)" }
        if item.beforeIsBound { line += " (new, or at most \(size(item.before)) then)" }
        lines.append(line)
      }
    }
    return lines
  }

  /// With `--backup`: the container against the backup.
  private func tableBackupComparisonLines(size: (UInt64) -> String) -> [String] {
    guard let against = backupComparison else { return [] }
    func count(_ value: BackupComparison.Count) -> String { "\(value.files) (\(size(value.bytes)))" }
    return ["", "Against \(TerminalText.escaped(against.domain)) in \(TerminalText.escaped(against.backup)):",
            "  backed up as predicted \(count(against.inBoth)); predicted but not in the backup \(count(against.onlyInContainer));",
            "  in the backup though not backed up here \(count(against.unexpectedInBackup)); only in the backup \(count(against.onlyInBackup))"]
  }

  private func tableLargestLines(size: (UInt64) -> String) -> [String] {
    guard !largest.isEmpty else { return [] }
    var lines = ["", platform.largestHeading]
    let sizes = largest.map { size($0.bytes) }
    let width = sizes.map(\.count).max() ?? 0
    for (file, text) in zip(largest, sizes) {
      lines.append("  " + String(repeating: " ", count: width - text.count) + text + "  " + TerminalText.escaped(file.path))
    }
    return lines
  }

  /// With `--list`: each file, labelled by its category or the destinations that carry it.
  private func tableListingLines(size: (UInt64) -> String) -> [String] {
    guard let entries else { return [] }
    var lines = ["", "Files (\(entries.count)):"]
    let sizes = entries.map { size($0.bytes) }
    let width = sizes.map(\.count).max() ?? 0
    let labels = entries.map { platform.listingLabel(path: $0.path, category: $0.category) }
    let categoryWidth = labels.map(\.count).max() ?? 0
    for ((entry, text), label) in zip(zip(entries, sizes), labels) {
      var line = "  " + label.padding(categoryWidth) + "  "
      line += String(repeating: " ", count: width - text.count) + text + "  " + TerminalText.escaped(entry.path)
      if let by = entry.excludedBy, by != entry.path { line += "  (excluded by \(TerminalText.escaped(by)))" }
      lines.append(line)
    }
    return lines
  }
}

extension AuditReport {
  /// What people call the container: its id, or its folder's (or archive's) name.
  public var displayName: String {
    if !name.isEmpty { return name }
    return String(container.split(separator: "/").last ?? Substring(container))
  }

  /// What a finding is about, escaped: its path, or for the whole container (`.`), its name.
  func subject(of finding: Finding) -> String {
    TerminalText.escaped(finding.path == Array(".".utf8) ? Array(displayName.utf8) : finding.path)
  }

  /// `SUBJECT: MESSAGE [RULE] What to do: REMEDY.`: a finding as a person acts on it.
  static func findingText(_ finding: Finding, subject: String) -> String {
    subject + ": " + TerminalText.escaped(finding.message) + " [\(finding.rule.id)] What to do: " + finding.rule.remedy
  }
}

extension Severity {
  /// `1 error, 2 warnings, 3 info`, most severe first; `none` for none.
  static func counted(_ severities: [Severity]) -> String {
    var counts: [String] = []
    for severity in Severity.allCases.reversed() {
      let count = severities.filter { $0 == severity }.count
      if count > 0 { counts.append("\(count) \(severity.rawValue)\(count == 1 || severity == .info ? "" : "s")") }
    }
    return counts.isEmpty ? "none" : counts.joined(separator: ", ")
  }
}
