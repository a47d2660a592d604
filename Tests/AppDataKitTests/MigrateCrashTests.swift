@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Testing

/// Interrupting a migration at any instant loses and duplicates nothing, and a rerun gives
/// exactly what an uninterrupted run gives; across filesystems too.
@Suite("migrate crash safety and filesystems", .serialized)
struct MigrateCrashTests {
  /// /dev/shm is tmpfs (fsync is cheap there and it stores user xattrs); fall back to /tmp.
  static let fastBase: String = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()

  /// 2 top-level folders of 4 files in two subfolders (modes, an xattr, a symlink each) and a loose file,
  /// identical in every call: small enough to kill a migration at every one of its checkpoints.
  static func smallContainer(_ label: String) throws -> TestTree {
    let tree = try TestTree(label, base: fastBase)
    try tree.folder("Documents")
    for folder in 0..<2 {
      for file in 0..<4 {
        try tree.file("Library/Caches/folder\(folder)/sub\(file % 2)/file\(file).bin", size: (folder * 131 + file * 17) % 3000)
      }
      try tree.setAttribute("Library/Caches/folder\(folder)", "user.example.kind", Array("folder \(folder)".utf8))
      try tree.symlink("Library/Caches/folder\(folder)/link", to: "sub0/file0.bin")
      chmod(tree.path("Library/Caches/folder\(folder)/sub1/file1.bin"), 0o600)
    }
    try tree.file("Library/Caches/loose.txt", size: 77)
    return tree
  }

