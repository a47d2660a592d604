import Foundation
import Testing
@testable import AppDataCore

/// Issue 43: one test per `android-*` finding, each with the data or the rules that raise it
/// and the same case without them (so each fails if its finding goes, or comes from nowhere).
/// The comparison with a backup Android made (`android-backup-missing`, `-unexpected`) is
/// AndroidAuditTests' `theBackupAndroidMadeIsComparedWithThePrediction`; `android-shm-carried`
/// and `android-exclude-above-include` are AndroidModelTests' and AndroidRealAppRulesTests'.
@Suite("android findings")
struct AndroidFindingsTests {
  /// The findings of `files` (path, size) under `rules` (a rules file's text, or none), on the
  /// newest Android unless told.
  static func findings(_ files: [(String, UInt64)], rules: String? = nil, allowBackup: Bool = true, deviceAPI: Int = AndroidFacts.newestAPI,
                       targetSdk: Int = AndroidFacts.newestAPI) throws -> [Finding] {
    var tree = AndroidTree()
    for (path, size) in files { tree.add(AndroidPath(.credential, Array(path.utf8)), .file(size: size)) }
    var app = AndroidApp(package: "com.example.app")
    app.allowBackup = allowBackup
    app.deviceAPI = deviceAPI
    app.targetSdk = targetSdk
    var rulesFiles: [AndroidRulesFile] = []
    if let rules {
      let file = try AndroidRulesFile.parse(Array(rules.utf8), name: "rules.xml")
      if file.kind == .fullBackupContent { app.fullBackupContent = .rules(file) } else { app.dataExtractionRules = file }
      rulesFiles.append(file)
    }
    return AndroidAnalysis(app: app, tree: tree, rulesFiles: rulesFiles, cloudQuota: AndroidFacts.cloudQuota, transferQuota: nil, warnAt: nil).findings
  }

  static func messages(_ findings: [Finding], _ rule: AuditRule) -> [String] {
    findings.filter { $0.rule == rule }.map(\.message)
  }

  static let data: [(String, UInt64)] = [("files/a.txt", 100), ("databases/app.db", 4096), ("shared_prefs/s.xml", 10)]

