import AppDataSystem
import AppDataCore
/// Turns what an audit counted into its report: merges the per-worker accumulators of a walk
/// (`Walker.walk(roots:)`, through `FolderSource`), an archive read or a backup read, settles hard
/// links, and applies the whole-container rules, the policy and the baseline.
package enum Auditor {
  /// Merges the accumulators of a walk (or an archive read) and applies the whole-container
  /// rules, the policy and the baseline.
  /// The accumulators are consumed: their listings move into the report rather than being
  /// copied (a million listed files are held once, not twice, while they merge).
  static func report(from visitors: consuming [AuditAccumulator], options: AuditOptions, layout: ContainerLayout, container: String,
                     entrySink: (@Sendable ([UInt8]) -> Void)?, tag: NDJSONTag?) -> AuditReport {
    var merged = AuditAccumulator(options: options, layout: layout, sink: entrySink, tag: tag)
    var visitors = visitors
    for index in visitors.indices { merged.absorb(&visitors[index]) }
    merged.everyFileIsBackedUp = visitors.first?.everyFileIsBackedUp ?? false
    merged.settleHardLinks()
    merged.flushStream()
    merged.flushFolder()
    let folders = merged.folderSummary()

    var held = CategoryTotals()
    for totals in merged.totals { held.add(totals) }
    let backupBytes = merged.everyFileIsBackedUp ? held.bytes : merged.totals[Category.critical.index].bytes
    merged.findings += limitFindings(backupBytes: backupBytes, options: options)
    let budgets = budgetFigures(merged.budgetBytes, options: options)
    merged.findings += budgets.findings

    var categories: [Category: CategoryTotals] = [:]
    for category in Category.allCases { categories[category] = merged.totals[category.index] }
    let entries = options.listedCategories.isEmpty || entrySink != nil
      ? nil : merged.entries.sortedByPath()

    var comparison: BaselineComparison?
    if let baseline = options.baseline {
      let result = BaselineComparison(baseline: baseline, categories: categories, files: merged.largest, listed: entries, folders: folders,
                                      top: options.top)
      comparison = result
      if let finding = growthFinding(result, baseline: baseline, options: options) { merged.findings.append(finding) }
    }

    var report = AuditReport(
      container: container,
      categories: categories,
      directories: merged.directories,
      maxFileSize: options.maxFileSize,
      maxBackupSize: options.maxBackupSize,
      findings: Finding.sortedForReport(applyPolicy(to: merged.findings, options: options)),
      largest: merged.largest,
      entries: entries)
    report.budgets = budgets.figures
    report.comparison = comparison
    report.folders = folders
    if merged.everyFileIsBackedUp { report.heldByBackup = held }
    return report
  }

  /// `backup-too-large` or `backup-near-limit`, against `--max-backup-size`.
  private static func limitFindings(backupBytes: UInt64, options: AuditOptions) -> [Finding] {
    guard let limit = options.maxBackupSize else { return [] }
    if backupBytes > limit {
      return [Finding(
        rule: .backupTooLarge, path: Array(".".utf8),
        message: "the backup would carry \(ByteSize.described(backupBytes)), over the \(ByteSize.human(limit)) limit",
        bytes: backupBytes, limit: limit)]
    } else if let warnAt = options.warnAt, Double(backupBytes) > warnAt * Double(limit) {
      return [Finding(
        rule: .backupNearLimit, path: Array(".".utf8),
        message: "the backup would carry \(ByteSize.described(backupBytes)), \(percentText(backupBytes, of: limit)) of the \(ByteSize.human(limit)) limit",
        bytes: backupBytes, limit: limit)]
    }
    return []
  }

  /// Each budget's bytes, and its `budget-exceeded` or `budget-near-limit` finding.
  private static func budgetFigures(_ budgetBytes: [UInt64], options: AuditOptions)
    -> (figures: [(budget: AuditPolicy.Budget, bytes: UInt64)], findings: [Finding]) {
    var figures: [(budget: AuditPolicy.Budget, bytes: UInt64)] = []
    var findings: [Finding] = []
    for (index, budget) in options.budgets.enumerated() {
      let bytes = budgetBytes[index]
      figures.append((budget, bytes))
      let path = Array(budget.path.pattern.utf8)
      if bytes > budget.maxBytes {
        findings.append(Finding(
          rule: .budgetExceeded, path: path,
          message: "\(ByteSize.described(bytes)) backed up under \(budget.path.pattern), over its \(ByteSize.human(budget.maxBytes)) budget",
          bytes: bytes, limit: budget.maxBytes))
      } else if let warnAt = options.warnAt, Double(bytes) > warnAt * Double(budget.maxBytes) {
        findings.append(Finding(
          rule: .budgetNearLimit, path: path,
          message: "\(ByteSize.described(bytes)) backed up under \(budget.path.pattern), \(percentText(bytes, of: budget.maxBytes)) of its \(ByteSize.human(budget.maxBytes)) budget",
          bytes: bytes, limit: budget.maxBytes))
      }
    }
    return (figures, findings)
  }

  /// One `backup-grew` finding for one growth, naming each limit it is over; nil when none is.
  private static func growthFinding(_ result: BaselineComparison, baseline: Baseline, options: AuditOptions) -> Finding? {
    let growth = result.delta
    var over: [String] = []
    var limit: UInt64?
    if let maxGrowth = options.maxGrowth, growth > 0, UInt64(growth) > maxGrowth {
      over.append("--max-growth \(ByteSize.described(maxGrowth))")
      limit = maxGrowth
    }
    if let maxPercent = options.maxGrowthPercent, let percent = result.percent, percent > maxPercent {
      over.append("--max-growth-percent \(JSONValue.format(maxPercent))%")
    }
    guard !over.isEmpty else { return nil }
    let percent = result.percent.map { ", or " + Plural.percent($0).dropFirst() + "%" } ?? ""
    return Finding(
      rule: .backupGrew, path: Array(".".utf8),
      message: "the backup grew by \(ByteSize.described(UInt64(max(growth, 0))))\(percent), from \(ByteSize.human(result.backupBefore)) to \(ByteSize.human(result.backupAfter)), since \(baseline.file); more than \(over.joined(separator: " and "))",
      bytes: UInt64(max(growth, 0)), limit: limit)
  }

  /// The policy file's rule severities (`off` drops a rule) and `ignore` globs. Findings about
  /// the whole container (path `.`) and budgets are never ignored by path.
  package static func applyPolicy(to findings: [Finding], options: AuditOptions) -> [Finding] {
    if options.severities.isEmpty && options.ignore.isEmpty { return findings }
    let containerPath = Array(".".utf8)
    return findings.compactMap { finding in
      var finding = finding
      if let override = options.severities[finding.rule.id] {
        guard let severity = override else { return nil }
        finding.severity = severity
      }
      let isPathFinding = finding.path != containerPath
        && finding.rule != .budgetExceeded && finding.rule != .budgetNearLimit
      if isPathFinding && options.ignore.contains(where: { $0.matchesPathOrAncestor(finding.path) }) { return nil }
      return finding
    }
  }
}


