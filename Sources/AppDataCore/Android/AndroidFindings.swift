import AppDataSystem

extension AuditRule {
  public static let androidOverQuota = AuditRule(
    id: "android-over-quota", severity: .error,
    rationale: "Android's measure of what the cloud backup would send (a tar stream: 512 per header, data in 512-byte blocks) is over the quota, 26,214,400 bytes on AOSP's transport: Android then skips the whole app, and tells the user nothing.",
    remedy: "Keep re-creatable data in cache/ (getCacheDir), or exclude it with an <exclude> in the backup rules; the finding names the largest contributors.")
  public static let androidNearQuota = AuditRule(
    id: "android-near-quota", severity: .warning,
    rationale: "Android's measure of the cloud backup is above warnAt (a fraction of the quota) but not yet over it.",
    remedy: "Act before it crosses the quota: move re-creatable data to cache/ or exclude it.")
  public static let androidRulesAbort = AuditRule(
    id: "android-rules-abort", severity: .error,
    rationale: "The backup rules hold an element other than <include> and <exclude>, or one with too many attributes: Android's BackupScheme throws, and the app backs up nothing.",
    remedy: "Fix the element the finding names; Android lint's FullBackupContent check reports the same.")
  public static let androidRuleDropped = AuditRule(
    id: "android-rule-dropped", severity: .warning,
    rationale: "A rule Android drops without a word: a path with '..' or '//', no domain, or a domain that is not one of root, file, database, sharedpref, external and the device_ ones.",
    remedy: "Write the path relative to the domain's folder, without '..' or '//', and name a domain Android knows.")
  public static let androidRuleUnmatched = AuditRule(
    id: "android-rule-unmatched", severity: .info,
    rationale: "A rule names a path that is not in the app's data: it changes nothing (a misspelled preference file, a database renamed since).",
    remedy: "Check the path against the data; remove the rule if the file is gone for good.")
  public static let androidShmCarried = AuditRule(
    id: "android-shm-carried", severity: .warning,
    rationale: "A database is excluded but its -shm file is carried: Android expands a database rule to -journal and -wal, not to -shm.",
    remedy: "Add an <exclude domain=\"database\" path=\"NAME-shm\"/> beside the database's exclude.")
  public static let androidIncludeDropsDomains = AuditRule(
    id: "android-include-drops-domains", severity: .warning,
    rationale: "Once the rules have one <include>, every domain without an include (external files too) carries nothing: the finding names the data that no longer goes.",
    remedy: "Add includes for what must still be backed up, or use excludes only.")
  public static let androidExcludeAboveInclude = AuditRule(
    id: "android-exclude-above-include", severity: .warning,
    rationale: "An include lies inside an excluded folder: the backup carries it, but at restore Android rejects everything below an excluded folder, so it is never restored (unconfirmed on a device).",
    remedy: "Exclude the folder's other contents one by one instead of the folder.")
  public static let androidTransferCarriesExcluded = AuditRule(
    id: "android-transfer-carries-excluded", severity: .warning,
    rationale: "On Android 12 and later, an app targeting 31 or later with no <device-transfer> section is transferred whole: device-to-device transfer carries what the cloud backup's rules exclude.",
    remedy: "Add a <device-transfer> section to the data extraction rules with the excludes that should hold there too.")
  public static let androidAllowBackupIgnored = AuditRule(
    id: "android-allowbackup-ignored", severity: .warning,
    rationale: "android:allowBackup is false, but an app targeting 31 or later is still moved by device-to-device transfer on Android 12 and later.",
    remedy: "Exclude what must not move in a <device-transfer> section of android:dataExtractionRules.")
  public static let androidCacheInBackup = AuditRule(
    id: "android-cache-in-backup", severity: .warning,
    rationale: "A carried folder is named like a cache (cache, caches, tiles, tmp, ...), outside cache/ where Android keeps caches out of the backup.",
    remedy: "Keep it under getCacheDir(), or exclude it in the backup rules.")

