@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataMigration
@testable import AppDataKit
import Foundation
import Testing

/// Issue 48: containment the kernel enforces (`Beneath`), ownership proven by a token and a
/// locked owner record (`OwnedArtifact`), never by a name, and files from an input treated as
/// data. Each test is one of the issue's attacks; where the attack writes, appdata runs as
/// nobody (uid 65534) on a tree nobody owns.
@Suite("containment and ownership", .serialized)
struct ContainmentTests {
  static let nobody = 65534

  static func chownToNobody(_ paths: String...) throws {
    for path in paths { _ = try AppData.shell("chown -R \(nobody):\(nobody) '\(path)'") }
  }

  // MARK: - Beneath

  /// Every name-taking syscall wrapper refuses a name that is really a path.
  /// `call` throws EINVAL, as `checkName` does before any syscall (the kernel answers these
  /// names with ENOENT, EEXIST, EBUSY or success).
  func refusedAsName(_ name: String, _ call: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
    do {
      try call()
      Issue.record("'\(name)' was taken as a name", sourceLocation: sourceLocation)
    } catch let error as SystemError {
      #expect(error.errno == .invalidArgument, "'\(name)': \(error)", sourceLocation: sourceLocation)
    } catch {
      Issue.record("'\(name)': \(error)", sourceLocation: sourceLocation)
    }
  }

  @Test func aNameThatIsAPathIsRefusedByEveryWrapper() throws {
    let tree = try TestTree("names")
    try tree.file("a/b", contents: Array("x".utf8))
    let folder = try Syscalls.openDirectory(atPath: tree.root)
    defer { folder.close() }
    for name in ["a/b", "..", ".", "", "../a", "a/../a"] {
      let bytes = Array(name.utf8)
      refusedAsName(name) { _ = try Syscalls.open(bytes, in: folder, options: .readFile, displayPath: name) }
      refusedAsName(name) { _ = try Syscalls.status(of: bytes, in: folder, displayPath: name) }
      refusedAsName(name) { try Syscalls.makeDirectory(bytes, in: folder, displayPath: name) }
      refusedAsName(name) { try Syscalls.remove(bytes, in: folder, isDirectory: false, displayPath: name) }
      refusedAsName(name) { try Syscalls.renameWithoutReplacing(Array("a".utf8), in: folder, to: bytes, in: folder, displayPath: name) }
      refusedAsName(name) { try Syscalls.makeSymbolicLink(bytes, in: folder, target: Array("a".utf8), displayPath: name) }
      refusedAsName(name) { try Syscalls.link(Array("a".utf8), in: folder, to: bytes, in: folder, displayPath: name) }
      refusedAsName(name) { try Syscalls.link(bytes, in: folder, to: Array("linked".utf8), in: folder, displayPath: name) }
      refusedAsName(name) { try ExtendedAttributes.setValue([1], of: "user.x", onEntry: bytes, in: folder, displayPath: name) }
      refusedAsName(name) { _ = try ExtendedAttributes.value(of: "user.x", onEntry: bytes, in: folder, displayPath: name) }
      refusedAsName(name) { _ = try ExtendedAttributes.removeValue(of: "user.x", onEntry: bytes, in: folder, displayPath: name) }
      refusedAsName(name) { try Syscalls.renameWithoutReplacing(bytes, in: folder, to: Array("moved".utf8), in: folder, displayPath: name) }
      refusedAsName(name) { try Syscalls.renameReplacing(Array("a".utf8), in: folder, to: bytes, in: folder, displayPath: name) }
      refusedAsName(name) { try Syscalls.renameReplacing(bytes, in: folder, to: Array("moved".utf8), in: folder, displayPath: name) }
      refusedAsName(name) { try Syscalls.exchange(Array("a".utf8), with: bytes, in: folder, displayPath: name) }
      refusedAsName(name) { try Syscalls.exchange(bytes, with: Array("a".utf8), in: folder, displayPath: name) }
      refusedAsName(name) { _ = try Syscalls.readLink(bytes, in: folder, displayPath: name) }
      let time = try Syscalls.status(ofPath: tree.root).modificationTime
      refusedAsName(name) { try Syscalls.setTimes(bytes, in: folder, access: time, modification: time, displayPath: name) }
    }
    #expect(FileManager.default.fileExists(atPath: tree.path("a/b")))
  }

