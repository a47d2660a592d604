import AppDataSystem
/// An earlier `appdata audit --format json` report, to measure growth against.
public struct Baseline: Sendable {
  public var file: String
  /// The container's id in the baseline report (nil: it had none, or predates ids).
  public var id: String?
  public var backupBytes: UInt64
  public var categoryBytes: [Category: UInt64]
  /// Sizes of the files the baseline names (its `largest`, and its `entries` if listed).
  public var fileBytes: [[UInt8]: UInt64]
  /// Whether the baseline lists every backed-up file (`--list critical` or `all`), so that a
  /// path it does not name was not there.
  public var listsEveryBackedUpFile: Bool
  /// The baseline's folder summary (`folders`); nil in a report made before it had one.
  package var folders: FolderSummary?
  /// When the baseline names only its largest backed-up files (not all of them): the smallest
  /// of those, so a file it does not name held at most this many bytes then, or was not there.
  public var largestBound: UInt64?

  /// A baseline needs the summary and the largest files; a report without `--list` is a few
  /// kilobytes. A listing of every file of a huge container can pass this, so it is a limit, not
  /// a guess: make baselines without `--list all`.
  package static let maximumFileSize = 64 << 20

  package init(file: String, id: String?, backupBytes: UInt64, categoryBytes: [Category: UInt64], fileBytes: [[UInt8]: UInt64],
               listsEveryBackedUpFile: Bool, folders: FolderSummary?) {
    self.file = file
    self.id = id
    self.backupBytes = backupBytes
    self.categoryBytes = categoryBytes
    self.fileBytes = fileBytes
    self.listsEveryBackedUpFile = listsEveryBackedUpFile
    self.folders = folders
  }

  public static func load(path: String) throws(AuditPolicy.LoadError) -> BaselineSet {
    let bytes: [UInt8]
    do {
      bytes = try FileReading.read(path: path, limit: maximumFileSize)
    } catch {
      throw AuditPolicy.LoadError(message: error.message)
    }
    let document: JSONValue
    do {
      document = try JSONParser.parse(bytes)
    } catch {
      throw AuditPolicy.LoadError(message: "not valid JSON: \(error)")
    }
    return try set(of: document, file: path)
  }

  /// The baselines a report holds (one container's, or each of a report of many's), from its
  /// JSON: a saved report, or the report of a baseline PATH audited first.
  package static func set(of document: JSONValue, file path: String) throws(AuditPolicy.LoadError) -> BaselineSet {
    func fail(_ message: String) -> AuditPolicy.LoadError { AuditPolicy.LoadError(message: message) }
    guard let members = document.objectValue, members["tool"]?.objectValue?["name"]?.stringValue == AppDataVersion.name else {
      throw fail("not an appdata audit report (no \"tool\": {\"name\": \"appdata\"}); make the baseline with 'appdata audit --format json'")
    }
    guard let version = members["schemaVersion"]?.unsignedValue else {
      throw fail("no schemaVersion; make the baseline with 'appdata audit --format json'")
    }
    guard version == UInt64(AppDataVersion.auditSchemaVersion) else {
      throw fail("schemaVersion \(version), but this appdata reads schemaVersion \(AppDataVersion.auditSchemaVersion); make a new baseline with this version")
    }
    // A report of many containers holds one report per container; a folder of backups, one
    // per container of each backup read (and those beside them).
    let backups = members["backups"]?.arrayValue ?? []
    if members["containers"]?.arrayValue != nil || !backups.isEmpty {
      var baselines: [Baseline] = []
      for (index, item) in (members["containers"]?.arrayValue ?? []).enumerated() {
        do {
          baselines.append(try parse(item, file: path))
        } catch {
          throw fail("containers[\(index)]: \(error.message)")
        }
      }
      for (backupIndex, backup) in backups.enumerated() {
        for (index, item) in (backup.objectValue?["containers"]?.arrayValue ?? []).enumerated() {
          do {
            baselines.append(try parse(item, file: path))
          } catch {
            throw fail("backups[\(backupIndex)].containers[\(index)]: \(error.message)")
          }
        }
      }
      return BaselineSet(file: path, baselines: baselines)
    }
    return BaselineSet(file: path, baselines: [try parse(document, file: path)])
  }

