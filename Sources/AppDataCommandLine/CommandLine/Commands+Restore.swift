import AppDataSystem
import AppDataKit
extension Commands {
  package static let restore = CommandSpec(
    name: "restore",
    summary: "Put one app's data from a device backup (or a package or container) into its container on a Simulator device, or back.",
    operands: "SOURCE",
    minimumOperands: 0, maximumOperands: 1,
    discussion: [
      "SOURCE is a device backup folder (Finder, iTunes or idevicebackup2, plain or encrypted), a folder of backups with --root naming one, or an archive of either, as extract reads them; or an .xcappdata package or a container folder, copied as extract writes (symlinks never followed, one that resolves out written as a file holding its target; its metadata plist is not copied). DEVICE (--simulator) is a Simulator device folder (Devices/UDID) or a UDID in ~/Library/Developer/CoreSimulator/Devices. The device must be shut down (its device.plist's state): a booted one is refused with the 'xcrun simctl shutdown UDID' line to run.",
      "The target is the app's data container on the device: the folder of data/Containers/Data/Application whose .com.apple.mobile_container_manager.metadata.plist names ID (MCMMetadataIdentifier). An app not installed there is refused, naming the installed ids, best match first. With --with-extensions its groups (Shared/AppGroup) and plugins (Data/PluginKitPlugin) installed there are restored too, each from its own domain of the backup.",
      "The new contents are written by extract's own code (every row checked, the same modes, times and extended attributes) into a hidden folder beside the container, .UUID.appdata-restore-TOKEN, with an owner record; the container's metadata plist is linked in (the same file) and the folder's own mode, times and attributes copied; then one exchange (renameat2 RENAME_EXCHANGE, renamex_np RENAME_SWAP on macOS) puts it at the container's name. The hidden name then holds the previous contents, marked not to be backed up: --undo puts them back, in one exchange, and removes the restored tree. A run killed at any instant leaves the container wholly old or wholly new; the next run removes a partial folder and keeps a kept copy.",
    ],
    options: [
      .value(.simulator, metavar: "DEVICE", help: "The Simulator device: its folder (Devices/UDID) or its UDID (required)."),
      .value(.app, metavar: "ID", help: "The app to restore (required); one installed id it fits is chosen as --app chooses elsewhere."),
      .flag(.withExtensions, help: "Also the app's groups and plugins installed on the device."),
      .flag(.undo, help: "Put back the contents the last restore of the app's container kept (no SOURCE; DEVICE may be the operand)."),
      .flag(.dryRun, short: "n", help: "Print the plan (the target container, files and bytes written, what is replaced) and change nothing."),
    ] + backupWritingOutput + [
      backupRoot(to: "restore"),
    ] + backupWritingInput("SOURCE"),
    exitStatus: [
      "0  the container holds the backup's data (or, with --undo, its previous contents again)",
      "1  some entries of the backup were not written (named in the report and on stderr); the rest were restored",
      "2  nothing was changed: a usage error, a booted device, an app not installed, a missing or damaged metadata plist, no such backup or app in it, a wrong password, nothing to undo, a full disk",
      "130  interrupted (Ctrl-C; SIGTERM 143, SIGHUP 129): the device was left as it was",
    ],
    rules: [onePasswordSource])
}

// MARK: - What extract and restore both take

extension Commands {
  /// `--format table|json`, `--json` and `-q`, as extract and restore take them.
  static let backupWritingOutput: [OptionSpec] = [
    .value(.format, short: "f", metavar: "FORMAT", choices: ["table", "json"], help: "Output format: table (default) or json."),
    .flag(.json, help: "Same as --format json."),
    .flag(.quiet, short: "q", help: "Print no table and no progress line; what was not written still goes to stderr."),
  ]

  /// `--root`: in a folder of backups, the one to `verb` from.
  static func backupRoot(to verb: String) -> OptionSpec {
    .value(.root, metavar: "PATH-IN", help: "In a folder of backups, the backup to \(verb) from (its folder's name).")
  }

  /// Where an encrypted backup's password comes from, the bounds on reading the backup
  /// (`operand`, the name help gives it), and the test hook: extract's and restore's last options.
  static func backupWritingInput(_ operand: String) -> [OptionSpec] {
    [
      .value(.passwordFile, metavar: "FILE",
             help: "An encrypted backup's password is the first line of FILE, or of standard input for - (else: --password-stdin, APPDATA_BACKUP_PASSWORD, or a prompt at a terminal)."),
      .flag(.passwordStdin, help: "Read an encrypted backup's password from the first line of standard input (without echo when it is a terminal)."),
      .value(.maxKeyRounds, metavar: "N",
             help: "Refuse an encrypted backup whose keybag asks for more than N key-derivation rounds, DPIC and ITER together (default 100000000)."),
      .value(.maxNameBytes, metavar: "SIZE",
             help: "Refuse a \(operand) inside an archive once the names of its entries that appdata keeps while reading pass SIZE in all (default 64MiB)."),
      .value(.testStopAfter, metavar: "N", help: "Testing only: SIGKILL itself at the Nth checkpoint.", hidden: true),
    ]
  }

  /// audit's, extract's and restore's: `--password-file` and `--password-stdin` not both.
  static let onePasswordSource = OptionRule.exclusive(.passwordFile, .passwordStdin, because: "the password comes from one place")
}
