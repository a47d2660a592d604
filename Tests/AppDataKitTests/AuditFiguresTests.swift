@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Testing

/// Exact figures from `appdata audit --format json` on real trees.
@Suite("audit figures")
struct AuditFiguresTests {
  /// One file in each category, with sizes that make every sum unambiguous.
  private func everyCategory() throws -> TestTree {
    let tree = try TestTree("categories")
    try tree.file("Documents/a.txt", size: 100)
    try tree.file("Documents/Inbox/b.pdf", size: 20)
    try tree.file("Library/Application Support/db.sqlite", size: 3000)
    try tree.file("Library/Preferences/com.example.plist", size: 4)
    try tree.file("Documents/Offline/map.bin", size: 50_000)
    try tree.setModernMarker("Documents/Offline")
    try tree.file("Library/Caches/c1", size: 7)
    try tree.file("Library/Caches/deep/c2", size: 8)
    try tree.file("tmp/t", size: 9)
    try tree.file("Library/SplashBoard/s.ktx", size: 11)
    try tree.file("Library/Saved Application State/x", size: 12)
    try tree.file("SystemData/com.apple.chrono/y", size: 13)
    // A real (if empty) metadata plist: one that cannot be read is a metadata-unreadable warning.
    try tree.file(".com.apple.mobile_container_manager.metadata.plist", contents: Array("<plist><dict/></plist>".utf8))
    try tree.file("Junk/z", size: 15)
    try tree.folder("Example.app")
    try tree.file("Example.app/Info.plist", size: 16)
    return tree
  }

  @Test func eachCategoryHasExactFigures() throws {
    let tree = try everyCategory()
    let json = try Library.auditJSON(tree.root)
    #expect(figures(json, "critical")[0...1] == [4, 3124])
    #expect(figures(json, "offline")[0...1] == [1, 50_000])
    #expect(figures(json, "cached")[0...1] == [2, 15])
    #expect(figures(json, "temporary")[0...1] == [1, 9])
    #expect(figures(json, "system")[0...1] == [4, 11 + 12 + 13 + 22])
    #expect(figures(json, "other")[0...1] == [2, 15 + 16])
    #expect(integer(json, "summary", "backup", "files") == 4)
    #expect(integer(json, "summary", "backup", "bytes") == 3124)
    // Documents, Inbox, Offline, Library, Application Support, Preferences, Caches, deep, tmp,
    // SplashBoard, Saved Application State, SystemData, com.apple.chrono, Junk, Example.app.
    #expect(integer(json, "summary", "directories") == 15)
    #expect(json["schemaVersion"] as? Int == 1)
    #expect(value(json, "tool", "name") as? String == "appdata")
    #expect(json["container"] as? String == tree.root)
    #expect(value(json, "limits", "maxFileSize") is NSNull)
    // Only Junk is outside the layout; the .app bundle is a known location.
    #expect(findings(json).map { $0["rule"] as? String } == ["unknown-location"])
    #expect(findings(json).first?["path"] as? String == "Junk")
  }

  @Test func largestListsBackedUpFilesOnly() throws {
    let tree = try everyCategory()
    let json = try Library.auditJSON(tree.root, configure: { $0.top = 2 })
    let largest = json["largest"] as? [[String: Any]] ?? []
    #expect(largest.map { $0["path"] as? String } == ["Library/Application Support/db.sqlite", "Documents/a.txt"])
    #expect(largest.map { $0["bytes"] as? Int } == [3000, 100])
    #expect(largest.allSatisfy { $0["category"] as? String == "critical" })
  }

  @Test func markerOnAFolderIsInheritedByEverythingBelow() throws {
    let tree = try TestTree("inherit")
    try tree.file("Documents/Maps/europe/a.tile", size: 10)
    try tree.file("Documents/Maps/europe/b/c.tile", size: 20)
    try tree.file("Documents/kept.txt", size: 5)
    try tree.setModernMarker("Documents/Maps")
    let json = try Library.auditJSON(tree.root, list: Set(AppDataCore.Category.allCases))
    #expect(figures(json, "offline")[0...1] == [2, 30])
    #expect(figures(json, "critical")[0...1] == [1, 5])
    let listed = entries(json)
    #expect(listed["Documents/Maps/europe/b/c.tile"]?["excludedBy"] as? String == "Documents/Maps")
    #expect(listed["Documents/Maps/europe/b/c.tile"]?["marker"] as? String == "modern")
    #expect(listed["Documents/kept.txt"]?["excludedBy"] is NSNull)
    #expect(listed["Documents/kept.txt"]?["marker"] is NSNull)
  }