  /// `Beneath` reaches entries by components and refuses `..`, `.`, empty components and a
  /// symlink anywhere on the way (ELOOP), whether the kernel's openat2 or the walk does it.
  @Test func beneathRefusesEscapesAndSymlinks() throws {
    let tree = try TestTree("beneath")
    try tree.file("inside/file.txt", contents: Array("in".utf8))
    try tree.file("outside.txt", contents: Array("out".utf8))
    try tree.symlink("inside/link", to: "..")
    let root = try Beneath(opening: tree.path("inside"))
    let file = try root.open([Array("file.txt".utf8)], options: .readFile)
    #expect(try Syscalls.readUpTo(file, 10, displayPath: "") == Array("in".utf8))
    file.close()
    for components in [[".."], ["..", "outside.txt"], [".", "file.txt"], ["", "file.txt"], ["link", "outside.txt"], ["link"]] {
      #expect(throws: SystemError.self, "\(components)") { _ = try root.open(components.map { Array($0.utf8) }, options: .readFile) }
    }
    do {
      _ = try root.openFolder([Array("link".utf8)])
      Issue.record("a symlink was followed")
    } catch {
      #expect(error.errno == .tooManySymbolicLinkLevels, "\(error)")
    }
    do {
      _ = try Beneath.walk([Array("link".utf8), Array("outside.txt".utf8)], below: root.root, options: .readFile, mode: 0, display: { _ in "" })
      Issue.record("the walk followed a symlink")
    } catch {
      #expect(error.errno == .tooManySymbolicLinkLevels, "\(error)")
    }
  }

  // MARK: - Untrusted journals

  /// A journal brought in with the container (here: written by hand, as a backup row or an
  /// archive would bring it) whose steps climb out: refused in one line, nothing moved, made
  /// or removed, inside or outside, as nobody.
  @Test(.enabled(if: AppData.canRunAsAnotherUser, "needs root and setpriv to run the binary as an unprivileged user"))
  func aJournalFromAnInputIsDataNeverAPlan() throws {
    let base = try TestTree("journal-escape")
    let container = try base.folder("c")
    try base.file("victim/secret.txt", contents: Array("secret".utf8))
    try base.file("c/Documents/payload.sh", contents: Array("echo pwned".utf8))
    try base.file("c/Library/Caches/x.bin", size: 10)
    func path(_ text: String) -> String { "[" + text.split(separator: "/").map { "\"\(Data($0.utf8).base64EncodedString())\"" }.joined(separator: ",") + "]" }
    let steps = [
      "{\"id\":0,\"kind\":\"move\",\"source\":\(path("Library/Caches/../../../victim/secret.txt")),\"destination\":\(path("Documents/secret.txt")),\"mark\":false,\"files\":1,\"bytes\":6,\"key\":null}",
      "{\"id\":1,\"kind\":\"move\",\"source\":\(path("Library/Caches/../../Documents/payload.sh")),\"destination\":\(path("Documents/../../victim/planted.sh")),\"mark\":false,\"files\":1,\"bytes\":10,\"key\":null}",
      "{\"id\":2,\"kind\":\"create-folder\",\"source\":[],\"destination\":\(path("Documents/../../victim/made-by-appdata")),\"mark\":false,\"files\":0,\"bytes\":0,\"key\":null}",
    ]
    let identity = "\"container\":{\"device\":0,\"inode\":0},\"journal\":{\"device\":0,\"inode\":0},"
    for journal in [
      // As an earlier version wrote it (no identities), and with identities that are not this file's.
      "{\"appdataMigrationJournal\":1,\"source\":\(path("Library/Caches")),\"destination\":\(path("Documents")),\"into\":null,\"markers\":[\"modern\"],\"onConflict\":\"fail\",\"steps\":[\(steps.joined(separator: ","))]}\n",
      "{\"appdataMigrationJournal\":1,\(identity)\"source\":\(path("Library/Caches")),\"destination\":\(path("Documents")),\"into\":null,\"markers\":[\"modern\"],\"onConflict\":\"fail\",\"steps\":[\(steps.joined(separator: ","))]}\n",
    ] {
      try base.file("c/.appdata-migration.journal", contents: Array(journal.utf8))
      try Self.chownToNobody(base.root)
      let before = try manifest(base.root)
      let result = try AppData.run(["migrate", container], asUser: Self.nobody)
      #expect(result.status == 2, "\(result.error)")
      #expect(result.error.split(separator: "\n").count == 1, "\(result.error)")
      #expect(result.error.contains(".appdata-migration.journal"), "\(result.error)")
      #expect(same(try manifest(base.root), before))
    }
    #expect(!FileManager.default.fileExists(atPath: base.path("victim/made-by-appdata")))
    #expect(try String(contentsOfFile: base.path("victim/secret.txt"), encoding: .utf8) == "secret")
  }

  /// The identities a journal records: a journal appdata wrote in this container is resumed;
  /// the same bytes copied to another container (another inode, another root) are refused.
  @Test func aCopiedJournalIsNotResumed() throws {
    let tree = try MigrateCrashTests.smallContainer("journal-copy")
    let killed = try MigrateCrashTests.migrate(tree.root, stopAfter: 3, forceCopy: false)
    #expect(killed.killed)
    let copy = try TestTree("journal-copy-target")
    _ = try AppData.shell("cp -a '\(tree.root)/.' '\(copy.root)/'")
    let refused = try AppData.run(["migrate", copy.root])
    #expect(refused.status == 2)
    #expect(refused.error == "appdata: error: .appdata-migration.journal: was not written by appdata migrate in this container (copied in, extracted from a backup, or planted); it is data, not a plan, and nothing was changed; move it away to start over\n")
    let resumed = try MigrateCrashTests.migrate(tree.root, forceCopy: false)
    #expect(resumed.status == 0 && !resumed.killed)
  }

