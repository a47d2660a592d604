@testable import AppDataSystem
@testable import AppDataCore
import Foundation
import Testing

/// `PropertyListEdit`, which `migrate --defaults-key` uses to drop the flag from the app's
/// defaults plist: one key goes, every other byte stays.
@Suite("plist edit")
struct PropertyListEditTests {
  /// A plist written by Python's plistlib (as Apple's writers do: objects, offset table, trailer).
  private static func plistlib(_ format: String, _ expression: String) throws -> [UInt8] {
    let tree = try TestTree("plistedit")
    let path = tree.scratch + "/made.plist"
    let result = try AppData.shell("""
      python3 -c 'import plistlib,sys,datetime; plistlib.dump(\(expression), open(sys.argv[1], "wb"), fmt=plistlib.FMT_\(format), sort_keys=False)' '\(path)'
      """)
    #expect(result.status == 0, "\(result.error)")
    return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
  }

  /// Seventeen keys (past the 14 a dictionary's marker holds), every value type, a UTF-16 key
  /// and value, nested containers holding the same key name.
  private static let many = """
    dict([("k%d" % i, i * 1000) for i in range(14)] + [("PSLegacyStoragePathUsed", True), \
    ("Nested", {"PSLegacyStoragePathUsed": [1, 2.5, b"\\x00\\xff", "caf\\u00e9"]}), \
    ("\\u00e9t\\u00e9", datetime.datetime(2024, 5, 1, 9, 30)), ("Big", 2**62)])
    """

  @Test(arguments: ["BINARY", "XML"])
  func oneKeyGoesAndEverythingElseReadsTheSame(format: String) throws {
    let original = try Self.plistlib(format, Self.many)
    var expected = try #require(try PropertyList.parse(original).dictionaryValue)
    #expect(expected.count == 18)
    expected["PSLegacyStoragePathUsed"] = nil
    let edited = try #require(try PropertyListEdit.removingTopLevelKey("PSLegacyStoragePathUsed", from: original))
    #expect(try PropertyList.parse(edited) == .dictionary(expected))
    #expect(try PropertyList.parse(edited)["Nested"]?["PSLegacyStoragePathUsed"] != nil)
    // Another reader agrees.
    let tree = try TestTree("plistedit-check")
    let path = tree.scratch + "/edited.plist"
    try Data(edited).write(to: URL(fileURLWithPath: path))
    let check = try AppData.shell("python3 -c 'import plistlib,sys; d = plistlib.load(open(sys.argv[1], \"rb\")); print(len(d), \"PSLegacyStoragePathUsed\" in d, d[\"Big\"], d[\"Nested\"])' '\(path)'")
    #expect(check.output == "17 False 4611686018427387904 {'PSLegacyStoragePathUsed': [1, 2.5, b'\\x00\\xff', 'café']}\n")
    // Nothing absent to remove: no edit.
    #expect(try PropertyListEdit.removingTopLevelKey("Absent", from: original) == nil)
    if format == "BINARY" {
      // Every object is still there, byte for byte: only a dictionary, the table and the trailer follow.
      let table = original.withUnsafeBytes { BinaryPropertyList($0)!.offsetTable }
      #expect(edited.starts(with: original[..<table]))
      #expect(edited.count == original.count + 3 + 17 * 2)  // marker and count, 17 key and 17 value references
    }
  }