  public static let androidBackupMissing = AuditRule(
    id: "android-backup-missing", severity: .warning,
    rationale: "With --backup: the rules and the data say the cloud backup carries this file, but the backup Android made (an adb backup file, or LocalTransport's stream) does not hold it: the file came after the backup, or appdata's model differs from the device's.",
    remedy: "Make the backup again with the data in the state to check; if the file is still missing, report the rules file and the path.")
  public static let androidBackupUnexpected = AuditRule(
    id: "android-backup-unexpected", severity: .warning,
    rationale: "With --backup: the backup Android made holds a file the rules and the data say it does not carry: the rules given are not the app's, or appdata's model differs from the device's.",
    remedy: "Check that --android-rules (or the manifest) is the build that made the backup; if it is, report the rules file and the path.")

  /// The Android rules, in the order Docs/rules.md lists them.
  public static let android: [AuditRule] = [
    .androidOverQuota, .androidNearQuota, .androidRulesAbort, .androidRuleDropped, .androidRuleUnmatched, .androidShmCarried,
    .androidIncludeDropsDomains, .androidExcludeAboveInclude, .androidTransferCarriesExcluded, .androidAllowBackupIgnored,
    .androidCacheInBackup, .androidBackupMissing, .androidBackupUnexpected,
  ]
}

