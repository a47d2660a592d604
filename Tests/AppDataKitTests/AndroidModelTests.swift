import Foundation
import Testing
@testable import AppDataCore

/// Issue 43: Android's backup decision, as AOSP makes it. The expectations are AOSP's own, from
/// `FullBackupTest` (frameworks/base core/tests/coretests, android.app.backup), the walk in
/// `BackupAgent.onFullBackup`/`fullBackupFileTree` and `write_tarfile`'s arithmetic in
/// `BackupHelpers.cpp` (Apache-2.0 facts, written here as fixtures of our own).
@Suite("android model")
struct AndroidModelTests {
  static func rules(_ xml: String) throws -> AndroidRulesFile {
    try AndroidRulesFile.parse(Array(xml.utf8), name: "rules.xml")
  }

  static func places(_ rules: [AndroidRule]) -> [String] {
    rules.map { "\($0.target.storage.rawValue):\(String(decoding: $0.target.path, as: UTF8.self))" }.sorted()
  }

  // MARK: - Parsing (FullBackupTest)

  @Test func onlyAnIncludeIsOneFileDomainInclude() throws {
    let scheme = try #require(try Self.rules(#"<full-backup-content><include path="onlyInclude.txt" domain="file"/></full-backup-content>"#).legacy)
    #expect(scheme.excludes.isEmpty)
    #expect(scheme.includes.map(\.domain) == [.file])
    #expect(Self.places(scheme.includes) == ["credential:files/onlyInclude.txt"])
  }

