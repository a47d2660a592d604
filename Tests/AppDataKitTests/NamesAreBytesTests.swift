@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReports
@testable import AppDataKit
import Foundation
import Testing

/// Names are bytes (issue 32): two names that differ only in Unicode composition, `café` as one
/// character (NFC) and as `e` with a combining accent (NFD), are two files, folders, keys and
/// containers everywhere, each with its own figures, as the file system, plistlib and JSON keep
/// them. Swift's `String ==` would merge them; every key below is compared by its bytes.
@Suite("names are bytes")
struct NamesAreBytesTests {
  static let nfc = "caf\u{E9}"
  static let nfd = "cafe\u{301}"

  /// A folder with `Documents/café` of 3,000 bytes (NFC) and 1,000 bytes (NFD), its tar, and a
  /// backup holding the same; a folder of two containers named `café` both ways.
  static let fixtures: String = {
    let folder = AppData.fixtureRoot + "/names-\(UUID().uuidString)"
    let script = """
      import os, sys, tarfile, importlib.util
      folder = sys.argv[1]
      nfc, nfd = "caf\\u00e9", "cafe\\u0301"
      for name, size in ((nfc, 3000), (nfd, 1000)):
          os.makedirs(os.path.join(folder, "c", "Documents", name))
          open(os.path.join(folder, "c", "Documents", name, "a"), "wb").write(b"x" * size)
          root = os.path.join(folder, "device", "Data", "Application", name)
          os.makedirs(os.path.join(root, "Documents"))
          open(os.path.join(root, "Documents", "a"), "wb").write(b"x" * size)
      with tarfile.open(os.path.join(folder, "c.tar"), "w", format=tarfile.GNU_FORMAT) as archive:
          archive.add(os.path.join(folder, "c"), arcname="c")
      spec = importlib.util.spec_from_file_location("b", sys.argv[2])
      b = importlib.util.module_from_spec(spec); spec.loader.exec_module(b)
      backup = os.path.join(folder, "backup")
      os.makedirs(backup)
      b.write_plists(backup, ["com.example.app"])
      d = "AppDomain-com.example.app"
      b.write_database(backup, [(d, "Documents", 2, 0, None), (d, "Documents/" + nfc, 2, 0, None), (d, "Documents/" + nfd, 2, 0, None),
                                (d, "Documents/" + nfc + "/a", 1, 3000, None), (d, "Documents/" + nfd + "/a", 1, 1000, None)], stored=False)
      """
    let result = try! AppData.shell("python3 - '\(folder)' '\(AppData.packageRoot)/Scripts/make-test-backup.py' <<'EOF'\n\(script)\nEOF")
    precondition(result.status == 0, result.error)
    return folder
  }()

  /// The JSON report, read by appdata's own parser (whose keys are bytes, unlike Foundation's).
  static func report(_ path: String, _ arguments: [String] = []) throws -> JSONValue {
    let result = try AppData.run(["audit", "--format", "json", "--fail-on", "never"] + arguments + [path])
    #expect(result.status == 0, "\(result.error)")
    return try JSONParser.parse(Array(result.output.utf8))
  }

  static func folders(_ container: JSONValue) -> [JSONKey: JSONValue] {
    container.objectValue?["folders"]?.objectValue?["bytes"]?.objectValue ?? [:]
  }

  @Test(arguments: ["c", "c.tar", "backup"])
  func twoFoldersCafeAreTwoWithTheirOwnSizes(input: String) throws {
    let document = try Self.report("\(Self.fixtures)/\(input)")
    let container = input == "backup"
      ? document.objectValue?["containers"]?.arrayValue?.first { $0.objectValue?["id"]?.stringValue == "com.example.app" } ?? .null
      : document
    let folders = Self.folders(container)
    #expect(folders["Documents"]?.unsignedValue == 4000, "\(folders)")
    #expect(folders["Documents/" + Self.nfc]?.unsignedValue == 3000, "\(folders)")
    #expect(folders["Documents/" + Self.nfd]?.unsignedValue == 1000, "\(folders)")
    #expect(folders.count == 3)
  }

  @Test func twoContainersCafeAreTwo() throws {
    let document = try Self.report("\(Self.fixtures)/device")
    let containers = document.objectValue?["containers"]?.arrayValue ?? []
    #expect(containers.count == 2)
    let sizes = Dictionary(uniqueKeysWithValues: containers.compactMap { item -> (JSONKey, UInt64)? in
      guard let path = item.objectValue?["container"]?.stringValue,
            let bytes = item.objectValue?["summary"]?.objectValue?["backup"]?.objectValue?["bytes"]?.unsignedValue else { return nil }
      return (JSONKey(String(path.split(separator: "/").last!)), bytes)
    })
    #expect(sizes[JSONKey(Self.nfc)] == 3000 && sizes[JSONKey(Self.nfd)] == 1000, "\(sizes)")
  }

  @Test func theTreemapHasTwoCells() throws {
    let entries = try #require(try Library.audit("\(Self.fixtures)/c", list: Set(AppDataCore.Category.allCases)).reports.first?.entries)
    let tree = SizeTree(name: "c", entries: entries, compact: false)
    let documents = try #require(tree.root.children["Documents"])
    #expect(documents.children[Self.nfc]?.total == 3000)
    #expect(documents.children[Self.nfd]?.total == 1000)
  }

  @Test func jsonKeysAreTwoAndABaselineReadsBothBack() throws {
    let text = "{\"\(Self.nfc)\": 1, \"\(Self.nfd)\": 2}"
    let object = try #require(try JSONParser.parse(Array(text.utf8)).objectValue)
    #expect(object.count == 2 && object[Self.nfc] == .unsigned(1) && object[Self.nfd] == .unsigned(2))
    // Written and read back: a baseline keeps both folders.
    let baseline = NSTemporaryDirectory() + "appdata-names-baseline-\(UUID().uuidString).json"
    defer { try? FileManager.default.removeItem(atPath: baseline) }
    let written = try AppData.run(["audit", "--format", "json", "--output", baseline, "\(Self.fixtures)/c"])
    #expect(written.status == 0)
    let compared = try Self.report("\(Self.fixtures)/c", ["--baseline", baseline])
    let growth = compared.objectValue?["baseline"].map { $0.serialized(pretty: false) } ?? ""
    #expect(!growth.isEmpty)
    let read = try #require(try Baseline.load(path: baseline).baselines.first?.folders)
    #expect(read.bytes(of: Array(("Documents/" + Self.nfc).utf8)) == 3000)
    #expect(read.bytes(of: Array(("Documents/" + Self.nfd).utf8)) == 1000)
  }
}
