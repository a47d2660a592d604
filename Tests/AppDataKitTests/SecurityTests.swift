@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Testing

/// Hostile trees: symlinks, races, odd names, faults and missing privileges. Nothing outside
/// PATH is read or changed, nothing is lost, and every problem is named.
@Suite("security and reliability", .serialized)
struct SecurityTests {
  private func outsideTree() throws -> TestTree {
    let outside = try TestTree("outside")
    try outside.file("secret/huge.bin", size: 70_000)
    try outside.file("secret/deep/more.bin", size: 30_000)
    try outside.setModernMarker("secret")
    return outside
  }

  // MARK: - Symlinks and races

  @Test func auditNeverFollowsAFolderSwappedForASymlink() throws {
    let tree = try TestTree("race-audit")
    let outside = try outsideTree()
    try tree.file("Documents/a.txt", size: 10)
    try tree.file("Library/Preferences/p.plist", size: 5)
    let result = try AppData.runPaused(["audit", "--json", "--list", "all", "--fail-on", "never", "--jobs", "1", tree.root], at: "walk") {
      // The root is listed; Documents is not yet opened. Replace it with a link to outside.
      try FileManager.default.moveItem(atPath: tree.path("Documents"), toPath: tree.scratch + "/Documents.real")
      try tree.symlink("Documents", to: outside.path("secret"))
    }
    #expect(result.status == 0, "\(result.error)")
    let json = try result.json()
    #expect(figures(json, "critical")[0...1] == [1, 5])
    #expect(figures(json, "offline")[0] == 0)
    #expect(!result.output.contains("huge.bin") && !result.output.contains("more.bin"))
    let unreadable = findings(json, rule: "unreadable")
    #expect(unreadable.map { $0["path"] as? String } == ["Documents"])
    #expect((unreadable.first?["message"] as? String)?.hasPrefix("cannot open the folder: ") == true)
  }

  @Test func aDeviceFolderSwappedForASymlinkAfterResolvingIsNeverFollowed() throws {
    let tree = try TestTree("race-device")
    let outside = try outsideTree()
    let apps = "data/Containers/Data/Application"
    try tree.file(apps + "/A/Documents/a.txt", size: 10)
    try tree.file(apps + "/B/Documents/b.txt", size: 20)
    try tree.file(apps + "/A/Library/Caches/c.bin", size: 5)
    let plist = #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>MCMMetadataIdentifier</key><string>com.x</string></dict></plist>"#
    try tree.file(apps + "/A/" + ContainerLayout.metadataFileName, contents: Array(plist.utf8))
    // The decoy outside has the same shape, so only following the link would reach it.
    try outside.file("Application/A/Documents/huge.bin", size: 4096)
    try outside.file("Application/A/Library/Caches/decoy.bin", size: 7)
    try outside.file("Application/B/Documents/more.bin", size: 4096)
    for command in [["audit", "--json", "--fail-on", "never"], ["migrate", "--app", "com.x"]] {
      let result = try AppData.runPaused(command + [tree.root], at: "resolved") {
        try? FileManager.default.removeItem(atPath: tree.scratch + "/Application.real")
        try FileManager.default.moveItem(atPath: tree.path(apps), toPath: tree.scratch + "/Application.real")
        try tree.symlink(apps, to: outside.path("Application"))
      }
      if command[0] == "audit" {
        #expect(result.status == 0, "\(result.error)")
        let json = try result.json()
        #expect(integer(json, "summary", "backup", "bytes") == 0)
        let unreadable = (json["containers"] as? [[String: Any]] ?? []).flatMap { findings($0, rule: "unreadable") }
        #expect(unreadable.count == 2)
        #expect(!result.output.contains("huge.bin"))
      } else {
        #expect(result.status == 2)
        #expect(result.error.contains("Application/A: cannot open"), "\(result.error)")
        #expect(FileManager.default.fileExists(atPath: outside.path("Application/A/Library/Caches/decoy.bin")))
        #expect(!FileManager.default.fileExists(atPath: outside.path("Application/A/Documents/decoy.bin")))
      }
      try FileManager.default.removeItem(atPath: tree.path(apps))
      try FileManager.default.moveItem(atPath: tree.scratch + "/Application.real", toPath: tree.path(apps))
    }
  }