  package static func parse(_ document: JSONValue, file: String) throws(AuditPolicy.LoadError) -> Baseline {
    func fail(_ message: String) -> AuditPolicy.LoadError { AuditPolicy.LoadError(message: message) }
    guard let members = document.objectValue else { throw fail("expected a report object, found \(document.typeName)") }
    guard let summary = members["summary"]?.objectValue, let categories = summary["categories"]?.objectValue,
          let backup = summary["backup"]?.objectValue?["bytes"]?.unsignedValue else {
      throw fail("no summary.categories or summary.backup.bytes")
    }
    var categoryBytes: [Category: UInt64] = [:]
    for category in Category.allCases {
      guard let bytes = categories[category.rawValue]?.objectValue?["bytes"]?.unsignedValue else {
        throw fail("no summary.categories.\(category.rawValue).bytes")
      }
      categoryBytes[category] = bytes
    }
    var fileBytes: [[UInt8]: UInt64] = [:]
    func collect(_ items: [JSONValue]?, criticalOnly: Bool) {
      for item in items ?? [] {
        guard let object = item.objectValue, let bytes = object["bytes"]?.unsignedValue else { continue }
        // A name that is not UTF-8 is exact only in `pathBase64` (`path` has U+FFFD in its place).
        let exact = object["pathBase64"]?.stringValue.flatMap { Base64.decode(Array($0.utf8)) }
        guard let path = exact ?? object["path"]?.stringValue.map({ Array($0.utf8) }) else { continue }
        if criticalOnly && object["category"]?.stringValue != Category.critical.rawValue { continue }
        fileBytes[path] = bytes
      }
    }
    let largest = members["largest"]?.arrayValue ?? []
    collect(largest, criticalOnly: false)
    collect(members["entries"]?.arrayValue, criticalOnly: true)
    // Every backed-up file is named when the entries list the critical ones, or when the
    // largest files are as many as the files the backup carries.
    let backedUpFiles = summary["backup"]?.objectValue?["files"]?.unsignedValue
    var listsAll = members["entries"]?.arrayValue != nil
      && (members["entries"]?.arrayValue ?? []).contains { $0.objectValue?["category"]?.stringValue == Category.critical.rawValue }
    if let backedUpFiles, UInt64(largest.count) >= backedUpFiles { listsAll = true }
    let largestBound = listsAll ? nil : largest.compactMap { $0.objectValue?["bytes"]?.unsignedValue }.min()
    var folders: FolderSummary?
    if let summary = members["folders"]?.objectValue, let items = summary["bytes"]?.objectValue {
      var read = FolderSummary()
      for (path, value) in items.prefix(FolderSummary.maximumFolders) {
        guard let bytes = value.unsignedValue else { continue }
        read.folders.append((Array(path.string.utf8), bytes))
      }
      read.isComplete = summary["complete"]?.boolValue ?? false
      folders = read
    }
    var baseline = Baseline(file: file, id: members["id"]?.stringValue, backupBytes: backup, categoryBytes: categoryBytes, fileBytes: fileBytes,
                            listsEveryBackedUpFile: listsAll, folders: folders)
    baseline.largestBound = largestBound
    return baseline
  }
}

/// The reports of a baseline file: one, or one per container of a report of many.
public struct BaselineSet: Sendable {
  public var file: String
  public var baselines: [Baseline]

  package init(file: String, baselines: [Baseline]) {
    self.file = file
    self.baselines = baselines
  }

  /// The baseline of the container with `id`: the report with the same id; in the audit of one
  /// container, a file holding one report is its baseline whatever the ids.
  public func baseline(for id: String?, isOnlyContainer: Bool) -> Baseline? {
    if isOnlyContainer && baselines.count == 1 { return baselines[0] }
    guard let id else { return nil }
    return baselines.first { $0.id?.utf8.elementsEqual(id.utf8) ?? false }
  }
}

