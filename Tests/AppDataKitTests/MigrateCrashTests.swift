import AppDataKit
import Foundation
import Testing

/// Interrupting a migration at any instant loses and duplicates nothing, and a rerun gives
/// exactly what an uninterrupted run gives; across filesystems too.
@Suite("migrate crash safety and filesystems", .serialized)
struct MigrateCrashTests {
  /// /dev/shm is tmpfs (fsync is cheap there and it stores user xattrs); fall back to /tmp.
  static let fastBase: String = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()

  /// About 2,000 files in 40 top-level folders, identical in every call.
  static func bigContainer(_ label: String) throws -> TestTree {
    let tree = try TestTree(label, base: fastBase)
    try tree.folder("Documents")
    for folder in 0..<40 {
      for file in 0..<48 {
        try tree.file("Library/Caches/folder\(folder)/sub\(file % 4)/file\(file).bin", size: (folder * 131 + file * 17) % 3000)
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

  @Test(arguments: [true, false])
  func killedAtTwentyMomentsThenRerunEqualsAnUninterruptedRun(forceCopy: Bool) throws {
    let reference = try Self.bigContainer("crash-reference")
    let source = try manifest(reference.path("Library/Caches"), times: false)
    #expect(try Self.migrate(reference.root, forceCopy: forceCopy).status == 0)
    let expected = try manifest(reference.root, times: false)
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

    // Copying has a checkpoint per file (about 2,200); renaming two per entry (about 80).
    let moments = forceCopy
      ? [1, 2, 3, 4, 6, 9, 40, 77, 150, 300, 480, 650, 800, 1000, 1234, 1400, 1650, 1800, 1950, 2040]
      : [1, 2, 3, 4, 5, 7, 10, 13, 17, 22, 28, 33, 40, 46, 52, 58, 63, 70, 75, 79]
    for moment in moments {
      let tree = try Self.bigContainer("crash-\(moment)")
      let interrupted = try Self.migrate(tree.root, stopAfter: moment, forceCopy: forceCopy)
      #expect(interrupted.killed, "stop after \(moment) should have killed the run")
      let rerun = try Self.migrate(tree.root, forceCopy: forceCopy)
      #expect(rerun.status == 0, "rerun after \(moment)")
      #expect(same(try manifest(tree.root, times: false), expected), "after a crash at checkpoint \(moment)")
      // And once more: nothing left to do.
      #expect(try Self.migrate(tree.root, forceCopy: forceCopy).status == 0)
    }
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

  /// Mounts a filesystem for a test (root only); nil, with the reason printed, where not allowed.
  static func mount(_ arguments: String, on folder: String) throws -> String? {
    guard AppData.isRoot else {
      print("skipped a mount: not root")
      return nil
    }
    let result = try AppData.shell("mount \(arguments) '\(folder)'")
    if result.status != 0 {
      print("skipped a mount: mount \(arguments) refused: \(result.error)")
      return nil
    }
    return folder
  }

  @Test(.enabled(if: AppData.isRoot, "needs root to mount a small tmpfs"))
  func aDestinationThatFillsUpMidCopyLosesNothing() throws {
    let tree = try TestTree("enospc")
    try tree.file("Library/Caches/a-small/one.bin", size: 100_000)
    try tree.file("Library/Caches/b-big/two.bin", size: 600_000)
    try tree.file("Library/Caches/b-big/three.bin", size: 600_000)
    try tree.file("Library/Caches/c-small.bin", size: 50_000)
    try tree.folder("Documents")
    guard let mounted = try Self.mount("-t tmpfs -o size=512k tmpfs", on: tree.path("Documents")) else { return }
    defer { _ = try? AppData.shell("umount '\(mounted)'") }
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

  @Test(.enabled(if: AppData.isRoot, "needs root to bind-mount a second filesystem"))
  func killedAtFiftyRandomMomentsAcrossFilesystems() throws {
    func container(_ label: String) throws -> (TestTree, TestTree, String?) {
      let tree = try TestTree(label)
      for folder in 0..<12 {
        for file in 0..<25 { try tree.file("Library/Caches/f\(folder)/s\(file % 3)/x\(file)", size: (folder * 997 + file * 131) % 20_000) }
      }
      try tree.folder("Documents")
      let store = try TestTree(label + "-store", base: Self.fastBase)
      return (tree, store, try Self.mount("--bind '\(store.root)'", on: tree.path("Documents")))
    }
    let (reference, referenceStore, referenceMount) = try container("kill-reference")
    guard let referenceMount else { return }
    let source = try manifest(reference.path("Library/Caches"), times: false)
    let start = Date()
    #expect(try Self.migrate(reference.root, forceCopy: false).status == 0)
    var duration = Date().timeIntervalSince(start)
    let expected = try manifest(reference.root, times: false)
    // The kill moments are drawn over the run's length: measure it as the fastest of three, so
    // that a first run slowed by other suites' load (a browser, a big tree) does not put most
    // moments after the end of later, faster runs.
    for round in 0..<2 {
      let (again, againStore, againMount) = try container("kill-timing-\(round)")
      defer { if let againMount { _ = try? AppData.shell("umount '\(againMount)'") } }
      let started = Date()
      #expect(try Self.migrate(again.root, forceCopy: false).status == 0)
      duration = min(duration, Date().timeIntervalSince(started))
      withExtendedLifetime(againStore) {}
    }
    _ = try AppData.shell("umount '\(referenceMount)'")
    withExtendedLifetime(referenceStore) {}
    #expect(source.count == 12 * (1 + 3 + 25))

    var random = SplitMix64(state: 0xC0FFEE)
    var killed = 0
    for moment in 0..<50 {
      let (tree, store, mounted) = try container("kill-\(moment)")
      guard let mounted else { return }
      defer { _ = try? AppData.shell("umount '\(mounted)'") }
      let delay = Double(random.next() % 1000) / 1000 * duration * 1.1
      let process = Process()
      process.executableURL = URL(fileURLWithPath: AppData.binary)
      process.arguments = ["migrate", tree.root]
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      usleep(useconds_t(delay * 1_000_000))
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      if process.terminationReason == .uncaughtSignal { killed += 1 }
      #expect(try Self.migrate(tree.root, forceCopy: false).status == 0, "rerun after a kill at \(delay) s")
      let after = try manifest(tree.root, times: false)
      if !same(after, expected) {
        let differing = Set(after.keys).symmetricDifference(expected.keys).sorted()
          + after.keys.filter { expected[$0] != nil && !NSDictionary(dictionary: after[$0]!).isEqual(to: expected[$0]!) }.sorted()
        Issue.record("after a kill at \(delay) s the tree differs from an uninterrupted run at: \(differing.prefix(8))")
      }
      withExtendedLifetime(store) {}
    }
    print("killed \(killed) of 50 cross-filesystem migrations mid-run (uninterrupted: \(String(format: "%.3f", duration)) s)")
    #expect(killed >= 25)
  }
}
