import AppDataSystem

/// An app's data, its rules and the settings, analysed: each file's category
/// (`AndroidPlatform.category`), the destinations, the findings.
package struct AndroidAnalysis {
  /// The app, and its destinations: the cloud backup, then device-to-device transfer.
  package var platform: AndroidPlatform
  package var findings: [Finding]
  /// Files and bytes per category.
  package var categories: [Category: CategoryTotals] = [:]
  /// The largest critical files, largest first, at most `top`.
  package var largest: [LargeFile] = []
  /// The files of the `listed` categories, by path.
  package var listed: [ListedEntry] = []
  /// The policy's budgets with the most bytes a destination carries under each.
  package var budgets: [(budget: AuditPolicy.Budget, bytes: UInt64)] = []

  /// A path as the report names it: the credential-encrypted folder's paths as they are, the
  /// others under a prefix naming their storage.
  package static func reportPath(_ place: AndroidPath) -> [UInt8] {
    switch place.storage {
    case .credential: place.path
    case .device: Array("user_de".utf8) + (place.path.isEmpty ? [] : [0x2F] + place.path)
    case .external: Array("external".utf8) + (place.path.isEmpty ? [] : [0x2F] + place.path)
    }
  }

  package init(app: AndroidApp, tree: AndroidTree, rulesFiles: [AndroidRulesFile], cloudQuota: UInt64?, transferQuota: UInt64?,
               warnAt: Double?, limits: AuditOptions? = nil, listed listedCategories: Set<Category> = [], top: Int = 10,
               backup: (name: String, entries: [(token: String, path: [UInt8], size: UInt64, isDirectory: Bool)])? = nil) {
    let cloud = AndroidBackupModel.outcome(app, tree: tree, destination: .cloud, quota: cloudQuota)
    let transfer = AndroidBackupModel.outcome(app, tree: tree, destination: .deviceTransfer, quota: transferQuota)
    // What each destination's walk sends, by node (whether or not the destination runs).
    var sentByCloud = [Bool](repeating: false, count: tree.count)
    for entry in cloud.entries { sentByCloud[Int(entry.node)] = true }
    var sentByTransfer = [Bool](repeating: false, count: tree.count)
    for entry in transfer.entries { sentByTransfer[Int(entry.node)] = true }

    var carriedBy: [[UInt8]: [String]] = [:]
    // The largest critical files, as LargeFile.isLarger orders them (bytes, then path): a
    // list of `top` kept sorted, a path built only to break a tie with its last.
    var best: [LargeFile] = []
    for node in tree.nodes {
      guard let category = AndroidPlatform.category(of: node, in: tree, sentByCloud: sentByCloud[Int(node)]) else { continue }
      let bytes = tree.size(of: node)
      categories[category, default: CategoryTotals()].add(CategoryTotals(files: 1, bytes: bytes, allocatedBytes: bytes))
      if category == .critical && top > 0 {
        if best.count < top || bytes >= best[best.count - 1].bytes {
          let file = LargeFile(path: Self.reportPath(tree.place(node)), bytes: bytes, category: .critical)
          if best.count < top || LargeFile.isLarger(file, best[best.count - 1]) {
            best.insert(file, at: best.firstIndex { LargeFile.isLarger(file, $0) } ?? best.count)
            if best.count > top { best.removeLast() }
          }
        }
      }
      if listedCategories.contains(category) {
        let path = Self.reportPath(tree.place(node))
        listed.append(ListedEntry(path: path, category: category, bytes: bytes, allocatedBytes: bytes, marker: []))
        var destinations: [String] = []
        if cloud.carried && sentByCloud[Int(node)] { destinations.append("cloud") }
        if transfer.carried && sentByTransfer[Int(node)] { destinations.append("deviceTransfer") }
        carriedBy[path] = destinations
      }
    }
    largest = best
    listed.sort { $0.path.lexicographicallyPrecedes($1.path) }
    platform = AndroidPlatform(package: app.package, carriedBy: carriedBy, targetSdk: app.targetSdk, deviceAPI: app.deviceAPI)
    platform.destinations = [AndroidPlatform.destination(cloud), AndroidPlatform.destination(transfer)]
    findings = AndroidFindings.all(app: app, tree: tree, rulesFiles: rulesFiles, cloud: cloud, transfer: transfer, warnAt: warnAt)
    if let backup { findings += AndroidFindings.comparison(cloud: cloud, tree: tree, backup: backup.entries, name: backup.name) }
    if let limits { applyOwnLimits(limits, tree: tree, outcomes: [cloud, transfer]) }
  }

  /// `maxBackupSize`, `maxFileSize` and `budgets` are the app's own limits, never Android's
  /// quota: each applies to what each destination carries (a destination that carries nothing,
  /// such as a cloud backup over its quota, is left out). A file is named once, with the
  /// destinations that carry it.
  mutating func applyOwnLimits(_ options: AuditOptions, tree: AndroidTree, outcomes: [AndroidOutcome]) {
    let root: [UInt8] = [0x2E]
    func percent(_ bytes: UInt64, _ limit: UInt64) -> String { "\(Int((Double(bytes) * 100 / Double(max(limit, 1))).rounded(.down)))%" }
    let carrying = outcomes.filter(\.carried)
    for outcome in carrying {
      let bytes = outcome.bytes
      if let limit = options.maxBackupSize {
        if bytes > limit {
          findings.append(Finding(rule: .backupTooLarge, path: root,
                                  message: "\(outcome.destination.words) carries \(ByteSize.human(bytes)) (\(bytes) bytes), over the app's own limit of \(ByteSize.human(limit)) (maxBackupSize, not Android's quota). Move re-creatable data to cache/ or exclude it in the backup rules, or raise the limit",
                                  bytes: bytes))
        } else if let warnAt = options.warnAt, Double(bytes) > warnAt * Double(limit) {
          findings.append(Finding(rule: .backupNearLimit, path: root,
                                  message: "\(outcome.destination.words) carries \(ByteSize.human(bytes)) (\(bytes) bytes), \(percent(bytes, limit)) of the app's own limit of \(ByteSize.human(limit)) (maxBackupSize). Act before it crosses",
                                  bytes: bytes))
        }
      }
    }
    if let limit = options.maxFileSize {
      var carriedBy: [AndroidTree.Node: [String]] = [:]
      var order: [AndroidTree.Node] = []
      for outcome in carrying {
        let near = options.warnAt.map { UInt64($0 * Double(limit)) } ?? limit
        for entry in outcome.entries where !entry.isDirectory && (entry.size > limit || entry.size > near) {
          if carriedBy[entry.node] == nil { order.append(entry.node) }
          carriedBy[entry.node, default: []].append(outcome.destination.words)
        }
      }
      for node in order {
        let bytes = tree.size(of: node)
        let path = Self.reportPath(tree.place(node))
        let by = carriedBy[node, default: []]
        let who = by.joined(separator: " and ") + (by.count > 1 ? " carry" : " carries")
        if bytes > limit {
          findings.append(Finding(rule: .backupFileTooLarge, path: path,
                                  message: "\(who) this file of \(ByteSize.human(bytes)) (\(bytes) bytes), over the app's own limit of \(ByteSize.human(limit)) (maxFileSize). Move it to cache/ if it can be re-created, or exclude it in the backup rules",
                                  bytes: bytes))
        } else {
          findings.append(Finding(rule: .backupFileNearLimit, path: path,
                                  message: "\(who) this file of \(ByteSize.human(bytes)) (\(bytes) bytes), \(percent(bytes, limit)) of the app's own limit of \(ByteSize.human(limit)) (maxFileSize)",
                                  bytes: bytes))
        }
      }
    }
    for budget in options.budgets {
      var most: UInt64 = 0
      for outcome in outcomes {
        var bytes: UInt64 = 0
        for entry in outcome.entries where !entry.isDirectory && budget.path.matchesPathOrAncestor(Self.reportPath(tree.place(entry.node))) {
          bytes += entry.size
        }
        guard outcome.carried else { continue }
        most = max(most, bytes)
        let path = Array(budget.path.pattern.utf8)
        if bytes > budget.maxBytes {
          findings.append(Finding(rule: .budgetExceeded, path: path,
                                  message: "\(outcome.destination.words) carries \(ByteSize.human(bytes)) (\(bytes) bytes) under \(budget.path.pattern), over its budget of \(ByteSize.human(budget.maxBytes)). Move re-creatable data there to cache/ or exclude it in the backup rules",
                                  bytes: bytes))
        } else if let warnAt = options.warnAt, Double(bytes) > warnAt * Double(budget.maxBytes) {
          findings.append(Finding(rule: .budgetNearLimit, path: path,
                                  message: "\(outcome.destination.words) carries \(ByteSize.human(bytes)) (\(bytes) bytes) under \(budget.path.pattern), \(percent(bytes, budget.maxBytes)) of its budget of \(ByteSize.human(budget.maxBytes))",
                                  bytes: bytes))
        }
      }
      budgets.append((budget, most))
    }
  }
}