  /// extract never writes a row named as appdata's own files: a journal row in a backup is
  /// reported as not written, so `appdata migrate OUT` (the next step the docs give) finds none.
  @Test func extractNeverWritesAppdatasReservedNames() throws {
    let folder = ExtractTests.scratch("reserved-rows")
    try ExtractHostileTests.backup(in: folder, rows: """
      folder_row("Documents"), folder_row("Library"), folder_row("Library/Caches"),
      file_row(".appdata-migration.journal", b"{}"),
      file_row("Documents/.appdata-partial-0", b"user"),
      file_row("Library/.Prefs.plist.appdata-0123456789abcdef0123456789abcdef.tmp", b"t"),
      file_row("Documents/kept.txt", b"kept")
      """)
    let result = try AppData.run(["extract", "--app", "com.example.x", "--json", "-o", folder + "/out", folder + "/backup"])
    #expect(result.status == 1, "\(result.error)")
    let problems = try ExtractHostileTests.problems(result)
    #expect(problems.count == 3, "\(problems)")
    #expect(problems.allSatisfy { $0.hasSuffix("not written: its path has a component named as appdata's own files are (.appdata-*, .NAME.appdata-*)") }, "\(problems)")
    let written = try AppData.shell("cd '\(folder)/out' && find . -name '.appdata*' -o -name '*.appdata-*'").output
    #expect(written.isEmpty, "\(written)")
    #expect(FileManager.default.fileExists(atPath: folder + "/out/AppData/Documents/kept.txt") || FileManager.default.fileExists(atPath: folder + "/out/Documents/kept.txt"))
  }

  // MARK: - Deleting only what appdata proves it made

  /// A user's folders and files named as earlier versions' leftovers, or as this version's
  /// without a record, beside OUT: a plain `extract -o notes` leaves each byte of them.
  @Test func namesAloneProveNothingToExtract() throws {
    let folder = ExtractTests.scratch("legacy-names")
    try ExtractHostileTests.backup(in: folder, rows: "folder_row(\"Documents\"), file_row(\"Documents/a.txt\", b\"a\")")
    let planted = [".notes.appdata-extract-partial", ".notes.appdata-extract-replaced",
                   ".notes.appdata-extract-partial-1234-abcd", ".notes.appdata-extract-partial-0123456789abcdef0123456789abcdef"]
    for name in planted {
      try FileManager.default.createDirectory(atPath: folder + "/" + name + "/mine", withIntermediateDirectories: true)
      try Data("user data".utf8).write(to: URL(fileURLWithPath: folder + "/" + name + "/mine/file.txt"))
    }
    // A record that is not a real one (no lock held, but the wrong token inside).
    try Data("appdata-owner 1 ffffffffffffffffffffffffffffffff folder\n".utf8)
      .write(to: URL(fileURLWithPath: folder + "/.notes.appdata-extract-partial-0123456789abcdef0123456789abcdef.owner"))
    let before = try manifest(folder)
    let result = try AppData.run(["extract", "--app", "com.example.x", "-o", folder + "/notes", folder + "/backup"])
    #expect(result.status == 0, "\(result.error)")
    let after = try manifest(folder)
    for (path, entry) in before where !path.hasPrefix("notes") {
      #expect(after[path].map { NSDictionary(dictionary: $0).isEqual(to: entry) } == true, "\(path)")
    }
  }

