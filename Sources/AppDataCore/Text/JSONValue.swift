import AppDataSystem
/// A JSON document built in memory and written with sorted keys, so output is
/// byte-for-byte reproducible. Written by hand: Foundation's encoder on Linux escapes
/// `/` and cannot stream.
///
/// Not `indirect`: arrays and dictionaries already hold their elements out of line, and an
/// indirect enum would allocate a box for every value, strings and numbers included.
public enum JSONValue: Equatable, Sendable {
  case null
  case bool(Bool)
  case integer(Int64)
  case unsigned(UInt64)
  case double(Double)
  case string(String)
  case array([JSONValue])
  /// Members by `JSONKey`: names equal by their bytes, so `café` in NFC and in NFD are two
  /// members, as the JSON standard and every other reader keep them.
  case object([JSONKey: JSONValue])
  /// A value that writes itself: a long array written straight from compact storage (a
  /// listing of a million files) rather than built as a million values first.
  case written(JSONWriter)

  /// Compact (one line, for NDJSON) or pretty (two-space indentation).
  public func serialized(pretty: Bool) -> String {
    String(decoding: serializedBytes(pretty: pretty), as: UTF8.self)
  }

  /// The same text as `serialized(pretty:)`, as UTF-8 bytes. Written into a byte buffer rather
  /// than a `String`: appending to a String checks and re-counts it at every step, which made
  /// a 200 KB report take 12 ms to write, longer than a tenth of the walk it reports on.
  public func serializedBytes(pretty: Bool) -> [UInt8] {
    var output = JSONOutput(sink: nil)
    output.bytes.reserveCapacity(4096)
    write(to: &output, pretty: pretty, indent: 0)
    return output.bytes
  }

  /// The same bytes as `serializedBytes(pretty:)`, handed to `sink` in chunks of about
  /// `JSONOutput.chunkSize` as they are written: a document of any length in bounded memory.
  public func serialize(pretty: Bool, to sink: ([UInt8]) -> Void) {
    withoutActuallyEscaping(sink) { sink in
      var output = JSONOutput(sink: sink)
      output.bytes.reserveCapacity(JSONOutput.chunkSize + 4096)
      write(to: &output, pretty: pretty, indent: 0)
      output.flush()
    }
  }

  package func write(to output: inout JSONOutput, pretty: Bool, indent: Int) {
    switch self {
    case .null: output.bytes.append(contentsOf: "null".utf8)
    case .bool(let value): output.bytes.append(contentsOf: (value ? "true" : "false").utf8)
    case .integer(let value):
      if value < 0 { output.bytes.append(0x2D) }
      JSONValue.writeDecimal(value.magnitude, to: &output.bytes)
    case .unsigned(let value): JSONValue.writeDecimal(value, to: &output.bytes)
    case .double(let value): output.bytes.append(contentsOf: (value.isFinite ? JSONValue.format(value) : "null").utf8)
    case .string(let value): JSONValue.writeString(value, to: &output.bytes)
    case .array(let values):
      if values.isEmpty { output.bytes.append(contentsOf: "[]".utf8); return }
      output.bytes.append(0x5B)
      // Loops by index, here and below: `enumerated()` and slices are generic code a debug
      // build runs unspecialized, a fifth of writing a report of 10,000 backups (issue 49).
      for index in 0..<values.count {
        if index > 0 { output.bytes.append(0x2C) }
        if pretty { JSONValue.newline(indent + 1, to: &output.bytes) }
        values[index].write(to: &output, pretty: pretty, indent: indent + 1)
        output.flushIfFull()
      }
      if pretty { JSONValue.newline(indent, to: &output.bytes) }
      output.bytes.append(0x5D)
    case .object(let members):
      if members.isEmpty { output.bytes.append(contentsOf: "{}".utf8); return }
      output.bytes.append(0x7B)
      let sorted = members.sorted(by: { $0.key < $1.key })
      for index in 0..<sorted.count {
        if index > 0 { output.bytes.append(0x2C) }
        if pretty { JSONValue.newline(indent + 1, to: &output.bytes) }
        JSONValue.writeString(sorted[index].key.string, to: &output.bytes)
        output.bytes.append(0x3A)
        if pretty { output.bytes.append(0x20) }
        sorted[index].value.write(to: &output, pretty: pretty, indent: indent + 1)
      }
      if pretty { JSONValue.newline(indent, to: &output.bytes) }
      output.bytes.append(0x7D)
    case .written(let writer):
      writer.write(&output, pretty, indent)
    }
  }

  package static func newline(_ indent: Int, to output: inout [UInt8]) {
    let count = 1 + 2 * indent
    if count <= newlineAndSpaces.count {
      newlineAndSpaces.withUnsafeBufferPointer { output.append(contentsOf: UnsafeBufferPointer(start: $0.baseAddress, count: count)) }
    } else {
      output.append(0x0A)
      output.append(contentsOf: repeatElement(0x20, count: 2 * indent))
    }
  }

  /// A newline and the spaces of the usual indentations, appended as one slice.
  private static let newlineAndSpaces: [UInt8] = [0x0A] + [UInt8](repeating: 0x20, count: 64)