  @Test func overTheQuota() throws {
    // Per file 512 of header and the size rounded up to 512, domain roots 0: a.txt 1,024, app.db
    // 4,608, s.xml 1,024, big 512 + 30,000,128 = 30,000,640; 30,007,296 in all. The largest
    // three by Android's measure.
    let over = try Self.findings(Self.data + [("files/big", 30_000_000)])
    #expect(Self.messages(over, .androidOverQuota) == [
      "Android measures the cloud backup at 28.6 MiB (30007296 bytes), 3.6 MiB over its 25 MiB quota: Android skips the whole app. Move re-creatable data to cache/ or exclude it in the backup rules; largest: files/big (28.6 MiB), databases/app.db (4.5 KiB), files/a.txt (1.0 KiB)"])
    #expect(Self.messages(try Self.findings(Self.data + [("files/big", 20_000_000)]), .androidOverQuota).isEmpty)
  }

  @Test func nearTheQuota() throws {
    // 6,656 + 512 + 24,000,000: 91 % of the quota, past the 90 % where the warning starts.
    let near = try Self.findings(Self.data + [("files/big", 24_000_000)])
    #expect(Self.messages(near, .androidNearQuota) == [
      "Android measures the cloud backup at 22.9 MiB (24007168 bytes), 91% of its 25 MiB quota. Move re-creatable data to cache/ or exclude it before it crosses; largest: files/big (22.9 MiB), databases/app.db (4.5 KiB), files/a.txt (1.0 KiB)"])
    #expect(Self.messages(try Self.findings(Self.data + [("files/big", 20_000_000)]), .androidNearQuota).isEmpty)
  }

  @Test func rulesThatAbortTheBackup() throws {
    let unknown = try Self.findings(Self.data, rules: "<full-backup-content>\n<include domain=\"file\" path=\"a.txt\"/>\n<bogus/>\n</full-backup-content>")
    #expect(Self.messages(unknown, .androidRulesAbort).count == 1)
    #expect(Self.messages(unknown, .androidRulesAbort).first?.hasPrefix("rules.xml line 3: ") == true, "\(Self.messages(unknown, .androidRulesAbort))")
    #expect(Self.messages(unknown, .androidRulesAbort).first?.hasSuffix(": Android backs up nothing with these rules. Keep only <include> and <exclude> elements, with domain and path (and requireFlags on a legacy include)") == true)
    let fine = try Self.findings(Self.data, rules: "<full-backup-content>\n<include domain=\"file\" path=\"a.txt\"/>\n</full-backup-content>")
    #expect(Self.messages(fine, .androidRulesAbort).isEmpty)
  }

  @Test func aRuleDroppedWithoutAWord() throws {
    let climbing = try Self.findings(Self.data, rules: "<full-backup-content>\n<exclude domain=\"file\" path=\"../a.txt\"/>\n</full-backup-content>")
    let messages = Self.messages(climbing, .androidRuleDropped)
    #expect(messages.count == 1 && messages[0].hasPrefix("rules.xml line 2: <exclude domain=\"file\" path=\"../a.txt\"> is dropped without a word: "), "\(messages)")
    let fine = try Self.findings(Self.data, rules: "<full-backup-content>\n<exclude domain=\"file\" path=\"a.txt\"/>\n</full-backup-content>")
    #expect(Self.messages(fine, .androidRuleDropped).isEmpty)
  }

  @Test func aRuleThatMatchesNothing() throws {
    let missing = try Self.findings(Self.data, rules: "<full-backup-content>\n<exclude domain=\"file\" path=\"gone.txt\"/>\n</full-backup-content>")
    let found = missing.filter { $0.rule == .androidRuleUnmatched }
    #expect(found.map(\.message) == ["rules.xml line 2: <exclude domain=\"file\" path=\"gone.txt\"> matches nothing in the data. Correct the path, or remove the rule if the file is gone for good"])
    #expect(found.map(\.path) == [Array("files/gone.txt".utf8)])
    // A database rule matches through its expansions (-journal, -wal) too.
    let fine = try Self.findings(Self.data, rules: "<full-backup-content>\n<exclude domain=\"file\" path=\"a.txt\"/>\n<exclude domain=\"database\" path=\"app.db\"/>\n</full-backup-content>")
    #expect(Self.messages(fine, .androidRuleUnmatched).isEmpty)
  }

  @Test func anIncludeDropsTheDomainsItDoesNotName() throws {
    let narrow = try Self.findings(Self.data, rules: "<full-backup-content>\n<include domain=\"database\" path=\".\"/>\n</full-backup-content>",
                                   deviceAPI: 30, targetSdk: 30)
    #expect(Self.messages(narrow, .androidIncludeDropsDomains)
      == ["the cloud backup's rules include only database, so these carry nothing: file (1 file, 100 B), sharedpref (1 file, 10 B). Add includes for what must still go, or use excludes only",
          "device-to-device transfer's rules include only database, so these carry nothing: file (1 file, 100 B), sharedpref (1 file, 10 B). Add includes for what must still go, or use excludes only"],
            "\(Self.messages(narrow, .androidIncludeDropsDomains))")
    let every = try Self.findings(Self.data, rules: "<full-backup-content>\n<include domain=\"database\" path=\".\"/>\n<include domain=\"file\" path=\".\"/>\n<include domain=\"sharedpref\" path=\".\"/>\n</full-backup-content>",
                                  deviceAPI: 30, targetSdk: 30)
    #expect(Self.messages(every, .androidIncludeDropsDomains).isEmpty)
  }

  @Test func transferCarriesWhatTheCloudExcludes() throws {
    let rules = "<full-backup-content>\n<exclude domain=\"file\" path=\"a.txt\"/>\n</full-backup-content>"
    #expect(Self.messages(try Self.findings(Self.data, rules: rules), .androidTransferCarriesExcluded)
      == ["with no <device-transfer> section, device-to-device transfer carries 1 file (100 B) that the cloud backup's rules leave out. Add a <device-transfer> section to android:dataExtractionRules with the excludes that should hold there too"])
    // On Android 11 the legacy rules hold for both.
    #expect(Self.messages(try Self.findings(Self.data, rules: rules, deviceAPI: 30, targetSdk: 30), .androidTransferCarriesExcluded).isEmpty)
  }

  @Test func allowBackupFalseNoLongerStopsTheTransfer() throws {
    #expect(Self.messages(try Self.findings(Self.data, allowBackup: false), .androidAllowBackupIgnored)
      == ["android:allowBackup is false, yet device-to-device transfer carries 3 files (4.1 KiB). Exclude what must not move in a <device-transfer> section of android:dataExtractionRules"])
    #expect(Self.messages(try Self.findings(Self.data, allowBackup: false, targetSdk: 30), .androidAllowBackupIgnored).isEmpty)
    #expect(Self.messages(try Self.findings(Self.data), .androidAllowBackupIgnored).isEmpty)
  }

  @Test func cacheLikeFoldersTheCloudCarries() throws {
    let tiles = try Self.findings(Self.data + [("files/tiles/1.png", 4000), ("files/tiles/z/2.png", 96)])
    let found = tiles.filter { $0.rule == .androidCacheInBackup }
    #expect(found.map(\.message) == ["named like a cache, and the cloud backup carries it: 2 files, 4.0 KiB. Keep it under getCacheDir(), or exclude it in the backup rules"])
    #expect(found.map(\.path) == [Array("files/tiles".utf8)])
    #expect(Self.messages(try Self.findings(Self.data + [("files/maps/1.png", 4000)]), .androidCacheInBackup).isEmpty)
    // Excluded by the rules: not carried, so not a finding.
    let excluded = try Self.findings(Self.data + [("files/tiles/1.png", 4000)],
                                     rules: "<full-backup-content>\n<exclude domain=\"file\" path=\"tiles\"/>\n</full-backup-content>")
    #expect(Self.messages(excluded, .androidCacheInBackup).isEmpty)
  }
}
