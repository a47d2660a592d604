import Foundation
import Testing
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataKit

/// Issue 43: `appdata audit` on an Android app's data folder, through the binary.
@Suite("android audit")
struct AndroidAuditTests {
  /// A credential-encrypted data folder: a file, a database, a preference file, a cache and
  /// a no_backup file.
  static func dataFolder(_ label: String = "android") throws -> TestTree {
    let tree = try TestTree(label)
    try tree.file("files/a.txt", size: 100)
    try tree.file("databases/app.db", size: 8192)
    try tree.file("shared_prefs/s.xml", size: 7)
    try tree.file("cache/c", size: 10)
    try tree.file("no_backup/n", size: 3)
    return tree
  }

  @Test func aDataFolderIsRecognisedByItsShapeAndGivesTheJSONContract() throws {
    let tree = try Self.dataFolder()
    let result = try AppData.run(["audit", "--no-config", "--json", "--android-package", "com.example.app", tree.root])
    #expect(result.status == 0, "\(result.error)")
    let json = try result.json()
    #expect(json["platform"] as? String == "android")
    #expect(json["id"] as? String == "com.example.app")
    let cloud = try #require(value(json, "destinations", "cloud") as? [String: Any])
    #expect(cloud["carried"] as? Bool == true && cloud["reason"] is NSNull)
    // a.txt 512 + 512, app.db 512 + 8192, s.xml 512 + 512: cache/ and no_backup/ stay.
    #expect(cloud["files"] as? Int == 3 && cloud["bytes"] as? Int == 8299 && cloud["measured"] as? Int == 10752)
    #expect(cloud["quota"] as? Int == 26_214_400)
    // On the newest Android device-to-device transfer leaves cache/ and no_backup/ too.
    let transfer = try #require(value(json, "destinations", "deviceTransfer") as? [String: Any])
    #expect(transfer["files"] as? Int == 3 && transfer["bytes"] as? Int == 8299 && transfer["measured"] as? Int == 10752)
    #expect(transfer["quota"] is NSNull)
    #expect(value(json, "summary", "categories", "critical", "files") as? Int == 3)
    #expect(value(json, "summary", "categories", "cached", "files") as? Int == 1)
    #expect(value(json, "summary", "categories", "offline", "files") as? Int == 1)
    let file = tree.scratch + "/report.json"
    try Data(result.output.utf8).write(to: URL(fileURLWithPath: file))
    #expect(try AppData.validateAgainstAuditSchema(file) == "valid")
  }