  /// Decimal digits without going through `String`.
  package static func writeDecimal(_ value: UInt64, to output: inout [UInt8]) {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
      var rest = value
      var start = digits.count
      repeat {
        start -= 1
        digits[start] = 0x30 + UInt8(rest % 10)
        rest /= 10
      } while rest > 0
      output.append(contentsOf: UnsafeBufferPointer(start: digits.baseAddress! + start, count: digits.count - start))
    }
  }

  /// RFC 8259 string escaping; non-ASCII stays UTF-8 (a Swift string is always valid UTF-8),
  /// but for the C1 controls U+0080 to U+009F, which a terminal may act on (U+009B is CSI) as it
  /// acts on ESC: written `\u0080` to `\u009f`, as the C0 controls and DEL are (JSON allows both
  /// spellings; a parser reads the same string).
  package static func writeString(_ value: String, to output: inout [UInt8]) {
    output.append(0x22)
    var value = value
    value.withUTF8 { bytes in
      guard let base = bytes.baseAddress else { return }
      var plainStart = 0
      var index = 0
      while index < bytes.count {
        let byte = base[index]
        index += 1
        let isC1 = byte == 0xC2 && index < bytes.count && base[index] >= 0x80 && base[index] <= 0x9F
        guard byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F || isC1 else { continue }
        output.append(contentsOf: UnsafeBufferPointer(start: base + plainStart, count: index - 1 - plainStart))
        if isC1 {
          let hex = Array("0123456789abcdef".utf8)
          output.append(contentsOf: #"\u00"#.utf8)
          output.append(hex[Int(base[index] >> 4)])
          output.append(hex[Int(base[index] & 0x0F)])
          index += 1
          plainStart = index
          continue
        }
        plainStart = index
        switch byte {
        case 0x22: output.append(contentsOf: #"\""#.utf8)
        case 0x5C: output.append(contentsOf: #"\\"#.utf8)
        case 0x0A: output.append(contentsOf: #"\n"#.utf8)
        case 0x0D: output.append(contentsOf: #"\r"#.utf8)
        case 0x09: output.append(contentsOf: #"\t"#.utf8)
        default:
          let hex = Array("0123456789abcdef".utf8)
          output.append(contentsOf: #"\u00"#.utf8)
          output.append(hex[Int(byte >> 4)])
          output.append(hex[Int(byte & 0x0F)])
        }
      }
      output.append(contentsOf: UnsafeBufferPointer(start: base + plainStart, count: bytes.count - plainStart))
    }
    output.append(0x22)
  }
}

/// The bytes a document is written into, handed to a sink whenever they pass `chunkSize` (a
/// writer calls `flushIfFull()` between elements), or kept whole when there is no sink.
package struct JSONOutput {
  package static let chunkSize = 1 << 20
  package var bytes: [UInt8] = []
  let sink: (([UInt8]) -> Void)?

  package mutating func flushIfFull() {
    if bytes.count >= Self.chunkSize { flush() }
  }

  mutating func flush() {
    guard let sink, !bytes.isEmpty else { return }
    sink(bytes)
    bytes.removeAll(keepingCapacity: true)
  }
}

/// What `JSONValue.written` holds: code that writes the value's text, pretty (at `indent`) or
/// compact, exactly as the equivalent built value would be written.
public struct JSONWriter: Sendable, Equatable {
  let write: @Sendable (_ output: inout JSONOutput, _ pretty: Bool, _ indent: Int) -> Void

  package init(_ write: @escaping @Sendable (_ output: inout JSONOutput, _ pretty: Bool, _ indent: Int) -> Void) {
    self.write = write
  }

  /// Two writers are equal when they write the same text.
  public static func == (a: JSONWriter, b: JSONWriter) -> Bool {
    var left = JSONOutput(sink: nil)
    var right = JSONOutput(sink: nil)
    a.write(&left, false, 0)
    b.write(&right, false, 0)
    return left.bytes == right.bytes
  }
}

extension JSONValue {
  /// A double with at most 4 decimals and no exponent (`12.5`, `0.0833`), stable across platforms.
  package static func format(_ value: Double) -> String {
    let scaled = (value * 10_000).rounded()
    if abs(scaled) >= 9e15 {
      // Whole numbers an Int64 holds as digits; beyond (a config's 1e19 or 2^64) the exponent
      // form, which JSON allows too.
      let rounded = value.rounded()
      return abs(rounded) < 9.2e18 ? String(Int64(rounded)) : "\(rounded)"
    }
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
  package static func optional(_ value: UInt64?) -> JSONValue { value.map { .unsigned($0) } ?? .null }
}

/// A JSON object's member name: equal, hashed and sorted by its UTF-8 bytes, never by Unicode
/// canonical equivalence as `String` is, so two names that differ only in composition (two
/// folders `café`, NFC and NFD) stay two members, written in byte order.
public struct JSONKey: Hashable, Comparable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
  public let string: String

  public init(_ string: String) { self.string = string }
  public init(stringLiteral value: String) { self.string = value }

  public var description: String { string }

  public static func == (left: JSONKey, right: JSONKey) -> Bool { StringBytes.equal(left.string, right.string) }
  public static func < (left: JSONKey, right: JSONKey) -> Bool { StringBytes.precedes(left.string, right.string) }

  public func hash(into hasher: inout Hasher) { StringBytes.hash(string, into: &hasher) }
}

extension Dictionary where Key == JSONKey {
  /// The member named `name` (by its bytes).
  package subscript(name: String) -> Value? {
    get { self[JSONKey(name)] }
    set { self[JSONKey(name)] = newValue }
  }
}
