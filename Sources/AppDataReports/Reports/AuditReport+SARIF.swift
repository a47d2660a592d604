import AppDataSystem
import AppDataCore
// MARK: - SARIF 2.1.0 (code scanning)

extension AuditReport {
  /// A SARIF 2.1.0 log: the rules with their descriptions and help, and one result per finding,
  /// each with a location (`locations(of:anchors:uriBaseId:)`).
  public func sarifDocument(anchors: SARIFAnchors = SARIFAnchors()) -> JSONValue {
    var bases: [JSONKey: JSONValue] = ["CONTAINER": .object(["uri": .string("file://" + Self.uriPath(Array(container.utf8)) + "/")])]
    if let root = anchors.root { bases["%SRCROOT%"] = .object(["uri": .string("file://" + Self.uriPath(Array(root.utf8)) + "/")]) }
    let log = Self.sarifLog(results: sarifResults(anchors: anchors, uriBaseId: "CONTAINER"), bases: bases,
                            rules: platform.rules)
    // A platform that spells its destinations out: the run's properties carry the platform and
    // each destination's figures.
    guard platform.itemizesDestinations, let name = platform.reportedName, case .object(var document) = log,
          case .array(var runs)? = document["runs"], case .object(var run)? = runs.first else { return log }
    run["properties"] = .object(["platform": .string(name), "destinations": destinationsJSON()])
    runs[0] = .object(run)
    document["runs"] = .array(runs)
    return .object(document)
  }

  /// One SARIF result per finding, each with one location (`sarifLocation`). Its message starts
  /// with what it is about: the path, or the container's name for the container's own findings
  /// (`inReportOfMany`: the path only, the report of many putting the name before it).
  func sarifResults(anchors: SARIFAnchors, uriBaseId: String, inReportOfMany: Bool = false) -> [JSONValue] {
    let rules = platform.rules
    return findings.map { finding in
      var result: [JSONKey: JSONValue] = [
        "ruleId": .string(finding.rule.id),
        "ruleIndex": .integer(Int64(rules.firstIndex(of: finding.rule) ?? 0)),
        "level": .string(Self.sarifLevel(finding.severity)),
        "message": .object(["text": .string(inReportOfMany
          ? (finding.path == Array(".".utf8) ? "" : TerminalText.escaped(finding.path) + ": ") + finding.message
          : subject(of: finding) + ": " + finding.message)]),
        "locations": .array([sarifLocation(of: finding, anchors: anchors, uriBaseId: uriBaseId)]),
      ]
      var properties: [JSONKey: JSONValue] = ["path": .string(TerminalText.escaped(finding.path))]
      if let bytes = finding.bytes { properties["bytes"] = .unsigned(bytes) }
      result["properties"] = .object(properties)
      return .object(result)
    }
  }

  /// Where a finding points: GitHub rejects the whole file when a result has no location
  /// ("locationFromSarifResult: expected at least one location").
  ///
  /// A finding about a limit the policy file set points at the policy file. Any other finding
  /// about the whole container (path `.`, a budget's glob) points at the container's root, and
  /// one about a path at that path. In a container inside an archive or a device backup the
  /// path is not a file on disk: the archive (or the backup's folder) is the location, and the
  /// path is in the message and `properties.path`. A location inside `anchors.root` is relative
  /// to it (`%SRCROOT%`), so that GitHub links it to the file; elsewhere it is relative to the
  /// container (`uriBaseId`, whose `file:` URI the run's `originalUriBaseIds` give), or an
  /// absolute `file:` URI.
  func sarifLocation(of finding: Finding, anchors: SARIFAnchors, uriBaseId: String) -> JSONValue {
    let isBudget = finding.rule == .budgetExceeded || finding.rule == .budgetNearLimit
    let isContainerWide = finding.path == Array(".".utf8) || isBudget
    // The container on disk, and whether it is a folder (not in an archive or a backup).
    let holder = archive ?? backupPath ?? container
    let onDisk = holder.utf8.firstRange(of: "//".utf8).map { String(holder[..<$0.lowerBound]) } ?? holder
    let isFolder = archive == nil && backupPath == nil && onDisk == container
    var target: String  // absolute
    var isDirectory = false
    if let policyFile = anchors.policyFile, isContainerWide, anchors.policyRules.contains(finding.rule.id) {
      target = policyFile
    } else if isFolder && !isContainerWide {
      target = onDisk + "/" + String(decoding: finding.path, as: UTF8.self)
    } else {
      target = onDisk
      isDirectory = isFolder
    }
    func location(_ uri: String, base: String?) -> JSONValue {
      var artifact: [JSONKey: JSONValue] = ["uri": .string(uri)]
      if let base { artifact["uriBaseId"] = .string(base) }
      return .object(["physicalLocation": .object(["artifactLocation": .object(artifact)])])
    }
    if let root = anchors.root, target.hasPrefix(root + "/") || target == root {
      let relative = target == root ? "." : String(target.dropFirst(root.count + 1))
      return location(Self.uriPath(Array(relative.utf8)) + (isDirectory ? "/" : ""), base: "%SRCROOT%")
    }
    if isFolder && target.hasPrefix(onDisk + "/") {
      return location(Self.uriPath(finding.path), base: uriBaseId)
    }
    if isFolder && target == onDisk {
      return location("./", base: uriBaseId)
    }
    return location("file://" + Self.uriPath(Array(target.utf8)) + (isDirectory ? "/" : ""), base: nil)
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
