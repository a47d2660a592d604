@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Testing

/// A JSON manifest of a tree (type, mode, size, SHA-256, link target, xattrs, mtime).
func manifest(_ path: String, times: Bool = true, dropMarkers: Bool = false) throws -> [String: [String: Any]] {
  var arguments = ["'\(AppData.packageRoot)/Scripts/tree-manifest.py'", "'\(path)'"]
  if !times { arguments.append("--no-times") }
  if dropMarkers {
    arguments += ["--drop-attr", "user.com.apple.metadata:com_apple_backup_excludeItem", "--drop-attr", "user.com.apple.MobileBackup"]
  }
  let result = try AppData.shell("python3 " + arguments.joined(separator: " "))
  guard result.status == 0 else { throw TestFailure("manifest: \(result.error)") }
  return try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as! [String: [String: Any]]
}

/// The entries of `whole` below `prefix/`, with the prefix removed.
func subtree(_ whole: [String: [String: Any]], under prefix: String) -> [String: [String: Any]] {
  var result: [String: [String: Any]] = [:]
  for (key, value) in whole where key.hasPrefix(prefix + "/") { result[String(key.dropFirst(prefix.count + 1))] = value }
  return result
}

func same(_ a: [String: [String: Any]], _ b: [String: [String: Any]]) -> Bool {
  NSDictionary(dictionary: a).isEqual(to: b)
}

/// `appdata migrate` on real trees: every outcome checked against the tree before the run.
@Suite("migrate")
struct MigrateTests {
  /// keep-both's free name fits in the 255 bytes a name may have: the stem loses its end, at a
  /// UTF-8 character's start, and the extension stays unless it alone is too long.
  @Test func aFreeNameForALongNameFitsInNameMax() {
    let long = [UInt8](repeating: 0x61, count: 255)
    #expect(MigrationPlanner.freeName(for: long) { _ in false } == [UInt8](repeating: 0x61, count: 253) + Array(" 2".utf8))
    let withExtension = [UInt8](repeating: 0x61, count: 251) + Array(".txt".utf8)
    #expect(MigrationPlanner.freeName(for: withExtension) { _ in false } == [UInt8](repeating: 0x61, count: 249) + Array(" 2.txt".utf8))
    // é is two bytes: a cut inside it goes back to its start.
    let accented = Array(String(repeating: "é", count: 127).utf8) + [0x61]
    let free = MigrationPlanner.freeName(for: accented) { _ in false }
    #expect(free.count <= 255 && String(validating: free, as: UTF8.self)?.hasSuffix("é 2") == true, "\(free.count)")
    let longExtension = Array("a.".utf8) + [UInt8](repeating: 0x62, count: 253)
    #expect(MigrationPlanner.freeName(for: longExtension) { _ in false }.count == 255)
    var taken = Set<[UInt8]>()
    for _ in 0..<12 {
      let next = MigrationPlanner.freeName(for: long) { taken.contains($0) }
      #expect(next.count <= 255 && !taken.contains(next))
      taken.insert(next)
    }
    #expect(MigrationPlanner.freeName(for: Array("photo.jpg".utf8)) { _ in false } == Array("photo 2.jpg".utf8))
  }

  /// A container with legacy Caches content: folders, files with modes and xattrs, links.
  static func legacyContainer(_ label: String, in base: String? = nil) throws -> TestTree {
    let tree = try TestTree(label, base: base)
    try tree.file(".com.apple.mobile_container_manager.metadata.plist", contents: Array("""
      <?xml version="1.0" encoding="UTF-8"?>
      <plist version="1.0"><dict><key>MCMMetadataIdentifier</key><string>com.example.app</string></dict></plist>
      """.utf8))
    try tree.file("Library/Caches/Photos/2011/a.jpg", size: 3000)
    try tree.file("Library/Caches/Photos/2011/b.jpg", size: 4000)
    try tree.file("Library/Caches/Photos/index.db", size: 512)
    chmod(tree.path("Library/Caches/Photos/index.db"), 0o640)
    try tree.setAttribute("Library/Caches/Photos/index.db", "user.example.tag", Array("keep me".utf8))
    try tree.file("Library/Caches/notes.txt", size: 10)
    try tree.symlink("Library/Caches/Photos/latest", to: "2011/b.jpg")
    try tree.file("Library/Caches/com.apple.nsurlsessiond/x", size: 1)
    try tree.file("Library/Caches/Snapshots/s.ktx", size: 1)
    try tree.file("Library/Caches/com.example.app/Cache.db", size: 1)
    try tree.file("Documents/existing.txt", size: 5)
    return tree
  }