  @Test func aFolderHandedToAnotherWorkerIsReopenedWithoutFollowingASymlinkAbove() throws {
    let tree = try TestTree("race-handover")
    let outside = try outsideTree()
    try tree.file("Documents/a.txt", size: 10)
    try tree.file("Documents/deep/x.txt", size: 7)
    let result = try AppData.runPaused(
      ["audit", "--json", "--list", "all", "--fail-on", "never", "--jobs", "1", tree.root], at: "folder",
      environment: ["APPDATA_TEST_HAND_OVER_ALL": "1"]
    ) {
      // Documents is listed and Documents/deep waits to be reopened from the root by its path.
      // Replace Documents with a link to a folder outside that also has a `deep`.
      try FileManager.default.moveItem(atPath: tree.path("Documents"), toPath: tree.scratch + "/Documents.real")
      try tree.symlink("Documents", to: outside.path("secret"))
    }
    #expect(result.status == 0, "\(result.error)")
    let json = try result.json()
    #expect(figures(json, "critical")[0...1] == [1, 10])
    #expect(!result.output.contains("more.bin") && !result.output.contains("x.txt"))
    let unreadable = findings(json, rule: "unreadable")
    #expect(unreadable.map { $0["path"] as? String } == ["Documents/deep"])
    #expect((unreadable.first?["message"] as? String)?.hasPrefix("cannot open the folder: ") == true)
  }

  @Test func symlinksOfEveryKindAreEntriesNeverTargets() throws {
    let tree = try TestTree("links")
    let outside = try outsideTree()
    try tree.file("Documents/real.txt", size: 3)
    try tree.symlink("Documents/out", to: outside.path("secret"))
    try tree.symlink("Documents/root", to: "/")
    try tree.symlink("Documents/self", to: "self")
    try tree.symlink("Documents/loop-a", to: "loop-b")
    try tree.symlink("Documents/loop-b", to: "loop-a")
    try tree.symlink("Library", to: outside.path("secret"))
    let json = try Library.auditJSON(tree.root, list: Set(AppDataCore.Category.allCases))
    // Six links and one file; Library is a link at the top, so an entry of its own.
    #expect(figures(json, "critical")[0...1] == [7, 3])
    #expect(integer(json, "summary", "directories") == 1)
    #expect(findings(json).isEmpty)
  }

  @Test func migrateMovesASwappedSourceAsALinkAndNeverWritesOutside() throws {
    let tree = try MigrateTests.legacyContainer("race-source")
    let outside = try outsideTree()
    let before = try manifest(outside.root)
    let result = try AppData.runPaused(["migrate", tree.root], at: "migrate") {
      try FileManager.default.moveItem(atPath: tree.path("Library/Caches/Photos"), toPath: tree.path("Library/Caches/Photos.real"))
      try tree.symlink("Library/Caches/Photos", to: outside.path("secret"))
    }
    #expect(result.status == 0, "\(result.error)")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: tree.path("Documents/Photos")) == outside.path("secret"))
    #expect(same(try manifest(outside.root), before))
    #expect(FileManager.default.fileExists(atPath: tree.path("Library/Caches/Photos.real/index.db")))
  }

  @Test func migrateRefusesADestinationSwappedForASymlink() throws {
    let tree = try MigrateTests.legacyContainer("race-destination")
    let outside = try outsideTree()
    let before = try manifest(outside.root)
    let sources = try manifest(tree.path("Library/Caches"))
    let result = try AppData.runPaused(["migrate", "--json", tree.root], at: "migrate") {
      try FileManager.default.moveItem(atPath: tree.path("Documents"), toPath: tree.scratch + "/Documents.real")
      try tree.symlink("Documents", to: outside.path("secret"))
    }
    #expect(result.status == 1)
    let entries = try result.json()["entries"] as? [[String: Any]] ?? []
    let failed = entries.filter { $0["action"] as? String == "failed" }
    #expect(failed.count == 2)
    #expect(failed.allSatisfy { ($0["message"] as? String)?.contains("Too many levels of symbolic links") == true || ($0["message"] as? String)?.contains("Not a directory") == true })
    #expect(same(try manifest(outside.root), before))
    #expect(same(try manifest(tree.path("Library/Caches")), sources))
  }