  /// `audit -o`: a user's file shaped like a hidden report of a dead run (no owner record, or
  /// a random part that is not a token) is left as it is.
  @Test func namesAloneProveNothingToAnOutput() throws {
    let tree = try MigrateTests.legacyContainer("output-names")
    let scratch = tree.scratch
    for name in [".report.json.appdata-2024-draft.tmp", ".report.json.appdata-1-1.tmp",
                 ".report.json.appdata-0123456789abcdef0123456789abcdef.tmp"] {
      try Data("draft".utf8).write(to: URL(fileURLWithPath: scratch + "/" + name))
    }
    let before = try manifest(scratch)
    let result = try AppData.run(["audit", "--format", "json", "--fail-on", "never", "-o", scratch + "/report.json", tree.root])
    #expect(result.status == 0, "\(result.error)")
    let after = try manifest(scratch)
    for (path, entry) in before { #expect(after[path].map { NSDictionary(dictionary: $0).isEqual(to: entry) } == true, "\(path)") }
    #expect(Set(after.keys).subtracting(before.keys) == ["report.json"])
  }

  /// A dead run's artifact, proven by its record, is swept; a live run's (its record locked,
  /// here by this test process) is not, whatever its age, even while it is still empty.
  @Test func aSweepRemovesOnlyWhatADeadRunProves() throws {
    let tree = try TestTree("sweep")
    let folder = try Syscalls.openDirectory(atPath: tree.root)
    defer { folder.close() }
    let prefix = Array(".out.appdata-extract-partial-".utf8)
    let live = try OwnedArtifact.make(.folder, prefix: prefix, in: folder, mode: 0o700, displayPath: "")
    // Another process sweeps (the binary, as another extract to the same OUT does).
    try ExtractHostileTests.backup(in: tree.root, rows: "folder_row(\"Documents\")")
    let result = try AppData.run(["extract", "--app", "com.example.x", "-o", tree.path("out"), tree.path("backup")])
    #expect(result.status == 0, "\(result.error)")
    #expect(live.isInPlace, "a live run's partial folder was removed")
    live.discard()
    // A run killed mid-way (SIGKILL, so its lock is released by the kernel) leaves its partial
    // folder and record; the next run proves them its own and removes them.
    _ = try AppData.shell("rm -rf '\(tree.path("out"))'")
    let killed = try AppData.run(["extract", "--app", "com.example.x", "--test-stop-after", "1", "-o", tree.path("out"), tree.path("backup")])
    #expect(killed.status == 137 || killed.status == 9, "\(killed.status)")
    let left = try FileManager.default.contentsOfDirectory(atPath: tree.root).filter { $0.hasPrefix(".out.") }
    #expect(left.count == 2, "\(left)")
    let second = try AppData.run(["extract", "--app", "com.example.x", "-o", tree.path("out"), tree.path("backup")])
    #expect(second.status == 0, "\(second.error)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: tree.root).filter { $0.hasPrefix(".out.") }.isEmpty)
  }

  /// migrate across filesystems, first run, no journal: a user's `Documents/.appdata-partial-0`
  /// (the name earlier versions used) stays, and is not moved onto.
  @Test func migrateLeavesAUsersPartialNamedFolder() throws {
    let tree = try MigrateTests.legacyContainer("partial-name")
    try tree.file("Documents/.appdata-partial-0/mine.txt", contents: Array("mine".utf8))
    try tree.file("Documents/.appdata-partial-1", contents: Array("mine too".utf8))
    let dry = try AppData.run(["migrate", "--dry-run", tree.root], environment: ["APPDATA_TEST_FORCE_COPY": "1"])
    #expect(dry.status == 0)
    let result = try AppData.run(["migrate", tree.root], environment: ["APPDATA_TEST_FORCE_COPY": "1"])
    #expect(result.status == 0, "\(result.error)")
    #expect(try String(contentsOfFile: tree.path("Documents/.appdata-partial-0/mine.txt"), encoding: .utf8) == "mine")
    #expect(try String(contentsOfFile: tree.path("Documents/.appdata-partial-1"), encoding: .utf8) == "mine too")
    let left = try FileManager.default.contentsOfDirectory(atPath: tree.path("Documents")).filter { $0.hasPrefix(".appdata") }.sorted()
    #expect(left == [".appdata-partial-0", ".appdata-partial-1"], "\(left)")
  }

  /// `migrate --android-rules` killed (SIGKILL) with NEW written under its hidden name: the
  /// hidden file and its owner record are left, and the next run removes them (the record's
  /// lock is free and its token matches) and writes NEW; a user's files named as a hidden file
  /// without a record, or as earlier versions' `.appdata-partial-PID-RANDOM`, stay.
  @Test func aKilledRulesMigrationIsClearedByTheNextRun() throws {
    let tree = try TestTree("rules-killed")
    let legacy = AppData.packageRoot + "/Tests/Fixtures/android/homeassistant-full-backup-content.xml"
    let new = tree.path("data_extraction_rules.xml")
    let planted = [".data_extraction_rules.xml.appdata-0123456789abcdef0123456789abcdef.tmp", ".appdata-partial-1234-abcd"]
    for name in planted { try tree.file(name, contents: Array("mine: \(name)".utf8)) }
    let killed = try AppData.runPaused(["migrate", "--android-rules", legacy, "-o", new], at: "rules", withProcess: { process in
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    })
    #expect(killed.status == 9)
    let left = try FileManager.default.contentsOfDirectory(atPath: tree.root).filter { !planted.contains($0) }.sorted()
    #expect(left.count == 2 && left[0].hasPrefix(".data_extraction_rules.xml.appdata-") && left[0].hasSuffix(".tmp")
            && left[1] == left[0] + ".owner", "\(left)")
    let rerun = try AppData.run(["migrate", "--android-rules", legacy, "-o", new])
    #expect(rerun.status == 0, "\(rerun.error)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: tree.root).sorted() == (planted + ["data_extraction_rules.xml"]).sorted())
    for name in planted { #expect(try String(contentsOfFile: tree.path(name), encoding: .utf8) == "mine: \(name)") }
  }

  /// `migrate --defaults-key` rewrites the plist through a hidden file of its own: a user's
  /// `.NAME.appdata-tmp` (the fixed name earlier versions removed first, then wrote) and a file
  /// named as a hidden one without a record stay, byte for byte, as does a user's
  /// `.appdata-marker-probe` (the fixed name the marker probe removed) where entries land.
  @Test func migrateDeletesNothingForItsNameAlone() throws {
    let tree = try MigrateTests.legacyContainer("defaults-names")
    try tree.folder("Library/Preferences")
    let plist = tree.path("Library/Preferences/com.example.app.plist")
    _ = try AppData.shell("""
      python3 -c 'import plistlib,sys; plistlib.dump({"PSLegacyStoragePathUsed": True, "Other": 7}, open(sys.argv[1], "wb"))' '\(plist)'
      """)
    let planted = ["Library/Preferences/.com.example.app.plist.appdata-tmp",
                   "Library/Preferences/.com.example.app.plist.appdata-0123456789abcdef0123456789abcdef.tmp",
                   "Documents/.appdata-marker-probe", "Documents/.appdata-marker-probe-0123456789abcdef0123456789abcdef"]
    for name in planted {
      try tree.file(name, contents: Array("mine: \(name)".utf8))
      chmod(tree.path(name), 0o640)
      try tree.setAttribute(name, "user.example.mine", Array("yes".utf8))
    }
    let before = try manifest(tree.root)
    let result = try AppData.run(["migrate", "--defaults-key", "PSLegacyStoragePathUsed", tree.root])
    #expect(result.status == 0, "\(result.error)")
    #expect(result.output.contains("removed PSLegacyStoragePathUsed"), "\(result.output)")
    let after = try manifest(tree.root)
    for name in planted {
      #expect(after[name].map { NSDictionary(dictionary: $0).isEqual(to: before[name]!) } == true, "\(name)")
    }
    let appdatas = after.keys.filter { $0.split(separator: "/").last!.contains(".appdata-") }.sorted()
    #expect(appdatas == planted.sorted(), "\(appdatas)")
  }

  // MARK: - --force and what holds the backup

  /// `extract --force -o out` with BACKUP given as a symlink into OUT: refused, the backup whole.
  @Test func forceNeverReplacesAFolderHoldingTheBackupReachedThroughALink() throws {
    let folder = ExtractTests.scratch("force-link")
    try ExtractHostileTests.backup(in: folder, rows: "folder_row(\"Documents\"), file_row(\"Documents/a.txt\", b\"a\")")
    // An earlier extraction at out, with the backup moved inside it and reached by a link.
    #expect(try AppData.run(["extract", "--app", "com.example.x", "-o", folder + "/out", folder + "/backup"]).status == 0)
    try FileManager.default.moveItem(atPath: folder + "/backup", toPath: folder + "/out/backup")
    try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: "out/backup")
    let before = try manifest(folder + "/out/backup")
    let result = try AppData.run(["extract", "--app", "com.example.x", "--force", "-o", folder + "/out", folder + "/link"])
    #expect(result.status == 2)
    #expect(result.error.hasSuffix("holds the backup \(folder)/link; appdata extract never writes over it\n"), "\(result.error)")
    #expect(same(try manifest(folder + "/out/backup"), before))
  }

