@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Testing

/// Backups where users keep them: a Mac's `MobileSync/Backup` (one folder per device backup) is
/// one report of many backups, each audited as it would be alone, a locked or damaged one listed
/// with its reason; several PATHs are one report of many.
@Suite("folders of backups and several PATHs", .serialized)
struct BackupFolderTests {
  static let udids = ["00008030-000A11112222801E", "00008101-000B33334444001E", "00008110-000C55556666002E", "00008120-000D77778888003E"]

  /// `MobileSync/Backup` with a plain backup, an encrypted one, a damaged one (Manifest.db cut in
  /// half) and one from before iOS 10, each copied without its stored files (only --verify
  /// reads those).
  static func mobileSync() throws -> TestTree {
    let tree = try TestTree("mobilesync")
    let backups = try tree.folder("MobileSync/Backup")
    for (udid, fixture) in zip(udids, ["plain", "encrypted", "truncated", "old"]) {
      let copy = try AppData.shell("mkdir '\(backups)/\(udid)' && cd '\(BackupTests.fixtures)/\(fixture)' && cp -p $(ls | grep -v '^..$') '\(backups)/\(udid)/'")
      #expect(copy.status == 0, "\(copy.error)")
    }
    return tree
  }

  /// A backup's containers as auditing it alone gives them, with its folder renamed to `path`.
  static func alone(_ fixture: String, as path: String, arguments: [String] = [], environment: [String: String] = [:]) throws -> [String: Any] {
    let result = try AppData.run(["audit", "--no-config", "--format", "json", "--fail-on", "never"] + arguments + [BackupTests.fixtures + "/" + fixture],
                                 environment: environment)
    #expect(result.status == 0, "\(result.error)")
    let text = result.output.replacingOccurrences(of: BackupTests.fixtures + "/" + fixture, with: path)
    return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
  }

  static func backups(_ json: [String: Any]) -> [String: [String: Any]] {
    var byName: [String: [String: Any]] = [:]
    for backup in json["backups"] as? [[String: Any]] ?? [] { byName[backup["udid"] as? String ?? ""] = backup }
    return byName
  }

  @Test func aFolderOfBackupsReportsEachAsAlone() throws {
    let tree = try Self.mobileSync()
    let folder = tree.path("MobileSync/Backup")
    let before = try BackupTests.snapshot(tree.root)
    let password = try tree.file("password", contents: Array((EncryptedBackupTests.password + "\n").utf8))
    // MobileSync itself and its Backup folder give the same report.
    for path in [tree.path("MobileSync"), folder] {
      let result = try AppData.run(["audit", "--no-config", "--format", "json", "--password-file", password, path])
      #expect(result.status == 1, "\(result.error)")  // the plain backup has error findings
      let json = try result.json()
      #expect(json["source"] as? String == folder)
      #expect(json["containers"] == nil)
      let backups = Self.backups(json)
      #expect(Array(backups.keys).sorted() == Self.udids)
      for (udid, fixture) in zip(Self.udids.prefix(2), ["plain", "encrypted"]) {
        let backup = try #require(backups[udid])
        let alone = try Self.alone(fixture, as: folder + "/" + udid, environment: EncryptedBackupTests.withPassword)
        #expect(backup["status"] as? String == "audited")
        #expect(backup["path"] as? String == folder + "/" + udid)
        #expect(backup["device"] as? String == "Test iPhone")
        #expect(backup["iosVersion"] as? String == "17.1")
        #expect(backup["date"] as? String == "2026-11-01T12:00:00Z")
        #expect(backup["snapshotState"] as? String == "finished")
        #expect(backup["encrypted"] as? Bool == (fixture == "encrypted"))
        #expect(backup["message"] is NSNull)
        #expect((backup["summary"] as? NSDictionary) == (alone["summary"] as? NSDictionary))
        #expect((backup["containers"] as? NSArray) == (alone["containers"] as? NSArray))
        #expect(integer(backup, "summary", "backup", "bytes") == 5_002_006_720)
        #expect(integer(backup, "summary", "backup", "files") == 14)
      }
      let damaged = try #require(backups[Self.udids[2]])
      #expect(damaged["status"] as? String == "refused")
      #expect(damaged["containers"] is NSNull)
      #expect((damaged["message"] as? String)?.contains("Manifest.db: cannot read the backup manifest (truncated or damaged?)") == true)
      let old = try #require(backups[Self.udids[3]])
      #expect(old["status"] as? String == "refused")
      #expect((old["message"] as? String)?.hasSuffix("a backup from before iOS 10 (Manifest.mbdb, no Manifest.db); appdata reads backups made by iOS 10 and later") == true)
      #expect(old["device"] is NSNull)
      // The totals are the two audited backups'.
      #expect(integer(json, "summary", "backup", "bytes") == 2 * 5_002_006_720)
      #expect(try AppData.validateAgainstAuditSchema(try tree.file("report.json", contents: Array(result.output.utf8))) == "valid")
      _ = try AppData.shell("rm '\(tree.path("report.json"))'")
    }
    _ = try AppData.shell("rm '\(password)'")
    #expect(try BackupTests.snapshot(tree.root) == before)
  }

