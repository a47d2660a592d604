// Android's rules applied: for each destination, which rules apply, what its walk sends, its
// measure and its quota (AndroidBackupModel); what the rules files say is AndroidRulesFile.swift.

/// What the manifest and the device say about an app's backup.
package struct AndroidApp: Sendable {
  package enum LegacyRules: Sendable, Equatable {
    /// No `android:fullBackupContent`.
    case unset
    /// `android:fullBackupContent="false"`.
    case disabled
    case rules(AndroidRulesFile)
  }
  /// The package name, which the tar stream's names (and so Android's measure) carry.
  package var package: String
  package var allowBackup = true
  package var fullBackupContent: LegacyRules = .unset
  package var dataExtractionRules: AndroidRulesFile?
  package var backupAgent: String?
  package var fullBackupOnly = false
  package var targetSdk = AndroidFacts.newestAPI
  package var deviceAPI = AndroidFacts.newestAPI
  /// Whether the cloud backup is end-to-end encrypted (the device has a screen lock).
  package var isEncrypted = true
  /// A manifest attribute that names a file of the other kind (android:dataExtractionRules
  /// naming a `<full-backup-content>`, or the reverse): BackupScheme's verifyTopLevelTag throws
  /// when it reads it, isFullBackupEnabled returns false, and nothing is backed up.
  package var misnamed: [(attribute: AndroidRulesFile.Kind, file: AndroidRulesFile)] = []

  package init(package: String) { self.package = package }
}

package enum AndroidDestination: String, Sendable, CaseIterable {
  case cloud, deviceTransfer
  /// In words for messages.
  package var words: String { self == .cloud ? "the cloud backup" : "device-to-device transfer" }
}

/// One entry a destination's walk sends: its node in the tree, its domain, and Android's
/// measure of it.
package struct AndroidSentEntry: Equatable, Sendable {
  package var node: AndroidTree.Node
  package var domain: AndroidDomain
  package var isDirectory: Bool
  package var size: UInt64
  /// What it adds to the tar stream: 512 per header, a pax header and its blocks where one is
  /// needed, the data in 512-byte blocks (BackupHelpers.cpp, write_tarfile).
  package var measured: UInt64
}

/// What one destination would carry, and whether it runs at all.
package struct AndroidOutcome: Sendable {
  package var destination: AndroidDestination
  /// Whether the destination carries the app: eligible, rules that parse, not over its quota,
  /// not empty.
  package var carried: Bool
  /// Why not, when not.
  package var reason: String?
  /// Which rules decided, in words ("<data-extraction-rules> <cloud-backup>", "none: everything").
  package var rules: String
  /// The scheme that decided (nil: no rules, everything but the default exclusions).
  package var scheme: AndroidScheme?
  /// What the walk sends, rules applied, in walk order (whether or not the destination runs).
  package var entries: [AndroidSentEntry]
  package var files: Int { entries.reduce(0) { $0 + ($1.isDirectory ? 0 : 1) } }
  package var bytes: UInt64 { entries.reduce(0) { $0 + $1.size } }
  package var measured: UInt64 { entries.reduce(0) { $0 + $1.measured } }
  package var quota: UInt64?
  /// Whether the quota alone stops it: eligible, and Android's measure is over.
  package var overQuota = false
}