/// The Android findings of an analysis (`AndroidAnalysis`).
package enum AndroidFindings {
  /// Names of folders that hold caches, in a carried place (compared ignoring case).
  static let cacheLikeNames: Set<String> = ["cache", "caches", ".cache", "tmp", "temp", "tiles", "thumbnails", "thumbs", "http-cache", "image_cache", "imagecache"]

  static func display(_ path: [UInt8]) -> String { TerminalText.escaped(path) }

  package static func all(app: AndroidApp, tree: AndroidTree, rulesFiles: [AndroidRulesFile], cloud: AndroidOutcome,
                          transfer: AndroidOutcome, warnAt: Double?) -> [Finding] {
    var findings = quota(cloud: cloud, tree: tree, warnAt: warnAt)
    findings += misnamedRulesFiles(app: app, cloud: cloud, transfer: transfer)
    findings += ruleProblems(in: rulesFiles, tree: tree)
    findings += carried(cloud: cloud, transfer: transfer, tree: tree)
    let transferIsWhole = transfer.scheme == nil && transfer.rules.contains("everything")
    if transferIsWhole, let cloudScheme = cloud.scheme, !cloudScheme.excludes.isEmpty || !cloudScheme.includes.isEmpty {
      let cloudSent = Set(cloud.entries.filter { !$0.isDirectory }.map(\.node))
      let extra = transfer.entries.filter { !$0.isDirectory && !cloudSent.contains($0.node) }
      if !extra.isEmpty, app.deviceAPI >= AndroidFacts.dataExtractionRulesAPI, app.targetSdk >= AndroidFacts.dataExtractionRulesAPI {
        findings.append(Finding(rule: .androidTransferCarriesExcluded, path: root,
                                message: "with no <device-transfer> section, device-to-device transfer carries \(Plural.counted(extra.count, "file")) (\(ByteSize.human(extra.reduce(0) { $0 + $1.size }))) that the cloud backup's rules leave out. Add a <device-transfer> section to android:dataExtractionRules with the excludes that should hold there too",
                                bytes: extra.reduce(0) { $0 + $1.size }))
      }
    }
    if !app.allowBackup, transfer.carried, app.targetSdk >= AndroidFacts.dataExtractionRulesAPI, app.deviceAPI >= AndroidFacts.dataExtractionRulesAPI {
      findings.append(Finding(rule: .androidAllowBackupIgnored, path: root,
                              message: "android:allowBackup is false, yet device-to-device transfer carries \(Plural.counted(transfer.files, "file")) (\(ByteSize.human(transfer.bytes))). Exclude what must not move in a <device-transfer> section of android:dataExtractionRules",
                              bytes: transfer.bytes))
    }
    // Cache-like folders the cloud backup carries.
    if cloud.reason == nil || cloud.overQuota {
      var reported: [AndroidPath] = []
      for entry in cloud.entries where entry.isDirectory {
        let name = String(decoding: tree.name(of: entry.node), as: UTF8.self).lowercased()
        guard cacheLikeNames.contains(name) else { continue }
        let place = tree.place(entry.node)
        guard !reported.contains(where: { place.isWithin($0) }) else { continue }
        reported.append(place)
        let files = filesUnder(place, in: tree, skippingDomainFolders: false)
        findings.append(Finding(rule: .androidCacheInBackup, path: AndroidAnalysis.reportPath(place),
                                message: "named like a cache, and the cloud backup carries it: \(Plural.counted(files.count, "file")), \(ByteSize.human(files.bytes)). Keep it under getCacheDir(), or exclude it in the backup rules",
                                bytes: files.bytes))
      }
    }
    return findings
  }

  /// The report's path for the app as a whole.
  private static let root: [UInt8] = [0x2E]

  /// The quota: only for an app the cloud backup would take but for its size (on a device
  /// without Auto Backup, or an app it is not eligible for, the quota never comes into it).
  private static func quota(cloud: AndroidOutcome, tree: AndroidTree, warnAt: Double?) -> [Finding] {
    var findings: [Finding] = []
    if let quota = cloud.quota, cloud.reason == nil || cloud.overQuota {
      let largest = cloud.entries.filter { !$0.isDirectory }.sorted { $0.measured > $1.measured }.prefix(3)
        .map { "\(display(AndroidAnalysis.reportPath(tree.place($0.node)))) (\(ByteSize.human($0.measured)))" }.joined(separator: ", ")
      if cloud.overQuota {
        findings.append(Finding(rule: .androidOverQuota, path: root,
                                message: "Android measures the cloud backup at \(ByteSize.human(cloud.measured)) (\(cloud.measured) bytes), \(ByteSize.human(cloud.measured - quota)) over its \(AndroidBackupModel.quotaText(quota)) quota: Android skips the whole app. Move re-creatable data to cache/ or exclude it in the backup rules; largest: \(largest)",
                                bytes: cloud.measured))
      } else if Double(cloud.measured) >= Double(quota) * (warnAt ?? AndroidFacts.nearQuotaFraction) {
        findings.append(Finding(rule: .androidNearQuota, path: root,
                                message: "Android measures the cloud backup at \(ByteSize.human(cloud.measured)) (\(cloud.measured) bytes), \(Int(Double(cloud.measured) * 100 / Double(quota)))% of its \(AndroidBackupModel.quotaText(quota)) quota. Move re-creatable data to cache/ or exclude it before it crosses; largest: \(largest)",
                                bytes: cloud.measured))
      }
    }
    return findings
  }

  /// A manifest attribute naming a file of the other kind: Android refuses it, where it reads
  /// it (dataExtractionRules from Android 12; fullBackupContent where no section decides).
  private static func misnamedRulesFiles(app: AndroidApp, cloud: AndroidOutcome, transfer: AndroidOutcome) -> [Finding] {
    var findings: [Finding] = []
    for entry in app.misnamed {
      let refusing = [cloud, transfer].filter { $0.rules == entry.file.name && $0.scheme?.abort != nil }
      guard !refusing.isEmpty else { continue }
      let attribute = entry.attribute == .dataExtractionRules ? "dataExtractionRules" : "fullBackupContent"
      let who = refusing.map(\.destination.words).joined(separator: " and ") + (refusing.count > 1 ? " carry" : " carries")
      findings.append(Finding(rule: .androidRulesAbort, path: root,
                              message: "android:\(attribute) names \(entry.file.name), whose root is <\(entry.file.kind.rawValue)>: Android's BackupScheme refuses it (verifyTopLevelTag), so \(who) nothing. Point android:\(attribute) at a <\(entry.attribute.rawValue)> file\(entry.file.kind == .fullBackupContent ? ", and this file at android:fullBackupContent" : ", and this file at android:dataExtractionRules")",
                              bytes: nil))
    }
    return findings
  }

  /// The rules themselves, each file's each section: what makes Android back up nothing, what it
  /// drops without a word, what matches nothing, and an include an exclude above it cancels.
  private static func ruleProblems(in rulesFiles: [AndroidRulesFile], tree: AndroidTree) -> [Finding] {
    var findings: [Finding] = []
    var schemes: [(AndroidScheme, String)] = []
    for file in rulesFiles {
      if let legacy = file.legacy { schemes.append((legacy, file.name)) }
      if let cloud = file.cloud { schemes.append((cloud, "\(file.name) <cloud-backup>")) }
      if let section = file.deviceTransfer { schemes.append((section, "\(file.name) <device-transfer>")) }
    }
    for (scheme, name) in schemes {
      if let abort = scheme.abort {
        findings.append(Finding(rule: .androidRulesAbort, path: root, message: "\(name) line \(abort.line): \(abort.reason): Android backs up nothing with these rules. Keep only <include> and <exclude> elements, with domain and path (and requireFlags on a legacy include)", bytes: nil))
      }
      for dropped in scheme.dropped {
        let what = "<\(dropped.element)\(dropped.domain.map { " domain=\"\($0)\"" } ?? "")\(dropped.path.map { " path=\"\($0)\"" } ?? "")>"
        findings.append(Finding(rule: .androidRuleDropped, path: root, message: "\(name) line \(dropped.line): \(TerminalText.escaped(what)) is dropped without a word: \(dropped.reason). Write the path relative to the domain's folder, without '..' or '//', in a domain Android knows", bytes: nil))
      }
      for rule in AndroidBackupModel.canonicalized(scheme.includes + scheme.excludes, tree: tree) where tree.kind(rule.target) == nil {
        let expansions = AndroidBackupModel.expanded([rule], tree: tree).dropFirst()
        if expansions.contains(where: { tree.kind($0.target) != nil }) { continue }
        findings.append(Finding(rule: .androidRuleUnmatched, path: AndroidAnalysis.reportPath(rule.target),
                                message: "\(name) line \(rule.line): <\(rule.isInclude ? "include" : "exclude") domain=\"\(rule.domain.rawValue)\" path=\"\(TerminalText.escaped(rule.writtenPath))\"> matches nothing in the data. Correct the path, or remove the rule if the file is gone for good",
                                bytes: nil))
      }
      // An include inside an excluded folder.
      for include in scheme.includes {
        if let exclude = scheme.excludes.first(where: { include.target.isWithin($0.target) && include.target != $0.target }) {
          findings.append(Finding(rule: .androidExcludeAboveInclude, path: AndroidAnalysis.reportPath(include.target),
                                  message: "\(name) line \(include.line): included inside \(display(AndroidAnalysis.reportPath(exclude.target))), which line \(exclude.line) excludes: backed up, never restored (unconfirmed). Exclude that folder's other contents one by one instead of the folder",
                                  bytes: nil))
        }
      }
    }
    return findings
  }

  /// What each destination carries that its rules meant to leave out: a database's -shm beside
  /// the excluded database, and the domains an include-only scheme drops.
  private static func carried(cloud: AndroidOutcome, transfer: AndroidOutcome, tree: AndroidTree) -> [Finding] {
    var findings: [Finding] = []
    for outcome in [cloud, transfer] {
      guard let scheme = outcome.scheme else { continue }
      let sent = Set(outcome.entries.map(\.node))
      for exclude in scheme.excludes where exclude.domain == .database && !tree.isDirectory(exclude.target) {
        var shm = exclude.target
        shm.path += Array("-shm".utf8)
        if let shmNode = tree.node(shm), sent.contains(shmNode), tree.kind(exclude.target) != nil {
          findings.append(Finding(rule: .androidShmCarried, path: AndroidAnalysis.reportPath(shm),
                                  message: "\(outcome.destination.words) excludes the database \(display(AndroidAnalysis.reportPath(exclude.target))) but carries its -shm. Add <exclude domain=\"database\" path=\"\(TerminalText.escaped(Array(shm.path.split(separator: 0x2F).last ?? [])))\"/>",
                                  bytes: nil))
        }
      }
      if !scheme.includes.isEmpty {
        let included = Set(scheme.includes.map(\.domain))
        var dropped: [String] = []
        for domain in AndroidDomain.walkOrder where !included.contains(domain) {
          let folder = AndroidPath(domain.storage, domain.folder)
          let files = filesUnder(folder, in: tree, skippingDomainFolders: domain == .root || domain == .deviceRoot)
          if files.count > 0 { dropped.append("\(domain.rawValue) (\(Plural.counted(files.count, "file")), \(ByteSize.human(files.bytes)))") }
        }
        if !dropped.isEmpty {
          findings.append(Finding(rule: .androidIncludeDropsDomains, path: root,
                                  message: "\(outcome.destination.words)'s rules include only \(included.map(\.rawValue).sorted().joined(separator: ", ")), so these carry nothing: \(dropped.joined(separator: ", ")). Add includes for what must still go, or use excludes only",
                                  bytes: nil))
        }
      }
    }
    return findings
  }

  /// The regular files under `folder` (the root domain's own subfolders left out when asked).
  static func filesUnder(_ folder: AndroidPath, in tree: AndroidTree, skippingDomainFolders: Bool) -> (count: Int, bytes: UInt64) {
    var count = 0
    var bytes: UInt64 = 0
    guard let start = tree.node(folder) else { return (0, 0) }
    let skipped = Set(["files", "databases", "shared_prefs", "cache", "code_cache", "no_backup"].compactMap {
      tree.node(AndroidPath(folder.storage, Array($0.utf8)))
    })
    var stack = [start]
    while let node = stack.popLast() {
      if skippingDomainFolders && skipped.contains(node) { continue }
      switch tree.kind(at: node) {
      case .directory: stack.append(contentsOf: tree.children(of: node))
      case .file(let size):
        count += 1
        bytes += size
      case .other: break
      }
    }
    return (count, bytes)
  }

  /// With `--backup`: the files the cloud backup's walk sends, against those the backup Android
  /// made holds (`backup`: token, path in the domain, size, folder or not).
  static func comparison(cloud: AndroidOutcome, tree: AndroidTree, backup: [(token: String, path: [UInt8], size: UInt64, isDirectory: Bool)],
                         name: String) -> [Finding] {
    func key(_ token: String, _ path: [UInt8]) -> [UInt8] { Array(token.utf8) + [0x2F] + path }
    var predicted: [[UInt8]: (AndroidPath, UInt64)] = [:]
    for entry in cloud.entries where !entry.isDirectory {
      let place = tree.place(entry.node)
      let folder = entry.domain.folder
      let relative = folder.isEmpty ? place.path : Array(place.path.dropFirst(folder.count + 1))
      predicted[key(entry.domain.token, relative)] = (place, entry.size)
    }
    var held: Set<[UInt8]> = []
    var findings: [Finding] = []
    for entry in backup where !entry.isDirectory {
      let entryKey = key(entry.token, entry.path)
      held.insert(entryKey)
      guard predicted[entryKey] == nil else { continue }
      let domain = AndroidDomain.allCases.first { $0.token == entry.token } ?? .root
      let folder = domain.folder
      let place = AndroidPath(domain.storage, folder.isEmpty ? entry.path : folder + [0x2F] + entry.path)
      findings.append(Finding(rule: .androidBackupUnexpected, path: AndroidAnalysis.reportPath(place),
                              message: "\(name) holds it (\(entry.size) bytes); the rules and the data say the cloud backup does not carry it. Check that the rules given are the build that made the backup", bytes: entry.size))
    }
    for (entryKey, value) in predicted where !held.contains(entryKey) {
      findings.append(Finding(rule: .androidBackupMissing, path: AndroidAnalysis.reportPath(value.0),
                              message: "the cloud backup would carry it (\(value.1) bytes), but \(name) does not hold it. Make the backup again with the data as it is now", bytes: value.1))
    }
    return findings
  }
}