  @Test func anEncryptedBackupWithoutItsPasswordIsLockedNotARefusal() throws {
    let tree = try Self.mobileSync()
    let folder = tree.path("MobileSync/Backup")
    let result = try AppData.run(["audit", "--no-config", "--fail-on", "never", "--format", "json", folder])
    #expect(result.status == 0, "\(result.error)")
    let locked = try #require(Self.backups(try result.json())[Self.udids[1]])
    #expect(locked["status"] as? String == "locked")
    #expect(locked["containers"] is NSNull)
    #expect(locked["encrypted"] as? Bool == true)
    #expect((locked["message"] as? String)?.contains("an encrypted backup, and no password given") == true)
    // A wrong password is locked too, and a warning: --fail-on warning fails on it.
    let wrong = try AppData.run(["audit", "--no-config", "--fail-on", "warning", "--app", "com.example.notes", folder],
                                environment: ["APPDATA_BACKUP_PASSWORD": "not it"])
    #expect(wrong.status == 1)
    #expect(wrong.output.contains("\nTotal: 4 backups (1 audited, 1 locked, 2 not read), 2 containers, 4 files, 1.4 KiB; backup 4 files, 1.4 KiB\n"))
    // The backup's own finding is about it: named alone, then what to do.
    #expect(wrong.output.contains("  warning backup \(Self.udids[1]): locked: wrong password for this encrypted backup (the keybag's class key does not unwrap with it) [backup-unreadable] What to do: \(AuditRule.backupUnreadable.remedy)\n"))
    #expect(wrong.output.contains("\(Self.udids[2])  Test iPhone  17.1  2026-11-01T12:00:00Z  no         finished  not read      -          -\n"))
    // Nothing readable at all is a refusal, as the one backup alone is.
    let onlyLocked = try TestTree("locked")
    _ = try AppData.shell("cp -r '\(folder)/\(Self.udids[1])' '\(onlyLocked.root)/'")
    let refused = try AppData.run(["audit", "--no-config", onlyLocked.root])
    #expect(refused.status == 2)
    #expect(refused.output.isEmpty)
    #expect(refused.error == "appdata: error: \(onlyLocked.root)/\(Self.udids[1]): an encrypted backup, and no password given: set APPDATA_BACKUP_PASSWORD, or use --password-file FILE or --password-stdin (at a terminal, appdata asks for it)\n")
  }

