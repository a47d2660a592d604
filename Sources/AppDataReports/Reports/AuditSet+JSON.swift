import AppDataSystem
import AppDataCore
// MARK: - JSON and NDJSON of a report of many (Docs/audit.schema.json)

extension AuditSet {
  /// The `--format json` document: a single container's report, or
  /// `{schemaVersion, tool, source, summary, containers: [report…]}`.
  public func jsonDocument() -> JSONValue {
    let policy = JSONValue.object(["source": policySource.map { .string($0) } ?? .null])
    if let single {
      guard case .object(var document) = single.jsonDocument() else { return single.jsonDocument() }
      document["policy"] = policy
      return .object(document)
    }
    var document: [String: JSONValue] = [
      "schemaVersion": .integer(AppDataVersion.auditSchemaVersion),
      "tool": AppDataVersion.toolJSON,
      "source": .string(source),
      "summary": summaryJSON(),
      "containers": .array(reports.map { $0.containerJSON() }),
    ]
    if let info = backupInfo { document["backup"] = info.json() }
    document["policy"] = policy
    return .object(document)
  }

  /// The summary of every container added up, in a single report's summary shape.
  func summaryJSON() -> JSONValue {
    var categoryObjects: [String: JSONValue] = [:]
    let sums = categories
    for category in Category.allCases { categoryObjects[category.rawValue] = (sums[category] ?? CategoryTotals()).json() }
    return .object([
      "categories": .object(categoryObjects),
      "backup": .object(["files": .unsigned(backup.files), "bytes": .unsigned(backup.bytes)]),
      "directories": .unsigned(directories),
    ])
  }

  /// NDJSON: per container, its entries (unless streamed), its findings and its summary line,
  /// every line naming its container; for a report of many, a last `total` line.
  public func ndjson(streamed: Bool) -> String {
    var text = ""
    for report in reports {
      let tag = NDJSONTag(container: report.container, id: report.id)
      if !streamed {
        var buffer: [UInt8] = []
        for entry in report.entries ?? [] { entry.appendNDJSONLine(to: &buffer, tag: tag) }
        text += String(decoding: buffer, as: UTF8.self)
      }
      for finding in report.findings {
        guard case .object(var object) = finding.json(type: "finding") else { continue }
        tag.add(to: &object)
        text += JSONValue.object(object).serialized(pretty: false) + "\n"
      }
      text += report.ndjsonSummaryLine().serialized(pretty: false) + "\n"
    }
    if isCollection {
      let total: JSONValue = .object([
        "type": .string("total"),
        "schemaVersion": .integer(AppDataVersion.auditSchemaVersion),
        "tool": AppDataVersion.toolJSON,
        "source": .string(source),
        "containers": .unsigned(UInt64(reports.count)),
        "summary": summaryJSON(),
      ])
      guard case .object(var members) = total else { return text }
      if let info = backupInfo { members["backup"] = info.json() }
      text += JSONValue.object(members).serialized(pretty: false) + "\n"
    }
    return text
  }
}

extension AuditReport {
  /// One element of a report of many's `containers`: the report without the document header.
  func containerJSON() -> JSONValue {
    guard case .object(var object) = jsonDocument() else { return .null }
    object["schemaVersion"] = nil
    object["tool"] = nil
    return .object(object)
  }
}

extension BackupInfo {
  /// `{path, deviceName, productVersion, date, snapshotState, isFullBackup, isEncrypted}`, null where the plists say nothing.
  func json() -> JSONValue {
    .object([
      "path": .string(path),
      "deviceName": deviceName.map { .string($0) } ?? .null,
      "productVersion": productVersion.map { .string($0) } ?? .null,
      "date": date.map { .string($0) } ?? .null,
      "snapshotState": snapshotState.map { .string($0) } ?? .null,
      "isFullBackup": isFullBackup.map { .bool($0) } ?? .null,
      "isEncrypted": .bool(isEncrypted),
    ])
  }
}
