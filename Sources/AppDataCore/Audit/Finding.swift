import AppDataSystem
/// One rule violation at one path.
public struct Finding: Sendable, Hashable {
  public var rule: AuditRule
  /// Relative to the container; `.` for the container itself.
  public var path: [UInt8]
  public var message: String
  /// The size the finding is about, where one applies.
  public var bytes: UInt64?
  /// The limit it is measured against, in bytes, where one applies (a file's, the backup's, a
  /// budget's, growth's).
  public var limit: UInt64?
  /// The rule's severity, unless the policy file overrides it.
  public var severity: Severity

  public init(rule: AuditRule, path: [UInt8], message: String, bytes: UInt64?, limit: UInt64? = nil) {
    self.rule = rule
    self.path = path
    self.message = message
    self.bytes = bytes
    self.limit = limit
    self.severity = rule.severity
  }

  /// Each rule's place in the report's order (by id), made once: a report of 10,000 backups
  /// sorts 10,000 lists of findings.
  private static let ruleRanks = Dictionary(uniqueKeysWithValues: AuditRule.everyRule.map(\.id).sorted().enumerated().map { ($1, $0) })

  /// `findings` in report order: most severe first, then by rule id, then by path (bytewise),
  /// then by message.
  /// Compares precomputed integer keys (severity, then the rule's place among the ids sorted)
  /// before paths, rather than rule-id strings at each of the n log n comparisons.
  package static func sortedForReport(_ findings: [Finding]) -> [Finding] {
    if findings.count < 2 { return findings }
    let keys = findings.map { finding -> Int in
      // Higher severity first; ids not in the table (none today) after the known ones.
      (2 - finding.severity.rank) * 1_000 + (Self.ruleRanks[finding.rule.id] ?? 999)
    }
    let order = findings.indices.sorted { i, j in
      if keys[i] != keys[j] { return keys[i] < keys[j] }
      if findings[i].rule.id != findings[j].rule.id { return findings[i].rule.id < findings[j].rule.id }
      let order = RelativePath.compare(findings[i].path, findings[j].path)
      if order != 0 { return order < 0 }
      return findings[i].message < findings[j].message  // so the order never depends on the walk's
    }
    return order.map { findings[$0] }
  }
}

extension RelativePath {
  /// The finding for a path past those limits (its first `maximumLength` bytes name it).
  package static func tooDeep(_ path: some Collection<UInt8>, components: Int, source: String) -> Finding {
    Finding(rule: .unreadable, path: Array(path.prefix(maximumLength)),
            message: "\(source) of \(Plural.counted(path.count, "byte")) in \(Plural.counted(components, "component")), past the \(maximumLength) bytes or \(maximumComponents) components appdata reads; not counted",
            bytes: nil)
  }
}
