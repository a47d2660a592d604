@testable import AppDataSystem
import Foundation
import Testing

/// `appdata restore` (issue 53) into Simulator device folders built as CoreSimulator lays them
/// out (`device.plist`, `data/Containers/Data/Application/UUID/` with its metadata plist), from
/// the backups `Scripts/make-extract-backup.py` writes.
@Suite("restore")
struct RestoreTests {
  static let fixtures = ExtractTests.fixtures
  static let app = ExtractTests.app
  static let environment = ExtractTests.environment
  static let applications = "data/Containers/Data/Application"
  static let metadata = ".com.apple.mobile_container_manager.metadata.plist"

  /// A device `UDID` in a fresh folder: three apps (the one restored is the second of them by
  /// name), the app's group and its widget, each with data of its own (modes, times, an
  /// attribute), `state` as given (1 shut down, 3 booted). `metadata` changes the app's
  /// metadata plist: "missing", "damaged" (not a plist) or "noid" (no identifier).
  static func device(state: Int = 1, metadata: String = "ok") throws -> (folder: String, device: String) {
    let folder = ExtractTests.scratch("restore")
    let device = folder + "/Devices/ABCD-1234"
    let script = """
      import os, plistlib, sys
      dev, state, meta = sys.argv[1], int(sys.argv[2]), sys.argv[3]
      os.makedirs(dev)
      plistlib.dump({"UDID": "ABCD-1234", "state": state, "name": "iPhone 16", "runtime": "com.apple.CoreSimulator.SimRuntime.iOS-18-0"}, open(dev + "/device.plist", "wb"))
      def container(place, uuid, ident, cls, which="ok"):
          d = f"{dev}/data/Containers/{place}/{uuid}"
          for sub in ("Documents/Old", "Library/Preferences", "tmp"):
              os.makedirs(d + "/" + sub)
          with open(d + "/Documents/old.txt", "w") as f: f.write("old data of " + ident + "\\n")
          os.setxattr(d + "/Documents/old.txt", "user.com.example.old", b"kept")
          os.chmod(d + "/Documents/Old", 0o700)
          plist = d + "/.com.apple.mobile_container_manager.metadata.plist"
          if which == "damaged":
              open(plist, "wb").write(b"not a plist")
          elif which == "fifo":
              os.mkfifo(plist)
          elif which == "noid":
              plistlib.dump({"MCMMetadataContentClass": cls}, open(plist, "wb"))
          elif which != "missing":
              plistlib.dump({"MCMMetadataIdentifier": ident, "MCMMetadataContentClass": cls, "MCMMetadataUUID": uuid}, open(plist, "wb"))
      container("Data/Application", "1B0D1E55-0000-4000-8000-000000000001", "com.example.other", 2)
      container("Data/Application", "2C0D1E55-0000-4000-8000-000000000002", "com.example.extract", 2, meta)
      container("Data/Application", "3D0D1E55-0000-4000-8000-000000000003", "com.example.extractor", 2)
      container("Shared/AppGroup", "4E0D1E55-0000-4000-8000-000000000004", "group.com.example.extract", 7)
      container("Data/PluginKitPlugin", "5F0D1E55-0000-4000-8000-000000000005", "com.example.extract.widget", 4)
      if meta == "twice":
          container("Data/Application", "6A0D1E55-0000-4000-8000-000000000006", "com.example.extract", 2)
      # Every time fixed (each its own), deepest first, so two devices made so are equal.
      for folder, folders, files in os.walk(dev, topdown=False):
          for name in files + folders + ([""] if folder == dev else []):
              p = os.path.join(folder, name) if name else folder
              t = 1_500_000_000 + len(p) * 7
              os.utime(p, (t, t), follow_symlinks=False)
      """
    let result = try AppData.shell("python3 - '\(device)' \(state) \(metadata) <<'EOF'\n\(script)\nEOF")
    #expect(result.status == 0, "\(result.error)")
    return (folder, device)
  }

  static let appUUID = "2C0D1E55-0000-4000-8000-000000000002"
  static let groupUUID = "4E0D1E55-0000-4000-8000-000000000004"
  static let pluginUUID = "5F0D1E55-0000-4000-8000-000000000005"

  /// Every entry below `path` (and `path` itself as "."): kind, mode, size, SHA-256, link
  /// target, modification time (folders too) and extended attributes; `skip` names at its top
  /// are left out, and with `root: false` so is `.`.
  static func manifest(_ path: String, skip: [String] = [], root: Bool = true, undated: [String] = []) throws -> String {
    let script = """
      import hashlib, json, os, stat, sys
      top, skip, with_root = os.fsencode(sys.argv[1]), set(sys.argv[4:]), sys.argv[2] == "1"
      # The one folder the backup has no row for is made when extract makes it: its time is now.
      undated = {b"Library/Application Support"} | {os.fsencode(p) for p in sys.argv[3].split(",") if p}
      def describe(p):
          st = os.lstat(p)
          e = {"mode": oct(stat.S_IMODE(st.st_mode)), "mtime": None if os.path.relpath(p, top) in undated else st.st_mtime_ns}
          if stat.S_ISDIR(st.st_mode): e["type"] = "dir"
          elif stat.S_ISLNK(st.st_mode): e["type"] = "link"; e["target"] = os.fsdecode(os.readlink(p))
          elif not stat.S_ISREG(st.st_mode): e["type"] = "special"  # a FIFO is never opened
          else: e["type"] = "file"; e["sha256"] = hashlib.sha256(open(p, "rb").read()).hexdigest()
          if not stat.S_ISLNK(st.st_mode):
              e["xattrs"] = {n: os.getxattr(p, n, follow_symlinks=False).hex() for n in sorted(os.listxattr(p, follow_symlinks=False))}
          return e
      out = {".": describe(top)} if with_root else {}
      for folder, folders, files in os.walk(top):
          if folder == top:
              folders[:] = [f for f in folders if os.fsdecode(f) not in skip]
              files = [f for f in files if os.fsdecode(f) not in skip]
          for name in folders + files:
              full = os.path.join(folder, name)
              out[os.fsdecode(os.path.relpath(full, top))] = describe(full)
      print(json.dumps(out, sort_keys=True, indent=0))
      """
    let result = try AppData.shell("python3 - '\(path)' \(root ? 1 : 0) '\(undated.joined(separator: ","))' \(skip.map { "'\($0)'" }.joined(separator: " ")) <<'EOF'\n\(script)\nEOF")
    #expect(result.status == 0, "\(result.error)")
    return result.output
  }

