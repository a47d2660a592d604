import AppDataSystem
import AppDataCore
// MARK: - GitHub Actions: workflow commands and the job summary

extension AuditReport {
  /// GitHub shows at most 10 annotations of each kind per step; more are dropped silently.
  public static let githubAnnotationLimit = 10

  /// `::error file=…,title=…::…` lines, most severe first, at most `githubAnnotationLimit`,
  /// then one plain line telling where the rest are.
  public func githubCommands(hasStepSummary: Bool) -> String {
    var lines: [String] = []
    for finding in findings.prefix(Self.githubAnnotationLimit) {
      let command: String
      switch finding.severity {
      case .error: command = "error"
      case .warning: command = "warning"
      case .info: command = "notice"
      }
      var properties: [String] = []
      if finding.path != Array(".".utf8) { properties.append("file=" + Self.githubProperty(RelativePath.display(finding.path))) }
      properties.append("title=" + Self.githubProperty("appdata " + finding.rule.id))
      lines.append("::\(command) \(properties.joined(separator: ","))::\(Self.githubMessage(subject(of: finding) + ": " + finding.message))")
    }
    if findings.count > Self.githubAnnotationLimit {
      let rest = findings.count - Self.githubAnnotationLimit
      lines.append("appdata: \(Plural.counted(rest, "more finding")) not annotated (GitHub shows \(Self.githubAnnotationLimit) per step)"
                   + (hasStepSummary ? "; every finding is in the job summary" : "; set GITHUB_STEP_SUMMARY or use --format json for all of them"))
    }
    if platform.itemizesDestinations {
      let prefix = platform.reportedName.map { $0 + " " } ?? ""
      for destination in destinations {
        lines.append("appdata: \(prefix)\(destination.id): \(destination.carried ? "carried" : "not carried"), \(Plural.counted(destination.files, "file")), "
                     + "measured \(destination.measured) bytes" + (destination.quota.map { " of \($0) allowed" } ?? ""))
      }
      lines.append("appdata: " + Plural.counted(findings.count, "finding"))
    } else {
      let backupLine = "appdata: backup \(Plural.counted(backup.files, "file")), \(Plural.counted(backup.bytes, "byte"))" + (maxBackupSize.map { " of \($0) allowed" } ?? "")
      lines.append(backupLine + "; " + Plural.counted(findings.count, "finding"))
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// The Markdown job summary: categories, the backup against its limit, growth, every finding.
  public func githubStepSummary(failOn: Severity?) -> String {
    var lines = ["## appdata audit \(fails(at: failOn) ? "failed" : "passed")", "",
                 platform.subject + ": `\(Self.markdownCode(container))`", "",
                 "| category | files | bytes | allocated | backed up |", "| --- | ---: | ---: | ---: | --- |"]
    let destinations = destinations
    for category in platform.categories {
      let totals = categories[category] ?? CategoryTotals()
      let backedUp = platform.isBackedUp(category, destinations: destinations)
      lines.append("| \(category.rawValue) | \(totals.files) | \(totals.bytes) (\(ByteSize.human(totals.bytes))) | \(totals.allocatedBytes) | \(backedUp ? "yes" : "no") |")
    }
    lines.append("")
    if platform.itemizesDestinations {
      // Each destination with the platform's own measure against its quota.
      lines += ["| \(platform.name) destination | carried | files | bytes | \(platform.name)'s measure | quota | rules |",
                "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
      for destination in destinations {
        let carried = destination.carried ? "yes" : "no: " + Self.markdownCell(destination.reason ?? "")
        lines.append("| \(destination.id) | \(carried) | \(destination.files) | \(destination.bytes) | \(destination.measured) (\(ByteSize.human(destination.measured))) | "
                     + "\(destination.quota.map(String.init) ?? "none") | \(Self.markdownCell(destination.rules)) |")
      }
    } else {
      var backupLine = "**Backup:** \(Plural.counted(backup.files, "file")), \(Plural.counted(backup.bytes, "byte")) (\(ByteSize.human(backup.bytes)))"
      if let maxBackupSize {
        backupLine += " of \(maxBackupSize) allowed (\(percentText(backup.bytes, of: maxBackupSize)))"
      }
      lines.append(backupLine)
    }
    for item in budgets {
      lines.append("- budget `\(Self.markdownCode(item.budget.path.pattern))`: \(item.bytes) of \(item.budget.maxBytes) bytes")
    }
    if let comparison {
      lines += ["", "### Growth since the baseline", "",
                "Backup: \(comparison.backupBefore) → \(comparison.backupAfter) bytes (\(Self.signed(comparison.delta))"
                  + (comparison.percent.map { ", \(Plural.percent($0))%" } ?? "") + ")"]
      if !comparison.growing.isEmpty {
        lines += ["", "| path | before | after | growth |", "| --- | ---: | ---: | ---: |"]
        for item in comparison.growing {
          lines.append("| `\(Self.markdownCode(RelativePath.display(item.path)))` | \(item.before) | \(item.after) | +\(item.after - item.before) |")
        }
      }
    }
    lines += ["", "### Findings (\(findings.count))", ""]
    if findings.isEmpty {
      lines.append("None.")
    } else {
      lines += ["| severity | rule | path | message |", "| --- | --- | --- | --- |"]
      for finding in findings {
        lines.append("| \(finding.severity.rawValue) | `\(finding.rule.id)` | `\(Self.markdownCode(TerminalText.escaped(finding.path)))` | \(Self.markdownCell(finding.message)) |")
      }
    }
    return lines.joined(separator: "\n") + "\n\n"
  }

  /// Workflow command property values escape `%`, CR, LF, `:` and `,`.
  static func githubProperty(_ text: String) -> String {
    githubMessage(text).replacingAll(":", with: "%3A").replacingAll(",", with: "%2C")
  }

  /// Workflow command messages escape `%`, CR and LF.
  static func githubMessage(_ text: String) -> String {
    text.replacingAll("%", with: "%25").replacingAll("\r", with: "%0D").replacingAll("\n", with: "%0A")
  }

  static func markdownCode(_ text: String) -> String { TerminalText.escaped(text).replacingAll("`", with: "'").replacingAll("|", with: "\\|") }
  static func markdownCell(_ text: String) -> String { TerminalText.escaped(text).replacingAll("|", with: "\\|") }
  static func signed(_ value: Int64) -> String { value >= 0 ? "+\(value)" : String(value) }
}
