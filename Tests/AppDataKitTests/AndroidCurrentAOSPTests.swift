import Foundation
import Testing
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataKit

/// Issue 50: Android as current AOSP decides it (Android 16's FullBackup.java and
/// BackupAgent.java, Android 15's BackupAgent.java, ParsingPackageUtils, write_tarfile's
/// measure), with a quota no option can move. One test per item of the issue's "wrong today",
/// each on a real tree, with exact figures.
@Suite("android as current AOSP decides it")
struct AndroidCurrentAOSPTests {
  /// Data Android measures at 33.5 MiB for the cloud backup: tiles.db (30 MiB), app.db
  /// (3.5 MiB), a.txt, s.xml; plus cache/ and no_backup/, which neither destination carries.
  static func largeData(_ label: String) throws -> TestTree {
    let tree = try TestTree(label)
    try tree.sparseFile("files/maps/tiles.db", size: 31_457_280)
    try tree.sparseFile("databases/app.db", size: 3_670_016)
    try tree.file("files/a.txt", size: 100)
    try tree.file("shared_prefs/s.xml", size: 7)
    try tree.file("cache/c", size: 10)
    try tree.file("no_backup/n", size: 3)
    return tree
  }

  // Android's measure: tiles.db 512 + 31,457,280; maps/ 512; app.db 512 + 3,670,016; a.txt
  // 1,024; s.xml 1,024: 35,130,880 bytes (33.5 MiB), 8,916,480 (8.5 MiB) over 26,214,400.
  static let measured = 35_130_880
  static let carriedBytes = 31_457_280 + 3_670_016 + 100 + 7

