import AppDataSystem
/// A strict JSON parser (RFC 8259) for the files appdata reads: the policy file and baselines.
/// Written by hand so that it keeps integers exact, tells booleans from numbers, reports the
/// line of an error, and refuses input nested deeper than `maximumDepth` instead of
/// overflowing the stack.
package struct JSONParser {
  package struct ParseError: Error, Equatable, CustomStringConvertible {
    package var message: String
    package var line: Int
    package var description: String { "line \(line): \(message)" }
  }

  package static let maximumDepth = 256
  /// The most values (objects, arrays, strings, numbers, literals) one document may hold. Each
  /// costs up to a few hundred bytes once built, so this bounds memory at about 250 MB whatever
  /// the file: a 60 MB file of `{"":0},` would otherwise build 8.5 million dictionaries (1.8 GB)
  /// before a field is checked. An appdata report is far below it unless it lists every file of
  /// a container of more than about 200,000 (make baselines without `--list all`).
  package static let maximumValues = 1_000_000

  private let bytes: [UInt8]
  private var index = 0
  private var line = 1
  private var values = 0

  private init(_ bytes: [UInt8]) { self.bytes = bytes }

  /// Parses one JSON document (surrounding whitespace allowed).
  package static func parse(_ bytes: [UInt8]) throws(ParseError) -> JSONValue {
    var parser = JSONParser(bytes)
    // A UTF-8 byte order mark is tolerated.
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
    parser.skipWhitespace()
    let value = try parser.parseValue(depth: 0)
    parser.skipWhitespace()
    guard parser.index == bytes.count else { throw parser.error("unexpected text after the JSON document") }
    return value
  }

  private func error(_ message: String) -> ParseError { ParseError(message: message, line: line) }

  private mutating func skipWhitespace() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x0A: line += 1; index += 1
      case 0x20, 0x09, 0x0D: index += 1
      default: return
      }
    }
  }

  private mutating func parseValue(depth: Int) throws(ParseError) -> JSONValue {
    guard depth < Self.maximumDepth else { throw error("nested more than \(Self.maximumDepth) levels deep") }
    values += 1
    guard values <= Self.maximumValues else { throw error("holds more than \(Self.maximumValues) values, more than appdata reads from one file") }
    guard index < bytes.count else { throw error("unexpected end of input") }
    switch bytes[index] {
    case 0x7B: return try parseObject(depth: depth)
    case 0x5B: return try parseArray(depth: depth)
    case 0x22: return .string(try parseString())
    case 0x74: try expect("true"); return .bool(true)
    case 0x66: try expect("false"); return .bool(false)
    case 0x6E: try expect("null"); return .null
    case 0x2D, 0x30...0x39: return try parseNumber()
    default: throw error("unexpected character '\(TerminalText.escaped([bytes[index]]))'")
    }
  }

  private mutating func expect(_ word: String) throws(ParseError) {
    let expected = Array(word.utf8)
    guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
      throw error("invalid literal (expected \(word))")
    }
    index += expected.count
  }

  private mutating func parseObject(depth: Int) throws(ParseError) -> JSONValue {
    index += 1
    var members: [JSONKey: JSONValue] = [:]
    skipWhitespace()
    if index < bytes.count && bytes[index] == 0x7D { index += 1; return .object(members) }
    while true {
      skipWhitespace()
      guard index < bytes.count, bytes[index] == 0x22 else { throw error("expected a key in quotes") }
      let key = try parseString()
      skipWhitespace()
      guard index < bytes.count, bytes[index] == 0x3A else { throw error("expected ':' after key \"\(TerminalText.abbreviated(key))\"") }
      index += 1
      skipWhitespace()
      if members[key] != nil { throw error("duplicate key \"\(TerminalText.abbreviated(key))\"") }
      members[key] = try parseValue(depth: depth + 1)
      skipWhitespace()
      guard index < bytes.count else { throw error("unexpected end of input in an object") }
      if bytes[index] == 0x2C { index += 1; continue }
      if bytes[index] == 0x7D { index += 1; return .object(members) }
      throw error("expected ',' or '}'")
    }
  }

  private mutating func parseArray(depth: Int) throws(ParseError) -> JSONValue {
    index += 1
    var items: [JSONValue] = []
    skipWhitespace()
    if index < bytes.count && bytes[index] == 0x5D { index += 1; return .array(items) }
    while true {
      skipWhitespace()
      items.append(try parseValue(depth: depth + 1))
      skipWhitespace()
      guard index < bytes.count else { throw error("unexpected end of input in an array") }
      if bytes[index] == 0x2C { index += 1; continue }
      if bytes[index] == 0x5D { index += 1; return .array(items) }
      throw error("expected ',' or ']'")
    }
  }

  private mutating func parseString() throws(ParseError) -> String {
    index += 1
    var scalars = String.UnicodeScalarView()
    var start = index
    var raw: [UInt8] = []
    while true {
      guard index < bytes.count else { throw error("unterminated string") }
      let byte = bytes[index]
      if byte == 0x22 {
        raw.append(contentsOf: bytes[start..<index])
        index += 1
        break
      }
      if byte < 0x20 { throw error("control character in a string") }
      if byte == 0x5C {
        raw.append(contentsOf: bytes[start..<index])
        index += 1
        guard index < bytes.count else { throw error("unterminated escape") }
        let escape = bytes[index]
        index += 1
        switch escape {
        case 0x22: raw.append(0x22)
        case 0x5C: raw.append(0x5C)
        case 0x2F: raw.append(0x2F)
        case 0x62: raw.append(0x08)
        case 0x66: raw.append(0x0C)
        case 0x6E: raw.append(0x0A)
        case 0x72: raw.append(0x0D)
        case 0x74: raw.append(0x09)
        case 0x75:
          var code = try parseHex4()
          if (0xD800..<0xDC00).contains(code) {
            guard bytes.count - index >= 6, bytes[index] == 0x5C, bytes[index + 1] == 0x75 else { throw error("unpaired surrogate") }
            index += 2
            let low = try parseHex4()
            guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate") }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
          } else if (0xDC00..<0xE000).contains(code) {
            throw error("unpaired surrogate")
          }
          raw.append(contentsOf: Array(String(Unicode.Scalar(code)!).utf8))
        default: throw error("invalid escape")
        }
        start = index
        continue
      }
      index += 1
    }
    guard let text = String(validating: raw, as: UTF8.self) else { throw error("string is not valid UTF-8") }
    scalars.append(contentsOf: text.unicodeScalars)
    return String(scalars)
  }

  private mutating func parseHex4() throws(ParseError) -> UInt32 {
    guard bytes.count - index >= 4 else { throw error("truncated \\u escape") }
    var value: UInt32 = 0
    for _ in 0..<4 {
      let byte = bytes[index]
      let digit: UInt32
      switch byte {
      case 0x30...0x39: digit = UInt32(byte - 0x30)
      case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
      case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
      default: throw error("invalid \\u escape")
      }
      value = value * 16 + digit
      index += 1
    }
    return value
  }

  private mutating func parseNumber() throws(ParseError) -> JSONValue {
    let start = index
    if bytes[index] == 0x2D { index += 1 }
    guard index < bytes.count, (0x30...0x39).contains(bytes[index]) else { throw error("invalid number") }
    if bytes[index] == 0x30 {
      index += 1
    } else {
      while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
    }
    var isInteger = true
    if index < bytes.count && bytes[index] == 0x2E {
      isInteger = false
      index += 1
      guard index < bytes.count, (0x30...0x39).contains(bytes[index]) else { throw error("invalid number") }
      while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
    }
    if index < bytes.count && (bytes[index] == 0x65 || bytes[index] == 0x45) {
      isInteger = false
      index += 1
      if index < bytes.count && (bytes[index] == 0x2B || bytes[index] == 0x2D) { index += 1 }
      guard index < bytes.count, (0x30...0x39).contains(bytes[index]) else { throw error("invalid number") }
      while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
    }
    let text = String(decoding: bytes[start..<index], as: UTF8.self)
    if isInteger {
      if let value = UInt64(text) { return .unsigned(value) }
      if let value = Int64(text) { return .integer(value) }
    }
    guard let value = Double(text), value.isFinite else { throw error("number out of range") }
    return .double(value)
  }
}

