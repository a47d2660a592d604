@testable import AppDataSystem
@testable import AppDataCore
import Foundation
import Testing

/// `appdata extract` (issue 33) on backups `Scripts/make-extract-backup.py` writes with real
/// payloads, plain and encrypted (a key per file, wrapped with its class key).
@Suite("extract")
struct ExtractTests {
  static let fixtures = AppData.generatedFixtures("make-extract-backup.py", label: "extract")
  static let app = "com.example.extract"
  static let environment = EncryptedBackupTests.withPassword

  /// A fresh folder for OUT and whatever a run leaves beside it.
  static func scratch(_ label: String) -> String {
    let folder = NSTemporaryDirectory() + "appdata-extract-\(label)-\(UUID().uuidString)"
    try! FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
  }

  static func expected() throws -> [String: [String: [String: Any]]] {
    let data = try Data(contentsOf: URL(fileURLWithPath: fixtures + "/expected.json"))
    return try JSONSerialization.jsonObject(with: data) as! [String: [String: [String: Any]]]
  }

  /// Runs a Python script that builds a backup with `Scripts/make-extract-backup.py`, loaded as
  /// `x` (and `os`, `sys` imported); `sys.argv[1]` is `folder`.
  static func runWithGenerator(_ script: String, in folder: String) throws -> RunResult {
    let prelude = """
      import os, sys, importlib.util
      spec = importlib.util.spec_from_file_location("x", sys.argv[2])
      x = importlib.util.module_from_spec(spec); spec.loader.exec_module(x)

      """
    return try AppData.shell("python3 - '\(folder)' '\(AppData.packageRoot)/Scripts/make-extract-backup.py' <<'EOF'\n\(prelude)\(script)\nEOF")
  }

  /// A backup at `folder`/`name` of one app's rows: `rows`, a Python list over `folder_row(path)`,
  /// `file_row(path, content)` and `link_row(path, target)`; `after`, Python run next (`folder`,
  /// `d` the domain, `b` and `x` the generators).
  static func backupOfRows(_ rows: String, app: String, named name: String = "backup", in folder: String, after: String = "") throws {
    let script = """
      b = x.backup
      folder = sys.argv[1] + "/\(name)"
      os.makedirs(folder)
      b.write_plists(folder, ["\(app)"])
      d = "AppDomain-\(app)"
      folder_row = lambda p: (d, p, "folder", 0o755, 1, None, None, {}, 0)
      file_row = lambda p, c: (d, p, "file", 0o644, 1, c, None, {}, len(c))
      link_row = lambda p, t: (d, p, "symlink", 0o755, 1, None, t, {}, 0)
      x.write(folder, \(rows))
      \(after)
      """
    let made = try runWithGenerator(script, in: folder)
    #expect(made.status == 0, "\(made.error)")
  }

