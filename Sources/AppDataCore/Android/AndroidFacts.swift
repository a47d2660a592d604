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
  /// ((s.st_size + 511) / 512)`, then "Measure case: ... return without moving data"), which
  /// the quota is checked against. Read in two copies of AOSP's file carried by Android
  /// distributions, bionic-linux/android_frameworks_base 951a572b (String8::string()) and
  /// Neoteric-OS/android_frameworks_base 2e7c36c6 (the newer c_str() and appendPath()): both the
  /// flat 1024, neither counts the pax blocks it writes. AOSP's own stored copies
  /// (aosp-mirror/platform_frameworks_base 25df5fba, ffdf6f33) and CyanogenMod's (ea6d6f9a,
  /// Android 7.1 or earlier) predate the measure; AOSP's BackupHelpers_test.cpp (aosp-mirror
  /// 1e1351d5) calls the measure (writer NULL) with no pax case. No release-tagged AOSP copy
  /// was stored: unconfirmed for a release, not keyed by device API since no copy read differs.
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

  /// The facts that may differ by the device's Android version. Every released source read
  /// agrees on both, so there is one row; a release that differs gets a row of its own.
  package struct DeviceFacts: Sendable, Equatable {
    /// The first API level the row holds for (up to the next row's).
    package var api: Int
    /// The releases whose AOSP source the row was read in, in words.
    package var readIn: String
    /// A `<data-extraction-rules>` section that is present but holds no rule falls back to
    /// `<full-backup-content>`. False in every release read: Android 12 to 16's FullBackup.java
    /// (parseSchemeForOperationType, in 14 parseSchemeForBackupDestination) uses the section
    /// when parseNewBackupSchemeFromXmlLocked returns `isSectionPresent`, rules or none. Only
    /// Android 12's development code fell back ("Found configuration in the new config" when a
    /// rule was read; aosp-mirror/platform_frameworks_base 0244a767, before the compat change
    /// IGNORE_FULL_BACKUP_CONTENT_IN_D2D it still marks TODO(b/180523564)); no release shipped
    /// it. Below API 31 no section is read at all.
    package var emptySectionFallsBack: Bool
    /// Device-to-device transfer walks cache/, code_cache/ and no_backup/. False in every
    /// release read: Android 12 to 16's BackupAgent.java (getExtraExcludeDirsIfAny adds the
    /// three for every destination), and two distributions' copies from Android 10 or 11
    /// (AospExtended/platform_frameworks_base 97a0a42a, Ankits-lab/frameworks_base 150a9240:
    /// multi-user mUser, no OperationType yet; which of the two releases each is was not
    /// established), whose onFullBackup excludes them outright. Only Android 12's development
    /// code returned nothing for a migration (`isDeviceToDeviceMigration()`; aosp-mirror
    /// 02eea8b3, which already calls Android 12's isFullBackupEnabled(transportFlags)); no
    /// release shipped it.
    package var deviceTransferCarriesCacheFolders: Bool
  }

  /// Oldest first. The releases read: frameworks/base core/java/android/app/backup/
  /// BackupAgent.java and FullBackup.java as Reginer/aosp-android-jar (commit 262f6ae9) keeps
  /// them under android-NN/src: Android 12 (android-31, added 2021-10-11, tag not stated),
  /// 12L (android-32, android-12.1.0_r5), 13 (android-33, android-13.0.0_r3), 14 (android-34,
  /// android-14.0.0_r2), 15 (android-35, android-15.0.0_r1), 16 (android-36,
  /// android-16.0.0_r2). 12, 12L and 13 are the same files (blobs b1b59b0e, bf9a9b06); 14
  /// renames OperationType to BackupDestination with the same logic.
  package static let byDevice: [DeviceFacts] = [
    DeviceFacts(api: 1, readIn: "Android 12, 12L, 13, 14, 15 and 16 (BackupAgent.java getExtraExcludeDirsIfAny, FullBackup.java isSectionPresent), two Android 10 or 11 copies (BackupAgent.java onFullBackup)",
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
