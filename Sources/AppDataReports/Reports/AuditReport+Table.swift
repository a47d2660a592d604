import AppDataSystem
import AppDataCore
// MARK: - The table report, for people

extension AuditReport {
  /// The `--format table` text. `exactBytes` prints sizes as byte counts (`--bytes`); `colors`
  /// adds ANSI colours to severities and the result; `findingsOnly` (`--quiet`) prints only
  /// the finding lines; `policyLine` (which policy file applied) goes under the `Container:` line.
  public func table(exactBytes: Bool, failOn: Severity?, colors: Bool = false, findingsOnly: Bool = false,
                    policyLine: String? = nil, top: Int = 10) -> String {
    func size(_ bytes: UInt64) -> String { exactBytes ? String(bytes) : ByteSize.human(bytes) }
    func paint(_ text: String, _ code: String) -> String { colors ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
    func findingLine(_ finding: Finding) -> String {
      let code = finding.severity == .error ? "31" : finding.severity == .warning ? "33" : "36"
      return "  " + paint(finding.severity.rawValue.padding(7), code) + " " + Self.findingText(finding, subject: subject(of: finding))
    }
    if findingsOnly { return findings.map { findingLine($0) + "\n" }.joined() }
    var lines: [String] = []
    lines.append(android.map { "Android app data: \(TerminalText.escaped(container)) (\(TerminalText.escaped($0.package)))" }
                 ?? "Container: \(TerminalText.escaped(container))")
    if let policyLine { lines.append(policyLine) }
    lines.append("")

    if let android {
      // The question an Android developer asks first: does each destination take the app?
      func versions(_ name: String, _ value: Int, _ assumed: Bool) -> String { "\(name) \(value)" + (assumed ? " (assumed)" : "") }
      lines.append(versions("Target SDK", android.targetSdk, android.targetSdkAssumed) + ", " + versions("device API", android.deviceAPI, android.deviceAPIAssumed)
                   + (android.targetSdkAssumed && android.deviceAPIAssumed ? "; --target-sdk and --device-api say otherwise"
                      : android.targetSdkAssumed ? "; --target-sdk says otherwise" : android.deviceAPIAssumed ? "; --device-api says otherwise" : ""))
      for figures in [android.deviceTransfer, android.cloud] {
        let name = figures.destination == "cloud" ? "Google cloud backup" : "Phone switch (device-to-device)"
        lines.append("\(name): " + (figures.carried ? "carried, \(Plural.counted(figures.files, "file")), \(size(figures.bytes))"
                                                  : "NOT CARRIED, " + TerminalText.escaped(figures.reason ?? "")))
        var detail = "  rules: \(TerminalText.escaped(figures.rules)); Android measures \(size(figures.measured))"
        if let quota = figures.quota { detail += " of \(exactBytes ? String(quota) : AndroidBackupModel.quotaText(quota)) allowed" }
        lines.append(detail)
      }
      lines.append("")
    }
    var rows: [[String]] = [["CATEGORY", "FILES", "SIZE", "ALLOCATED", android != nil ? "CLOUD BACKUP" : "BACKED UP"]]
    var total = CategoryTotals()
    // iOS's own categories (tmp/, the paths iOS manages) have no Android counterpart.
    for category in Category.allCases where android == nil || (category != .temporary && category != .system) {
      let totals = categories[category] ?? CategoryTotals()
      total.add(totals)
      // On Android, critical is what the cloud backup's walk sends: carried only if the app is.
      let backedUp = android.map { category == .critical && $0.cloud.carried } ?? category.isBackedUp
      rows.append([category.rawValue, String(totals.files), size(totals.bytes), size(totals.allocatedBytes),
                   backedUp ? "yes" : category == .critical && android != nil ? "no: NOT CARRIED" : "no"])
    }
    rows.append(["total", String(total.files), size(total.bytes), size(total.allocatedBytes), ""])
    lines.append(contentsOf: TextTable.render(rows, rightAligned: [1, 2, 3]))
    lines.append("")

    var backupLine = "Backup: \(Plural.counted(backup.files, "file")), \(size(backup.bytes))"
    if android != nil {
      backupLine = ""
    } else if let maxBackupSize {
      backupLine += " of \(size(maxBackupSize)) allowed"
      backupLine += backup.bytes > maxBackupSize ? " (OVER THE LIMIT)" : ""
    } else {
      backupLine += " (no limit: --max-backup-size sets one)"
    }
    if !backupLine.isEmpty { lines.append(backupLine) }
    for item in budgets {
      lines.append("Budget \(TerminalText.escaped(item.budget.path.pattern)): \(size(item.bytes)) of \(size(item.budget.maxBytes))"
                   + (item.bytes > item.budget.maxBytes ? " (OVER THE BUDGET)" : ""))
    }
    lines.append("Folders: \(directories)")
    if let comparison {
      lines.append("")
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
    }

    if let against = backupComparison {
      func count(_ value: BackupComparison.Count) -> String { "\(value.files) (\(size(value.bytes)))" }
      lines.append("")
      lines.append("Against \(TerminalText.escaped(against.domain)) in \(TerminalText.escaped(against.backup)):")
      lines.append("  backed up as predicted \(count(against.inBoth)); predicted but not in the backup \(count(against.onlyInContainer));")
      lines.append("  in the backup though not backed up here \(count(against.unexpectedInBackup)); only in the backup \(count(against.onlyInBackup))")
    }

    if !largest.isEmpty {
      lines.append("")
      lines.append(android == nil ? "Largest backed-up files:" : "Largest files the cloud backup's walk sends:")
      let sizes = largest.map { size($0.bytes) }
      let width = sizes.map(\.count).max() ?? 0
      for (file, text) in zip(largest, sizes) {
        lines.append("  " + String(repeating: " ", count: width - text.count) + text + "  " + TerminalText.escaped(file.path))
      }
    }

    lines.append("")
    lines.append("Findings: " + Severity.counted(findings.map(\.severity)))
    if !findings.isEmpty {
      for finding in findings { lines.append(findingLine(finding)) }
    }
    if let entries {
      lines.append("")
      lines.append("Files (\(entries.count)):")
      let sizes = entries.map { size($0.bytes) }
      let width = sizes.map(\.count).max() ?? 0
      // Android: where each file goes (cloud, transfer, neither), not an iOS category.
      func label(_ entry: ListedEntry) -> String {
        guard let android else { return entry.category.rawValue }
        let by = android.carriedBy[entry.path] ?? []
        return by.isEmpty ? "neither" : by.map { $0 == "cloud" ? "cloud" : "transfer" }.joined(separator: "+")
      }
      let categoryWidth = entries.map { label($0).count }.max() ?? 0
      for (entry, text) in zip(entries, sizes) {
        var line = "  " + label(entry).padding(categoryWidth) + "  "
        line += String(repeating: " ", count: width - text.count) + text + "  " + TerminalText.escaped(entry.path)
        if let by = entry.excludedBy, by != entry.path { line += "  (excluded by \(TerminalText.escaped(by)))" }
        lines.append(line)
      }
    }
    lines.append("")
    lines.append(fails(at: failOn) ? "Result: " + paint("FAIL", "1;31") + " (findings at or above --fail-on \(failOn!.rawValue))"
                 : "Result: " + paint("OK", "32"))
    return lines.joined(separator: "\n") + "\n"
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