  static func sha256(_ path: String) throws -> String {
    // Python's hashlib, not GNU coreutils' sha256sum (macOS has shasum), so that it runs there too.
    try AppData.shell("python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],\"rb\").read()).hexdigest())' '\(path)'")
      .output.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  static func attributes(_ path: String) -> [String: String] {
    var result: [String: String] = [:]
    for name in (try? ExtendedAttributes.names(atPath: path)) ?? [] {
      guard let value = try? ExtendedAttributes.value(of: name, atPath: path) else { continue }
      result[name] = value.map { String(format: "%02x", $0) }.joined()
    }
    return result
  }

  /// Every row of every domain is in OUT as the generator wrote it: kind, bytes, mode, time,
  /// link target and extended attributes.
  @Test(arguments: ["plain", "encrypted"])
  func extractionIsByteIdenticalWithModesTimesLinksAndAttributes(backup: String) throws {
    let folder = Self.scratch("identical")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let result = try AppData.run(["extract", "--with-extensions", "--app", Self.app, "-o", folder + "/out", "--json", "\(Self.fixtures)/\(backup)"],
                                 environment: Self.environment)
    #expect(result.status == 0, "\(result.error)")
    let report = try result.json()
    #expect((report["problems"] as? [Any])?.isEmpty == true, "\(report)")
    for (domain, entries) in try Self.expected() {
      let id = String(domain.split(separator: "-", maxSplits: 1)[1])
      for (path, entry) in entries {
        let full = "\(folder)/out/\(id)" + (path.isEmpty ? "" : "/" + path)
        var status = stat()
        #expect(lstat(full, &status) == 0, "\(full) is missing")
        let kind = entry["kind"] as! String
        #if canImport(Glibc)
        let modified = status.st_mtim.tv_sec
        #else
        let modified = status.st_mtimespec.tv_sec  // Darwin's struct stat (sys/stat.h)
        #endif
        #expect(modified == entry["mtime"] as! Int, "\(full) mtime")
        switch kind {
        case "file":
          #expect(status.st_mode & S_IFMT == S_IFREG && Int(status.st_mode & 0o777) == entry["mode"] as! Int, "\(full) mode")
          #expect(try Self.sha256(full) == entry["sha256"] as! String, "\(full) content")
        case "folder":
          #expect(status.st_mode & S_IFMT == S_IFDIR, "\(full)")
          if !path.isEmpty { #expect(Int(status.st_mode & 0o777) == entry["mode"] as! Int, "\(full) mode") }
        default:
          #expect(status.st_mode & S_IFMT == S_IFLNK, "\(full)")
          #expect(try FileManager.default.destinationOfSymbolicLink(atPath: full) == entry["target"] as! String)
        }
        let attributes = entry["xattrs"] as! [String: String]
        #expect(Self.attributes(full).filter { $0.key.hasPrefix("user.") && !$0.key.contains("mobile_container") }
                == Dictionary(uniqueKeysWithValues: attributes.map { ("user." + $0.key, $0.value) }), "\(full) attributes")
      }
    }
    // The encrypted backup's live database: 10 bytes shorter than recorded, written as it is.
    let differences = (report["containers"] as? [[String: Any]] ?? []).flatMap { $0["sizeDifferences"] as? [[String: Any]] ?? [] }
    if backup == "encrypted" {
      #expect(differences.count == 1)
      #expect(differences.first?["path"] as? String == "Library/Application Support/live.sqlite")
      #expect(differences.first?["manifestSize"] as? Int == 3010 && differences.first?["written"] as? Int == 3000)
    } else {
      #expect(differences.isEmpty)
    }
    #expect(try AppData.shell("python3 -c 'import json,sys,jsonschema; jsonschema.validate(json.loads(sys.stdin.read()), json.load(open(sys.argv[1])))' '\(AppData.packageRoot)/Docs/extract.schema.json' <<'EOF'\n\(result.output)\nEOF").status == 0)
  }

  /// The audit of OUT equals the backup's own report for the container, category by category,
  /// but for the metadata plist appdata writes (system) and the listed length differences: for
  /// an app as a package, a group as a container root, and --with-extensions.
  @Test(arguments: [("plain", "package"), ("encrypted", "package"), ("plain", "group"), ("encrypted", "extensions")])
  func theAuditOfOutEqualsTheBackupsReport(backup: String, shape: String) throws {
    let folder = Self.scratch("roundtrip")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let backupReport = try AppData.auditJSON("\(Self.fixtures)/\(backup)", environment: Self.environment)
    let backupContainers = Dictionary(uniqueKeysWithValues: (backupReport["containers"] as! [[String: Any]]).compactMap { item in
      (item["id"] as? String).map { ($0, item) }
    })
    let (id, out, arguments): (String, String, [String]) = switch shape {
    case "package": (Self.app, folder + "/app.xcappdata", [])
    case "group": ("group.com.example.extract", folder + "/group", [])
    default: (Self.app, folder + "/all", ["--with-extensions"])
    }
    let extracted = try AppData.run(["extract", "--app", id, "-o", out, "--json"] + arguments + ["\(Self.fixtures)/\(backup)"], environment: Self.environment)
    #expect(extracted.status == 0, "\(extracted.error)")
    let differences = (try extracted.json()["containers"] as? [[String: Any]] ?? []).reduce(0) { sum, container in
      sum + (container["sizeDifferences"] as? [[String: Any]] ?? []).reduce(0) { $0 + ($1["manifestSize"] as! Int) - ($1["written"] as! Int) }
    }
    let audit = try AppData.auditJSON(out)
    let reports: [[String: Any]] = shape == "extensions" ? audit["containers"] as! [[String: Any]] : [audit]
    #expect(reports.count == (shape == "extensions" ? 3 : 1))
    var backupBytes = 0
    var outBytes = 0
    for report in reports {
      let reportID = report["id"] as? String
      let original = try #require(backupContainers[reportID ?? ""], "\(String(describing: reportID))")
      for category in ["critical", "offline", "cached", "temporary", "other"] {
        let files = { (item: [String: Any]) in integer(item, "summary", "categories", category, "files") }
        #expect(files(report) == files(original), "\(reportID ?? "?") \(category) files")
        backupBytes += integer(original, "summary", "categories", category, "bytes") ?? 0
        outBytes += integer(report, "summary", "categories", category, "bytes") ?? 0
      }
      #expect(integer(report, "summary", "categories", "system", "files") == (shape == "package" ? 0 : 1))
    }
    #expect(backupBytes - outBytes == differences, "backup \(backupBytes), out \(outBytes), listed \(differences)")
    if backup == "encrypted" && shape != "group" { #expect(differences == 10) }
  }

  static let hasReferenceReader = (try? AppData.shell("python3 -c 'import iphone_backup_decrypt'").status) == 0

  /// The generator writes the real format: iphone_backup_decrypt (PyPI), an independent reader,
  /// opens its encrypted backup with the password and returns each file's bytes (an empty file
  /// has no key, and that reader does not decrypt it).
  @Test(.enabled(if: hasReferenceReader, "iphone_backup_decrypt is not installed (make test-deps installs it)"))
  func anIndependentReaderReadsTheGeneratorsEncryptedBackup() throws {
    let script = """
      import importlib.util, json, hashlib, sys
      spec = importlib.util.spec_from_file_location("b", sys.argv[2] + "/Scripts/make-test-backup.py")
      b = importlib.util.module_from_spec(spec); spec.loader.exec_module(b)
      from iphone_backup_decrypt import EncryptedBackup
      backup = EncryptedBackup(backup_directory=sys.argv[1] + "/encrypted", passphrase=b.PASSWORD)
      same = differ = 0
      for domain, entries in json.load(open(sys.argv[1] + "/expected.json")).items():
          for path, entry in entries.items():
              if entry["kind"] != "file" or entry["length"] == 0:
                  continue
              data = backup.extract_file_as_bytes(path, domain_like=domain)
              if hashlib.sha256(data).hexdigest() == entry["sha256"]:
                  same += 1
              else:
                  differ += 1
      print(same, differ)
      """
    let result = try AppData.shell("python3 - '\(Self.fixtures)' '\(AppData.packageRoot)' <<'EOF'\n\(script)\nEOF")
    #expect(result.status == 0, "\(result.error)")
    #expect(result.output.split(separator: "\n").last == "8 0", "\(result.output)")
  }

  /// An existing OUT is refused; --force replaces only what appdata made (an earlier extract,
  /// marked user.appdata.extract) or an empty folder, and the refusal says --force only then.
  @Test func anExistingOutIsRefusedAndForceReplacesOnlyAnEarlierExtractOrAnEmptyFolder() throws {
    let folder = Self.scratch("exists")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let out = folder + "/app.xcappdata"
    try FileManager.default.createDirectory(atPath: out + "/mine", withIntermediateDirectories: true)
    let refused = try AppData.run(["extract", "--app", Self.app, "-o", out, "\(Self.fixtures)/plain"])
    #expect(refused.status == 2)
    #expect(refused.error == "appdata: error: \(out): already exists; appdata extract never writes over it\n", "\(refused.error)")
    let forcedOnMine = try AppData.run(["extract", "--force", "--app", Self.app, "-o", out, "\(Self.fixtures)/plain"])
    #expect(forcedOnMine.status == 2)
    #expect(forcedOnMine.error == "appdata: error: \(out): holds what appdata did not make ('mine'); --force replaces only an earlier appdata extract "
            + "(its folder carries the extended attribute user.appdata.extract) or an empty folder\n", "\(forcedOnMine.error)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["app.xcappdata"])
    #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["mine"])
    // An empty folder is replaced; so is an earlier extraction, which says so.
    try FileManager.default.removeItem(atPath: out + "/mine")
    #expect(try AppData.run(["extract", "--force", "--app", Self.app, "-o", out, "\(Self.fixtures)/plain"]).status == 0)
    #expect(Self.attributes(out)["user.appdata.extract"] == "31")
    let again = try AppData.run(["extract", "--app", Self.app, "-o", out, "\(Self.fixtures)/plain"])
    #expect(again.error.hasSuffix("never writes over it (--force replaces it once the new one is complete)\n"), "\(again.error)")
    try "stale".write(toFile: out + "/AppData/Documents/stale.txt", atomically: false, encoding: .utf8)
    let forced = try AppData.run(["extract", "--force", "--app", Self.app, "-o", out, "\(Self.fixtures)/plain"])
    #expect(forced.status == 0, "\(forced.error)")
    #expect(!FileManager.default.fileExists(atPath: out + "/AppData/Documents/stale.txt"))
    #expect(FileManager.default.fileExists(atPath: out + "/AppData/Documents/notes.txt"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["app.xcappdata"])
  }

  @Test func aWrongPasswordOrAnUnknownIDWritesNothing() throws {
    let folder = Self.scratch("refused")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let wrong = try AppData.run(["extract", "--app", Self.app, "-o", folder + "/out", "\(Self.fixtures)/encrypted"],
                                environment: ["APPDATA_BACKUP_PASSWORD": "wrong"])
    #expect(wrong.status == 2)
    #expect(wrong.error.contains("wrong password"))
    let unknown = try AppData.run(["extract", "--app", "com.example.extrct", "-o", folder + "/out", "\(Self.fixtures)/plain"])
    #expect(unknown.status == 2)
    #expect(unknown.error.contains("/plain: the backup holds no app, group or plugin 'com.example.extrct' (did you mean 'com.example.extract'?)"),
            "\(unknown.error)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    let dryRun = try AppData.run(["extract", "--dry-run", "--app", Self.app, "-o", folder + "/out", "\(Self.fixtures)/plain"])
    #expect(dryRun.status == 0 && dryRun.output.contains("Would write"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
  }

  /// A hostile manifest: each bad row has its finding, none is written, nothing lands outside
  /// OUT, and nothing crashes.
  @Test func hostileManifestsWriteNothingOutsideOut() throws {
    let folder = Self.scratch("hostile")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Self.backupOfRows("""
      [folder_row(""), folder_row("Documents"), file_row("Documents/ok.txt", b"ok"),
       file_row("../escape.txt", b"x"), file_row("/abs.txt", b"x"), file_row("Documents//empty-component", b"x"),
       file_row("Documents/./dot", b"x"),
       link_row("Documents/a", "/etc"), file_row("Documents/a/passwd", b"pwned"),
       link_row("Documents/l1", "l2"), link_row("Documents/l2", "../../.."),
       file_row("Documents/payload-link", b"x"), file_row("Documents/payload-fifo", b"x")]
      """, app: "com.example.evil", in: folder, after: """
      # A second row with the same path (another fileID: the generator derives it from the path).
      import sqlite3
      db = sqlite3.connect(os.path.join(folder, "Manifest.db"))
      db.execute("INSERT INTO Files VALUES (?, ?, ?, 1, ?)", ("f" * 40, d, "Documents/ok.txt", x.mbfile("Documents/ok.txt", file_row("Documents/ok.txt", b"again"), 5)))
      db.commit()
      db.close()
      for name in ("Documents/payload-link", "Documents/payload-fifo"):
          identifier = b.file_id(d, name)
          stored = os.path.join(folder, identifier[:2], identifier)
          os.remove(stored)
          if name.endswith("link"):
              os.symlink("/etc/hostname", stored)
          else:
              os.mkfifo(stored)
      """)
    let out = folder + "/work/out"
    try FileManager.default.createDirectory(atPath: folder + "/work", withIntermediateDirectories: true)
    let result = try AppData.run(["extract", "--app", "com.example.evil", "-o", out, "--json", folder + "/backup"])
    #expect(result.status == 1, "\(result.error)")
    let problems = (try result.json()["problems"] as? [[String: Any]] ?? []).map { "\($0["path"] as! String): \($0["message"] as! String)" }
    for expected in ["../escape.txt: not written: its path has a '..' component", "/abs.txt: not written: its path starts with '/'",
                     "Documents//empty-component: not written: its path has an empty component",
                     "Documents/./dot: not written: its path has a '.' component",
                     "Documents/ok.txt: not written: a second row with the same path",
                     "Documents/a: a symlink to '/etc', which is absolute: written as a file holding its target",
                     "Documents/l2: a symlink to '../../..', which climbs out of the container: written as a file holding its target",
                     "Documents/payload-link: not written: its payload",
                     "Documents/payload-fifo: not written: its payload"] {
      #expect(problems.contains { $0.hasPrefix(expected) }, "\(expected) in \(problems)")
    }
    // Documents/a is a file holding "/etc", so Documents/a/passwd has no folder to go in.
    #expect(problems.contains { $0.hasPrefix("Documents/a/passwd: not written") }, "\(problems)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/work") == ["out"])
    #expect(try String(contentsOfFile: out + "/Documents/ok.txt", encoding: .utf8) == "ok")
    #expect(try String(contentsOfFile: out + "/Documents/a", encoding: .utf8) == "/etc")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: out + "/Documents/l1") == "l2")
    #expect(!FileManager.default.fileExists(atPath: folder + "/escape.txt") && !FileManager.default.fileExists(atPath: "/abs.txt"))
    #expect(!FileManager.default.fileExists(atPath: out + "/Documents/payload-link"))
  }

  /// Many files, more than the writing threads' queue holds many times over (it waits when
  /// full, and drops the jobs taken): every one byte-identical, with its mode and time.
  @Test(arguments: ["plain", "encrypted"])
  func manyFilesAreAllWrittenWhateverTheThreadsTimings(backup: String) throws {
    let folder = Self.scratch("many")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    #expect(try AppData.shell("python3 '\(AppData.packageRoot)/Scripts/make-extract-backup.py' '\(folder)/fixtures' --files 300 --file-size 3001").status == 0)
    let result = try AppData.run(["extract", "--app", Self.app, "-o", folder + "/out", "--json", "\(folder)/fixtures/\(backup)"],
                                 environment: Self.environment)
    #expect(result.status == 0, "\(result.error)")
    let container = (try result.json()["containers"] as? [[String: Any]])?.first
    #expect(container?["files"] as? Int == 307 && container?["folders"] as? Int == 9, "\(String(describing: container))")
    let check = try AppData.shell("""
      python3 - '\(folder)' <<'EOF'
      import hashlib, json, os, sys
      expected = json.load(open(sys.argv[1] + "/fixtures/expected.json"))["AppDomain-\(Self.app)"]
      wrong = []
      for path, entry in expected.items():
          if entry["kind"] != "file": continue
          full = os.path.join(sys.argv[1], "out", path)
          status = os.lstat(full)
          if hashlib.sha256(open(full, "rb").read()).hexdigest() != entry["sha256"] or status.st_mode & 0o777 != entry["mode"] \\
             or int(status.st_mtime) != entry["mtime"]:
              wrong.append(path)
      print(len([e for e in expected.values() if e["kind"] == "file"]), wrong)
      EOF
      """)
    #expect(check.output.trimmingCharacters(in: .whitespacesAndNewlines) == "307 []", "\(check.output) \(check.error)")
  }

  /// Encrypted payloads that do not decrypt (not whole blocks; a last block whose PKCS#7 padding
  /// is invalid) are findings: exit 1, their files not in OUT, and every other file written.
  /// Such a file is removed only once writing has stopped, so a row below it finds a file there
  /// (and is not written), whichever thread wrote what first.
  @Test func damagedEncryptedPayloadsAreFindingsAndLeaveNoFile() throws {
    let folder = Self.scratch("damaged")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let script = """
      import hashlib
      d = "AppDomain-com.example.damaged"
      folder_row = lambda p: (d, p, "folder", 0o755, 1, None, None, {}, 0)
      file_row = lambda p, c: (d, p, "file", 0o644, 1, c, None, {}, 3)
      rows = [folder_row(""), folder_row("Documents"), file_row("Documents/ok.txt", b"ok" * 5000),
              file_row("Documents/notes.txt", b"hello from the backup\\n" * 50), file_row("Documents/notes.txt/child.txt", b"x"),
              file_row("Documents/caf\\u00e9.txt", "caf\\u00e9 au lait".encode())]
      backup = sys.argv[1] + "/backup"
      x.write_encrypted(backup, rows, ["com.example.damaged"])
      # notes.txt without its last block ends in an 'm', no PKCS#7 padding; café.txt without
      # its last 5 bytes is not whole blocks.
      for path, cut in (("Documents/notes.txt", 16), ("Documents/caf\\u00e9.txt", 5)):
          identifier = hashlib.sha1((d + "-" + path).encode()).hexdigest()
          stored = os.path.join(backup, identifier[:2], identifier)
          os.truncate(stored, os.path.getsize(stored) - cut)
      """
    #expect(try Self.runWithGenerator(script, in: folder).status == 0)
    let out = folder + "/out"
    let result = try AppData.run(["extract", "--app", "com.example.damaged", "-o", out, "--json", folder + "/backup"], environment: Self.environment)
    #expect(result.status == 1, "\(result.error)")
    let problems = (try result.json()["problems"] as? [[String: Any]] ?? []).map { "\($0["path"] as! String): \($0["message"] as! String)" }
    #expect(problems == [
      "Documents/café.txt: not written: its payload cannot be decrypted: not a whole number of 16-byte AES blocks",
      "Documents/notes.txt: not written: its payload cannot be decrypted: its PKCS#7 padding is invalid (a wrong key, or a damaged payload)",
      "Documents/notes.txt/child.txt: not written: its folder cannot be opened without following a symlink (Not a directory)",
    ], "\(problems)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: out + "/Documents").sorted() == ["ok.txt"])
    #expect(try String(contentsOfFile: out + "/Documents/ok.txt", encoding: .utf8) == String(repeating: "ok", count: 5000))
    // --fail-on applies: never, and the same findings exit 0.
    let tolerated = try AppData.run(["extract", "-q", "--fail-on", "never", "--app", "com.example.damaged", "-o", folder + "/again", folder + "/backup"],
                                    environment: Self.environment)
    #expect(tolerated.status == 0, "\(tolerated.error)")
    #expect(tolerated.error == "appdata: warning: \(folder)/backup: 3 entries not written: Documents/café.txt, Documents/notes.txt, "
            + "Documents/notes.txt/child.txt (the rest are in \(folder)/again)\n", "\(tolerated.error)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["again", "backup", "out"])
  }

  /// SIGTERM in the middle of an extraction (paused at its third checkpoint): OUT does not exist
  /// and nothing is left beside it.
  @Test(arguments: ["SIGTERM", "SIGINT", "SIGHUP"])
  func anInterruptLeavesNothing(signal: String) throws {
    let folder = Self.scratch("interrupt")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let out = folder + "/out.xcappdata"
    let result = try AppData.runPaused(["extract", "--app", Self.app, "-o", out, "\(Self.fixtures)/encrypted"], at: "extract",
                                       environment: Self.environment, withProcess: { process in
      let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { !$0.hasSuffix(".owner") }
      #expect(names.count == 1 && names.allSatisfy { $0.hasPrefix(".out.xcappdata.appdata-extract-partial-") }, "\(names)")
      kill(process.processIdentifier, signal == "SIGTERM" ? SIGTERM : signal == "SIGHUP" ? SIGHUP : SIGINT)
      // Released from the pause only once the process has ended: the signal is heard first.
      process.waitUntilExit()
    })
    #expect(result.status == (signal == "SIGTERM" ? 143 : signal == "SIGHUP" ? 129 : 130), "\(result.status) \(result.error)")
    #expect(result.error.contains("interrupted; nothing was written"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
  }

  /// Issue 52: a signal the process was started ignoring (`nohup`) stays ignored; SignalCatcher
  /// does not catch it. The hang-up comes while the extraction is paused; it then finishes.
  @Test func aHangUpIgnoredFromTheStartStaysIgnored() throws {
    let folder = Self.scratch("nohup")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let out = folder + "/out.xcappdata"
    let result = try AppData.runPaused(["extract", "--app", Self.app, "-o", out, "\(Self.fixtures)/encrypted"], at: "extract",
                                       environment: Self.environment, ignoringHangUp: true, withProcess: { process in
      kill(process.processIdentifier, SIGHUP)
    })
    #expect(result.status == 0, "\(result.status) \(result.error)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["out.xcappdata"])
  }

  /// SIGKILL at each checkpoint in turn (after each entry, before the rename): OUT never
  /// exists, only the partial folder is left, and the next run removes it and finishes.
  @Test func killedAtEveryCheckpointLeavesOnlyThePartialFolderWhichTheNextRunRemoves() throws {
    let folder = Self.scratch("killed")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let out = folder + "/out"
    var stop = 1
    while true {
      let killed = try AppData.run(["extract", "--test-stop-after", String(stop), "--app", Self.app, "-o", out, "\(Self.fixtures)/plain"])
      if killed.status == 0 { break }
      #expect(killed.status == 137 || killed.status == -9 || killed.status == 9, "checkpoint \(stop): \(killed.status)")
      #expect(try Self.onlyAPartialFolder(in: folder), "checkpoint \(stop)")
      stop += 1
      #expect(stop < 100)
      if stop >= 100 { break }
    }
    #expect(stop > 10)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["out"])
    try FileManager.default.removeItem(atPath: out)
    // A partial folder left by a killed run is removed by the next one.
    _ = try AppData.run(["extract", "--test-stop-after", "3", "--app", Self.app, "-o", out, "\(Self.fixtures)/plain"])
    #expect(try Self.onlyAPartialFolder(in: folder))
    #expect(try AppData.run(["extract", "--app", Self.app, "-o", out, "\(Self.fixtures)/plain"]).status == 0)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["out"])
  }

  /// Whether `folder` holds one thing: a partial folder for `out` (`.out.appdata-extract-partial-`
  /// and the run's token), with its owner record beside it (`OwnedArtifact`).
  static func onlyAPartialFolder(in folder: String) throws -> Bool {
    let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    return names.count == 2 && names[0].hasPrefix(".out.appdata-extract-partial-") && names[1] == names[0] + ".owner"
  }

  /// A full filesystem (a 512 KiB tmpfs, as root): exit 2, nothing left behind.
  @Test(.enabled(if: AppData.isRoot, "mounting a tmpfs needs root"))
  func aFullFilesystemLeavesNothing() throws {
    let folder = Self.scratch("full")
    defer {
      _ = try? AppData.shell("umount '\(folder)'")
      try? FileManager.default.removeItem(atPath: folder)
    }
    #expect(try AppData.shell("mount -t tmpfs -o size=64k tmpfs '\(folder)'").status == 0)
    let result = try AppData.run(["extract", "--app", Self.app, "-o", folder + "/out", "\(Self.fixtures)/plain"])
    #expect(result.status == 2, "\(result.error)")
    #expect(result.error.contains("No space left on device"), "\(result.error)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
  }

  /// A backup inside an archive (a tgz of a folder of backups, a zip of one backup) extracts as
  /// its folder does, read as audit reads it: its manifest into memory, then its payloads in a
  /// second pass over the archive. A payload the archive lacks is named.
  @Test func anArchivedBackupExtractsAsItsFolderDoes() throws {
    let folder = Self.scratch("archived")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let fixtures = Self.fixtures
    #expect(try AppData.shell("cd '\(fixtures)' && tar czf '\(folder)/backups.tgz' plain encrypted && cd plain && zip -qr '\(folder)/one.zip' .").status == 0)
    let fromFolder = try AppData.run(["extract", "-q", "--app", Self.app, "-o", folder + "/folder", "\(fixtures)/plain"])
    #expect(fromFolder.status == 0)
    let refused = try AppData.run(["extract", "--app", Self.app, "-o", folder + "/x", folder + "/backups.tgz"])
    #expect(refused.status == 2 && refused.error.contains("holds 2 backups; name the one to extract from with --root (encrypted, plain)"), "\(refused.error)")
    for (arguments, out) in [(["--root", "plain", folder + "/backups.tgz"], "tgz"), (["--root", "encrypted", folder + "/backups.tgz"], "tgz-encrypted"),
                             ([folder + "/one.zip"], "zip")] {
      let result = try AppData.run(["extract", "-q", "--app", Self.app, "-o", folder + "/" + out] + arguments, environment: Self.environment)
      #expect(result.status == 0, "\(out): \(result.error)")
      #expect(try AppData.shell("diff -r '\(folder)/folder' '\(folder)/\(out)'").status == 0, "\(out) differs from the folder's extraction")
    }
    // An archive without one payload: that file is named, the rest extracted.
    let missing = try AppData.shell("cd '\(fixtures)/plain' && tar cf '\(folder)/partial.tar' --exclude=\"$(python3 -c \"import hashlib;print(hashlib.sha1(b'AppDomain-com.example.extract-Documents/notes.txt').hexdigest())\")\" .")
    #expect(missing.status == 0, "\(missing.error)")
    let partial = try AppData.run(["extract", "--json", "--app", Self.app, "-o", folder + "/partial", folder + "/partial.tar"])
    #expect(partial.status == 1, "\(partial.error)")
    let problems = (try partial.json()["problems"] as? [[String: Any]] ?? []).map { "\($0["path"] as! String): \($0["message"] as! String)" }
    #expect(problems.count == 1 && problems[0].hasPrefix("Documents/notes.txt: not written: its payload") && problems[0].hasSuffix("is not in the archive"), "\(problems)")
  }

  /// A folder of backups: several without --root are refused by name; --root names one.
  @Test func aFolderOfBackupsNeedsRoot() throws {
    let folder = Self.scratch("root")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    #expect(try AppData.shell("mkdir -p '\(folder)/Backup' && cp -r '\(Self.fixtures)/plain' '\(folder)/Backup/A' && cp -r '\(Self.fixtures)/plain' '\(folder)/Backup/B'").status == 0)
    let refused = try AppData.run(["extract", "--app", Self.app, "-o", folder + "/out", folder + "/Backup"])
    #expect(refused.status == 2)
    #expect(refused.error.contains("holds 2 backups; name the one to extract from with --root (A, B)"), "\(refused.error)")
    let chosen = try AppData.run(["extract", "--root", "B", "--app", Self.app, "-o", folder + "/out", folder + "/Backup"])
    #expect(chosen.status == 0, "\(chosen.error)")
  }
}
