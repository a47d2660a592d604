/// Pause points for tests that change a tree while appdata works on it (races).
/// With `APPDATA_TEST_PAUSE_FILE=F` and `APPDATA_TEST_PAUSE_AT=POINT`, reaching POINT creates
/// `F.ready` and waits (up to 60 s) until `F` exists. Points: `migrate` (after planning, before
/// the first change), `resolved` (PATH's containers are found, none is opened yet), `walk` (after the container root is listed, before any folder below it
/// is opened) and `folder` (after a top-level folder is listed, before its subfolders are opened).
/// Without the variables this costs one environment lookup, once.
///
/// `APPDATA_TEST_HAND_OVER_ALL=1` makes the walk pass every folder below the top level on as
/// one worker hands work to another (reopened from the root by its path), so tests cover that
/// path on trees too small for workers to share any.
package enum TestHooks {
  private static let file = Syscalls.environment("APPDATA_TEST_PAUSE_FILE")
  private static let point = Syscalls.environment("APPDATA_TEST_PAUSE_AT") ?? "migrate"
  package static let handOverAll = Syscalls.environment("APPDATA_TEST_HAND_OVER_ALL") == "1"

  /// `releasedBy`: a condition that also ends the pause (an interrupt the run heard), so a test
  /// that signals the paused process can wait for it to end without releasing the pause.
  package static func pause(at name: String, releasedBy released: () -> Bool = { false }) {
    guard let file, name == point else { return }
    if let ready = try? Syscalls.open(Array((file + ".ready").utf8), in: .currentWorkingDirectory, options: .createNewFile, displayPath: "") {
      ready.close()
    }
    for _ in 0..<6000 {
      if released() || (try? Syscalls.status(ofPath: file)) != nil { return }
      Syscalls.sleep(milliseconds: 10)
    }
  }
}
