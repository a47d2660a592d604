import AppDataSystem
/// One device backup of a report of many (a folder of backups such as `MobileSync/Backup`, or a
/// backup among several PATH operands): what it is, and whether it could be read. Its containers
/// are the report's containers named `PATH//DOMAIN` (see `AuditSet.reports(of:)`).
package struct BackupAudit: Sendable {
  /// Whether the backup was read.
  package enum Status: String, CaseIterable, Sendable {
    /// Its manifest was read; its containers are in the report.
    case audited
    /// Encrypted, and no password was given or the one given does not open it.
    case locked
    /// It cannot be read: damaged, incomplete, or from before iOS 10.
    case refused

    /// What the table and the HTML report call it: `audited`, `locked` or `not read`.
    package var words: String { self == .refused ? "not read" : rawValue }
  }

  /// The backup folder, absolute.
  package var path: String
  /// The folder's name: the device's UDID in a Finder or iTunes backup folder.
  package var udid: String
  /// What its plists say; nil when they could not be read (a refused backup).
  package var info: BackupInfo?
  package var status: Status
  /// Why it was locked or refused (one line, input text escaped); nil when audited.
  package var message: String?

  package init(path: String, udid: String, info: BackupInfo?, status: Status, message: String? = nil) {
    self.path = path
    self.udid = udid
    self.info = info
    self.status = status
    self.message = message
  }

  /// Why it was not read, without the backup's folder the refusal names first (the table, the
  /// findings and the HTML report already name it); nil when audited.
  package var reason: String? {
    guard status != .audited else { return nil }
    var reason = message ?? ""
    let prefix = TerminalText.escaped(path) + ": "
    if reason.hasPrefix(prefix) { reason.removeFirst(prefix.count) }
    return reason
  }

  /// The finding a backup that was not read gives the report of many (a warning, not a refusal
  /// of the whole run).
  package var finding: Finding? {
    guard let reason else { return nil }
    return Finding(rule: .backupUnreadable, path: Array(".".utf8), message: "\(status.words): \(reason)", bytes: nil)
  }
}
