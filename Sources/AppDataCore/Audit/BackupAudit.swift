import AppDataSystem
/// One device backup of a report of many (a folder of backups such as `MobileSync/Backup`, or a
/// backup among several PATH operands): what it is, and whether it could be read. Its containers
/// are the report's containers named `PATH//DOMAIN` (see `AuditSet.reports(of:)`).
public struct BackupAudit: Sendable {
  /// Whether the backup was read.
  public enum Status: String, CaseIterable, Sendable {
    /// Its manifest was read; its containers are in the report.
    case audited
    /// Encrypted, and no password was given or the one given does not open it.
    case locked
    /// It cannot be read: damaged, incomplete, or from before iOS 10.
    case refused
  }

  /// The backup folder, absolute.
  public var path: String
  /// The folder's name: the device's UDID in a Finder or iTunes backup folder.
  public var udid: String
  /// What its plists say; nil when they could not be read (a refused backup).
  public var info: BackupInfo?
  public var status: Status
  /// Why it was locked or refused (one line, input text escaped); nil when audited.
  public var message: String?

  package init(path: String, udid: String, info: BackupInfo?, status: Status, message: String? = nil) {
    self.path = path
    self.udid = udid
    self.info = info
    self.status = status
    self.message = message
  }

  /// The finding a backup that was not read gives the report of many (a warning, not a refusal
  /// of the whole run).
  public var finding: Finding? {
    guard status != .audited else { return nil }
    let what = status == .locked ? "locked" : "not read"
    // The refusal names the backup's folder first; the finding is already named by it.
    var reason = message ?? ""
    let prefix = TerminalText.escaped(path) + ": "
    if reason.hasPrefix(prefix) { reason.removeFirst(prefix.count) }
    return Finding(rule: .backupUnreadable, path: Array(".".utf8), message: "\(what): \(reason)", bytes: nil)
  }
}