  @Test func anXMLPlistKeepsItsOrderCommentsAndLayout() throws {
    let original = """
      <?xml version="1.0" encoding="UTF-8"?>
      <!-- written by hand -->
      <plist version="1.0">
      <dict>
      \t<key>Zebra</key>
      \t<integer>1</integer>
      \t<key>PSLegacyStoragePathUsed</key>  <!-- the flag -->
      \t<true/>
      \t<key>Alpha</key>
      \t<dict><key>PSLegacyStoragePathUsed</key><string>kept: not at the top</string></dict>
      \t<key>PSLegacyStoragePathUsed</key><string>yes</string>
      </dict>
      </plist>

      """
    let edited = try #require(try PropertyListEdit.removingTopLevelKey("PSLegacyStoragePathUsed", from: Array(original.utf8)))
    #expect(String(decoding: edited, as: UTF8.self) == """
      <?xml version="1.0" encoding="UTF-8"?>
      <!-- written by hand -->
      <plist version="1.0">
      <dict>
      \t<key>Zebra</key>
      \t<integer>1</integer>
      \t<key>Alpha</key>
      \t<dict><key>PSLegacyStoragePathUsed</key><string>kept: not at the top</string></dict>
      </dict>
      </plist>

      """)
    // A value holding keys of its own goes whole (its inner keys are not where it starts).
    let withoutAlpha = try #require(try PropertyListEdit.removingTopLevelKey("Alpha", from: edited))
    #expect(String(decoding: withoutAlpha, as: UTF8.self).contains("<integer>1</integer>\n</dict>"))
  }

  /// NaN is not equal to itself, yet a NaN date or real read back is the same value: the check
  /// compares bits (found by fuzzing: `Fuzz/regressions/bplist/edit-nan-date.plist`).
  @Test func aNaNReadsBackAsTheSameValue() throws {
    let xml = "<plist><dict><key>a</key><real>nan</real><key>b</key><true/></dict></plist>"
    let edited = try #require(try PropertyListEdit.removingTopLevelKey("b", from: Array(xml.utf8)))
    #expect(String(decoding: edited, as: UTF8.self) == "<plist><dict><key>a</key><real>nan</real></dict></plist>")
  }

  /// A binary plist whose objects end past byte 255 with one-byte offsets: the new dictionary
  /// lies past what one byte can say, so the offset table is written with two.
  @Test func theOffsetTableWidensWhenTheNewDictionaryNeedsIt() throws {
    var bytes = Array("bplist00".utf8)
    let offsets = [8, 13, 15, 17, 19]
    bytes += [0xD2, 1, 2, 3, 4]  // 0: {1: 3, 2: 4}
    bytes += [0x51, 0x61]  // 1: "a"
    bytes += [0x51, 0x62]  // 2: "b"
    bytes += [0x10, 0x07]  // 3: 7
    bytes += [0x4F, 0x10, 0xF0] + [UInt8](repeating: 0xAB, count: 240)  // 4: 240 bytes of data
    let table = bytes.count
    #expect(table == 262)
    bytes += offsets.map { UInt8($0) }
    bytes += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 5] + [UInt8](repeating: 0, count: 8)
    bytes += [0, 0, 0, 0, 0, 0, 0x01, 0x06]
    #expect(try PropertyList.parse(bytes) == .dictionary(["a": .integer(7), "b": .data([UInt8](repeating: 0xAB, count: 240))]))

    let edited = try #require(try PropertyListEdit.removingTopLevelKey("a", from: bytes))
    #expect(try PropertyList.parse(edited) == .dictionary(["b": .data([UInt8](repeating: 0xAB, count: 240))]))
    #expect(edited[edited.count - 32 + 6] == 2)  // the trailer's offset size
    #expect(Array(edited[table..<(table + 3)]) == [0xD1, 2, 4])
    #expect(try PropertyListEdit.removingTopLevelKey("b", from: edited).map { try PropertyList.parse($0) } == .dictionary([:]))
  }

  /// `Base64.encode` (JSON reports' `pathBase64`, the migration journal) writes what Foundation's
  /// `base64EncodedString()` wrote before it, and `Base64.decode` reads it back.
  @Test func base64IsFoundationsAndRoundTrips() {
    var generator = SystemRandomNumberGenerator()
    for length in 0..<70 {
      let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
      let text = Base64.encode(bytes)
      #expect(text == Data(bytes).base64EncodedString())
      #expect(Base64.decode(Array(text.utf8)) == bytes)
    }
  }

  @Test func whatIsNotADictionaryPlistIsRefused() throws {
    let array = Array("<plist><array><string>PSLegacyStoragePathUsed</string></array></plist>".utf8)
    #expect(throws: PropertyList.Malformed(reason: "not a property list holding a dictionary")) {
      try PropertyListEdit.removingTopLevelKey("PSLegacyStoragePathUsed", from: array)
    }
    #expect(throws: PropertyList.Malformed.self) {
      try PropertyListEdit.removingTopLevelKey("a", from: Array("bplist00 damaged".utf8))
    }
  }
}
