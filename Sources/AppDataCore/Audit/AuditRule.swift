import AppDataSystem
/// How serious a finding is; `--fail-on` compares against it.
public enum Severity: String, CaseIterable, Sendable, Comparable {
  case info, warning, error

  package var rank: Int {
    switch self {
    case .info: return 0
    case .warning: return 1
    case .error: return 2
    }
  }

  public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
}

/// An audit rule: a stable id (scripts and configs refer to it), a severity, and why it exists.
///
/// A class, so that a finding holds one reference to its rule rather than copies of three
/// strings: copying and sorting thousands of findings was a tenth of a large audit's serial tail.
public final class AuditRule: Sendable, Hashable {
  public let id: String
  public let severity: Severity
  /// One line: what the rule checks and why, as printed in Docs/rules.md.
  public let rationale: String
  /// What to do about a finding.
  public let remedy: String

  package init(id: String, severity: Severity, rationale: String, remedy: String) {
    self.id = id
    self.severity = severity
    self.rationale = rationale
    self.remedy = remedy
  }

  public static func == (lhs: AuditRule, rhs: AuditRule) -> Bool { lhs === rhs || lhs.id == rhs.id }
  public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

extension AuditRule {
  public static let backupFileTooLarge = AuditRule(
    id: "backup-file-too-large", severity: .error,
    rationale: "A backed-up (critical) file is larger than --max-file-size; large re-creatable files in the backup are a common App Store rejection (guideline 2.23).",
    remedy: "Move it to Library/Caches if the app can re-create it, or mark it (or its folder) excluded from backup with `appdata exclude PATH` (NSURLIsExcludedFromBackupKey in the app).")
  public static let backupFileNearLimit = AuditRule(
    id: "backup-file-near-limit", severity: .warning,
    rationale: "A backed-up file is above warnAt (a fraction of --max-file-size) but not yet over the limit.",
    remedy: "Act before it crosses the limit: move it to Library/Caches, or mark it excluded from backup with `appdata exclude PATH`.")
  public static let backupTooLarge = AuditRule(
    id: "backup-too-large", severity: .error,
    rationale: "The bytes the backup would carry exceed --max-backup-size.",
    remedy: "Mark data the app can download again with `appdata exclude PATH` (NSURLIsExcludedFromBackupKey in the app), or move re-creatable data to Library/Caches; start with the largest backed-up files.")
  public static let backupNearLimit = AuditRule(
    id: "backup-near-limit", severity: .warning,
    rationale: "The backed-up total is above warnAt (a fraction of --max-backup-size) but not yet over the limit.",
    remedy: "Act before it crosses the limit: mark data the app can download again with `appdata exclude PATH`, or move re-creatable data to Library/Caches.")
  public static let budgetExceeded = AuditRule(
    id: "budget-exceeded", severity: .error,
    rationale: "The backed-up bytes under a path of the policy file's budgets exceed its maxBytes.",
    remedy: "Shrink what that path keeps in the backup, or raise its budget in appdata.json on purpose.")
  public static let budgetNearLimit = AuditRule(
    id: "budget-near-limit", severity: .warning,
    rationale: "The backed-up bytes under a budgeted path are above warnAt of its maxBytes.",
    remedy: "Act before the budget is exceeded.")
  public static let backupGrew = AuditRule(
    id: "backup-grew", severity: .error,
    rationale: "The backed-up bytes grew more than --max-growth or --max-growth-percent since the --baseline report.",
    remedy: "The paths that grew and the new files are listed under \"Since\" in the table (growingPaths in JSON); exclude or move what can be re-created.")
  public static let excludedSystemFolder = AuditRule(
    id: "excluded-system-folder", severity: .warning,
    rationale: "A marker sits on Documents, Library, Library/Application Support or Library/Preferences itself; QA1719: apps should create their own folders for exclusion rather than excluding the system-defined ones.",
    remedy: "Create a subfolder of your own, move the data there and mark that folder.")
  public static let legacyMarker = AuditRule(
    id: "legacy-marker", severity: .warning,
    rationale: "An item is excluded only by the deprecated com.apple.MobileBackup attribute (iOS 5.0.1); QA1719 says to use NSURLIsExcludedFromBackupKey.",
    remedy: "Set NSURLIsExcludedFromBackupKey (appdata exclude PATH writes the modern marker).")
  public static let redundantMarker = AuditRule(
    id: "redundant-marker", severity: .info,
    rationale: "A marker inside Library/Caches or tmp, which are never backed up anyway.",
    remedy: "Nothing is wrong; the marker can be dropped.")
  public static let cacheInBackup = AuditRule(
    id: "cache-in-backup", severity: .warning,
    rationale: "A backed-up folder declares itself a cache (CACHEDIR.TAG or user.xdg.robots.backup=false), which iOS does not honour: the backup carries it regardless.",
    remedy: "Move the folder under Library/Caches, or mark it excluded from backup.")
  public static let unknownLocation = AuditRule(
    id: "unknown-location", severity: .warning,
    rationale: "A top-level entry outside the standard container layout (Documents, Library, tmp); the backup ignores it and iOS may not keep it.",
    remedy: "Store app data under Documents, Library or tmp.")
  public static let metadataUnreadable = AuditRule(
    id: "metadata-unreadable", severity: .warning,
    rationale: "The container's metadata plist (or its package's AppDataInfo.plist) is there but cannot be read: the container has no id, so --app, a policy's per-id limits and a baseline do not match it.",
    remedy: "Check the plist (plutil -lint on a Mac); appdata reads binary and XML plists in UTF-8, UTF-16 or ISO-8859-1.")
  public static let unfinishedMigration = AuditRule(
    id: "unfinished-migration", severity: .warning,
    rationale: "An appdata migrate was interrupted: its journal (.appdata-migration.journal) is at the container's root, or a partial copy (.appdata-partial-TOKEN, with its owner record) is left; some entries are still where they were.",
    remedy: "Run appdata migrate on the container again: it reads the journal and finishes the job.")
  public static let restoreKeptCopy = AuditRule(
    id: "restore-kept-copy", severity: .info,
    rationale: "appdata restore left a folder beside this Simulator container (.UUID.appdata-restore-TOKEN, with its owner record): the container's previous contents, kept for --undo, or the partial tree of a killed run, which the next restore or --undo that goes ahead removes. It takes space until then.",
    remedy: "appdata restore --undo DEVICE --app ID puts the previous contents back; once they are not wanted, remove the folder and its .owner record.")
  public static let unreadable = AuditRule(
    id: "unreadable", severity: .error,
    rationale: "An entry could not be read (permission denied, vanished during the walk); the figures do not cover it.",
    remedy: "Run appdata as a user who can read the whole container.")