  /// Item 1: README's iOS CI line on Android data. The quota is Android's: the cloud backup is
  /// not carried, exit 1; --max-backup-size and --max-file-size are the app's own limits on
  /// what each destination carries (device-to-device transfer carries the 30 MiB file).
  @Test func theQuotaIsAndroidsAndTheOwnLimitsApplyToWhatEachDestinationCarries() throws {
    let tree = try Self.largeData("android-quota-options")
    let result = try AppData.run(["audit", "--no-config", "--json", "--max-backup-size", "50MB", "--max-file-size", "5MB", tree.root])
    #expect(result.status == 1, "\(result.error)")
    let json = try result.json()
    #expect(value(json, "destinations", "cloud", "carried") as? Bool == false)
    #expect(value(json, "destinations", "cloud", "measured") as? Int == Self.measured)
    #expect(value(json, "destinations", "cloud", "quota") as? Int == 26_214_400)
    #expect(value(json, "destinations", "cloud", "reason") as? String == "Android measures 33.5 MiB, 8.5 MiB over the 25 MiB quota; Android skips the whole app")
    #expect(value(json, "destinations", "deviceTransfer", "carried") as? Bool == true)
    #expect(value(json, "destinations", "deviceTransfer", "bytes") as? Int == Self.carriedBytes)
    let rules = findings(json).map { "\($0["rule"]!) \($0["path"]!)" }.sorted()
    #expect(rules == ["android-over-quota .", "backup-file-too-large files/maps/tiles.db"], "\(rules)")
    #expect(findings(json, rule: "backup-file-too-large").first?["message"] as? String
            == "device-to-device transfer carries this file of 30.0 MiB (31457280 bytes), over the app's own limit of 4.8 MiB (maxFileSize). Move it to cache/ if it can be re-created, or exclude it in the backup rules")
    // The app's own backup limit, below what device-to-device transfer carries.
    let small = try AppData.run(["audit", "--no-config", "--json", "--max-backup-size", "20MB", tree.root])
    #expect(small.status == 1)
    #expect(findings(try small.json(), rule: "backup-too-large").map { $0["message"] as? String ?? "" }
            == ["device-to-device transfer carries 33.5 MiB (\(Self.carriedBytes) bytes), over the app's own limit of 19.1 MiB (maxBackupSize, not Android's quota). Move re-creatable data to cache/ or exclude it in the backup rules, or raise the limit"])
    // The same limits from a policy file: the quota still holds.
    try #"{"maxBackupSize": "45 MiB", "maxFileSize": "40 MiB"}"#.write(toFile: tree.scratch + "/policy.json", atomically: true, encoding: .utf8)
    let policy = try AppData.run(["audit", "--config", tree.scratch + "/policy.json", "--json", tree.root])
    #expect(policy.status == 1)
    #expect(value(try policy.json(), "destinations", "cloud", "carried") as? Bool == false)
    #expect(value(try policy.json(), "destinations", "cloud", "quota") as? Int == 26_214_400)
    // A budget applies to what each destination carries: device-to-device transfer carries
    // 30 MiB under files/maps, over 10 MiB; the cloud backup carries nothing (over its quota).
    try #"{"budgets": [{"path": "files/maps", "maxBytes": "10 MiB"}]}"#.write(toFile: tree.scratch + "/budget.json", atomically: true, encoding: .utf8)
    let budget = try AppData.run(["audit", "--config", tree.scratch + "/budget.json", "--json", tree.root])
    let budgetJSON = try budget.json()
    #expect(findings(budgetJSON, rule: "budget-exceeded").map { $0["message"] as? String ?? "" }
            == ["device-to-device transfer carries 30.0 MiB (31457280 bytes) under files/maps, over its budget of 10.0 MiB. Move re-creatable data there to cache/ or exclude it in the backup rules"])
    #expect((budgetJSON["budgets"] as? [[String: Any]])?.first?["bytes"] as? Int == 31_457_280)
    // A file both destinations carry is named once, with both.
    let folder = try AndroidAuditTests.dataFolder("android-own-file-limit")
    let both = try AppData.auditJSON(folder.root, ["--no-config", "--max-file-size", "4000"])
    #expect(findings(both, rule: "backup-file-too-large").map { "\($0["path"]!): \($0["message"]!)" }
            == ["databases/app.db: the cloud backup and device-to-device transfer carry this file of 8.0 KiB (8192 bytes), over the app's own limit of 3.9 KiB (maxFileSize). Move it to cache/ if it can be re-created, or exclude it in the backup rules"])
  }

  /// Item 1: init-config on Android data writes the app's own limits (what the destinations
  /// carry, plus headroom), an `android` object, the rules an Android audit raises; and the
  /// policy it writes does not pass data over the quota.
  @Test func initConfigOnAndroidDataWritesAnAndroidPolicy() throws {
    let tree = try Self.largeData("android-init-config")
    let file = tree.scratch + "/appdata.json"
    let written = try AppData.run(["init-config", "--output", file, "--headroom", "20", tree.root])
    #expect(written.status == 0, "\(written.error)")
    let policy = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
    // 35,127,403 bytes carried by device-to-device transfer, + 20 %: 42,152,884, 41,165 KiB up: 41 MiB.
    #expect(policy["maxBackupSize"] as? String == "41 MiB")
    #expect(policy["maxFileSize"] as? String == "36 MiB")
    #expect(value(policy, "android", "package") as? String == "app")
    let rules = (policy["rules"] as? [String: Any] ?? [:]).keys.sorted()
    #expect(rules.contains("android-over-quota") && !rules.contains("excluded-system-folder") && !rules.contains("legacy-marker"), "\(rules)")
    #expect(written.output.hasPrefix("Wrote \(file): maxBackupSize 41 MiB, maxFileSize 36 MiB (current figures + 20%), the app's own limits on what each destination carries; Android's 25 MiB cloud quota is not a key and always applies\n"), "\(written.output)")
    let audit = try AppData.run(["audit", "--config", file, "--json", tree.root])
    #expect(audit.status == 1, "the policy init-config wrote must not pass data Android skips")
    #expect(findings(try audit.json(), rule: "android-over-quota").count == 1)
  }

  /// Item 2: an empty `<cloud-backup/>` is a present section: everything (isSectionPresent,
  /// FullBackup.java). So on every release read, Android 12 (31), 12L (32), 13 (33) and 14
  /// (34) as on the newest: only Android 12's development code fell back to
  /// `<full-backup-content>`.
  @Test(arguments: [nil, "31", "32", "33", "34"] as [String?])
  func anEmptySectionIsPresentAndMeansEverything(deviceAPI: String?) throws {
    let tree = try AndroidAuditTests.dataFolder("android-empty-section-\(deviceAPI ?? "newest")")
    let legacy = tree.scratch + "/legacy.xml", new = tree.scratch + "/new.xml"
    try #"<full-backup-content><exclude domain="database" path="app.db"/></full-backup-content>"#.write(toFile: legacy, atomically: true, encoding: .utf8)
    try #"<data-extraction-rules><cloud-backup/><device-transfer></device-transfer></data-extraction-rules>"#.write(toFile: new, atomically: true, encoding: .utf8)
    let device = deviceAPI.map { ["--device-api", $0] } ?? []
    let json = try AppData.auditJSON(tree.root, ["--no-config", "--android-rules", legacy, "--android-rules", new] + device)
    #expect(value(json, "destinations", "cloud", "rules") as? String == new + " <cloud-backup>")
    // a.txt 512 + 512, app.db 512 + 8,192, s.xml 512 + 512 (the legacy file would leave app.db).
    #expect(value(json, "destinations", "cloud", "files") as? Int == 3)
    #expect(value(json, "destinations", "cloud", "measured") as? Int == 10752)
    #expect(value(json, "destinations", "deviceTransfer", "rules") as? String == new + " <device-transfer>")
    #expect(value(json, "destinations", "deviceTransfer", "files") as? Int == 3)
  }

  /// Item 3: device-to-device transfer leaves cache/, code_cache/ and no_backup/
  /// (getExtraExcludeDirsIfAny adds them for every destination, BackupAgent.java). So on every
  /// release read, Android 12 (31), 12L (32), 13 (33) and 14 (34) as on the newest: only
  /// Android 12's development code walked them for a transfer.
  @Test(arguments: [nil, "31", "32", "33", "34"] as [String?])
  func deviceTransferLeavesTheCacheFolders(deviceAPI: String?) throws {
    let tree = try AndroidAuditTests.dataFolder("android-transfer-cache-\(deviceAPI ?? "newest")")
    try tree.file("code_cache/x.dex", size: 600)
    let device = deviceAPI.map { ["--device-api", $0] } ?? []
    let json = try AppData.auditJSON(tree.root, ["--no-config"] + device)
    // Without cache/ 512, c 1,024, code_cache/ 512, x.dex 1,536, no_backup/ 512, n 1,024.
    #expect(value(json, "destinations", "deviceTransfer", "files") as? Int == 3)
    #expect(value(json, "destinations", "deviceTransfer", "measured") as? Int == 10752)
    #expect(value(json, "destinations", "cloud", "measured") as? Int == 10752)
  }

  /// A module whose manifest says `attributes` on `<application>`, with `rules` in
  /// res/xml/backup_rules.xml and `<uses-sdk android:targetSdkVersion>` when given.
  static func project(_ tree: TestTree, attributes: String, rules: String?, targetSdk: Int? = nil) throws -> String {
    let project = tree.scratch + "/app"
    try FileManager.default.createDirectory(atPath: project + "/src/main/res/xml", withIntermediateDirectories: true)
    try """
      <manifest xmlns:android="http://schemas.android.com/apk/res/android" package="com.example.app">
        \(targetSdk.map { "<uses-sdk android:targetSdkVersion=\"\($0)\"/>" } ?? "")
        <application \(attributes)/>
      </manifest>
      """.write(toFile: project + "/src/main/AndroidManifest.xml", atomically: true, encoding: .utf8)
    if let rules { try rules.write(toFile: project + "/src/main/res/xml/backup_rules.xml", atomically: true, encoding: .utf8) }
    return project
  }

  /// Item 4: android:dataExtractionRules naming a `<full-backup-content>` file: Android's
  /// verifyTopLevelTag throws, isFullBackupEnabled is false, and neither destination carries
  /// anything.
  @Test func dataExtractionRulesNamingALegacyFileCarriesNothing() throws {
    let tree = try AndroidAuditTests.dataFolder("android-misnamed")
    let project = try Self.project(tree, attributes: #"android:dataExtractionRules="@xml/backup_rules""#,
                                   rules: #"<full-backup-content><exclude domain="file" path="a.txt"/></full-backup-content>"#)
    let result = try AppData.run(["audit", "--no-config", "--json", "--android-project", project, tree.root])
    #expect(result.status == 1, "\(result.error)")
    let json = try result.json()
    let file = project + "/src/main/res/xml/backup_rules.xml"
    for destination in ["cloud", "deviceTransfer"] {
      #expect(value(json, "destinations", destination, "carried") as? Bool == false, "\(destination)")
      #expect(value(json, "destinations", destination, "reason") as? String
              == "android:dataExtractionRules names \(file), whose root is <full-backup-content>, not <data-extraction-rules>: Android's BackupScheme refuses it (verifyTopLevelTag), so nothing is carried")
    }
    #expect(findings(json, rule: "android-rules-abort").map { $0["message"] as? String ?? "" }
            == ["android:dataExtractionRules names \(file), whose root is <full-backup-content>: Android's BackupScheme refuses it (verifyTopLevelTag), so the cloud backup and device-to-device transfer carry nothing. Point android:dataExtractionRules at a <data-extraction-rules> file, and this file at android:fullBackupContent"])
    // On Android 11 the attribute is not read: everything.
    let android11 = try AppData.auditJSON(tree.root, ["--no-config", "--device-api", "30", "--android-project", project])
    #expect(value(android11, "destinations", "cloud", "files") as? Int == 3)
    #expect(findings(android11, rule: "android-rules-abort").isEmpty)
    // The reverse: android:fullBackupContent naming a <data-extraction-rules>. The cloud backup
    // parses it and refuses it; a target-36 transfer never reads it (the compat change).
    let reverse = try Self.project(tree, attributes: #"android:fullBackupContent="@xml/backup_rules""#,
                                   rules: #"<data-extraction-rules><cloud-backup/></data-extraction-rules>"#)
    let reversed = try AppData.auditJSON(tree.root, ["--no-config", "--android-project", reverse])
    #expect(value(reversed, "destinations", "cloud", "carried") as? Bool == false)
    #expect((value(reversed, "destinations", "cloud", "reason") as? String)?.hasPrefix("android:fullBackupContent names \(file), whose root is <data-extraction-rules>") == true)
    #expect(value(reversed, "destinations", "deviceTransfer", "files") as? Int == 3)
    #expect(findings(reversed, rule: "android-rules-abort").map { $0["message"] as? String ?? "" }
            == ["android:fullBackupContent names \(file), whose root is <data-extraction-rules>: Android's BackupScheme refuses it (verifyTopLevelTag), so the cloud backup carries nothing. Point android:fullBackupContent at a <full-backup-content> file, and this file at android:dataExtractionRules"])
  }

  /// Item 5: android:fullBackupContent="false" and a target of 30: isFullBackupContentEnabled
  /// is false for device-to-device transfer too. A target of 31 moves everything (the compat
  /// change ignores fullBackupContent in a transfer).
  @Test func fullBackupContentFalseStopsATarget30Transfer() throws {
    let tree = try AndroidAuditTests.dataFolder("android-fbc-false")
    let old = try Self.project(tree, attributes: #"android:fullBackupContent="false""#, rules: nil, targetSdk: 30)
    let json = try AppData.auditJSON(tree.root, ["--no-config", "--android-project", old])
    #expect(value(json, "destinations", "deviceTransfer", "carried") as? Bool == false)
    #expect(value(json, "destinations", "deviceTransfer", "reason") as? String == "android:fullBackupContent is false")
    #expect(value(json, "destinations", "cloud", "reason") as? String == "android:fullBackupContent is false")
    let new = try AppData.auditJSON(tree.root, ["--no-config", "--android-project", old, "--target-sdk", "31"])
    #expect(value(new, "destinations", "deviceTransfer", "carried") as? Bool == true)
    #expect(value(new, "destinations", "deviceTransfer", "files") as? Int == 3)
  }

  /// Item 6: allowBackup="false" with android:backupAgent, a target of 34: ParsingPackageUtils
  /// reads backupAgent only when allowBackup is true, so the app has no agent, and
  /// device-to-device transfer (which ignores allowBackup from a target of 31) is a full Auto
  /// Backup.
  @Test func allowBackupFalseDropsTheBackupAgent() throws {
    let tree = try AndroidAuditTests.dataFolder("android-agent")
    let project = try Self.project(tree, attributes: #"android:allowBackup="false" android:backupAgent=".MyAgent""#, rules: nil, targetSdk: 34)
    let json = try AppData.auditJSON(tree.root, ["--no-config", "--android-project", project])
    #expect(value(json, "destinations", "cloud", "reason") as? String == "android:allowBackup is false")
    #expect(value(json, "destinations", "deviceTransfer", "carried") as? Bool == true)
    #expect(value(json, "destinations", "deviceTransfer", "files") as? Int == 3)
    #expect(value(json, "destinations", "deviceTransfer", "rules") as? String == "no <device-transfer> section (a target of 31 or later): everything")
    // With allowBackup true the agent is read: key/value backup, not Auto Backup.
    let agent = try Self.project(tree, attributes: #"android:backupAgent=".MyAgent""#, rules: nil, targetSdk: 34)
    let keyValue = try AppData.auditJSON(tree.root, ["--no-config", "--android-project", agent])
    #expect((value(keyValue, "destinations", "deviceTransfer", "reason") as? String)?.hasSuffix("key/value backup, not Auto Backup") == true)
  }

  /// Item 7: write_tarfile's measure is a flat 1024 for any pax header, however long its
  /// records: a path of 502 bytes measures as one of 100.
  @Test func aLongNameMeasuresAFlat1024ForItsPaxHeader() throws {
    func measure(_ length: Int) -> UInt64 {
      AndroidBackupModel.measure(package: "com.example.app", domain: .file, relativePath: Array(String(repeating: "y", count: length).utf8), size: 1, isDirectory: false)
    }
    #expect(measure(100) == 2048 && measure(480) == 2048 && measure(4000) == 2048)
    let tree = try TestTree("android-long-name")
    let x = String(repeating: "x", count: 200), y = String(repeating: "y", count: 200), z = String(repeating: "z", count: 100)
    try tree.file("files/\(x)/\(y)/\(z)", size: 1)
    try tree.file("shared_prefs/s.xml", size: 7)
    let json = try AppData.auditJSON(tree.root, ["--no-config", "--android-package", "com.example.app"])
    // The file (relative path 502) 512 + 1024 + 512; its two folders (200, 401) 512 + 1024
    // each; s.xml 1,024.
    #expect(value(json, "destinations", "cloud", "measured") as? Int == 2048 + 2 * 1536 + 1024)
  }

  /// Item 8: a rule's path through a symlink: BackupScheme keeps getCanonicalPath(), so
  /// `<include domain="file" path="link"/>` with `files/link -> a.txt` includes a.txt; in a
  /// folder and in a tar of it.
  @Test func aRulesPathFollowsASymlinkAsGetCanonicalPathDoes() throws {
    let tree = try TestTree("android-rule-symlink")
    try tree.file("files/a.txt", size: 100)
    try tree.file("files/b.txt", size: 50)
    try tree.file("shared_prefs/s.xml", size: 7)
    try tree.symlink("files/link", to: "a.txt")
    try tree.symlink("files/up", to: "../shared_prefs")
    let rules = tree.scratch + "/rules.xml"
    try """
      <full-backup-content><include domain="file" path="link"/><include domain="file" path="up/s.xml"/></full-backup-content>
      """.write(toFile: rules, atomically: true, encoding: .utf8)
    let made = try AppData.shell("cd '\(tree.root)' && tar cf '\(tree.scratch)/data.tar' .")
    #expect(made.status == 0, "\(made.error)")
    for input in [tree.root, tree.scratch + "/data.tar"] {
      let json = try AppData.auditJSON(input, ["--no-config", "--android-rules", rules, "--list", "critical"])
      let paths = (json["entries"] as? [[String: Any]] ?? []).map { $0["path"] as! String }
      #expect(paths == ["files/a.txt", "shared_prefs/s.xml"], "\(input): \(paths)")
      #expect(value(json, "destinations", "cloud", "bytes") as? Int == 107, "\(input)")
    }
  }

  /// Item 9: a tar's names read as `tar x` leaves them: a name given twice is one file (the
  /// last), `files/./a/../b` is `files/b`, an absolute name is not in the folder and is named.
  @Test func aTarsNamesAreReadAsTarExtractsThem() throws {
    let tree = try TestTree("android-tar-names")
    let made = try AppData.shell("""
      cd '\(tree.scratch)' && python3 - <<'EOF'
      import io, tarfile
      def add(t, name, size):
          info = tarfile.TarInfo(name); info.size = size; t.addfile(info, io.BytesIO(b"x" * size))
      with tarfile.open("data.tar", "w", format=tarfile.GNU_FORMAT) as t:
          add(t, "shared_prefs/s.xml", 7)
          add(t, "files/a.txt", 10)
          add(t, "files/a.txt", 20)
          add(t, "files/./a/../b", 5)
          add(t, "/abs/file", 3)
      EOF
      """)
    #expect(made.status == 0, "\(made.error)")
    let json = try AppData.auditJSON(tree.scratch + "/data.tar", ["--no-config", "--platform", "android", "--list", "critical"])
    let listed = (json["entries"] as? [[String: Any]] ?? []).map { "\($0["path"]!) \($0["bytes"]!)" }
    #expect(listed == ["files/a.txt 20", "files/b 5", "shared_prefs/s.xml 7"], "\(listed)")
    #expect(value(json, "destinations", "cloud", "files") as? Int == 3)
    #expect(value(json, "destinations", "cloud", "bytes") as? Int == 32)
    let unreadable = findings(json, rule: "unreadable").map { "\($0["path"]!): \($0["message"]!)" }
    #expect(unreadable == ["/abs/file: an absolute name, outside the folder the archive was made in; not counted"], "\(unreadable)")
  }

  /// Item 10: on Android 5.1 (API 22) there is no Auto Backup: no quota finding, whatever the
  /// data's size.
  @Test func noQuotaFindingWhereThereIsNoAutoBackup() throws {
    let tree = try Self.largeData("android-api-22")
    let result = try AppData.run(["audit", "--no-config", "--json", "--device-api", "22", tree.root])
    #expect(result.status == 0, "\(result.error)")
    let json = try result.json()
    #expect(value(json, "destinations", "cloud", "reason") as? String == "Auto Backup needs Android 6.0 (API 23)")
    #expect(findings(json, rule: "android-over-quota").isEmpty)
    #expect(findings(json, rule: "android-cache-in-backup").isEmpty)
  }
}

/// Issue 50, "the answer a person reads": the table leads with what each destination does, the
/// Android versions the audit took are printed (and in JSON, with whether each was assumed),
/// iOS's own categories are hidden, `--list` names each file's destinations.
@Suite("android: the answer a person reads")
struct AndroidAnswerTests {
  @Test func theTableLeadsWithWhatEachDestinationDoes() throws {
    let tree = try AndroidCurrentAOSPTests.largeData("android-table")
    let result = try AppData.run(["audit", "--no-config", tree.root])
    #expect(result.status == 1)
    let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(Array(lines.prefix(8)) == [
      "Android app data: \(tree.root) (app)",
      "Policy: none (no limits but those given on the command line)",
      "",
      "Target SDK 36 (assumed), device API 36 (assumed); --target-sdk and --device-api say otherwise",
      "Phone switch (device-to-device): carried, 4 files, 33.5 MiB",
      "  rules: no <device-transfer> section (a target of 31 or later): everything; Android measures 33.5 MiB",
      "Google cloud backup: NOT CARRIED, Android measures 33.5 MiB, 8.5 MiB over the 25 MiB quota; Android skips the whole app",
      "  rules: no rules: everything; Android measures 33.5 MiB of 25 MiB allowed",
    ], "\(result.output)")
    // The categories: no temporary or system row; critical is what the cloud backup's walk
    // sends, not carried here.
    #expect(lines.contains("critical      4  33.5 MiB   33.5 MiB  no: NOT CARRIED"), "\(result.output)")
    #expect(!lines.contains { $0.hasPrefix("temporary") || $0.hasPrefix("system") }, "\(result.output)")
    // The GitHub job summary and the HTML report leave them out too.
    let summary = tree.scratch + "/summary.md"
    _ = try AppData.run(["audit", "--no-config", "--format", "github", tree.root], environment: ["GITHUB_STEP_SUMMARY": summary])
    let markdown = try String(contentsOfFile: summary, encoding: .utf8)
    #expect(markdown.contains("| critical | 4 | 35127403 (33.5 MiB) | 35127403 | no |") && !markdown.contains("| temporary |") && !markdown.contains("| system |"), "\(markdown)")
    _ = try AppData.run(["audit", "--no-config", "--format", "html", "-o", tree.scratch + "/r.html", tree.root])
    let page = try String(contentsOfFile: tree.scratch + "/r.html", encoding: .utf8)
    #expect(page.contains("critical</td><td>4</td><td>33.5 MiB</td><td>no</td>") && !page.contains("c-temporary\"></span>temporary</td>"))
    let given = try AppData.run(["audit", "--no-config", "--target-sdk", "34", tree.root])
    #expect(given.output.contains("\nTarget SDK 34, device API 36 (assumed); --device-api says otherwise\n"), "\(given.output)")
  }

  @Test func theJSONSaysWhichVersionsWereAssumed() throws {
    let tree = try AndroidAuditTests.dataFolder("android-assumed")
    let assumed = try AppData.auditJSON(tree.root, ["--no-config"])
    #expect(value(assumed, "android", "targetSdk", "value") as? Int == 36 && value(assumed, "android", "targetSdk", "assumed") as? Bool == true)
    #expect(value(assumed, "android", "deviceApi", "value") as? Int == 36 && value(assumed, "android", "deviceApi", "assumed") as? Bool == true)
    #expect(value(assumed, "android", "package") as? String == "app")
    // Read from the manifest's <uses-sdk>, and given on the command line.
    let project = try AndroidCurrentAOSPTests.project(tree, attributes: "", rules: nil, targetSdk: 30)
    let read = try AppData.run(["audit", "--no-config", "--json", "--android-project", project, "--device-api", "31", tree.root])
    let json = try read.json()
    #expect(value(json, "android", "targetSdk", "value") as? Int == 30 && value(json, "android", "targetSdk", "assumed") as? Bool == false)
    #expect(value(json, "android", "deviceApi", "value") as? Int == 31 && value(json, "android", "deviceApi", "assumed") as? Bool == false)
    #expect(value(json, "android", "package") as? String == "com.example.app")
    let file = tree.scratch + "/report.json"
    try Data(read.output.utf8).write(to: URL(fileURLWithPath: file))
    #expect(try AppData.validateAgainstAuditSchema(file) == "valid")
  }

  /// `--list` in the table names where each file goes, not an iOS category that says
  /// otherwise (critical for a file no destination carries, cached for one a transfer took).
  @Test func theListNamesEachFilesDestinations() throws {
    let tree = try AndroidCurrentAOSPTests.largeData("android-list")
    let result = try AppData.run(["audit", "--no-config", "--list", "all", tree.root])
    let files = result.output.components(separatedBy: "\nFiles (6):\n").last?.components(separatedBy: "\n\n").first ?? ""
    #expect(files == """
        neither       10 B  cache/c
        transfer   3.5 MiB  databases/app.db
        transfer     100 B  files/a.txt
        transfer  30.0 MiB  files/maps/tiles.db
        neither        3 B  no_backup/n
        transfer       7 B  shared_prefs/s.xml
      """, "\(result.output)")
    let small = try AndroidAuditTests.dataFolder("android-list-small")
    let both = try AppData.run(["audit", "--no-config", "--list", "critical", small.root])
    #expect(both.output.contains("\n  cloud+transfer  8.0 KiB  databases/app.db\n"), "\(both.output)")
  }

  /// `--android-project app/` and `app` name the same module: no `app//` in what is printed.
  @Test func aTrailingSlashOnTheProjectGivesNoDoubleSlash() throws {
    let tree = try AndroidAuditTests.dataFolder("android-project-slash")
    let project = try AndroidCurrentAOSPTests.project(tree, attributes: #"android:dataExtractionRules="@xml/backup_rules""#,
                                                      rules: #"<data-extraction-rules><cloud-backup><exclude domain="file" path="a.txt"/></cloud-backup></data-extraction-rules>"#)
    let json = try AppData.auditJSON(tree.root, ["--no-config", "--android-project", project + "/"])
    #expect(value(json, "destinations", "cloud", "rules") as? String == project + "/src/main/res/xml/backup_rules.xml <cloud-backup>")
    let missing = try AppData.run(["audit", "--no-config", "--android-project", tree.scratch + "/none/", tree.root])
    #expect(missing.status == 2)
    #expect(missing.error == "appdata: error: \(tree.scratch)/none: no src/main/AndroidManifest.xml or AndroidManifest.xml in it\n", "\(missing.error)")
  }
}
