@testable import AppDataSystem
@testable import AppDataCore
import Foundation
import Testing

/// A valid plist reads exactly as the reference reader reads it (issue 32): Python's plistlib
/// here, as CoreFoundation on a Mac. Each test names a gap found in appdata's reader and failed
/// before it was closed.
@Suite("plist conformance")
struct PlistConformanceTests {
  /// The value in the canonical form `Scripts/plist-differential.py` writes plistlib's in.
  static func canonical(_ value: PropertyList) -> String {
    func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String($0, radix: 16).leftPadded(2) }.joined() }
    func bits(_ value: Double) -> String { String(value.bitPattern, radix: 16).leftPadded(16) }
    switch value {
    case .integer(let number): return "i:\(number)"
    case .real(let number): return "r:" + bits(number)
    case .bool(let flag): return "b:" + (flag ? "1" : "0")
    case .string(let text): return "s:" + hex(text.utf8)
    case .data(let bytes): return "d:" + hex(bytes)
    case .date(let seconds): return "t:" + bits(seconds)
    case .uid(let uid): return "u:\(uid)"
    case .array(let items): return "[" + items.map(canonical).joined(separator: ",") + "]"
    case .dictionary(let members):
      let keys = members.keys.sorted { $0.string.utf8.lexicographicallyPrecedes($1.string.utf8) }
      return "{" + keys.map { hex($0.string.utf8) + "=" + canonical(members[$0]!) }.joined(separator: ",") + "}"
    }
  }

  /// 2,000 random plists from a fixed seed, binary and XML, every type and its extremes
  /// (integers up to 2^64 - 1, ±inf, -0, astral-plane strings, NFC and NFD keys side by side):
  /// appdata reads the value plistlib reads from each.
  @Test func twoThousandRandomPlistsReadAsPlistlibReadsThem() throws {
    let folder = AppData.generatedFixtures("plist-differential.py", label: "plists")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let lines = try String(contentsOfFile: folder + "/expected.txt", encoding: .utf8).split(separator: "\n")
    #expect(lines.count == 2000)
    var differing: [String] = []
    for line in lines {
      let parts = line.split(separator: "\t", maxSplits: 1).map(String.init)
      let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: folder + "/" + parts[0])))
      let read: String
      do { read = Self.canonical(try PropertyList.parse(bytes)) } catch { read = "refused: \(error.reason)" }
      if read != parts[1] { differing.append("\(parts[0]): \(read.prefix(200)) != \(parts[1].prefix(200))") }
    }
    #expect(differing.isEmpty, "\(differing.count) differ; the first: \(differing.prefix(3))")
  }

  /// libplist's own test data (Tests/libplist, LGPL-2.1): every file plistlib reads, appdata
  /// reads to the same value; every file plistlib refuses (and the self-referring one), it refuses.
  @Test func libplistsTestDataReadsAsPlistlibReadsIt() throws {
    let folder = AppData.packageRoot + "/Tests/libplist"
    let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix("plist") }.sorted()
    #expect(names.count >= 40)
    let result = try AppData.shell("cd '\(folder)' && python3 '\(AppData.packageRoot)/Scripts/plist-differential.py' --read " + names.joined(separator: " "))
    #expect(result.status == 0, "\(result.error)")
    var differing: [String] = []
    var compared = 0
    for line in result.output.split(separator: "\n") {
      let parts = line.split(separator: "\t", maxSplits: 1).map(String.init)
      let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: folder + "/" + parts[0])))
      let read: String
      do { read = Self.canonical(try PropertyList.parse(bytes)) } catch { read = "refused: \(error.reason)" }
      compared += 1
      if parts[1].hasPrefix("refused: ") {
        if !read.hasPrefix("refused: ") { differing.append("\(parts[0]): plistlib \(parts[1]), appdata read it") }
      } else if read != parts[1] {
        differing.append("\(parts[0]): \(read.prefix(160)) != \(parts[1].prefix(160))")
      }
    }
    #expect(compared == names.count)
    #expect(differing.isEmpty, "\(differing)")
  }

  @Test func integersUpToTwoToTheSixtyFourMinusOneInBothFormats() throws {
    // Binary: plistlib and CoreFoundation write 2^63 to 2^64 - 1 as 16-byte integers.
    let binary = try plistlib(#"{"big": 2**64 - 1, "low": -2**63, "top": 2**63}"#, binary: true)
    #expect(try PropertyList.parse(binary) == .dictionary(["big": .integer(Int128(UInt64.max)), "low": .integer(Int128(Int64.min)),
                                                           "top": .integer(Int128(1) << 63)]))
    #expect(try PropertyList.parse(binary)["big"]?.integerValue == nil)
    let xml = Array(#"<plist><dict><key>big</key><integer> 18446744073709551615 </integer><key>neg</key><integer>-9223372036854775808</integer></dict></plist>"#.utf8)
    #expect(try PropertyList.parse(xml) == .dictionary(["big": .integer(Int128(UInt64.max)), "neg": .integer(Int128(Int64.min))]))
    // One past either end is refused, naming the range.
    for text in ["18446744073709551616", "-9223372036854775809"] {
      #expect { try PropertyList.parse(Array("<plist><integer>\(text)</integer></plist>".utf8)) } throws: { error in
        (error as? PropertyList.Malformed)?.reason.contains("not a whole number from -2^63 to 2^64 - 1") ?? false
      }
    }
  }

  @Test func hexIntegersReadAsCoreFoundationReadsThem() throws {
    #expect(try PropertyList.parse(Array("<plist><array><integer>0x1F</integer><integer>0XfF</integer><integer>0xFFFFFFFFFFFFFFFF</integer></array></plist>".utf8))
            == .array([.integer(31), .integer(255), .integer(Int128(UInt64.max))]))
    #expect(throws: PropertyList.Malformed.self) { try PropertyList.parse(Array("<plist><integer>0x</integer></plist>".utf8)) }
    #expect(throws: PropertyList.Malformed.self) { try PropertyList.parse(Array("<plist><integer>0x1G</integer></plist>".utf8)) }
  }

  /// A bplist00 of one object (its encoded bytes), with the offset table and trailer.
  static func singleObject(_ object: [UInt8]) -> [UInt8] {
    let table = 8 + object.count
    return Array("bplist00".utf8) + object + [8] + [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1]
      + [UInt8](repeating: 0, count: 8) + [0, 0, 0, 0, 0, 0, 0, UInt8(table)]
  }

  @Test func anIntegerWiderThanSixteenBytesIsRefusedByItsCause() throws {
    // An integer marker of 32 bytes (0x15).
    #expect { try PropertyList.parse(Self.singleObject([0x15] + [UInt8](repeating: 1, count: 32))) } throws: { error in
      (error as? PropertyList.Malformed)?.reason == "an integer of 32 bytes, wider than the 16 bytes a plist integer may take"
    }
  }

  /// What plistlib refuses in binary strings, appdata refuses, naming it: never a U+FFFD.
  @Test func binaryStringsThatAreNotTextAreRefused() throws {
    // An ASCII string (0x5_) holding 0xE9; a UTF-16 string (0x6_) holding a lone high surrogate.
    #expect { try PropertyList.parse(Self.singleObject([0x53, 0x63, 0x61, 0xE9])) } throws: { error in
      (error as? PropertyList.Malformed)?.reason == "an ASCII string holding a byte past 127"
    }
    #expect { try PropertyList.parse(Self.singleObject([0x62, 0x00, 0x61, 0xD8, 0x00])) } throws: { error in
      (error as? PropertyList.Malformed)?.reason == "a UTF-16 string holding an unpaired surrogate"
    }
    #expect(try PropertyList.parse(Self.singleObject([0x62, 0x00, 0x61, 0x00, 0xE9])) == .string("a\u{E9}"))
    let python = try AppData.shell("python3 -c 'import plistlib,sys\nfor b in (b\"\\x53ca\\xe9\", b\"\\x62\\x00a\\xd8\\x00\"):\n  d=b\"bplist00\"+b+bytes([8])+bytes([0,0,0,0,0,0,1,1,0,0,0,0,0,0,0,1])+bytes(8)+bytes([0,0,0,0,0,0,0,8+len(b)])\n  try: plistlib.loads(d); print(\"read\")\n  except Exception: print(\"refused\")'")
    #expect(python.output == "refused\nrefused\n", "\(python.output)\(python.error)")
  }

  @Test func xmlLineEndsAreNormalisedAsXMLSays() throws {
    let text = Array("<plist><dict><key>a\r\nb</key><string>line1\r\nline2\rline3&#13;</string><key>c</key><string><![CDATA[x\r\ny]]></string></dict></plist>".utf8)
    #expect(try PropertyList.parse(text) == .dictionary(["a\nb": .string("line1\nline2\nline3\r"), "c": .string("x\ny")]))
    // As plistlib reads the same bytes.
    let python = try AppData.shell("python3 -c 'import plistlib,sys; print(repr(plistlib.loads(sys.stdin.buffer.read())))' <<'EOF'\n<plist><string>line1\r\nline2\rline3</string></plist>\nEOF")
    #expect(python.output.trimmingCharacters(in: .whitespacesAndNewlines) == "'line1\\nline2\\nline3'")
  }

  @Test func theDeclaredEncodingIsRead() throws {
    let body = "<plist version=\"1.0\"><dict><key>s</key><string>café ✓ 😀</string></dict></plist>"
    let expected = PropertyList.dictionary(["s": .string("café ✓ 😀")])
    for (name, encoding) in [("UTF-16", String.Encoding.utf16), ("UTF-16", .utf16LittleEndian), ("UTF-16", .utf16BigEndian)] {
      let document = "<?xml version=\"1.0\" encoding=\"\(name)\"?>" + body
      #expect(try PropertyList.parse(Array(document.data(using: encoding)!)) == expected, "\(encoding)")
    }
    let latin = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><plist><string>café ÿ</string></plist>"
    #expect(try PropertyList.parse(Array(latin.data(using: .isoLatin1)!)) == .string("café ÿ"))
    #expect { try PropertyList.parse(Array("<?xml version=\"1.0\" encoding=\"Shift_JIS\"?><plist><string>x</string></plist>".utf8)) } throws: { error in
      (error as? PropertyList.Malformed)?.reason == "an XML plist in shift_jis, an encoding appdata does not read (UTF-8, UTF-16 and ISO-8859-1 only)"
    }
    // Bytes that are not UTF-8 in a UTF-8 plist: refused, never read as U+FFFD.
    #expect(throws: PropertyList.Malformed.self) { try PropertyList.parse(Array("<plist><string>caf".utf8) + [0xE9] + Array("</string></plist>".utf8)) }
  }

  @Test func keysThatDifferOnlyInCompositionAreTwoKeys() throws {
    let plist = try plistlib(#"{"caf\u00e9": 3000, "cafe\u0301": 1000}"#, binary: false)
    guard case .dictionary(let members) = try PropertyList.parse(plist) else { Issue.record("not a dictionary"); return }
    #expect(members.count == 2)
    #expect(members["caf\u{E9}"] == .integer(3000))
    #expect(members["cafe\u{301}"] == .integer(1000))
  }

  /// A container whose metadata plist (or a package's AppDataInfo.plist) also holds 2^64 - 1
  /// keeps its id; a real backup's Info.plist with such a key still names device, version and date.
  @Test func aTwoToTheSixtyFourMinusOneKeyKeepsIdsAndBackupFacts() throws {
    let folder = NSTemporaryDirectory() + "appdata-plist-ids-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let script = """
      import plistlib, os, sys, importlib.util
      folder = sys.argv[1]
      for binary in (True, False):
          root = os.path.join(folder, "binary" if binary else "xml")
          os.makedirs(os.path.join(root, "Documents"))
          with open(os.path.join(root, ".com.apple.mobile_container_manager.metadata.plist"), "wb") as f:
              plistlib.dump({"MCMMetadataIdentifier": "com.example.weights", "Huge": 2**64 - 1}, f,
                            fmt=plistlib.FMT_BINARY if binary else plistlib.FMT_XML)
      package = os.path.join(folder, "Weights.xcappdata")
      os.makedirs(os.path.join(package, "AppData", "Documents"))
      with open(os.path.join(package, "AppDataInfo.plist"), "wb") as f:
          plistlib.dump({"CFBundleIdentifier": "com.example.weights", "Huge": 2**64 - 1}, f, fmt=plistlib.FMT_BINARY)
      spec = importlib.util.spec_from_file_location("b", sys.argv[2])
      b = importlib.util.module_from_spec(spec); spec.loader.exec_module(b)
      backup = os.path.join(folder, "backup")
      os.makedirs(backup)
      b.write_plists(backup, ["com.example.weights"])
      b.write_database(backup, [("AppDomain-com.example.weights", "Documents/a", 1, 5, None)], stored=False)
      for name in ("Info.plist", "Manifest.plist", "Status.plist"):
          path = os.path.join(backup, name)
          value = plistlib.load(open(path, "rb"))
          value["Huge"] = 2**64 - 1
          plistlib.dump(value, open(path, "wb"), fmt=plistlib.FMT_BINARY)
      encrypted = os.path.join(folder, "encrypted")
      os.makedirs(encrypted)
      b.write_plists(encrypted, ["com.example.weights"])
      b.write_database(encrypted, [("AppDomain-com.example.weights", "Documents/a", 1, 5, None)], stored=False)
      b.encrypt(encrypted, dpic=10)
      b.edit_manifest(encrypted, lambda manifest: manifest.update(Huge=2**64 - 1))
      """
    let result = try AppData.shell("python3 - '\(folder)' '\(AppData.packageRoot)/Scripts/make-test-backup.py' <<'EOF'\n\(script)\nEOF")
    #expect(result.status == 0, "\(result.error)")
    for path in ["binary", "xml", "Weights.xcappdata"] {
      #expect(try AppData.auditJSON("\(folder)/\(path)")["id"] as? String == "com.example.weights", "\(path)")
    }
    let table = try AppData.run(["audit", "\(folder)/backup"])
    #expect(table.output.contains("Backup: Test iPhone, iOS 17.1, 2026-11-01T12:00:00Z"), "\(table.output)")
    // An encrypted backup whose Manifest.plist (which holds its keys) has such a key opens.
    let encrypted = try AppData.run(["audit", "\(folder)/encrypted"], environment: EncryptedBackupTests.withPassword)
    #expect(encrypted.status == 0, "\(encrypted.error)")
    #expect(encrypted.output.contains("com.example.weights"), "\(encrypted.output)")
  }

  /// A metadata plist or an AppDataInfo.plist that still cannot be read is a warning naming the
  /// file, never a silent `id: null`: in a folder, a package and an archive.
  @Test func anUnreadableIdentityPlistIsAWarningNamingIt() throws {
    let folder = NSTemporaryDirectory() + "appdata-plist-unreadable-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let metadata = ".com.apple.mobile_container_manager.metadata.plist"
    try FileManager.default.createDirectory(atPath: folder + "/c/Documents", withIntermediateDirectories: true)
    try Data("bplist00 damaged".utf8).write(to: URL(fileURLWithPath: "\(folder)/c/\(metadata)"))
    try FileManager.default.createDirectory(atPath: folder + "/P.xcappdata/AppData/Documents", withIntermediateDirectories: true)
    try Data("<?xml version=\"1.0\" encoding=\"Shift_JIS\"?><plist><dict/></plist>".utf8).write(to: URL(fileURLWithPath: "\(folder)/P.xcappdata/AppDataInfo.plist"))
    #expect(try AppData.shell("cd '\(folder)' && tar cf c.tar c").status == 0)
    for (path, plist, reason) in [("c", metadata, "a damaged binary plist"), ("c.tar", metadata, "a damaged binary plist"),
                                  ("P.xcappdata", "../AppDataInfo.plist", "an XML plist in shift_jis")] {
      let report = try AppData.auditJSON("\(folder)/\(path)")
      #expect(report["id"] is NSNull, "\(path)")
      let findings = report["findings"] as? [[String: Any]] ?? []
      #expect(findings.count == 1, "\(path): \(findings)")
      #expect(findings.first?["rule"] as? String == "metadata-unreadable")
      #expect(findings.first?["severity"] as? String == "warning")
      #expect(findings.first?["path"] as? String == plist)
      #expect((findings.first?["message"] as? String ?? "").contains(reason), "\(findings)")
    }
  }

  /// `VALUE` (a Python expression) written by plistlib.
  private func plistlib(_ value: String, binary: Bool) throws -> [UInt8] {
    let format = binary ? "FMT_BINARY" : "FMT_XML"
    // Base64 by Python, not GNU base64's -w0 (macOS's base64 has no -w).
    let result = try AppData.shell("python3 -c 'import base64,plistlib,sys; sys.stdout.write(base64.b64encode(plistlib.dumps(\(value), fmt=plistlib.\(format))).decode())'")
    return Array(Data(base64Encoded: result.output.trimmingCharacters(in: .whitespacesAndNewlines))!)
  }
}

private extension String {
  func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