  /// `--force` as an unprivileged user over an earlier extraction whose folders have mode 0000:
  /// replaced, and no hidden copy is left beside it.
  @Test(.enabled(if: AppData.canRunAsAnotherUser, "needs root and setpriv to run the binary as an unprivileged user"))
  func forceRemovesAnOldExtractionWithMode0000Folders() throws {
    let tree = try TestTree("force-0000")
    try ExtractHostileTests.backup(in: tree.root, rows: """
      folder_row("Documents"), ("AppDomain-com.example.x", "Documents/locked", "folder", 0o000, 1, None, None, {}, 0),
      file_row("Documents/a.txt", b"a")
      """)
    try Self.chownToNobody(tree.root)
    for run in 0..<3 {
      let result = try AppData.run(["extract", "--app", "com.example.x", "--force", "-o", tree.path("out"), tree.path("backup")], asUser: Self.nobody)
      #expect(result.status == 0 || result.status == 1, "run \(run): \(result.error)")
      let hidden = try FileManager.default.contentsOfDirectory(atPath: tree.root).filter { $0.hasPrefix(".out.") }
      #expect(hidden.isEmpty, "run \(run): \(hidden)")
    }
  }

  // MARK: - Runs to one OUT

  /// `extract --force` killed (SIGKILL) right after swapping its folder in for the old OUT: the
  /// old OUT is left at the run's hidden name, and its record says it may be there (written
  /// before the swap), so the next run proves it a dead run's and removes it. Before, the record
  /// named only the run's own folder, and the old OUT stayed there for good.
  @Test func aRunKilledRightAfterItsSwapLeavesWhatTheNextRunRemoves() throws {
    let folder = ExtractTests.scratch("killed-swap")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try ExtractHostileTests.backup(in: folder, rows: "folder_row(\"Documents\"), file_row(\"Documents/a.txt\", b\"a\"), file_row(\"Documents/b.txt\", b\"b\")")
    let arguments = ["extract", "--app", "com.example.x", "--force", "-o", folder + "/out", folder + "/backup"]
    #expect(try AppData.run(arguments).status == 0)
    let old = try FileManager.default.attributesOfItem(atPath: folder + "/out")[.systemFileNumber] as? Int
    let killed = try AppData.runPaused(arguments, at: "exchanged", withProcess: { process in
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    })
    #expect(killed.status == 9)
    let left = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(".out.appdata-extract-partial-") }.sorted()
    #expect(left.count == 2 && left[1] == left[0] + ".owner", "\(left)")
    #expect(try FileManager.default.attributesOfItem(atPath: folder + "/" + left[0])[.systemFileNumber] as? Int == old)
    #expect(FileManager.default.fileExists(atPath: folder + "/out/Documents/b.txt"))
    let next = try AppData.run(arguments)
    #expect(next.status == 0, "\(next.error)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["backup", "out"])
  }

  /// Runs that replace one OUT take turns: while the first has swapped its folder in and not
  /// yet checked the swap (paused at `exchanged`), the second, done extracting, waits for the
  /// first's lock (it says so at the point `waiting-for-turn`) instead of swapping in its own,
  /// which made the first's check fail, undo a swap that was not its own, and leave a whole
  /// extraction at its hidden name with no record (found by Scripts/extract-race.py). Released,
  /// both exit 0; OUT is the second's, whole, and nothing is left beside it.
  @Test func runsReplacingOneOutTakeTurns() throws {
    let folder = ExtractTests.scratch("take-turns")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try ExtractHostileTests.backup(in: folder, rows: "folder_row(\"Documents\"), file_row(\"Documents/a.txt\", b\"a\"), file_row(\"Documents/b.txt\", b\"b\")")
    let arguments = ["extract", "--app", "com.example.x", "--force", "-o", folder + "/out", folder + "/backup"]
    #expect(try AppData.run(arguments).status == 0)
    var second: Process?
    let errors = Pipe()
    // The second run says, on a FIFO, that it is about to wait for the first's lock; its end
    // says so too (a byte of another value), so the read waits on an event, never on a clock.
    let announce = NSTemporaryDirectory() + "appdata-announce-\(UUID().uuidString)"
    guard mkfifo(announce, 0o600) == 0 else { throw TestFailure("mkfifo \(announce)") }
    let said = ReadyPipe(descriptor: open(announce, O_RDWR | O_CLOEXEC))
    defer {
      said.close()
      try? FileManager.default.removeItem(atPath: announce)
    }
    let first = try AppData.runPaused(arguments, at: "exchanged", withProcess: { _ in
      let process = Process()
      process.executableURL = URL(fileURLWithPath: AppData.binary)
      process.arguments = arguments
      var environment = ProcessInfo.processInfo.environment
      environment["APPDATA_TEST_ANNOUNCE_FILE"] = announce
      environment["APPDATA_TEST_ANNOUNCE_AT"] = "waiting-for-turn"
      process.environment = environment
      process.standardOutput = FileHandle.nullDevice
      process.standardError = errors
      process.terminationHandler = { _ in said.say(0x78) }
      try process.run()
      second = process
      var byte: UInt8 = 0
      #expect(read(said.descriptor, &byte, 1) == 1 && byte == 0x77, "the second run did not wait for the first's turn")
    })
    #expect(first.status == 0, "\(first.error)")
    second?.waitUntilExit()
    #expect(second?.terminationStatus == 0)
    #expect(errors.fileHandleForReading.readDataToEndOfFile().isEmpty)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["backup", "out"])
    #expect(try String(contentsOfFile: folder + "/out/Documents/b.txt", encoding: .utf8) == "b")
  }

  // MARK: - Outputs

  /// `-o` onto a symlink writes the target, atomically (a new file renamed over it), and the
  /// link stays a link.
  @Test func anOutputThatIsASymlinkWritesItsTargetAtomically() throws {
    let tree = try MigrateTests.legacyContainer("output-link")
    let latest = tree.scratch + "/latest.json"
    try Data("old".utf8).write(to: URL(fileURLWithPath: latest))
    let inode = try FileManager.default.attributesOfItem(atPath: latest)[.systemFileNumber] as? Int
    try FileManager.default.createSymbolicLink(atPath: tree.scratch + "/report.json", withDestinationPath: "latest.json")
    let result = try AppData.run(["audit", "--format", "json", "--fail-on", "never", "-o", tree.scratch + "/report.json", tree.root])
    #expect(result.status == 0, "\(result.error)")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: tree.scratch + "/report.json") == "latest.json")
    let written = try Data(contentsOf: URL(fileURLWithPath: latest))
    #expect((try? JSONSerialization.jsonObject(with: written)) != nil)
    #expect(try FileManager.default.attributesOfItem(atPath: latest)[.systemFileNumber] as? Int != inode, "written in place, not replaced")
    #expect(try FileManager.default.contentsOfDirectory(atPath: tree.scratch).sorted() == ["latest.json", "report.json"])
  }

  /// `-o` onto a FIFO (with no reader: an open for writing would wait forever) or a socket is
  /// refused in one line, at once, exit 2.
  @Test func anOutputThatIsAFIFOIsRefusedWithoutWaiting() throws {
    let tree = try MigrateTests.legacyContainer("output-fifo")
    let fifo = tree.scratch + "/report.json"
    #expect(mkfifo(fifo, 0o600) == 0)
    let result = try AppData.run(["audit", "--format", "json", "-o", fifo, tree.root])
    #expect(result.status == 2)
    #expect(result.error == "appdata: error: \(fifo): is a FIFO, socket or device, not a file; appdata writes reports only to files (leave -o out for standard output)\n")
  }
}

