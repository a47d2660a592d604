import AppDataSystem
import AppDataCore
// MARK: - GitHub, JUnit and SARIF for a report of many: each finding names its container

extension AuditSet {
  /// GitHub workflow commands: annotations (at most `AuditReport.githubAnnotationLimit`, most
  /// severe first) whose message starts with the container, then the totals.
  public func githubCommands(hasStepSummary: Bool) -> String {
    if let single { return single.githubCommands(hasStepSummary: hasStepSummary) }
    var lines: [String] = []
    let all = findings
    for (name, finding) in all.prefix(AuditReport.githubAnnotationLimit) {
      let command = finding.severity == .error ? "error" : finding.severity == .warning ? "warning" : "notice"
      let title = AuditReport.githubProperty("appdata " + finding.rule.id + " (" + TerminalText.escaped(name) + ")")
      let message = TerminalText.escaped(name) + (finding.path == Array(".".utf8) ? "" : ": " + TerminalText.escaped(finding.path)) + ": " + finding.message
      lines.append("::\(command) title=\(title)::\(AuditReport.githubMessage(message))")
    }
    if all.count > AuditReport.githubAnnotationLimit {
      let rest = all.count - AuditReport.githubAnnotationLimit
      lines.append("appdata: \(Plural.counted(rest, "more finding")) not annotated (GitHub shows \(AuditReport.githubAnnotationLimit) per step)"
                   + (hasStepSummary ? "; every finding is in the job summary" : "; set GITHUB_STEP_SUMMARY or use --format json for all of them"))
    }
    lines.append("appdata: \(Plural.counted(reports.count, "container")), backup \(Plural.counted(backup.files, "file")), \(Plural.counted(backup.bytes, "byte")); \(Plural.counted(all.count, "finding"))")
    return lines.joined(separator: "\n") + "\n"
  }

  /// The Markdown job summary: a row per container, then every finding with its container.
  public func githubStepSummary(failOn: Severity?) -> String {
    if let single { return single.githubStepSummary(failOn: failOn) }
    var lines = ["## appdata audit \(fails(at: failOn) ? "failed" : "passed")", "",
                 "Source: `\(AuditReport.markdownCode(source))`", "",
                 "| container | kind | files | backed up (bytes) | errors | warnings |", "| --- | --- | ---: | ---: | ---: | ---: |"]
    let labels = labels
    for report in byBackupSize {
      let files = report.categories.values.reduce(0) { $0 + $1.files }
      lines.append("| `\(AuditReport.markdownCode(labels[report.container] ?? report.name))` | \(report.kind.rawValue) | \(files) | \(report.backup.bytes) (\(ByteSize.human(report.backup.bytes))) | \(count(.error, in: report)) | \(count(.warning, in: report)) |")
    }
    let all = findings
    lines += ["", "**Backup:** \(Plural.counted(backup.files, "file")), \(Plural.counted(backup.bytes, "byte")) (\(ByteSize.human(backup.bytes)))", "",
              "### Findings (\(all.count))", ""]
    if all.isEmpty {
      lines.append("None.")
    } else {
      lines += ["| severity | container | rule | path | message |", "| --- | --- | --- | --- | --- |"]
      for (name, finding) in all {
        lines.append("| \(finding.severity.rawValue) | `\(AuditReport.markdownCode(name))` | `\(finding.rule.id)` | `\(AuditReport.markdownCode(TerminalText.escaped(finding.path)))` | \(AuditReport.markdownCell(finding.message)) |")
      }
    }
    return lines.joined(separator: "\n") + "\n\n"
  }

  /// JUnit XML: one test suite per container (named by it), one test case per rule.
  public func junitXML(failOn: Severity?, disabledRules: Set<String>) -> String {
    if let single { return single.junitXML(failOn: failOn, disabledRules: disabledRules) }
    var suites: [String] = []
    var tests = 0
    var failures = 0
    var skipped = 0
    let labels = labels
    for report in reports + unreadBackups {
      let suite = report.junitSuite(failOn: failOn, disabledRules: disabledRules, name: "appdata audit \(labels[report.container] ?? report.name)")
      suites.append(suite.text)
      tests += suite.tests
      failures += suite.failures
      skipped += suite.skipped
    }
    return """
      <?xml version="1.0" encoding="UTF-8"?>
      <testsuites name="appdata audit" tests="\(tests)" failures="\(failures)" errors="0" skipped="\(skipped)">
      \(suites.joined(separator: "\n"))
      </testsuites>

      """
  }

  /// SARIF 2.1.0: one run; each result is located in its container (a `uriBaseId` per
  /// container) and names it in its message and `properties.container`.
  public func sarifDocument(anchors: SARIFAnchors = SARIFAnchors()) -> JSONValue {
    if let single { return single.sarifDocument(anchors: anchors) }
    var results: [JSONValue] = []
    var bases: [JSONKey: JSONValue] = [:]
    let labels = labels
    for (index, report) in (reports + unreadBackups).enumerated() {
      let name = labels[report.container] ?? report.name
      let base = "CONTAINER\(index + 1)"
      bases[base] = .object(["uri": .string("file://" + AuditReport.uriPath(Array(report.container.utf8)) + "/")])
      for result in report.sarifResults(anchors: anchors, uriBaseId: base, inReportOfMany: true) {
        guard case .object(var object) = result else { continue }
        if case .object(var message)? = object["message"], case .string(let text)? = message["text"] {
          message["text"] = .string(TerminalText.escaped(name) + ": " + text)
          object["message"] = .object(message)
        }
        var properties = object["properties"]?.objectValue ?? [:]
        properties["container"] = .string(name)
        object["properties"] = .object(properties)
        results.append(.object(object))
      }
    }
    if let root = anchors.root { bases["%SRCROOT%"] = .object(["uri": .string("file://" + AuditReport.uriPath(Array(root.utf8)) + "/")]) }
    return AuditReport.sarifLog(results: results, bases: bases)
  }
}

extension AuditSet {
  /// Each backup that was not read, as a report holding only its `backup-unreadable` finding
  /// (named `backup UDID`), for the formats that list findings by container.
  var unreadBackups: [AuditReport] {
    backups.compactMap { backup in
      guard let finding = backup.finding else { return nil }
      return AuditReport(container: backup.path, kind: .system, name: "backup " + backup.udid, categories: [:], directories: 0,
                         findings: [finding], largest: [])
    }
  }
}
