import AppDataSystem
import AppDataCore

// MARK: - JSON and NDJSON documents (Docs/audit.schema.json)

extension AuditReport {
  /// The `--format json` document.
  public func jsonDocument() -> JSONValue {
    var document = header()
    document["summary"] = summaryJSON()
    document["limits"] = limitsJSON()
    document["findings"] = .array(findings.map { $0.json() })
    document["largest"] = .array(largest.map { $0.json() })
    document.merge(platform.jsonMembers) { _, new in new }
    document["destinations"] = destinationsJSON()
    if let entries { document["entries"] = entriesJSON(entries) }
    document["budgets"] = budgetsJSON()
    document["folders"] = folders.json()
    if let comparison { document["baseline"] = comparison.json() }
    if let backupComparison { document["backupComparison"] = backupComparison.json() }
    return .object(document)
  }

  /// The listed files; where the platform spells its destinations out, each with the ids of
  /// those that carry it.
  private func entriesJSON(_ entries: ListedEntries) -> JSONValue {
    guard platform.itemizesDestinations else { return entries.json }
    return .array(entries.map { entry in
      guard case .object(var object) = entry.json() else { return entry.json() }
      object["destinations"] = .array((platform.carriers(of: entry.path) ?? []).map { .string($0) })
      return .object(object)
    })
  }

  /// `{ID: {...}}`: each destination's `carried`, `reason`, `rules`, `files`, `bytes`,
  /// `measured` (the platform's own measure) and `quota`.
  func destinationsJSON() -> JSONValue {
    var members: [JSONKey: JSONValue] = [:]
    for destination in destinations {
      members[JSONKey(destination.id)] = .object([
        "carried": .bool(destination.carried), "reason": destination.reason.map { .string($0) } ?? .null,
        "rules": .string(destination.rules), "files": .unsigned(destination.files), "bytes": .unsigned(destination.bytes),
        "measured": .unsigned(destination.measured), "quota": .optional(destination.quota),
      ])
    }
    return .object(members)
  }

  func budgetsJSON() -> JSONValue {
    .array(budgets.map { item in
      .object(["path": .string(item.budget.path.pattern), "maxBytes": .unsigned(item.budget.maxBytes), "bytes": .unsigned(item.bytes)])
    })
  }

  /// The last NDJSON line: everything the JSON document holds but the arrays streamed before it.
  public func ndjsonSummaryLine() -> JSONValue {
    var line = header()
    line["type"] = .string("summary")
    line["summary"] = summaryJSON()
    line["limits"] = limitsJSON()
    line["largest"] = .array(largest.map { $0.json() })
    line["budgets"] = budgetsJSON()
    line["folders"] = folders.json()
    line.merge(platform.jsonMembers) { _, new in new }
    line["destinations"] = destinationsJSON()
    if let comparison { line["baseline"] = comparison.json() }
    if let backupComparison { line["backupComparison"] = backupComparison.json() }
    return .object(line)
  }

  private func header() -> [JSONKey: JSONValue] {
    var header: [JSONKey: JSONValue] = [
      "schemaVersion": .integer(AppDataVersion.auditSchemaVersion),
      "tool": AppDataVersion.toolJSON,
      "container": .string(container),
      "id": id.map { .string($0) } ?? .null,
      "kind": .string(kind.rawValue),
    ]
    if let name = platform.reportedName { header["platform"] = .string(name) }
    return header
  }

  func summaryJSON() -> JSONValue {
    var categoryObjects: [JSONKey: JSONValue] = [:]
    for category in Category.allCases {
      categoryObjects[category.rawValue] = (categories[category] ?? CategoryTotals()).json()
    }
    return .object([
      "categories": .object(categoryObjects),
      "backup": .object(["files": .unsigned(backup.files), "bytes": .unsigned(backup.bytes)]),
      "directories": .unsigned(directories),
    ])
  }

  func limitsJSON() -> JSONValue {
    .object(["maxFileSize": .optional(maxFileSize), "maxBackupSize": .optional(maxBackupSize)])
  }
}

extension BaselineComparison {
  func json() -> JSONValue {
    func change(_ before: UInt64, _ after: UInt64) -> [JSONKey: JSONValue] {
      ["before": .unsigned(before), "after": .unsigned(after), "delta": .integer(Int64(bitPattern: after &- before))]
    }
    var backup = change(backupBefore, backupAfter)
    backup["percent"] = percent.map { .double($0) } ?? .null
    var perCategory: [JSONKey: JSONValue] = [:]
    for (category, figures) in categories { perCategory[category.rawValue] = .object(change(figures.before, figures.after)) }
    return .object([
      "file": .string(file),
      "backup": .object(backup),
      "categories": .object(perCategory),
      "growingPaths": .array((growingFolders + growing).map { item in
        var object = JSONValue.pathFields(item.path)
        for (key, value) in change(item.before, item.after) { object[key] = value }
        object["kind"] = .string(item.isFolder ? "folder" : "file")
        if !item.isFolder {
          // new: not in the baseline; null: the baseline names only its largest files, and
          // this one was at most `before` bytes then, or not there (`delta` is then the least growth).
          object["new"] = item.beforeIsBound ? .null : .bool(item.isNew)
        }
        return .object(object)
      }),
    ])
  }
}

extension CategoryTotals {
  func json() -> JSONValue {
    .object(["files": .unsigned(files), "bytes": .unsigned(bytes), "allocatedBytes": .unsigned(allocatedBytes)])
  }
}

extension Finding {
  /// `{rule, severity, path, message, remedy, bytes?, limit?}`; `type` is added for NDJSON.
  public func json(type: String? = nil) -> JSONValue {
    var object = JSONValue.pathFields(path)
    object["rule"] = .string(rule.id)
    object["severity"] = .string(severity.rawValue)
    object["message"] = .string(message)
    object["remedy"] = .string(rule.remedy)
    if let bytes { object["bytes"] = .unsigned(bytes) }
    if let limit { object["limit"] = .unsigned(limit) }
    if let type { object["type"] = .string(type) }
    return .object(object)
  }
}

extension LargeFile {
  func json() -> JSONValue {
    var object = JSONValue.pathFields(path)
    object["bytes"] = .unsigned(bytes)
    object["category"] = .string(category.rawValue)
    return .object(object)
  }
}

extension FolderSummary {
  /// `{"complete": Bool, "bytes": {"Documents": N, "Documents/Photos": N, …}}`: one member per
  /// folder, keyed by its path (a name that is not UTF-8 is written with U+FFFD, the same way in
  /// every report, so baselines still match it).
  func json() -> JSONValue {
    var members: [JSONKey: JSONValue] = [:]
    for (path, bytes) in folders { members[String(decoding: path, as: UTF8.self)] = .unsigned(bytes) }
    return .object(["complete": .bool(isComplete), "bytes": .object(members)])
  }
}
