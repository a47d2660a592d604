@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataKit
import Foundation
import Testing

/// Issue 38: `appdata extract` against a hostile backup and a careless command line. Each case
/// is built from the issue's description; each failed before its fix (the closing note of issue
/// 38 gives the old binary's result beside each).
@Suite("extract, hostile")
struct ExtractHostileTests {
  /// A backup folder `folder/backup` holding `rows` (Python tuples for make-extract-backup.py:
  /// domain, path, kind, mode, mtime, content, target, xattrs, class), then `after` (Python run
  /// with `folder` and `d`, the first domain, defined).
  static func backup(in folder: String, apps: [String] = ["com.example.x"], rows: String, after: String = "") throws {
    let script = """
      b = x.backup
      folder = sys.argv[1] + "/backup"
      os.makedirs(folder)
      b.write_plists(folder, \(apps.map { "'\($0)'" }))
      d = "AppDomain-\(apps[0])"
      folder_row = lambda p, dom=d: (dom, p, "folder", 0o755, 1, None, None, {}, 0)
      file_row = lambda p, c, dom=d: (dom, p, "file", 0o644, 1, c, None, {}, 3)
      link_row = lambda p, t, dom=d: (dom, p, "symlink", 0o755, 1, None, t, {}, 0)
      x.write(folder, [\(rows)])
      \(after)
      """
    let result = try ExtractTests.runWithGenerator(script, in: folder)
    #expect(result.status == 0, "\(result.error)")
  }

  /// Every file and folder below `folder`, but those below `out`: what must not change.
  static func listing(_ folder: String, except out: String) throws -> [String] {
    try AppData.shell("cd '\(folder)' && find . -path './\(out)' -prune -o -print | sort").output.split(separator: "\n").map(String.init)
  }

  /// The symlinks in `out` whose target, resolved by the kernel (`realpath`), is outside `out`.
  static func linksOutside(_ out: String) throws -> [String] {
    let result = try AppData.shell("""
      python3 - '\(out)' <<'EOF'
      import os, sys
      root = os.path.realpath(sys.argv[1])
      for folder, dirs, files in os.walk(root):
          for name in dirs + files:
              path = os.path.join(folder, name)
              if os.path.islink(path):
                  target = os.path.realpath(path)
                  if os.path.commonpath([root, target]) != root:
                      print(os.path.relpath(path, root), "->", target)
      EOF
      """)
    return result.output.split(separator: "\n").map(String.init)
  }

  static func problems(_ result: RunResult) throws -> [String] {
    (try result.json()["problems"] as? [[String: Any]] ?? []).map { "\($0["domain"] as! String): \($0["path"] as! String): \($0["message"] as! String)" }
  }

