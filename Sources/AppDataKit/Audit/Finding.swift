/// One rule violation at one path.
public struct Finding: Sendable, Hashable {
  public var rule: AuditRule
  /// Relative to the container; `.` for the container itself.
  public var path: [UInt8]
  public var message: String
  /// The size the finding is about, where one applies.
  public var bytes: UInt64?
  /// The rule's severity, unless the policy file overrides it.
  public var severity: Severity

  public init(rule: AuditRule, path: [UInt8], message: String, bytes: UInt64?) {
    self.rule = rule
    self.path = path
    self.message = message
    self.bytes = bytes
    self.severity = rule.severity
  }

  /// Report order: most severe first, then by rule, then by path (bytewise).
  static func reportOrder(_ a: Finding, _ b: Finding) -> Bool {
    if a.severity != b.severity { return a.severity > b.severity }
    if a.rule.id != b.rule.id { return a.rule.id < b.rule.id }
    return a.path.lexicographicallyPrecedes(b.path)
  }
}
