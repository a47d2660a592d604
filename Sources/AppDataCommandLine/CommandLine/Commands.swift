import AppDataSystem
import AppDataKit
/// The option tables of every command. Help, the man page, shell-facing docs and the
/// parser are all generated from these.
package enum Commands {
  /// The environment variables appdata reads: the man page's ENVIRONMENT section.
  static let environment: [(name: String, help: String)] = [
    (BackupReader.passwordVariable, "An encrypted device backup's password, when neither --password-file nor --password-stdin is given (read once, then removed from the environment). Set but empty is refused, as a CI secret that is not defined."),
    ("NO_COLOR", "Set and not empty: the table has no colours unless --color always (https://no-color.org)."),
    ("TERM", "dumb: no colours and no progress line."),
    ("COLUMNS", "On a terminal, the width tables and help are fitted to (else the terminal's own): help wrapped in its columns, a migration's ENTRY wrapped under its column. Output to a pipe or a file is never fitted."),
    ("LC_ALL, LC_CTYPE, LANG", "The first set says whether the terminal is UTF-8; if not, the history's sparklines use ASCII."),
    ("GITHUB_STEP_SUMMARY", "With --format github, the job summary is appended to this file."),
    ("GITHUB_WORKSPACE", "With --format sarif and no --sarif-root, the checkout: a container inside it is located relative to it, so that GitHub links the results to files."),
  ]

  static let categoryChoices = Category.allCases.map(\.rawValue) + ["all"]

  package static let audit = CommandSpec(
    name: "audit",
    summary: "Classify a container's files and report what the backup would carry.",
    operands: "PATH...",
    minimumOperands: 1, maximumOperands: nil,
    discussion: [
      "Walks each app data container PATH holds without following symlinks, sorts every file into the QA1719 categories (critical, offline, cached, temporary) or system and other, reads the backup-exclusion markers on each entry and the folders above it, and reports the backed-up total, the largest backed-up files and the findings of the audit rules (see Docs/rules.md).",
      "PATH is a container root (the folder holding Documents, Library and tmp, or the container metadata plist); an Xcode package NAME.xcappdata (its AppData folder); a Simulator device (Devices/UDID, its data or data/Containers folder, or one of Containers/Data/Application, Containers/Shared/AppGroup, Containers/Data/PluginKitPlugin), the same shape on a device's file system; a Mac's ~/Library/Containers or ~/Library/Group Containers; or any folder whose children are containers or packages. A folder of containers gives one report with a row per container. App group containers use the group layout: files at the root are backed up.",
      "PATH can also be an iOS device backup folder (Finder, iTunes or idevicebackup2; Manifest.db beside Manifest.plist, Info.plist and Status.plist): its Manifest.db is read, read-only and immutable, and each app domain (AppDomain-ID, AppDomainGroup-ID, AppDomainPlugin-ID) is reported as a container holding what the backup really holds; the system domains are summed into one line.",
      "PATH can also be a folder of device backups, as Finder and iTunes keep them (~/Library/Application Support/MobileSync/Backup, one folder per device, or MobileSync itself): one report with a row per backup (device, iOS version, date, encryption, snapshot state, files and bytes), then each backup's containers. A backup that cannot be read is listed as locked (encrypted, and no password or a wrong one) or not read (damaged, incomplete, or from before iOS 10) with a backup-unreadable warning; the others are audited. Containers beside the backups are audited with them. --app ID keeps that app's containers in every backup.",
      "Several PATHs give one report of many: each container is named by its PATH (a backup by its folder), and the exit status covers all of them. Every PATH is checked before any is read.",
      "An encrypted backup (iOS 10.2 and later) is opened with its password, from --password-file FILE, --password-stdin or the APPDATA_BACKUP_PASSWORD environment variable, in that order, or else asked for without echo when standard input is a terminal; never as an option's value. Its Manifest.db is decrypted into memory only; the stored files stay encrypted and unread. An encrypted backup from before iOS 10.2 (a plaintext Manifest.db) needs no password. Among several backups, the one password is tried on each encrypted one.",
      "PATH can also be an archive of any of these: a tar, pax or zip file (gzip, xz, zstd or bzip2 compressed or not, detected by content), read without extracting it; markers are read from pax headers, AppleDouble ._ entries and __MACOSX folders. A container's folder is found by its Documents, Library or tmp folder or its metadata plist, or named with --root. An archive of a device backup folder (or of a folder of backups) is audited as the folder would be: its Manifest.db and plists are read into memory, never extracted, within --max-archive-bytes and --max-manifest-bytes; encrypted ones too, and --verify checks the stored files' entries in the archive.",
      "SIZE is a byte count or a number with a unit: K, M, G, T (powers of 1024), KiB, MiB, GiB, TiB (the same), kB, MB, GB, TB (powers of 1000), with or without one space between; 1.5G and '5 MiB' work.",
    ],
    options: [
      .value(.format, short: "f", metavar: "FORMAT", choices: AuditFormat.allCases.map(\.rawValue),
             help: "Output format: table (default), json, ndjson, github, junit, sarif or html (a treemap page); repeatable with --output.", repeatable: true),
      .flag(.json, help: "Same as --format json."),
      .value(.output, short: "o", metavar: "FILE",
             help: "Write the --format given just before to FILE (repeatable); the table still goes to the terminal.", repeatable: true),
      .value(.maxFileSize, metavar: "SIZE", help: "Report a backed-up file larger than SIZE (backup-file-too-large)."),
      .value(.maxBackupSize, metavar: "SIZE", help: "Report a backup larger than SIZE in total (backup-too-large)."),
      .value(.warnAt, metavar: "FRACTION", help: "Warn above FRACTION of a limit or budget (0 to 1, e.g. 0.9) before the error."),
      .value(.failOn, metavar: "LEVEL", choices: ["error", "warning", "info", "never"],
             help: "Exit 1 when a finding is at least this severe: error (default), warning, info, or never."),
      .value(.sarifRoot, metavar: "DIR", help: "With --format sarif: locate results relative to DIR, the repository's checkout (uriBaseId %SRCROOT%), when the container lies inside it (default: GITHUB_WORKSPACE, when set)."),
      .value(.config, metavar: "FILE", help: "Read the policy from FILE (default: ./appdata.json if it exists)."),
      .flag(.noConfig, help: "Ignore ./appdata.json."),
      .value(.ignore, metavar: "GLOB", help: "Leave paths matching GLOB out of the findings (repeatable; replaces the file's list).", repeatable: true),
      .value(.baseline, metavar: "FILE", help: "Compare with an earlier --format json report, or with anything PATH can be (a container, package, archive, backup or folder of them, audited first with the same options), and show the growth."),
      .value(.maxGrowth, metavar: "SIZE", help: "Report growth of the backup since --baseline above SIZE (backup-grew)."),
      .value(.maxGrowthPercent, metavar: "N", help: "Report growth of the backup since --baseline above N percent (backup-grew)."),
      .value(.list, metavar: "CATEGORY", choices: categoryChoices,
             help: "List the files of CATEGORY one by one (repeatable, or comma-separated; all lists every file).",
             repeatable: true),
      .value(.top, metavar: "N", help: "Show the N largest backed-up files (default 10; 0 for none)."),
      .flag(.bytes, short: "b", help: "Show exact byte counts instead of human sizes in the table."),
      .value(.color, metavar: "WHEN", choices: ["auto", "always", "never"],
             help: "Colour the table: auto (default: on a terminal, unless NO_COLOR is set or TERM is dumb), always or never."),
      .value(.jobs, short: "j", metavar: "N", help: "Walk with N threads from the start (default: one per online CPU, growing to 8 per CPU, at most 16, while the walk waits on a cold disk)."),
      .flag(.quiet, short: "q", help: "Print only the findings in the table, and no progress line."),
      .value(.app, metavar: "ID", help: "Audit only the containers of app ID: its own, its extensions' (ID.*) and its groups' (group.ID*); repeatable. An ID PATH does not hold may be a unique last component or part of one, in any case (whatsapp): the id chosen is named.",
             repeatable: true),
      .flag(.listApps, help: "Print each container's id and backed-up bytes, tab-separated, largest first, one per line (for scripts), instead of the report."),
      .flag(.allDomains, help: "For a device backup, list each system domain on its own line (default: summed into one)."),
      .flag(.verify, help: "For a device backup, also check that each file's stored copy exists with the length its manifest records."),
      .value(.passwordFile, metavar: "FILE",
             help: "An encrypted device backup's password is the first line of FILE, or of standard input for - (else: --password-stdin, APPDATA_BACKUP_PASSWORD, or a prompt at a terminal)."),
      .flag(.passwordStdin, help: "Read an encrypted device backup's password from the first line of standard input (without echo when it is a terminal)."),
      .value(.maxKeyRounds, metavar: "N",
             help: "Refuse an encrypted device backup whose keybag asks for more than N key-derivation rounds, DPIC and ITER together (default 100000000, about 11 seconds here; iOS writes 10,000,000 and 10,000 or 1), or an encrypted adb backup (--backup) whose rounds, counted twice for its two derivations, pass N (at the default 50,000,000, about 9.5 seconds to refuse a wrong password; Android writes 10,000)."),
      .value(.backup, metavar: "BACKUP", help: "Compare the containers with what the device backup BACKUP holds for their domains."),
      .value(.backupDomain, metavar: "DOMAIN", help: "With --backup, the domain to compare with (default: AppDomain-ID from the container's id)."),
      .value(.root, metavar: "PATH-IN", help: "The container's folder inside PATH or ARCHIVE (default: found from its Documents, Library or tmp)."),
      .value(.maxArchiveBytes, metavar: "SIZE", help: "Refuse an ARCHIVE that expands beyond SIZE (default 4GiB)."),
      .value(.maxBackups, metavar: "N",
             help: "Refuse a folder (or archive) of more than N device backups before reading them (default 10000)."),
      .value(.maxManifestBytes, metavar: "SIZE",
             help: "Refuse an ARCHIVE holding a device backup whose Manifest.db expands beyond SIZE, checked before it is read into memory (default 256MiB)."),
      .value(.maxNameBytes, metavar: "SIZE",
             help: "Refuse an ARCHIVE, or an Android backup or archive read beside PATH (--backup, --android-device-data, --android-external), once the names of its entries that appdata keeps while reading pass SIZE in all (default 64MiB; a small compressed file can hold gigabytes of names)."),
      .value(.platform, metavar: "PLATFORM", choices: InputPlatform.allCases.map(\.rawValue),
             help: "What PATH is: an Android app's data folder (android), an iOS container or what holds some (ios), or as its shape says (auto, the default)."),
      .value(.androidRules, metavar: "FILE",
             help: "An Android backup rules file: a <full-backup-content> (android:fullBackupContent) or a <data-extraction-rules> (android:dataExtractionRules), told apart by its root element; repeatable.", repeatable: true),
      .value(.androidManifest, metavar: "FILE",
             help: "Read allowBackup, fullBackupContent, dataExtractionRules, backupAgent and fullBackupOnly from a source AndroidManifest.xml, and the rules files it names from res/xml/ beside it."),
      .value(.androidProject, metavar: "DIR",
             help: "An app module: its src/main/AndroidManifest.xml (or DIR/AndroidManifest.xml) as --android-manifest reads it."),
      .value(.androidPackage, metavar: "NAME", help: "The Android package name (default: the manifest's, else the data folder's name)."),
      .value(.androidDeviceData, metavar: "DIR",
             help: "The app's device-encrypted storage (/data/user_de/0/PKG, or a tar of it), read beside PATH and reported under user_de/."),
      .value(.androidExternal, metavar: "DIR",
             help: "The app's external files folder (Android/data/PKG/files, or a tar of it), read beside PATH and reported under external/."),
      .value(.targetSdk, metavar: "N", help: "The app's targetSdkVersion (default: the newest Android, \(AndroidFacts.newestAPI))."),
      .value(.deviceApi, metavar: "N", help: "The Android version of the device, as an API level (default: the newest, \(AndroidFacts.newestAPI))."),
      .flag(.noEndToEndEncryption,
            help: "The Android cloud backup is not end-to-end encrypted (a device without a screen lock): <cloud-backup disableIfNoEncryptionCapabilities> then skips it."),
    ],
    exitStatus: [
      "0  no finding at or above --fail-on",
      "1  at least one finding at or above --fail-on",
      "2  the audit could not run (usage error, PATH missing or holding no container, no container matching --app, a bad policy file or baseline, an unreadable, corrupt, encrypted or oversized archive, a pre-iOS 10 or damaged device backup, an encrypted one without its password or with a wrong one; in a folder of backups, only when none can be read)",
      "130  interrupted while writing -o files (Ctrl-C; SIGTERM 143, SIGHUP 129): each report file is left as it was",
    ],
    rules: [
      .exclusive(.config, .noConfig, because: "--no-config reads no policy file, and --config names one to read"),
      onePasswordSource,
      .requires(.backupDomain, .backup, because: "it names the domain of the backup to compare with"),
      .requires(.maxGrowth, .baseline, because: "growth is measured against a baseline"),
      .requires(.maxGrowthPercent, .baseline, because: "growth is measured against a baseline"),
    ])

  package static let exclude = markerCommand(
    "exclude", summary: "Mark files or folders excluded from backup.",
    discussion: "Sets the backup-exclusion marker on each PATH, the way this platform stores it (with the user. prefix on Linux), and reads it back. A marked folder excludes everything inside it. The modern marker (what NSURLIsExcludedFromBackupKey writes) is the default.",
    options: [
      .flag(.legacy, help: "Set only the deprecated com.apple.MobileBackup marker (iOS 5.0.1)."),
      .flag(.both, help: "Set both the modern and the legacy marker."),
    ],
    done: "every PATH was marked", notDone: "some PATH could not be marked (the others were)")

  package static let include = markerCommand(
    "include", summary: "Remove the backup-exclusion markers from files or folders.",
    discussion: "Removes both markers, in every spelling this platform can store, from each PATH. A PATH inside a marked folder stays excluded; appdata says so.",
    options: [],
    done: "the markers were removed from every PATH", notDone: "some PATH could not be changed (the others were)")

  package static let status = markerCommand(
    "status", summary: "Tell whether files or folders are excluded from backup, and by which marker.",
    discussion: "For each PATH prints [Excluded] or [Included], like tmutil isexcluded, with the marker and, when it is inherited, the nearest marked folder above PATH (up to the filesystem root). ARCHIVE//PATH names an entry inside an archive: its markers and its folders' are read from the archive, as appdata audit reads them.",
    options: [.flag(.json, help: "Print a JSON document instead of text.")],
    done: "every PATH was examined", notDone: "some PATH could not be examined")

  /// A marker command (exclude, include, status): one or more PATHs, each done or not, and an
  /// exit status that says which.
  private static func markerCommand(_ name: String, summary: String, discussion: String, options: [OptionSpec],
                                    done: String, notDone: String) -> CommandSpec {
    CommandSpec(name: name, summary: summary, operands: "PATH...", minimumOperands: 1, maximumOperands: nil,
                discussion: [discussion], options: options, exitStatus: ["0  " + done, "1  " + notDone, "2  usage error"])
  }

  /// Every command, in the order `appdata --help` lists them.
  package static var all: [CommandSpec] { [audit, migrate, extract, restore, exclude, include, status, initConfig, completion] }

  /// The options of `appdata` itself (before a command).
  package static let global: [OptionSpec] = [
    .help,
    .flag(.version, short: "V", help: "Print the version and exit."),
  ]
}