  @Test func plainMigrationMovesMarksAndAuditsAsOffline() throws {
    let tree = try Self.legacyContainer("migrate-plain")
    let before = try manifest(tree.path("Library/Caches"))
    let result = try AppData.run(["migrate", "--json", tree.root])
    #expect(result.status == 0, "\(result.error)")
    let report = try result.json()
    let reported = report["entries"] as! [[String: Any]]
    #expect(reported.filter { $0["action"] as? String == "moved" }.map { $0["destination"] as? String } == ["Documents/Photos", "Documents/notes.txt"])
    #expect(Set(reported.filter { $0["action"] as? String == "skipped" }.map { $0["source"] as! String })
      == ["Library/Caches/Snapshots", "Library/Caches/com.apple.nsurlsessiond", "Library/Caches/com.example.app"])
    #expect(integer(report, "totals", "moved", "files") == 5)
    #expect(integer(report, "totals", "moved", "bytes") == 7522)

    // Content, modes, times and xattrs are the source's, plus the marker on each top-level entry.
    let after = try manifest(tree.path("Documents"), dropMarkers: true)
    #expect(same(subtree(after, under: "Photos"), subtree(before, under: "Photos")))
    #expect(same(["notes.txt": after["notes.txt"]!], ["notes.txt": before["notes.txt"]!]))
    #expect(try MarkerStatus.markers(atPath: tree.path("Documents/Photos")) == .modern)
    #expect(try MarkerStatus.markers(atPath: tree.path("Documents/notes.txt")) == .modern)
    #expect(try MarkerStatus.markers(atPath: tree.path("Documents/existing.txt")) == [])
    #expect(try FileManager.default.contentsOfDirectory(atPath: tree.path("Library/Caches")).sorted()
      == ["Snapshots", "com.apple.nsurlsessiond", "com.example.app"])
    #expect(!FileManager.default.fileExists(atPath: tree.path(".appdata-migration.journal")))

    // The audit sees every moved file as offline, none as critical.
    let audit = try Library.auditJSON(tree.root, list: Set(AppDataCore.Category.allCases))
    let listed = entries(audit)
    for path in ["Documents/Photos/2011/a.jpg", "Documents/Photos/2011/b.jpg", "Documents/Photos/index.db", "Documents/Photos/latest", "Documents/notes.txt"] {
      #expect(listed[path]?["category"] as? String == "offline", "\(path)")
    }
    #expect(figures(audit, "critical")[0...1] == [1, 5])

    // A second run has nothing to do.
    let again = try AppData.run(["migrate", "--json", tree.root])
    #expect(again.status == 0)
    #expect(integer(try again.json(), "totals", "moved", "entries") == 0)
    #expect(same(try manifest(tree.root), try manifest(tree.root)))
  }

  @Test func onlyAndSkipTakeThePolicyGlobSyntax() throws {
    let tree = try TestTree("only-skip")
    for name in ["abc", "bcd", "xyz", "a.tmp"] { try tree.file("Library/Caches/\(name)/f", size: 1) }
    try tree.folder("Documents")
    let result = try AppData.run(["migrate", "--json", "--dry-run", "--only", "[a-c]*", "--skip", "*.tmp", tree.root])
    #expect(result.status == 0, "\(result.error)")
    let entries = try result.json()["entries"] as? [[String: Any]] ?? []
    let actions = Dictionary(uniqueKeysWithValues: entries.map { ($0["source"] as? String ?? "?", $0["action"] as? String ?? "?") })
    #expect(actions == ["Library/Caches/abc": "planned", "Library/Caches/bcd": "planned",
                        "Library/Caches/xyz": "skipped", "Library/Caches/a.tmp": "skipped"])
    let bad = try AppData.run(["migrate", "--only", "[a-", tree.root])
    #expect(bad.status == 2)
    #expect(bad.error == "appdata: error: invalid glob '[a-' for '--only': unterminated '[' at byte 1\n")
  }

  @Test func intoMarksOneNewFolder() throws {
    let tree = try Self.legacyContainer("migrate-into")
    let result = try AppData.run(["migrate", "--into", "Legacy Cache", tree.root])
    #expect(result.status == 0, "\(result.error)")
    #expect(try MarkerStatus.markers(atPath: tree.path("Documents/Legacy Cache")) == .modern)
    #expect(try MarkerStatus.markers(atPath: tree.path("Documents/Legacy Cache/Photos")) == [])
    #expect(FileManager.default.fileExists(atPath: tree.path("Documents/Legacy Cache/Photos/2011/a.jpg")))
    #expect(FileManager.default.fileExists(atPath: tree.path("Documents/Legacy Cache/notes.txt")))
    let audit = try Library.auditJSON(tree.root)
    #expect(figures(audit, "offline")[0...1] == [5, 7522])
    #expect(findings(audit).isEmpty)
  }

  /// Issue 48: a finished `--into` migration run again has nothing left to do: exit 0, nothing
  /// changed, the system's entries reported as skipped as before (it exited 2, "the --into
  /// folder already exists"). Something new in Library/Caches is a real conflict again.
  @Test func aFinishedIntoMigrationRunAgainHasNothingToDo() throws {
    let tree = try Self.legacyContainer("migrate-into-again")
    let first = try AppData.run(["migrate", "--into", "Offline", tree.root])
    #expect(first.status == 0, "\(first.error)")
    let before = try manifest(tree.root)
    let again = try AppData.run(["migrate", "--json", "--into", "Offline", tree.root])
    #expect(again.status == 0, "\(again.error)")
    #expect(again.error == "")
    let report = try again.json()
    #expect(integer(report, "totals", "moved", "entries") == 0)
    let actions = (report["entries"] as? [[String: Any]] ?? []).map { "\($0["action"]!) \($0["source"]!)" }.sorted()
    #expect(actions == ["skipped Library/Caches/Snapshots", "skipped Library/Caches/com.apple.nsurlsessiond", "skipped Library/Caches/com.example.app"])
    #expect(same(try manifest(tree.root), before))
    #expect(try AppData.run(["migrate", "--dry-run", "--into", "Offline", tree.root]).status == 0)
    // The app wrote a new cache since: it has somewhere to go only with --on-conflict.
    try tree.file("Library/Caches/new.bin", size: 7)
    let before2 = try manifest(tree.root)
    let conflict = try AppData.run(["migrate", "--into", "Offline", tree.root])
    #expect(conflict.status == 2)
    #expect(conflict.error == "appdata: error: Documents/Offline: already exists, so Library/Caches cannot move there; nothing was changed (choose --on-conflict skip, keep-both or merge)\n")
    #expect(same(try manifest(tree.root), before2))
  }

  @Test func conflictFailChangesNothingAndListsEveryConflict() throws {
    let tree = try Self.legacyContainer("migrate-fail")
    try tree.file("Documents/notes.txt", size: 99)
    try tree.file("Documents/Photos/other.jpg", size: 7)
    let before = try manifest(tree.root)
    let result = try AppData.run(["migrate", tree.root])
    #expect(result.status == 2)
    #expect(result.error == """
      appdata: error: Documents/Photos: already exists, so Library/Caches/Photos cannot move there; nothing was changed (choose --on-conflict skip, keep-both or merge)
      appdata: error: Documents/notes.txt: already exists, so Library/Caches/notes.txt cannot move there; nothing was changed (choose --on-conflict skip, keep-both or merge)

      """)
    #expect(same(try manifest(tree.root), before))
  }

  /// A dry run with a conflict shows the whole plan: what would move, what stays, the conflicts
  /// flagged, each with the files and bytes it really holds; and exits 2, as the run would.
  @Test func aDryRunWithAConflictShowsTheWholePlan() throws {
    let tree = try TestTree("dry-conflict")
    try tree.file("Library/Caches/a/x", size: 5)
    try tree.file("Library/Caches/b/y", size: 10)
    try tree.file("Library/Caches/b/z", size: 1)
    try tree.file("Library/Caches/c.txt", size: 2)
    try tree.file("Library/Caches/d.tmp", size: 3)
    try tree.folder("Documents/b")
    let before = try manifest(tree.root)
    let result = try AppData.run(["migrate", "--json", "--dry-run", "--skip", "*.tmp", tree.root])
    #expect(result.status == 2)
    let entries = try result.json()["entries"] as? [[String: Any]] ?? []
    let rows = entries.map { "\($0["action"]!) \($0["source"]!) \($0["files"]!) \($0["bytes"]!)" }
    #expect(rows == ["planned Library/Caches/a 1 5", "planned Library/Caches/c.txt 1 2",
                     "skipped Library/Caches/d.tmp 1 3", "conflict Library/Caches/b 2 11"])
    #expect(same(try manifest(tree.root), before))
  }

  @Test func conflictSkipKeepBothAndMerge() throws {
    for policy in ["skip", "keep-both", "merge"] {
      let tree = try Self.legacyContainer("migrate-\(policy)")
      try tree.file("Documents/notes.txt", size: 99)
      try tree.file("Documents/Photos/2011/a.jpg", size: 7)
      try tree.file("Documents/Photos/mine.jpg", size: 8)
      let before = try manifest(tree.root, dropMarkers: true)
      let result = try AppData.run(["migrate", "--on-conflict", policy, tree.root])
      #expect(result.status == 0, "\(policy): \(result.error)")
      let after = try manifest(tree.root, dropMarkers: true)
      // What was in Documents is untouched under every policy.
      for path in ["Documents/notes.txt", "Documents/Photos/2011/a.jpg", "Documents/Photos/mine.jpg"] {
        #expect(NSDictionary(dictionary: after[path]!).isEqual(to: before[path]!), "\(policy) \(path)")
      }
      switch policy {
      case "skip":
        #expect(after["Library/Caches/notes.txt"] != nil && after["Library/Caches/Photos/index.db"] != nil)
      case "keep-both":
        #expect(NSDictionary(dictionary: after["Documents/notes 2.txt"]!).isEqual(to: before["Library/Caches/notes.txt"]!))
        #expect(same(subtree(after, under: "Documents/Photos 2"), subtree(before, under: "Library/Caches/Photos")))
        #expect(try MarkerStatus.markers(atPath: tree.path("Documents/Photos 2")) == .modern)
        #expect(after["Library/Caches/notes.txt"] == nil)
      default:
        // Folders merge; the colliding file is kept both ways; each moved item is marked.
        #expect(NSDictionary(dictionary: after["Documents/Photos/2011/a 2.jpg"]!).isEqual(to: before["Library/Caches/Photos/2011/a.jpg"]!))
        #expect(NSDictionary(dictionary: after["Documents/Photos/2011/b.jpg"]!).isEqual(to: before["Library/Caches/Photos/2011/b.jpg"]!))
        #expect(NSDictionary(dictionary: after["Documents/Photos/index.db"]!).isEqual(to: before["Library/Caches/Photos/index.db"]!))
        #expect(NSDictionary(dictionary: after["Documents/notes 2.txt"]!).isEqual(to: before["Library/Caches/notes.txt"]!))
        #expect(try MarkerStatus.markers(atPath: tree.path("Documents/Photos/index.db")) == .modern)
        #expect(try MarkerStatus.markers(atPath: tree.path("Documents/Photos/mine.jpg")) == [])
        #expect(after["Library/Caches/Photos/2011/b.jpg"] == nil)
      }
    }
  }

  @Test func aNameCreatedAfterPlanningIsNeverOverwritten() throws {
    let tree = try Self.legacyContainer("migrate-race")
    let result = try AppData.runPaused(["migrate", tree.root], at: "migrate") {
      try tree.file("Documents/notes.txt", contents: Array("written by the app meanwhile".utf8))
    }
    #expect(result.status == 1)
    #expect(try String(contentsOfFile: tree.path("Documents/notes.txt"), encoding: .utf8) == "written by the app meanwhile")
    #expect(FileManager.default.fileExists(atPath: tree.path("Library/Caches/notes.txt")))
    #expect(FileManager.default.fileExists(atPath: tree.path("Documents/Photos/index.db")))
    #expect(FileManager.default.fileExists(atPath: tree.path(".appdata-migration.journal")))
  }

  @Test func dryRunLeavesTheTreeByteIdentical() throws {
    let tree = try Self.legacyContainer("migrate-dry")
    let before = try manifest(tree.root)
    let result = try AppData.run(["migrate", "--dry-run", "--json", tree.root])
    #expect(result.status == 0)
    #expect(integer(try result.json(), "totals", "planned", "entries") == 2)
    #expect(same(try manifest(tree.root), before))
  }

  @Test func symlinksMoveAsLinksAndOutsideIsNeverTouched() throws {
    let tree = try Self.legacyContainer("migrate-links")
    let outside = try TestTree("migrate-outside")
    try outside.file("victim/data.bin", size: 100)
    try tree.symlink("Library/Caches/escape", to: outside.path("victim"))
    let outsideBefore = try manifest(outside.root)
    let result = try AppData.run(["migrate", tree.root])
    #expect(result.status == 0, "\(result.error)")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: tree.path("Documents/escape")) == outside.path("victim"))
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: tree.path("Documents/Photos/latest")) == "2011/b.jpg")
    #expect(same(try manifest(outside.root), outsideBefore))
    // A symlinked source folder is refused, not followed.
    let other = try TestTree("migrate-symlinked-source")
    try other.folder("Library")
    try other.symlink("Library/Caches", to: outside.path("victim"))
    let refused = try AppData.run(["migrate", other.root])
    #expect(refused.status == 2)
    #expect(refused.error == "appdata: error: Library/Caches: is a symlink; appdata never follows symlinks inside a container\n")
    #expect(same(try manifest(outside.root), outsideBefore))
  }

  @Test(arguments: ["binary", "xml"])
  func defaultsKeyGatesTheMigrationAndIsRemovedAfterwards(format: String) throws {
    let tree = try Self.legacyContainer("migrate-defaults-\(format)")
    let plist = tree.path("Library/Preferences/com.example.app.plist")
    try tree.folder("Library/Preferences")
    let write = try AppData.shell("""
      python3 -c 'import plistlib,sys; plistlib.dump({"PSLegacyStoragePathUsed": sys.argv[2] == "1", "Other": 7}, open(sys.argv[1], "wb"), fmt=plistlib.FMT_\(format.uppercased()))' '\(plist)' 0
      """)
    #expect(write.status == 0)
    let before = try manifest(tree.root)
    let notSet = try AppData.run(["migrate", "--defaults-key", "PSLegacyStoragePathUsed", tree.root])
    #expect(notSet.status == 0)
    #expect(notSet.output.contains("PSLegacyStoragePathUsed is not true"))
    #expect(same(try manifest(tree.root), before))

    _ = try AppData.shell("""
      python3 -c 'import plistlib,sys; plistlib.dump({"PSLegacyStoragePathUsed": True, "Other": 7}, open(sys.argv[1], "wb"), fmt=plistlib.FMT_\(format.uppercased()))' '\(plist)'
      """)
    let result = try AppData.run(["migrate", "--defaults-key", "PSLegacyStoragePathUsed", tree.root])
    #expect(result.status == 0, "\(result.error)")
    #expect(FileManager.default.fileExists(atPath: tree.path("Documents/Photos/index.db")))
    let data = try Data(contentsOf: URL(fileURLWithPath: plist))
    #expect(data.starts(with: Array(format == "binary" ? "bplist00".utf8 : "<?xml".utf8)))
    let check = try AppData.shell("python3 -c 'import plistlib,sys; print(plistlib.load(open(sys.argv[1], \"rb\")))' '\(plist)'")
    #expect(check.output == "{'Other': 7}\n")
  }

  @Test func aMissingSourceIsAPreCheckFailure() throws {
    let tree = try TestTree("migrate-nosource")
    try tree.folder("Documents")
    let result = try AppData.run(["migrate", tree.root])
    #expect(result.status == 2)
    #expect(result.error == "appdata: error: Library: no such folder (the source)\n")
  }

  /// Issue 52: a failed pre-check is a case a library caller switches on, with its cause; its
  /// message is the line the command prints.
  @Test func aPreCheckFailureIsACase() throws {
    let tree = try TestTree("migrate-error-cases")
    try tree.folder("Documents")
    do {
      _ = try Migration(rootPath: tree.root, options: MigrationOptions()).run()
      Issue.record("a migration without its source ran")
    } catch {
      guard case .cannotOpen(let path, let role, let system) = error else { Issue.record("\(error)"); return }
      #expect(path == "Library/Caches" && role == "source" && system.errno == .noSuchFileOrDirectory, "\(error)")
      #expect(error.message == "Library: no such folder (the source)")
      #expect(error.refusal.cause == .notFound)
    }
    var overlapping = MigrationOptions()
    overlapping.destination = [Array("Library".utf8)]
    do {
      _ = try Migration(rootPath: tree.root, options: overlapping).run()
      Issue.record("overlapping folders were migrated")
    } catch {
      guard case .overlap(let source, let destination) = error else { Issue.record("\(error)"); return }
      #expect(source == "Library/Caches" && destination == "Library")
      #expect(error.message == "--from Library/Caches and --to Library overlap; a folder cannot be moved into itself")
      #expect(error.cause == .conflict)
    }
  }
}
