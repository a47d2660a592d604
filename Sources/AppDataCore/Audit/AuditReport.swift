import AppDataSystem
/// The outcome of an audit: what the JSON, NDJSON and table reports print.
public struct AuditReport: Sendable {
  /// The container's absolute path (`ARCHIVE//ROOT` inside an archive).
  public var container: String
  /// The bundle id or app group id from the container's metadata (nil when it has none).
  public var id: String?
  package var kind: ContainerKind = .app
  /// What people call the container: its id, or else its folder's name.
  public var name: String = ""
  public var categories: [Category: CategoryTotals]
  /// Folders below the root.
  public var directories: UInt64
  public var maxFileSize: UInt64?
  public var maxBackupSize: UInt64?
  /// Sorted most severe first.
  public var findings: [Finding]
  /// Largest backed-up files, largest first.
  package var largest: [LargeFile]
  /// With `--list`: the listed files, sorted by path; nil without `--list`.
  package var entries: ListedEntries?
  /// The policy file's budgets and the backed-up bytes under each.
  public var budgets: [(budget: AuditPolicy.Budget, bytes: UInt64)] = []
  /// With `--baseline`: the change since then.
  package var comparison: BaselineComparison?
  /// The backed-up bytes of the top folders (one and two levels down), at most
  /// `FolderSummary.maximumFolders`: what a baseline compares folder by folder.
  package var folders: FolderSummary = FolderSummary()

  /// For a device backup's container: the backup it was read from (`BackupAudit.path`, its
  /// `BackupInfo.path`); nil for a container on disk or in an archive. What a report of many
  /// groups containers by, in one pass (`AuditSet.grouping`).
  public var backupPath: String?
  /// For a container read from an archive: the archive's absolute path; nil otherwise.
  public var archive: String?
  /// For a device backup's container: every file the backup holds, whatever its category.
  public var heldByBackup: CategoryTotals?
  /// With `appdata audit CONTAINER --backup BACKUP`: the container against the backup.
  package var backupComparison: BackupComparison?
  /// The platform the app's data is audited for (`IOSPlatform`, `AndroidPlatform`): its
  /// destinations, its categories and its rules, which the renderers ask.
  public var platform: any Platform = IOSPlatform()

  /// Where the app's data goes, each with what it carries: iOS's one (the iCloud and computer
  /// backup, what `backup` holds), Android's two.
  public var destinations: [Destination] { platform.destinations(backup: backup) }

  /// What the backup carries: the critical category (in a device backup, everything it holds).
  public var backup: CategoryTotals { heldByBackup ?? categories[.critical] ?? CategoryTotals() }

  /// The most severe finding's severity, if any.
  public var worstSeverity: Severity? { findings.map(\.severity).max() }

  /// Whether a finding reaches `threshold` (nil: `--fail-on never`).
  public func fails(at threshold: Severity?) -> Bool {
    guard let threshold, let worst = worstSeverity else { return false }
    return worst >= threshold
  }

  package init(container: String, id: String? = nil, kind: ContainerKind = .app, name: String = "", categories: [Category: CategoryTotals], directories: UInt64, maxFileSize: UInt64? = nil, maxBackupSize: UInt64? = nil, findings: [Finding], largest: [LargeFile], entries: ListedEntries? = nil, budgets: [(budget: AuditPolicy.Budget, bytes: UInt64)] = [], comparison: BaselineComparison? = nil, heldByBackup: CategoryTotals? = nil, backupComparison: BackupComparison? = nil) {
    self.container = container
    self.id = id
    self.kind = kind
    self.name = name
    self.categories = categories
    self.directories = directories
    self.maxFileSize = maxFileSize
    self.maxBackupSize = maxBackupSize
    self.findings = findings
    self.largest = largest
    self.entries = entries
    self.budgets = budgets
    self.comparison = comparison
    self.heldByBackup = heldByBackup
    self.backupComparison = backupComparison
  }
}
