/// What appdata takes to be true of Android's backup, in one table, each with where it comes
/// from: the AOSP file (frameworks/base unless said) and the release it was read in. A fact
/// that differs between releases is a row of `byDevice`, keyed by the device's API level; the
/// default device is the newest. A line marked unconfirmed has not been read in AOSP's source
/// for every release it covers, or not checked on a device; Docs/android.md lists them.
package enum AndroidFacts {
  /// The cloud backup's quota: LocalTransport's FULL_BACKUP_SIZE_QUOTA, 25 * 1024 * 1024
  /// (packages/LocalTransport, LocalTransport.java; the same in every copy read, release not
  /// identified); Google's documentation says "25 MB". No option or policy key moves it:
  /// `maxBackupSize` is the app's own limit.
  package static let cloudQuota: UInt64 = 26_214_400
  /// The newest Android: the default `--device-api` and `--target-sdk`.
  package static let newestAPI = 36
  /// Auto Backup exists from Android 6.0 (developer.android.com, guide/topics/data/autobackup;
  /// not an AOSP source read here).
  package static let autoBackupAPI = 23
  /// What write_tarfile reports for a pax header, whatever its records' length
  /// (libs/androidfw/BackupHelpers.cpp: `*outSize = 512 + (needExtended ? 1024 : 0) + 512 *
  /// ((size + 511) / 512)`), which the quota is checked against. Read in a port of the newer
  /// file; the AOSP copy read (aosp-mirror, 25df5fba) predates the measure: unconfirmed.
  package static let paxHeaderMeasure: UInt64 = 1024
  /// ParsingPackageUtils.parseBaseApplication reads android:backupAgent, fullBackupOnly and
  /// fullBackupContent only `if (pkg.isBackupAllowed())`; dataExtractionRules always
  /// (parseBaseAppBasicFlags). Read in the version with isBackupAllowed(), release not
  /// identified.
  package static let allowBackupGatesAgentAndLegacyRules = true
  /// Android 12: `dataExtractionRules`, and the compat changes IGNORE_ALLOW_BACKUP_IN_D2D
  /// (services/backup, BackupEligibilityRules.java: `@EnabledSince(targetSdkVersion = S)`) and
  /// IGNORE_FULL_BACKUP_CONTENT_IN_D2D (FullBackup.java, enabled since target S): a target of
  /// 31 or later is moved by device-to-device transfer whatever `allowBackup` says, and with
  /// no `<device-transfer>` section its `<full-backup-content>` is ignored (everything).
  package static let dataExtractionRulesAPI = 31

  /// The facts that differ by the device's Android version.
  package struct DeviceFacts: Sendable, Equatable {
    /// The first API level the row holds for (up to the next row's).
    package var api: Int
    /// The releases whose AOSP source the row was read in, in words.
    package var readIn: String
    /// A `<data-extraction-rules>` section that is present but holds no rule falls back to
    /// `<full-backup-content>`. Android 12 (FullBackup.java, parseSchemeForOperationType:
    /// "Found configuration in the new config" only when a rule was read) falls back; Android
    /// 16 (FullBackup.java, parseSchemeForBackupDestination, with the `isSectionPresent` that
    /// parseNewBackupSchemeFromXmlLocked returns) uses the present section: everything.
    package var emptySectionFallsBack: Bool
    /// Device-to-device transfer walks cache/, code_cache/ and no_backup/. Android 12
    /// (BackupAgent.java, getExtraExcludeDirsIfAny: an empty set for a migration) does;
    /// Android 15 and 16 (BackupAgent.java, getExtraExcludeDirsIfAny adds the three for every
    /// destination) do not.
    package var deviceTransferCarriesCacheFolders: Bool
  }

  /// Oldest first. Android 13 and 14 were not read: they take the newer row, as the review
  /// of issue 50 read Android 14; unconfirmed (Docs/android.md).
  package static let byDevice: [DeviceFacts] = [
    DeviceFacts(api: 1, readIn: "Android 12 (API 31) source: FullBackup.java parseSchemeForOperationType, BackupAgent.java getExtraExcludeDirsIfAny",
                emptySectionFallsBack: true, deviceTransferCarriesCacheFolders: true),
    DeviceFacts(api: 33, readIn: "Android 15 (BackupAgent.java) and Android 16 (FullBackup.java, BackupAgent.java) source; Android 13 and 14 unconfirmed",
                emptySectionFallsBack: false, deviceTransferCarriesCacheFolders: false),
  ]

  /// The row for a device of API `api`.
  package static func device(_ api: Int) -> DeviceFacts {
    byDevice.last { $0.api <= api } ?? byDevice[0]
  }

  /// Whether `tools:` attributes reach the compiled XML, and so count against `<include>`'s
  /// three attributes and `<exclude>`'s two: aapt2's XmlFlattener drops the `tools:`
  /// namespace's attributes (tools/aapt2, XmlFlattener.cpp, WriteAttributes: `if
  /// (attr.namespace_uri != xml::kSchemaTools)`; release not identified).
  package static let toolsAttributesCount = false
  /// An excluded folder rejects everything below it at restore (BackupAgent's
  /// isFileEligibleForRestore, through BackupUtils.isFileSpecifiedInPathList), so an include
  /// below an exclude is backed up and never restored. Unconfirmed on a device.
  package static let excludeAboveIncludeIsNeverRestored = true
  /// How close to the quota is "near": the policy's warnAt when it sets one, else this.
  package static let nearQuotaFraction = 0.9
}