extension JSONValue {
  /// The members of an object, or nil.
  public var objectValue: [JSONKey: JSONValue]? {
    if case .object(let members) = self { return members }
    return nil
  }

  public var arrayValue: [JSONValue]? {
    if case .array(let items) = self { return items }
    return nil
  }

  public var stringValue: String? {
    if case .string(let text) = self { return text }
    return nil
  }

  /// A non-negative integer, whichever case holds it.
  public var unsignedValue: UInt64? {
    switch self {
    case .unsigned(let value): return value
    case .integer(let value) where value >= 0: return UInt64(value)
    default: return nil
    }
  }

  /// A boolean, or nil.
  public var boolValue: Bool? {
    if case .bool(let value) = self { return value }
    return nil
  }

  /// An integer that fits an `Int`, whichever case holds it.
  public var intValue: Int? {
    switch self {
    case .unsigned(let value): return Int(exactly: value)
    case .integer(let value): return Int(exactly: value)
    default: return nil
    }
  }

  /// Any number, as a double.
  public var doubleValue: Double? {
    switch self {
    case .unsigned(let value): return Double(value)
    case .integer(let value): return Double(value)
    case .double(let value): return value
    default: return nil
    }
  }

  /// The JSON type's name, for error messages.
  public var typeName: String {
    switch self {
    case .null: return "null"
    case .bool: return "a boolean"
    case .integer, .unsigned, .double: return "a number"
    case .string: return "a string"
    case .array, .written: return "an array"
    case .object: return "an object"
    }
  }
}