  @Test func databaseAndSharedprefRulesAreExpandedAsBackupSchemeExpandsThem() throws {
    let scheme = try #require(try Self.rules("""
      <full-backup-content>
        <exclude path="exclude1.txt" domain="file"/><include path="include1.txt" domain="file"/>
        <exclude path="exclude2.txt" domain="database"/><include path="include2.txt" domain="database"/>
        <exclude path="exclude3" domain="sharedpref"/><include path="include3" domain="sharedpref"/>
        <exclude path="exclude4.xml" domain="sharedpref"/><include path="include4.xml" domain="sharedpref"/>
      </full-backup-content>
      """).legacy)
    let tree = AndroidTree()
    #expect(Self.places(AndroidBackupModel.expanded(scheme.includes, tree: tree)) == [
      "credential:databases/include2.txt", "credential:databases/include2.txt-journal", "credential:databases/include2.txt-wal",
      "credential:files/include1.txt",
      "credential:shared_prefs/include3", "credential:shared_prefs/include3.xml", "credential:shared_prefs/include4.xml",
    ])
    // Seven excludes, as FullBackupTest counts them; never a -shm.
    #expect(Self.places(AndroidBackupModel.expanded(scheme.excludes, tree: tree)) == [
      "credential:databases/exclude2.txt", "credential:databases/exclude2.txt-journal", "credential:databases/exclude2.txt-wal",
      "credential:files/exclude1.txt", "credential:shared_prefs/exclude3", "credential:shared_prefs/exclude3.xml",
      "credential:shared_prefs/exclude4.xml",
    ])
  }

  @Test func aDatabaseFolderGetsNoJournalAndDeviceDomainsNoExpansion() throws {
    var tree = AndroidTree()
    tree.add(AndroidPath(.credential, Array("databases/store".utf8)), .directory)
    let scheme = try #require(try Self.rules("""
      <full-backup-content><include domain="database" path="store"/><include domain="device_database" path="x.db"/>
      <include domain="device_sharedpref" path="prefs"/></full-backup-content>
      """).legacy)
    #expect(Self.places(AndroidBackupModel.expanded(scheme.includes, tree: tree)) == [
      "credential:databases/store", "device:databases/x.db", "device:shared_prefs/prefs",
    ])
  }

  @Test func anUnknownElementOrTooManyAttributesAbortsTheWholeScheme() throws {
    for (xml, reason) in [
      (#"<full-backup-content><excluded path="a" domain="file"/></full-backup-content>"#, "<excluded> is neither <include> nor <exclude>"),
      (#"<full-backup-content><include path="a" domain="file" requireFlags="clientSideEncryption" b="c"/></full-backup-content>"#,
       "<include> has 4 attributes; BackupScheme allows at most 3 (domain, path, requireFlags)"),
      (#"<full-backup-content><exclude path="a" domain="file" requireFlags="x"/></full-backup-content>"#,
       "<exclude> has 3 attributes; BackupScheme allows at most 2 (domain, path)"),
    ] {
      let scheme = try #require(try Self.rules(xml).legacy)
      #expect(scheme.abort?.reason == reason, "\(xml)")
    }
    // A root that is neither file kind is not a rules file at all.
    #expect(throws: AndroidRulesFile.Malformed.self) { try Self.rules(#"<full-weird-tag><exclude path="a" domain="file"/></full-weird-tag>"#) }
  }

  @Test func pathsWithDotDotOrDoubleSlashAndUnknownDomainsAreDroppedSilentlyAndNamedHere() throws {
    let scheme = try #require(try Self.rules("""
      <full-backup-content>
        <exclude path=".." domain="file"/><include path="a..b" domain="file"/><exclude path="//hello.txt" domain="file"/>
        <include path="x" domain="files"/><include path="y"/><include path="./kept/" domain="file"/>
      </full-backup-content>
      """).legacy)
    #expect(scheme.dropped.map(\.reason) == ["its path contains '..'", "its path contains '..'", "its path contains '//'",
                                             "'files' is not a domain", "it has no domain"])
    #expect(Self.places(scheme.includes) == ["credential:files/kept"])
    #expect(scheme.excludes.isEmpty)
  }

  @Test func aDataExtractionRulesFileHasItsTwoSections() throws {
    let file = try Self.rules("""
      <?xml version="1.0" encoding="utf-8"?>
      <data-extraction-rules xmlns:tools="http://schemas.android.com/tools">
        <cloud-backup disableIfNoEncryptionCapabilities="true">
          <exclude domain="file" path="tiles" tools:ignore="FullBackupContent"/>
        </cloud-backup>
        <device-transfer><include domain="database" path="app.db"/></device-transfer>
      </data-extraction-rules>
      """)
    #expect(file.kind == .dataExtractionRules && file.cloudNeedsEncryption)
    #expect(Self.places(file.cloud?.excludes ?? []) == ["credential:files/tiles"])
    #expect(Self.places(file.deviceTransfer?.includes ?? []) == ["credential:databases/app.db"])
  }

  @Test func documentTypeDefinitionsAndEntitiesAreRefused() {
    for xml in ["<!DOCTYPE x [<!ENTITY a \"b\">]><full-backup-content/>", "<full-backup-content>&a;</full-backup-content>",
                String(repeating: "<a>", count: 100) + String(repeating: "</a>", count: 100)] {
      #expect(throws: AndroidRulesFile.Malformed.self) { try Self.rules(xml) }
    }
  }

  // MARK: - The measure (write_tarfile)

  @Test func androidMeasuresEntriesAsItsTarStreamWritesThem() {
    func measure(_ path: String, _ size: UInt64, folder: Bool = false, package: String = "com.example.app") -> UInt64 {
      AndroidBackupModel.measure(package: package, domain: .file, relativePath: Array(path.utf8), size: size, isDirectory: folder)
    }
    #expect(measure("a", 0) == 512)
    #expect(measure("a", 1) == 1024)
    #expect(measure("a", 512) == 1024)
    #expect(measure("a", 513) == 1536)
    #expect(measure("maps", 0, folder: true) == 512)
    // A relative path of 99 bytes fits ustar; of 100 it needs a pax header: 512 + one block.
    #expect(measure(String(repeating: "x", count: 99), 10) == 1024)
    #expect(measure(String(repeating: "x", count: 100), 10) == 2048)
    // A byte above 127 in the path needs pax too.
    #expect(measure("café", 10) == 2048)
    // Past 8 GiB - 1 the size needs pax.
    #expect(measure("big", 0o77777777777) == 512 + 0o77777777777 / 512 * 512 + 512)
    #expect(measure("big", 0o100000000000) == 512 + 1024 + 0o100000000000)
    // A path long enough that its pax records pass 512 bytes: still a flat 1024 for the pax
    // header (write_tarfile's outSize, issue 50).
    #expect(measure(String(repeating: "y", count: 480), 1) == 512 + 1024 + 512)
  }

  // MARK: - The walk (BackupAgent.onFullBackup)

  /// A credential-encrypted folder as a typical app leaves it.
  static func typicalTree() -> AndroidTree {
    var tree = AndroidTree()
    func file(_ path: String, _ size: UInt64) { tree.add(AndroidPath(.credential, Array(path.utf8)), .file(size: size)) }
    file("files/notes.txt", 100)
    file("files/tiles/1.png", 4000)
    file("databases/app.db", 8192)
    file("databases/app.db-wal", 1000)
    file("databases/app.db-shm", 32768)
    file("shared_prefs/settings.xml", 300)
    file("cache/http/a", 5000)
    file("code_cache/x.dex", 600)
    file("no_backup/token", 40)
    file("app_webview/Default/Cookies", 2048)
    tree.add(AndroidPath(.credential, Array("lib".utf8)), .other)
    return tree
  }

  /// The files `outcome` sends, by path (its nodes are `typicalTree()`'s, made the same each time).
  static func sent(_ outcome: AndroidOutcome, _ tree: AndroidTree = typicalTree()) -> [String] {
    outcome.entries.filter { !$0.isDirectory }.map { String(decoding: tree.place($0.node).path, as: UTF8.self) }.sorted()
  }

  @Test func withoutRulesEverythingButTheSystemsFoldersIsCarried() {
    let app = AndroidApp(package: "com.example.app")
    let cloud = AndroidBackupModel.outcome(app, tree: Self.typicalTree(), destination: .cloud, quota: AndroidFacts.cloudQuota)
    #expect(cloud.carried && cloud.rules == "no rules: everything")
    #expect(Self.sent(cloud) == ["app_webview/Default/Cookies", "databases/app.db", "databases/app.db-shm", "databases/app.db-wal",
                                 "files/notes.txt", "files/tiles/1.png", "shared_prefs/settings.xml"])
    // Folders count 512 (app_webview, app_webview/Default, files/tiles); domain roots nothing.
    #expect(cloud.entries.filter(\.isDirectory).map { String(decoding: Self.typicalTree().place($0.node).path, as: UTF8.self) }.sorted()
            == ["app_webview", "app_webview/Default", "files/tiles"])
    #expect(cloud.files == 7 && cloud.bytes == 2048 + 8192 + 32768 + 1000 + 100 + 4000 + 300)
    #expect(cloud.measured == 3 * 512 + (512 + 2048) + (512 + 8192) + (512 + 32768) + (512 + 1024) + (512 + 512) + (512 + 4096) + (512 + 512))
    // Device-to-device transfer leaves cache/, code_cache/ and no_backup/ too
    // (getExtraExcludeDirsIfAny, Android 12 to 16), Android 12 (31) as the newest.
    for deviceAPI in [31, AndroidFacts.newestAPI] {
      var device = app
      device.deviceAPI = deviceAPI
      let transfer = AndroidBackupModel.outcome(device, tree: Self.typicalTree(), destination: .deviceTransfer, quota: nil)
      #expect(Self.sent(transfer) == Self.sent(cloud) && transfer.measured == cloud.measured, "API \(deviceAPI)")
    }
  }

  @Test func anIncludeDropsEveryDomainItDoesNotName() throws {
    var app = AndroidApp(package: "com.example.app")
    app.fullBackupContent = .rules(try Self.rules(#"<full-backup-content><include domain="sharedpref" path="."/></full-backup-content>"#))
    let cloud = AndroidBackupModel.outcome(app, tree: Self.typicalTree(), destination: .cloud, quota: AndroidFacts.cloudQuota)
    #expect(Self.sent(cloud) == ["shared_prefs/settings.xml"])
  }

  @Test func excludesPruneSubtreesAcrossDomainsAndAnExcludedDatabaseKeepsItsShm() throws {
    var app = AndroidApp(package: "com.example.app")
    app.fullBackupContent = .rules(try Self.rules("""
      <full-backup-content><exclude domain="root" path="files"/><exclude domain="database" path="app.db"/>
      <exclude domain="root" path="app_webview"/></full-backup-content>
      """))
    let cloud = AndroidBackupModel.outcome(app, tree: Self.typicalTree(), destination: .cloud, quota: AndroidFacts.cloudQuota)
    #expect(Self.sent(cloud) == ["databases/app.db-shm", "shared_prefs/settings.xml"])
  }

  @Test func legacyIncludesHonourTheirRequiredTransportFlags() throws {
    var app = AndroidApp(package: "com.example.app")
    app.targetSdk = 30
    app.fullBackupContent = .rules(try Self.rules("""
      <full-backup-content><include domain="file" path="notes.txt" requireFlags="clientSideEncryption"/>
      <include domain="sharedpref" path="settings.xml" requireFlags="deviceToDeviceTransfer"/></full-backup-content>
      """))
    #expect(Self.sent(AndroidBackupModel.outcome(app, tree: Self.typicalTree(), destination: .cloud, quota: nil)) == ["files/notes.txt"])
    app.isEncrypted = false
    #expect(AndroidBackupModel.outcome(app, tree: Self.typicalTree(), destination: .cloud, quota: nil).reason
            == "there is nothing to send (an empty backup is refused)")
    #expect(Self.sent(AndroidBackupModel.outcome(app, tree: Self.typicalTree(), destination: .deviceTransfer, quota: nil)) == ["shared_prefs/settings.xml"])
  }

  // MARK: - Which rules, and whether at all

  @Test func theRulesEachDestinationUsesFollowTheApiLevels() throws {
    var app = AndroidApp(package: "com.example.app")
    app.fullBackupContent = .rules(try Self.rules(#"<full-backup-content><exclude domain="file" path="tiles"/></full-backup-content>"#))
    app.dataExtractionRules = try Self.rules("""
      <data-extraction-rules><cloud-backup><exclude domain="database" path="app.db"/></cloud-backup><device-transfer/></data-extraction-rules>
      """)
    func rules(_ destination: AndroidDestination) -> String { AndroidBackupModel.scheme(app, destination: destination).1 }
    #expect(rules(.cloud) == "rules.xml <cloud-backup>")
    // An empty <device-transfer> is used, present (isSectionPresent), Android 12 (31) as the
    // newest, whatever the target.
    #expect(rules(.deviceTransfer) == "rules.xml <device-transfer>")
    app.deviceAPI = 31
    #expect(rules(.cloud) == "rules.xml <cloud-backup>" && rules(.deviceTransfer) == "rules.xml <device-transfer>")
    app.targetSdk = 30
    #expect(rules(.deviceTransfer) == "rules.xml <device-transfer>")
    // Android 11 reads fullBackupContent only.
    app.deviceAPI = 30
    #expect(rules(.cloud) == "rules.xml" && rules(.deviceTransfer) == "rules.xml")
  }

  @Test func allowBackupFalseStopsTheCloudButNotATarget31Transfer() {
    var app = AndroidApp(package: "com.example.app")
    app.allowBackup = false
    let tree = Self.typicalTree()
    #expect(AndroidBackupModel.outcome(app, tree: tree, destination: .cloud, quota: AndroidFacts.cloudQuota).reason == "android:allowBackup is false")
    #expect(AndroidBackupModel.outcome(app, tree: tree, destination: .deviceTransfer, quota: nil).carried)
    app.targetSdk = 30
    #expect(!AndroidBackupModel.outcome(app, tree: tree, destination: .deviceTransfer, quota: nil).carried)
  }

  @Test func theEncryptionGateTheQuotaAndAbortedRules() throws {
    var app = AndroidApp(package: "com.example.app")
    app.dataExtractionRules = try Self.rules(#"<data-extraction-rules><cloud-backup disableIfNoEncryptionCapabilities="true"><exclude domain="file" path="tiles"/></cloud-backup></data-extraction-rules>"#)
    app.isEncrypted = false
    let tree = Self.typicalTree()
    #expect(AndroidBackupModel.outcome(app, tree: tree, destination: .cloud, quota: AndroidFacts.cloudQuota).reason?.hasPrefix("<cloud-backup disableIfNoEncryptionCapabilities") == true)
    app.isEncrypted = true
    let measured = AndroidBackupModel.outcome(app, tree: tree, destination: .cloud, quota: nil).measured
    #expect(AndroidBackupModel.outcome(app, tree: tree, destination: .cloud, quota: measured).carried)
    #expect(AndroidBackupModel.outcome(app, tree: tree, destination: .cloud, quota: measured - 1).reason
            == "Android measures 48.0 KiB, 1 B over the 48.0 KiB quota; Android skips the whole app")
    #expect(measured == 49_152)
    app.dataExtractionRules = try Self.rules("<data-extraction-rules><cloud-backup><includes domain=\"file\"/></cloud-backup></data-extraction-rules>")
    #expect(AndroidBackupModel.outcome(app, tree: tree, destination: .cloud, quota: nil).reason
            == "its rules make the backup fail (line 1: <includes> is neither <include> nor <exclude>), so nothing is carried")
  }
}

/// Issue 43: rules files modelled on real apps (Tests/Fixtures/android, each naming its
/// source), on one generated data folder, on Android 11 and on Android 12+ with a target of 34.
/// The expected figures are worked out by hand from AOSP's rules (the comments say how), not
/// by running the model: each measured figure is 512 per entry plus the data in 512-byte blocks.
@Suite("android real-app rules")
struct AndroidRealAppRulesTests {
  /// Sizes are multiples of 512, so a file measures 512 + its size; a folder 512.
  static func tree() -> AndroidTree {
    var tree = AndroidTree()
    for (path, size) in [
      ("files/a.txt", 1024), ("files/tiles/1.png", 4096),
      ("databases/app.db", 8192), ("databases/app.db-journal", 512), ("databases/wikipedia.db", 16384),
      ("databases/wikipedia.db-wal", 1024), ("databases/wikipedia.db-shm", 32768), ("databases/evernote_jobs.db", 4096),
      ("shared_prefs/settings.xml", 512), ("shared_prefs/session_0.xml", 512), ("shared_prefs/evernote_jobs.xml", 512),
      ("app_webview/Default/Cookies", 2048), ("cache/x", 512), ("no_backup/t", 512),
    ] {
      tree.add(AndroidPath(.credential, Array(path.utf8)), .file(size: UInt64(size)))
    }
    return tree
  }

  // Per domain, measured (files): root 3,584 (1: app_webview 512, Default 512, Cookies 2,560);
  // file 6,656 (2: a.txt 1,536, tiles 512, 1.png 4,608); database 66,048 (6: 8,704 + 1,024 +
  // 16,896 + 1,536 + 33,280 + 4,608); sharedpref 3,072 (3). A transfer leaves cache/ and
  // no_backup/ as the cloud backup does, on Android 11 as on 12 and later (onFullBackup's
  // excludes in the Android 10 or 11 copies read, getExtraExcludeDirsIfAny from 12).
  static let everythingCloud: (Int, UInt64) = (12, 3_584 + 6_656 + 66_048 + 3_072)
  static let everythingTransfer: (Int, UInt64) = everythingCloud

  static func app(_ name: String, legacy: Bool, extraction: Bool, android12: Bool) throws -> AndroidApp {
    var app = AndroidApp(package: "com.example.\(name)")
    let folder = AppData.packageRoot + "/Tests/Fixtures/android/"
    func read(_ file: String) throws -> AndroidRulesFile {
      try AndroidRulesFile.parse(Array(try Data(contentsOf: URL(fileURLWithPath: folder + file))), name: file)
    }
    if legacy { app.fullBackupContent = .rules(try read("\(name)-full-backup-content.xml")) }
    if extraction { app.dataExtractionRules = try read("\(name)-data-extraction-rules.xml") }
    app.deviceAPI = android12 ? 36 : 30
    app.targetSdk = android12 ? 34 : 30
    return app
  }

  static func figures(_ app: AndroidApp, _ destination: AndroidDestination) -> (files: Int, measured: UInt64, carried: Bool) {
    let outcome = AndroidBackupModel.outcome(app, tree: tree(), destination: destination, quota: destination == .cloud ? AndroidFacts.cloudQuota : nil)
    return (outcome.files, outcome.measured, outcome.carried)
  }

  @Test(arguments: [false, true])
  func homeAssistant(android12: Bool) throws {
    let app = try Self.app("homeassistant", legacy: true, extraction: true, android12: android12)
    // Android 11: databases only (a folder, so no -journal expansion): 66,048 (6).
    // Android 12: databases, and preferences but session_0.xml: 66,048 + 2,048 (8), both ways.
    let expected: (Int, UInt64) = android12 ? (8, 68_096) : (6, 66_048)
    for destination in AndroidDestination.allCases {
      let got = Self.figures(app, destination)
      #expect(got.files == expected.0 && got.measured == expected.1 && got.carried, "\(destination) \(got)")
    }
  }

  @Test(arguments: [false, true])
  func ownTracks(android12: Bool) throws {
    let app = try Self.app("owntracks", legacy: true, extraction: true, android12: android12)
    // Preferences only: 3,072 (3). On Android 11 the include needs clientSideEncryption, which
    // device-to-device transfer lacks: it sends nothing, and an empty backup is refused.
    let cloud = Self.figures(app, .cloud)
    #expect(cloud.files == 3 && cloud.measured == 3_072 && cloud.carried)
    let transfer = Self.figures(app, .deviceTransfer)
    if android12 {
      #expect(transfer.files == 3 && transfer.measured == 3_072 && transfer.carried)
    } else {
      #expect(transfer.files == 0 && transfer.measured == 0 && !transfer.carried)
    }
    // The include lies below the excluded root: backed up, never restored (unconfirmed).
    let rules = android12 ? app.dataExtractionRules! : { if case .rules(let file) = app.fullBackupContent { return file }; fatalError() }()
    let findings = AndroidFindings.all(app: app, tree: Self.tree(), rulesFiles: [rules],
                                       cloud: AndroidBackupModel.outcome(app, tree: Self.tree(), destination: .cloud, quota: nil),
                                       transfer: AndroidBackupModel.outcome(app, tree: Self.tree(), destination: .deviceTransfer, quota: nil), warnAt: nil)
    #expect(findings.contains { $0.rule == .androidExcludeAboveInclude && $0.path == Array("shared_prefs".utf8) })
  }

  @Test(arguments: [false, true])
  func nextcloud(android12: Bool) throws {
    let app = try Self.app("nextcloud", legacy: true, extraction: true, android12: android12)
    // Everything but files/ (6,656, 2), evernote_jobs.db (4,608, 1) and evernote_jobs.xml (1,024, 1).
    let cloud = Self.figures(app, .cloud)
    #expect(cloud.files == 8 && cloud.measured == 3_584 + 61_440 + 2_048 && cloud.carried, "\(cloud)")
    let transfer = Self.figures(app, .deviceTransfer)
    if android12 {
      // No <device-transfer>, a target of 34: everything.
      #expect(transfer.files == Self.everythingTransfer.0 && transfer.measured == Self.everythingTransfer.1, "\(transfer)")
    } else {
      // The legacy rules, as the cloud backup: cache/ and no_backup/ are left on Android 11 too.
      #expect(transfer.files == 8 && transfer.measured == 3_584 + 61_440 + 2_048, "\(transfer)")
    }
  }

  @Test(arguments: [false, true])
  func wikipedia(android12: Bool) throws {
    let app = try Self.app("wikipedia", legacy: true, extraction: false, android12: android12)
    // wikipedia.db and its -wal (16,896 + 1,536), never its -shm.
    let cloud = Self.figures(app, .cloud)
    #expect(cloud.files == 2 && cloud.measured == 18_432)
    let transfer = Self.figures(app, .deviceTransfer)
    let expected: (Int, UInt64) = android12 ? Self.everythingTransfer : (2, 18_432)
    #expect(transfer.files == expected.0 && transfer.measured == expected.1, "\(transfer)")
  }

  @Test(arguments: [false, true])
  func element(android12: Bool) throws {
    let app = try Self.app("element", legacy: true, extraction: true, android12: android12)
    for destination in AndroidDestination.allCases {
      let got = Self.figures(app, destination)
      #expect(got.files == 0 && got.measured == 0 && !got.carried, "\(destination)")
    }
  }

  @Test func withoutRulesEverything() {
    let app = AndroidApp(package: "com.example.none")
    #expect(Self.figures(app, .cloud).files == Self.everythingCloud.0 && Self.figures(app, .cloud).measured == Self.everythingCloud.1)
    #expect(Self.figures(app, .deviceTransfer).files == Self.everythingTransfer.0
            && Self.figures(app, .deviceTransfer).measured == Self.everythingTransfer.1)
  }
}