  @Test func legacyModernAndBothMarkers() throws {
    let tree = try TestTree("markers")
    try tree.file("Documents/modern.bin", size: 1)
    try tree.file("Documents/legacy.bin", size: 2)
    try tree.file("Documents/both.bin", size: 4)
    try tree.file("Documents/zero.bin", size: 8)
    try tree.setModernMarker("Documents/modern.bin")
    try tree.setLegacyMarker("Documents/legacy.bin")
    try tree.setModernMarker("Documents/both.bin")
    try tree.setLegacyMarker("Documents/both.bin")
    // A legacy marker whose value is 0 does not exclude.
    try tree.setLegacyMarker("Documents/zero.bin", value: 0)
    let json = try Library.auditJSON(tree.root, list: Set(AppDataCore.Category.allCases))
    let listed = entries(json)
    #expect(listed["Documents/modern.bin"]?["marker"] as? String == "modern")
    #expect(listed["Documents/legacy.bin"]?["marker"] as? String == "legacy")
    #expect(listed["Documents/both.bin"]?["marker"] as? String == "both")
    #expect(listed["Documents/zero.bin"]?["marker"] is NSNull)
    #expect(listed["Documents/zero.bin"]?["category"] as? String == "critical")
    #expect(figures(json, "offline")[0...1] == [3, 7])
    #expect(figures(json, "critical")[0...1] == [1, 8])
    // Only the item marked with the legacy attribute alone is reported.
    #expect(findings(json, rule: "legacy-marker").map { $0["path"] as? String } == ["Documents/legacy.bin"])
  }

  @Test func linuxNamesCarryTheUserPrefixAndBareNamesAreRecognisedToo() throws {
    #expect(MarkerTable.platformName(of: .modern) == "user.com.apple.metadata:com_apple_backup_excludeItem")
    #expect(MarkerTable.platformName(of: .legacy) == "user.com.apple.MobileBackup")
    let tree = try TestTree("prefix")
    try tree.file("Documents/rsynced.bin", size: 3)
    // What rsync -X writes on Linux for a Mac's bare attribute.
    try tree.setAttribute("Documents/rsynced.bin", "user.com.apple.metadata:com_apple_backup_excludeItem", Marker.modernValue)
    let json = try Library.auditJSON(tree.root)
    #expect(figures(json, "offline")[0...1] == [1, 3])
    #expect(MarkerTable.recognised.map(\.name).contains("com.apple.MobileBackup"))
  }