/// A hostile run against the first version of issue 48's design (helper report, 2026-11-26):
/// each finding, reproduced without a race where the race can be held still.
@Suite("containment: hostile findings", .serialized)
struct ContainmentFindingsTests {
  /// F1: a folder of the old OUT (made 0777 by the manifest) is moved out of the tree while
  /// `--force` removes what is below it; climbing back up through `..` then led into the folder
  /// it was moved to and emptied it and its parents. Now the climb stops there: nothing outside
  /// OUT is removed. Held still at the pause point `remove`, the folder is moved by the test.
  @Test func aFolderMovedOutMidRemovalTakesNothingOutsideWithIt() throws {
    let folder = ExtractTests.scratch("climb")
    try ExtractHostileTests.backup(in: folder, rows: """
      folder_row("Documents"), ("AppDomain-com.example.x", "Documents/shared", "folder", 0o777, 1, None, None, {}, 0),
      folder_row("Documents/shared/x"), folder_row("Documents/shared/x/y"), file_row("Documents/shared/x/y/f.txt", b"f")
      """)
    #expect(try AppData.run(["extract", "--app", "com.example.x", "-o", folder + "/out", folder + "/backup"]).status == 0)
    let outside = folder + "/outside/deeper"
    try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
    try Data("victim".utf8).write(to: URL(fileURLWithPath: folder + "/outside/victim.txt"))
    try Data("victim".utf8).write(to: URL(fileURLWithPath: outside + "/victim.txt"))
    let result = try AppData.runPaused(["extract", "--force", "--app", "com.example.x", "-o", folder + "/out", folder + "/backup"],
                                       at: "remove") {
      // The old OUT is now the hidden partial name; its Documents/shared goes elsewhere.
      let hidden = try FileManager.default.contentsOfDirectory(atPath: folder)
        .first { $0.hasPrefix(".out.appdata-extract-partial-") && !$0.hasSuffix(".owner") } ?? "-"
      try FileManager.default.moveItem(atPath: "\(folder)/\(hidden)/Documents/shared", toPath: outside + "/shared")
    }
    #expect(result.status == 0 || result.status == 1, "\(result.error)")
    #expect(try String(contentsOfFile: folder + "/outside/victim.txt", encoding: .utf8) == "victim")
    #expect(try String(contentsOfFile: outside + "/victim.txt", encoding: .utf8) == "victim")
    #expect(FileManager.default.fileExists(atPath: folder + "/backup/Manifest.db"))
    #expect(FileManager.default.fileExists(atPath: folder + "/out/Documents/shared/x/y/f.txt"))
  }

