import Synchronization
/// Pause points for tests that change a tree while appdata works on it (races).
/// With `APPDATA_TEST_PAUSE_FILE=F` and `APPDATA_TEST_PAUSE_AT=POINT`, reaching POINT writes a
/// byte to the FIFO `F.ready` (which the test made and reads) and waits (up to 60 s) until `F`
/// exists. Points: `migrate` (after planning, before
/// the first change), `resolved` (PATH's containers are found, none is opened yet), `walk` (after the container root is listed, before any folder below it
/// is opened), `folder` (after a top-level folder is listed, before its subfolders are opened),
/// `extract` (at each of an extraction's checkpoints), `symlinks` (before a container's symlink
/// check; an interrupt ends the pause), `replace` and `exchanged` (`extract --force` holding
/// its turn on OUT, before and after swapping its folder in), `rules` (the rules migration's new file
/// written and flushed under its hidden name, before it is renamed into place), and restore's:
/// `restore` (each entry copied from a folder), `restore-built`, `restore-exchange` and
/// `restore-exchanged` (the new tree completed; its record naming both folders, before the
/// exchange; after it), `undo-exchange` and `undo-exchanged`.
/// Without the variables this costs one environment lookup, once.
///
/// `APPDATA_TEST_HAND_OVER_ALL=1` makes the walk pass every folder below the top level on as
/// one worker hands work to another (reopened from the root by its path), so tests cover that
/// path on trees too small for workers to share any.
package enum TestHooks {
  private static let file = Syscalls.environment("APPDATA_TEST_PAUSE_FILE")
  private static let point = Syscalls.environment("APPDATA_TEST_PAUSE_AT") ?? "migrate"
  package static let handOverAll = Syscalls.environment("APPDATA_TEST_HAND_OVER_ALL") == "1"
  /// `APPDATA_TEST_NAME_COMPARISON=case` (or `normalization`): every folder is taken to be on a
  /// filesystem that ignores case (or only normalization), as a casefolded ext4 or APFS does,
  /// for tests on a kernel that cannot mount one (`NameComparison.of`).
  package static let nameComparison = Syscalls.environment("APPDATA_TEST_NAME_COMPARISON")
  /// `APPDATA_TEST_FAIL_WRITE=N`: the Nth file an extraction's writers write fails as a full disk
  /// would (ENOSPC), so the writers' failure path is tested without root or a small filesystem.
  private static let failWriteAt = Syscalls.environment("APPDATA_TEST_FAIL_WRITE").flatMap { Int($0) }
  private static let writes = Mutex<Int>(0)
  /// `APPDATA_TEST_WAIT_FOR_PROGRESS=1`: the walk waits, after listing a container's root, until
  /// the progress line has been drawn once (up to 60 s), so a test of the line does not depend
  /// on the walk being slower than the line's timer.
  private static let waitsForProgress = Syscalls.environment("APPDATA_TEST_WAIT_FOR_PROGRESS") == "1"
  /// 0: no progress line; 1: started, not drawn yet; 2: drawn.
  private static let progress = Atomic<Int>(0)

  /// A progress line started (it draws after its delay).
  package static func noteProgressStarted() {
    if waitsForProgress { _ = progress.compareExchange(expected: 0, desired: 1, ordering: .releasing) }
  }

  /// The progress line was drawn.
  package static func noteProgressShown() {
    if waitsForProgress { progress.store(2, ordering: .releasing) }
  }

  /// Waits for the progress line's first drawing, when a test asks for it and a line started.
  package static func waitForProgress() {
    guard waitsForProgress else { return }
    for _ in 0..<60_000 where progress.load(ordering: .acquiring) == 1 { Syscalls.sleep(milliseconds: 1) }
  }

  /// Whether this write is the one `APPDATA_TEST_FAIL_WRITE` names.
  package static func failsThisWrite() -> Bool {
    guard let failWriteAt else { return false }
    return writes.withLock { count in
      count += 1
      return count == failWriteAt
    }
  }

  /// `releasedBy`: a condition that also ends the pause (an interrupt the run heard), so a test
  /// that signals the paused process can wait for it to end without releasing the pause.
  /// `APPDATA_TEST_ANNOUNCE_FILE=F` and `APPDATA_TEST_ANNOUNCE_AT=POINT`: reaching POINT writes
  /// one byte to the FIFO `F` (which the test made and reads) and goes on without waiting: how a
  /// test learns, by an event, that a run reached a point (`waiting-for-turn`: `extract --force`
  /// about to wait for another run's lock on OUT).
  package static func announce(_ name: String) {
    guard let announceFile, name == announcePoint else { return }
    guard let opened = try? Syscalls.openFIFOForWriting(atPath: announceFile) else { return }
    let fifo = OwnedDescriptor(owning: opened)
    do {
      try Syscalls.writeAll(fifo.descriptor, [0x77], displayPath: "")
    } catch {
      // Not output: the test that made the FIFO is gone, and nothing waits for the byte.
    }
  }
  private static let announceFile = Syscalls.environment("APPDATA_TEST_ANNOUNCE_FILE")
  private static let announcePoint = Syscalls.environment("APPDATA_TEST_ANNOUNCE_AT")

  package static func pause(at name: String, releasedBy released: () -> Bool = { false }) {
    guard let file, name == point else { return }
    // `F.ready` is a FIFO the test holds open: one byte on it wakes the test (no polling there).
    if let opened = try? Syscalls.openFIFOForWriting(atPath: file + ".ready") {
      let ready = OwnedDescriptor(owning: opened)
      do {
        try Syscalls.writeAll(ready.descriptor, [0x72], displayPath: "")
      } catch {
        // Not output: the test that made the FIFO is gone, and nothing waits for the byte.
      }
    }
    for _ in 0..<6000 {
      if released() || (try? Syscalls.status(ofPath: file)) != nil { return }
      Syscalls.sleep(milliseconds: 10)
    }
  }
}
