/// A JSON document built in memory and written with sorted keys, so output is
/// byte-for-byte reproducible. Written by hand: Foundation's encoder on Linux escapes
/// `/` and cannot stream.
public indirect enum JSONValue: Equatable, Sendable {
  case null
  case bool(Bool)
  case integer(Int64)
  case unsigned(UInt64)
  case double(Double)
  case string(String)
  case array([JSONValue])
  case object([String: JSONValue])

  /// Compact (one line, for NDJSON) or pretty (two-space indentation).
  public func serialized(pretty: Bool) -> String {
    var output = ""
    write(to: &output, pretty: pretty, indent: 0)
    return output
  }

  private func write(to output: inout String, pretty: Bool, indent: Int) {
    switch self {
    case .null: output += "null"
    case .bool(let value): output += value ? "true" : "false"
    case .integer(let value): output += String(value)
    case .unsigned(let value): output += String(value)
    case .double(let value): output += value.isFinite ? JSONValue.format(value) : "null"
    case .string(let value): JSONValue.writeString(value, to: &output)
    case .array(let values):
      if values.isEmpty { output += "[]"; return }
      output += "["
      for (index, value) in values.enumerated() {
        if index > 0 { output += "," }
        if pretty { output += "\n" + String(repeating: "  ", count: indent + 1) }
        value.write(to: &output, pretty: pretty, indent: indent + 1)
      }
      if pretty { output += "\n" + String(repeating: "  ", count: indent) }
      output += "]"
    case .object(let members):
      if members.isEmpty { output += "{}"; return }
      output += "{"
      for (index, key) in members.keys.sorted().enumerated() {
        if index > 0 { output += "," }
        if pretty { output += "\n" + String(repeating: "  ", count: indent + 1) }
        JSONValue.writeString(key, to: &output)
        output += pretty ? ": " : ":"
        members[key]!.write(to: &output, pretty: pretty, indent: indent + 1)
      }
      if pretty { output += "\n" + String(repeating: "  ", count: indent) }
      output += "}"
    }
  }

  /// RFC 8259 string escaping; non-ASCII stays UTF-8.
  static func writeString(_ value: String, to output: inout String) {
    output += "\""
    for scalar in value.unicodeScalars {
      switch scalar {
      case "\"": output += "\\\""
      case "\\": output += "\\\\"
      case "\n": output += "\\n"
      case "\r": output += "\\r"
      case "\t": output += "\\t"
      case _ where scalar.value < 0x20 || scalar.value == 0x7F:
        let hex = String(scalar.value, radix: 16)
        output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: output.unicodeScalars.append(scalar)
      }
    }
    output += "\""
  }
}

extension JSONValue {
  /// A double with at most 4 decimals and no exponent (`12.5`, `0.0833`), stable across platforms.
  static func format(_ value: Double) -> String {
    let scaled = (value * 10_000).rounded()
    if abs(scaled) >= 9e15 { return String(Int64(value.rounded())) }
    let integer = Int64(scaled)
    let sign = integer < 0 ? "-" : ""
    let magnitude = integer.magnitude
    var text = sign + String(magnitude / 10_000)
    var fraction = String(magnitude % 10_000)
    if fraction != "0" {
      fraction = String(repeating: "0", count: 4 - fraction.count) + fraction
      while fraction.hasSuffix("0") { fraction.removeLast() }
      text += "." + fraction
    }
    return text
  }

  /// `.unsigned(value)` or `.null`.
  static func optional(_ value: UInt64?) -> JSONValue { value.map { .unsigned($0) } ?? .null }
}
