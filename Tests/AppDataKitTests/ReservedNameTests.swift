@testable import AppDataSystem
import Foundation
import Testing

/// Issue 48's acceptance: a name proves nothing. Every name appdata keeps for its own files
/// (the journal and its temporary file, partial copies, probes, hidden outputs, partial and
/// replaced extractions, owner records; this version's and earlier versions') is planted as a
/// user's data beside every place appdata writes, every writing command runs, and every byte
/// planted (content, mode, extended attributes, modification time) is found as it was.
@Suite("reserved names", .serialized)
struct ReservedNameTests {
  static let token = "0123456789abcdef0123456789abcdef"
  /// The token of the artifacts planted as a live run's: their records are valid and name
  /// them, and this test holds their locks, as a run still working would.
  static let liveToken = "fedcba9876543210fedcba9876543210"
  /// A record that parses but names another token: it proves nothing.
  static let bogusRecord = Array("appdata-owner 1 ffffffffffffffffffffffffffffffff file\n".utf8)
  /// The names of what appdata writes, whose hidden files take them (`.NAME.appdata-…`).
  static let outputNames = ["com.example.app.plist", "out", "report.json", "appdata.json", "rules.xml"]

  /// Each reserved name as a user's file or folder: (name, is a folder).
  static var planted: [(String, Bool)] {
    var names: [(String, Bool)] = [
      (".appdata-migration.journal.\(token)", false), (".appdata-migration.journal.\(token).owner", false),
      (".appdata-partial-0", true), (".appdata-partial-1234-abcd", false), (".appdata-partial-\(token)", true),
      (".appdata-marker-probe", false), (".appdata-marker-probe-\(token)", false), (".appdata-marker-probe-\(token).owner", false),
    ]
    // The same folder name once more, with a record: its own token, no lock, no identity.
    names.append((".appdata-partial-\(token)-with-record", true))
    for name in outputNames {
      names += [
        (".\(name).appdata-tmp", false), (".\(name).appdata-1234-abcd.tmp", false),
        (".\(name).appdata-\(token).tmp", false), (".\(name).appdata-\(token).tmp.owner", false),
        (".\(name).appdata-extract-partial", true), (".\(name).appdata-extract-replaced", true),
        (".\(name).appdata-extract-partial-1234-abcd", true),
        (".\(name).appdata-extract-partial-\(token)", true), (".\(name).appdata-extract-partial-\(token).owner", false),
      ]
    }
    return names
  }

  /// The artifacts planted as a live run's, `(prefix, suffix, is a folder)`: with their records
  /// unlocked they would be proven a dead run's and swept.
  static var live: [(String, String, Bool)] {
    var artifacts: [(String, String, Bool)] = [
      (".appdata-migration.journal.", "", false), (".appdata-partial-", "", true), (".appdata-marker-probe-", "", false),
    ]
    for name in outputNames {
      artifacts += [(".\(name).appdata-", ".tmp", false), (".\(name).appdata-extract-partial-", "", true)]
    }
    return artifacts
  }