  @Test func modernMarkerBytesAreApples() throws {
    #expect(Marker.modernValue.count == 61)
    let tree = try TestTree("bytes")
    try tree.file("Documents/x", size: 1)
    let result = try AppData.run(["exclude", tree.path("Documents/x")])
    #expect(result.status == 0)
    let stored = try ExtendedAttributes.value(of: "user.com.apple.metadata:com_apple_backup_excludeItem", atPath: tree.path("Documents/x"))
    #expect(stored.map { $0.map { String(format: "%02x", $0) }.joined() }
      == "62706c69737430305f1011636f6d2e6170706c652e6261636b75706408000000000000010100000000000000010000000000000000000000000000001c")
  }

  @Test func hardLinksAreCountedOnce() throws {
    let tree = try TestTree("hardlink")
    try tree.file("Documents/photo.jpg", size: 1000)
    try tree.hardLink("Documents/copy.jpg", to: "Documents/photo.jpg")
    try tree.hardLink("Library/Caches/cached.jpg", to: "Documents/photo.jpg")
    let json = try Library.auditJSON(tree.root, list: Set(AppDataCore.Category.allCases))
    #expect(figures(json, "critical")[0...1] == [1, 1000])
    #expect(figures(json, "cached")[0...1] == [0, 0])
    // The backed-up link is the one counted, and the first path among those.
    #expect(Array(entries(json).keys) == ["Documents/copy.jpg"])
  }

  @Test func sparseFilesReportApparentAndAllocatedSizes() throws {
    let tree = try TestTree("sparse")
    try tree.sparseFile("Documents/disk.img", size: 64 << 20)
    let json = try Library.auditJSON(tree.root)
    let critical = figures(json, "critical")
    #expect(critical[0] == 1)
    #expect(critical[1] == 64 << 20)
    #expect(critical[2] == 0)
  }

  @Test func symlinksAreEntriesAndNeverFollowed() throws {
    let tree = try TestTree("symlink")
    let outside = try TestTree("outside")
    try outside.file("secret/huge.bin", size: 100_000)
    try outside.setModernMarker("secret")
    try tree.file("Documents/real.txt", size: 10)
    try tree.symlink("Documents/outside-folder", to: outside.path("secret"))
    try tree.symlink("Documents/outside-file", to: outside.path("secret/huge.bin"))
    try tree.symlink("Documents/root", to: "/")
    try tree.symlink("Documents/loop", to: "loop")
    let json = try Library.auditJSON(tree.root, list: Set(AppDataCore.Category.allCases))
    // Four links and one file: links are files of 0 bytes; nothing outside is read.
    #expect(figures(json, "critical")[0...1] == [5, 10])
    #expect(integer(json, "summary", "directories") == 1)
    #expect(entries(json)["Documents/outside-folder"]?["bytes"] as? Int == 0)
    #expect(findings(json).isEmpty)
  }

  @Test func namesWithNewlinesAndInvalidUTF8AreLossless() throws {
    let tree = try TestTree("names")
    try tree.file("Documents/line\nbreak.txt", size: 3)
    let invalid: [UInt8] = Array("Documents/caf".utf8) + [0xE9] + Array(".txt".utf8)
    let full = Array(tree.root.utf8) + [0x2F] + invalid
    let raw = full + [0]
    let created = raw.withUnsafeBufferPointer { buffer in
      buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { open($0, O_CREAT | O_WRONLY, 0o644) }
    }
    #expect(created >= 0)
    _ = write(created, "abcde", 5)
    close(created)

    let json = try Library.auditJSON(tree.root, list: Set(AppDataCore.Category.allCases))
    #expect(figures(json, "critical")[0...1] == [2, 8])
    let listed = json["entries"] as? [[String: Any]] ?? []
    #expect(listed.contains { $0["path"] as? String == "Documents/line\nbreak.txt" && $0["pathBase64"] == nil })
    let lossy = listed.first { ($0["path"] as? String)?.hasPrefix("Documents/caf") == true }
    #expect(lossy?["path"] as? String == "Documents/caf\u{FFFD}.txt")
    #expect(lossy?["pathBase64"] as? String == Data(invalid).base64EncodedString())

    // The table shows escapes, never the raw bytes.
    let table = try AppData.run(["audit", "--list", "all", tree.root])
    #expect(table.output.contains("Documents/line\\nbreak.txt"))
    #expect(table.output.contains("Documents/caf\\xe9.txt"))
    #expect(!table.output.contains("line\nbreak"))
  }

  @Test func pathsDeeperThanPathMax() throws {
    let tree = try TestTree("deep")
    // 90 levels of 60-byte names: about 5,500 bytes, beyond PATH_MAX (4096).
    try tree.folder("Documents")
    try tree.deepChain(under: "Documents", levels: 90, name: String(repeating: "d", count: 60), contents: "0123456789")

    let json = try Library.auditJSON(tree.root, list: [.critical])
    #expect(figures(json, "critical")[0...1] == [1, 10])
    #expect(integer(json, "summary", "directories") == 91)
    let path = (json["entries"] as? [[String: Any]])?.first?["path"] as? String ?? ""
    #expect(path.utf8.count > 4096)
    #expect(path.hasSuffix("/leaf.bin"))
  }

  @Test func cacheDeclarationsInsideTheBackupAreReported() throws {
    let tree = try TestTree("cachetag")
    try tree.file("Library/Application Support/ImageCache/CACHEDIR.TAG",
                  contents: Array("Signature: 8a477f597d28d172789f06886806bc55\n# a cache\n".utf8))
    try tree.file("Library/Application Support/NotACache/CACHEDIR.TAG", contents: Array("Signature: wrong".utf8))
    try tree.file("Library/Caches/Real/CACHEDIR.TAG", contents: Array("Signature: 8a477f597d28d172789f06886806bc55".utf8))
    try tree.folder("Documents/Robots")
    try tree.setAttribute("Documents/Robots", "user.xdg.robots.backup", Array("false".utf8))
    let json = try Library.auditJSON(tree.root)
    #expect(findings(json, rule: "cache-in-backup").map { $0["path"] as? String }
      == ["Documents/Robots", "Library/Application Support/ImageCache"])
  }

  @Test func systemFolderAndRedundantMarkers() throws {
    let tree = try TestTree("system-folder")
    try tree.file("Documents/a", size: 1)
    try tree.file("Library/Preferences/p.plist", size: 1)
    try tree.file("Library/Caches/x/y", size: 1)
    try tree.file("tmp/z", size: 1)
    try tree.setModernMarker("Documents")
    try tree.setModernMarker("Library/Preferences")
    try tree.setModernMarker("Library/Caches/x")
    try tree.setLegacyMarker("tmp/z")
    let json = try Library.auditJSON(tree.root)
    #expect(findings(json, rule: "excluded-system-folder").map { $0["path"] as? String } == ["Documents", "Library/Preferences"])
    #expect(findings(json, rule: "redundant-marker").map { $0["path"] as? String } == ["Library/Caches/x", "tmp/z"])
    #expect(findings(json, rule: "legacy-marker").isEmpty)
    #expect(figures(json, "offline")[0...1] == [2, 2])
  }

  @Test(.enabled(if: AppData.canRunAsAnotherUser, "needs root and setpriv to run the binary as an unprivileged user"))
  func unreadableFolderIsAFindingAndTheWalkGoesOn() throws {
    let tree = try TestTree("unreadable")
    try tree.file("Documents/ok.txt", size: 10)
    try tree.file("Documents/Private/secret.txt", size: 99)
    try tree.file("Library/Preferences/p.plist", size: 5)
    chmod(tree.path("Documents/Private"), 0o700)
    let result = try AppData.run(["audit", "--json", tree.root], asUser: 65534)
    #expect(result.status == 1)
    let json = try result.json()
    #expect(figures(json, "critical")[0...1] == [2, 15])
    let unreadable = findings(json, rule: "unreadable")
    #expect(unreadable.map { $0["path"] as? String } == ["Documents/Private"])
    #expect((unreadable.first?["message"] as? String)?.contains("Permission denied") == true)
    #expect(unreadable.first?["severity"] as? String == "error")
  }
}
