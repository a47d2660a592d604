import AppDataSystem
/// Makes file names safe to print on a terminal: control characters and invalid UTF-8
/// are shown as escapes (`\n`, `\t`, `\e`, `\x9b`, `\xff`), never sent raw, so a name
/// cannot move the cursor, retitle the window or clear the screen.
package enum TerminalText {
  package static func escaped(_ bytes: [UInt8]) -> String {
    if bytes.allSatisfy(isPlain) { return String(decoding: bytes, as: UTF8.self) }
    var output = ""
    var index = 0
    // Decode one scalar at a time; where the bytes are not UTF-8, escape the byte itself.
    while index < bytes.count {
      var iterator = bytes[index...].makeIterator()
      var decoder = UTF8()
      switch decoder.decode(&iterator) {
      case .scalarValue(let scalar):
        output += escape(scalar)
        index += UTF8.width(scalar)
      case .emptyInput:
        index = bytes.count
      case .error:
        output += "\\x" + hex(bytes[index])
        index += 1
      }
    }
    return output
  }

  /// Escapes a string that may hold control characters (already valid Unicode).
  package static func escaped(_ text: String) -> String {
    if text.utf8.allSatisfy(isPlain) { return text }
    return text.unicodeScalars.map(escape).joined()
  }

  /// A message as it reaches the terminal: every control character, C1 control, line
  /// separator and bidirectional override escaped as `escaped` escapes it, and everything else
  /// (a backslash too, so the escapes a message already holds read the same) left as it is.
  /// `CommandIO.error` and `.warning`, the one place messages are written, pass every message
  /// through it: a message that quotes input text without escaping it cannot reach the terminal raw.
  package static func controlsEscaped(_ message: String) -> String {
    if message.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return message }
    var output = ""
    for scalar in message.unicodeScalars {
      if scalar.value == 0x5C { output.unicodeScalars.append(scalar) } else { output += escape(scalar) }
    }
    return output
  }

  /// Printable ASCII other than `\`: shown as it is.
  private static func isPlain(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x7F && byte != 0x5C }

  /// Escaped, and cut to its first `limit` characters and its length when longer: a message
  /// quoting what someone typed or wrote stays one readable line (a 120,000-byte glob).
  package static func abbreviated(_ text: String, limit: Int = 80) -> String {
    guard text.unicodeScalars.count > limit else { return escaped(text) }
    return escaped(String(String.UnicodeScalarView(text.unicodeScalars.prefix(limit)))) + "… (\(text.utf8.count) bytes)"
  }

  private static func escape(_ scalar: Unicode.Scalar) -> String {
    switch scalar.value {
    case 0x0A: return "\\n"
    case 0x09: return "\\t"
    case 0x0D: return "\\r"
    case 0x1B: return "\\e"
    case 0x5C: return "\\\\"
    case 0x00..<0x20, 0x7F, 0x80..<0xA0: return "\\x" + hex(UInt8(truncatingIfNeeded: scalar.value))
    case 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069:
      // Line separators and bidirectional overrides can disguise a name.
      return "\\u{" + String(scalar.value, radix: 16) + "}"
    default: return String(scalar)
    }
  }

  private static func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
  }
}
