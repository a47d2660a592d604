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
}

/// Android's decision, for each destination, as the reference makes it: which rules apply
/// (FullBackup.BackupScheme.parseSchemeForOperationType), the walk (BackupAgent.onFullBackup
/// and fullBackupFileTree, their system excludes included), the size measure
/// (BackupHelpers.cpp write_tarfile) and the quota (LocalTransport). Docs/android.md cites each.
package enum AndroidBackupModel {
  package static func outcome(_ app: AndroidApp, tree: AndroidTree, destination: AndroidDestination, quota: UInt64?) -> AndroidOutcome {
    let (scheme, rules) = self.scheme(app, destination: destination)
    var outcome = AndroidOutcome(destination: destination, carried: true, reason: nil, rules: rules, scheme: scheme, entries: [], quota: quota)
    if scheme?.abort == nil {
      outcome.entries = walk(app, tree: tree, scheme: scheme, destination: destination)
    }
    outcome.reason = whyNot(app, destination: destination, scheme: scheme, outcome: outcome)
    outcome.carried = outcome.reason == nil
    return outcome
  }

  /// The scheme for `destination`: a `<data-extraction-rules>` section on Android 12 and later
  /// when it holds a rule (an empty or missing one falls back, as parseSchemeForOperationType
  /// does); for device-to-device transfer of a target-31 app, none (everything); else the
  /// legacy `<full-backup-content>`; else none.
  static func scheme(_ app: AndroidApp, destination: AndroidDestination) -> (AndroidScheme?, String) {
    let section = destination == .cloud ? "<cloud-backup>" : "<device-transfer>"
    if app.deviceAPI >= AndroidFacts.dataExtractionRulesAPI, let rules = app.dataExtractionRules {
      let scheme = destination == .cloud ? rules.cloud : rules.deviceTransfer
      if let scheme, !scheme.isEmpty || scheme.abort != nil || !AndroidFacts.emptySectionFallsBack {
        return (scheme, "\(rules.name) \(section)")
      }
    }
    if destination == .deviceTransfer && app.deviceAPI >= AndroidFacts.dataExtractionRulesAPI
      && app.targetSdk >= AndroidFacts.dataExtractionRulesAPI && AndroidFacts.deviceTransferIgnoresLegacyRules {
      return (nil, "no \(section) section (a target of \(AndroidFacts.dataExtractionRulesAPI) or later): everything")
    }
    if case .rules(let file) = app.fullBackupContent, let legacy = file.legacy {
      return (legacy, file.name)
    }
    return (nil, "no rules: everything")
  }

  static func whyNot(_ app: AndroidApp, destination: AndroidDestination, scheme: AndroidScheme?, outcome: AndroidOutcome) -> String? {
    if app.deviceAPI < 23 { return "Auto Backup needs Android 6.0 (API 23)" }
    if app.backupAgent != nil && !app.fullBackupOnly {
      return "the app has its own backup agent without android:fullBackupOnly, so it gets key/value backup, not Auto Backup"
    }
    switch destination {
    case .cloud:
      if !app.allowBackup { return "android:allowBackup is false" }
      if app.fullBackupContent == .disabled && !(outcome.rules.contains("<cloud-backup>")) { return "android:fullBackupContent is false" }
      if app.deviceAPI >= AndroidFacts.dataExtractionRulesAPI, app.dataExtractionRules?.cloudNeedsEncryption == true, !app.isEncrypted {
        return "<cloud-backup disableIfNoEncryptionCapabilities=\"true\"> and the backup is not end-to-end encrypted (no screen lock)"
      }
    case .deviceTransfer:
      let ignoresAllowBackup = app.deviceAPI >= AndroidFacts.dataExtractionRulesAPI && app.targetSdk >= AndroidFacts.dataExtractionRulesAPI
      if !app.allowBackup && !ignoresAllowBackup { return "android:allowBackup is false" }
    }
    if let abort = scheme?.abort { return "its rules make the backup fail (line \(abort.line): \(abort.reason)), so nothing is carried" }
    if outcome.measured == 0 { return "there is nothing to send (an empty backup is refused)" }
    if let quota = outcome.quota, outcome.measured > quota {
      return "Android's measure, \(outcome.measured) bytes, is over the quota of \(quota): the whole app is skipped"
    }
    return nil
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
    let includes = expanded(scheme?.includes ?? [], tree: tree)
    let excludes = Set(expanded(scheme?.excludes ?? [], tree: tree).compactMap { tree.node($0.target) })
    let flags: Set<AndroidTransportFlag> = destination == .deviceTransfer ? [.deviceToDeviceTransfer]
      : app.isEncrypted ? [.clientSideEncryption] : []
    func node(_ storage: AndroidStorage, _ folder: String) -> AndroidTree.Node? { tree.node(AndroidPath(storage, Array(folder.utf8))) }
    // The system's own excludes: the other domains' folders while the root is walked, and
    // (not for device-to-device transfer) cache/, code_cache/ and no_backup/.
    var traversal: Set<AndroidTree.Node> = []
    for storage in [AndroidStorage.credential, .device] {
      for folder in ["files", "databases", "shared_prefs"] { if let found = node(storage, folder) { traversal.insert(found) } }
    }
    let carriesCacheFolders = destination == .deviceTransfer && AndroidFacts.deviceTransferCarriesCacheFolders
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

  /// write_tarfile's size for one entry: a 512-byte ustar header; before it, where the name
  /// needs pax (the part before the relative path is 155 bytes or more, the relative path 100
  /// or more, a byte of the path above 127, or a size over 8 GiB - 1), a pax header and its
  /// "size" and "path" records in 512-byte blocks; after it, a file's data in 512-byte blocks.
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
    var total: UInt64 = 512
    if needsPax {
      let fullNameLength = 5 + packageBytes.count + 1 + token.utf8.count + 1 + relativeLength
      let paxLength = paxRecordLength(key: "size", valueCount: String(dataSize).utf8.count) + paxRecordLength(key: "path", valueCount: fullNameLength)
      total += 512 + UInt64((paxLength + 511) / 512) * 512
    }
    total += (dataSize + 511) / 512 * 512
    return total
  }

  /// write_pax_header_entry: "LEN key=value\n", LEN counting itself as that function counts it.
  static func paxRecordLength(key: String, valueCount: Int) -> Int {
    var length = key.utf8.count + valueCount + 4
    if length > 9 { length += 1 }
    if length > 99 { length += 1 }
    if length > 999 { length += 1 }
    return String(length).utf8.count + 1 + key.utf8.count + 1 + valueCount + 1
  }
}

extension Array where Element == UInt8 {
  func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix) }
}
