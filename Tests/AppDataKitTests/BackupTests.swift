@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Testing

/// `appdata audit BACKUP`: what an iOS device backup really holds, per app, read from its
/// Manifest.db without writing a byte into it (Scripts/make-test-backup.py builds the backups).
@Suite("device backups", .serialized)
struct BackupTests {
  static let fixtures: String = {
    let folder = AppData.generatedFixtures("make-test-backup.py", label: "backups")
    // Readable by the unprivileged user the read-only test runs as.
    _ = try! AppData.shell("chmod 755 '\(folder)'")
    return folder
  }()

  static var plain: String { fixtures + "/plain" }

  /// The containers of a report of many by id (or, for the system domains, by name).
  static func byName(_ json: [String: Any]) -> [String: [String: Any]] {
    var result: [String: [String: Any]] = [:]
    for item in json["containers"] as? [[String: Any]] ?? [] {
      let name = (item["id"] as? String) ?? String((item["container"] as? String ?? "").split(separator: "/").last ?? "")
      result[name] = item
    }
    return result
  }

  /// Every file below `folder` with its size and SHA-256, and every folder: to prove nothing changed.
  static func snapshot(_ folder: String) throws -> String {
    // Python, not GNU find's -printf and sha256sum, so that it runs on macOS too (issue 42).
    let result = try AppData.shell("""
      python3 - '\(folder)' <<'EOF'
      import hashlib, os, stat, sys
      root = sys.argv[1]
      lines = []
      for folder, dirs, files in os.walk(root):
          for name in [""] + dirs + files if folder == root else dirs + files:
              path = os.path.join(folder, name) if name else folder
              info = os.lstat(path)
              kind = "d" if stat.S_ISDIR(info.st_mode) else "l" if stat.S_ISLNK(info.st_mode) else "f" if stat.S_ISREG(info.st_mode) else "o"
              line = f"{kind} ./{os.path.relpath(path, root)} {info.st_size} {stat.S_IMODE(info.st_mode):o}"
              if kind == "f":
                  with open(path, "rb") as handle:
                      line += " " + hashlib.sha256(handle.read()).hexdigest()
              lines.append(line)
      print("\\n".join(sorted(lines)))
      EOF
      """)
    #expect(result.status == 0)
    return result.output
  }