/// Android's decision, for each destination, as the reference makes it: which rules apply
/// (FullBackup.BackupScheme.parseSchemeForOperationType), the walk (BackupAgent.onFullBackup
/// and fullBackupFileTree, their system excludes included), the size measure
/// (BackupHelpers.cpp write_tarfile) and the quota (LocalTransport). Docs/android.md cites each.
package enum AndroidBackupModel {
  package static func outcome(_ app: AndroidApp, tree: AndroidTree, destination: AndroidDestination, quota: UInt64?) -> AndroidOutcome {
    let (scheme, rules, source) = self.source(app, destination: destination)
    var outcome = AndroidOutcome(destination: destination, carried: true, reason: nil, rules: rules, scheme: scheme, entries: [], quota: quota)
    if scheme?.abort == nil {
      outcome.entries = walk(app, tree: tree, scheme: scheme, destination: destination)
    }
    (outcome.reason, outcome.overQuota) = whyNot(app, destination: destination, scheme: scheme, source: source, outcome: outcome)
    outcome.carried = outcome.reason == nil
    return outcome
  }

  /// Where a destination's rules came from (FullBackup.BackupScheme's
  /// parseSchemeForBackupDestination).
  package enum RulesSource: Sendable, Equatable {
    /// No rules at all: everything.
    case none
    /// The `<data-extraction-rules>` section for the destination.
    case section
    /// Device-to-device transfer of a target of 31 or later with no section:
    /// IGNORE_FULL_BACKUP_CONTENT_IN_D2D, everything.
    case ignoresLegacy
    /// `<full-backup-content>`.
    case legacy
    /// A file the manifest names under the other attribute: BackupScheme throws.
    case misnamed
  }

  /// The scheme for `destination` and where it came from. On Android 12 and later, the
  /// `<data-extraction-rules>` section for the destination when it is present, even empty (a
  /// release whose `AndroidFacts.DeviceFacts.emptySectionFallsBack` is true needs a rule in
  /// it; none read does); for device-to-device transfer of a target-31 app, none
  /// (everything); else the legacy `<full-backup-content>`; else none.
  static func scheme(_ app: AndroidApp, destination: AndroidDestination) -> (AndroidScheme?, String) {
    let (scheme, rules, _) = source(app, destination: destination)
    return (scheme, rules)
  }

  static func source(_ app: AndroidApp, destination: AndroidDestination) -> (AndroidScheme?, String, RulesSource) {
    let section = destination == .cloud ? "<cloud-backup>" : "<device-transfer>"
    let facts = AndroidFacts.device(app.deviceAPI)
    let readsNewRules = app.deviceAPI >= AndroidFacts.dataExtractionRulesAPI
    func misnamed(_ attribute: AndroidRulesFile.Kind) -> (AndroidScheme?, String, RulesSource)? {
      guard let entry = app.misnamed.first(where: { $0.attribute == attribute }) else { return nil }
      var scheme = AndroidScheme()
      let other = entry.file.kind.rawValue
      scheme.abort = ("android:\(attribute == .dataExtractionRules ? "dataExtractionRules" : "fullBackupContent") names \(entry.file.name), whose root is <\(other)>, not <\(attribute.rawValue)>", 0)
      return (scheme, entry.file.name, .misnamed)
    }
    if readsNewRules {
      if let failed = misnamed(.dataExtractionRules) { return failed }
      if let rules = app.dataExtractionRules, let scheme = destination == .cloud ? rules.cloud : rules.deviceTransfer {
        if !scheme.isEmpty || scheme.abort != nil || !facts.emptySectionFallsBack {
          return (scheme, "\(rules.name) \(section)", .section)
        }
      }
    }
    if destination == .deviceTransfer && readsNewRules && app.targetSdk >= AndroidFacts.dataExtractionRulesAPI {
      return (nil, "no \(section) section (a target of \(AndroidFacts.dataExtractionRulesAPI) or later): everything", .ignoresLegacy)
    }
    if let failed = misnamed(.fullBackupContent) { return failed }
    if case .rules(let file) = app.fullBackupContent, let legacy = file.legacy {
      return (legacy, file.name, .legacy)
    }
    return (nil, "no rules: everything", .none)
  }

  /// Why `destination` carries nothing, or nil. `overQuota` is set when the only reason is the
  /// quota (the app is eligible, and its measure is over).
  static func whyNot(_ app: AndroidApp, destination: AndroidDestination, scheme: AndroidScheme?, source: RulesSource,
                     outcome: AndroidOutcome) -> (reason: String?, overQuota: Bool) {
    if app.deviceAPI < AndroidFacts.autoBackupAPI { return ("Auto Backup needs Android 6.0 (API \(AndroidFacts.autoBackupAPI))", false) }
    if app.backupAgent != nil && !app.fullBackupOnly {
      return ("the app has its own backup agent without android:fullBackupOnly, so it gets key/value backup, not Auto Backup", false)
    }
    switch destination {
    case .cloud:
      if !app.allowBackup { return ("android:allowBackup is false", false) }
      if app.deviceAPI >= AndroidFacts.dataExtractionRulesAPI, source == .section, app.dataExtractionRules?.cloudNeedsEncryption == true, !app.isEncrypted {
        return ("<cloud-backup disableIfNoEncryptionCapabilities=\"true\"> and the backup is not end-to-end encrypted (no screen lock)", false)
      }
    case .deviceTransfer:
      let ignoresAllowBackup = app.deviceAPI >= AndroidFacts.dataExtractionRulesAPI && app.targetSdk >= AndroidFacts.dataExtractionRulesAPI
      if !app.allowBackup && !ignoresAllowBackup { return ("android:allowBackup is false", false) }
    }
    // isFullBackupEnabled: the new scheme (a section, or the transfer's compat change) decides;
    // else isFullBackupContentEnabled, false for android:fullBackupContent="false".
    if app.fullBackupContent == .disabled && source != .section && source != .ignoresLegacy {
      return ("android:fullBackupContent is false", false)
    }
    if let abort = scheme?.abort {
      if source == .misnamed { return ("\(abort.reason): Android's BackupScheme refuses it (verifyTopLevelTag), so nothing is carried", false) }
      return ("its rules make the backup fail (line \(abort.line): \(abort.reason)), so nothing is carried", false)
    }
    if outcome.measured == 0 { return ("there is nothing to send (an empty backup is refused)", false) }
    if let quota = outcome.quota, outcome.measured > quota {
      return ("Android measures \(ByteSize.human(outcome.measured)), \(ByteSize.human(outcome.measured - quota)) over the \(quotaText(quota)) quota; Android skips the whole app", true)
    }
    return (nil, false)
  }

  /// A quota in words: `25 MiB` for a whole number of MiB.
  package static func quotaText(_ quota: UInt64) -> String {
    quota % (1 << 20) == 0 ? "\(quota >> 20) MiB" : ByteSize.human(quota)
  }

  /// The rules' places as BackupScheme keeps them: `canonicalFile.getCanonicalPath()`, which
  /// follows symlinks (`<include domain="file" path="link"/>` with `files/link -> a.txt`
  /// includes `files/a.txt`).
  static func canonicalized(_ rules: [AndroidRule], tree: AndroidTree) -> [AndroidRule] {
    rules.map { rule in
      var copy = rule
      if let place = tree.canonical(rule.target) { copy.target = place }
      return copy
    }
  }

  /// The rules with BackupScheme's expansions: a `database` rule on a path that is not a
  /// folder also names `-journal` and `-wal` (not `-shm`); a `sharedpref` rule on one that
  /// does not end in `.xml` also names `.xml`; the `device_*` domains get neither.
  static func expanded(_ rules: [AndroidRule], tree: AndroidTree) -> [AndroidRule] {
    var result: [AndroidRule] = []
    for rule in rules {
      result.append(rule)
      let isFolder = tree.isDirectory(rule.target)
      func with(_ suffix: String) -> AndroidRule {
        var copy = rule
        copy.target.path += Array(suffix.utf8)
        return copy
      }
      if rule.domain == .database && !isFolder {
        result.append(with("-journal"))
        result.append(with("-wal"))
      }
      if rule.domain == .sharedpref && !isFolder && !rule.target.path.ends(with: Array(".xml".utf8)) {
        result.append(with(".xml"))
      }
    }
    return result
  }

  /// BackupAgent.onFullBackup: each domain in turn, its includes (or all of it when no rule
  /// includes anything), pruning excludes and the folders the system never sends. Places are
  /// the tree's nodes: a place not in the data is never walked, and prunes nothing.
  static func walk(_ app: AndroidApp, tree: AndroidTree, scheme: AndroidScheme?, destination: AndroidDestination) -> [AndroidSentEntry] {
    let includes = expanded(canonicalized(scheme?.includes ?? [], tree: tree), tree: tree)
    let excludes = Set(expanded(canonicalized(scheme?.excludes ?? [], tree: tree), tree: tree).compactMap { tree.node($0.target) })
    let flags: Set<AndroidTransportFlag> = destination == .deviceTransfer ? [.deviceToDeviceTransfer]
      : app.isEncrypted ? [.clientSideEncryption] : []
    func node(_ storage: AndroidStorage, _ folder: String) -> AndroidTree.Node? { tree.node(AndroidPath(storage, Array(folder.utf8))) }
    // The system's own excludes: the other domains' folders while the root is walked, and
    // cache/, code_cache/ and no_backup/ (for device-to-device transfer too, unless the
    // device's row says otherwise; no release read does).
    var traversal: Set<AndroidTree.Node> = []
    for storage in [AndroidStorage.credential, .device] {
      for folder in ["files", "databases", "shared_prefs"] { if let found = node(storage, folder) { traversal.insert(found) } }
    }
    let carriesCacheFolders = destination == .deviceTransfer && AndroidFacts.device(app.deviceAPI).deviceTransferCarriesCacheFolders
    func extra(_ storage: AndroidStorage) -> [AndroidTree.Node] {
      carriesCacheFolders ? [] : ["cache", "code_cache", "no_backup"].compactMap { node(storage, $0) }
    }
    traversal.formUnion(extra(.credential))
    traversal.formUnion(extra(.device))
    let packageBytes = Array(app.package.utf8)

    var sent: [AndroidSentEntry] = []
    func walkDomain(_ domain: AndroidDomain) {
      guard let domainFolder = tree.node(AndroidPath(domain.storage, domain.folder)) else { return }
      if includes.isEmpty {
        fileTree(domain: domain, domainFolder: domainFolder, start: domainFolder)
      } else {
        for rule in includes where rule.domain == domain && rule.requiredFlags.isSubset(of: flags) {
          if let start = tree.node(rule.target) { fileTree(domain: domain, domainFolder: domainFolder, start: start) }
        }
      }
    }
    // fullBackupFileTree: depth first from `start`; an excluded place prunes its subtree.
    func fileTree(domain: AndroidDomain, domainFolder: AndroidTree.Node, start: AndroidTree.Node) {
      let folderLength = tree.pathLength(of: domainFolder)
      var stack = [start]
      while let node = stack.popLast() {
        let kind = tree.kind(at: node)
        if kind == .other || excludes.contains(node) || traversal.contains(node) { continue }
        if kind == .directory { stack.append(contentsOf: tree.children(of: node).reversed()) }
        // write_tarfile: a domain's own folder is not an entry.
        guard node != domainFolder else { continue }
        let relativeLength = tree.pathLength(of: node) - (folderLength == 0 ? 0 : folderLength + 1)
        let size = tree.size(of: node)
        let isDirectory = kind == .directory
        sent.append(AndroidSentEntry(node: node, domain: domain, isDirectory: isDirectory, size: size,
                                     measured: measure(packageBytes: packageBytes, token: domain.token, relativeLength: relativeLength,
                                                       highByte: tree.hasHighByte(node), size: size, isDirectory: isDirectory)))
      }
    }
    func exclude(_ storage: AndroidStorage, _ folder: String) { if let found = node(storage, folder) { traversal.insert(found) } }
    walkDomain(.root)
    exclude(.credential, "")
    traversal.formUnion(extra(.credential))
    walkDomain(.deviceRoot)
    exclude(.device, "")
    traversal.formUnion(extra(.device))
    for (domain, folder) in [(AndroidDomain.file, "files"), (.deviceFile, "files"), (.database, "databases"), (.deviceDatabase, "databases"),
                             (.sharedpref, "shared_prefs"), (.deviceSharedpref, "shared_prefs")] {
      let domainFolder = node(domain.storage, folder)
      if let domainFolder { traversal.remove(domainFolder) }
      walkDomain(domain)
      if let domainFolder { traversal.insert(domainFolder) }
    }
    if tree.has(.external) { walkDomain(.external) }
    return sent
  }

  /// write_tarfile's size for one entry, as it reports it to the measure the quota is checked
  /// against (`*outSize = 512 + (needExtended ? 1024 : 0) + 512 * ((size + 511) / 512)`): a
  /// 512-byte header; a flat 1024 for a pax header where one is needed (the part before the
  /// relative path is 155 bytes or more, the relative path 100 or more, a byte of the path
  /// above 127, or a size over 8 GiB - 1), however long its records; a file's data in 512-byte
  /// blocks. (The stream itself writes the pax records' real blocks; the quota sees this.)
  package static func measure(package: String, domain: AndroidDomain, relativePath: [UInt8], size: UInt64, isDirectory: Bool) -> UInt64 {
    measure(packageBytes: Array(package.utf8), token: domain.token, relativeLength: relativePath.count,
            highByte: relativePath.contains { $0 & 0x80 != 0 }, size: size, isDirectory: isDirectory)
  }

  /// `measure` from what it depends on: the relative path's length and whether a byte of it
  /// (or of the package) is above 127.
  static func measure(packageBytes: [UInt8], token: String, relativeLength: Int, highByte: Bool, size: UInt64, isDirectory: Bool) -> UInt64 {
    var needsPax = 5 + packageBytes.count + 1 + token.utf8.count >= 155 || relativeLength >= 100
    if !needsPax { needsPax = highByte || packageBytes.contains { $0 & 0x80 != 0 } }
    let dataSize = isDirectory ? 0 : size
    if dataSize > 0o77777777777 { needsPax = true }
    return 512 + (needsPax ? AndroidFacts.paxHeaderMeasure : 0) + (dataSize + 511) / 512 * 512
  }
}

extension Array where Element == UInt8 {
  func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix) }
}
