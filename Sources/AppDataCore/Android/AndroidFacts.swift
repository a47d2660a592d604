/// What appdata takes to be true of Android's backup, in one table, each with where it comes
/// from. A line marked unconfirmed has not been checked on a device; change it here and
/// everything follows (Docs/android.md lists them).
package enum AndroidFacts {
  /// The cloud backup's quota: LocalTransport's FULL_BACKUP_SIZE_QUOTA, 25 * 1024 * 1024
  /// (packages/LocalTransport, LocalTransport.java); Google's documentation says "25 MB".
  package static let cloudQuota: UInt64 = 26_214_400
  /// The newest Android: the default `--device-api` and `--target-sdk`.
  package static let newestAPI = 36
  /// Android 12: `dataExtractionRules`, and device-to-device transfer for targets of 31 and
  /// later whatever `allowBackup` says (developer.android.com, about/versions/12/backup-restore).
  package static let dataExtractionRulesAPI = 31
  /// Device-to-device transfer walks cache/, code_cache/ and no_backup/ too: BackupAgent's
  /// getExtraExcludeDirsIfAny returns nothing for a migration (AOSP frameworks/base,
  /// BackupAgent.java). Google's documentation lists those folders as never carried; appdata
  /// follows the code.
  package static let deviceTransferCarriesCacheFolders = true
  /// Device-to-device transfer of an app that targets 31 or later, with no `<device-transfer>`
  /// section, carries everything: the legacy `<full-backup-content>` is ignored for it
  /// (developer.android.com, about/versions/12/backup-restore). AOSP's FullBackup has this as
  /// a TODO (b/180523564) in the version read: unconfirmed which a device follows.
  package static let deviceTransferIgnoresLegacyRules = true
  /// A `<data-extraction-rules>` section that holds no rule (empty, or every rule dropped) is
  /// as if missing: BackupScheme falls back to `<full-backup-content>` (FullBackup.java,
  /// parseSchemeForOperationType: "Found configuration in the new config" only when a rule was
  /// read). Google's documentation reads as if an empty section meant everything.
  package static let emptySectionFallsBack = true
  /// Whether `tools:` attributes reach the compiled XML, and so count against `<include>`'s
  /// three attributes and `<exclude>`'s two. Unconfirmed: aapt2 is taken to strip them.
  package static let toolsAttributesCount = false
  /// An excluded folder rejects everything below it at restore (BackupAgent's
  /// isFileEligibleForRestore, through BackupUtils.isFileSpecifiedInPathList), so an include
  /// below an exclude is backed up and never restored. Unconfirmed on a device.
  package static let excludeAboveIncludeIsNeverRestored = true
  /// How close to the quota is "near": the policy's warnAt when it sets one, else this.
  package static let nearQuotaFraction = 0.9
}