  @Test func theCIFormatsNameTheBackupsNotRead() throws {
    let tree = try Self.mobileSync()
    let folder = tree.path("MobileSync/Backup")
    let github = try AppData.run(["audit", "--no-config", "--fail-on", "never", "--format", "github", folder])
    #expect(github.output.contains("::warning title=appdata backup-unreadable (backup \(Self.udids[1]))::backup \(Self.udids[1]): locked: an encrypted backup, and no password given"))
    #expect(github.output.hasSuffix("appdata: 7 containers, backup 14 files, 5002006720 bytes; 7 findings\n"))
    let junit = try AppData.run(["audit", "--no-config", "--fail-on", "warning", "--format", "junit", folder])
    #expect(junit.status == 1)
    #expect(junit.output.contains("<testsuite name=\"appdata audit backup \(Self.udids[3])\""))
    let sarif = try AppData.run(["audit", "--no-config", "--fail-on", "never", "--format", "sarif", folder])
    let results = (((try sarif.json())["runs"] as? [[String: Any]])?.first?["results"] as? [[String: Any]]) ?? []
    #expect(results.filter { $0["ruleId"] as? String == "backup-unreadable" }.count == 3)
    let ndjson = try AppData.run(["audit", "--no-config", "--fail-on", "never", "--format", "ndjson", folder])
    let lines = ndjson.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    #expect(lines.filter { $0["type"] as? String == "backup" }.map { $0["status"] as? String ?? "" } == ["audited", "locked", "refused", "refused"])
    #expect(lines.last?["type"] as? String == "total")
    #expect(lines.last?["backups"] as? Int == 4)
    // The HTML overview says each backup's status once, then why.
    let html = try AppData.run(["audit", "--no-config", "--fail-on", "never", "--format", "html", folder])
    #expect(html.output.contains("<td>locked: an encrypted backup, and no password given"))
    #expect(html.output.contains("<td>not read: a backup from before iOS 10"))
    #expect(!html.output.contains("locked: locked"))
  }

