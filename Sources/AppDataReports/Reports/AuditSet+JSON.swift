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
    var document: [JSONKey: JSONValue] = [
      "schemaVersion": .integer(AppDataVersion.auditSchemaVersion),
      "tool": AppDataVersion.toolJSON,
      "source": sources.isEmpty ? .string(source) : .null,
      "summary": summaryJSON(),
    ]
    if !sources.isEmpty { document["sources"] = .array(sources.map { .string($0) }) }
    // A folder of backups: `backups`, each with its containers; containers beside them (or of
    // other PATHs) in `containers`, which a report of no backup always has.
    let grouping = grouping()
    if backups.isEmpty || !grouping.loose.isEmpty { document["containers"] = .array(grouping.loose.map { reports[$0].containerJSON() }) }
    if !backups.isEmpty {
      document["backups"] = .array(backups.indices.map { backupJSON($0, grouping) })
      document["history"] = historyJSON(grouping)
    }
    if let info = backupInfo { document["backup"] = info.json() }
    if let changes = baselineChanges {
      document["baselineContainers"] = .object(["file": .string(changes.file), "new": .array(changes.new.map { .string($0) }),
                                                "removed": .array(changes.removed.map { .string($0) })])
    }
    document["policy"] = policy
    return .object(document)
  }

  /// One element of `backups`: what the backup is, whether it was read, its figures and containers.
  func backupJSON(_ index: Int, _ grouping: Grouping) -> JSONValue {
    let backup = backups[index]
    let info = backup.info
    func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
    var object = backupLine(backup)
    object["device"] = text(info?.deviceName)
    object["iosVersion"] = text(info?.productVersion)
    object["date"] = text(info?.date)
    object["encrypted"] = info.map { .bool($0.isEncrypted) } ?? .null
    object["snapshotState"] = text(info?.snapshotState)
    let containers = grouping.containers[index]
    object["summary"] = backup.status == .audited ? Self.summaryJSON(of: containers, in: reports) : .null
    object["containers"] = backup.status == .audited ? .array(containers.map { reports[$0].containerJSON() }) : .null
    return .object(object)
  }

  /// The members every backup's JSON and NDJSON object starts with.
  private func backupLine(_ backup: BackupAudit) -> [JSONKey: JSONValue] {
    [
      "path": .string(backup.path),
      "udid": .string(backup.udid),
      "status": .string(backup.status.rawValue),
      "message": backup.message.map { .string($0) } ?? .null,
    ]
  }

  /// The summary of every container added up, in a single report's summary shape.
  func summaryJSON() -> JSONValue { Self.summaryJSON(of: reports) }

  static func summaryJSON(of reports: [AuditReport]) -> JSONValue { summaryJSON(of: reports.indices, in: reports) }

  static func summaryJSON(of indices: some Sequence<Int>, in reports: [AuditReport]) -> JSONValue {
    let sums = Self.sums(of: indices, in: reports)
    var categoryObjects: [JSONKey: JSONValue] = [:]
    for category in Category.allCases { categoryObjects[category.rawValue] = (sums.categories[category] ?? CategoryTotals()).json() }
    return .object([
      "categories": .object(categoryObjects),
      "backup": .object(["files": .unsigned(sums.backup.files), "bytes": .unsigned(sums.backup.bytes)]),
      "directories": .unsigned(sums.directories),
    ])
  }

  /// NDJSON: per container, its entries (unless streamed), its findings and its summary line,
  /// every line naming its container; for a report of many, a last `total` line.
  public func ndjson(streamed: Bool) -> String {
    var text = ""
    // A folder of backups: a line per backup first, what it is and whether it was read (its
    // containers' lines name it in their `container`).
    let grouping = backups.isEmpty ? nil : grouping()
    for index in backups.indices {
      guard let grouping, case .object(var object) = backupJSON(index, grouping) else { continue }
      object["containers"] = nil
      object["type"] = .string("backup")
      text += JSONValue.object(object).serialized(pretty: false) + "\n"
    }
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
        "source": sources.isEmpty ? .string(source) : .null,
        "containers": .unsigned(UInt64(reports.count)),
        "summary": summaryJSON(),
      ])
      guard case .object(var members) = total else { return text }
      if let info = backupInfo { members["backup"] = info.json() }
      if !sources.isEmpty { members["sources"] = .array(sources.map { .string($0) }) }
      if !backups.isEmpty { members["backups"] = .unsigned(UInt64(backups.count)) }
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