  /// Plants every reserved name in `folder` (mode 0640 or 0750, a user attribute, a file
  /// inside each folder), and the live run's artifacts; returns the live records, locked.
  static func plant(in folder: String) throws -> [Int32] {
    let manager = FileManager.default
    try manager.createDirectory(atPath: folder, withIntermediateDirectories: true)
    for (name, isFolder) in planted {
      let path = folder + "/" + name.replacingOccurrences(of: "-with-record", with: "")
      if name.hasSuffix("-with-record") {
        // `.appdata-partial-TOKEN.owner`: a record of the right shape and token, unlocked, but
        // naming no file (as if its artifact were gone) while the folder is a user's.
        let record = Array("appdata-owner 1 \(token) folder\n0 0\n".utf8)
        try Data(record).write(to: URL(fileURLWithPath: path + ".owner"))
        _ = chmod(path + ".owner", 0o640)
        continue
      }
      if isFolder {
        try manager.createDirectory(atPath: path + "/mine", withIntermediateDirectories: true)
        try Data("a user's file in \(name)\n".utf8).write(to: URL(fileURLWithPath: path + "/mine/file.txt"))
        _ = chmod(path, 0o750)
      } else {
        let contents = name.hasSuffix(".owner") ? bogusRecord : Array("a user's \(name)\n".utf8)
        try Data(contents).write(to: URL(fileURLWithPath: path))
        _ = chmod(path, 0o640)
      }
      try ExtendedAttributes.setValue(Array("mine".utf8), of: "user.example.owner", atPath: path)
    }
    var locks: [Int32] = []
    for (prefix, suffix, isFolder) in live {
      let path = folder + "/" + prefix + liveToken + suffix
      if isFolder {
        try manager.createDirectory(atPath: path + "/half-written", withIntermediateDirectories: true)
      } else {
        try Data("a live run's file\n".utf8).write(to: URL(fileURLWithPath: path))
      }
      var status = stat()
      guard lstat(path, &status) == 0 else { throw TestFailure("lstat \(path)") }
      let record = "appdata-owner 1 \(liveToken) \(isFolder ? "folder" : "file")\n\(status.st_dev) \(status.st_ino)\n"
      try Data(record.utf8).write(to: URL(fileURLWithPath: path + ".owner"))
      let descriptor = open(path + ".owner", O_RDONLY | O_CLOEXEC)
      guard descriptor >= 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { throw TestFailure("lock \(path).owner") }
      locks.append(descriptor)
    }
    return locks
  }

  /// A container whose Caches hold what migrate moves, with the defaults plist's flag set.
  static func container(_ tree: TestTree, _ name: String) throws {
    try tree.file("\(name)/.com.apple.mobile_container_manager.metadata.plist", contents: Array("""
      <?xml version="1.0" encoding="UTF-8"?>
      <plist version="1.0"><dict><key>MCMMetadataIdentifier</key><string>com.example.app</string></dict></plist>
      """.utf8))
    try tree.file("\(name)/Library/Caches/Photos/a.jpg", size: 3000)
    try tree.file("\(name)/Library/Caches/notes.txt", size: 10)
    try tree.folder("\(name)/Documents")
    let plist = tree.path("\(name)/Library/Preferences/com.example.app.plist")
    try tree.folder("\(name)/Library/Preferences")
    let made = try AppData.shell("""
      python3 -c 'import plistlib,sys; plistlib.dump({"PSLegacyStoragePathUsed": True, "Other": 7}, open(sys.argv[1], "wb"))' '\(plist)'
      """)
    guard made.status == 0 else { throw TestFailure(made.error) }
  }

  /// The entries below `root` with a component named as appdata's own files are, by path.
  static func reserved(_ whole: [String: [String: Any]]) -> [String: [String: Any]] {
    whole.filter { key, _ in key.split(separator: "/").contains { $0.contains(".appdata-") } }
  }

  /// The manifest's entries `plant` makes in one folder: a folder with its `mine/file.txt` is
  /// three, a file one (the record planted beside a user's folder one); a live run's folder
  /// three (with `half-written` and its record), its file two.
  static var entriesPerFolder: Int {
    planted.map { $0.0.hasSuffix("-with-record") || !$0.1 ? 1 : 3 }.reduce(0, +) + live.map { $0.2 ? 3 : 2 }.reduce(0, +)
  }

