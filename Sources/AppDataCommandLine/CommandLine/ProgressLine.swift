import AppDataSystem
import AppDataCore
import AppDataReaders
import Dispatch
import Synchronization

/// One line of stderr, refreshed while a long walk runs: entries and bytes so far.
/// Shown only on a terminal, only after half a second, and erased at the end. Paused (erased,
/// and Ctrl-C back to its default) while a password is asked for.
final class ProgressLine: Sendable {
  private struct State {
    var shown = false
    var paused = false
    var timer: DispatchSourceTimer?
    var interrupt: DispatchSourceSignal?
  }

  /// The line's text, read at each refresh; nil: nothing to show yet.
  private let text: @Sendable () -> String?
  /// Whether Ctrl-C is caught here (erase, exit 130); a command with its own handler says no.
  private let catchesInterrupt: Bool
  private let io: CommandIO
  /// Where the timer and Ctrl-C handlers run; `pause` and `stop` wait for a handler in flight.
  private let queue = DispatchQueue(label: "appdata.progress")
  private let state = Mutex(State())

  /// The audit's line: what is under way, or the entries and bytes walked so far.
  convenience init(progress: WalkProgress, io: CommandIO) {
    self.init(io: io) {
      if let activity = progress.currentActivity { return activity }
      let (entries, bytes) = progress.snapshot
      return "Scanning: \(Plural.counted(entries, "entry", "entries")), \(ByteSize.human(bytes))"
    }
  }

  init(io: CommandIO, catchesInterrupt: Bool = true, text: @escaping @Sendable () -> String?) {
    self.io = io
    self.catchesInterrupt = catchesInterrupt
    self.text = text
  }

  /// Whether the line is on the terminal now (a handler erases it before writing its own).
  var isShown: Bool { state.withLock { $0.shown } }

  /// Half a second, so quick audits print nothing; `APPDATA_PROGRESS_DELAY_MS` lets tests shorten it.
  private static let delay = Int(Syscalls.environment("APPDATA_PROGRESS_DELAY_MS") ?? "") ?? 500

  func start() {
    TestHooks.noteProgressStarted()
    let (queue, text, io) = (queue, text, io)
    state.withLock { state in
      let timer = DispatchSource.makeTimerSource(queue: queue)
      timer.schedule(deadline: .now() + .milliseconds(Self.delay), repeating: .milliseconds(200))
      timer.setEventHandler { [self] in
        guard let line = text() else { return }
        guard self.state.withLock({ state in
          if state.paused || state.timer == nil { return false }
          state.shown = true
          return true
        }) else { return }
        io.writeError("\r\u{1B}[2K" + line)
        TestHooks.noteProgressShown()
      }
      timer.resume()
      state.timer = timer
      if catchesInterrupt { catchInterrupt(&state) }
    }
  }

  /// Ctrl-C: erase the line first, so the shell's prompt does not land after it.
  private func catchInterrupt(_ state: inout State) {
    state.interrupt = Syscalls.onInterrupt(queue: queue) { [self] in
      if self.state.withLock({ $0.shown }) { io.writeError("\r\u{1B}[2K") }
      Syscalls.exitNow(130)
    }
  }

  /// Erases the line and stops drawing it (a password prompt takes the terminal), until `resume`.
  func pause() {
    queue.sync {
      let shown = state.withLock { state in
        defer { state.paused = true; state.shown = false; state.interrupt = nil }
        state.interrupt?.cancel()
        return state.shown
      }
      if shown { io.writeError("\r\u{1B}[2K") }
    }
  }

  func resume() {
    state.withLock { state in
      guard state.paused && state.timer != nil else { return }
      state.paused = false
      if catchesInterrupt { catchInterrupt(&state) }
    }
  }

  func stop() {
    state.withLock { state in
      state.timer?.cancel()
      state.timer = nil
    }
    queue.sync { state.withLock { state in state.interrupt?.cancel(); state.interrupt = nil } }
    // On the timer's queue: after any handler in flight, erase the line if one was drawn.
    queue.sync { if state.withLock({ $0.shown }) { io.writeError("\r\u{1B}[2K") } }
  }
}
