import AppDataCore

extension AuditSet {
  /// The set with each report listing only `categories` (none: no listing).
  public func listing(_ categories: Set<Category>) -> AuditSet {
    var set = self
    for index in set.reports.indices {
      set.reports[index].entries = categories.isEmpty ? nil : set.reports[index].entries?.filtered(categories)
    }
    return set
  }
}

extension BaselineSet {
  /// The baselines of an audit's reports, each as a saved JSON report of it would read
  /// (`Baseline.set(of:file:)`): its summary, its largest files, its listed critical files and
  /// its folder summary.
  public init(of set: AuditSet, file: String) {
    let grouping = set.grouping()
    var indices = grouping.loose
    for (index, backup) in set.backups.enumerated() where backup.status == .audited { indices += grouping.containers[index] }
    if set.single != nil { indices = [0] }
    self.init(file: file, baselines: indices.map { Baseline(of: set.reports[$0], file: file) })
  }
}

extension Baseline {
  /// The baseline a saved JSON report of `report` would give.
  public init(of report: AuditReport, file: String) {
    var categoryBytes: [Category: UInt64] = [:]
    for category in Category.allCases { categoryBytes[category] = report.categories[category]?.bytes ?? 0 }
    var fileBytes: [[UInt8]: UInt64] = [:]
    for large in report.largest { fileBytes[large.path] = large.bytes }
    var listsAll = false
    if let entries = report.entries {
      for entry in entries where entry.category == .critical {
        fileBytes[entry.path] = entry.bytes
        listsAll = true
      }
    }
    // The JSON's folder summary is keyed by text: a name that is not UTF-8 reads back with
    // U+FFFD, and the last of two names that become one is kept, as a JSON object keeps it.
    var folders = FolderSummary()
    var byKey: [[UInt8]: Int] = [:]
    for (path, bytes) in report.folders.folders {
      let key = Array(String(decoding: path, as: UTF8.self).utf8)
      if let index = byKey[key] { folders.folders[index].bytes = bytes; continue }
      guard folders.folders.count < FolderSummary.maximumFolders else { continue }
      byKey[key] = folders.folders.count
      folders.folders.append((key, bytes))
    }
    folders.isComplete = report.folders.isComplete
    // As `Baseline.parse` reads the JSON: as many largest files as the backup carries name them all.
    if UInt64(report.largest.count) >= report.backup.files { listsAll = true }
    self.init(file: file, id: report.id, backupBytes: report.backup.bytes, categoryBytes: categoryBytes, fileBytes: fileBytes,
              listsEveryBackedUpFile: listsAll, folders: folders)
    largestBound = listsAll ? nil : report.largest.map(\.bytes).min()
  }
}
