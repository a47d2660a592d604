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
    // A path long enough that its pax records pass 512 bytes takes two blocks.
    #expect(measure(String(repeating: "y", count: 480), 1) == 512 + 512 + 1024 + 512)
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

  static func sent(_ outcome: AndroidOutcome) -> [String] {
    outcome.entries.filter { !$0.isDirectory }.map { String(decoding: $0.place.path, as: UTF8.self) }.sorted()
  }

  @Test func withoutRulesEverythingButTheSystemsFoldersIsCarried() {
    let app = AndroidApp(package: "com.example.app")
    let cloud = AndroidBackupModel.outcome(app, tree: Self.typicalTree(), destination: .cloud, quota: AndroidFacts.cloudQuota)
    #expect(cloud.carried && cloud.rules == "no rules: everything")
    #expect(Self.sent(cloud) == ["app_webview/Default/Cookies", "databases/app.db", "databases/app.db-shm", "databases/app.db-wal",
                                 "files/notes.txt", "files/tiles/1.png", "shared_prefs/settings.xml"])
    // Folders count 512 (app_webview, app_webview/Default, files/tiles); domain roots nothing.
    #expect(cloud.entries.filter(\.isDirectory).map { String(decoding: $0.place.path, as: UTF8.self) }.sorted()
            == ["app_webview", "app_webview/Default", "files/tiles"])
    #expect(cloud.files == 7 && cloud.bytes == 2048 + 8192 + 32768 + 1000 + 100 + 4000 + 300)
    #expect(cloud.measured == 3 * 512 + (512 + 2048) + (512 + 8192) + (512 + 32768) + (512 + 1024) + (512 + 512) + (512 + 4096) + (512 + 512))
    // Device-to-device transfer walks cache/, code_cache/ and no_backup/ as well (AOSP).
    let transfer = AndroidBackupModel.outcome(app, tree: Self.typicalTree(), destination: .deviceTransfer, quota: nil)
    #expect(Set(Self.sent(transfer)).subtracting(Self.sent(cloud)) == ["cache/http/a", "code_cache/x.dex", "no_backup/token"])
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
    // An empty <device-transfer> falls back; a target-31 app's transfer then carries everything.
    #expect(rules(.deviceTransfer) == "no <device-transfer> section (a target of 31 or later): everything")
    app.targetSdk = 30
    #expect(rules(.deviceTransfer) == "rules.xml")
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
            == "Android's measure, \(measured) bytes, is over the quota of \(measured - 1): the whole app is skipped")
    app.dataExtractionRules = try Self.rules("<data-extraction-rules><cloud-backup><includes domain=\"file\"/></cloud-backup></data-extraction-rules>")
    #expect(AndroidBackupModel.outcome(app, tree: tree, destination: .cloud, quota: nil).reason
            == "its rules make the backup fail (line 1: <includes> is neither <include> nor <exclude>), so nothing is carried")
  }
}
