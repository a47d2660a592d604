import AppDataSystem
import AppDataKit
extension Commands {
  package static let extract = CommandSpec(
    name: "extract",
    summary: "Write one app of a device backup out as a container, or an Xcode .xcappdata package.",
    operands: "BACKUP",
    minimumOperands: 1, maximumOperands: 1,
    discussion: [
      "BACKUP is a device backup folder (Finder, iTunes or idevicebackup2), a folder of backups with --root naming one, or an archive of either (read as audit reads it, then once more for the payloads; nothing else is extracted). Every row of the app's domain (AppDomain-ID, or AppDomainGroup-ID or AppDomainPlugin-ID for a group or plugin id) becomes a folder, a file holding its payload (decrypted, in an encrypted backup, a chunk at a time in memory), or a symlink, with the permission bits, modification time and extended attributes the manifest records.",
      "OUT (default ID.xcappdata) ending in .xcappdata is a package as Xcode writes it: AppDataInfo.plist and the container in AppData. Any other name is a container root. With --with-extensions OUT is a folder of containers, one per id: the app, its groups and its plugins.",
      "The manifest is untrusted: a path with '..', '.', an empty component, a leading '/' or a NUL, a second row with the same path or fileID, a file below a symlink, an extension id that is not one folder name, a second domain with the same id (AppDomain-X and AppDomainGroup-X), are not written but reported; a symlink whose target resolves out of the container (through other links or not) is written as a file holding its target, with a warning. OUT is built in a hidden folder beside it (.OUT.appdata-extract-partial-TOKEN, with an owner record the run holds locked) and renamed into place when complete; on any failure or an interrupt (Ctrl-C, SIGTERM) it is removed, and OUT does not exist. BACKUP is only read.",
      "An existing OUT is refused. --force replaces it once the new one is complete, but only if appdata made it: an earlier extraction (its folder carries the extended attribute user.appdata.extract, appdata.extract on macOS) or an empty folder. OUT may never be the backup, lie inside it or hold it.",
      "A backup holds no Library/Caches, no tmp and no file excluded from backup: the extracted container is the backed-up part of the app's data.",
    ],
    options: [
      .value(.app, metavar: "ID", help: "The app, app group or plugin to extract (required)."),
      .value(.output, short: "o", metavar: "OUT", help: "Where to write it (default: ID.xcappdata in the current folder)."),
      .flag(.withExtensions, help: "Also extract the app's groups and plugins: OUT is then a folder of containers, one per id."),
      .flag(.force, help: "Replace an existing OUT that an earlier extract made (or an empty folder), once the new one is complete."),
      .flag(.dryRun, short: "n", help: "Print what would be written, and write nothing."),
    ] + backupWritingOutput + [
      backupRoot(to: "extract"),
      .value(.failOn, metavar: "LEVEL", choices: ["error", "warning", "never"],
             help: "Exit 1 when something was not written (error, the default), also when something was written otherwise than recorded (warning), or never."),
    ] + backupWritingInput("BACKUP"),
    exitStatus: [
      "0  everything was extracted",
      "1  some entries were not written (named in the report and on stderr); the rest are in OUT",
      "2  nothing was written: a usage error, no such backup or app, a wrong password, an existing OUT (or one --force may not replace), OUT that is or holds the backup, a full disk",
      "130  interrupted (Ctrl-C; SIGTERM 143, SIGHUP 129): nothing was written, OUT does not exist",
    ],
    rules: [onePasswordSource])
}
