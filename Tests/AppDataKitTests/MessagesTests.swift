@testable import AppDataSystem
import Foundation
import Testing

/// Issue 41, 6: each message a new user met that did not help now names what was given, what
/// was expected, and what works.
@Suite("messages that help")
struct MessagesTests {
  static func scratch(_ label: String) -> String {
    let folder = AppData.fixtureRoot + "/messages-\(label)-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
  }

  /// A plain file is not an archive: only what libarchive reads as one is called one.
  @Test func migrateOfAFileSaysWhatItIs() throws {
    let folder = Self.scratch("file")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Data("hello\n".utf8).write(to: URL(fileURLWithPath: folder + "/notes.txt"))
    let file = try AppData.run(["migrate", folder + "/notes.txt"])
    #expect(file.status == 2)
    #expect(file.error == "appdata: error: \(folder)/notes.txt: is a file, not a container folder; give the container's folder (the one holding Documents, Library and tmp), an .xcappdata package or a Simulator device\n")
    let backupFile = try AppData.run(["migrate", BackupTests.plain + "/Manifest.db"])
    #expect(backupFile.status == 2)
    #expect(backupFile.error.contains("/Manifest.db: is a file of a device backup, which appdata does not change; to work on an app's data, 'appdata extract \(BackupTests.plain) --app ID'"),
            "\(backupFile.error)")
  }

  @Test func auditOfABackupsFileNamesTheBackupsFolder() throws {
    for name in ["Manifest.db", "Info.plist"] {
      let result = try AppData.run(["audit", "--no-config", BackupTests.plain + "/" + name])
      #expect(result.status == 2)
      #expect(result.error == "appdata: error: \(BackupTests.plain)/\(name): is a file of a device backup; give the backup's folder: \(BackupTests.plain)\n")
    }
  }

  @Test func aSizeTypedInTwoWordsIsAUsageErrorSayingHowToWriteIt() throws {
    for arguments in [["--max-file-size", "5", "MB"], ["--max-file-size=5", "MB"], ["--max-backup-size", "1.5", "GiB"]] {
      let result = try AppData.run(["audit", "--no-config"] + arguments + ["x"])
      #expect(result.status == 2)
      let option = arguments[0].split(separator: "=")[0]
      let value = arguments.count == 3 ? arguments[1] : String(arguments[0].split(separator: "=")[1])
      #expect(result.error.hasPrefix("appdata: error: '\(option) \(value) \(arguments.last!)': a size is one word; write '\(option) \(value)\(arguments.last!)'"),
              "\(result.error)")
    }
  }

  @Test func passwordIsNeverAnOptionsValue() throws {
    for command in ["audit", "extract"] {
      let result = try AppData.run([command, "--password", "secret", "x"])
      #expect(result.status == 2)
      #expect(result.error.hasPrefix("appdata: error: there is no '--password': a password is never an option's value"), "\(result.error)")
      #expect(result.error.contains("'--password-file FILE', '--password-stdin', or APPDATA_BACKUP_PASSWORD"))
      #expect(!result.error.contains("secret"))
    }
  }

  /// `--root` in an archive names what it looked for: containers and backups alike.
  @Test func rootInAnArchiveSaysItLooksForBackupsToo() throws {
    let result = try AppData.run(["extract", "--app", "x", "--root", "nope", ArchiveTests.fixtures + "/pax-schily.tar"])
    #expect(result.status == 2)
    #expect(result.error.contains("--root nope names no app data container and no device backup in the archive"), "\(result.error)")
  }

  /// A status that cannot be read: the sentence has its object.
  @Test(.enabled(if: AppData.canRunAsAnotherUser, "needs root and setpriv to run as nobody"))
  func anUnreadableContainerSaysWhatCouldNotBeRead() throws {
    let folder = Self.scratch("private")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try FileManager.default.createDirectory(atPath: folder + "/c/Documents", withIntermediateDirectories: true)
    chmod(folder, 0o700)
    let result = try AppData.shell("setpriv --reuid=nobody --regid=nogroup --clear-groups '\(AppData.binary)' audit --no-config '\(folder)/c'")
    #expect(result.status == 2)
    #expect(result.error == "appdata: error: \(folder)/c: cannot read the status: Permission denied\n", "\(result.error)")
  }
}