/// How the backup changed since the baseline.
package struct BaselineComparison: Sendable {
  package struct PathGrowth: Sendable {
    package var path: [UInt8]
    /// The bytes then; for a file the baseline does not name (`beforeIsBound`), the most it
    /// can have held then.
    package var before: UInt64
    package var after: UInt64
    /// A folder of the folder summary, rather than a file.
    package var isFolder = false
    /// A file the baseline did not hold (it names every backed-up file).
    package var isNew = false
    /// A file the baseline, naming only its largest files, does not name: new, or at most
    /// `before` bytes then.
    package var beforeIsBound = false
    /// Bytes of growth (at least this many when `beforeIsBound`).
    package var growth: UInt64 { after - before }
  }

  package var file: String
  package var backupBefore: UInt64
  package var backupAfter: UInt64
  package var categories: [Category: (before: UInt64, after: UInt64)]
  /// The backed-up files that grew or are new, largest growth first (at most `top`).
  package var growing: [PathGrowth]
  /// The folders that grew most (from the folder summaries), largest growth first (at most `top`).
  package var growingFolders: [PathGrowth] = []

  /// Bytes of growth (negative: shrank).
  package var delta: Int64 { Int64(bitPattern: backupAfter &- backupBefore) }
  /// Growth in percent of the baseline; nil when the baseline backed up nothing.
  package var percent: Double? {
    backupBefore == 0 ? nil : (Double(backupAfter) - Double(backupBefore)) / Double(backupBefore) * 100
  }

  /// The folders and the files together, largest growth first (a folder before a file of the
  /// same growth), at most `top`: what the table lists.
  package func growingPaths(top: Int) -> [PathGrowth] {
    Array((growingFolders + growing).sorted { a, b in
      if a.growth != b.growth { return a.growth > b.growth }
      if a.isFolder != b.isFolder { return a.isFolder }
      return RelativePath.precedes(a.path, b.path)
    }.prefix(max(0, top)))
  }

  package init(baseline: Baseline, categories current: [Category: CategoryTotals], files: [LargeFile], listed: ListedEntries?,
               folders: FolderSummary = FolderSummary(), top: Int = 10) {
    file = baseline.file
    backupBefore = baseline.backupBytes
    backupAfter = current[.critical]?.bytes ?? 0
    var perCategory: [Category: (UInt64, UInt64)] = [:]
    for category in Category.allCases {
      perCategory[category] = (baseline.categoryBytes[category] ?? 0, current[category]?.bytes ?? 0)
    }
    categories = perCategory
    var now: [[UInt8]: UInt64] = [:]
    for file in files where file.category == .critical { now[file.path] = file.bytes }
    for entry in listed ?? [] where entry.category == .critical { now[entry.path] = entry.bytes }
    var growing: [PathGrowth] = []
    for (path, after) in now {
      var item = PathGrowth(path: path, before: 0, after: after)
      if let known = baseline.fileBytes[path] {
        item.before = known
      } else if baseline.listsEveryBackedUpFile {
        item.isNew = true
      } else if let bound = baseline.largestBound {
        item.before = min(bound, after)
        item.beforeIsBound = true
      } else {
        continue  // not in the baseline's lists, and no bound: its size then is unknown
      }
      if item.after > item.before { growing.append(item) }
    }
    growing.sort { a, b in
      a.growth != b.growth ? a.growth > b.growth : RelativePath.precedes(a.path, b.path)
    }
    self.growing = Array(growing.prefix(max(0, top)))
    // Folders: those both summaries hold, and those a complete baseline summary did not (they
    // held nothing backed up then).
    var grownFolders: [PathGrowth] = []
    if let before = baseline.folders {
      for (path, after) in folders.folders {
        guard let was = before.bytes(of: path) ?? (before.isComplete ? 0 : nil), after > was else { continue }
        grownFolders.append(PathGrowth(path: path, before: was, after: after, isFolder: true))
      }
    }
    grownFolders.sort { a, b in
      a.growth != b.growth ? a.growth > b.growth : RelativePath.precedes(a.path, b.path)
    }
    growingFolders = Array(grownFolders.prefix(max(0, top)))
  }
}