// MARK: - The per-worker visitor

/// Accumulates one worker's share of the audit: O(top N + findings + hard-linked files)
/// memory, plus the listed entries only when `--list` asks for them without streaming.
struct AuditAccumulator: EntryVisitor {
  let options: AuditOptions
  let layout: ContainerLayout
  let sink: (@Sendable ([UInt8]) -> Void)?
  let tag: NDJSONTag?
  /// NDJSON lines not yet handed to `sink`.
  var streamBuffer: [UInt8] = []
  var totals = [CategoryTotals](repeating: CategoryTotals(), count: Category.allCases.count)
  var directories: UInt64 = 0
  var findings: [Finding] = []
  var largest: [LargeFile] = []
  var entries = ListedEntries()
  /// Backed-up bytes by folder (`FolderSummary.depth` levels), and the folder of the files met
  /// last with their bytes not yet added: files come folder by folder, so one comparison per
  /// file is the usual cost.
  var folderBytes = FolderTable()
  private var pendingFolder: [UInt8] = []
  private var pendingHash = 0
  private var pendingBytes: UInt64 = 0
  /// Files with more than one link, counted once when the walk is over.
  var hardLinks: [FileIdentity: [DetachedEntry]] = [:]

  /// `options.listedCategories` as bits, so the hot loop touches no shared Set storage.
  private let listedMask: UInt8
  private let maxFileSize: UInt64?
  /// The file size above which `backup-file-near-limit` applies (warnAt × maxFileSize).
  private let nearFileSize: UInt64?
  /// Backed-up bytes under each policy budget, in `options.budgets` order.
  var budgetBytes: [UInt64]
  /// Every file counted is backed up, whatever its category: what a device backup holds.
  var everyFileIsBackedUp = false