  // MARK: - Names

  /// Names that break naive tools, and their exact bytes.
  static let hostileNames: [[UInt8]] = [
    Array("line\nbreak".utf8), Array("tab\there".utf8), Array("\u{1B}]0;pwned\u{07}title".utf8), Array("\u{1B}[2Jclear".utf8),
    Array("-rf".utf8), Array("--help".utf8), [0x63, 0x61, 0x66, 0xE9], [0xFF, 0xFE, 0x2E, 0x62, 0x69, 0x6E],
    Array(repeating: 0x6E, count: 255), Array("quote\"back\\slash".utf8), Array("percent%20 and spaces ".utf8),
  ]

  private func create(_ name: [UInt8], in folder: String, size: Int) throws {
    let path = Array(folder.utf8) + [0x2F] + name + [0]
    let fd = path.withUnsafeBufferPointer { $0.baseAddress!.withMemoryRebound(to: CChar.self, capacity: path.count) { open($0, O_CREAT | O_WRONLY | O_EXCL, 0o644) } }
    guard fd >= 0 else { throw TestFailure("cannot create \(name): errno \(errno)") }
    let bytes = [UInt8](repeating: 0x41, count: size)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, size) }
    close(fd)
  }

  @Test(.enabled(if: AppData.has("jq"), "needs jq"))
  func hostileNamesStayValidLosslessAndEscaped() throws {
    let tree = try TestTree("names")
    try tree.folder("Documents/n")
    for (index, name) in Self.hostileNames.enumerated() { try create(name, in: tree.path("Documents/n"), size: index + 1) }
    // jq parses it (valid JSON), and every name comes back byte for byte.
    let jq = try AppData.shell("\"$APPDATA\" audit --json --list all --no-config '\(tree.root)' | jq -r '.entries[] | .pathBase64 // (.path | @base64)'")
    #expect(jq.status == 0, "\(jq.error)")
    let decoded = Set(jq.output.split(separator: "\n").map { Array(Data(base64Encoded: String($0))!) })
    let expected = Set(Self.hostileNames.map { Array("Documents/n/".utf8) + $0 })
    #expect(decoded == expected)
    // The table never carries raw control bytes.
    let table = try AppData.run(["audit", "--list", "all", "--no-config", tree.root])
    #expect(!table.output.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
    #expect(table.output.contains("Documents/n/\\e]0;pwned\\x07title"))
    #expect(table.output.contains("Documents/n/\\e[2Jclear"))
    #expect(table.output.contains("Documents/n/line\\nbreak"))
    #expect(table.output.contains("Documents/n/caf\\xe9"))
  }

  @Test func migrateMovesHostileNamesIntact() throws {
    let tree = try TestTree("names-migrate")
    try tree.folder("Documents")
    try tree.folder("Library/Caches/inner")
    for (index, name) in Self.hostileNames.enumerated() {
      try create(name, in: tree.path("Library/Caches"), size: index + 1)
      try create(name, in: tree.path("Library/Caches/inner"), size: index + 100)
    }
    let before = try manifest(tree.path("Library/Caches"))
    let result = try AppData.run(["migrate", tree.root])
    #expect(result.status == 0, "\(result.error)")
    #expect(same(try manifest(tree.path("Documents"), dropMarkers: true), before))
    #expect(!result.output.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
  }

  @Test(arguments: [false, true])
  func pathsDeeperThanPathMaxMigrateToo(forceCopy: Bool) throws {
    let tree = try TestTree("deep-migrate")
    try tree.folder("Documents")
    try tree.folder("Library/Caches/deep")
    // 25 levels of 200 bytes: past PATH_MAX.
    try tree.deepChain(under: "Library/Caches/deep", levels: 25, name: String(repeating: "d", count: 200), contents: "leaf")
    let result = try AppData.run(["migrate", "--json", tree.root], environment: forceCopy ? ["APPDATA_TEST_FORCE_COPY": "1"] : [:])
    #expect(result.status == 0, "\(result.error)")
    #expect(integer(try result.json(), "totals", forceCopy ? "copied" : "moved", "files") == 1)
    let audit = try Library.auditJSON(tree.root, list: [.offline])
    let moved = (audit["entries"] as? [[String: Any]])?.first?["path"] as? String ?? ""
    #expect(moved.utf8.count > 5000 && moved.hasSuffix("/leaf.bin"))
  }

  // MARK: - Unprivileged runs

  @Test(.enabled(if: AppData.canRunAsAnotherUser, "needs root and setpriv to run the binary as an unprivileged user"))
  func unreadableFilesAndFoldersAreNamedAndTheRestCounted() throws {
    let tree = try TestTree("unprivileged")
    try tree.file("Documents/ok.txt", size: 10)
    try tree.file("Documents/Locked/inside.bin", size: 999)
    try tree.file("Documents/secret.db", size: 7)
    try tree.setLegacyMarker("Documents/secret.db")
    chmod(tree.path("Documents/Locked"), 0o700)
    chmod(tree.path("Documents/secret.db"), 0o600)
    let result = try AppData.run(["audit", "--json", "--no-config", tree.root], asUser: 65534)
    #expect(result.status == 1)
    let json = try result.json()
    #expect(figures(json, "critical")[0...1] == [2, 17])
    #expect(findings(json, rule: "unreadable").map { "\($0["path"]!): \($0["message"]!)" } == [
      "Documents/Locked: cannot open the folder: Permission denied",
      "Documents/secret.db: cannot read the extended attributes: Permission denied",
    ])
  }

  @Test(.enabled(if: AppData.canRunAsAnotherUser, "needs root and setpriv to run the binary as an unprivileged user"))
  func migrateRefusesCleanlyWhenItCannotWrite() throws {
    let tree = try MigrateTests.legacyContainer("unprivileged-migrate")
    let before = try manifest(tree.root)
    let result = try AppData.run(["migrate", tree.root], asUser: 65534)
    #expect(result.status == 2)
    #expect(result.error == "appdata: error: Library/Caches: cannot move entries out of it: Permission denied; nothing was changed\n")
    #expect(same(try manifest(tree.root), before))
    // Writable source, read-only destination.
    _ = try AppData.shell("chown -R 65534 '\(tree.path("Library"))'")
    let destination = try AppData.run(["migrate", tree.root], asUser: 65534)
    #expect(destination.status == 2)
    #expect(destination.error == "appdata: error: Documents: cannot create files there: Permission denied; nothing was changed\n")
  }

  @Test(.enabled(if: AppData.canRunAsAnotherUser, "needs root and setpriv to run the binary as an unprivileged user"))
  func anUnreadableSourceFileFailsItsEntryAndLosesNothing() throws {
    let tree = try TestTree("unreadable-source")
    try tree.file("Library/Caches/Good/a.bin", size: 100)
    try tree.file("Library/Caches/Bad/ok.bin", size: 50)
    try tree.file("Library/Caches/Bad/locked.bin", size: 60)
    try tree.folder("Documents")
    _ = try AppData.shell("chown -R 65534 '\(tree.root)' && chown 0 '\(tree.path("Library/Caches/Bad/locked.bin"))' && chmod 600 '\(tree.path("Library/Caches/Bad/locked.bin"))'")
    let before = try manifest(tree.path("Library/Caches"))
    // Copying (as across filesystems) must read every byte; the locked file cannot be read.
    let result = try AppData.run(["migrate", "--json", tree.root], environment: ["APPDATA_TEST_FORCE_COPY": "1"], asUser: 65534)
    #expect(result.status == 1)
    let entries = try result.json()["entries"] as? [[String: Any]] ?? []
    #expect(entries.map { "\($0["action"]!) \($0["source"]!)" } == ["failed Library/Caches/Bad", "copied Library/Caches/Good"])
    #expect((entries.first?["message"] as? String) == "Library/Caches/Bad/locked.bin: cannot open: Permission denied")
    #expect(result.error.contains("1 entry not migrated"))
    // Bad is still whole in the source, and no partial copy is left behind.
    #expect(same(subtree(try manifest(tree.path("Library/Caches")), under: "Bad"), subtree(before, under: "Bad")))
    #expect(try FileManager.default.contentsOfDirectory(atPath: tree.path("Documents")) == ["Good"])
  }
}
