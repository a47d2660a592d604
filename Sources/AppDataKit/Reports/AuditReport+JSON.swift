import Foundation  // base64 only

// MARK: - JSON and NDJSON documents (Docs/audit.schema.json)

extension AuditReport {
  /// The `--format json` document.
  public func jsonDocument() -> JSONValue {
    var document = header()
    document["summary"] = summaryJSON()
    document["limits"] = limitsJSON()
    document["findings"] = .array(findings.map { $0.json() })
    document["largest"] = .array(largest.map { $0.json() })
    if let entries { document["entries"] = .array(entries.map { $0.json() }) }
    document["budgets"] = budgetsJSON()
    if let comparison { document["baseline"] = comparison.json() }
    if let backupComparison { document["backupComparison"] = backupComparison.json() }
    return .object(document)
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
    if let comparison { line["baseline"] = comparison.json() }
    if let backupComparison { line["backupComparison"] = backupComparison.json() }
    return .object(line)
  }

  private func header() -> [String: JSONValue] {
    [
      "schemaVersion": .integer(AppDataVersion.auditSchemaVersion),
      "tool": AppDataVersion.toolJSON,
      "container": .string(container),
      "id": id.map { .string($0) } ?? .null,
      "kind": .string(kind.rawValue),
    ]
  }

  func summaryJSON() -> JSONValue {
    var categoryObjects: [String: JSONValue] = [:]
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
    func change(_ before: UInt64, _ after: UInt64) -> [String: JSONValue] {
      ["before": .unsigned(before), "after": .unsigned(after), "delta": .integer(Int64(bitPattern: after &- before))]
    }
    var backup = change(backupBefore, backupAfter)
    backup["percent"] = percent.map { .double($0) } ?? .null
    var perCategory: [String: JSONValue] = [:]
    for (category, figures) in categories { perCategory[category.rawValue] = .object(change(figures.before, figures.after)) }
    return .object([
      "file": .string(file),
      "backup": .object(backup),
      "categories": .object(perCategory),
      "growingPaths": .array(growing.map { item in
        var object = JSONValue.pathFields(item.path)
        for (key, value) in change(item.before, item.after) { object[key] = value }
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
  /// `{rule, severity, path, message, bytes?}`; `type` is added for NDJSON.
  public func json(type: String? = nil) -> JSONValue {
    var object = JSONValue.pathFields(path)
    object["rule"] = .string(rule.id)
    object["severity"] = .string(severity.rawValue)
    object["message"] = .string(message)
    if let bytes { object["bytes"] = .unsigned(bytes) }
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

extension ListedEntry {
  /// `{path, category, bytes, allocatedBytes, marker, excludedBy}`; `type` is added for NDJSON.
  public func json(type: String? = nil) -> JSONValue {
    var object = JSONValue.pathFields(path)
    object["category"] = .string(category.rawValue)
    object["bytes"] = .unsigned(bytes)
    object["allocatedBytes"] = .unsigned(allocatedBytes)
    object["marker"] = marker.name.map { .string($0) } ?? .null
    object["excludedBy"] = excludedBy.map { .string(RelativePath.display($0)) } ?? .null
    if let excludedBy, !RelativePath.isValidUTF8(excludedBy) {
      object["excludedByBase64"] = .string(Data(excludedBy).base64EncodedString())
    }
    if let type { object["type"] = .string(type) }
    return .object(object)
  }
}

/// The fields that name a line's container in the NDJSON of a report of many containers:
/// `container` (its path) and `id`, serialized once.
public struct NDJSONTag: Sendable {
  public let container: String
  public let id: String?
  /// `"container":"…"` and `"id":…` as JSON bytes.
  let containerField: [UInt8]
  let idField: [UInt8]

  public init(container: String, id: String?) {
    self.container = container
    self.id = id
    containerField = Array(#""container":"#.utf8) + Array(JSONValue.string(container).serialized(pretty: false).utf8)
    idField = Array(#""id":"#.utf8) + Array((id.map { JSONValue.string($0) } ?? .null).serialized(pretty: false).utf8)
  }

  /// Adds the fields to a line's object.
  func add(to object: inout [String: JSONValue]) {
    object["container"] = .string(container)
    object["id"] = id.map { .string($0) } ?? .null
  }
}

extension ListedEntry {
  /// Appends `{"type":"entry",…}` and a newline: the same bytes as `json(type: "entry")`
  /// serialized compactly, written without building a JSON tree (the NDJSON stream's hot path).
  func appendNDJSONLine(to buffer: inout [UInt8], tag: NDJSONTag? = nil) {
    guard RelativePath.isPlainJSON(path), RelativePath.isPlainJSON(excludedBy ?? []) else {
      guard case .object(var object) = json(type: "entry") else { return }
      tag?.add(to: &object)
      buffer.append(contentsOf: JSONValue.object(object).serialized(pretty: false).utf8)
      buffer.append(0x0A)
      return
    }
    buffer.append(contentsOf: #"{"allocatedBytes":"#.utf8)
    JSONValue.writeDecimal(allocatedBytes, to: &buffer)
    buffer.append(contentsOf: #","bytes":"#.utf8)
    JSONValue.writeDecimal(bytes, to: &buffer)
    buffer.append(contentsOf: #","category":""#.utf8)
    buffer.append(contentsOf: category.rawValue.utf8)
    buffer.append(0x22)
    if let tag {
      buffer.append(0x2C)
      buffer.append(contentsOf: tag.containerField)
    }
    buffer.append(contentsOf: #","excludedBy":"#.utf8)
    if let excludedBy {
      buffer.append(0x22)
      buffer.append(contentsOf: excludedBy)
      buffer.append(0x22)
    } else {
      buffer.append(contentsOf: "null".utf8)
    }
    if let tag {
      buffer.append(0x2C)
      buffer.append(contentsOf: tag.idField)
    }
    buffer.append(contentsOf: #","marker":"#.utf8)
    if let name = marker.name {
      buffer.append(0x22)
      buffer.append(contentsOf: name.utf8)
      buffer.append(0x22)
    } else {
      buffer.append(contentsOf: "null".utf8)
    }
    buffer.append(contentsOf: #","path":""#.utf8)
    buffer.append(contentsOf: path)
    buffer.append(contentsOf: #"","type":"entry"}"#.utf8)
    buffer.append(0x0A)
  }
}

extension RelativePath {
  /// True when the bytes can go into a JSON string as they are: printable ASCII without `"` or `\`.
  static func isPlainJSON(_ bytes: [UInt8]) -> Bool {
    bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }
  }
}

extension JSONValue {
  /// `path` (invalid UTF-8 replaced by U+FFFD) and, only when something was replaced,
  /// `pathBase64` with the exact bytes.
  static func pathFields(_ path: [UInt8]) -> [String: JSONValue] {
    var fields: [String: JSONValue] = [:]
    fields.reserveCapacity(8)  // callers add their fields: one allocation, no rehashing
    fields["path"] = .string(RelativePath.display(path))
    if !RelativePath.isValidUTF8(path) {
      fields["pathBase64"] = .string(Data(path).base64EncodedString())
    }
    return fields
  }
}
