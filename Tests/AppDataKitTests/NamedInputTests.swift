@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Synchronization
import Testing

/// Issue 39, what appdata reads by name: files that would block or mislead are refused in one
/// line, baselines keep names that are not UTF-8, and a backup's date is a date or nothing.
@Suite("named inputs")
struct NamedInputTests {
  static func container(_ folder: String) throws {
    #expect(try AppData.shell("mkdir -p '\(folder)/Documents' '\(folder)/Library' '\(folder)/tmp' && printf hello > '\(folder)/Documents/a.txt'").status == 0)
  }

  /// B2: a FIFO named as --config, --baseline, --password-file, or sitting as ./appdata.json
  /// (read by default), is refused at once with one line; nothing waits for a writer. The shell's
  /// `timeout` only turns a hang into a failure (124), it never makes one pass.
  @Test func aFIFONamedAsAFileIsRefusedNotWaitedOn() throws {
    let folder = ExtractTests.scratch("fifo")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Self.container(folder + "/C")
    #expect(mkfifo(folder + "/fifo.json", 0o600) == 0)
    #expect(mkfifo(folder + "/appdata.json", 0o600) == 0)
    let cases: [(String, String)] = [
      ("'\(AppData.binary)' audit --config '\(folder)/fifo.json' '\(folder)/C'", "fifo.json: is not a regular file (a FIFO, socket or device), which appdata does not read"),
      ("'\(AppData.binary)' audit --baseline '\(folder)/fifo.json' '\(folder)/C'", "fifo.json: is not a regular file (a FIFO, socket or device), which appdata does not read"),
      ("cd '\(folder)' && '\(AppData.binary)' audit C", "appdata.json: is not a regular file (a FIFO, socket or device), which appdata does not read"),
      ("'\(AppData.binary)' audit --password-file '\(folder)/fifo.json' '\(EncryptedBackupTests.encrypted)'",
       "fifo.json: is not a regular file (a FIFO, socket or device), which appdata does not read; give a password from a pipe on standard input"),
    ]
    for (command, message) in cases {
      let result = try AppData.shell("timeout 60 sh -c '\(command.replacingOccurrences(of: "'", with: "'\\''"))' < /dev/null")
      #expect(result.status == 2, "\(command): \(result.status) \(result.error)")
      #expect(result.error.contains(message) && result.error.split(separator: "\n").count == 1, "\(command): \(result.error)")
    }
  }

  /// B1: a container compared with its own report as a baseline grows by nothing, also where a
  /// name is not UTF-8 (`pathBase64` is read, not the lossy `path`).
  @Test func aBaselineKeepsNamesThatAreNotUTF8() throws {
    let folder = ExtractTests.scratch("base64")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Self.container(folder + "/C")
    #expect(try AppData.shell("cd '\(folder)/C/Documents' && mkdir \"fold$(printf '\\376')\" && head -c 70000 /dev/zero > \"fold$(printf '\\376')/in.bin\"").status == 0)
    let saved = try AppData.run(["audit", "--json", "--list", "all", "-o", folder + "/base.json", folder + "/C"])
    #expect(saved.status == 0, "\(saved.error)")
    let compared = try AppData.run(["audit", "--baseline", folder + "/base.json", "--list", "critical", folder + "/C"])
    #expect(compared.status == 0, "\(compared.error)")
    #expect(compared.output.contains("(+0 B, +0.0%)"), "\(compared.output)")
    #expect(!compared.output.contains("+68.4 KiB"), "\(compared.output)")
  }

  /// C1: a Status.plist whose Date is a string that is not ISO 8601 gives no date (the backup is
  /// undated, and its report says why); one that is ISO 8601 text is that date; a history orders
  /// backups by their dates, never by text that merely sorts after them.
  @Test func aBackupsDateIsADateOrNothing() throws {
    let folder = ExtractTests.scratch("dates")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let script = """
      import importlib.util, os, plistlib, sys
      spec = importlib.util.spec_from_file_location("b", sys.argv[2] + "/Scripts/make-test-backup.py")
      b = importlib.util.module_from_spec(spec); spec.loader.exec_module(b)
      for name, date in (("A", "Z is after every ISO date"), ("B", "2021-03-04T05:06:07Z")):
          folder = os.path.join(sys.argv[1], "Backup", name)
          os.makedirs(folder)
          b.write_plists(folder, ["com.example.app"])
          b.write_database(folder, [("AppDomain-com.example.app", "Documents/a", 1, 10, None)])
          for plist in ("Status.plist", "Manifest.plist", "Info.plist"):
              path = os.path.join(folder, plist)
              with open(path, "rb") as f:
                  data = plistlib.load(f)
              for key in ("Date", "Last Backup Date"):
                  if key in data:
                      data[key] = date
              with open(path, "wb") as f:
                  plistlib.dump(data, f)
      """
    #expect(try AppData.shell("python3 - '\(folder)' '\(AppData.packageRoot)' <<'EOF'\n\(script)\nEOF").status == 0)
    let undated = try AppData.auditJSON(folder + "/Backup/A")
    #expect(value(undated, "backup", "date") == nil || value(undated, "backup", "date") is NSNull, "\(String(describing: undated["backup"]))")
    let table = try AppData.run(["audit", folder + "/Backup/A"])
    #expect(table.output.contains("Status.plist: its Date 'Z is after every ISO date' is not a date; the backup is taken as undated"), "\(table.output)")
    let dated = try AppData.auditJSON(folder + "/Backup/B")
    #expect(value(dated, "backup", "date") as? String == "2021-03-04T05:06:07Z", "\(String(describing: dated["backup"]))")
  }
}

/// Issue 39, 7: extract unwraps only the class keys of the files it writes.
@Suite("extract, secrets")
struct ExtractSecretTests {
  /// The library call: the group's one file is of class 3, the app's files of classes 2, 3 and
  /// 4; the keybag holds more, which are never unwrapped.
  @Test(arguments: [("group.com.example.extract", [UInt32(3)]), ("com.example.extract", [UInt32(2), 3, 4])])
  func onlyTheClassKeysTheFilesUseAreUnwrapped(id: String, classes: [UInt32]) throws {
    let folder = ExtractTests.scratch("classes")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let password = Array(EncryptedBackupTests.password.utf8)
    let secret = try #require(SecretBuffer(capacity: password.count))
    secret.storage.copyBytes(from: password)
    secret.setCount(password.count)
    let asked = Mutex(0)
    let report = try extract(backup: "\(ExtractTests.fixtures)/encrypted", app: id, output: folder + "/out", password: { _ in
      asked.withLock { $0 += 1 }
      return secret
    })
    #expect(asked.withLock { $0 } == 1, "the password is asked for once")
    #expect(report.problems.isEmpty, "\(report.problems.map(\.message))")
    #expect(report.unwrappedClasses == classes)
  }
}

/// Issue 40: parsing the command line reads no file; what it names is read when the command runs.
@Suite("prepare reads nothing")
struct PrepareReadsNothingTests {
  @Test func aPolicyAndABaselineAreReadWhenTheCommandRunsNotWhenItIsParsed() throws {
    let arguments = ["appdata", "audit", "--config", "/nonexistent/appdata.json", "--baseline", "/nonexistent/base.json", "/nonexistent/C"]
    guard case .command = CLI.prepare(arguments) else {
      Issue.record("parsing read the files it names")
      return
    }
    let result = try AppData.run(Array(arguments.dropFirst()))
    #expect(result.status == 2)
    #expect(result.error == "appdata: error: /nonexistent/appdata.json: no such file\n", "\(result.error)")
  }
}
