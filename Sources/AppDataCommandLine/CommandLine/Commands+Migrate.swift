import AppDataSystem
import AppDataKit
extension Commands {
  package static let migrate = CommandSpec(
    name: "migrate",
    summary: "Move legacy Library/Caches content into Documents and mark it excluded from backup.",
    operands: "PATH",
    minimumOperands: 0, maximumOperands: 1,
    discussion: [
      "PATH is a container root, an Xcode package NAME.xcappdata (its AppData folder is migrated), or a folder of containers such as a Simulator device, with --app naming the app.",
      "Plans every move first, checks that nothing would be overwritten and that the destination accepts the marker, writes the plan to a journal in the container, then moves each top-level entry of the source into the destination (an atomic rename that never replaces an existing name; a copy that keeps modes, times and extended attributes when the two are on different filesystems), marks each moved entry excluded from backup and reads the marker back.",
      "If a migration is interrupted, running the same command again finds the journal and finishes the job. A run with nothing left to do changes nothing and exits 0. Entries the system owns stay where they are: names starting with com.apple., Snapshots, and the app's own bundle-id folder.",
      "With --android-rules FILE and --output NEW, migrate instead writes the Android <data-extraction-rules> that says what the legacy <full-backup-content> FILE says (the migration Android lint asks for): each rule in both sections, and a check with appdata's own model that, for the cloud backup and for device-to-device transfer, Android 12 carries with NEW what Android 11 carries with FILE, on PATH (the app's data folder or its tar) when given and on trees made from the rules' paths. A rule the new format cannot say (requireFlags) is named and not written. NEW is written only when the check finds no difference (otherwise exit 1, and --dry-run prints it); it must not exist.",
    ],
    options: [
      .value(.from, metavar: "DIR", help: "The source folder, relative to PATH (default: Library/Caches)."),
      .value(.to, metavar: "DIR", help: "The destination folder, relative to PATH (default: Documents)."),
      .value(.into, metavar: "NAME", help: "Move everything into a new subfolder NAME of the destination and mark that folder instead."),
      .value(.app, metavar: "ID", help: "In a folder of containers (a Simulator device), migrate the app container whose id is ID.",
             repeatable: true),
      .value(.bundleId, metavar: "ID", help: "The app's bundle id (default: read from the container's metadata plist)."),
      .value(.only, metavar: "GLOB", help: "Move only top-level entries whose name matches GLOB (*, ?, [a-z], as in the policy file; repeatable).", repeatable: true),
      .value(.skip, metavar: "GLOB", help: "Leave top-level entries whose name matches GLOB (*, ?, [a-z], as in the policy file; repeatable).", repeatable: true),
      .value(.onConflict, metavar: "POLICY", choices: ["fail", "skip", "keep-both", "merge"],
             help: "When a destination name exists: fail (default: change nothing), skip, keep-both or merge."),
      .value(.marker, metavar: "KIND", choices: ["modern", "legacy", "both"],
             help: "The marker to set: modern (default), legacy or both."),
      .value(.defaultsKey, metavar: "KEY", help: "Migrate only if the user-defaults KEY is true, and remove KEY afterwards."),
      .value(.defaultsPlist, metavar: "FILE", help: "The defaults plist, relative to PATH (default: Library/Preferences/BUNDLE-ID.plist)."),
      .flag(.dryRun, short: "n", help: "Print the plan and change nothing."),
      .value(.format, short: "f", metavar: "FORMAT", choices: ["table", "json"], help: "Output format: table (default) or json."),
      .flag(.json, help: "Same as --format json."),
      .flag(.quiet, short: "q", help: "Print no table; what failed still goes to stderr (a --format json report is still printed)."),
      .value(.androidRules, metavar: "FILE", help: "Convert the Android <full-backup-content> FILE into a <data-extraction-rules> (needs --output; PATH, optional, is the app's data to check it on)."),
      .value(.output, short: "o", metavar: "NEW", help: "With --android-rules: the file to write, which must not exist."),
      .value(.maxNameBytes, metavar: "SIZE",
             help: "With --android-rules, when PATH is an archive of the app's data: refuse it once the names of its entries that appdata keeps pass SIZE in all (default 64MiB)."),
      .value(.testStopAfter, metavar: "N", help: "Testing only: stop abruptly after N journal steps.", hidden: true),
    ],
    exitStatus: [
      "0  everything planned was done, or there was nothing to do (--android-rules: the new file is written and carries the same)",
      "1  some entries failed; the rest are done and the journal is kept for a rerun (--android-rules: the check found a difference, listed, and nothing was written)",
      "2  nothing could start (usage error, failed pre-check, conflicts under --on-conflict fail)",
      "130  interrupted (Ctrl-C; SIGTERM 143, SIGHUP 129): a line says how far it got; the journal is kept, and running it again finishes",
    ])
}