  /// The metadata plist as it must stay: inode, bytes, mode and time.
  static func metadataIdentity(_ container: String) throws -> [String] {
    let attributes = try FileManager.default.attributesOfItem(atPath: container + "/" + metadata)
    return ["\(attributes[.systemFileNumber] ?? "")", try ExtractTests.sha256(container + "/" + metadata),
            "\(attributes[.posixPermissions] ?? "")", "\(attributes[.modificationDate] ?? "")"]
  }

  /// What `extract` writes for the same backup and id, as a container root.
  static func extracted(_ backup: String, id: String = app, in folder: String) throws -> String {
    let out = folder + "/extracted-\(id)"
    let result = try AppData.run(["extract", "--app", id, "-o", out, "\(fixtures)/\(backup)"], environment: environment)
    #expect(result.status == 0, "\(result.error)")
    return out
  }

  /// The app is found by its id among three (one whose id holds it: com.example.extractor),
  /// and its container then holds what `extract` writes, entry for entry with modes, times and
  /// attributes; the container's folder keeps its name, mode, time and attributes, its
  /// metadata plist is the same file, untouched; no other container changes; the previous
  /// contents are kept beside it, named with their size.
  @Test(arguments: ["plain", "encrypted"])
  func theAppIsFoundByIDAndHoldsWhatExtractWrites(backup: String) throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let container = "\(device)/\(Self.applications)/\(Self.appUUID)"
    let others = try ["1B0D1E55-0000-4000-8000-000000000001", "3D0D1E55-0000-4000-8000-000000000003"].map {
      try Self.manifest("\(device)/\(Self.applications)/\($0)")
    }
    let rootBefore = try Self.manifest(container, skip: ["Documents", "Library", "tmp", Self.metadata])
    let metadataBefore = try Self.metadataIdentity(container)
    let result = try AppData.run(["restore", "\(Self.fixtures)/\(backup)", "--simulator", device, "--app", Self.app, "--json"],
                                 environment: Self.environment)
    #expect(result.status == 0, "\(result.error)")
    let report = try result.json()
    let containers = report["containers"] as? [[String: Any]] ?? []
    #expect(containers.count == 1)
    #expect(containers.first?["path"] as? String == container)
    #expect(containers.first?["files"] as? Int == 7 && containers.first?["symlinks"] as? Int == 1)
    #expect(containers.first?["replacedFiles"] as? Int == 1 && containers.first?["replacedBytes"] as? Int == 32)
    #expect(containers.first?["keptBytes"] as? Int == 32)
    let kept = containers.first?["keptCopy"] as? String ?? ""
    #expect(kept.hasPrefix("\(device)/\(Self.applications)/.\(Self.appUUID).appdata-restore-"))
    #expect(try String(contentsOfFile: kept + "/Documents/old.txt", encoding: .utf8) == "old data of com.example.extract\n")
    // What extract writes, but for the container's own folder and its metadata plist.
    let out = try Self.extracted(backup, in: folder)
    #expect(try Self.manifest(container, skip: [Self.metadata], root: false) == Self.manifest(out, skip: [Self.metadata], root: false))
    #expect(try Self.manifest(container, skip: ["Documents", "Library", "tmp", Self.metadata]) == rootBefore)
    #expect(try Self.metadataIdentity(container) == metadataBefore)
    #expect(try ["1B0D1E55-0000-4000-8000-000000000001", "3D0D1E55-0000-4000-8000-000000000003"].map {
      try Self.manifest("\(device)/\(Self.applications)/\($0)")
    } == others)
    // The kept copy carries the do-not-back-up marker, and the next audit of the device names it.
    #expect(ExtractTests.attributes(kept)["user.com.apple.metadata:com_apple_backup_excludeItem"] != nil)
    let audit = try AppData.auditJSON(device, ["--no-config", "--app", Self.app, "--fail-on", "never"])
    let named = (audit["containers"] as? [[String: Any]] ?? []).flatMap { findings($0, rule: "restore-kept-copy") }
    #expect(named.count == 1 && named.first?["path"] as? String == "../" + (kept.split(separator: "/").last.map(String.init) ?? ""), "\(named)")
    #expect(named.first?["severity"] as? String == "info")
    // The group and the widget were not asked for.
    #expect(try String(contentsOfFile: "\(device)/data/Containers/Shared/AppGroup/\(Self.groupUUID)/Documents/old.txt", encoding: .utf8)
            == "old data of group.com.example.extract\n")
  }

  /// SOURCE may be what extract wrote: an .xcappdata package or a container folder; the
  /// container then holds that tree, entry for entry (its metadata plist stays the device's),
  /// and a symlink in it that resolves out is written as a file holding its target.
  @Test(arguments: ["package", "container"])
  func aPackageOrAContainerFolderIsCopiedIn(shape: String) throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let container = "\(device)/\(Self.applications)/\(Self.appUUID)"
    let metadataBefore = try Self.metadataIdentity(container)
    let source = folder + (shape == "package" ? "/source.xcappdata" : "/source")
    #expect(try AppData.run(["extract", "--app", Self.app, "-o", source, "\(Self.fixtures)/plain"]).status == 0)
    let root = shape == "package" ? source + "/AppData" : source
    try FileManager.default.createSymbolicLink(atPath: root + "/Documents/escape", withDestinationPath: "../../../outside")
    let result = try AppData.run(["restore", source, "--simulator", device, "--app", Self.app, "--json"])
    #expect(result.status == 0, "\(result.error)")
    let problems = try result.json()["problems"] as? [[String: Any]] ?? []
    #expect(problems.count == 1 && problems.first?["path"] as? String == "Documents/escape" && problems.first?["severity"] as? String == "warning")
    #expect(try String(contentsOfFile: container + "/Documents/escape", encoding: .utf8) == "../../../outside")
    try FileManager.default.removeItem(atPath: container + "/Documents/escape")
    try FileManager.default.removeItem(atPath: root + "/Documents/escape")
    // The removals changed Documents' time: compared without it.
    #expect(try Self.manifest(container, skip: [Self.metadata], root: false, undated: ["Documents"])
            == Self.manifest(root, skip: [Self.metadata], root: false, undated: ["Documents"]))
    #expect(try Self.metadataIdentity(container) == metadataBefore)
    #expect(try AppData.run(["restore", "--undo", device, "--app", Self.app]).status == 0)
    #expect(try String(contentsOfFile: container + "/Documents/old.txt", encoding: .utf8) == "old data of com.example.extract\n")
  }

  /// A source folder changed while it is copied (the attack report's finding 1): a symlink
  /// judged inside when the source was first read, `Documents/a -> x/y`, replaced by a folder
  /// before the copy reaches it, would make `Documents/z -> a/../../..` resolve to the
  /// Application folder. The folder is not made where the link was; the link stays judged on
  /// the tree as first read, and resolves nowhere.
  @Test func aSymlinkReplacedByAFolderWhileCopiedIsNotFollowed() throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let container = "\(device)/\(Self.applications)/\(Self.appUUID)"
    let source = folder + "/source"
    try FileManager.default.createDirectory(atPath: source + "/Documents/x/y", withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(atPath: source + "/Documents/a", withDestinationPath: "x/y")
    try FileManager.default.createSymbolicLink(atPath: source + "/Documents/z", withDestinationPath: "a/../../..")
    let result = try AppData.runPaused(["restore", source, "--simulator", device, "--app", Self.app, "--json"], at: "restore") {
      try FileManager.default.removeItem(atPath: source + "/Documents/a")
      try FileManager.default.createDirectory(atPath: source + "/Documents/a", withIntermediateDirectories: false)
    }
    #expect(result.status == 0, "\(result.status) \(result.error)")
    // What the source held when it was copied: a folder at a. The link through it is judged on
    // that tree, where it climbs out of the container: a file holding its target, not a link
    // that would name the Application folder once anything makes a folder at a.
    var isFolder: ObjCBool = false
    #expect(FileManager.default.fileExists(atPath: container + "/Documents/a", isDirectory: &isFolder) && isFolder.boolValue)
    #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: container + "/Documents/z")) == nil)
    #expect(try String(contentsOfFile: container + "/Documents/z", encoding: .utf8) == "a/../../..")
    let problems = try result.json()["problems"] as? [[String: Any]] ?? []
    #expect(problems.map { $0["path"] as? String } == ["Documents/z"], "\(problems)")
  }

  /// A backup whose app domain holds a row for the metadata plist: the row is not written (the
  /// container keeps the device's own, linked in), and the restore runs (it was refused with
  /// "File exists", nothing changed).
  @Test func aMetadataPlistRowInTheBackupIsLeftOut() throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try ExtractHostileTests.backup(in: folder, apps: [Self.app], rows: """
      folder_row(""), folder_row("Documents"), file_row("Documents/a.txt", b"abc"),
      file_row(".com.apple.mobile_container_manager.metadata.plist", b"not the device's")
      """)
    let plist = "\(device)/\(Self.applications)/\(Self.appUUID)/.com.apple.mobile_container_manager.metadata.plist"
    let before = try Data(contentsOf: URL(fileURLWithPath: plist))
    let result = try AppData.run(["restore", folder + "/backup", "--simulator", device, "--app", Self.app, "--json"])
    #expect(result.status == 0, "\(result.status) \(result.error)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: plist)) == before)
    #expect(try String(contentsOfFile: "\(device)/\(Self.applications)/\(Self.appUUID)/Documents/a.txt", encoding: .utf8) == "abc")
    let problems = try result.json()["problems"] as? [[String: Any]] ?? []
    #expect(problems.map { $0["path"] as? String } == [".com.apple.mobile_container_manager.metadata.plist"], "\(problems)")
  }

  /// A dry run from a folder reads it as the copy does: what the run would not write (a FIFO, a
  /// name reserved for appdata's files, a link written as a file) is in its plan, with the same
  /// figures and exit status as the run (the hostile round of issue 52: the plan said "none" and
  /// exit 0 where the run refused both).
  @Test func aDryRunFromAFolderNamesWhatTheRunWouldNotWrite() throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let source = folder + "/source"
    try FileManager.default.createDirectory(atPath: source + "/Documents/sub", withIntermediateDirectories: true)
    try Data("abc".utf8).write(to: URL(fileURLWithPath: source + "/Documents/sub/a.txt"))
    try Data("x".utf8).write(to: URL(fileURLWithPath: source + "/Documents/.appdata-partial-x"))
    #expect(mkfifo(source + "/Documents/pipe", 0o600) == 0)
    try FileManager.default.createSymbolicLink(atPath: source + "/Documents/out", withDestinationPath: "../../..")
    try FileManager.default.createSymbolicLink(atPath: source + "/Documents/in", withDestinationPath: "sub/a.txt")
    let arguments = ["restore", source, "--simulator", device, "--app", Self.app, "--json"]
    let planned = try AppData.run(arguments + ["--dry-run"])
    let done = try AppData.run(arguments)
    #expect(planned.status == 1 && done.status == 1, "\(planned.status) \(done.status) \(planned.error) \(done.error)")
    func figures(_ result: RunResult) throws -> [String] {
      let document = try result.json()
      let problems = (document["problems"] as? [[String: Any]] ?? []).map { "\($0["path"] ?? "") \($0["message"] ?? "")" }.sorted()
      let containers = (document["containers"] as? [[String: Any]] ?? []).map { container in
        ["folders", "files", "symlinks", "bytes"].map { "\($0)=\(container[$0] ?? "")" }.joined(separator: " ")
      }
      return problems + containers
    }
    #expect(try figures(planned) == figures(done))
    #expect(try figures(planned).contains { $0.hasPrefix("Documents/pipe ") } && figures(planned).contains { $0.hasPrefix("Documents/.appdata-partial-x ") })
  }

  /// Where the device's volume ignores case (a Mac's APFS; `APPDATA_TEST_NAME_COMPARISON=case`
  /// stands in for it), `Documents/z -> K/../..` goes through the link `Documents/k -> ..` and out
  /// of the container: it is written as a file holding its target (the hostile round of issue 53
  /// found it written as a link). Byte for byte, it stays a link.
  @Test func aLinkThroughALinkSpelledInAnotherCaseIsJudgedAsTheVolumeResolvesIt() throws {
    for folding in [true, false] {
      let (folder, device) = try Self.device()
      defer { try? FileManager.default.removeItem(atPath: folder) }
      let container = "\(device)/\(Self.applications)/\(Self.appUUID)"
      let source = folder + "/source"
      try FileManager.default.createDirectory(atPath: source + "/Documents", withIntermediateDirectories: true)
      try FileManager.default.createSymbolicLink(atPath: source + "/Documents/k", withDestinationPath: "..")
      try FileManager.default.createSymbolicLink(atPath: source + "/Documents/z", withDestinationPath: "K/../..")
      let result = try AppData.run(["restore", source, "--simulator", device, "--app", Self.app, "--json"],
                                   environment: folding ? CaseInsensitiveTests.folding : [:])
      #expect(result.status == 0, "\(result.status) \(result.error)")
      let link = try? FileManager.default.destinationOfSymbolicLink(atPath: container + "/Documents/z")
      #expect(link == (folding ? nil : "K/../.."), "folding \(folding)")
      if folding {
        #expect((try? String(contentsOfFile: container + "/Documents/z", encoding: .utf8)) == "K/../..")
        #expect(result.output.contains("resolves out of the container through another symlink"), "\(result.output)")
      }
      #expect(try FileManager.default.destinationOfSymbolicLink(atPath: container + "/Documents/k") == "..")
    }
  }

  /// A link the copy does not write (a name reserved for appdata's own files) is no way out for
  /// the links through it: they are judged as if it were a folder, and written as files when
  /// they climb out (the hostile round of issue 52: they were written as links, which named the
  /// Application folder, or /etc, once a folder was made at the reserved name).
  @Test func aLinkThroughALinkNotWrittenIsJudgedWithoutIt() throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let container = "\(device)/\(Self.applications)/\(Self.appUUID)"
    let source = folder + "/source"
    let deep = (0..<20).map { "d\($0)" }.joined(separator: "/")
    try FileManager.default.createDirectory(atPath: source + "/Documents/x/" + deep, withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(atPath: source + "/Documents/.appdata-partial-q", withDestinationPath: "x/y")
    try FileManager.default.createSymbolicLink(atPath: source + "/Documents/z", withDestinationPath: ".appdata-partial-q/../../..")
    try FileManager.default.createSymbolicLink(atPath: source + "/Documents/.appdata-partial-r", withDestinationPath: "x/" + deep)
    let climb = ".appdata-partial-r/" + String(repeating: "../", count: 22) + "etc"
    try FileManager.default.createSymbolicLink(atPath: source + "/Documents/w", withDestinationPath: climb)
    try FileManager.default.createSymbolicLink(atPath: source + "/Documents/inside", withDestinationPath: "x/d0")
    let result = try AppData.run(["restore", source, "--simulator", device, "--app", Self.app, "--json"])
    #expect(result.status == 1, "\(result.status) \(result.error)")
    for (name, target) in [("z", ".appdata-partial-q/../../.."), ("w", climb)] {
      #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: container + "/Documents/" + name)) == nil, "\(name)")
      #expect((try? String(contentsOfFile: container + "/Documents/" + name, encoding: .utf8)) == target, "\(name)")
    }
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: container + "/Documents/inside") == "x/d0")
    #expect(!FileManager.default.fileExists(atPath: container + "/Documents/.appdata-partial-q"))
  }

  /// A dry run changes nothing, a killed run's leftovers included, on every path: a backup, a
  /// folder source and --undo (the cold review found the last two removing them); nor does a
  /// run refused for a backup without the app, or an undo with nothing to undo (a hostile round
  /// found both removing them). The next run that goes on does.
  @Test func aDryRunOrARefusedRunLeavesAKilledRunsLeftoversAsTheyAre() throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let source = folder + "/source.xcappdata"
    #expect(try AppData.run(["extract", "--app", Self.app, "-o", source, "\(Self.fixtures)/plain"]).status == 0)
    let killed = try AppData.run(["restore", source, "--simulator", device, "--app", Self.app, "--test-stop-after", "3"])
    #expect(killed.status == 137 || killed.status == -9 || killed.status == 9, "\(killed.status)")
    let applications = "\(device)/\(Self.applications)"
    let left = try FileManager.default.contentsOfDirectory(atPath: applications).filter { $0.hasPrefix(".") }.sorted()
    #expect(left.count == 2, "\(left)")
    for arguments in [["restore", source, "--simulator", device, "--app", Self.app, "--dry-run"],
                      ["restore", "\(Self.fixtures)/plain", "--simulator", device, "--app", Self.app, "--dry-run"],
                      ["restore", "--undo", device, "--app", Self.app, "--dry-run"]] {
      _ = try AppData.run(arguments)
      #expect(try FileManager.default.contentsOfDirectory(atPath: applications).filter { $0.hasPrefix(".") }.sorted() == left, "\(arguments)")
    }
    // The backup without the app's rows.
    let without = folder + "/without"
    _ = try AppData.shell("""
      cp -R '\(Self.fixtures)/plain' '\(without)' && python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); \
      d.execute('DELETE FROM Files WHERE domain = ?', ('AppDomain-' + sys.argv[2],)); d.commit()" '\(without)/Manifest.db' '\(Self.app)'
      """)
    for arguments in [["restore", without, "--simulator", device, "--app", Self.app],
                      ["restore", "--undo", device, "--app", Self.app]] {
      let refused = try AppData.run(arguments)
      #expect(refused.status == 2 && refused.error.split(separator: "\n").count == 1, "\(arguments): \(refused.status) \(refused.error)")
      #expect(try FileManager.default.contentsOfDirectory(atPath: applications).filter { $0.hasPrefix(".") }.sorted() == left, "\(arguments)")
    }
    #expect(try AppData.run(["restore", source, "--simulator", device, "--app", Self.app]).status == 0)
    let after = try FileManager.default.contentsOfDirectory(atPath: applications).filter { $0.hasPrefix(".") }
    #expect(after.count == 2 && Set(after).isDisjoint(with: left), "\(after)")
  }

  /// With --with-extensions the app's group and plugin on the device are restored too, each
  /// holding what extract writes for its id.
  @Test func groupsAndPluginsToo() throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let result = try AppData.run(["restore", "\(Self.fixtures)/plain", "--simulator", device, "--app", Self.app, "--with-extensions", "--json"])
    #expect(result.status == 0, "\(result.error)")
    let ids = (try result.json()["containers"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    #expect(ids == ["com.example.extract", "group.com.example.extract", "com.example.extract.widget"])
    for (id, place) in [("com.example.extract", "Data/Application/\(Self.appUUID)"), ("group.com.example.extract", "Shared/AppGroup/\(Self.groupUUID)"),
                        ("com.example.extract.widget", "Data/PluginKitPlugin/\(Self.pluginUUID)")] {
      let out = try Self.extracted("plain", id: id, in: folder)
      #expect(try Self.manifest("\(device)/data/Containers/\(place)", skip: [Self.metadata], root: false)
              == Self.manifest(out, skip: [Self.metadata], root: false), "\(id)")
    }
  }

  /// An encrypted backup's keys are derived once for the app, its group and its plugin: the
  /// rounds appdata counts are one extract's.
  @Test func anEncryptedBackupIsUnlockedOnceForEveryContainer() throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    var environment = Self.environment
    environment["APPDATA_DEBUG_STATS"] = "1"
    func rounds(_ result: RunResult) -> String? {
      result.error.split(separator: " ").first { $0.hasPrefix("key-rounds=") }.map(String.init)
    }
    let restore = try AppData.run(["restore", "-q", "\(Self.fixtures)/encrypted", "--simulator", device, "--app", Self.app, "--with-extensions"],
                                  environment: environment)
    #expect(restore.status == 0, "\(restore.error)")
    let extract = try AppData.run(["extract", "-q", "--app", Self.app, "-o", folder + "/out", "\(Self.fixtures)/encrypted"], environment: environment)
    #expect(rounds(restore) != nil && rounds(restore) == rounds(extract), "\(restore.error) \(extract.error)")
  }

  /// A booted device, an app that is not installed, an app whose metadata plist is missing or
  /// damaged: each refused in one line naming the path and the cause, exit 2, nothing changed.
  @Test(arguments: [("booted", "ok", "com.example.extract"), ("missing-app", "ok", "com.example.notes"),
                    ("metadata", "missing", "com.example.extract"), ("metadata", "damaged", "com.example.extract"),
                    ("metadata", "noid", "com.example.extract"), ("metadata", "fifo", "com.example.extract"),
                    ("claimed twice", "twice", "com.example.extract")])
  func refusalsAreOneLineAndChangeNothing(label: String, metadata: String, app: String) throws {
    let (folder, device) = try Self.device(state: label == "booted" ? 3 : 1, metadata: metadata)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let before = try Self.manifest(device)
    for arguments in [["restore", "\(Self.fixtures)/plain", "--simulator", device, "--app", app], ["restore", "--undo", device, "--app", app]] {
      let result = try AppData.run(arguments)
      #expect(result.status == 2, "\(arguments) \(result.status)")
      let lines = result.error.split(separator: "\n")
      #expect(lines.count == 1, "\(result.error)")
      #expect(result.error.hasPrefix("appdata: error: \(device):"), "\(result.error)")
      switch (label, metadata) {
      case ("booted", _):
        #expect(result.error.contains("not shut down (Booted, state 3); run 'xcrun simctl shutdown ABCD-1234' first"), "\(result.error)")
      case ("missing-app", _):
        // Every installed id, the ones that fit first.
        #expect(result.error.contains("no app 'com.example.notes' is installed; installed: "), "\(result.error)")
        #expect(result.error.contains("com.example.extract") && result.error.contains("com.example.extractor") && result.error.contains("com.example.other"))
      case (_, "missing"):
        #expect(result.error.contains("\(Self.appUUID): its \(Self.metadata) is missing"), "\(result.error)")
      case (_, "fifo"):
        // Opened without blocking: a FIFO is not waited on (attack report, finding 2).
        #expect(result.error.contains("\(Self.appUUID): \(Self.metadata) is not a file"), "\(result.error)")
      case (_, "twice"):
        #expect(result.error.contains("2 containers claim 'com.example.extract' (\(Self.appUUID), 6A0D1E55-0000-4000-8000-000000000006)"), "\(result.error)")
      case (_, "damaged"):
        #expect(result.error.contains("\(Self.appUUID): its \(Self.metadata) is damaged (not a property list appdata reads)"), "\(result.error)")
      default:
        #expect(result.error.contains("\(Self.appUUID): its \(Self.metadata) is damaged (no MCMMetadataIdentifier)"), "\(result.error)")
      }
    }
    #expect(try Self.manifest(device) == before)
  }

  /// A container of another user's is refused in one line (what appdata writes would be the
  /// running user's), run as nobody on root's device.
  @Test(.enabled(if: AppData.canRunAsAnotherUser, "needs root and setpriv"))
  func anotherUsersContainerIsRefused() throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    _ = try AppData.shell("chmod -R a+rwX '\(folder)'")
    let before = try Self.manifest(device)
    let result = try AppData.run(["restore", "\(Self.fixtures)/plain", "--simulator", device, "--app", Self.app], asUser: 65534)
    #expect(result.status == 2)
    #expect(result.error == "appdata: error: \(device)/\(Self.applications)/\(Self.appUUID): the container is user 0's, not this user's (65534); run appdata restore as the user the Simulator runs as\n", "\(result.error)")
    #expect(try Self.manifest(device) == before)
  }

  /// A source folder this user cannot open is not written, and the report says why in the
  /// system's words (a hostile round of issue 53 found it called a symlink), run as nobody.
  @Test(.enabled(if: AppData.canRunAsAnotherUser, "needs root and setpriv"))
  func aSourceFolderThatCannotBeOpenedSaysWhy() throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let source = folder + "/source"
    try FileManager.default.createDirectory(atPath: source + "/Documents/locked", withIntermediateDirectories: true)
    try Data("a\n".utf8).write(to: URL(fileURLWithPath: source + "/Documents/a.txt"))
    _ = try AppData.shell("chown -R 65534:65534 '\(folder)' && chown 0:0 '\(source)/Documents/locked' && chmod 700 '\(source)/Documents/locked'")
    let result = try AppData.run(["restore", source, "--simulator", device, "--app", Self.app, "--json"], asUser: 65534)
    #expect(result.status == 1, "\(result.error)")
    let problems = (try result.json()["problems"] as? [[String: Any]] ?? []).map { "\($0["path"] as? String ?? ""): \($0["message"] as? String ?? "")" }
    #expect(problems == ["Documents/locked: not written: the folder cannot be opened: Permission denied"], "\(problems)")
  }

  /// --dry-run prints the plan, the same as JSON, and changes nothing.
  @Test func aDryRunPrintsThePlanAndChangesNothing() throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let before = try Self.manifest(device)
    let table = try AppData.run(["restore", "\(Self.fixtures)/plain", "--simulator", device, "--app", Self.app, "--dry-run"])
    #expect(table.status == 0, "\(table.error)")
    #expect(table.output.contains("Would restore: \(device)/\(Self.applications)/\(Self.appUUID)"), "\(table.output)")
    let json = try AppData.run(["restore", "\(Self.fixtures)/plain", "--simulator", device, "--app", Self.app, "--dry-run", "--format", "json"])
    #expect(json.status == 0)
    let container = (try json.json()["containers"] as? [[String: Any]])?.first
    #expect(container?["files"] as? Int == 7 && container?["bytes"] as? Int == 78_282 && container?["replacedFiles"] as? Int == 1)
    #expect(try json.json()["dryRun"] as? Bool == true)
    #expect(try AppData.shell("python3 -c 'import json,sys,jsonschema; jsonschema.validate(json.loads(sys.stdin.read()), json.load(open(sys.argv[1])))' '\(AppData.packageRoot)/Docs/restore.schema.json' <<'EOF'\n\(json.output)\nEOF").status == 0)
    #expect(try Self.manifest(device) == before)
  }

  /// Ctrl-C or SIGTERM while the new tree is being written (paused at extract's third
  /// checkpoint): the device is left exactly as it was, nothing of appdata's beside the container.
  @Test(arguments: ["SIGTERM", "SIGINT"])
  func anInterruptLeavesTheDeviceAsItWas(signal: String) throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // The Application folder's own time changes: its hidden folder was made and removed.
    let before = try Self.manifest(device, undated: [Self.applications])
    let result = try AppData.runPaused(["restore", "\(Self.fixtures)/encrypted", "--simulator", device, "--app", Self.app], at: "extract",
                                       environment: Self.environment, withProcess: { process in
      let hidden = try FileManager.default.contentsOfDirectory(atPath: "\(device)/\(Self.applications)").filter { $0.hasPrefix(".") }
      #expect(hidden.count == 2, "\(hidden)")
      kill(process.processIdentifier, signal == "SIGTERM" ? SIGTERM : SIGINT)
      process.waitUntilExit()
    })
    #expect(result.status == (signal == "SIGTERM" ? 143 : 130), "\(result.status) \(result.error)")
    #expect(result.error == "appdata: error: \(device): interrupted; the device was left as it was\n", "\(result.error)")
    #expect(try Self.manifest(device, undated: [Self.applications]) == before)
  }

  /// The container replaced by another folder between the check and the exchange (paused at
  /// `restore-exchange`): the exchange is seen to have taken the wrong folder, is undone, and the
  /// run refuses in one line; the folder now at the container's name is left as it was, and
  /// nothing of appdata's is left beside it.
  @Test func aContainerReplacedBeforeTheExchangeIsLeftAsItIs() throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let applications = "\(device)/\(Self.applications)"
    let container = "\(applications)/\(Self.appUUID)"
    let result = try AppData.runPaused(["restore", "\(Self.fixtures)/plain", "--simulator", device, "--app", Self.app], at: "restore-exchange") {
      try FileManager.default.moveItem(atPath: container, toPath: folder + "/moved-away")
      try FileManager.default.createDirectory(atPath: container + "/Documents", withIntermediateDirectories: true)
      try Data("impostor\n".utf8).write(to: URL(fileURLWithPath: container + "/Documents/impostor.txt"))
    }
    #expect(result.status == 2, "\(result.error)")
    #expect(result.error == "appdata: error: \(container): changed while it was being replaced; it was left as it is\n", "\(result.error)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: container) == ["Documents"])
    #expect(try String(contentsOfFile: container + "/Documents/impostor.txt", encoding: .utf8) == "impostor\n")
    #expect(try FileManager.default.contentsOfDirectory(atPath: applications).filter { $0.hasPrefix(".") } == [])
    #expect(try String(contentsOfFile: folder + "/moved-away/Documents/old.txt", encoding: .utf8) == "old data of com.example.extract\n")
  }

  /// An undo killed at each of its checkpoints never leaves restore's marks (do-not-back-up, and
  /// `appdata.restore`) on the container, whichever tree it holds, and a later restore does not
  /// copy them onto its new tree (a hostile round of issue 53: the marks were taken off after the
  /// exchange, so a kill between left the old contents excluded from backups, and the next
  /// restore's tree too).
  @Test func anUndoKilledAtEachCheckpointLeavesNoMarkOnTheContainer() throws {
    let marks = ["user.appdata.restore", "user.com.apple.metadata:com_apple_backup_excludeItem"]
    var stop = 1
    while stop < 10 {
      let (folder, device) = try Self.device()
      defer { try? FileManager.default.removeItem(atPath: folder) }
      let container = "\(device)/\(Self.applications)/\(Self.appUUID)"
      #expect(try AppData.run(["restore", "\(Self.fixtures)/plain", "--simulator", device, "--app", Self.app]).status == 0)
      let killed = try AppData.run(["restore", "--undo", "--test-stop-after", String(stop), device, "--app", Self.app])
      if killed.status == 0 { break }
      #expect(killed.status == 137 || killed.status == -9 || killed.status == 9, "checkpoint \(stop): \(killed.status)")
      #expect(marks.allSatisfy { ExtractTests.attributes(container)[$0] == nil }, "checkpoint \(stop): \(ExtractTests.attributes(container))")
      #expect(try AppData.run(["restore", "\(Self.fixtures)/plain", "--simulator", device, "--app", Self.app]).status == 0, "checkpoint \(stop)")
      #expect(marks.allSatisfy { ExtractTests.attributes(container)[$0] == nil }, "checkpoint \(stop): \(ExtractTests.attributes(container))")
      stop += 1
    }
    #expect(stop == 3, "an undo has two checkpoints")
  }

  /// A container an older undo left marked (killed between its exchange and taking the marks
  /// off, before the marks came off first): the restore's new tree does not take restore's
  /// marks from it, and the kept copy keeps them.
  @Test func restoresMarksOnTheContainerAreNotCopiedOntoTheNewTree() throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let container = "\(device)/\(Self.applications)/\(Self.appUUID)"
    let marks = ["user.appdata.restore", "user.com.apple.metadata:com_apple_backup_excludeItem"]
    _ = try AppData.shell("python3 -c \"import os,sys; os.setxattr(sys.argv[1], 'user.appdata.restore', b'1'); "
      + "os.setxattr(sys.argv[1], 'user.com.apple.metadata:com_apple_backup_excludeItem', b'com.apple.backupd')\" '\(container)'")
    #expect(marks.allSatisfy { ExtractTests.attributes(container)[$0] != nil })
    let result = try AppData.run(["restore", "\(Self.fixtures)/plain", "--simulator", device, "--app", Self.app, "--json"])
    #expect(result.status == 0, "\(result.error)")
    #expect(marks.allSatisfy { ExtractTests.attributes(container)[$0] == nil }, "\(ExtractTests.attributes(container))")
    let kept = (try result.json()["containers"] as? [[String: Any]])?.first?["keptCopy"] as? String ?? ""
    #expect(marks.allSatisfy { ExtractTests.attributes(kept)[$0] != nil }, "\(ExtractTests.attributes(kept))")
  }

  /// A restore that runs while an undo waits at its exchange (`undo-exchange`) swaps in a tree
  /// of its own: the undo's exchange is seen to have taken the wrong folder, is undone, and the
  /// undo refuses in one line; the restore's work stays, and a next undo puts back what it
  /// replaced (a hostile round of issue 53: the undo swapped the new tree out, reported the old
  /// figures, and left two folders no run could prove).
  @Test func aRestoreDuringAnUndoIsNotSwappedOut() throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let applications = "\(device)/\(Self.applications)"
    let container = "\(applications)/\(Self.appUUID)"
    let source = folder + "/source"
    try FileManager.default.createDirectory(atPath: source + "/Documents", withIntermediateDirectories: true)
    try Data("second\n".utf8).write(to: URL(fileURLWithPath: source + "/Documents/second.txt"))
    #expect(try AppData.run(["restore", "\(Self.fixtures)/plain", "--simulator", device, "--app", Self.app]).status == 0)
    let first = try Self.manifest(container, skip: [Self.metadata], root: false)
    var meanwhile: RunResult?
    let undo = try AppData.runPaused(["restore", "--undo", device, "--app", Self.app], at: "undo-exchange") {
      meanwhile = try AppData.run(["restore", source, "--simulator", device, "--app", Self.app])
    }
    #expect(meanwhile?.status == 0, "\(meanwhile?.error ?? "")")
    #expect(undo.status == 2 && undo.error == "appdata: error: \(container): changed while it was being undone; it was left as it is\n", "\(undo.error)")
    #expect(try String(contentsOfFile: container + "/Documents/second.txt", encoding: .utf8) == "second\n")
    // The next undo puts back what the second restore replaced: the first restore's tree.
    #expect(try AppData.run(["restore", "--undo", device, "--app", Self.app]).status == 0)
    #expect(try Self.manifest(container, skip: [Self.metadata], root: false) == first)
  }

  /// Names restore keeps for its own folders, planted as a user's (no record, a record that
  /// proves nothing, names of another shape) and as a live run's (a valid record naming it,
  /// locked by this test): restore and --undo leave every planted byte as it was, and do their
  /// work beside them.
  @Test func plantedRestoreNamesAreAUsersData() throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let applications = "\(device)/\(Self.applications)"
    let token = "0123456789abcdef0123456789abcdef"
    let live = "fedcba9876543210fedcba9876543210"
    let prefix = "\(applications)/.\(Self.appUUID).appdata-restore-"
    for name in [token, token + "-x", "", "1234-abcd"] {
      try FileManager.default.createDirectory(atPath: prefix + name + "/Documents", withIntermediateDirectories: true)
      try Data("a user's file\n".utf8).write(to: URL(fileURLWithPath: prefix + name + "/Documents/mine.txt"))
    }
    // A record of the right shape for the user's folder, naming no file: it proves nothing.
    try Data("appdata-owner 1 \(token) folder\n0 0\n".utf8).write(to: URL(fileURLWithPath: prefix + token + ".owner"))
    // A live run's folder: its record names it, and this test holds the record's lock.
    try FileManager.default.createDirectory(atPath: prefix + live + "/half-written", withIntermediateDirectories: true)
    var status = stat()
    #expect(lstat(prefix + live, &status) == 0)
    try Data("appdata-owner 1 \(live) folder\n\(status.st_dev) \(status.st_ino)\n".utf8).write(to: URL(fileURLWithPath: prefix + live + ".owner"))
    let lock = open(prefix + live + ".owner", O_RDONLY | O_CLOEXEC)
    #expect(lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0)
    defer { close(lock) }
    let planted = try FileManager.default.contentsOfDirectory(atPath: applications).filter { $0.hasPrefix(".") }.sorted()
    func listing() throws -> [String: String] {
      var result: [String: String] = [:]
      for name in planted { result[name] = try Self.manifest(applications + "/" + name) }
      return result
    }
    let before = try listing()
    #expect(try AppData.run(["restore", "\(Self.fixtures)/plain", "--simulator", device, "--app", Self.app]).status == 0)
    #expect(try String(contentsOfFile: "\(applications)/\(Self.appUUID)/Documents/notes.txt", encoding: .utf8).hasPrefix("hello from the backup"))
    #expect(try AppData.run(["restore", "--undo", device, "--app", Self.app]).status == 0)
    #expect(try String(contentsOfFile: "\(applications)/\(Self.appUUID)/Documents/old.txt", encoding: .utf8) == "old data of com.example.extract\n")
    #expect(try listing() == before)
    #expect(try FileManager.default.contentsOfDirectory(atPath: applications).filter { $0.hasPrefix(".") }.sorted() == planted)
  }

  /// --undo gives back the exact previous tree (every entry, mode, time and attribute, the
  /// container's folder's own too), and leaves nothing of appdata's beside it.
  @Test func undoGivesBackTheExactPreviousTree() throws {
    let (folder, device) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let container = "\(device)/\(Self.applications)/\(Self.appUUID)"
    let before = try Self.manifest(container)
    let metadataBefore = try Self.metadataIdentity(container)
    #expect(try AppData.run(["restore", "\(Self.fixtures)/plain", "--simulator", device, "--app", Self.app]).status == 0)
    #expect(try Self.manifest(container) != before)
    let undo = try AppData.run(["restore", "--undo", device, "--app", Self.app])
    #expect(undo.status == 0, "\(undo.error)")
    #expect(undo.output.contains("Put back: \(container)"), "\(undo.output)")
    #expect(try Self.manifest(container) == before)
    #expect(try Self.metadataIdentity(container) == metadataBefore)
    #expect(try FileManager.default.contentsOfDirectory(atPath: "\(device)/\(Self.applications)").sorted()
            == ["1B0D1E55-0000-4000-8000-000000000001", Self.appUUID, "3D0D1E55-0000-4000-8000-000000000003"])
    // Nothing more to undo.
    let again = try AppData.run(["restore", "--undo", device, "--app", Self.app])
    #expect(again.status == 2 && again.error.contains("nothing to undo"), "\(again.error)")
  }

  /// SIGKILL at each checkpoint in turn (each entry extract writes, the new tree completed,
  /// before and after the exchange): the container is then either the old tree or the new one,
  /// never a mix; a rerun restores it, and --undo gives back the old tree.
  @Test func killedAtEveryCheckpointTheContainerIsOldOrNewAndARerunAndUndoWork() throws {
    let (folder, template) = try Self.device()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let old = try Self.manifest("\(template)/\(Self.applications)/\(Self.appUUID)")
    #expect(try AppData.run(["restore", "\(Self.fixtures)/plain", "--simulator", template, "--app", Self.app]).status == 0)
    let new = try Self.manifest("\(template)/\(Self.applications)/\(Self.appUUID)")
    var stop = 1
    var sawNew = false
    while stop < 100 {
      let (scratch, device) = try Self.device()
      defer { try? FileManager.default.removeItem(atPath: scratch) }
      let container = "\(device)/\(Self.applications)/\(Self.appUUID)"
      let killed = try AppData.run(["restore", "--test-stop-after", String(stop), "\(Self.fixtures)/plain", "--simulator", device, "--app", Self.app])
      if killed.status == 0 { break }
      #expect(killed.status == 137 || killed.status == -9 || killed.status == 9, "checkpoint \(stop): \(killed.status)")
      let now = try Self.manifest(container)
      #expect(now == old || now == new, "checkpoint \(stop): a mix")
      if now == new { sawNew = true }
      let rerun = try AppData.run(["restore", "\(Self.fixtures)/plain", "--simulator", device, "--app", Self.app])
      #expect(rerun.status == 0, "checkpoint \(stop): \(rerun.error)")
      #expect(try Self.manifest(container) == new, "checkpoint \(stop)")
      // One undo gives back what the rerun replaced; a second, when the killed run had swapped
      // its tree in, the one before.
      #expect(try AppData.run(["restore", "--undo", device, "--app", Self.app]).status == 0, "checkpoint \(stop)")
      if now == new {
        #expect(try Self.manifest(container) == new, "checkpoint \(stop)")
        #expect(try AppData.run(["restore", "--undo", device, "--app", Self.app]).status == 0, "checkpoint \(stop)")
      }
      #expect(try Self.manifest(container) == old, "checkpoint \(stop)")
      #expect(try FileManager.default.contentsOfDirectory(atPath: "\(device)/\(Self.applications)").filter { $0.hasPrefix(".") } == [],
              "checkpoint \(stop)")
      stop += 1
    }
    #expect(stop > 10 && stop < 100)
    #expect(sawNew)
  }
}