  @Test func listedFilesNameTheDestinationsThatCarryThem() throws {
    let tree = try Self.dataFolder()
    let result = try AppData.run(["audit", "--no-config", "--json", "--list", "all", tree.root])
    let entries = try result.json()["entries"] as? [[String: Any]] ?? []
    let rows = entries.map { "\($0["path"]!) \($0["category"]!) \(($0["destinations"] as? [String] ?? []).joined(separator: "+"))" }
    // Neither destination carries cache/ and no_backup/ on the newest Android (AOSP's BackupAgent).
    #expect(rows == ["cache/c cached ", "databases/app.db critical cloud+deviceTransfer", "files/a.txt critical cloud+deviceTransfer",
                     "no_backup/n offline ", "shared_prefs/s.xml critical cloud+deviceTransfer"], "\(rows)")
    let file = tree.scratch + "/list.json"
    try Data(result.output.utf8).write(to: URL(fileURLWithPath: file))
    #expect(try AppData.validateAgainstAuditSchema(file) == "valid")
  }

  /// The walk reads folders on several threads and puts the tree together on one: the report
  /// (every entry, every finding) is the same on 1, 2 and 5 threads, on a tree with 120 folders,
  /// a path past 4,096 bytes, a FIFO and a symlink.
  @Test func theWalkGivesTheSameReportOnAnyNumberOfThreads() throws {
    let tree = try Self.dataFolder("android-threads")
    for folder in 0..<40 {
      for sub in 0..<2 { try tree.file("files/f\(folder)/s\(sub)/x\(folder % 3)", size: folder + sub) }
    }
    _ = try tree.folder("files/deep")
    try tree.deepChain(under: "files/deep", levels: 17, name: String(repeating: "d", count: 250), contents: "x")
    #expect(mkfifo(tree.root + "/files/fifo", 0o600) == 0)
    try tree.symlink("files/link", to: "/etc")
    var reports: [String] = []
    for jobs in [1, 2, 5] {
      let set = try Library.audit(tree.root, list: [.critical, .offline, .cached, .temporary]) { $0.jobs = jobs; $0.jobsAreFixed = true }
      reports.append(set.jsonDocument().serialized(pretty: true))
    }
    #expect(reports[1] == reports[0] && reports[2] == reports[0])
    let json = try Library.auditJSON(tree.root, list: [.critical])
    // 80 files in files/f* and a.txt (the one at the bottom of deep/ is not read), the database
    // and the preferences file.
    #expect(value(json, "destinations", "cloud", "files") as? Int == 83)
    let findings = json["findings"] as? [[String: Any]] ?? []
    // files/deep/ and 17 folders of 250 bytes: the 17th is past 4,096 bytes (the leaf below it
    // is not read).
    #expect(findings.contains { $0["message"] as? String == "a path of 4277 bytes in 19 components, past the 4096 bytes or 1024 components appdata reads; not counted" },
            "\(findings.map { $0["message"] ?? "" })")
  }

  /// Tar sizes in octal and in base-256 (GNU's and POSIX's form for sizes octal cannot hold;
  /// Android writes a pax record instead, but a stream is untrusted): the same entry, and a
  /// negative base-256 size refused.
  @Test func tarSizesAreReadInOctalAndBase256() throws {
    var header = [UInt8](repeating: 0, count: 512)
    let name = Array("apps/com.example.app/f/a".utf8)
    header.replaceSubrange(0..<name.count, with: name)
    header.replaceSubrange(156..<157, with: [0x30])
    header.replaceSubrange(257..<263, with: Array("ustar\0".utf8))
    func stream(size: [UInt8]) -> [UInt8] {
      var copy = header
      copy.replaceSubrange(124..<136, with: size)
      copy.replaceSubrange(148..<156, with: Array("        ".utf8))
      let sum = copy.reduce(0) { $0 + Int($1) }
      copy.replaceSubrange(148..<156, with: Array(String(format: "%06o", sum).utf8) + [0, 0x20])
      return copy + [UInt8](repeating: 0x61, count: 512) + [UInt8](repeating: 0, count: 1024)
    }
    let octal = try AndroidBackupStream.entries(bytes: stream(size: Array("00000000620\0".utf8)))
    let base256 = try AndroidBackupStream.entries(bytes: stream(size: [0x80] + [UInt8](repeating: 0, count: 9) + [0x01, 0x90]))
    #expect(octal == [.init(token: "f", path: Array("a".utf8), size: 400, isDirectory: false)])
    #expect(base256 == octal)
    #expect(throws: AndroidBackupStream.Failure.self) { try AndroidBackupStream.entries(bytes: stream(size: [0xFF] + [UInt8](repeating: 0xFF, count: 11))) }
  }

  @Test func platformSaysWhatAFolderOfAmbiguousShapeIs() throws {
    let tree = try TestTree("android-files-only")
    try tree.file("files/a", size: 5)
    let plain = try AppData.run(["audit", "--no-config", tree.root])
    #expect(plain.status == 2, "a folder holding only files/ is no container by its shape")
    let android = try AppData.run(["audit", "--no-config", "--json", "--platform", "android", tree.root])
    #expect(android.status == 0, "\(android.error)")
    #expect(try android.json()["platform"] as? String == "android")
    let data = try Self.dataFolder()
    let ios = try AppData.run(["audit", "--no-config", "--platform", "ios", data.root])
    #expect(ios.status == 2)
  }

  @Test func overTheQuotaTheWholeAppIsSkippedAndTheLargestAreNamed() throws {
    let tree = try Self.dataFolder()
    try tree.sparseFile("files/maps/tiles.db", size: 30_000_000)
    let result = try AppData.run(["audit", "--no-config", "--json", tree.root])
    #expect(result.status == 1)
    let json = try result.json()
    #expect(value(json, "destinations", "cloud", "carried") as? Bool == false)
    #expect(value(json, "destinations", "cloud", "reason") as? String == "Android measures 28.6 MiB, 3.6 MiB over the 25 MiB quota; Android skips the whole app")
    let findings = (json["findings"] as? [[String: Any]] ?? []).map { "\($0["rule"]!) \($0["path"]!)" }
    #expect(findings.contains("android-over-quota ."), "\(findings)")
    let message = (json["findings"] as? [[String: Any]])?.first { $0["rule"] as? String == "android-over-quota" }?["message"] as? String
    #expect(message?.contains("largest: files/maps/tiles.db (28.6 MiB)") == true, "\(message ?? "")")
    // --max-backup-size is the app's own limit, never Android's quota (issue 50).
    let raised = try AppData.run(["audit", "--no-config", "--json", "--max-backup-size", "40MB", tree.root])
    #expect(raised.status == 1)
    #expect(value(try raised.json(), "destinations", "cloud", "carried") as? Bool == false)
  }

  /// `--android-rules` twice: both files count, in either order (the legacy file for Android 11,
  /// the new one for Android 12 and later), as the manifest's two attributes do.
  @Test func bothRulesFilesCountInEitherOrder() throws {
    let tree = try Self.dataFolder("android-both-rules")
    try tree.file("shared_prefs/session_0.xml", size: 9)
    let fixtures = AppData.packageRoot + "/Tests/Fixtures/android/"
    let legacy = fixtures + "homeassistant-full-backup-content.xml", new = fixtures + "homeassistant-data-extraction-rules.xml"
    for order in [[legacy, new], [new, legacy]] {
      let json = try AppData.auditJSON(tree.root, ["--no-config"] + order.flatMap { ["--android-rules", $0] })
      // Android 12: the database and s.xml (not session_0.xml), in both sections.
      #expect(value(json, "destinations", "cloud", "rules") as? String == new + " <cloud-backup>")
      #expect(value(json, "destinations", "deviceTransfer", "rules") as? String == new + " <device-transfer>")
      #expect(value(json, "destinations", "cloud", "files") as? Int == 2)
      let old = try AppData.auditJSON(tree.root, ["--no-config", "--device-api", "30"] + order.flatMap { ["--android-rules", $0] })
      #expect(value(old, "destinations", "cloud", "rules") as? String == legacy)
      #expect(value(old, "destinations", "cloud", "files") as? Int == 1)
    }
  }

  @Test func aProjectsManifestAndItsRulesAreRead() throws {
    let tree = try Self.dataFolder()
    try tree.file("databases/app.db-shm", size: 32768)
    let project = tree.scratch + "/app"
    try FileManager.default.createDirectory(atPath: project + "/src/main/res/xml", withIntermediateDirectories: true)
    try """
      <manifest xmlns:android="http://schemas.android.com/apk/res/android" package="com.example.app">
        <application android:allowBackup="false" android:dataExtractionRules="@xml/extraction"/>
      </manifest>
      """.write(toFile: project + "/src/main/AndroidManifest.xml", atomically: true, encoding: .utf8)
    try """
      <data-extraction-rules><cloud-backup><exclude domain="database" path="app.db"/></cloud-backup></data-extraction-rules>
      """.write(toFile: project + "/src/main/res/xml/extraction.xml", atomically: true, encoding: .utf8)
    let result = try AppData.run(["audit", "--no-config", "--json", "--android-project", project, tree.root])
    let json = try result.json()
    #expect(json["id"] as? String == "com.example.app")
    #expect(value(json, "destinations", "cloud", "reason") as? String == "android:allowBackup is false")
    #expect(value(json, "destinations", "deviceTransfer", "carried") as? Bool == true)
    let rules = Set((json["findings"] as? [[String: Any]] ?? []).map { $0["rule"] as! String })
    #expect(rules == ["android-allowbackup-ignored", "android-transfer-carries-excluded", "android-shm-carried"], "\(rules)")
    // A rules file that is not there is one line, exit 2.
    let missing = try AppData.run(["audit", "--no-config", "--android-rules", tree.scratch + "/none.xml", tree.root])
    #expect(missing.status == 2)
    #expect(missing.error == "appdata: error: \(tree.scratch)/none.xml: no such file\n")
  }

  /// appdata.json's `android` object: its paths from the policy file's folder, each key under
  /// the command line's option of the same meaning.
  @Test func thePolicyFileSaysWhatTheOptionsSay() throws {
    let tree = try Self.dataFolder()
    try tree.file("databases/app.db-shm", size: 32768)
    let config = tree.scratch + "/ci"
    try FileManager.default.createDirectory(atPath: config + "/rules", withIntermediateDirectories: true)
    try """
      <full-backup-content><exclude domain="database" path="app.db"/></full-backup-content>
      """.write(toFile: config + "/rules/legacy.xml", atomically: true, encoding: .utf8)
    try """
      {"android": {"rules": ["rules/legacy.xml"], "package": "com.example.policy", "targetSdk": 30, "deviceApi": 30}}
      """.write(toFile: config + "/appdata.json", atomically: true, encoding: .utf8)
    let result = try AppData.run(["audit", "--config", config + "/appdata.json", "--json", tree.root])
    let json = try result.json()
    #expect(json["id"] as? String == "com.example.policy")
    #expect(value(json, "destinations", "cloud", "rules") as? String == "\(config)/rules/legacy.xml")
    // Android 11: the transfer follows the legacy rules too.
    #expect(value(json, "destinations", "deviceTransfer", "rules") as? String == "\(config)/rules/legacy.xml")
    let overridden = try AppData.run(["audit", "--config", config + "/appdata.json", "--json", "--device-api", "34", "--target-sdk", "34", tree.root])
    #expect((value(try overridden.json(), "destinations", "deviceTransfer", "rules") as? String)?.hasSuffix("everything") == true)
    try #"{"android": {"targetSdkk": 30}}"#.write(toFile: config + "/bad.json", atomically: true, encoding: .utf8)
    let bad = try AppData.run(["audit", "--config", config + "/bad.json", tree.root])
    #expect(bad.status == 2)
    #expect(bad.error == "appdata: error: \(config)/bad.json: unknown key 'android.targetSdkk'; did you mean 'targetSdk'?\n")
  }

  /// `adb exec-out run-as PKG tar c .` gives a tar of the folder: audited as it is (a tar, a tgz
  /// or a zip), with the folder's figures; a name that climbs is never counted.
  @Test func anArchiveOfTheFolderGivesTheFoldersFigures() throws {
    let tree = try Self.dataFolder()
    let folder = try AppData.run(["audit", "--no-config", "--json", "--android-package", "p.q", tree.root])
    let expected = try folder.json()["destinations"] as? [String: Any]
    let made = try AppData.shell("""
      cd '\(tree.scratch)' && python3 - '\(tree.root)' <<'EOF'
      import io, os, sys, tarfile, zipfile
      root = sys.argv[1]
      def add(t):
          for base, dirs, files in os.walk(root):
              for name in sorted(dirs + files):
                  full = os.path.join(base, name)
                  t.add(full, "./" + os.path.relpath(full, root), recursive=False)
      for name, mode in (("data.tar", "w"), ("data.tgz", "w:gz")):
          with tarfile.open(name, mode) as t:
              add(t)
              if name == "data.tar":
                  info = tarfile.TarInfo("../escape.txt"); info.size = 3
                  t.addfile(info, io.BytesIO(b"abc"))
      with zipfile.ZipFile("data.zip", "w") as z:
          for base, dirs, files in os.walk(root):
              for name in files:
                  full = os.path.join(base, name)
                  z.write(full, os.path.relpath(full, root))
      EOF
      """)
    #expect(made.status == 0, "\(made.error)")
    for archive in ["data.tar", "data.tgz", "data.zip"] {
      let result = try AppData.run(["audit", "--no-config", "--json", "--android-package", "p.q", tree.scratch + "/" + archive])
      let json = try result.json()
      #expect(json["platform"] as? String == "android", "\(archive)")
      let destinations = json["destinations"] as? [String: Any]
      for name in ["cloud", "deviceTransfer"] {
        let got = destinations?[name] as? [String: Any]
        let want = expected?[name] as? [String: Any]
        // A zip keeps no folder entries here: its folders are known from the files' paths.
        #expect(got?["files"] as? Int == want?["files"] as? Int && got?["bytes"] as? Int == want?["bytes"] as? Int, "\(archive) \(name)")
        #expect(got?["measured"] as? Int == want?["measured"] as? Int, "\(archive) \(name)")
      }
      if archive == "data.tar" {
        let findings = (json["findings"] as? [[String: Any]] ?? []).map { "\($0["rule"]!) \($0["path"]!)" }
        #expect(findings.contains("unreadable ../escape.txt"), "\(findings)")
      }
    }
  }

  /// An archive's kind is decided once, from its first headers (at most 256, and 1 MiB of a
  /// compressed stream), and it is then read once as that kind (issue 49). A tgz whose second
  /// entry is 64 MiB of zeros: two headers decide it (the look stops before expanding the
  /// 64 MiB to reach a third), then its three entries are read once, as Android data: 64 MiB and
  /// a few KiB expanded, never twice. A tar whose first 256 entries are all in `files/` is not
  /// recognised (the refusal names --platform android), and is with --platform android.
  @Test func anArchivesKindIsDecidedFromItsFirstHeadersAndItIsReadOnce() throws {
    let tree = try TestTree("android-kind")
    let made = try AppData.shell("""
      cd '\(tree.scratch)' && python3 - <<'EOF'
      import io, tarfile
      def add(t, name, data):
          info = tarfile.TarInfo(name); info.size = len(data); t.addfile(info, io.BytesIO(data))
      with tarfile.open("big.tgz", "w:gz") as t:
          add(t, "shared_prefs/s.xml", b"<map/>")
          add(t, "databases/big.db", bytes(64 << 20))
          add(t, "cache/c", b"c")
      with tarfile.open("late.tar", "w") as t:
          for i in range(256):
              add(t, f"files/f{i:03d}", b"x")
          add(t, "shared_prefs/s.xml", b"<map/>")
      EOF
      """)
    #expect(made.status == 0, "\(made.error)")
    let stats = ["APPDATA_DEBUG_STATS": "1"]
    let big = try AppData.run(["audit", "--no-config", "--json", tree.scratch + "/big.tgz"], environment: stats)
    // 64 MiB is over the cloud quota: exit 1, an android-over-quota finding.
    #expect(big.status == 1, "\(big.error)")
    #expect(try big.json()["platform"] as? String == "android")
    let counts = big.error.split(separator: " ")
    #expect(counts.first == "appdata-stats:", "\(big.error)")
    #expect(counts.contains("entries-read=5"), "\(big.error)")
    let decompressed = counts.first { $0.hasPrefix("decompressed-bytes=") }.flatMap { Int($0.dropFirst(19)) } ?? 0
    #expect(decompressed > 64 << 20 && decompressed < (64 << 20) + (1 << 20), "\(big.error)")
    let late = try AppData.run(["audit", "--no-config", "--json", tree.scratch + "/late.tar"])
    #expect(late.status == 2)
    #expect(late.error.hasSuffix("name its folder with --root, or give --platform android for an Android app's data\n"), "\(late.error)")
    let android = try AppData.run(["audit", "--no-config", "--json", "--platform", "android", tree.scratch + "/late.tar"])
    #expect(android.status == 0, "\(android.error)")
    #expect(value(try android.json(), "destinations", "cloud", "files") as? Int == 257)
  }

  /// `appdata migrate --android-rules LEGACY -o NEW`: on every real-app-modelled legacy file,
  /// the new file makes Android 12 (a target of 34) carry what the legacy file makes Android 11
  /// carry, for each destination, on a data folder holding what those rules name; checked here
  /// through `appdata audit`, apart from migrate's own check.
  @Test(arguments: ["homeassistant", "nextcloud", "wikipedia", "element"])
  func theMigratedRulesCarryWhatTheLegacyOnesDid(app: String) throws {
    let tree = try TestTree("android-migrate-\(app)")
    for (path, size) in [("files/a.txt", 1024), ("files/tiles/1.png", 4096), ("databases/app.db", 8192), ("databases/app.db-journal", 512),
                         ("databases/wikipedia.db", 16384), ("databases/wikipedia.db-wal", 1024), ("databases/wikipedia.db-shm", 32768),
                         ("databases/evernote_jobs.db", 4096), ("shared_prefs/settings.xml", 512), ("shared_prefs/session_0.xml", 512),
                         ("shared_prefs/evernote_jobs.xml", 512), ("app_webview/Default/Cookies", 2048), ("cache/x", 512), ("no_backup/t", 512)] {
      try tree.file(path, size: size)
    }
    let legacy = AppData.packageRoot + "/Tests/Fixtures/android/\(app)-full-backup-content.xml"
    let new = tree.scratch + "/data_extraction_rules.xml"
    let result = try AppData.run(["migrate", "--android-rules", legacy, "-o", new, tree.root])
    #expect(result.status == 0, "\(result.output)\(result.error)")
    #expect(result.output.hasPrefix("Wrote \(new): the <data-extraction-rules> for \(legacy)\n"))
    func destinations(_ arguments: [String]) throws -> [String: [String: Any]] {
      let audit = try AppData.run(["audit", "--no-config", "--json"] + arguments + [tree.root])
      return try audit.json()["destinations"] as? [String: [String: Any]] ?? [:]
    }
    // The legacy file as the same device applies it to a target of 30: what differs is the
    // rules, not the device's own walk (which folders it never sends).
    let before = try destinations(["--android-rules", legacy, "--device-api", "36", "--target-sdk", "30"])
    let after = try destinations(["--android-rules", new, "--device-api", "36", "--target-sdk", "34"])
    for name in ["cloud", "deviceTransfer"] {
      for key in ["carried", "files", "bytes", "measured"] {
        #expect("\(before[name]?[key] ?? "none")" == "\(after[name]?[key] ?? "none")", "\(app) \(name) \(key)")
      }
    }
    // NEW exists now: a second run replaces nothing.
    let bytes = try Data(contentsOf: URL(fileURLWithPath: new))
    let again = try AppData.run(["migrate", "--android-rules", legacy, "-o", new])
    #expect(again.status == 2)
    #expect(again.error == "appdata: error: \(new): already exists; appdata never replaces a file it did not make (choose another name)\n")
    #expect(try Data(contentsOf: URL(fileURLWithPath: new)) == bytes)
  }

  /// A requireFlags include cannot be said in the new format: named, and the check says what
  /// differs (exit 1). A file that fails the check is not written (issue 48: it was); --dry-run
  /// prints it.
  @Test func aRuleTheNewFormatCannotSayIsNamed() throws {
    let tree = try TestTree("android-migrate-flags")
    let legacy = AppData.packageRoot + "/Tests/Fixtures/android/owntracks-full-backup-content.xml"
    let new = tree.scratch + "/rules.xml"
    let result = try AppData.run(["migrate", "--android-rules", legacy, "-o", new])
    #expect(result.status == 1)
    #expect(result.error.hasPrefix("appdata: warning: \(legacy) line 9: <include domain=\"sharedpref\" path=\".\" requireFlags=\"clientSideEncryption\">: <data-extraction-rules> has no per-rule flags, so it is not written\n"), "\(result.error)")
    #expect(result.error.contains("appdata: warning: not the same: "))
    #expect(result.error.hasSuffix("appdata: error: \(new): not written, since Android 12 would carry something else with it than Android 11 with \(legacy) (--dry-run prints it)\n"), "\(result.error)")
    #expect(!result.output.contains("Wrote"), "\(result.output)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: tree.scratch) == [])
    let dry = try AppData.run(["migrate", "--dry-run", "--android-rules", legacy, "-o", new])
    #expect(dry.status == 1)
    let written = dry.output
    #expect(written.hasPrefix("<?xml") && !written.contains("requireFlags") && !written.contains("domain=\"sharedpref\""))
    #expect(try FileManager.default.contentsOfDirectory(atPath: tree.scratch) == [])
    // Without --output it writes nothing; --output without --android-rules is a usage error.
    #expect(try AppData.run(["migrate", "--android-rules", legacy]).status == 2)
    #expect(try AppData.run(["migrate", "-o", new, tree.root]).status == 2)
  }

  /// Issue 48: a newline, carriage return or tab in a rule's path (`&#10;`, `&#13;`, `&#9;` in
  /// the legacy file) is written as the same character reference. Written raw, XML reads it back
  /// as a space, so the new file named other paths; the check found 4 differences (exit 1), and
  /// the file was written all the same.
  @Test func controlCharactersInAPathAreWrittenAsCharacterReferences() throws {
    let tree = try TestTree("android-migrate-escapes")
    let legacy = tree.scratch + "/legacy.xml"
    try Array("""
      <?xml version="1.0" encoding="utf-8"?>
      <full-backup-content>
          <include domain="file" path="notes&#10;old.txt"/>
          <include domain="database" path="cr&#13;.db"/>
          <exclude domain="file" path="tab&#9;name &amp; &quot;more&quot;"/>
      </full-backup-content>
      """.utf8).withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: legacy)) }
    let new = tree.scratch + "/new.xml"
    let result = try AppData.run(["migrate", "--android-rules", legacy, "-o", new])
    #expect(result.status == 0, "\(result.output)\(result.error)")
    #expect(result.error == "")
    let rules = """
              <include domain="file" path="notes&#10;old.txt"/>
              <include domain="database" path="cr&#13;.db"/>
              <exclude domain="file" path="tab&#9;name &amp; &quot;more&quot;"/>

      """
    #expect(try String(contentsOfFile: new, encoding: .utf8) == """
      <?xml version="1.0" encoding="utf-8"?>
      <!-- Written by appdata migrate from \(legacy): the same rules for the cloud backup and for device-to-device transfer. -->
      <data-extraction-rules>
          <cloud-backup>
      \(rules)    </cloud-backup>
          <device-transfer>
      \(rules)    </device-transfer>
      </data-extraction-rules>

      """)
  }

  /// Every format carries the platform and each destination's figures; SARIF still validates
  /// against its schema, and lists Android's rules.
  @Test func everyFormatCarriesTheDestinations() throws {
    let tree = try Self.dataFolder()
    let github = try AppData.run(["audit", "--no-config", "--format", "github", tree.root])
    #expect(github.output.contains("appdata: android cloud: carried, 3 files, measured 10752 bytes of 26214400 allowed\n"), "\(github.output)")
    #expect(github.output.contains("appdata: android deviceTransfer: carried, 3 files, measured 10752 bytes\n"))
    let junit = try AppData.run(["audit", "--no-config", "--format", "junit", tree.root])
    #expect(junit.output.contains("<property name=\"platform\" value=\"android\"/>"))
    #expect(junit.output.contains("<property name=\"cloud.measured\" value=\"10752\"/>"))
    #expect(junit.output.contains("tests=\"\(AuditRule.android.count)\""))
    let ndjson = try AppData.run(["audit", "--no-config", "--format", "ndjson", tree.root])
    let summary = try JSONSerialization.jsonObject(with: Data((ndjson.output.split(separator: "\n").last ?? "").utf8)) as? [String: Any]
    #expect(summary?["platform"] as? String == "android" && value(summary, "destinations", "cloud", "measured") as? Int == 10752)
    let html = try AppData.run(["audit", "--no-config", "--format", "html", "-o", tree.scratch + "/r.html", tree.root])
    #expect(html.status == 0)
    let page = try String(contentsOfFile: tree.scratch + "/r.html", encoding: .utf8)
    #expect(page.contains("<h3>Android destinations</h3>"))
    // The treemap colours by destination: the root's sums are the cloud backup's bytes (a.txt,
    // app.db, s.xml: 8,299), device-to-device transfer's alone (0), and neither's (c, n: 13).
    let data = try #require(page.range(of: "id=\"data\">").flatMap { start in page.range(of: "</script>", range: start.upperBound..<page.endIndex).map { page[start.upperBound..<$0.lowerBound] } })
    let object = try #require(try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any])
    #expect(object["categories"] as? [String] == ["cloud", "transfer", "none"])
    let root = try #require((object["containers"] as? [[String: Any]])?.first?["tree"] as? [String: Any])
    #expect((root["b"] as? [Int])?.prefix(3) == [8299, 0, 13])
    let file = tree.scratch + "/report.sarif"
    _ = try AppData.run(["audit", "--no-config", "--format", "sarif", "--output", file, tree.root])
    let check = try AppData.shell("""
      python3 - '\(AppData.packageRoot)/Tests/Schemas/sarif-schema-2.1.0.json' '\(file)' <<'PY'
      import json, sys, jsonschema
      schema = json.load(open(sys.argv[1])); log = json.load(open(sys.argv[2]))
      jsonschema.Draft4Validator(schema).validate(log)
      run = log['runs'][0]
      print(len(run['tool']['driver']['rules']), run['properties']['platform'], run['properties']['destinations']['cloud']['measured'])
      PY
      """)
    #expect(check.status == 0, "\(check.error)")
    #expect(check.output == "\(AuditRule.android.count) android 10752\n")
    // GitHub's ingestion rules too (issue 51); this data folder has no finding: SARIFTests has them.
    #expect(try SARIFTests.checked(file).isEmpty)
  }

  /// The device-encrypted storage and the external files folder, named with their options, are
  /// read beside the data folder, carried in their own domains, and reported under user_de/ and
  /// external/.
  @Test func theDeviceEncryptedAndExternalFoldersJoinTheData() throws {
    let tree = try Self.dataFolder()
    try tree.file("de/shared_prefs/d.xml", size: 512)
    try tree.file("de/files/df", size: 10)
    try tree.file("ext/ext.bin", size: 1024)
    // Made inside the tree, then moved beside it: the data folder holds neither.
    try FileManager.default.moveItem(atPath: tree.path("de"), toPath: tree.scratch + "/de")
    try FileManager.default.moveItem(atPath: tree.path("ext"), toPath: tree.scratch + "/ext")
    let result = try AppData.run(["audit", "--no-config", "--json", "--list", "critical", "--android-device-data", tree.scratch + "/de",
                                  "--android-external", tree.scratch + "/ext", tree.root])
    let json = try result.json()
    // 10,752 as before; + d.xml 1,024, df 1,024 (device_sharedpref, device_file), ext.bin 1,536 (external).
    #expect(value(json, "destinations", "cloud", "files") as? Int == 6)
    #expect(value(json, "destinations", "cloud", "measured") as? Int == 10752 + 1024 + 1024 + 1536)
    let paths = (json["entries"] as? [[String: Any]] ?? []).map { $0["path"] as! String }
    #expect(paths == ["databases/app.db", "external/ext.bin", "files/a.txt", "shared_prefs/s.xml", "user_de/files/df", "user_de/shared_prefs/d.xml"], "\(paths)")
  }

  /// `--backup` with what Android really made, written by an independent writer
  /// (Scripts/make-android-backup.py: Python's tarfile and zlib, following the formats): an
  /// adb backup file, compressed or not, or LocalTransport's stream. What the model predicts
  /// for the cloud backup and what the backup holds agree; a file missing from it, and one it
  /// holds that the model does not carry, are findings; a truncated, encrypted or bomb file is
  /// one line, exit 2.
  @Test func theBackupAndroidMadeIsComparedWithThePrediction() throws {
    let tree = try Self.dataFolder()
    func make(_ name: String, _ arguments: String) throws -> String {
      let out = tree.scratch + "/" + name
      let made = try AppData.shell("python3 '\(AppData.packageRoot)/Scripts/make-android-backup.py' '\(tree.root)' '\(out)' --package com.example.app \(arguments)")
      #expect(made.status == 0, "\(made.error)")
      return out
    }
    for format in ["ab", "ab-plain", "stream"] {
      let backup = try make("b.\(format)", "--format \(format)")
      let result = try AppData.run(["audit", "--no-config", "--json", "--backup", backup, tree.root])
      #expect(result.status == 0, "\(format): \(result.error)")
      #expect((try result.json()["findings"] as? [[String: Any]] ?? []).isEmpty, "\(format)")
    }
    let differing = try make("d.ab", "--skip a.txt --extra sp/ghost.xml")
    let result = try AppData.run(["audit", "--no-config", "--json", "--backup", differing, tree.root])
    let findings = (try result.json()["findings"] as? [[String: Any]] ?? []).map { "\($0["rule"]!) \($0["path"]!)" }.sorted()
    #expect(findings == ["android-backup-missing files/a.txt", "android-backup-unexpected shared_prefs/ghost.xml"], "\(findings)")
    // Refusals, one line each.
    let whole = try Data(contentsOf: URL(fileURLWithPath: try make("t.ab", "")))
    try whole.prefix(60).write(to: URL(fileURLWithPath: tree.scratch + "/truncated.ab"))
    let truncated = try AppData.run(["audit", "--no-config", "--backup", tree.scratch + "/truncated.ab", tree.root])
    #expect(truncated.status == 2 && truncated.error.hasSuffix("truncated.ab: the compressed stream ends before its end (a truncated file)\n"), "\(truncated.error)")
    // Encrypted (AES-256, PBKDF2-HMAC-SHA1, Java's widened checksum), compressed or not: read
    // with its password; a wrong one is one line, exit 2.
    for format in ["ab", "ab-plain"] {
      let encrypted = try make("e.\(format)", "--format \(format) --password 'pässwörd' --rounds 1000")
      let read = try AppData.run(["audit", "--no-config", "--json", "--backup", encrypted, tree.root], environment: ["APPDATA_BACKUP_PASSWORD": "pässwörd"])
      #expect(read.status == 0, "\(format): \(read.error)")
      #expect((try read.json()["findings"] as? [[String: Any]] ?? []).isEmpty, "\(format)")
      let wrong = try AppData.run(["audit", "--no-config", "--backup", encrypted, tree.root], environment: ["APPDATA_BACKUP_PASSWORD": "passwörd"])
      #expect(wrong.status == 2 && wrong.error == "appdata: error: \(encrypted): the password is not this adb backup's\n", "\(wrong.error)")
    }
    // The rounds count twice (issue 48): a password costs the user key's derivation and the
    // checksum's, so 200 rounds need --max-key-rounds 400.
    let rounds = try make("r.ab", "--password x --rounds 200")
    let tooMany = try AppData.run(["audit", "--no-config", "--max-key-rounds", "399", "--backup", rounds, tree.root], environment: ["APPDATA_BACKUP_PASSWORD": "x"])
    #expect(tooMany.status == 2 && tooMany.error == "appdata: error: \(rounds): it asks for 400 key-derivation rounds (200 for the user key, 200 for its checksum), more than the 399 appdata allows (--max-key-rounds)\n", "\(tooMany.error)")
    let enough = try AppData.run(["audit", "--no-config", "--max-key-rounds", "400", "--backup", rounds, tree.root], environment: ["APPDATA_BACKUP_PASSWORD": "x"])
    #expect(enough.status == 0, "\(enough.error)")
    let bomb = tree.scratch + "/bomb.ab"
    #expect(try AppData.shell("""
      python3 -c 'import zlib,sys; c=zlib.compressobj(9); f=open(sys.argv[1],"wb"); f.write(b"ANDROID BACKUP\\n5\\n1\\nnone\\n"); z=bytes(1<<24); [f.write(c.compress(z)) for _ in range(20)]; f.write(c.flush())' '\(bomb)'
      """).status == 0)
    let refused = try AppData.run(["audit", "--no-config", "--backup", bomb, tree.root])
    #expect(refused.status == 2 && refused.error.contains("a zlib bomb, not an app's backup"), "\(refused.error)")
  }
}