  @Test func eachAppDomainIsAContainerWithExactFigures() throws {
    let json = try Library.auditJSON(Self.plain)
    #expect(json["source"] as? String == Self.plain)
    #expect(value(json, "backup", "deviceName") as? String == "Test iPhone")
    #expect(value(json, "backup", "productVersion") as? String == "17.1")
    #expect(value(json, "backup", "snapshotState") as? String == "finished")
    let containers = Self.byName(json)
    #expect(Set(containers.keys) == ["com.example.notes", "com.example.my-app", "group.com.example.my-app", "com.example.notes.widget",
                                     "com.example.empty", "com.example.ghost", "(system domains)"])
    let notes = try #require(containers["com.example.notes"])
    #expect(notes["container"] as? String == Self.plain + "//AppDomain-com.example.notes")
    #expect(notes["kind"] as? String == "app")
    #expect(figures(notes, "critical")[0...1] == [3, 1200])  // two files and a symlink
    #expect(integer(notes, "summary", "directories") == 3)
    // An id with dashes: the domain is split at its first dash only.
    let myApp = try #require(containers["com.example.my-app"])
    #expect(figures(myApp, "critical")[0...1] == [3, 5_000_000_030])  // an 8-byte Size
    #expect(figures(myApp, "cached")[0...1] == [1, 700])
    #expect(integer(myApp, "summary", "backup", "bytes") == 5_000_000_730)  // what the backup holds: every category
    #expect(integer(myApp, "summary", "backup", "files") == 4)
    let rules = findings(myApp).map { "\($0["rule"]!) \($0["path"]!)" }
    #expect(rules == ["unreadable ../escape", "unreadable Documents/bad-blob", "backup-holds-excluded Library/Caches"])
    let group = try #require(containers["group.com.example.my-app"])
    #expect(group["kind"] as? String == "group")
    // A group's tmp is backed up (MobileBackup backs up a group's whole root), its SplashBoard is not.
    #expect(figures(group, "critical")[0...1] == [3, 4160])
    #expect(figures(group, "system")[0...1] == [1, 80])
    #expect(findings(group).map { "\($0["rule"]!) \($0["path"]!)" } == ["backup-holds-excluded Library/SplashBoard"])
    let widget = try #require(containers["com.example.notes.widget"])
    #expect(widget["kind"] as? String == "plugin")
    #expect(figures(widget, "critical")[0...1] == [1, 250])
    for empty in ["com.example.empty", "com.example.ghost"] {
      #expect(integer(containers[empty], "summary", "backup", "files") == 0, "\(empty)")
    }
    let system = try #require(containers["(system domains)"])
    #expect(system["kind"] as? String == "system")
    #expect(integer(system, "summary", "backup", "bytes") == 2_000_300)
    #expect(integer(json, "summary", "backup", "bytes") == 1200 + 5_000_000_730 + 4240 + 250 + 2_000_300)
  }

  @Test func hostileRelativePathsAreDataNeverMarkup() throws {
    let json = try Library.auditJSON(Self.plain, list: Set(AppDataCore.Category.allCases))
    let paths = (Self.byName(json)["com.example.my-app"]?["entries"] as? [[String: Any]] ?? []).map { $0["path"] as? String ?? "" }
    #expect(paths.contains("Documents/evil\nname\u{1B}[31m"))
    let invalid = (Self.byName(json)["com.example.my-app"]?["entries"] as? [[String: Any]] ?? []).first { $0["pathBase64"] != nil }
    #expect(invalid?["pathBase64"] as? String == Data("Documents/".utf8 + [0xFF, 0xFE] + ".bin".utf8).base64EncodedString())
    let table = try AppData.run(["audit", "--no-config", "--list", "all", Self.plain])
    #expect(!table.output.contains("\u{1B}"))
    #expect(table.output.contains("Documents/evil\\nname\\e[31m"))
  }

  @Test func aBackupIsNeverWrittenTo() throws {
    let before = try Self.snapshot(Self.plain)
    _ = try AppData.run(["audit", "--no-config", "--verify", "--all-domains", Self.plain])
    _ = try AppData.run(["audit", "--no-config", "--format", "ndjson", "--list", "all", Self.plain])
    #expect(try Self.snapshot(Self.plain) == before)
    #expect(!FileManager.default.fileExists(atPath: Self.plain + "/Manifest.db-wal"))
    #expect(!FileManager.default.fileExists(atPath: Self.plain + "/Manifest.db-shm"))
  }

  @Test(.enabled(if: AppData.canRunAsAnotherUser, "needs root and setpriv to read the backup as an unprivileged user"))
  func aReadOnlyBackupOwnedByAnotherUserIsRead() throws {
    let before = try Self.snapshot(Self.plain)
    // Read-only, and owned by someone else: a WAL database opened without immutable=1 fails here.
    #expect(try AppData.shell("chmod -R a-w '\(Self.plain)'").status == 0)
    let asNobody = try AppData.run(["audit", "--no-config", "--json", "--fail-on", "never", Self.plain], asUser: 65534)
    #expect(try AppData.shell("chmod -R u+w '\(Self.plain)'").status == 0)
    #expect(asNobody.status == 0, "\(asNobody.error)")
    #expect(integer(try asNobody.json(), "summary", "backup", "bytes") == 5_002_006_720)
    #expect(try Self.snapshot(Self.plain) == before)
  }

  @Test func verifyChecksEveryStoredCopy() throws {
    let json = try Library.auditJSON(Self.plain, verify: true)
    let all = (json["containers"] as? [[String: Any]] ?? []).flatMap { findings($0) }
    let missing = all.filter { $0["rule"] as? String == "backup-file-missing" }
    #expect(missing.map { $0["path"] as? String } == ["Documents/big.mov"])
    let mismatch = all.filter { $0["rule"] as? String == "backup-file-size-mismatch" }
    #expect(mismatch.map { $0["path"] as? String } == ["Library/Preferences/com.example.notes.plist"])
    #expect((mismatch.first?["message"] as? String)?.hasSuffix("is 199 bytes, the manifest says 200") == true)
    // Without --verify, the stored files are not looked at.
    let plain = try Library.auditJSON(Self.plain)
    #expect(!(plain["containers"] as? [[String: Any]] ?? []).flatMap { findings($0) }.contains { ($0["rule"] as? String)?.hasPrefix("backup-file-") == true && $0["rule"] as? String != "backup-file-too-large" })
    let onFolder = try AppData.run(["audit", "--verify", InputTests.fixtures + "/WeightTracker.xcappdata"])
    #expect(onFolder.status == 2)
    #expect(onFolder.error.hasSuffix("not a device backup; --verify and --all-domains apply to device backups\n"))
  }

  @Test func allDomainsListsTheSystemDomainsOneByOne() throws {
    let json = try Library.auditJSON(Self.plain, allDomains: true)
    let containers = Self.byName(json)
    #expect(containers["(system domains)"] == nil)
    #expect(containers["HomeDomain"]?["kind"] as? String == "system")
    #expect(integer(containers["CameraRollDomain"], "summary", "backup", "bytes") == 2_000_000)
    #expect(integer(containers["HomeDomain"], "summary", "backup", "bytes") == 300)
  }

  @Test func appKeepsAnAppAndItsGroups() throws {
    let json = try Library.auditJSON(Self.plain, apps: ["com.example.my-app"])
    #expect(Set(Self.byName(json).keys) == ["com.example.my-app", "group.com.example.my-app"])
    // No match: the nearest id, then the largest apps (issue 41), never "(system domains)".
    let none = try AppData.run(["audit", "--no-config", "--app", "com.example.nope", Self.plain])
    #expect(none.status == 2)
    #expect(none.error == "appdata: error: \(Self.plain): no container matches --app 'com.example.nope' (did you mean 'com.example.notes'?); "
      + "the apps with the most backed-up bytes: com.example.my-app (4.7 GiB), com.example.empty (0 B), com.example.ghost (0 B) (appdata audit --list-apps PATH lists them all)\n")
  }

  /// `--root` goes through the same resolver as PATH: a backup in a folder of backups is audited
  /// as a backup, and a folder that is no container is refused, never audited as one.
  @Test func rootNamesABackupOrIsRefused() throws {
    let tree = try TestTree("root-backup")
    let udid = "00008030-001234567890802E"
    #expect(try AppData.shell("cp -a '\(Self.plain)' '\(tree.path(udid))' && mkdir '\(tree.path("notes"))' && echo x > '\(tree.path("notes/a.txt"))'").status == 0)
    let backup = try AppData.run(["audit", "--json", "--no-config", "--fail-on", "never", "--root", udid, tree.root])
    #expect(backup.status == 0, "\(backup.error)")
    let json = try backup.json()
    #expect(value(json, "backup", "deviceName") as? String == "Test iPhone")
    #expect(integer(json, "summary", "backup", "bytes") == 5_002_006_720)
    let notes = try AppData.run(["audit", "--no-config", "--root", "notes", tree.root])
    #expect(notes.status == 2)
    #expect(notes.output.isEmpty)
    #expect(notes.error.hasPrefix("appdata: error: \(tree.path("notes")): holds no app data container"))
  }

  @Test func anUnfinishedSnapshotIsAWarning() throws {
    let result = try AppData.run(["audit", "--no-config", "--json", Self.fixtures + "/incomplete"])
    #expect(result.status == 0)
    let notes = try #require(Self.byName(try result.json())["com.example.notes"])
    #expect(findings(notes, rule: "backup-incomplete").map { $0["message"] as? String }
            == ["the backup's SnapshotState is 'uploading', not 'finished': it may lack files"])
  }

  /// SQLite's result code, not its words, decides the refusal: a stored 17 MB relativePath is
  /// past the value length appdata allows (SQLITE_TOOBIG), not a damaged file.
  @Test func aValuePastSQLitesLimitIsRefusedAsSuch() throws {
    let folder = Self.fixtures + "/too-big"
    let made = try AppData.shell("""
      mkdir -p '\(folder)' && cp '\(Self.plain)/Info.plist' '\(Self.plain)/Manifest.plist' '\(Self.plain)/Status.plist' '\(folder)/' && \
      python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); \
      db.execute("CREATE TABLE Files (fileID TEXT PRIMARY KEY, domain TEXT, relativePath TEXT, flags INTEGER, file BLOB)"); \
      db.execute("INSERT INTO Files VALUES (?, ?, ?, 1, ?)", ("0" * 40, "AppDomain-com.example.notes", "a" * (17 << 20), b"")); db.commit()' \
        '\(folder)/Manifest.db'
      """)
    try #require(made.status == 0, "\(made.error)")
    let result = try AppData.run(["audit", "--no-config", folder])
    #expect(result.status == 2)
    #expect(result.error == "appdata: error: \(folder)/Manifest.db: cannot read the backup manifest (it asks for more than the limits appdata sets): string or blob too big\n")
  }

  @Test func whatCannotBeReadIsRefusedInOneLine() throws {
    let cases: [(String, String)] = [
      ("old", "\(Self.fixtures)/old: a backup from before iOS 10 (Manifest.mbdb, no Manifest.db); appdata reads backups made by iOS 10 and later"),
      ("missing-db", "\(Self.fixtures)/missing-db: a device backup without its Manifest.db (the list of what it holds); the backup is incomplete or was copied without it"),
      ("not-sqlite", "\(Self.fixtures)/not-sqlite/Manifest.db: not a SQLite database (it does not start with \"SQLite format 3\"); it is damaged, or not from an iOS backup"),
      ("truncated", "\(Self.fixtures)/truncated/Manifest.db: cannot read the backup manifest (truncated or damaged?): database disk image is malformed"),
      ("no-files-table", "\(Self.fixtures)/no-files-table/Manifest.db: a SQLite database without the Files table; not an iOS backup manifest"),
    ]
    for (name, message) in cases {
      let before = try Self.snapshot(Self.fixtures + "/" + name)
      let result = try AppData.run(["audit", "--no-config", Self.fixtures + "/" + name])
      #expect(result.status == 2, "\(name)")
      #expect(result.error == "appdata: error: \(message)\n", "\(name)")
      #expect(result.output.isEmpty, "\(name)")
      #expect(try Self.snapshot(Self.fixtures + "/" + name) == before, "\(name)")
    }
  }

  @Test(.enabled(if: AppData.has("jq"), "needs jq"))
  func theBackupReportValidatesAndEveryFormatNamesContainers() throws {
    let output = NSTemporaryDirectory() + "appdata-backup-\(UUID().uuidString).json"
    defer { try? FileManager.default.removeItem(atPath: output) }
    #expect(try AppData.shell("\"$APPDATA\" audit --json --no-config --fail-on never --list all --verify '\(Self.plain)' > '\(output)'").status == 0)
    #expect(try AppData.validateAgainstAuditSchema(output) == "valid")
    let top = try AppData.shell("jq -r '[.containers[] | select(.kind != \"system\")] | sort_by(-.summary.backup.bytes) | .[:10][] | \"\\(.summary.backup.bytes)\\t\\(.id)\"' '\(output)'")
    #expect(top.output.split(separator: "\n").first == "5000000730\tcom.example.my-app")
    let ndjson = try AppData.run(["audit", "--no-config", "--format", "ndjson", "--list", "all", "--fail-on", "never", Self.plain])
    let lines = ndjson.output.split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
    #expect(lines.filter { $0["type"] as? String == "entry" }.allSatisfy { ($0["container"] as? String)?.hasPrefix(Self.plain + "//") == true })
    #expect(lines.last?["type"] as? String == "total")
    #expect(value(lines.last, "backup", "deviceName") as? String == "Test iPhone")
  }

  @Test func aContainerIsComparedWithWhatTheBackupHolds() throws {
    let tree = try TestTree("backup-compare")
    try tree.file("Documents/note.txt", size: 1000)  // in the backup, but marked here: unexpected
    try tree.setModernMarker("Documents/note.txt")
    try tree.file("Library/Preferences/com.example.notes.plist", size: 200)  // in both
    try tree.file("Documents/new.txt", size: 55)  // predicted backed up, not in the backup: missing
    try tree.file("Library/Caches/c.bin", size: 10)  // neither
    let plist = #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>MCMMetadataIdentifier</key><string>com.example.notes</string></dict></plist>"#
    try tree.file(ContainerLayout.metadataFileName, contents: Array(plist.utf8))
    let json = try AppData.auditJSON(tree.root, ["--no-config", "--backup", Self.plain])
    #expect(value(json, "backupComparison", "domain") as? String == "AppDomain-com.example.notes")
    #expect(integer(json, "backupComparison", "inBoth", "files") == 1)
    #expect(integer(json, "backupComparison", "inBoth", "bytes") == 200)
    #expect(integer(json, "backupComparison", "onlyInContainer", "bytes") == 55)
    #expect(integer(json, "backupComparison", "unexpectedInBackup", "bytes") == 1000)
    #expect(integer(json, "backupComparison", "onlyInBackup", "files") == 1)  // the symlink Documents/link
    #expect(findings(json, rule: "backup-missing-file").map { $0["path"] as? String } == ["Documents/new.txt"])
    #expect(findings(json, rule: "backup-unexpected-file").map { $0["path"] as? String } == ["Documents/note.txt"])
    #expect(json["entries"] == nil)  // listed only to compare
    // --backup-domain picks another domain; one the backup lacks is refused.
    let other = try AppData.auditJSON(tree.root, ["--no-config", "--backup", Self.plain, "--backup-domain", "AppDomain-com.example.my-app"])
    #expect(integer(other, "backupComparison", "inBoth", "files") == 0)
    let none = try AppData.run(["audit", "--no-config", "--backup", Self.plain, "--backup-domain", "AppDomain-nope", tree.root])
    #expect(none.status == 2)
    #expect(none.error == "appdata: error: \(Self.plain): the backup holds no domain AppDomain-nope; --backup-domain names another\n")
    let notABackup = try AppData.run(["audit", "--no-config", "--backup", tree.root, tree.root])
    #expect(notABackup.status == 2)
    #expect(notABackup.error.contains("not a device backup"))
  }
}
