import AppDataSystem

/// Every option's long name, once: the option tables (`Commands`) declare each option with its
/// name, and the commands read what was given by the same name, so that a name the tables do
/// not hold cannot be looked up (a string key that matched nothing read as "not given").
/// `CommandLineTests.everyOptionNameIsAnOption` checks each is in a table.
package enum OptionName: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
  case allDomains = "all-domains"
  case androidDeviceData = "android-device-data"
  case androidExternal = "android-external"
  case androidManifest = "android-manifest"
  case androidPackage = "android-package"
  case androidProject = "android-project"
  case androidRules = "android-rules"
  case app
  case backup
  case backupDomain = "backup-domain"
  case baseline
  case both
  case bundleId = "bundle-id"
  case bytes
  case color
  case config
  case defaultsKey = "defaults-key"
  case defaultsPlist = "defaults-plist"
  case deviceApi = "device-api"
  case dryRun = "dry-run"
  case failOn = "fail-on"
  case force
  case format
  case from
  case headroom
  case help
  case ignore
  case into
  case jobs
  case json
  case legacy
  case list
  case listApps = "list-apps"
  case marker
  case maxArchiveBytes = "max-archive-bytes"
  case maxBackups = "max-backups"
  case maxBackupSize = "max-backup-size"
  case maxFileSize = "max-file-size"
  case maxGrowth = "max-growth"
  case maxGrowthPercent = "max-growth-percent"
  case maxKeyRounds = "max-key-rounds"
  case maxManifestBytes = "max-manifest-bytes"
  case maxNameBytes = "max-name-bytes"
  case noConfig = "no-config"
  case noEndToEndEncryption = "no-end-to-end-encryption"
  case onConflict = "on-conflict"
  case only
  case output
  case passwordFile = "password-file"
  case passwordStdin = "password-stdin"
  case platform
  case quiet
  case root
  case sarifRoot = "sarif-root"
  case simulator
  case skip
  case targetSdk = "target-sdk"
  case testStopAfter = "test-stop-after"
  case to
  case top
  case undo
  case verify
  case version
  case warnAt = "warn-at"
  case withExtensions = "with-extensions"

  /// The long name as typed, without dashes: what a message interpolates.
  package var description: String { rawValue }
}