  // MARK: Device backups

  public static let backupIncomplete = AuditRule(
    id: "backup-incomplete", severity: .warning,
    rationale: "The device backup's Status.plist says its snapshot is not finished (SnapshotState other than finished): the backup, and so these figures, may lack files.",
    remedy: "Make the backup again and let it finish.")
  public static let backupUnreadable = AuditRule(
    id: "backup-unreadable", severity: .warning,
    rationale: "A device backup in a report of many (a folder of backups, or several PATHs) was not read: encrypted with no password or another one than given, damaged, or made before iOS 10. The other backups are audited; the figures do not cover this one.",
    remedy: "Give its password (--password-file, --password-stdin or APPDATA_BACKUP_PASSWORD), or audit it alone to see why it is refused.")
  public static let backupHoldsExcluded = AuditRule(
    id: "backup-holds-excluded", severity: .warning,
    rationale: "A device backup holds files from a location appdata predicts is never backed up (Library/Caches, tmp, a system folder, an unknown top-level folder): the layout table does not match this iOS version, or the backup was made by a tool that ignores it.",
    remedy: "Report it with the iOS version; the location rules marked unconfirmed in Docs/rules.md are the first suspects.")
  public static let backupFileMissing = AuditRule(
    id: "backup-file-missing", severity: .error,
    rationale: "With --verify: the manifest lists a file whose stored copy (<fileID[0:2]>/<fileID>) is not in the backup folder: the backup cannot restore it.",
    remedy: "Make the backup again; copy backups with every two-hex-digit folder.")
  public static let backupFileSizeMismatch = AuditRule(
    id: "backup-file-size-mismatch", severity: .error,
    rationale: "With --verify: a stored file's length differs from the Size its manifest row records: the copy is truncated or damaged.",
    remedy: "Make the backup again.")
  public static let backupMissingFile = AuditRule(
    id: "backup-missing-file", severity: .warning,
    rationale: "With --backup: the audit predicts the container's file is backed up, but the backup does not hold it (created after the backup, or a rule appdata gets wrong).",
    remedy: "Make a new backup after the container is in the state to check; if it still lacks the file, report the path.")
  public static let backupUnexpectedFile = AuditRule(
    id: "backup-unexpected-file", severity: .warning,
    rationale: "With --backup: the backup holds a file the container has as not backed up (offline, cached, temporary, system): a marker set after the backup, or one iOS did not honour.",
    remedy: "Check when the marker was set; if it was before the backup, iOS ignored it: mark the folder rather than the file, with NSURLIsExcludedFromBackupKey.")

  /// Every iOS rule, in the order Docs/rules.md lists them (Android's: `android`).
  public static let all: [AuditRule] = [
    .backupFileTooLarge, .backupFileNearLimit, .backupTooLarge, .backupNearLimit,
    .budgetExceeded, .budgetNearLimit, .backupGrew,
    .excludedSystemFolder, .legacyMarker, .redundantMarker, .cacheInBackup, .unknownLocation, .unreadable, .metadataUnreadable, .unfinishedMigration,
    .restoreKeptCopy, .backupIncomplete, .backupUnreadable, .backupHoldsExcluded, .backupFileMissing, .backupFileSizeMismatch,
    .backupMissingFile, .backupUnexpectedFile,
  ]

  /// Every rule, iOS's then Android's (`android`): what a policy file may name.
  public static var everyRule: [AuditRule] { all + android }

  /// The rule with this id.
  public static func named(_ id: String) -> AuditRule? { everyRule.first { $0.id == id } }
}
