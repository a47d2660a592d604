import AppDataSystem

extension ListedEntry {
  /// `{path, category, bytes, allocatedBytes, marker, excludedBy}`; `type` is added for NDJSON.
  package func json(type: String? = nil) -> JSONValue {
    var object = JSONValue.pathFields(path)
    object["category"] = .string(category.rawValue)
    object["bytes"] = .unsigned(bytes)
    object["allocatedBytes"] = .unsigned(allocatedBytes)
    object["marker"] = marker.name.map { .string($0) } ?? .null
    object["excludedBy"] = excludedBy.map { .string(RelativePath.display($0)) } ?? .null
    if let excludedBy, !RelativePath.isValidUTF8(excludedBy) {
      object["excludedByBase64"] = .string(Base64.encode(excludedBy))
    }
    if let type { object["type"] = .string(type) }
    return .object(object)
  }
}

extension ListedEntries {
  /// The `entries` array: the same text as `.array(map { $0.json() })`, written straight from
  /// the compact storage (a million entries are never a million JSON values in memory).
  package var json: JSONValue {
    let entries = self
    return .written(JSONWriter { output, pretty, indent in entries.writeJSON(to: &output, pretty: pretty, indent: indent) })
  }

  private func writeJSON(to output: inout JSONOutput, pretty: Bool, indent: Int) {
    if isEmpty {
      output.bytes.append(contentsOf: "[]".utf8)
      return
    }
    output.bytes.append(0x5B)
    // What comes before each member's value, and after the last, at this indentation: a
    // handful of appends an entry.
    func member(_ name: String, first: Bool = false) -> [UInt8] {
      var bytes: [UInt8] = first ? [0x7B] : [0x2C]
      if pretty { JSONValue.newline(indent + 2, to: &bytes) }
      bytes.append(contentsOf: "\"\(name)\":".utf8)
      if pretty { bytes.append(0x20) }
      return bytes
    }
    var end: [UInt8] = [0x22]
    if pretty { JSONValue.newline(indent + 1, to: &end) }
    end.append(0x7D)
    let separators = (
      allocatedBytes: member("allocatedBytes", first: true), bytes: member("bytes"), category: member("category") + [0x22],
      excludedBy: [0x22] + member("excludedBy"), marker: member("marker"), path: member("path") + [0x22], end: end)
    var isFirst = true
    forEachInPlace { path, excludedBy, category, bytes, allocatedBytes, marker in
      if !isFirst { output.bytes.append(0x2C) }
      isFirst = false
      if pretty { JSONValue.newline(indent + 1, to: &output.bytes) }
      guard RelativePath.isPlainJSON(path), excludedBy.map(RelativePath.isPlainJSON) ?? true else {
        // Bytes a JSON string cannot hold as they are: the general path (escapes, base64).
        let entry = ListedEntry(path: Array(path), category: category, bytes: bytes, allocatedBytes: allocatedBytes,
                                marker: marker, excludedBy: excludedBy.map { Array($0) })
        entry.json().write(to: &output, pretty: pretty, indent: indent + 1)
        return
      }
      // The members in sorted order, as `JSONValue.object` writes them.
      output.bytes.append(contentsOf: separators.allocatedBytes)
      JSONValue.writeDecimal(allocatedBytes, to: &output.bytes)
      output.bytes.append(contentsOf: separators.bytes)
      JSONValue.writeDecimal(bytes, to: &output.bytes)
      output.bytes.append(contentsOf: separators.category)
      output.bytes.append(contentsOf: category.rawValue.utf8)
      output.bytes.append(contentsOf: separators.excludedBy)
      if let excludedBy {
        output.bytes.append(0x22)
        output.bytes.append(contentsOf: excludedBy)
        output.bytes.append(0x22)
      } else {
        output.bytes.append(contentsOf: "null".utf8)
      }
      output.bytes.append(contentsOf: separators.marker)
      if let name = marker.name { JSONValue.writeString(name, to: &output.bytes) } else { output.bytes.append(contentsOf: "null".utf8) }
      output.bytes.append(contentsOf: separators.path)
      output.bytes.append(contentsOf: path)
      output.bytes.append(contentsOf: separators.end)
      output.flushIfFull()
    }
    if pretty { JSONValue.newline(indent, to: &output.bytes) }
    output.bytes.append(0x5D)
  }
}

/// The fields that name a line's container in the NDJSON of a report of many containers:
/// `container` (its path) and `id`, serialized once.
package struct NDJSONTag: Sendable {
  package let container: String
  package let id: String?
  /// `"container":"…"` and `"id":…` as JSON bytes.
  package let containerField: [UInt8]
  package let idField: [UInt8]

  package init(container: String, id: String?) {
    self.container = container
    self.id = id
    containerField = Array(#""container":"#.utf8) + Array(JSONValue.string(container).serialized(pretty: false).utf8)
    idField = Array(#""id":"#.utf8) + Array((id.map { JSONValue.string($0) } ?? .null).serialized(pretty: false).utf8)
  }

  /// Adds the fields to a line's object.
  package func add(to object: inout [JSONKey: JSONValue]) {
    object["container"] = .string(container)
    object["id"] = id.map { .string($0) } ?? .null
  }
}

extension ListedEntry {
  /// Appends `{"type":"entry",…}` and a newline: the same bytes as `json(type: "entry")`
  /// serialized compactly, written without building a JSON tree (the NDJSON stream's hot path).
  package func appendNDJSONLine(to buffer: inout [UInt8], tag: NDJSONTag? = nil) {
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
  package static func isPlainJSON(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBufferPointer(isPlainJSON)
  }

  package static func isPlainJSON(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    bytes.allSatisfy(isPlainJSON)
  }

  /// One byte of such a path.
  @inlinable package static func isPlainJSON(_ byte: UInt8) -> Bool {
    byte >= 0x20 && byte < 0x7F && byte != 0x22 && byte != 0x5C
  }
}

extension JSONValue {
  /// `path` (invalid UTF-8 replaced by U+FFFD) and, only when something was replaced,
  /// `pathBase64` with the exact bytes.
  package static func pathFields(_ path: [UInt8]) -> [JSONKey: JSONValue] {
    var fields: [JSONKey: JSONValue] = [:]
    fields.reserveCapacity(8)  // callers add their fields: one allocation, no rehashing
    fields["path"] = .string(RelativePath.display(path))
    if !RelativePath.isValidUTF8(path) {
      fields["pathBase64"] = .string(Base64.encode(path))
    }
    return fields
  }
}