extension RestoreTests {
  /// The hostile extract harness's manifests through `restore`, and hostile devices (booted,
  /// escapes in the UDID and ids, a container, its place or its metadata plist a symlink to
  /// outside, a device.plist that is a bomb, a planted restore folder no record proves), each
  /// run as an unprivileged user (setpriv, when the tests run as root): nothing outside the
  /// device's Data folder changes, the other app's container and the planted folder stay byte
  /// for byte, no link resolves outside, every refusal is one line with nothing changed
  /// (`Scripts/hostile-inputs.py`, `restore_round`).
  @Test(.enabled(if: HostileInputTests.canRunWritingCases, HostileInputTests.writingCasesNeed))
  func hostileBackupsAndDevicesWriteNothingOutsideTheContainer() throws {
    let lines = try HostileInputTests.run("restore-")
    #expect(lines.count == 11)
    let status = Dictionary(uniqueKeysWithValues: lines.map { ($0["name"] as? String ?? "", $0["status"] as? Int ?? -1) })
    #expect(status["restore-manifest"] == 1 && status["restore-rows"] == 1 && status["restore-device-planted"] == 0)
    #expect(status["restore-device-booted"] == 2 && status["restore-device-container-link"] == 2 && status["restore-device-metadata-link"] == 2)
    #expect(HostileInputTests.stderr(lines, "restore-manifest").contains("5 entries not written"))
  }
}
