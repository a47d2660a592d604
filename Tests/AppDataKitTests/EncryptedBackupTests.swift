@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Testing

/// `appdata audit BACKUP` on encrypted backups (Scripts/make-test-backup.py encrypts copies of
/// the plain backup with Python's `cryptography`): the password from each of its inputs, the
/// manifest decrypted in memory only, and the plain backup's figures exactly.
@Suite("encrypted device backups", .serialized)
struct EncryptedBackupTests {
  static var fixtures: String { BackupTests.fixtures }
  /// The fixtures' password: spaces (one at the end) and non-ASCII characters.
  static let password = "correct horse \u{E9}t\u{E9} \u{96FB}\u{6C60} "
  static var withPassword: [String: String] { ["APPDATA_BACKUP_PASSWORD": password] }
  static var encrypted: String { fixtures + "/encrypted" }

  /// A report with the fixture's name and encryption replaced by the plain backup's, and the
  /// stored-copy findings' messages (which say how an encrypted copy's length was checked)
  /// left out: what must be identical to the plain backup's report.
  static func normalized(_ output: String, from name: String) throws -> NSDictionary {
    let text = output.replacingOccurrences(of: fixtures + "/" + name, with: fixtures + "/plain")
    var json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    var backup = json["backup"] as? [String: Any]
    backup?["isEncrypted"] = nil
    json["backup"] = backup
    dropStoredCopyMessages(&json)
    return json as NSDictionary
  }

  @Test(arguments: ["encrypted", "encrypted-old-keybag", "encrypted-trailing", "encrypted-pre-10.2"])
  func anEncryptedBackupGivesThePlainBackupsFigures(name: String) throws {
    let arguments = ["audit", "--no-config", "--format", "json", "--fail-on", "never", "--list", "all", "--all-domains", "--verify"]
    let plain = try AppData.run(arguments + [BackupTests.plain])
    #expect(plain.status == 0, "\(plain.error)")
    // Before iOS 10.2 the manifest is plaintext: no password needed, none asked for.
    let environment = name == "encrypted-pre-10.2" ? [:] : Self.withPassword
    let result = try AppData.run(arguments + [Self.fixtures + "/" + name], environment: environment)
    #expect(result.status == 0, "\(result.error)")
    #expect(result.error.isEmpty)
    let json = try result.json()
    #expect(value(json, "backup", "isEncrypted") as? Bool == true)
    #expect(try Self.normalized(result.output, from: name) == (try Self.normalized(plain.output, from: "plain")))
    #expect(integer(json, "summary", "backup", "bytes") == 5_002_006_720)
    // The table says the backup is encrypted, and otherwise shows what the plain one shows.
    let table = try AppData.run(["audit", "--no-config", Self.fixtures + "/" + name], environment: environment)
    let plainTable = try AppData.run(["audit", "--no-config", BackupTests.plain])
    #expect(table.status == 1)
    #expect(table.output.contains("Backup: Test iPhone, iOS 17.1, 2026-11-01T12:00:00Z, snapshot finished, encrypted\n"))
    let body = { (text: String) in text.split(separator: "\n").dropFirst(3).joined(separator: "\n") }
    #expect(body(table.output) == body(plainTable.output))
  }