  @Test func appKeepsOneAppAcrossBackups() throws {
    let tree = try Self.mobileSync()
    let folder = tree.path("MobileSync/Backup")
    let result = try AppData.run(["audit", "--no-config", "--app", "com.example.notes", "--format", "json", folder],
                                 environment: EncryptedBackupTests.withPassword)
    #expect(result.status == 0, "\(result.error)")
    let backups = Self.backups(try result.json())
    for udid in Self.udids.prefix(2) {
      let ids = (backups[udid]?["containers"] as? [[String: Any]] ?? []).map { $0["id"] as? String ?? "" }
      #expect(ids == ["com.example.notes", "com.example.notes.widget"])
      #expect(integer(backups[udid] ?? [:], "summary", "backup", "bytes") == 1_450)
    }
    let table = try AppData.run(["audit", "--no-config", "--app", "com.example.notes", folder], environment: EncryptedBackupTests.withPassword)
    #expect(table.output.contains("""
      BACKUP                     DEVICE       IOS   DATE                  ENCRYPTED  SNAPSHOT  STATUS    FILES  BACKED UP
      \(Self.udids[0])  Test iPhone  17.1  2026-11-01T12:00:00Z  no         finished  audited       4    1.4 KiB
      \(Self.udids[1])  Test iPhone  17.1  2026-11-01T12:00:00Z  yes        finished  audited       4    1.4 KiB

      """))
    #expect(table.output.contains("""
      Backup \(Self.udids[1]): Test iPhone, iOS 17.1, 2026-11-01T12:00:00Z, snapshot finished, encrypted
        CONTAINER                 KIND    FILES  BACKED UP  ERRORS  WARNINGS
        com.example.notes         app         3    1.2 KiB       0         0
        com.example.notes.widget  plugin      1      250 B       0         0

      """))
    // The findings name the backup when the same container is in two.
    let listed = try AppData.run(["audit", "--no-config", "--app", "com.example.notes", "--list", "critical", folder],
                                 environment: EncryptedBackupTests.withPassword)
    #expect(listed.output.contains("Files of com.example.notes (backup \(Self.udids[1])) (3):"))
  }

  @Test func aFolderMixingBackupsAndContainersReportsBoth() throws {
    let tree = try Self.mobileSync()
    let folder = tree.path("MobileSync/Backup")
    try tree.file("MobileSync/Backup/Notes/Documents/a.db", size: 1_000)
    try tree.file("MobileSync/Backup/Notes/Library/Caches/c", size: 300)
    let json = try Library.auditJSON(folder)
    #expect((json["backups"] as? [Any])?.count == 4)
    let containers = json["containers"] as? [[String: Any]] ?? []
    #expect(containers.map { $0["container"] as? String } == [folder + "/Notes"])
    #expect(figures(containers[0], "critical") == [1, 1_000, 4_096])
    let table = try AppData.run(["audit", "--no-config", "--fail-on", "never", folder])
    #expect(table.output.contains("\nContainers beside the backups:\nCONTAINER  KIND  FILES  BACKED UP  ERRORS  WARNINGS\nNotes      app       2     1000 B       0         0\n"))
  }

  @Test func severalPathsAreOneReportOfMany() throws {
    let tree = try TestTree("operands")
    try tree.file("A.xcappdata/AppData/Documents/a", size: 2_000)
    try tree.file("B.xcappdata/AppData/Documents/b", size: 3_000)
    try tree.file("B.xcappdata/AppData/Library/Caches/big", size: 50_000)
    let before = try BackupTests.snapshot(tree.root)
    let paths = [tree.path("A.xcappdata"), tree.path("B.xcappdata"), BackupTests.plain]
    let result = try AppData.run(["audit", "--no-config", "--format", "json", "--max-file-size", "2500"] + paths)
    #expect(result.status == 1, "\(result.error)")
    let json = try result.json()
    #expect(json["source"] is NSNull)
    #expect(json["sources"] as? [String] == paths)
    let containers = json["containers"] as? [[String: Any]] ?? []
    #expect(containers.map { $0["container"] as? String } == [tree.path("A.xcappdata/AppData"), tree.path("B.xcappdata/AppData")])
    #expect(figures(containers[1], "critical") == [1, 3_000, 4_096])
    #expect(findings(containers[1], rule: "backup-file-too-large").count == 1)
    let backup = try #require(Self.backups(json)["plain"])
    let alone = try Self.alone("plain", as: BackupTests.plain, arguments: ["--max-file-size", "2500"])
    #expect((backup["containers"] as? NSArray) == (alone["containers"] as? NSArray))
    #expect(integer(json, "summary", "backup", "bytes") == 5_002_006_720 + 5_000)
    // The table names each container by its PATH.
    let table = try AppData.run(["audit", "--no-config", "--fail-on", "never"] + paths)
    #expect(table.output.hasPrefix("Sources: \(paths.joined(separator: ", "))\n"))
    #expect(table.output.contains("\nContainers:\nCONTAINER  "))
    #expect(table.output.contains("\n\(paths[1])  app       2    2.9 KiB       0         0\n"))
    // Exit status over all of them: the container with a large file fails alone too.
    #expect(try AppData.run(["audit", "--no-config", "--max-file-size", "2500", paths[0], paths[0]]).status == 0)
    #expect(try AppData.run(["audit", "--no-config", "--max-file-size", "2500", paths[0], paths[1]]).status == 1)
    // Every PATH is checked before any is read: a missing one refuses the run, nothing printed.
    let missing = try AppData.run(["audit", "--no-config", paths[0], tree.path("nothing")])
    #expect(missing.status == 2)
    #expect(missing.output.isEmpty)
    #expect(missing.error == "appdata: error: \(tree.path("nothing")): no such file or folder\n")
    #expect(try BackupTests.snapshot(tree.root) == before)
  }

  /// The report of a backup in an archive, its archive path turned into the folder's, and the
  /// stored-copy messages (which say "archive" where the folder's say "backup folder") dropped.
  static func normalized(_ output: String, replacing archived: String, with folder: String) throws -> NSDictionary {
    let text = output.replacingOccurrences(of: archived, with: folder)
    var json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    json["source"] = nil  // the archive, or the folder
    dropStoredCopyMessages(&json)
    return json as NSDictionary
  }

  @Test(.enabled(if: AppData.has("zip"), "needs zip"))
  func aZippedBackupIsAuditedAsItsFolder() throws {
    let tree = try Self.mobileSync()
    let folder = tree.path("MobileSync/Backup")
    // The stored files too, for --verify: one is missing and one has the wrong length.
    _ = try AppData.shell("cp -r '\(BackupTests.plain)/.' '\(folder)/\(Self.udids[0])/'")
    let zip = try AppData.shell("cd '\(folder)' && zip -qr '\(tree.path("backup.zip"))' '\(Self.udids[0])'")
    #expect(zip.status == 0, "\(zip.error)")
    let before = try BackupTests.snapshot(tree.root)
    let arguments = ["audit", "--no-config", "--format", "json", "--fail-on", "never", "--list", "all", "--verify"]
    let archived = try AppData.run(arguments + [tree.path("backup.zip")])
    #expect(archived.status == 0, "\(archived.error)")
    let onDisk = try AppData.run(arguments + [folder + "/" + Self.udids[0]])
    let json = try archived.json()
    #expect(value(json, "backup", "path") as? String == tree.path("backup.zip") + "//" + Self.udids[0])
    #expect(integer(json, "summary", "backup", "bytes") == 5_002_006_720)
    let verified = (json["containers"] as? [[String: Any]] ?? []).flatMap { findings($0) }.compactMap { $0["message"] as? String }
      .filter { $0.hasPrefix("its stored copy") }.sorted()
    #expect(verified.count == 2)
    #expect(verified.first?.hasSuffix("is not in the archive") == true)
    #expect(try Self.normalized(archived.output, replacing: tree.path("backup.zip") + "//" + Self.udids[0], with: folder + "/" + Self.udids[0])
            == (try Self.normalized(onDisk.output, replacing: "", with: "")))
    // --root names the backup's folder in the archive, as in a folder.
    let rooted = try AppData.run(["audit", "--no-config", "--format", "json", "--fail-on", "never", "--root", Self.udids[0], tree.path("backup.zip")])
    #expect(rooted.status == 0, "\(rooted.error)")
    #expect(integer(try rooted.json(), "summary", "backup", "bytes") == 5_002_006_720)
    // Read in memory: nothing beside the archive, nothing extracted.
    #expect(try BackupTests.snapshot(tree.root) == before)
  }

  @Test(.enabled(if: AppData.has("zstd"), "needs zstd"))
  func aTarredFolderOfBackupsIsAuditedAsTheFolder() throws {
    let tree = try Self.mobileSync()
    for (name, flag) in [("backups.tgz", "-z"), ("backups.tar.zst", "--zstd"), ("backups.tar", "")] {
      let tar = try AppData.shell("tar -C '\(tree.path("MobileSync"))' \(flag) -cf '\(tree.path(name))' Backup")
      #expect(tar.status == 0, "\(tar.error)")
    }
    let before = try BackupTests.snapshot(tree.root)
    let folder = try AppData.run(["audit", "--no-config", "--format", "json", tree.path("MobileSync/Backup")], environment: EncryptedBackupTests.withPassword)
    for name in ["backups.tgz", "backups.tar.zst", "backups.tar"] {
      let archived = try AppData.run(["audit", "--no-config", "--format", "json", tree.path(name)], environment: EncryptedBackupTests.withPassword)
      #expect(archived.status == 1, "\(archived.error)")
      let text = archived.output.replacingOccurrences(of: tree.path(name) + "//Backup", with: tree.path("MobileSync/Backup"))
        .replacingOccurrences(of: "\"source\" : \"\(tree.path(name))\"", with: "\"source\" : \"\(tree.path("MobileSync/Backup"))\"")
      let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
      let backups = Self.backups(json)
      #expect(backups[Self.udids[1]]?["status"] as? String == "audited")
      #expect(backups[Self.udids[2]]?["status"] as? String == "refused")
      #expect(backups[Self.udids[3]]?["status"] as? String == "refused")
      let expected = Self.backups(try folder.json())
      for udid in Self.udids.prefix(2) {
        #expect((backups[udid]?["containers"] as? NSArray) == (expected[udid]?["containers"] as? NSArray))
        #expect((backups[udid]?["summary"] as? NSDictionary) == (expected[udid]?["summary"] as? NSDictionary))
      }
    }
    // Without the password the encrypted one is locked, as in the folder.
    let locked = try AppData.run(["audit", "--no-config", "--format", "json", "--fail-on", "never", tree.path("backups.tgz")])
    #expect(locked.status == 0, "\(locked.error)")
    #expect(Self.backups(try locked.json())[Self.udids[1]]?["status"] as? String == "locked")
    // --root into the archive names one backup of the folder.
    let one = try AppData.run(["audit", "--no-config", "--format", "json", "--fail-on", "never", "--root", "Backup/" + Self.udids[0], tree.path("backups.tgz")])
    #expect(one.status == 0, "\(one.error)")
    #expect(value(try one.json(), "backup", "deviceName") as? String == "Test iPhone")
    #expect(try BackupTests.snapshot(tree.root) == before)
  }
}

/// The history of a folder of backups (issue 34): one device with six backups (archived copies
/// named `<UDID>-YYYYMMDD-HHMMSS`, one of them encrypted), a second device with one.
@Suite("backup history")
struct BackupHistoryTests {
  static let folder = AppData.generatedFixtures("make-backup-history.py", label: "history")

  /// Each point equals the audit of that backup alone, figure by figure, in date order; a
  /// container absent from a backup is null there.
  @Test func theHistorysPointsEqualAuditingEachBackupAlone() throws {
    let report = try AppData.auditJSON("\(Self.folder)/Backup", environment: EncryptedBackupTests.withPassword)
    let histories = report["history"] as? [[String: Any]] ?? []
    #expect(histories.map { $0["udid"] as? String } == ["00008030-001234567890802E", "00008110-00AA11BB22CC33DD"])
    let device = try #require(histories.first)
    #expect(device["device"] as? String == "Ann's iPhone")
    let backups = device["backups"] as? [[String: Any]] ?? []
    #expect(backups.count == 6)
    let dates = backups.compactMap { $0["date"] as? String }
    #expect(dates == dates.sorted() && dates.first == "2026-10-01T09:30:00Z")
    let lines = device["containers"] as? [[String: Any]] ?? []
    var compared = 0
    for (position, item) in backups.enumerated() {
      let alone = try AppData.auditJSON(item["path"] as! String, environment: EncryptedBackupTests.withPassword)
      let containers = alone["containers"] as? [[String: Any]] ?? []
      for line in lines {
        let id = line["id"] as! String
        let point = (line["points"] as? [Any])?[position]
        let match = containers.first { ($0["id"] as? String ?? $0["name"] as? String) == id && $0["kind"] as? String == line["kind"] as? String }
        if let match {
          let expected = value(match, "summary", "backup") as? [String: Any]
          #expect(NSDictionary(dictionary: point as? [String: Any] ?? [:]) == NSDictionary(dictionary: expected ?? [:]), "\(id) at \(position)")
          compared += 1
        } else {
          #expect(point is NSNull, "\(id) at \(position): \(String(describing: point))")
        }
      }
    }
    // The notes app in all six, the game in three, the group in three.
    #expect(compared == 12)
    // The game appears in the second backup, grows, shrinks and is gone in the fifth.
    let game = try #require(lines.first { $0["id"] as? String == "com.example.game" })
    let bytes = (game["points"] as? [Any] ?? []).map { ($0 as? [String: Any])?["bytes"] as? Int }
    #expect(bytes == [nil, 5_000, 90_000, 40_000, nil, nil])
    #expect(try AppData.validateAgainstAuditSchema(try Self.reportFile()) == "valid")
  }

  static func reportFile() throws -> String {
    let file = AppData.fixtureRoot + "/history-\(UUID().uuidString).json"
    let result = try AppData.run(["audit", "--format", "json", "--fail-on", "never", "--output", file, "\(folder)/Backup"],
                                 environment: EncryptedBackupTests.withPassword)
    #expect(result.status == 0, "\(result.error)")
    return file
  }

  /// The table: one block per device with two backups or more, the containers that changed
  /// most with a sparkline, ASCII when the locale is not UTF-8.
  @Test func theTableShowsEachDevicesHistory() throws {
    // Notes: 1,000 to 21,000 bytes; the game 5,000, 90,000, 40,000 in backups 2 to 4.
    for (locale, notes, game) in [("C.UTF-8", "▁▂▃▄▆█", " ▁█▄"), ("C", "_.-=*@", " _@=")] {
      var environment = EncryptedBackupTests.withPassword
      environment["LANG"] = locale
      environment["LC_ALL"] = locale
      let result = try AppData.run(["audit", "\(Self.folder)/Backup"], environment: environment)
      #expect(result.status == 0, "\(result.error)")
      #expect(result.output.contains("History of Ann's iPhone (00008030-001234567890802E): 6 backups from 2026-10-01T09:30:00Z to 2026-11-05T09:30:00Z"),
              "\(result.output)")
      #expect(!result.output.contains("History of Bob's iPad"))
      let history = result.output.components(separatedBy: "History of ").dropFirst().first ?? ""
      let row = { (id: String) in history.split(separator: "\n").first { $0.contains("  \(id) ") }.map(String.init) ?? "" }
      #expect(row("com.example.notes").hasSuffix(notes), "\(row("com.example.notes"))")
      #expect(row("com.example.game").hasSuffix(game), "'\(row("com.example.game"))'")
    }
  }
}

extension BackupHistoryTests {
  /// Backups that give no date are ordered by folder name, and the report says so.
  @Test func backupsWithoutDatesAreOrderedByFolderNameAndTheReportSaysSo() throws {
    let folder = NSTemporaryDirectory() + "appdata-nodate-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let script = """
      import os, sys, plistlib, importlib.util
      spec = importlib.util.spec_from_file_location("b", sys.argv[2] + "/Scripts/make-test-backup.py")
      b = importlib.util.module_from_spec(spec); spec.loader.exec_module(b)
      for name, size in (("DEV-b", 200), ("DEV-a", 100), ("DEV-c", 300)):
          path = os.path.join(sys.argv[1], name)
          os.makedirs(path)
          b.write_plists(path, ["com.example.app"])
          for plist, keys in (("Info.plist", ("Last Backup Date",)), ("Status.plist", ("Date",)), ("Manifest.plist", ("Date",))):
              value = plistlib.load(open(os.path.join(path, plist), "rb"))
              for key in keys: value.pop(key, None)
              value["Unique Identifier"] = "DEV" if plist == "Info.plist" else value.get("Unique Identifier")
              if value.get("Unique Identifier") is None: value.pop("Unique Identifier")
              plistlib.dump(value, open(os.path.join(path, plist), "wb"))
          b.write_database(path, [("AppDomain-com.example.app", "Documents/a", 1, size, None)], stored=False)
      """
    #expect(try AppData.shell("python3 - '\(folder)' '\(AppData.packageRoot)' <<'EOF'\n\(script)\nEOF").status == 0)
    let report = try AppData.auditJSON(folder)
    let history = try #require((report["history"] as? [[String: Any]])?.first)
    #expect(history["orderedBy"] as? String == "folder name")
    #expect((history["backups"] as? [[String: Any]])?.compactMap { ($0["path"] as? String)?.split(separator: "/").last.map(String.init) }
            == ["DEV-a", "DEV-b", "DEV-c"])
    let app = (history["containers"] as? [[String: Any]])?.first { $0["id"] as? String == "com.example.app" }
    #expect((app?["points"] as? [[String: Any]])?.map { $0["bytes"] as? Int } == [100, 200, 300])
    let table = try AppData.run(["audit", folder])
    #expect(table.output.contains("3 backups, ordered by folder name (not every backup gives its date)"), "\(table.output)")
  }
}

extension BackupHistoryTests {
  /// `--app ID` on a folder of backups gives that app's history alone, its group included.
  @Test func appGivesOneAppsHistory() throws {
    let report = try AppData.auditJSON("\(Self.folder)/Backup", ["--app", "com.example.notes"], environment: EncryptedBackupTests.withPassword)
    let history = try #require((report["history"] as? [[String: Any]])?.first)
    let ids = (history["containers"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }.sorted()
    #expect(ids == ["com.example.notes", "group.com.example.notes"])
  }
}
