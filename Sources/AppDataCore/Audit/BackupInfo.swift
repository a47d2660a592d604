/// What the report says the backup is.
package struct BackupInfo: Sendable {
  package var path: String
  package var deviceName: String?
  /// The device's identifier (Info.plist `Unique Identifier` or `Target Identifier`): the
  /// backups of one device in a folder of backups are its history.
  package var deviceIdentifier: String?
  package var productVersion: String?
  package var date: String?
  package var snapshotState: String?
  package var isFullBackup: Bool?
  /// Manifest.plist's `IsEncrypted` (or a database that needed decrypting).
  package var isEncrypted = false
  /// The backup's plists that are there but could not be read, each as `NAME: why` (too large,
  /// not a regular file, not a plist): the report says so rather than that they name nothing.
  package var unreadablePlists: [String] = []

  package init(path: String, deviceName: String? = nil, productVersion: String? = nil, date: String? = nil,
               snapshotState: String? = nil, isFullBackup: Bool? = nil, isEncrypted: Bool = false) {
    self.path = path
    self.deviceName = deviceName
    self.productVersion = productVersion
    self.date = date
    self.snapshotState = snapshotState
    self.isFullBackup = isFullBackup
    self.isEncrypted = isEncrypted
  }
}