  /// F6: records of the right shape planted without proof (no recorded identity of their own,
  /// or an artifact identity that is not the artifact's), beside an empty folder of that name:
  /// every byte stays, through migrate (its source, and its destination's sweep) and `audit -o`.
  @Test func recordsThatProveNothingStay() throws {
    let tree = try MigrateTests.legacyContainer("records")
    let token = String(repeating: "1", count: 32), other = String(repeating: "2", count: 32)
    try tree.folder("Library/Caches/.appdata-partial-\(token)")
    try tree.file("Library/Caches/.appdata-partial-\(token).owner", contents: Array("appdata-owner 1 \(token) folder\n".utf8))
    try tree.folder("Documents/.appdata-partial-\(other)")
    try tree.file("Documents/.appdata-partial-\(other).owner", contents: Array("appdata-owner 1 \(other) folder\n9 9\n9 9\n".utf8))
    try Data("appdata-owner 1 \(token) file\n9 9\n9 9\n".utf8).write(to: URL(fileURLWithPath: tree.scratch + "/.report.json.appdata-\(token).tmp.owner"))
    try Data("draft".utf8).write(to: URL(fileURLWithPath: tree.scratch + "/.report.json.appdata-\(token).tmp"))
    let planted = ["Library/Caches/.appdata-partial-\(token)", "Library/Caches/.appdata-partial-\(token).owner",
                   "Documents/.appdata-partial-\(other)", "Documents/.appdata-partial-\(other).owner"]
    let result = try AppData.run(["migrate", "--json", tree.root], environment: ["APPDATA_TEST_FORCE_COPY": "1"])
    #expect(result.status == 0, "\(result.error)")
    for path in planted { #expect(FileManager.default.fileExists(atPath: tree.path(path)), "\(path)") }
    let skipped = (try result.json()["entries"] as? [[String: Any]] ?? []).filter { ($0["source"] as? String ?? "").contains(".appdata-partial-") }
    #expect(skipped.map { $0["action"] as? String ?? "" } == ["skipped", "skipped"], "\(skipped)")
    #expect(try AppData.run(["audit", "--format", "json", "--fail-on", "never", "-o", tree.scratch + "/report.json", tree.root]).status == 0)
    #expect(FileManager.default.fileExists(atPath: tree.scratch + "/.report.json.appdata-\(token).tmp.owner"))
    #expect(FileManager.default.fileExists(atPath: tree.scratch + "/.report.json.appdata-\(token).tmp"))
  }

  /// F10: `-o /dev/stdout` with standard output a file (a shell's `>>`) replaced that file, its
  /// earlier lines lost. Names under /dev and /proc, and links to them, are refused.
  @Test func anOutputNamingADescriptorIsRefused() throws {
    let tree = try MigrateTests.legacyContainer("dev-stdout")
    let log = tree.scratch + "/log.txt"
    try Data("earlier line\n".utf8).write(to: URL(fileURLWithPath: log))
    try FileManager.default.createSymbolicLink(atPath: tree.scratch + "/to-stdout", withDestinationPath: "/dev/stdout")
    try FileManager.default.createSymbolicLink(atPath: tree.scratch + "/relative", withDestinationPath: String(repeating: "../", count: 12) + "proc/self/fd/1")
    for target in ["/dev/stdout", "/proc/self/fd/1", tree.scratch + "/to-stdout", "//proc/self/fd/1", "/./proc/self/fd/1",
                   "/./dev/fd/1", tree.scratch + "/relative", log] {
      let result = try AppData.shell("'\(AppData.binary)' audit --format json -o '\(target)' '\(tree.root)' >> '\(log)'")
      #expect(result.status == 2, "\(target)")
      #expect(result.error == "appdata: error: \(target): names a descriptor, a device or a standard stream's file (/dev, /proc, what > or >> opened), not a file of its own; appdata writes reports only to files (leave -o out for standard output)\n")
    }
    #expect(try String(contentsOfFile: log, encoding: .utf8) == "earlier line\n")
  }

  /// M1: an OUT name of 192 to 255 bytes failed ("File name too long") once the partial folder's
  /// name took a token and a record beside it.
  @Test func aLongOutNameIsExtracted() throws {
    let folder = ExtractTests.scratch("long-out")
    try ExtractHostileTests.backup(in: folder, rows: "folder_row(\"Documents\"), file_row(\"Documents/a.txt\", b\"a\")")
    let name = String(repeating: "o", count: 255)
    let result = try AppData.run(["extract", "--app", "com.example.x", "-o", folder + "/" + name, folder + "/backup"])
    #expect(result.status == 0, "\(result.error)")
    #expect(FileManager.default.fileExists(atPath: folder + "/" + name + "/Documents/a.txt"))
  }

  /// M4: a manifest row carrying appdata's own attribute (`user.appdata.extract`) does not get
  /// it, so a folder of an extraction is never taken for one `--force` may replace; and another
  /// user's folder carrying it is not replaced.
  @Test func appdatasOwnAttributeIsNeverTakenFromAManifest() throws {
    let folder = ExtractTests.scratch("own-attribute")
    try ExtractHostileTests.backup(in: folder, rows: """
      ("AppDomain-com.example.x", "Documents", "folder", 0o755, 1, None, None, {"appdata.extract": b"1"}, 0),
      file_row("Documents/a.txt", b"a")
      """)
    let result = try AppData.run(["extract", "--json", "--app", "com.example.x", "-o", folder + "/out", folder + "/backup"])
    #expect(result.status == 0 || result.status == 1, "\(result.error)")
    #expect(ExtractTests.attributes(folder + "/out/Documents")["user.appdata.extract"] == nil)
    // An earlier extraction handed to another user: not this user's to replace.
    _ = try AppData.shell("chown -R 1234:1234 '\(folder)/out'")
    let refused = try AppData.run(["extract", "--force", "--app", "com.example.x", "-o", folder + "/out", folder + "/backup"])
    #expect(refused.status == 2, "\(refused.error)")
    #expect(FileManager.default.fileExists(atPath: folder + "/out/Documents/a.txt"))
  }
}
