import AppDataSystem
import AppDataKit
import Synchronization

/// One line of stderr, refreshed while a long walk runs: entries and bytes so far.
/// Shown only on a terminal, only after half a second, and erased at the end. Paused (erased)
/// while a password is asked for. It catches no signal: the command's registration with
/// `SignalCatcher` erases it (`erase()`) before ending the process.
final class ProgressLine: Sendable {
  private struct State {
    var shown = false
    var paused = false
    var running = false
  }

  /// The line's text, read at each refresh; nil: nothing to show yet.
  private let text: @Sendable () -> String?
  private let io: CommandIO
  /// Held while the line is drawn or erased, so that `pause`, `erase` and `stop` never
  /// interleave with a refresh.
  private let state = Mutex(State())
  private let ticker = Mutex<Ticker?>(nil)

  /// The audit's line: what is under way, or the entries and bytes walked so far.
  convenience init(progress: WalkProgress, io: CommandIO) {
    self.init(io: io) {
      if let activity = progress.currentActivity { return activity }
      let (entries, bytes) = progress.snapshot
      return "Scanning: \(Plural.counted(entries, "entry", "entries")), \(ByteSize.human(bytes))"
    }
  }

  init(io: CommandIO, text: @escaping @Sendable () -> String?) {
    self.io = io
    self.text = text
  }

  /// Half a second, so quick audits print nothing; `APPDATA_PROGRESS_DELAY_MS` lets tests shorten it.
  private static let delay = Int(Syscalls.environment("APPDATA_PROGRESS_DELAY_MS") ?? "") ?? 500

  func start() {
    TestHooks.noteProgressStarted()
    state.withLock { $0.running = true }
    let clock = Ticker(delayMilliseconds: Self.delay, intervalMilliseconds: 200) { [self] in refresh() }
    ticker.withLock { $0 = clock }
    clock.start()
  }

  private func refresh() {
    guard let line = text() else { return }
    let drawn = state.withLock { state in
      guard state.running && !state.paused else { return false }
      state.shown = true
      io.writeError("\r\u{1B}[2K" + line)
      return true
    }
    if drawn { TestHooks.noteProgressShown() }
  }

  /// Erases the line if it is on the terminal and draws it no more (a signal's handler, before
  /// its own words: a tick after it must not draw the line again).
  func erase() {
    state.withLock { state in
      if state.shown { io.writeError("\r\u{1B}[2K") }
      state.shown = false
      state.running = false
    }
  }

  /// Erases the line and stops drawing it (a password prompt takes the terminal), until `resume`.
  func pause() {
    state.withLock { state in
      state.paused = true
      if state.shown { io.writeError("\r\u{1B}[2K") }
      state.shown = false
    }
  }

  func resume() {
    state.withLock { $0.paused = false }
  }

  /// Stops the clock (a refresh in progress ends first) and erases the line if one was drawn.
  func stop() {
    ticker.withLock { clock in
      clock?.stop()
      clock = nil
    }
    state.withLock { $0.running = false }
    erase()
  }
}