  @Test func verifyAcceptsStoredCopiesLongerThanTheirSize() throws {
    for name in ["encrypted", "encrypted-pre-10.2"] {
      let json = try AppData.auditJSON(Self.fixtures + "/" + name, ["--no-config", "--verify"], environment: Self.withPassword)
      let all = (json["containers"] as? [[String: Any]] ?? []).flatMap { findings($0) }
      // Every other stored copy is padded past its Size: not a finding in an encrypted backup.
      #expect(all.filter { $0["rule"] as? String == "backup-file-missing" }.map { $0["path"] as? String } == ["Documents/big.mov"], "\(name)")
      let short = all.filter { $0["rule"] as? String == "backup-file-size-mismatch" }
      #expect(short.map { $0["path"] as? String } == ["Library/Preferences/com.example.notes.plist"], "\(name)")
      #expect((short.first?["message"] as? String)?.hasSuffix(
        "is 199 bytes, shorter than the 200 the manifest records (an encrypted copy is at least as long)") == true, "\(name)")
    }
  }

  @Test(.enabled(if: AppData.has("script"), "needs script(1) for the prompt in a pseudo-terminal"))
  func everyPasswordInputOpensIt() throws {
    let expected = 5_002_006_720
    let tree = try TestTree("password")
    // A password file: its first line only (the second is not part of it), CRLF or LF.
    let file = try tree.file("password", contents: Array((Self.password + "\r\nsecond line\n").utf8))
    let fromFile = try AppData.auditJSON(Self.encrypted, ["--no-config", "--password-file", file])
    #expect(integer(fromFile, "summary", "backup", "bytes") == expected)
    // The options come before the environment.
    let overEnvironment = try AppData.auditJSON(Self.encrypted, ["--no-config", "--password-file", file],
                                                environment: ["APPDATA_BACKUP_PASSWORD": "wrong"])
    #expect(integer(overEnvironment, "summary", "backup", "bytes") == expected)
    let fromStandardInput = try AppData.run(["audit", "--no-config", "--json", "--fail-on", "never", "--password-stdin", Self.encrypted],
                                            input: Self.password + "\n")
    #expect(fromStandardInput.status == 0, "\(fromStandardInput.error)")
    #expect(integer(try fromStandardInput.json(), "summary", "backup", "bytes") == expected)
    let fromEnvironment = try AppData.auditJSON(Self.encrypted, ["--no-config"], environment: Self.withPassword)
    #expect(integer(fromEnvironment, "summary", "backup", "bytes") == expected)
    // --password-file - is standard input.
    let dash = try AppData.run(["audit", "--no-config", "--json", "--fail-on", "never", "--password-file", "-", Self.encrypted],
                               input: Self.password + "\n")
    #expect(dash.status == 0, "\(dash.error)")
    #expect(integer(try dash.json(), "summary", "backup", "bytes") == expected)
    // At a terminal (a pseudo-terminal from script(1)): a prompt on standard error, typed without
    // echo; --password-stdin and --password-file - at a terminal do not echo either.
    for options in ["", "--password-stdin", "--password-file -"] {
      // A pseudo-terminal: the password is typed once the prompt is there (appdata writes it
      // after turning echo off), no sleep.
      let arguments = ["audit", "--no-config", "--fail-on", "never", "-q"] + options.split(separator: " ").map(String.init) + [Self.encrypted]
      let typed = try Self.typing([Self.password], into: arguments)
      #expect(typed.status == 0, "\(typed.output)\(typed.error)")
      #expect(typed.output.contains("Password for the encrypted backup \(Self.encrypted): "))
      #expect(typed.output.contains("[backup-holds-excluded]"))
      #expect(!typed.output.contains("horse"), "the password was echoed with '\(options)': \(typed.output)")
    }
  }

  /// Runs appdata with `arguments` on a pseudo-terminal driven by Python, typing each of
  /// `passwords` once a prompt for it is there; what the terminal showed, and the exit status.
  static func typing(_ passwords: [String], into arguments: [String]) throws -> RunResult {
    try AppData.shell("""
      python3 - "$APPDATA" \(passwords.map { "'\($0)'" }.joined(separator: " ")) -- \(arguments.map { "'\($0)'" }.joined(separator: " ")) <<'EOF'
      import os, pty, sys
      separator = sys.argv.index("--")
      binary, passwords, rest = sys.argv[1], sys.argv[2:separator], sys.argv[separator + 1:]
      pid, fd = pty.fork()
      if pid == 0:
          os.execv(binary, [binary] + rest)
      seen = b""
      for password in passwords:
          start = len(seen)
          while b"Password for" not in seen[start:] or not seen.endswith(b": "):
              seen += os.read(fd, 4096)
          os.write(fd, password.encode() + b"\\n")
      while True:
          try:
              chunk = os.read(fd, 4096)
          except OSError:
              break
          if not chunk:
              break
          seen += chunk
      sys.stdout.write(seen.decode("utf-8", "replace"))
      sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
      EOF
      """)
  }

  /// Issue 41: at a prompt, three tries, as sudo and ssh give; never more than one from a file,
  /// standard input or the environment (the case below).
  @Test(arguments: ["audit", "extract"])
  func aPromptGivesThreeTries(command: String) throws {
    let folder = ExtractTests.scratch("tries")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let arguments = command == "audit" ? ["audit", "--no-config", "--fail-on", "never", "-q", Self.encrypted]
      : ["extract", "-q", "--fail-on", "never", "--app", "com.example.my-app", "-o", folder + "/out", Self.encrypted]
    let third = try Self.typing(["wrong one", "wrong two", Self.password], into: arguments)
    #expect(third.status == 0, "\(third.output)")
    #expect(third.output.components(separatedBy: "Sorry, that password does not open the backup; try again.").count == 3, "\(third.output)")
    let never = try Self.typing(["a", "b", "c"], into: arguments.map { $0 == folder + "/out" ? folder + "/out2" : $0 })
    #expect(never.status == 2, "\(never.output)")
    #expect(never.output.contains("wrong password for this encrypted backup"))
    #expect(never.output.components(separatedBy: "Password for").count == 4, "three prompts: \(never.output)")
  }

  @Test func aWrongOrMissingPasswordIsRefusedWithNoReport() throws {
    let files = try TestTree("password")
    let folder = files.root
    let empty = try files.file("empty", contents: Array("\n".utf8))
    let e = Self.encrypted
    let cases: [(arguments: [String], environment: [String: String], input: String?, message: String)] = [
      ([], ["APPDATA_BACKUP_PASSWORD": "correct horse"], nil,
       "\(e): wrong password for this encrypted backup (the keybag's class key does not unwrap with it)"),
      // Trimming is not done: the trailing space is part of the password.
      (["--password-stdin"], [:], String(Self.password.dropLast()) + "\n",
       "\(e): wrong password for this encrypted backup (the keybag's class key does not unwrap with it)"),
      ([], [:], nil,
       "\(e): an encrypted backup, and no password given: set APPDATA_BACKUP_PASSWORD, or use --password-file FILE or --password-stdin (at a terminal, appdata asks for it)"),
      ([], ["APPDATA_BACKUP_PASSWORD": ""], nil,
       "APPDATA_BACKUP_PASSWORD is set but empty (a CI secret that is not defined here?); \(e) needs its password"),
      (["--password-file", empty], [:], nil, "\(empty): its first line is empty; \(e) needs its password"),
      (["--password-file", folder + "/missing"], [:], nil, "\(folder)/missing: cannot read the password file: No such file or directory"),
      (["--password-stdin"], [:], "", "the first line of standard input is empty; \(e) needs its password"),
      (["--password-stdin", "--password-file", empty], [:], nil,
       "'--password-stdin' and '--password-file' cannot be given together: the password comes from one place"),
    ]
    let before = try BackupTests.snapshot(e)
    for item in cases {
      for format in ["table", "json"] {
        let result = try AppData.run(["audit", "--no-config", "--format", format] + item.arguments + [e],
                                     environment: item.environment, input: item.input)
        #expect(result.status == 2, "\(item.message)")
        #expect(result.output.isEmpty, "\(item.message)")
        #expect(result.error == "appdata: error: \(item.message)\n")
      }
    }
    // A password is never an option's value, and a value given anyway is not repeated.
    let asValue = try AppData.run(["audit", "--password=hunter2", e])
    #expect(asValue.status == 2)
    #expect(!asValue.error.contains("hunter2"))
    // Comparing a container with an encrypted backup needs its password too.
    let tree = try TestTree("encrypted-compare")
    try tree.file("Documents/note.txt", size: 1000)
    let plist = #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>MCMMetadataIdentifier</key><string>com.example.notes</string></dict></plist>"#
    try tree.file(ContainerLayout.metadataFileName, contents: Array(plist.utf8))
    let compared = try AppData.run(["audit", "--no-config", "--backup", e, tree.root])
    #expect(compared.status == 2)
    #expect(compared.error.contains("an encrypted backup, and no password given"))
    let json = try AppData.auditJSON(tree.root, ["--no-config", "--backup", e], environment: Self.withPassword)
    #expect(integer(json, "backupComparison", "inBoth", "bytes") == 1000)
    #expect(try BackupTests.snapshot(e) == before)
  }

  @Test func decryptedDataNeverReachesAFile() throws {
    // A fresh TMPDIR, and (as root) a fresh /dev/shm in a mount namespace of its own: both stay
    // empty while appdata decrypts, reads and reports; the backup folder stays byte-identical.
    let before = try BackupTests.snapshot(Self.encrypted)
    let tmpdir = try TestTree("tmpdir")
    let scratch = tmpdir.root
    let command = tmpdir.scratch + "/audit.sh"
    try Data("""
      TMPDIR='\(scratch)' APPDATA_BACKUP_PASSWORD='\(Self.password)' "$APPDATA" audit --no-config --fail-on never \
        --verify --list all --format ndjson '\(Self.encrypted)' > /dev/null
      """.utf8).write(to: URL(fileURLWithPath: command))
    let script = AppData.isRoot
      ? "unshare --mount sh -c 'mount -t tmpfs none /dev/shm && sh \(command) && ls -A /dev/shm'"
      : "sh \(command)"
    let result = try AppData.shell(script)
    #expect(result.status == 0, "\(result.error)")
    #expect(result.output.isEmpty, "/dev/shm: \(result.output)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
    #expect(try BackupTests.snapshot(Self.encrypted) == before)
    #expect(!FileManager.default.fileExists(atPath: Self.encrypted + "/Manifest.db-wal"))
  }

  @Test func aDamagedEncryptedBackupIsRefusedInOneLine() throws {
    let f = Self.fixtures
    let cut = try #require(try FileManager.default.attributesOfItem(atPath: f + "/encrypted-damaged-blocks/Manifest.db")[.size] as? Int)
    #expect(cut % 16 == 11)
    let cases: [(String, String)] = [
      ("encrypted-no-keybag", "\(f)/encrypted-no-keybag: an encrypted backup whose Manifest.plist has no BackupKeyBag (the keys the password unlocks); it is damaged"),
      ("encrypted-damaged-short-key", "\(f)/encrypted-damaged-short-key: an encrypted backup whose Manifest.plist has a ManifestKey of 3 bytes, too short to hold a key; it is damaged"),
      ("encrypted-damaged-keybag", "\(f)/encrypted-damaged-keybag: an encrypted backup whose Manifest.plist's BackupKeyBag is damaged: a record is cut short at byte 24"),
      ("encrypted-damaged-class", "\(f)/encrypted-damaged-class: the keybag holds no password-wrapped key for protection class 11, which Manifest.plist's ManifestKey names; the backup is damaged"),
      ("encrypted-damaged-manifest-key", "\(f)/encrypted-damaged-manifest-key: cannot decrypt the backup manifest: Manifest.plist's ManifestKey does not unwrap with the key of its protection class 3"),
      ("encrypted-damaged-blocks", "\(f)/encrypted-damaged-blocks: cannot decrypt the backup manifest: \(f)/encrypted-damaged-blocks/Manifest.db is \(cut) bytes, not a whole number of 16-byte AES blocks"),
      ("encrypted-damaged-not-sqlite", "\(f)/encrypted-damaged-not-sqlite/Manifest.db: decrypted with the password, but not a SQLite database; it is damaged"),
    ]
    for (name, message) in cases {
      let result = try AppData.run(["audit", "--no-config", Self.fixtures + "/" + name], environment: Self.withPassword)
      #expect(result.status == 2, "\(name)")
      #expect(result.output.isEmpty, "\(name)")
      #expect(result.error == "appdata: error: \(message)\n", "\(name)")
    }
  }
}