  /// Runs `appdata migrate` and tells whether it died of SIGKILL.
  static func migrate(_ root: String, stopAfter: Int? = nil, forceCopy: Bool) throws -> (killed: Bool, status: Int32) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: AppData.binary)
    process.arguments = ["migrate", root] + (stopAfter.map { ["--test-stop-after", String($0)] } ?? [])
    var environment = ProcessInfo.processInfo.environment
    if forceCopy { environment["APPDATA_TEST_FORCE_COPY"] = "1" }
    process.environment = environment
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return (process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL, process.terminationStatus)
  }

  /// A tree as the crash loop compares it, in-process (Scripts/tree-manifest.py costs a Python
  /// start per call): every entry's type, mode, bytes, link target and extended attributes.
  static func snapshot(_ root: String) throws -> [String: String] {
    var result: [String: String] = [:]
    let enumerator = FileManager.default.enumerator(atPath: root)
    while let relative = enumerator?.nextObject() as? String {
      let path = root + "/" + relative
      var status = stat()
      guard lstat(path, &status) == 0 else { throw TestFailure("lstat \(path)") }
      var description = String(status.st_mode, radix: 8)
      switch status.st_mode & S_IFMT {
      case S_IFLNK: description += " -> " + (try FileManager.default.destinationOfSymbolicLink(atPath: path))
      case S_IFREG: description += " " + (try Data(contentsOf: URL(fileURLWithPath: path))).base64EncodedString()
      default: break
      }
      if status.st_mode & S_IFMT != S_IFLNK {
        for name in try ExtendedAttributes.names(atPath: path).sorted() {
          description += " \(name)=\(try ExtendedAttributes.value(of: name, atPath: path) ?? [])"
        }
      }
      result[relative] = description
    }
    return result
  }

  /// How a migration moves: renames on one filesystem, copies forced on one filesystem, or
  /// copies across a bind mount (a real second mount point: rename(2) fails there with EXDEV).
  enum Mode: String, CaseIterable, Sendable {
    case rename, forcedCopy, acrossMounts
  }

  /// Kills a migration at its 1st checkpoint, then its 2nd, and so on until one runs to the end
  /// (every journal record, rename and copied file is a checkpoint, `--test-stop-after N`); after
  /// each kill a rerun must finish the job and give exactly the tree an uninterrupted run gives,
  /// every source file arrived once, byte for byte. Deterministic: no timing is involved.
  static func killAtEveryCheckpoint(_ mode: Mode) throws {
    /// A fresh container, and for `acrossMounts` the store bind-mounted on its Documents.
    func container(_ label: String) throws -> (tree: TestTree, unmount: () -> Void) {
      let tree = try smallContainer(label)
      guard mode == .acrossMounts else { return (tree, {}) }
      let store = try TestTree(label + "-store", base: fastBase)
      let bind = try AppData.shell("mount --bind '\(store.root)' '\(tree.path("Documents"))'")
      try #require(bind.status == 0, "mount --bind refused: \(bind.error)")
      return (tree, { _ = try? AppData.shell("umount '\(tree.path("Documents"))'"); withExtendedLifetime(store) {} })
    }
    let forceCopy = mode == .forcedCopy
    let (reference, unmountReference) = try container("crash-reference")
    let source = try manifest(reference.path("Library/Caches"), times: false)
    #expect(try migrate(reference.root, forceCopy: forceCopy).status == 0)
    let expected = try manifest(reference.root, times: false)
    let expectedSnapshot = try snapshot(reference.root)
    unmountReference()
    // Every source file arrived, byte for byte, exactly once.
    #expect(expected.keys.filter { $0.hasPrefix("Library/Caches/") }.isEmpty)
    for (path, description) in source {
      guard var moved = expected["Documents/" + path] else {
        Issue.record("\(path) did not arrive")
        continue
      }
      let attributes = moved["xattrs"] as? [String: String] ?? [:]
      moved["xattrs"] = attributes.filter { !$0.key.hasPrefix("user.com.apple.") }
      #expect(NSDictionary(dictionary: moved).isEqual(to: description), "\(path)")
    }

    var checkpoint = 1
    while checkpoint <= 500 {
      let (tree, unmount) = try container("crash-\(mode.rawValue)-\(checkpoint)")
      defer { unmount() }
      let interrupted = try migrate(tree.root, stopAfter: checkpoint, forceCopy: forceCopy)
      if !interrupted.killed {
        // The run had fewer checkpoints: every one of them was covered.
        #expect(interrupted.status == 0)
        #expect(try snapshot(tree.root) == expectedSnapshot, "an uninterrupted run")
        break
      }
      #expect(try migrate(tree.root, forceCopy: forceCopy).status == 0, "rerun after checkpoint \(checkpoint)")
      #expect(try snapshot(tree.root) == expectedSnapshot, "after a kill at checkpoint \(checkpoint)")
      checkpoint += 1
    }
    print("migrate (\(mode.rawValue)): killed at each of its \(checkpoint - 1) checkpoints, then rerun")
    // Renames make two checkpoints per moved entry, copies one per file: a run has at least that many.
    #expect(checkpoint - 1 >= (mode == .rename ? 6 : source.count / 2))
    #expect(checkpoint <= 500, "the migration never ran to the end")
  }

  @Test(arguments: [Mode.rename, Mode.forcedCopy])
  func killedAtEveryCheckpointThenRerunEqualsAnUninterruptedRun(mode: Mode) throws {
    try Self.killAtEveryCheckpoint(mode)
  }

  @Test(.enabled(if: AppData.isRoot, "needs root to bind-mount a second filesystem"))
  func killedAtEveryCheckpointAcrossMountsThenRerunEqualsAnUninterruptedRun() throws {
    try Self.killAtEveryCheckpoint(.acrossMounts)
  }

  @Test func crossFilesystemCopyKeepsContentModesTimesAndAttributes() throws {
    let tree = try TestTree("xfs")
    try tree.file("Library/Caches/Data/a.bin", size: 100_000)
    try tree.file("Library/Caches/Data/deep/b.bin", size: 5)
    chmod(tree.path("Library/Caches/Data/deep/b.bin"), 0o604)
    try tree.setAttribute("Library/Caches/Data/a.bin", "user.example.origin", Array("camera".utf8))
    try tree.setAttribute("Library/Caches/Data", "user.example.folder", [0, 1, 2])
    try tree.symlink("Library/Caches/Data/link", to: "deep/b.bin")
    _ = try AppData.shell("touch -h -d '2011-10-12 10:00:00' '\(tree.path("Library/Caches/Data/link"))' '\(tree.path("Library/Caches/Data/a.bin"))'")
    try tree.folder("Documents")
    let before = try manifest(tree.path("Library/Caches"))

    // A real second filesystem where we may mount one; otherwise the test-only override.
    var mounted: String?
    let store = try TestTree("xfs-store", base: Self.fastBase)
    if AppData.isRoot {
      let bind = try AppData.shell("mount --bind '\(store.root)' '\(tree.path("Documents"))'")
      if bind.status == 0 { mounted = tree.path("Documents") } else { print("cross-filesystem: mount refused (\(bind.error)); using APPDATA_TEST_FORCE_COPY") }
    } else {
      print("cross-filesystem: not root, cannot mount; using APPDATA_TEST_FORCE_COPY")
    }
    defer { if let mounted { _ = try? AppData.shell("umount '\(mounted)'") } }

    let result = try AppData.run(["migrate", "--json", tree.root],
                                 environment: mounted == nil ? ["APPDATA_TEST_FORCE_COPY": "1"] : [:])
    #expect(result.status == 0, "\(result.error)")
    let entry = (try result.json()["entries"] as? [[String: Any]])?.first
    #expect(entry?["action"] as? String == "copied")
    let after = try manifest(tree.path("Documents"), dropMarkers: true)
    #expect(same(after, before))
    #expect(try MarkerStatus.markers(atPath: tree.path("Documents/Data")) == .modern)
    #expect(!FileManager.default.fileExists(atPath: tree.path("Library/Caches/Data")))
    withExtendedLifetime(store) {}
  }

  /// A 2 GiB file holding 4 MiB of data, in three extents and a trailing hole: it must cross to a
  /// 64 MiB tmpfs (written out as zeros it would not fit), byte for byte, holes kept. `mode`:
  /// the kernel copy where allowed, the read/write path forced, or a copy on one filesystem
  /// (APPDATA_TEST_FORCE_COPY), where copy_file_range is allowed.
  @Test(.enabled(if: AppData.isRoot, "needs root to mount a 64 MiB tmpfs"), arguments: ["kernel", "fallback", "same-filesystem"])
  func aSparseFileCrossesFilesystemsWithItsHoles(mode: String) throws {
    let tree = try TestTree("sparse-\(mode)")
    try tree.folder("Library/Caches")
    try tree.folder("Documents")
    let image = tree.path("Library/Caches/disk.img")
    let made = try AppData.shell("""
      python3 - '\(image)' <<'PY'
      import os, sys
      with open(sys.argv[1], 'wb') as f:
          for offset, size in ((0, 1 << 20), (1 << 30, 1 << 20), ((2 << 30) - (5 << 20), 2 << 20)):
              f.seek(offset)
              pattern = bytes(range(256)) * (size // 256)
              f.write(pattern[offset % 251:] + pattern[:offset % 251])
          f.truncate(2 << 30)
      PY
      """)
    try #require(made.status == 0, "\(made.error)")
    // The data extents and where they are (a hole filled with anything is caught by the
    // allocation check below): quicker than reading 2 GiB, mostly zeros, twice.
    let hash = { (path: String) throws -> String in
      try AppData.shell("""
        python3 - '\(path)' <<'PY'
        import hashlib, os, sys
        fd = os.open(sys.argv[1], os.O_RDONLY); size = os.fstat(fd).st_size; digest = hashlib.sha256(); offset = 0
        while offset < size:
            try: start = os.lseek(fd, offset, os.SEEK_DATA)
            except OSError: break
            end = os.lseek(fd, start, os.SEEK_HOLE)
            digest.update(f"{start}:{end}:".encode()); digest.update(os.pread(fd, end - start, start)); offset = end
        print(size, digest.hexdigest())
        PY
        """).output
    }
    let before = try hash(image)
    var environment: [String: String] = [:]
    if mode == "same-filesystem" {
      environment["APPDATA_TEST_FORCE_COPY"] = "1"
    } else {
      let mount = try AppData.shell("mount -t tmpfs -o size=64m tmpfs '\(tree.path("Documents"))'")
      try #require(mount.status == 0, "mount -t tmpfs refused: \(mount.error)")
    }
    defer { if mode != "same-filesystem" { _ = try? AppData.shell("umount '\(tree.path("Documents"))'") } }
    if mode == "fallback" { environment["APPDATA_FORCE_COPY_FALLBACK"] = "1" }
    let result = try AppData.run(["migrate", "--json", tree.root], environment: environment)
    #expect(result.status == 0, "\(result.error)")
    let entry = (try result.json()["entries"] as? [[String: Any]])?.first
    #expect(entry?["action"] as? String == "copied")
    #expect((entry?["bytes"] as? NSNumber)?.intValue == 2 << 30)
    #expect((entry?["copiedBytes"] as? NSNumber)?.intValue == 4 << 20)
    let copied = tree.path("Documents/disk.img")
    #expect(try hash(copied) == before)
    var status = stat()
    #expect(stat(copied, &status) == 0)
    #expect(status.st_size == 2 << 30)
    #expect(Int(status.st_blocks) * 512 <= 8 << 20, "allocated \(Int(status.st_blocks) * 512) bytes")
  }

  @Test(.enabled(if: AppData.isRoot, "needs root to mount a ramfs (a filesystem without user xattrs)"))
  func aDestinationThatRefusesMarkersChangesNothing() throws {
    let tree = try TestTree("ramfs")
    try tree.file("Library/Caches/a", size: 3)
    try tree.folder("Documents")
    let mount = try AppData.shell("mount -t ramfs ramfs '\(tree.path("Documents"))'")
    try #require(mount.status == 0, "mount -t ramfs refused: \(mount.error)")
    defer { _ = try? AppData.shell("umount '\(tree.path("Documents"))'") }
    let before = try manifest(tree.root)
    let result = try AppData.run(["migrate", tree.root])
    #expect(result.status == 2)
    #expect(result.error.hasPrefix("appdata: error: Documents: the destination does not accept the backup marker"))
    #expect(result.error.split(separator: "\n").count == 1)
    #expect(same(try manifest(tree.root), before))
  }

  @Test(.enabled(if: AppData.isRoot, "needs root to mount a small tmpfs"))
  func aDestinationThatFillsUpMidCopyLosesNothing() throws {
    let tree = try TestTree("enospc")
    try tree.file("Library/Caches/a-small/one.bin", size: 100_000)
    try tree.file("Library/Caches/b-big/two.bin", size: 600_000)
    try tree.file("Library/Caches/b-big/three.bin", size: 600_000)
    try tree.file("Library/Caches/c-small.bin", size: 50_000)
    try tree.folder("Documents")
    let mount = try AppData.shell("mount -t tmpfs -o size=512k tmpfs '\(tree.path("Documents"))'")
    try #require(mount.status == 0, "mount -t tmpfs refused: \(mount.error)")
    defer { _ = try? AppData.shell("umount '\(tree.path("Documents"))'") }
    let before = try manifest(tree.path("Library/Caches"), times: false)

    for run in 1...2 {
      let result = try AppData.run(["migrate", "--json", tree.root])
      #expect(result.status == 1, "run \(run)")
      let entries = try result.json()["entries"] as? [[String: Any]] ?? []
      let failed = entries.first { $0["source"] as? String == "Library/Caches/b-big" }
      #expect(failed?["action"] as? String == "failed")
      #expect((failed?["message"] as? String)?.contains("No space left on device") == true, "\(String(describing: failed))")
      // Every file exists exactly once, with its bytes: moved ones in Documents, the rest in Caches.
      let source = try manifest(tree.path("Library/Caches"), times: false)
      let destination = try manifest(tree.path("Documents"), times: false, dropMarkers: true)
      #expect(Set(source.keys).isDisjoint(with: destination.keys))
      var union = source
      union.merge(destination) { a, _ in a }
      #expect(same(union, before), "run \(run)")
      #expect(Set(destination.keys) == ["a-small", "a-small/one.bin", "c-small.bin"])
      #expect(!(try FileManager.default.contentsOfDirectory(atPath: tree.path("Documents"))).contains { $0.hasPrefix(".appdata-partial") })
    }
  }
}