  @Test func everyReservedNameIsAUsersDataToEveryCommand() throws {
    let tree = try TestTree("reserved")
    let migrated = ["same", "copy", "into", "defaults", "journal"]
    for name in migrated { try Self.container(tree, name) }
    try ExtractHostileTests.backup(in: tree.root, rows: """
      folder_row(""), folder_row("Documents"), file_row("Documents/a.txt", b"a"), folder_row("Library"),
      file_row("Library/Preferences/com.example.x.plist", b"p")
      """)
    try tree.file("legacy.xml", contents: Array(try Data(contentsOf: URL(fileURLWithPath:
      AppData.packageRoot + "/Tests/Fixtures/android/homeassistant-full-backup-content.xml"))))
    // Beside every place appdata writes: each container's root, Documents and
    // Library/Preferences, OUT's folder, -o's folder, the rules' output folder.
    var locks: [Int32] = []
    defer { for descriptor in locks { close(descriptor) } }
    for name in migrated {
      for folder in ["", "/Documents", "/Library/Preferences"] { locks += try Self.plant(in: tree.path(name) + folder) }
    }
    for folder in ["outs", "reports", "rules"] { locks += try Self.plant(in: tree.path(folder)) }
    // A journal at the root of one container: a user's file, which is never a plan.
    try tree.file("journal/.appdata-migration.journal", contents: Array("""
      {"appdataMigrationJournal":1,"container":{"device":0,"inode":0},"journal":{"device":0,"inode":0},"source":["TGlicmFyeQ==","Q2FjaGVz"],"destination":["RG9jdW1lbnRz"],"into":null,"markers":["modern"],"onConflict":"fail","steps":[]}

      """.utf8))
    let user: Int? = AppData.canRunAsAnotherUser ? 65534 : nil
    if user != nil { _ = try AppData.shell("chown -R 65534:65534 '\(tree.root)'") }
    let before = try manifest(tree.root)
    let plantedBefore = Self.reserved(before)
    let journalBefore = subtree(before, under: "journal")
    // 18 folders (5 containers' root, Documents and Library/Preferences; OUT's, -o's and the
    // rules' folders), and the journal at one container's root.
    #expect(plantedBefore.count == 18 * Self.entriesPerFolder + 1, "\(plantedBefore.count)")

    func run(_ arguments: [String], environment: [String: String] = [:], expect status: Int32 = 0) throws {
      let result = try AppData.run(arguments, environment: environment, asUser: user)
      #expect(result.status == status, "\(arguments) \(environment): \(result.error)")
      if status == 2 { #expect(result.error.split(separator: "\n").count == 1, "\(arguments): \(result.error)") }
    }
    try run(["audit", "--format", "json", "--fail-on", "never", "-o", tree.path("reports/report.json"), tree.path("same")])
    try run(["init-config", "--output", tree.path("reports/appdata.json"), tree.path("same")])
    try run(["extract", "--app", "com.example.x", "-o", tree.path("outs/out"), tree.path("backup")])
    try run(["extract", "--app", "com.example.x", "--force", "-o", tree.path("outs/out"), tree.path("backup")])
    try run(["migrate", tree.path("same")])
    try run(["migrate", tree.path("copy")], environment: ["APPDATA_TEST_FORCE_COPY": "1"])
    try run(["migrate", "--into", "Offline", tree.path("into")])
    try run(["migrate", "--defaults-key", "PSLegacyStoragePathUsed", tree.path("defaults")])
    try run(["migrate", "--android-rules", tree.path("legacy.xml"), "-o", tree.path("rules/rules.xml")])
    for environment in [[:], ["APPDATA_TEST_FORCE_COPY": "1"]] {
      try run(["migrate", tree.path("journal")], environment: environment, expect: 2)
      try run(["migrate", "--defaults-key", "PSLegacyStoragePathUsed", tree.path("journal")], environment: environment, expect: 2)
    }

    let after = try manifest(tree.root)
    // Every planted byte as it was, and nothing of appdata's own left beside it.
    for (path, entry) in plantedBefore {
      #expect(after[path].map { NSDictionary(dictionary: $0).isEqual(to: entry) } == true, "\(path): \(after[path] ?? [:])")
    }
    let left = Set(Self.reserved(after).keys).subtracting(plantedBefore.keys).sorted()
    #expect(left.isEmpty, "\(left)")
    // The container with a journal at its root: refused, nothing changed in it.
    #expect(same(subtree(after, under: "journal"), journalBefore))
    // What the commands were run for was done.
    for name in ["same", "copy"] { #expect(after["\(name)/Documents/Photos/a.jpg"] != nil, "\(name)") }
    #expect(after["into/Documents/Offline/notes.txt"] != nil)
    #expect(after["defaults/Library/Preferences/com.example.app.plist"]?["sha256"] as? String
            != before["defaults/Library/Preferences/com.example.app.plist"]?["sha256"] as? String)
    for path in ["reports/report.json", "reports/appdata.json", "outs/out/Documents/a.txt", "rules/rules.xml"] {
      #expect(after[path] != nil, "\(path)")
    }
  }
}
