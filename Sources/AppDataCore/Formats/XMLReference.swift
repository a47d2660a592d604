/// An XML reference (`&name;`), as both XML readers (`XMLPropertyList`, `XMLEvents`) decode it:
/// the five predefined entities and character references (`&#N;`, `&#xN;`). No entity is ever
/// declared, so no other name is known; each reader words the refusal in its own terms. And
/// the references both XML writers (a migrated rules file, a JUnit report) write.
package enum XMLReference {
  enum Failure { case unknownEntity, invalidCharacter }

  /// Appends what `name` (the bytes between `&` and `;`) stands for to `output`; nil when done.
  static func decode(_ name: [UInt8], into output: inout [UInt8]) -> Failure? {
    switch name {
    case Array("lt".utf8): output.append(0x3C)
    case Array("gt".utf8): output.append(0x3E)
    case Array("amp".utf8): output.append(0x26)
    case Array("quot".utf8): output.append(0x22)
    case Array("apos".utf8): output.append(0x27)
    default:
      guard name.first == 0x23 else { return .unknownEntity }
      let isHex = name.count > 1 && (name[1] == 0x78 || name[1] == 0x58)
      let digits = String(decoding: name.dropFirst(isHex ? 2 : 1), as: UTF8.self)
      guard let code = UInt32(digits, radix: isHex ? 16 : 10), let scalar = Unicode.Scalar(code), code != 0 else { return .invalidCharacter }
      output.append(contentsOf: Array(String(scalar).utf8))
    }
    return nil
  }

  /// `text` with `&`, `<`, `>` and `"` written as references, and each other scalar as `other`
  /// writes it (nil: as it is), where the two writers differ (line breaks, `'`, controls).
  package static func escaped(_ text: String, other: (Unicode.Scalar) -> String?) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "&": result += "&amp;"
      case "<": result += "&lt;"
      case ">": result += "&gt;"
      case "\"": result += "&quot;"
      default:
        if let written = other(scalar) { result += written } else { result.unicodeScalars.append(scalar) }
      }
    }
    return result
  }
}