  /// X1: an extension's id is one folder name or a finding, never a path: `…x./../../../ESCAPED`
  /// wrote that plugin's files beside OUT's parent; a 300-byte id aborted the run (X8).
  @Test func extensionIDsThatAreNotOneNameAreFindingsNeverPaths() throws {
    let folder = ExtractTests.scratch("x1")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let long = String(repeating: "l", count: 300)
    try Self.backup(in: folder, rows: """
      folder_row(""), file_row("Documents/ok.txt", b"ok"),
      folder_row("", "AppDomainPlugin-com.example.x."), file_row("a.txt", b"a", "AppDomainPlugin-com.example.x."),
      folder_row("", "AppDomainPlugin-com.example.x./../../../ESCAPED"), file_row("pwned.sh", b"#!/bin/sh\\n", "AppDomainPlugin-com.example.x./../../../ESCAPED"),
      file_row("x.txt", b"x", "AppDomainPlugin-com.example.x.\(long)")
      """)
    try FileManager.default.createDirectory(atPath: folder + "/work", withIntermediateDirectories: true)
    let before = try Self.listing(folder, except: "work/out")
    let result = try AppData.run(["extract", "--with-extensions", "--json", "--app", "com.example.x", "-o", folder + "/work/out", folder + "/backup"])
    #expect(result.status == 1, "\(result.error)")
    #expect(try Self.problems(result) == [
      "AppDomainPlugin-com.example.x./../../../ESCAPED: : not written: its id holds a '/', so it cannot name a folder",
      "AppDomainPlugin-com.example.x.\(long): : not written: its id is longer than 255 bytes, so it cannot name a folder",
    ])
    #expect(try Self.listing(folder, except: "work/out") == before)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/work/out").sorted() == ["com.example.x", "com.example.x."])
    #expect(FileManager.default.fileExists(atPath: folder + "/work/out/com.example.x./a.txt"))
  }

  /// Issue 48: one id in two domains (`AppDomain-X` and `AppDomainGroup-X`) is one folder in
  /// OUT. The run failed whole (exit 2, "File exists … metadata.plist") for a container root, and
  /// as a package named "1 entry not written: " with an empty path. Now the app is written, the
  /// group is named by its domain and written nowhere, in each of OUT's three shapes (exit 1).
  @Test func oneIDInTwoDomainsWritesTheAppAndNamesTheOther() throws {
    let folder = ExtractTests.scratch("two-domains")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let group = "AppDomainGroup-com.example.x"
    try Self.backup(in: folder, rows: """
      folder_row(""), folder_row("Documents"), file_row("Documents/a.txt", b"app"),
      folder_row("", "\(group)"), file_row("Shared.txt", b"group", "\(group)")
      """)
    let holder = "AppDomain-com.example.x, which has the same id, and a folder holds one container"
    for (out, extra, place, app) in [("out", [String](), "OUT", "out"), ("out.xcappdata", [], "OUT's AppData", "out.xcappdata/AppData"),
                                     ("ext", ["--with-extensions"], "OUT's folder com.example.x", "ext/com.example.x")] {
      let result = try AppData.run(["extract", "--json", "--app", "com.example.x", "-o", "\(folder)/\(out)"] + extra + ["\(folder)/backup"])
      #expect(result.status == 1, "\(out): \(result.error)")
      #expect(try Self.problems(result) == ["\(group): : not written: \(place) holds \(holder)"], "\(out)")
      let containers = try result.json()["containers"] as? [[String: Any]] ?? []
      #expect(containers.map { "\($0["domain"]!) \($0["files"]!)" } == ["AppDomain-com.example.x 1"], "\(out)")
      #expect(try String(contentsOfFile: "\(folder)/\(app)/Documents/a.txt", encoding: .utf8) == "app")
      #expect(!FileManager.default.fileExists(atPath: "\(folder)/\(app)/Shared.txt"))
      #expect(result.error == "appdata: error: \(folder)/backup: 1 domain not written (the rest are in \(folder)/\(out))\n")
    }
    // The table and -q name the domain, never an empty path.
    let table = try AppData.run(["extract", "--app", "com.example.x", "-o", "\(folder)/t", "\(folder)/backup"])
    #expect(table.output.contains("\n  error   \(group): not written: OUT holds \(holder)\n"), "\(table.output)")
    let quiet = try AppData.run(["extract", "-q", "--app", "com.example.x", "-o", "\(folder)/q.xcappdata", "\(folder)/backup"])
    #expect(quiet.status == 1)
    #expect(quiet.error == "appdata: error: \(folder)/backup: 1 domain not written: \(group) (the rest are in \(folder)/q.xcappdata)\n")
    // The plan says the same.
    let dry = try AppData.run(["extract", "--dry-run", "--json", "--app", "com.example.x", "-o", "\(folder)/d", "\(folder)/backup"])
    #expect(try Self.problems(dry) == ["\(group): : not written: OUT holds \(holder)"])
    #expect(!FileManager.default.fileExists(atPath: "\(folder)/d"))
  }

  /// X3: a link is judged by where it resolves: `Documents/y -> ..` is inside, but
  /// `x -> Documents/y/Documents/y/../../../../etc/passwd`, whose `..` count stays inside as
  /// text, resolves to /etc/passwd through y. It is written as a file; no link in OUT resolves
  /// outside it. A chain to a link written as a file stays a link (to that file).
  @Test func linksAreJudgedByWhereTheyResolve() throws {
    let folder = ExtractTests.scratch("x3")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Self.backup(in: folder, rows: """
      folder_row(""), folder_row("Documents"), link_row("Documents/y", ".."),
      link_row("x", "Documents/y/Documents/y/../../../../etc/passwd"),
      link_row("z", "Documents/y/Documents/y/etc/passwd"),
      link_row("Library/a", "b/../../Documents/y/.."), link_row("Library/b", "../Documents"),
      link_row("Library/loop1", "loop2"), link_row("Library/loop2", "loop1"),
      link_row("Library/up", "../x"), link_row("Library/q", "up/..")
      """)
    let out = folder + "/out"
    let result = try AppData.run(["extract", "--json", "--app", "com.example.x", "-o", out, folder + "/backup"])
    #expect(result.status == 0, "\(result.error)")
    #expect(try Self.problems(result) == [
      "AppDomain-com.example.x: Library/a: a symlink to 'b/../../Documents/y/..', which resolves out of the container through another symlink: written as a file holding its target",
      "AppDomain-com.example.x: Library/loop1: a symlink to 'loop2', which resolves through more than 40 symlinks: written as a file holding its target",
      "AppDomain-com.example.x: Library/loop2: a symlink to 'loop1', which resolves through more than 40 symlinks: written as a file holding its target",
      "AppDomain-com.example.x: x: a symlink to 'Documents/y/Documents/y/../../../../etc/passwd', which resolves out of the container through another symlink: written as a file holding its target",
    ])
    #expect(try String(contentsOfFile: out + "/x", encoding: .utf8) == "Documents/y/Documents/y/../../../../etc/passwd")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: out + "/Documents/y") == "..")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: out + "/Library/up") == "../x")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: out + "/Library/q") == "up/..")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: out + "/z") == "Documents/y/Documents/y/etc/passwd")
    #expect(try Self.linksOutside(out) == [])
  }

  /// --force replaces only what appdata made: never a folder holding a user's files, the backup,
  /// the folder holding it, or the working folder; each exits 2 and changes nothing.
  @Test func forceNeverDeletesWhatAppdataDidNotMake() throws {
    let folder = ExtractTests.scratch("force")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try FileManager.default.createDirectory(atPath: folder + "/desk", withIntermediateDirectories: true)
    try "important".write(toFile: folder + "/desk/notes.txt", atomically: false, encoding: .utf8)
    #expect(try AppData.shell("mkdir -p '\(folder)/holder' && cp -r '\(ExtractTests.fixtures)/plain' '\(folder)/holder/copy'").status == 0)
    let backup = folder + "/holder/copy"
    let before = try Self.listing(folder, except: "-")
    let cases: [(out: String, message: String)] = [
      (folder + "/desk", "\(folder)/desk: holds what appdata did not make ('notes.txt'); --force replaces only"),
      (backup, "\(backup): is the backup \(backup); appdata extract never writes there"),
      (backup + "/", "\(backup)/: is the backup \(backup); appdata extract never writes there"),
      (folder + "/holder", "\(folder)/holder: holds the backup \(backup); appdata extract never writes over it"),
      (backup + "/inside", "\(backup)/inside: lies inside the backup \(backup); appdata extract never writes there"),
      (folder, "\(folder): holds the backup \(backup); appdata extract never writes over it"),
    ]
    for (out, message) in cases {
      let result = try AppData.run(["extract", "--force", "--app", ExtractTests.app, "-o", out, backup])
      #expect(result.status == 2, "\(out)")
      #expect(result.error.hasPrefix("appdata: error: " + message), "\(result.error)")
      #expect(try Self.listing(folder, except: "-") == before, "\(out)")
    }
    // The working folder, as `-o "$PWD"` gives it.
    let here = try AppData.shell("cd '\(folder)/desk' && '\(AppData.binary)' extract --force --app \(ExtractTests.app) -o \"$PWD\" '\(backup)'")
    #expect(here.status == 2 && here.error.contains("holds what appdata did not make ('notes.txt')"), "\(here.error)")
    #expect(try Self.listing(folder, except: "-") == before)
  }

  /// X2: two runs to one OUT: each builds in a partial folder of its own. Run A is paused at its
  /// third checkpoint while run B extracts to the same OUT and finishes; A's partial folder is
  /// untouched by B (its lock is held), and A then refuses to replace B's OUT and removes only
  /// its own. With --force, A replaces B's (an extract) whole.
  @Test(arguments: [false, true])
  func twoRunsToOneOutEndWithOneCompleteOut(force: Bool) throws {
    let folder = ExtractTests.scratch("x2")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let out = folder + "/out"
    let arguments = ["extract", "--app", ExtractTests.app, "-o", out] + (force ? ["--force"] : [])
    var partialDuringB: [String] = []
    let a = try AppData.runPaused(arguments + ["--json", "\(ExtractTests.fixtures)/encrypted"], at: "extract", environment: ExtractTests.environment) {
      let b = try AppData.run(arguments + ["-q", "\(ExtractTests.fixtures)/plain"])
      #expect(b.status == 0, "\(b.error)")
      // A's partial folder (its owner record beside it is not counted), and B's OUT.
      partialDuringB = try FileManager.default.contentsOfDirectory(atPath: folder).filter { !$0.hasSuffix(".owner") }.sorted()
    }
    #expect(partialDuringB.count == 2 && partialDuringB[0].hasPrefix(".out.appdata-extract-partial-") && partialDuringB[1] == "out", "\(partialDuringB)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["out"])
    if force {
      #expect(a.status == 0, "\(a.error)")
      let report = try a.json()
      #expect((report["containers"] as? [[String: Any]])?.first?["files"] as? Int == 7)
    } else {
      #expect(a.status == 2)
      #expect(a.error.contains("\(out): appeared while this run extracted (another appdata extract?); it was left as it is and nothing was written"), "\(a.error)")
    }
    // One complete OUT: the seven files and the metadata plist.
    #expect(try AppData.shell("find '\(out)' -type f | wc -l").output.trimmingCharacters(in: .whitespacesAndNewlines) == "8")
  }

  /// X4: `-o out//` is `out`, not `o/out`; `-o x// --force` replaces x.
  @Test func outputPathsAreNormalised() throws {
    let folder = ExtractTests.scratch("x4")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let result = try AppData.run(["extract", "-q", "--app", ExtractTests.app, "-o", folder + "//out//", "\(ExtractTests.fixtures)/plain"])
    #expect(result.status == 0, "\(result.error)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["out"])
    let forced = try AppData.run(["extract", "-q", "--force", "--app", ExtractTests.app, "-o", folder + "/out//", "\(ExtractTests.fixtures)/plain"])
    #expect(forced.status == 0, "\(forced.error)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["out"])
    #expect(FileManager.default.fileExists(atPath: folder + "/out/Documents/notes.txt"))
  }

  /// X6: two rows sharing one fileID are each reported, the same from the folder as from a tar.
  /// X9: a row whose Size is 0 but whose payload holds 26 bytes gets them, and the difference is
  /// listed. X10 and X8: a symlink target with a NUL, or of 4,097 bytes, is that row's finding;
  /// the other rows are written.
  @Test func rowsAreNeverChangedOrLostSilently() throws {
    let folder = ExtractTests.scratch("x6")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    #expect(try ExtractTests.runWithGenerator("x.write_hostile_rows(sys.argv[1] + '/backup', 'com.example.x')", in: folder).status == 0)
    #expect(try AppData.shell("cd '\(folder)/backup' && tar cf '\(folder)/backup.tar' .").status == 0)
    var reports: [[String]] = []
    for source in ["backup", "backup.tar"] {
      let out = "\(folder)/out-\(source)"
      let result = try AppData.run(["extract", "--json", "--app", "com.example.x", "-o", out, "\(folder)/\(source)"])
      #expect(result.status == 1, "\(source): \(result.error)")
      reports.append(try Self.problems(result))
      let differences = (try result.json()["containers"] as? [[String: Any]])?.first?["sizeDifferences"] as? [[String: Any]] ?? []
      #expect(differences.count == 1 && differences.first?["path"] as? String == "Documents/zero.txt" && differences.first?["written"] as? Int == 26,
              "\(differences)")
      #expect(try String(contentsOfFile: out + "/Documents/zero.txt", encoding: .utf8) == "twenty-six bytes, not zero")
      #expect(try FileManager.default.contentsOfDirectory(atPath: out + "/Documents").sorted() == ["ok.txt", "zero.txt"], "\(source)")
    }
    let d = "AppDomain-com.example.x"
    #expect(reports[0] == [
      "\(d): Documents/a.txt: not written: another file row has the same fileID, so whose payload it is cannot be told",
      "\(d): Documents/b.txt: not written: another file row has the same fileID, so whose payload it is cannot be told",
      "\(d): Documents/long: not written: a symlink whose target is longer than 4095 bytes",
      "\(d): Documents/nul: not written: a symlink whose target holds a NUL byte",
    ], "\(reports[0])")
    #expect(reports[1] == reports[0])
  }

  /// X5 and X7: a tree 1,000 folders deep is made holding a handful of descriptors, and a partial
  /// folder a killed run left with that tree in it is removed by the next run, under a
  /// descriptor limit of 512 (the backup folder's 256 `xx` folders stay open, the payload queue holds
  /// up to 36; the old removal held two descriptors per level).
  @Test func deepTreesNeedNoDescriptorPerLevel() throws {
    let folder = ExtractTests.scratch("x5")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Self.backup(in: folder, rows: """
      folder_row(""), *[folder_row("/".join(["d"] * n)) for n in range(1, 1001)],
      *[file_row("/".join(["d"] * n) + "/f", b"f") for n in range(900, 1001)]
      """)
    let out = folder + "/out"
    // Killed after the whole tree is made, before the rename.
    let killed = try AppData.shell("ulimit -n 512; '\(AppData.binary)' extract --test-stop-after 1102 --app com.example.x -o '\(out)' '\(folder)/backup'")
    #expect(killed.status == 137 || killed.status == 9, "\(killed.status) \(killed.error)")
    let left = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(".out.") && !$0.hasSuffix(".owner") }
    #expect(left.count == 1)
    let deepest = try AppData.shell("cd '\(folder)/\(left.first ?? "-")' && find . -name f | wc -l").output.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(deepest == "101", "\(deepest)")
    let result = try AppData.shell("ulimit -n 512; '\(AppData.binary)' extract -q --app com.example.x -o '\(out)' '\(folder)/backup'")
    #expect(result.status == 0, "\(result.error)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["backup", "out"])
    #expect(try AppData.shell("find '\(out)' -name f | wc -l").output.trimmingCharacters(in: .whitespacesAndNewlines) == "101")
  }

  /// The writing threads' failure and skip paths, without root: the Nth file written fails as a
  /// full disk would (`APPDATA_TEST_FAIL_WRITE`). Whichever thread meets it, the run exits 2 with
  /// one line, the jobs still queued are dropped, and nothing is left beside OUT.
  @Test(arguments: [("plain", 1), ("plain", 150), ("plain", 307), ("encrypted", 2), ("encrypted", 200)])
  func aWriterThatFailsStopsTheRunAndLeavesNothing(backup: String, failing: Int) throws {
    let folder = ExtractTests.scratch("fail-write")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    #expect(try AppData.shell("python3 '\(AppData.packageRoot)/Scripts/make-extract-backup.py' '\(folder)/fixtures' --files 300 --file-size 3001").status == 0)
    try FileManager.default.createDirectory(atPath: folder + "/work", withIntermediateDirectories: true)
    var environment = ExtractTests.environment
    environment["APPDATA_TEST_FAIL_WRITE"] = String(failing)
    let result = try AppData.run(["extract", "--app", ExtractTests.app, "-o", folder + "/work/out", "\(folder)/fixtures/\(backup)"], environment: environment)
    #expect(result.status == 2, "\(result.status) \(result.error)")
    #expect(result.error.contains("No space left on device") && result.error.split(separator: "\n").count == 1, "\(result.error)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/work").isEmpty)
  }

  /// A backup whose files span every shard folder, extracted with a soft limit of 64 open files
  /// (a Mac's default is 256) and a higher hard one: the writer keeps the shard folders it read
  /// from open, so the run raises its soft limit, as the audit's walk does (the hostile round of
  /// issue 52: "Too many open files", exit 2).
  @Test(.enabled(if: AppData.has("prlimit"), "needs prlimit (util-linux) to lower the soft limit"))
  func aLowSoftOpenFileLimitIsRaised() throws {
    let folder = ExtractTests.scratch("nofile")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    #expect(try AppData.shell("python3 '\(AppData.packageRoot)/Scripts/make-extract-backup.py' '\(folder)/fixtures' --files 600 --file-size 100").status == 0)
    let shards = try FileManager.default.contentsOfDirectory(atPath: folder + "/fixtures/plain").filter { $0.count == 2 }.count
    #expect(shards > 64, "\(shards) shard folders")
    let result = try AppData.shell("prlimit --nofile=64:4096 \"$APPDATA\" extract -q --app \(ExtractTests.app) -o '\(folder)/out' '\(folder)/fixtures/plain'")
    #expect(result.status == 0, "\(result.status) \(result.error)")
    #expect(try AppData.shell("find '\(folder)/out' -type f | wc -l").output.trimmingCharacters(in: .whitespacesAndNewlines) != "0")
  }

  /// A signal while the password is read from a pipe whose writer says nothing ends the run with
  /// 128 + the signal's number, nothing written (the hostile round of issue 52: the read went on
  /// until the writer closed, then the run failed with exit 2 as if the password were empty).
  @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
  func aSignalEndsAPasswordReadThatWaits(signal: Int32) throws {
    let folder = ExtractTests.scratch("password-wait")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let input = Pipe()
    defer { try? input.fileHandleForWriting.close() }
    // Should the signal not end the read, the writer goes away after two minutes, so the test
    // fails on the exit status rather than waiting for ever.
    let writer = input.fileHandleForWriting
    DispatchQueue.global().asyncAfter(deadline: .now() + 120) { try? writer.close() }
    var environment = ExtractTests.environment
    environment["APPDATA_BACKUP_PASSWORD"] = nil
    let result = try AppData.runPaused(["extract", "--app", ExtractTests.app, "-o", folder + "/out", "--password-stdin",
                                        "\(ExtractTests.fixtures)/encrypted"], at: "password", environment: environment,
                                       standardInput: input) { process in
      kill(process.processIdentifier, signal)
    }
    #expect(result.status == 128 + signal, "\(result.status) \(result.error)")
    #expect(result.error.contains("interrupted while reading the password"), "\(result.error)")
    #expect(!FileManager.default.fileExists(atPath: folder + "/out"))
  }
}
