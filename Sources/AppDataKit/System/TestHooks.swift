/// Pause points for tests that change a tree while appdata works on it (races).
/// With `APPDATA_TEST_PAUSE_FILE=F` and `APPDATA_TEST_PAUSE_AT=POINT`, reaching POINT creates
/// `F.ready` and waits (up to 60 s) until `F` exists. Points: `migrate` (after planning, before
/// the first change) and `walk` (after the container root is listed, before any folder below it
/// is opened). Without the variables this costs one environment lookup, once.
enum TestHooks {
  private static let file = Syscalls.environment("APPDATA_TEST_PAUSE_FILE")
  private static let point = Syscalls.environment("APPDATA_TEST_PAUSE_AT") ?? "migrate"

  static func pause(at name: String) {
    guard let file, name == point else { return }
    if let ready = try? Syscalls.open(Array((file + ".ready").utf8), in: .currentWorkingDirectory, options: .createNewFile, displayPath: "") {
      ready.close()
    }
    for _ in 0..<6000 {
      if (try? Syscalls.status(ofPath: file)) != nil { return }
      Syscalls.sleep(milliseconds: 10)
    }
  }
}
