import AppDataSystem

/// A small XML reader for the Android files appdata reads (a manifest, `<full-backup-content>`,
/// `<data-extraction-rules>`): the document as a flat list of events, as Android's own
/// XmlPullParser walks it, read without recursion. Every input is untrusted: a DTD or an entity
/// declaration is refused (no entity is ever expanded, so no billion laughs), and the size, the
/// depth, an element's attributes and a name's length are bounded (`Limits`). Namespaces are
/// resolved: an attribute says its namespace URI, so `android:` is recognised by what it is
/// bound to, not by its prefix.
package enum XMLEvents {
  package struct Malformed: Error, Equatable, Sendable {
    package var reason: String
  }

  package struct Limits: Sendable {
    /// Android's own files are a few KiB; a manifest with many components stays under a MiB.
    package var maximumBytes = 4 << 20
    package var maximumDepth = 64
    package var maximumAttributes = 256
    package var maximumNameBytes = 256
    package init() {}
  }

  package struct Attribute: Equatable, Sendable {
    /// As written: `android:path`.
    package var name: String
    /// The URI the prefix is bound to (`http://schemas.android.com/apk/res/android`); empty
    /// for an attribute without a prefix.
    package var namespace: String
    /// The name without its prefix.
    package var localName: String
    package var value: String
  }

  package enum Event: Equatable, Sendable {
    /// An element opens (`<name …>` or `<name …/>`, which is followed by its `end`). `line` is
    /// where it is, for messages. xmlns declarations are not attributes (as in compiled XML).
    case start(name: String, attributes: [Attribute], line: Int)
    case end(name: String)
    /// Text that is not only white space (Android's compiled XML drops that).
    case text(String)
  }

  package static let androidNamespace = "http://schemas.android.com/apk/res/android"
  package static let toolsNamespace = "http://schemas.android.com/tools"

  /// The events of `input`, a whole document with one root element.
  package static func events(_ input: [UInt8], limits: Limits = Limits()) throws(Malformed) -> [Event] {
    guard input.count <= limits.maximumBytes else {
      throw Malformed(reason: "larger than \(limits.maximumBytes) bytes")
    }
    var reader = Reader(bytes: input, limits: limits)
    return try reader.read()
  }

  private struct Reader {
    let bytes: [UInt8]
    let limits: Limits
    var index = 0
    var line = 1
    /// The open elements' names and the namespace bindings each declared.
    var open: [(name: String, bindings: [String: String])] = []

    func error(_ message: String) -> Malformed { Malformed(reason: "line \(line): \(message)") }

    mutating func advance(_ count: Int = 1) {
      for _ in 0..<count where index < bytes.count {
        if bytes[index] == 0x0A { line += 1 }
        index += 1
      }
    }

    func starts(with text: String) -> Bool {
      let expected = Array(text.utf8)
      return bytes.count - index >= expected.count && bytes[index..<(index + expected.count)].elementsEqual(expected)
    }

    mutating func skip(past text: String) throws(Malformed) {
      let expected = Array(text.utf8)
      while index < bytes.count {
        if starts(with: text) {
          advance(expected.count)
          return
        }
        advance()
      }
      throw error("unterminated, no \(text)")
    }

    mutating func read() throws(Malformed) -> [Event] {
      var events: [Event] = []
      var sawRoot = false
      var text: [UInt8] = []
      func flushText() throws(Malformed) {
        defer { text.removeAll(keepingCapacity: true) }
        guard text.contains(where: { !Self.isSpace($0) }) else { return }
        guard !open.isEmpty else { throw error("text outside the root element") }
        guard let string = String(validating: text, as: UTF8.self) else { throw error("text that is not UTF-8") }
        events.append(.text(string))
      }
      if starts(with: "\u{FEFF}") { advance(3) }
      while index < bytes.count {
        let byte = bytes[index]
        if byte != 0x3C {
          if byte == 0x26 {
            try entity(into: &text)
          } else {
            text.append(byte)
            advance()
          }
          continue
        }
        if starts(with: "<!--") {
          try skip(past: "-->")
        } else if starts(with: "<![CDATA[") {
          guard !open.isEmpty else { throw error("CDATA outside the root element") }
          advance(9)
          let start = index
          try skip(past: "]]>")
          text.append(contentsOf: bytes[start..<(index - 3)])
        } else if starts(with: "<!DOCTYPE") || starts(with: "<!ENTITY") || starts(with: "<!") {
          throw error("a DTD or entity declaration, which appdata never reads (no entity is expanded)")
        } else if starts(with: "<?") {
          try skip(past: "?>")
        } else if starts(with: "</") {
          try flushText()
          advance(2)
          let name = try self.name()
          skipSpace()
          guard index < bytes.count, bytes[index] == 0x3E else { throw error("a malformed </\(name)>") }
          advance()
          guard let top = open.popLast(), top.name == name else { throw error("</\(name)> closes no open <\(name)>") }
          events.append(.end(name: name))
        } else {
          try flushText()
          guard open.isEmpty ? !sawRoot : true else { throw error("a second root element") }
          sawRoot = true
          let (name, attributes, isEmpty) = try startTag()
          events.append(.start(name: name, attributes: attributes, line: line))
          if isEmpty {
            open.removeLast()
            events.append(.end(name: name))
          }
        }
      }
      guard open.isEmpty else { throw error("<\(open.last!.name)> is never closed") }
      guard sawRoot else { throw error("no root element") }
      try flushText()
      return events
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
    static func isNameByte(_ byte: UInt8) -> Bool {
      (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) || (0x30...0x39).contains(byte)
        || byte == 0x2D || byte == 0x5F || byte == 0x3A || byte == 0x2E || byte >= 0x80
    }

    mutating func skipSpace() {
      while index < bytes.count, Self.isSpace(bytes[index]) { advance() }
    }

    mutating func name() throws(Malformed) -> String {
      let start = index
      while index < bytes.count, Self.isNameByte(bytes[index]) { advance() }
      guard index > start else { throw error("a name was expected") }
      guard index - start <= limits.maximumNameBytes else { throw error("a name longer than \(limits.maximumNameBytes) bytes") }
      guard let name = String(validating: bytes[start..<index], as: UTF8.self) else { throw error("a name that is not UTF-8") }
      return name
    }

    /// `<name a="v" …>` or `<name …/>`; pushes the element with its namespace bindings.
    mutating func startTag() throws(Malformed) -> (String, [Attribute], Bool) {
      advance()
      let name = try self.name()
      guard open.count < limits.maximumDepth else { throw error("elements nested deeper than \(limits.maximumDepth)") }
      var raw: [(String, String)] = []
      var isEmpty = false
      while true {
        skipSpace()
        guard index < bytes.count else { throw error("unterminated <\(name)") }
        if bytes[index] == 0x3E { advance(); break }
        if starts(with: "/>") { advance(2); isEmpty = true; break }
        let attribute = try self.name()
        skipSpace()
        guard index < bytes.count, bytes[index] == 0x3D else { throw error("attribute \(attribute) of <\(name)> has no value") }
        advance()
        skipSpace()
        guard index < bytes.count, bytes[index] == 0x22 || bytes[index] == 0x27 else { throw error("attribute \(attribute) of <\(name)> is not quoted") }
        let quote = bytes[index]
        advance()
        var value: [UInt8] = []
        while true {
          guard index < bytes.count else { throw error("unterminated attribute \(attribute) of <\(name)>") }
          let byte = bytes[index]
          if byte == quote { advance(); break }
          if byte == 0x3C { throw error("'<' in attribute \(attribute) of <\(name)>") }
          if byte == 0x26 { try entity(into: &value); continue }
          // Attribute-value normalisation: white space characters read as a space.
          value.append(Self.isSpace(byte) ? 0x20 : byte)
          advance()
        }
        guard raw.count < limits.maximumAttributes else { throw error("<\(name)> has more than \(limits.maximumAttributes) attributes") }
        guard !raw.contains(where: { $0.0 == attribute }) else { throw error("attribute \(attribute) given twice on <\(name)>") }
        guard let text = String(validating: value, as: UTF8.self) else { throw error("attribute \(attribute) of <\(name)> is not UTF-8") }
        raw.append((attribute, text))
      }
      var bindings: [String: String] = [:]
      for (attribute, value) in raw {
        if attribute == "xmlns" { bindings[""] = value } else if attribute.hasPrefix("xmlns:") { bindings[String(attribute.dropFirst(6))] = value }
      }
      open.append((name, bindings))
      var attributes: [Attribute] = []
      for (attribute, value) in raw where attribute != "xmlns" && !attribute.hasPrefix("xmlns:") {
        if let colon = attribute.firstIndex(of: ":") {
          let prefix = String(attribute[..<colon])
          guard let uri = namespace(of: prefix) else { throw error("attribute \(attribute) of <\(name)> uses the undeclared prefix \(prefix)") }
          attributes.append(Attribute(name: attribute, namespace: uri, localName: String(attribute[attribute.index(after: colon)...]), value: value))
        } else {
          attributes.append(Attribute(name: attribute, namespace: "", localName: attribute, value: value))
        }
      }
      return (name, attributes, isEmpty)
    }

    func namespace(of prefix: String) -> String? {
      if prefix == "xml" { return "http://www.w3.org/XML/1998/namespace" }
      for element in open.reversed() { if let uri = element.bindings[prefix] { return uri } }
      return nil
    }

    /// `&lt;` `&gt;` `&amp;` `&quot;` `&apos;` `&#N;` `&#xN;`; any other name is refused (no
    /// entity is declared, so none is known).
    mutating func entity(into output: inout [UInt8]) throws(Malformed) {
      guard let end = bytes[index..<min(bytes.count, index + 12)].firstIndex(of: 0x3B) else { throw error("an unterminated '&' reference") }
      let name = Array(bytes[(index + 1)..<end])
      advance(end + 1 - index)
      switch XMLReference.decode(name, into: &output) {
      case nil: break
      case .unknownEntity: throw error("an undeclared entity '&\(TerminalText.escaped(name));'")
      case .invalidCharacter: throw error("an invalid character reference")
      }
    }
  }
}