  init(options: AuditOptions, layout: ContainerLayout, sink: (@Sendable ([UInt8]) -> Void)?, tag: NDJSONTag?) {
    self.options = options
    self.layout = layout
    self.sink = sink
    self.tag = tag
    listedMask = options.listedCategories.reduce(0) { $0 | (1 << UInt8($1.index)) }
    maxFileSize = options.maxFileSize
    if let limit = options.maxFileSize, let warnAt = options.warnAt {
      nearFileSize = UInt64(Double(limit) * warnAt)
    } else {
      nearFileSize = nil
    }
    budgetBytes = [UInt64](repeating: 0, count: options.budgets.count)
  }

  mutating func note(_ finding: Finding) {
    findings.append(finding)
  }

  mutating func failed(path: [UInt8], error: SystemError) {
    findings.append(Finding(
      rule: .unreadable, path: path, message: "cannot \(error.action): \(error.reason)", bytes: nil))
  }

  mutating func visit(_ entry: WalkedEntry) {
    checkLocationAndMarkers(entry)
    if entry.status.kind == .directory {
      directories += 1
    } else if entry.status.linkCount > 1 {
      hardLinks[entry.status.identity, default: []].append(entry.detached())
    } else {
      count(entry)
    }
  }

  /// appdata's own leftovers: an interrupted migration's journal, or the partial copy it left
  /// (`.appdata-partial-TOKEN`, TOKEN 32 hex digits; its owner record beside it is not named
  /// again).
  private mutating func checkAppdataLeftover(_ entry: WalkedEntry, name: UnsafeBufferPointer<UInt8>) {
    if entry.depth == 1 && name.elementsEqual(ContainerLayout.migrationJournalName.utf8) {
      findings.append(Finding(
        rule: .unfinishedMigration, path: entry.path,
        message: "an interrupted appdata migrate's journal; run 'appdata migrate' on this container again to finish it", bytes: nil))
    } else if name.starts(with: ".appdata-partial-".utf8) && name.count == 17 + 32
                && name.dropFirst(17).allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) {
      findings.append(Finding(
        rule: .unfinishedMigration, path: entry.path,
        message: "a partial copy an interrupted appdata migrate left (\(entry.category == .critical ? "backed up: it has no marker" : "not backed up")); run 'appdata migrate' on this container again to finish it", bytes: nil))
    }
  }

  /// The per-path rules: layout and markers.
  private mutating func checkLocationAndMarkers(_ entry: WalkedEntry) {
    // appdata's own: an interrupted migration's journal, or the partial copy it left.
    // The name is borrowed, never copied: this runs for every entry, and only a name that
    // starts with a dot can be one (`entry.path` would allocate a path per entry: it made a
    // 200,000-entry audit 1.3 times slower).
    let name = entry.nameBuffer
    if name.first == 0x2E { checkAppdataLeftover(entry, name: name) }
    // A Mac app's Data holds symlinks to the user's Desktop, Downloads, …: part of its layout.
    if entry.depth == 1 && !entry.isStandardLocation
        && !(entry.status.kind == .symbolicLink && ContainerPlaces.homeFolderNames.contains(RelativePath.display(entry.path))) {
      findings.append(Finding(
        rule: .unknownLocation, path: entry.path,
        message: "top-level entry outside the standard layout (Documents, Library, tmp); not backed up", bytes: nil))
    }
    if !entry.ownMarkers.isEmpty {
      let path = entry.path
      let markerName = entry.ownMarkers.name ?? ""
      if entry.locationCategory == .cached || entry.locationCategory == .temporary {
        findings.append(Finding(
          rule: .redundantMarker, path: path,
          message: "\(markerName) marker in \(entry.locationCategory == .cached ? "Library/Caches" : "tmp"), which is never backed up", bytes: nil))
      } else if entry.status.kind == .directory,
                layout.systemDefinedFolders.contains(where: { $0.utf8.elementsEqual(path) }) {
        findings.append(Finding(
          rule: .excludedSystemFolder, path: path,
          message: "\(markerName) marker on the system-defined folder \(RelativePath.display(path)); mark a subfolder of your own instead", bytes: nil))
      }
      let modernAbove = entry.inheritedMarkers.contains(.modern)
      if entry.ownMarkers == .legacy && entry.locationCategory == .critical && !modernAbove {
        findings.append(Finding(
          rule: .legacyMarker, path: path,
          message: "excluded only by the deprecated com.apple.MobileBackup attribute; set NSURLIsExcludedFromBackupKey", bytes: nil))
      }
    }
    if entry.declinesBackup && entry.category == .critical {
      findings.append(Finding(
        rule: .cacheInBackup, path: entry.path,
        message: "user.xdg.robots.backup=false declares a cache, but iOS backs it up regardless", bytes: nil))
    }
    if entry.isCacheDirectoryTag && entry.parentCategory == .critical {
      findings.append(Finding(
        rule: .cacheInBackup, path: entry.parentPath,
        message: "CACHEDIR.TAG declares a cache, but iOS backs it up regardless", bytes: nil))
    }
  }

  /// Counts a file once: totals, the largest list, size findings and the listing.
  private mutating func count(_ entry: WalkedEntry) {
    let category = entry.category
    let isRegular = entry.status.kind == .regular
    let bytes = isRegular ? entry.status.size : 0
    let allocated = isRegular ? entry.status.allocatedSize : 0
    totals[category.index].files += 1
    totals[category.index].bytes = totals[category.index].bytes.saturatingSum(bytes)
    totals[category.index].allocatedBytes = totals[category.index].allocatedBytes.saturatingSum(allocated)

    if (category == .critical || everyFileIsBackedUp) && isRegular {
      if let limit = maxFileSize, bytes > limit {
        findings.append(Finding(
          rule: .backupFileTooLarge, path: entry.path,
          message: "backed-up file of \(ByteSize.described(bytes)), over the \(ByteSize.human(limit)) limit", bytes: bytes, limit: limit))
      } else if let near = nearFileSize, let limit = maxFileSize, bytes > near {
        findings.append(Finding(
          rule: .backupFileNearLimit, path: entry.path,
          message: "backed-up file of \(ByteSize.described(bytes)), \(percentText(bytes, of: limit)) of the \(ByteSize.human(limit)) limit", bytes: bytes, limit: limit))
      }
      if !budgetBytes.isEmpty {
        let path = entry.path
        for (index, budget) in options.budgets.enumerated() where budget.path.matchesPathOrAncestor(path) {
          budgetBytes[index] = budgetBytes[index].saturatingSum(bytes)
        }
      }
      offerLargest(bytes: bytes, entry: entry)
      addToFolder(entry.parentBuffer, bytes: bytes)
    }
    if listedMask & (1 << UInt8(category.index)) != 0 {
      if sink != nil {
        let exclusion = entry.exclusion
        let listed = ListedEntry(
          path: entry.path, category: category, bytes: bytes, allocatedBytes: allocated,
          marker: exclusion?.markers ?? [], excludedBy: exclusion?.path)
        listed.appendNDJSONLine(to: &streamBuffer, tag: tag)
        if streamBuffer.count >= 64 * 1024 { flushStream() }
      } else {
        entry.withExclusion { excludedBy, markers in
          entries.append(folder: entry.parentBuffer, name: entry.nameBuffer, category: category, bytes: bytes,
                         allocatedBytes: allocated, marker: markers, excludedBy: excludedBy)
        }
      }
    }
  }

  /// Adds a backed-up file's bytes to its folder `FolderSummary.depth` levels down (or the one
  /// level it has): its own folder's path (`parent`) cut at that depth. The folders above are
  /// summed from these once, in `folderSummary()`. Files come folder by folder, so the usual
  /// cost is one comparison with the pending folder, which reuses its buffer; a table update
  /// only when the folder changes. No allocation per file.
  private mutating func addToFolder(_ parent: UnsafeBufferPointer<UInt8>, bytes: UInt64) {
    guard bytes > 0, !parent.isEmpty else { return }  // a file at the top: in no folder
    // The end of the folder part, and its FNV-1a hash, in one pass.
    var slashes = 0
    var end = parent.count
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for index in 0..<parent.count {
      let byte = parent[index]
      if byte == 0x2F {
        slashes += 1
        if slashes == FolderSummary.depth { end = index; break }
      }
      hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    let folderHash = Int(truncatingIfNeeded: hash)
    let matches = pendingHash == folderHash && pendingFolder.count == end && pendingFolder.withUnsafeBufferPointer { pending in
      Syscalls.compareBytes(parent.baseAddress!, pending.baseAddress!, count: end) == 0
    }
    if !matches {
      flushFolder()
      pendingFolder.append(contentsOf: UnsafeBufferPointer(rebasing: parent[0..<end]))
      pendingHash = folderHash
    }
    pendingBytes = pendingBytes.saturatingSum(bytes)
  }

  /// Adds the pending folder's bytes to it.
  mutating func flushFolder() {
    guard !pendingFolder.isEmpty else { return }
    pendingFolder.withUnsafeBufferPointer { key in
      folderBytes.add(pendingBytes, to: key, hash: UInt64(bitPattern: Int64(pendingHash)))
    }
    pendingFolder.removeAll(keepingCapacity: true)
    pendingBytes = 0
  }

  /// The folder summary: the folders counted, and each folder above them with their sum.
  func folderSummary() -> FolderSummary {
    var counted: [([UInt8], UInt64)] = []
    folderBytes.forEach { key, _, bytes in counted.append((Array(key), bytes)) }
    var all: [[UInt8]: UInt64] = [:]
    for (path, bytes) in counted { all[path, default: 0] = all[path, default: 0].saturatingSum(bytes) }
    for (path, bytes) in counted {
      var end = path.count
      while let slash = path[0..<end].lastIndex(of: 0x2F) {
        end = slash
        let parent = Array(path[0..<end])
        all[parent, default: 0] = all[parent, default: 0].saturatingSum(bytes)
      }
    }
    return FolderSummary(all)
  }

  private mutating func offerLargest(bytes: UInt64, entry: WalkedEntry) {
    guard options.top > 0 else { return }
    if largest.count == options.top, let smallest = largest.last, bytes < smallest.bytes { return }
    insertLargest(LargeFile(path: entry.path, bytes: bytes, category: entry.category))
  }

  private mutating func insertLargest(_ file: LargeFile) {
    let position = largest.firstIndex { LargeFile.isLarger(file, $0) } ?? largest.count
    guard position < options.top else { return }
    largest.insert(file, at: position)
    if largest.count > options.top { largest.removeLast() }
  }

  /// Hands the buffered NDJSON lines to the sink.
  mutating func flushStream() {
    guard let sink, !streamBuffer.isEmpty else { return }
    sink(streamBuffer)
    streamBuffer.removeAll(keepingCapacity: true)
  }

  /// Folds another worker's accumulator into this one, taking its listing (left empty there).
  mutating func absorb(_ other: inout AuditAccumulator) {
    other.flushStream()
    for index in totals.indices { totals[index].add(other.totals[index]) }
    directories += other.directories
    for index in budgetBytes.indices { budgetBytes[index] = budgetBytes[index].saturatingSum(other.budgetBytes[index]) }
    findings.append(contentsOf: other.findings)
    other.flushFolder()
    flushFolder()
    folderBytes.merge(other.folderBytes)
    for file in other.largest { insertLargest(file) }
    entries.append(contentsOf: other.entries)
    other.entries = ListedEntries()
    hardLinks.merge(other.hardLinks) { $0 + $1 }
  }

  /// Counts each hard-linked file once, through the link the backup is most likely to
  /// carry (the first category in `Category.allCases`, then the first path), so the figures
  /// do not depend on which link the walk met first.
  mutating func settleHardLinks() {
    let groups = hardLinks.values
    hardLinks = [:]
    for links in groups {
      let chosen = links.min { a, b in
        a.category != b.category ? a.category < b.category : RelativePath.precedes(a.path, b.path)
      }!
      chosen.withEntry { count($0) }
    }
  }
}
