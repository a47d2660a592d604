import AppDataSystem
import AppDataCore
// MARK: - JUnit XML: one test case per rule

extension AuditReport {
  /// A test suite with one test case per rule: it fails when the rule has findings at or
  /// above `failOn`; lesser findings go to the case's system-out. Rules turned off are skipped.
  public func junitXML(failOn: Severity?, disabledRules: Set<String>) -> String {
    let suite = junitSuite(failOn: failOn, disabledRules: disabledRules, name: "appdata audit \(container)")
    return """
      <?xml version="1.0" encoding="UTF-8"?>
      <testsuites name="appdata audit" tests="\(suite.tests)" failures="\(suite.failures)" errors="0" skipped="\(suite.skipped)">
      \(suite.text)
      </testsuites>

      """
  }

  /// One `<testsuite>` (indented two spaces) and its counts.
  func junitSuite(failOn: Severity?, disabledRules: Set<String>, name suiteName: String) -> (text: String, tests: Int, failures: Int, skipped: Int) {
    var cases: [String] = []
    var failures = 0
    var skipped = 0
    let rules = platform.rules
    for rule in rules {
      let name = Self.xml(rule.id)
      var body = "    <testcase classname=\"appdata.audit\" name=\"\(name)\""
      if disabledRules.contains(rule.id) {
        skipped += 1
        cases.append(body + ">\n      <skipped message=\"turned off in the policy file\"/>\n    </testcase>")
        continue
      }
      let ruleFindings = findings.filter { $0.rule == rule }
      let failing = ruleFindings.filter { finding in failOn.map { finding.severity >= $0 } ?? false }
      let passing = ruleFindings.filter { finding in !(failOn.map { finding.severity >= $0 } ?? false) }
      if failing.isEmpty && passing.isEmpty {
        cases.append(body + "/>")
        continue
      }
      body += ">"
      if !failing.isEmpty {
        failures += 1
        let text = failing.map { Self.line($0) }.joined(separator: "\n")
        body += "\n      <failure message=\"\(Plural.counted(failing.count, "finding"))\" type=\"\(failing[0].severity.rawValue)\">\(Self.xml(text))</failure>"
      }
      if !passing.isEmpty {
        body += "\n      <system-out>\(Self.xml(passing.map { Self.line($0) }.joined(separator: "\n")))</system-out>"
      }
      cases.append(body + "\n    </testcase>")
    }
    let count = rules.count
    var properties = [
      "      <property name=\"backupBytes\" value=\"\(backup.bytes)\"/>",
      "      <property name=\"backupFiles\" value=\"\(backup.files)\"/>",
      "      <property name=\"maxBackupSize\" value=\"\(maxBackupSize.map(String.init) ?? "")\"/>",
    ]
    if let id { properties.append("      <property name=\"id\" value=\"\(Self.xml(id))\"/>") }
    if let platformName = platform.reportedName { properties.append("      <property name=\"platform\" value=\"\(platformName)\"/>") }
    // The platform's destinations, where it spells them out (iOS's one is the backup's above).
    for destination in destinations where platform.itemizesDestinations {
      let name = destination.id
      properties.append("      <property name=\"\(name).carried\" value=\"\(destination.carried)\"/>")
      properties.append("      <property name=\"\(name).files\" value=\"\(destination.files)\"/>")
      properties.append("      <property name=\"\(name).bytes\" value=\"\(destination.bytes)\"/>")
      properties.append("      <property name=\"\(name).measured\" value=\"\(destination.measured)\"/>")
      properties.append("      <property name=\"\(name).quota\" value=\"\(destination.quota.map(String.init) ?? "")\"/>")
    }
    let text = """
        <testsuite name="\(Self.xml(suiteName))" tests="\(count)" failures="\(failures)" errors="0" skipped="\(skipped)">
          <properties>
      \(properties.joined(separator: "\n"))
          </properties>
      \(cases.joined(separator: "\n"))
        </testsuite>
      """
    return (text, count, failures, skipped)
  }

  private static func line(_ finding: Finding) -> String {
    "\(finding.severity.rawValue): \(TerminalText.escaped(finding.path)): \(finding.message)"
  }

  /// XML 1.0 text: markup characters as entities, control characters (which XML cannot carry) as escapes.
  static func xml(_ text: String) -> String {
    // Most text is printable ASCII with no markup character: as it is.
    if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x26 && $0 != 0x3C && $0 != 0x3E && $0 != 0x22 && $0 != 0x27 }) { return text }
    return XMLReference.escaped(text) { scalar in
      switch scalar {
      case "'": "&apos;"
      case "\n", "\t": nil
      case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF: TerminalText.escaped(String(scalar))
      default: nil
      }
    }
  }
}
