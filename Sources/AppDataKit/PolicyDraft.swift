import AppDataCore
import AppDataReaders

/// `appdata init-config`'s figures: a starting policy file from what PATH holds now, each limit
/// the current figure plus `headroom` percent (rounded up to a whole KiB).
public struct PolicyDraft: Sendable {
  /// The policy file's contents: every key, the limits from the largest container, and in a
  /// folder of containers each backed-up container's own limits under `containers`.
  public var document: JSONValue
  /// The limits written at the top level.
  public var maxBackupSize: UInt64
  public var maxFileSize: UInt64
  /// What the platform adds to the written line (Android's: the quota is not a limit), if anything.
  public var note: String?

  /// Reads PATH (a container, a package, a folder of them, an Android app's data) and drafts its
  /// policy. `beforeReading` runs once PATH is found to be an input, before it is read (the
  /// command's check that its output may be written), so that a refusal there reads nothing.
  public init(path: String, headroom: Int, beforeReading: () throws(Refusal) -> Void = {}) throws(Refusal) {
    guard Self.headrooms.contains(headroom) else {
      throw Refusal(.tooLarge, path: nil, message: "a headroom of \(headroom)% is outside \(Self.headrooms.lowerBound)% to \(Self.headrooms.upperBound)%")
    }
    let source = try InputResolver.resolve(path)
    try beforeReading()
    let reports = try source.audit(AuditRequest(options: { _ in AuditOptions() })).reports
    // A folder of containers: the top level allows the largest container's figures, and each
    // container with an id gets its own limits.
    var report = reports.max { $0.backup.bytes < $1.backup.bytes } ?? AuditReport(
      container: source.source, categories: [:], directories: 0, maxFileSize: nil, maxBackupSize: nil, findings: [], largest: [], entries: nil)
    report.largest = [reports.flatMap(\.largest).max { $0.bytes < $1.bytes }].compactMap { $0 }
    maxBackupSize = Self.withHeadroom(Self.carried(report), headroom)
    maxFileSize = Self.withHeadroom(report.largest.first?.bytes ?? 0, headroom)
    var document = Self.policy(for: report, maxFileSize: maxFileSize, maxBackupSize: maxBackupSize)
    if source.isCollection, case .object(var members) = document {
      var containers: [JSONKey: JSONValue] = [:]
      // A container holding nothing backed up gets no limits of its own (a 1 KiB budget would
      // fail it at its first file); the top level's apply to it.
      for item in reports where item.backup.bytes > 0 {
        guard let id = item.id else { continue }
        containers[id] = .object([
          "maxFileSize": .string(ByteSize.written(Self.withHeadroom(item.largest.first?.bytes ?? 0, headroom))),
          "maxBackupSize": .string(ByteSize.written(Self.withHeadroom(item.backup.bytes, headroom))),
        ])
      }
      members["containers"] = .object(containers)
      document = .object(members)
    }
    self.document = document
    note = report.platform.policyNote
  }

  /// The headrooms a draft takes, in percent (`init-config --headroom`'s range).
  public static let headrooms = 0...10_000

  /// Every key of the policy file: the limits (maxBackupSize from the most a destination of
  /// `report` carries: iOS's one, the backup; Android's, the app's own limit on each, never
  /// Android's quota), the rules and the members its platform lists.
  static func policy(for report: AuditReport, maxFileSize: UInt64, maxBackupSize: UInt64) -> JSONValue {
    var rules: [JSONKey: JSONValue] = [:]
    for rule in report.platform.policyRules { rules[rule.id] = .string(rule.severity.rawValue) }
    var members: [JSONKey: JSONValue] = [
      "maxFileSize": .string(ByteSize.written(maxFileSize)),
      "maxBackupSize": .string(ByteSize.written(maxBackupSize)),
      "warnAt": .double(0.9),
      "rules": .object(rules),
      "ignore": .array([]),
      "budgets": .array([]),
    ]
    members.merge(report.platform.policyMembers) { _, new in new }
    return .object(members)
  }

  /// The most bytes one of the report's destinations carries.
  static func carried(_ report: AuditReport) -> UInt64 { report.destinations.map(\.bytes).max() ?? 0 }

  /// `bytes` plus `percent`, rounded up to a whole KiB (and at least 1 KiB).
  static func withHeadroom(_ bytes: UInt64, _ percent: Int) -> UInt64 {
    let raised = Double(bytes) * (1 + Double(percent) / 100)
    let kib = max(1, UInt64((raised / 1024).rounded(.up)))
    return kib * 1024
  }
}
