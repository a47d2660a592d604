import AppDataSystem
import AppDataCore
// MARK: - SARIF 2.1.0 (code scanning)

extension AuditReport {
  /// A SARIF 2.1.0 log: the rules with their descriptions and help, and one result per finding,
  /// located relative to the container (`uriBaseId` CONTAINER).
  public func sarifDocument() -> JSONValue {
    let log = Self.sarifLog(results: sarifResults(uriBaseId: "CONTAINER"),
                            bases: ["CONTAINER": .object(["uri": .string("file://" + Self.uriPath(Array(container.utf8)) + "/")])],
                            rules: AuditRule.rules(forAndroid: android != nil))
    // Android: the run's properties carry the platform and each destination's figures.
    guard let android, case .object(var document) = log, case .array(var runs)? = document["runs"],
          case .object(var run)? = runs.first else { return log }
    run["properties"] = .object(["platform": .string("android"), "destinations": android.destinationsJSON()])
    runs[0] = .object(run)
    document["runs"] = .array(runs)
    return .object(document)
  }

  /// One SARIF result per finding, located relative to `uriBaseId`.
  func sarifResults(uriBaseId: String) -> [JSONValue] {
    let rules = AuditRule.rules(forAndroid: android != nil)
    return findings.map { finding in
      var result: [JSONKey: JSONValue] = [
        "ruleId": .string(finding.rule.id),
        "ruleIndex": .integer(Int64(rules.firstIndex(of: finding.rule) ?? 0)),
        "level": .string(Self.sarifLevel(finding.severity)),
        "message": .object(["text": .string(TerminalText.escaped(finding.path) + ": " + finding.message)]),
      ]
      if finding.path != Array(".".utf8) {
        result["locations"] = .array([.object([
          "physicalLocation": .object([
            "artifactLocation": .object(["uri": .string(Self.uriPath(finding.path)), "uriBaseId": .string(uriBaseId)]),
          ]),
        ])])
      }
      if let bytes = finding.bytes { result["properties"] = .object(["bytes": .unsigned(bytes)]) }
      return .object(result)
    }
  }

  /// The SARIF log around `results`: the tool, its rules, and the base URIs.
  static func sarifLog(results: [JSONValue], bases: [JSONKey: JSONValue], rules: [AuditRule] = AuditRule.all) -> JSONValue {
    let ruleObjects: [JSONValue] = rules.map { rule in
      .object([
        "id": .string(rule.id),
        "name": .string(Self.sarifName(rule.id)),
        "shortDescription": .object(["text": .string(rule.rationale)]),
        "fullDescription": .object(["text": .string(rule.rationale)]),
        "help": .object(["text": .string(rule.remedy)]),
        "defaultConfiguration": .object(["level": .string(Self.sarifLevel(rule.severity))]),
      ])
    }
    return .object([
      "$schema": .string("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"),
      "version": .string("2.1.0"),
      "runs": .array([.object([
        "tool": .object(["driver": .object([
          "name": .string(AppDataVersion.name),
          "version": .string(AppDataVersion.current),
          "rules": .array(ruleObjects),
        ])]),
        "originalUriBaseIds": .object(bases),
        "results": .array(results),
      ])]),
    ])
  }

  static func sarifLevel(_ severity: Severity) -> String {
    switch severity {
    case .error: return "error"
    case .warning: return "warning"
    case .info: return "note"
    }
  }

  /// `backup-file-too-large` → `BackupFileTooLarge`.
  static func sarifName(_ id: String) -> String {
    id.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
  }

  /// Percent-encodes a path for a URI, keeping `/` and unreserved characters.
  static func uriPath(_ bytes: [UInt8]) -> String {
    var output = ""
    for byte in bytes {
      switch byte {
      case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E, 0x2F:
        output.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        let hex = Array("0123456789ABCDEF")
        output += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0xF)])
      }
    }
    return output
  }
}
