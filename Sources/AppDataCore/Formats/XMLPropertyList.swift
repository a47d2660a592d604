import AppDataSystem
/// An XML property list (`<plist version="1.0"><dict>…</dict></plist>`), read without recursion:
/// open arrays and dictionaries are a stack the loop keeps, at most `maximumDepth` high, and
/// every value built counts against the same budget as a binary plist's. Only what Apple's
/// writers produce is read: the plist elements, comments, the XML declaration, a DOCTYPE (its
/// internal subset skipped, so no entity it declares is ever expanded), the five predefined
/// entities, character references and CDATA.
package enum XMLPropertyList {
  package typealias Malformed = PropertyList.Malformed

  /// An array or dictionary still open.
  private enum Frame {
    case array([PropertyList])
    case dictionary([PlistKey: PropertyList], key: String?)
  }

  /// A member of the top-level dictionary: its key and its bytes, from `<key>` to the end of
  /// its value (what `PropertyListEdit` removes to drop a key and leave every other byte).
  package struct Member: Equatable {
    package var key: String
    package var range: Range<Int>
  }

  /// XML's white space: space, tab, line feed, carriage return.
  package static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

  package static func parse(_ input: [UInt8]) throws(Malformed) -> PropertyList {
    var members: [Member]?
    return try parse(input, topLevelMembers: &members)
  }

  /// `parse`, also noting the top-level dictionary's members in `topLevelMembers` when it is
  /// not nil.
  package static func parse(_ original: [UInt8], topLevelMembers: inout [Member]?) throws(Malformed) -> PropertyList {
    // A document converted to UTF-8 has no byte ranges in the original to note.
    let converted = try utf8Document(original)
    if converted != nil { topLevelMembers = nil }
    let input = converted ?? original
    var reader = Reader(bytes: input)
    var document = Document(members: topLevelMembers)
    defer { topLevelMembers = document.members }
    var sawElement = false
    if input.starts(with: [0xEF, 0xBB, 0xBF]) { reader.index = 3 }
    while true {
      reader.skipWhitespace()
      guard reader.index < input.count else { break }
      guard input[reader.index] == 0x3C else { throw reader.error("text outside an element") }
      if reader.skip(prefix: "<?") { try reader.skip(past: "?>"); continue }
      if reader.skip(prefix: "<!--") { try reader.skip(past: "-->"); continue }
      if reader.skip(prefix: "<!DOCTYPE") { try reader.skipDoctype(); continue }
      let tagStart = reader.index
      let tag = try reader.tag()
      sawElement = true
      if tag.isClosing {
        try document.close(tag, reader: reader)
      } else {
        try document.open(tag, at: tagStart, reader: &reader)
      }
    }
    guard sawElement else { throw Malformed(reason: "not a property list (neither bplist00 nor XML)") }
    guard document.stack.isEmpty else { throw reader.error("ends inside an open <array> or <dict>") }
    guard let result = document.result else { throw reader.error("holds no value") }
    return result
  }

  /// What `parse` has built so far: the open containers, the result once the top-level value
  /// is closed, and the top-level dictionary's members when they are noted.
  private struct Document {
    var members: [Member]?
    var stack: [Frame] = []
    var result: PropertyList?
    var keyStart = 0
    var budget = PropertyList.Budget()

    init(members: [Member]?) { self.members = members }

    /// An element opened: a container pushed, or a key or a value read and placed.
    mutating func open(_ tag: Reader.Tag, at tagStart: Int, reader: inout Reader) throws(Malformed) {
      switch tag.name {
      case "plist":
        return
      case "array", "dict":
        try budget.spend()
        if tag.isEmpty {
          try place(tag.name == "array" ? .array([]) : .dictionary([:]), reader: reader)
        } else {
          guard stack.count < PropertyList.Limits.maximumDepth else {
            throw reader.error("nested more than \(PropertyList.Limits.maximumDepth) levels deep")
          }
          stack.append(tag.name == "array" ? .array([]) : .dictionary([:], key: nil))
        }
      case "key":
        let text = tag.isEmpty ? [] : try reader.text(closing: "key")
        try budget.spend(objects: 0, bytes: text.count)
        guard case .dictionary(let members, nil)? = stack.last else { throw reader.error("a <key> outside a dictionary, or two in a row") }
        if stack.count == 1 { keyStart = tagStart }
        stack[stack.count - 1] = .dictionary(members, key: try reader.utf8(text, in: "<key>"))
      case "true", "false":
        if !tag.isEmpty { _ = try reader.text(closing: tag.name) }
        try budget.spend()
        try place(.bool(tag.name == "true"), reader: reader)
      case "string", "integer", "real", "date", "data":
        let text = tag.isEmpty ? [] : try reader.text(closing: tag.name)
        try budget.spend(objects: 1, bytes: text.count)
        try place(try XMLPropertyList.value(of: tag.name, text: text, reader: reader), reader: reader)
      default:
        throw reader.error("unknown element <\(tag.name)>")
      }
    }

    /// An element closed: its container popped and placed.
    mutating func close(_ tag: Reader.Tag, reader: Reader) throws(Malformed) {
      switch tag.name {
      case "plist":
        return
      case "array":
        guard case .array(let items)? = stack.popLast() else { throw reader.error("</array> without its <array>") }
        try place(.array(items), reader: reader)
      case "dict":
        guard case .dictionary(let members, let key)? = stack.popLast() else { throw reader.error("</dict> without its <dict>") }
        guard key == nil else { throw reader.error("a <key> without its value") }
        try place(.dictionary(members), reader: reader)
      default:
        throw reader.error("unexpected </\(tag.name)>")
      }
    }

    /// Puts a finished value where it belongs: in the open container, or as the result.
    mutating func place(_ value: PropertyList, reader: Reader) throws(Malformed) {
      guard let top = stack.popLast() else {
        guard result == nil else { throw reader.error("more than one top-level value") }
        result = value
        return
      }
      switch top {
      case .array(var items):
        items.append(value)
        stack.append(.array(items))
      case .dictionary(var members, let key):
        guard let key else { throw reader.error("a value without its <key> in a dictionary") }
        members[PlistKey(key)] = value
        if stack.isEmpty { self.members?.append(Member(key: key, range: keyStart..<reader.index)) }
        stack.append(.dictionary(members, key: nil))
      }
    }
  }

  private static func value(of element: String, text: [UInt8], reader: Reader) throws(Malformed) -> PropertyList {
    switch element {
    case "string":
      return .string(try reader.utf8(text, in: "<string>"))
    case "integer":
      guard let value = integer(Reader.trimmed(text)) else {
        throw reader.error("an <integer> that is not a whole number from -2^63 to 2^64 - 1 (decimal, or hexadecimal after 0x)")
      }
      return .integer(value)
    case "real":
      guard let value = Double(String(decoding: Reader.trimmed(text), as: UTF8.self)) else { throw reader.error("a <real> that is not a number") }
      return .real(value)
    case "date":
      guard let seconds = PlistDate.seconds(fromText: Reader.trimmed(text)) else { throw reader.error("a <date> not written YYYY-MM-DDTHH:MM:SSZ") }
      return .date(seconds)
    default:
      guard let bytes = Base64.decode(text) else { throw reader.error("<data> that is not base64") }
      return .data(bytes)
    }
  }

  /// An `<integer>`'s text as CoreFoundation reads it: an optional sign and decimal digits, or
  /// hexadecimal digits after `0x` or `0X`, from -2^63 to 2^64 - 1; nil otherwise.
  package static func integer(_ text: [UInt8]) -> Int128? {
    var index = 0
    var negative = false
    if index < text.count, text[index] == 0x2D || text[index] == 0x2B {
      negative = text[index] == 0x2D
      index += 1
    }
    var radix: UInt64 = 10
    if !negative, index == 0, text.count > 2, text[0] == 0x30, text[1] == 0x78 || text[1] == 0x58 {
      radix = 16
      index = 2
    }
    guard index < text.count else { return nil }
    var magnitude: UInt64 = 0
    for byte in text[index...] {
      let digit: UInt64
      switch byte {
      case 0x30...0x39: digit = UInt64(byte - 0x30)
      case 0x61...0x66 where radix == 16: digit = UInt64(byte - 0x61 + 10)
      case 0x41...0x46 where radix == 16: digit = UInt64(byte - 0x41 + 10)
      default: return nil
      }
      let (shifted, overflow) = magnitude.multipliedReportingOverflow(by: radix)
      let (sum, carry) = shifted.addingReportingOverflow(digit)
      guard !overflow, !carry else { return nil }
      magnitude = sum
    }
    if negative {
      guard magnitude <= UInt64(1) << 63 else { return nil }
      return -Int128(magnitude)
    }
    return Int128(magnitude)
  }

  /// The document as UTF-8, by its byte order mark or first bytes and its declaration: UTF-8
  /// as it is; UTF-16 (with or without a byte order mark) and ISO-8859-1 converted. Nil for
  /// UTF-8 that needs no conversion; any other declared encoding is refused, naming it.
  package static func utf8Document(_ input: [UInt8]) throws(Malformed) -> [UInt8]? {
    var converted: [UInt8]?
    if input.starts(with: [0xFF, 0xFE]) || input.starts(with: [0xFE, 0xFF]) || input.starts(with: [0x3C, 0x00]) || input.starts(with: [0x00, 0x3C]) {
      let bigEndian = input.starts(with: [0xFE, 0xFF]) || input.starts(with: [0x00, 0x3C])
      let start = input.starts(with: [0xFF, 0xFE]) || input.starts(with: [0xFE, 0xFF]) ? 2 : 0
      guard (input.count - start) % 2 == 0 else { throw Malformed(reason: "an XML plist in UTF-16 of an odd number of bytes") }
      var units: [UInt16] = []
      units.reserveCapacity((input.count - start) / 2)
      var index = start
      while index + 1 < input.count {
        units.append(bigEndian ? UInt16(input[index]) << 8 | UInt16(input[index + 1]) : UInt16(input[index + 1]) << 8 | UInt16(input[index]))
        index += 2
      }
      var output: [UInt8] = []
      output.reserveCapacity(units.count)
      var iterator = units.makeIterator()
      var decoder = UTF16()
      loop: while true {
        switch decoder.decode(&iterator) {
        case .scalarValue(let scalar): output.append(contentsOf: UTF8.encode(scalar)!)
        case .emptyInput: break loop
        case .error: throw Malformed(reason: "an XML plist in UTF-16 holding an unpaired surrogate")
        }
      }
      converted = output
    }
    let document = converted ?? input
    // The declaration, if any: `<?xml version="1.0" encoding="NAME"?>` (after a UTF-8 BOM).
    var start = document.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    while start < document.count, isSpace(document[start]) { start += 1 }
    guard document[start...].starts(with: Array("<?xml".utf8)),
          let end = Reader.find(Array("?>".utf8), in: document, from: start) else { return converted }
    let declaration = Array(document[start..<end])
    guard let at = Reader.find(Array("encoding".utf8), in: declaration, from: 0) else { return converted }
    var index = at + 8
    while index < declaration.count, isSpace(declaration[index]) || declaration[index] == 0x3D { index += 1 }
    guard index < declaration.count, declaration[index] == 0x22 || declaration[index] == 0x27 else { return converted }
    let quote = declaration[index]
    guard let close = declaration[(index + 1)...].firstIndex(of: quote) else { return converted }
    let name = String(decoding: declaration[(index + 1)..<close], as: UTF8.self).lowercased()
    switch name {
    case "utf-8", "utf8", "us-ascii", "ascii":
      return converted
    case "utf-16", "utf-16le", "utf-16be", "utf16":
      guard converted != nil else { throw Malformed(reason: "an XML plist that declares \(TerminalText.abbreviated(name)) but is not in UTF-16") }
      return converted
    case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1":
      guard converted == nil else { throw Malformed(reason: "an XML plist in UTF-16 that declares ISO-8859-1") }
      var output: [UInt8] = []
      output.reserveCapacity(input.count)
      for byte in input { output.append(contentsOf: UTF8.encode(Unicode.Scalar(byte))!) }
      return output
    default:
      throw Malformed(reason: "an XML plist in \(TerminalText.abbreviated(name)), an encoding appdata does not read (UTF-8, UTF-16 and ISO-8859-1 only)")
    }
  }

  /// A cursor over the document.
  private struct Reader {
    package let bytes: [UInt8]
    package var index = 0

    package struct Tag {
      package var name: String
      package var isClosing: Bool
      /// `<name/>`.
      package var isEmpty: Bool
    }

    package func error(_ message: String) -> Malformed {
      let line = bytes[..<min(index, bytes.count)].reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
      return Malformed(reason: "XML plist line \(line): \(message)")
    }

    package mutating func skipWhitespace() {
      while index < bytes.count, XMLPropertyList.isSpace(bytes[index]) { index += 1 }
    }

    /// Skips `text` when the input continues with it.
    package mutating func skip(prefix text: StaticString) -> Bool {
      let expected = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
      guard bytes.count - index >= expected.count else { return false }
      var offset = 0
      while offset < expected.count {
        if bytes[index + offset] != expected[offset] { return false }
        offset += 1
      }
      index += expected.count
      return true
    }

    /// Moves past the next `text`.
    package mutating func skip(past text: StaticString) throws(Malformed) {
      let expected = Array(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
      guard let found = Self.find(expected, in: bytes, from: index) else { throw error("unterminated \(text)") }
      index = found + expected.count
    }

    /// Skips a DOCTYPE, its internal subset (`[…]`) included: nothing it declares is used.
    package mutating func skipDoctype() throws(Malformed) {
      var inSubset = false
      while index < bytes.count {
        let byte = bytes[index]
        index += 1
        if byte == 0x5B { inSubset = true } else if byte == 0x5D { inSubset = false } else if byte == 0x3E && !inSubset { return }
      }
      throw error("unterminated <!DOCTYPE")
    }

    /// An element tag at `index` (`<name attr="…">`, `</name>`, `<name/>`); attributes are skipped.
    package mutating func tag() throws(Malformed) -> Tag {
      index += 1
      let isClosing = index < bytes.count && bytes[index] == 0x2F
      if isClosing { index += 1 }
      let start = index
      while index < bytes.count, Self.isNameByte(bytes[index]) { index += 1 }
      guard index > start, index - start <= 16 else { throw error("a malformed element name") }
      let name = String(decoding: bytes[start..<index], as: UTF8.self)
      var quote: UInt8?
      while index < bytes.count {
        let byte = bytes[index]
        if let open = quote {
          if byte == open { quote = nil }
        } else if byte == 0x22 || byte == 0x27 {
          quote = byte
        } else if byte == 0x3E {
          let isEmpty = index > start && bytes[index - 1] == 0x2F
          index += 1
          return Tag(name: name, isClosing: isClosing, isEmpty: isEmpty && !isClosing)
        } else if byte == 0x3C {
          break
        }
        index += 1
      }
      throw error("unterminated <\(name)")
    }

    /// An element's text up to `</name>`, entities and character references decoded, CDATA kept.
    package mutating func text(closing name: String) throws(Malformed) -> [UInt8] {
      var output: [UInt8] = []
      while index < bytes.count {
        let byte = bytes[index]
        if byte == 0x3C {
          if skip(prefix: "<![CDATA[") {
            guard let end = Self.find(Array("]]>".utf8), in: bytes, from: index) else { throw error("unterminated CDATA") }
            Self.appendNormalisingLineEnds(bytes[index..<end], to: &output)
            index = end + 3
            continue
          }
          if skip(prefix: "<!--") { try skip(past: "-->"); continue }
          let closing = try tag()
          guard closing.isClosing, closing.name == name else { throw error("<\(name)> holds an element, or closes with </\(closing.name)>") }
          return output
        }
        if byte == 0x26 {
          try entity(into: &output)
          continue
        }
        if byte == 0x0D {
          // XML's end-of-line rule: CR LF and a lone CR read as LF (a `&#13;` stays a CR).
          output.append(0x0A)
          index += index + 1 < bytes.count && bytes[index + 1] == 0x0A ? 2 : 1
          continue
        }
        output.append(byte)
        index += 1
      }
      throw error("unterminated <\(name)>")
    }

    /// Appends `text` with CR LF and lone CRs as LF.
    package static func appendNormalisingLineEnds(_ text: ArraySlice<UInt8>, to output: inout [UInt8]) {
      var index = text.startIndex
      while index < text.endIndex {
        if text[index] == 0x0D {
          output.append(0x0A)
          index += index + 1 < text.endIndex && text[index + 1] == 0x0A ? 2 : 1
        } else {
          output.append(text[index])
          index += 1
        }
      }
    }

    /// Text as a string; text that is not UTF-8 is refused, never read with U+FFFD in its place.
    package func utf8(_ text: [UInt8], in element: String) throws(Malformed) -> String {
      guard let string = String(validating: text, as: UTF8.self) else { throw error("a \(element) that is not valid UTF-8") }
      return string
    }

    /// `&lt;`, `&gt;`, `&amp;`, `&quot;`, `&apos;`, `&#N;`, `&#xN;`.
    package mutating func entity(into output: inout [UInt8]) throws(Malformed) {
      guard let end = bytes[index..<min(bytes.count, index + 12)].firstIndex(of: 0x3B) else { throw error("an unterminated '&' reference") }
      let name = Array(bytes[(index + 1)..<end])
      index = end + 1
      switch XMLReference.decode(name, into: &output) {
      case nil: break
      case .unknownEntity: throw error("an unknown entity '&\(TerminalText.escaped(name));'")
      case .invalidCharacter: throw error("an invalid character reference")
      }
    }

    package static func isNameByte(_ byte: UInt8) -> Bool {
      (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F || byte == 0x3A
    }

    /// Where `needle` next starts in `haystack`, from `start`. Plain index loops, here and in
    /// `skip(prefix:)`: slices compared with `elementsEqual` are generic code a debug build
    /// runs unspecialized, for every tag of every plist (issue 49).
    package static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
      guard let first = needle.first, haystack.count >= needle.count else { return nil }
      var index = start
      search: while index <= haystack.count - needle.count {
        defer { index += 1 }
        guard haystack[index] == first else { continue }
        var offset = 1
        while offset < needle.count {
          if haystack[index + offset] != needle[offset] { continue search }
          offset += 1
        }
        return index
      }
      return nil
    }

    package static func trimmed(_ text: [UInt8]) -> [UInt8] {
      guard let first = text.firstIndex(where: { !XMLPropertyList.isSpace($0) }),
            let last = text.lastIndex(where: { !XMLPropertyList.isSpace($0) }) else { return [] }
      return Array(text[first...last])
    }
  }
}

/// Base64 as XML plists write `<data>`: whitespace anywhere, `=` padding at the end.
package enum Base64 {
  private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

  /// The standard alphabet with `=` padding and no line breaks (what JSON reports and the
  /// migration journal write for bytes that are not UTF-8).
  package static func encode(_ bytes: some Collection<UInt8>) -> String {
    var output: [UInt8] = []
    output.reserveCapacity((bytes.count + 2) / 3 * 4)
    var iterator = bytes.makeIterator()
    while let first = iterator.next() {
      let second = iterator.next()
      let third = iterator.next()
      let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
      output.append(alphabet[Int(group >> 18 & 63)])
      output.append(alphabet[Int(group >> 12 & 63)])
      output.append(second == nil ? 0x3D : alphabet[Int(group >> 6 & 63)])
      output.append(third == nil ? 0x3D : alphabet[Int(group & 63)])
    }
    return String(decoding: output, as: UTF8.self)
  }

  package static func decode(_ text: [UInt8]) -> [UInt8]? {
    var output: [UInt8] = []
    output.reserveCapacity(text.count * 3 / 4)
    var accumulator: UInt32 = 0
    var bits = 0
    var padding = 0
    for byte in text {
      let value: UInt32
      switch byte {
      case 0x41...0x5A: value = UInt32(byte - 0x41)
      case 0x61...0x7A: value = UInt32(byte - 0x61 + 26)
      case 0x30...0x39: value = UInt32(byte - 0x30 + 52)
      case 0x2B: value = 62
      case 0x2F: value = 63
      case 0x3D: padding += 1; continue
      case 0x20, 0x09, 0x0A, 0x0D: continue
      default: return nil
      }
      guard padding == 0 else { return nil }
      accumulator = accumulator << 6 | value
      bits += 6
      if bits >= 8 {
        bits -= 8
        output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
        accumulator &= (1 << UInt32(bits)) - 1
      }
    }
    return padding <= 2 ? output : nil
  }
}
