#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The one way appdata catches a signal: SIGINT, SIGTERM and SIGHUP while a job that must
/// clean up runs, and SIGQUIT too while a password prompt has the terminal's echo off.
///
/// A C handler can do almost nothing safely, so it writes the signal's number to a pipe (one
/// byte, `write(2)` being async-signal-safe) and a thread of the catcher's own reads it and
/// calls the newest registration that asked for that signal, in ordinary code: a job's
/// registration sets a flag its next checkpoint reads, or removes its hidden files and ends the
/// process; a prompt's, registered on top while it reads, restores the terminal first. A
/// registration cancelled, the signal goes to the one below it; with none left, the signal's
/// action is the default again. A signal the process inherited as ignored (`nohup`) stays
/// ignored. No Dispatch: its signal sources gave every SIGINT to every source at once (the
/// progress line's and the command's both ran, whichever ended the process first winning).
package final class SignalCatcher: Sendable {
  /// The process's catcher: signal dispositions are the process's, so there is one.
  package static let shared = SignalCatcher()
  /// What a job catches: Ctrl-C, `kill`, and the terminal going away.
  package static let termination: [Int32] = [SIGINT, SIGTERM, SIGHUP]
  /// Ctrl-C alone.
  package static let interrupt: [Int32] = [SIGINT]

  /// One registration, from `register` until `cancel`.
  package struct Registration: Sendable {
    fileprivate let id: UInt64
    /// Stops this registration's handler; the signal goes to the one below, or its default.
    package func cancel() { SignalCatcher.shared.remove(id) }
  }

  private struct Entry {
    let id: UInt64
    let signals: [Int32]
    let handler: @Sendable (Int32) -> Void
  }

  private struct State {
    /// Oldest first: a signal goes to the last entry that lists it.
    var entries: [Entry] = []
    var nextID: UInt64 = 1
    /// The pipe's read end, once the catcher's thread runs.
    var readEnd: Int32 = -1
    /// The signals whose action is the forwarding handler now.
    var caught: Set<Int32> = []
    /// Signals found ignored when first asked for: left ignored.
    var inheritedIgnored: Set<Int32> = []
  }

  private let state = Mutex(State())
  /// The catcher's thread, started with the first registration and never joined: it waits on
  /// the pipe for the process's life.
  private let thread = ThreadGroup()

  private init() {}

  /// Calls `handler` with the signal's number, on the catcher's thread, when one of `signals`
  /// arrives, until the registration is cancelled; a later registration listing the same
  /// signal takes it first. When the catcher's pipe or thread cannot be made (no descriptors or
  /// threads left), the signals keep the action they had.
  package func register(_ signals: [Int32] = termination, _ handler: @escaping @Sendable (Int32) -> Void) -> Registration {
    state.withLock { state in
      let id = state.nextID
      state.nextID += 1
      guard startIfNeeded(&state) else { return Registration(id: id) }
      state.entries.append(Entry(id: id, signals: signals, handler: handler))
      for number in signals where !state.caught.contains(number) && !state.inheritedIgnored.contains(number) {
        if Self.isIgnored(Self.setAction(number, forwardSignal)) {
          _ = Self.setAction(number, SIG_IGN)
          state.inheritedIgnored.insert(number)
        } else {
          state.caught.insert(number)
        }
      }
      return Registration(id: id)
    }
  }

  private func remove(_ id: UInt64) {
    state.withLock { state in
      state.entries.removeAll { $0.id == id }
      let wanted = Set(state.entries.flatMap(\.signals))
      for number in state.caught where !wanted.contains(number) {
        _ = Self.setAction(number, SIG_DFL)
        state.caught.remove(number)
      }
    }
  }

  /// Calls the newest registration older than `registration` that asked for `number`, if any
  /// (a prompt's handler hands the signal on to the job's, once the terminal is restored).
  package func passOn(_ number: Int32, from registration: Registration) {
    let handler = state.withLock { state in
      state.entries.last { $0.id < registration.id && $0.signals.contains(number) }?.handler
    }
    handler?(number)
  }

  /// Ends the process as `number`'s default action would (a prompt's registration, once the
  /// terminal is restored): the action set back and the signal raised (appdata blocks no
  /// signal in any thread); `_exit(128 + number)` should the process outlive it.
  package static func endAsSignalled(_ number: Int32) -> Never {
    _ = setAction(number, SIG_DFL)
    raise(number)
    _exit(128 + number)
  }

  /// The pipe and the thread, made once. False when either cannot be made.
  private func startIfNeeded(_ state: inout State) -> Bool {
    if state.readEnd >= 0 { return true }
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { return false }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    // A full pipe (signals far faster than the thread reads) drops the byte, not the handler.
    _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
    signalPipeWriteEnd.store(ends[1], ordering: .releasing)
    let readEnd = ends[0]
    guard thread.start(stackSize: 256 << 10, { [self] in self.readSignals(from: readEnd) }) else {
      signalPipeWriteEnd.store(-1, ordering: .releasing)
      close(ends[0])
      close(ends[1])
      return false
    }
    state.readEnd = readEnd
    return true
  }

  /// The catcher's thread: each byte is a signal's number, given to its newest registration
  /// (outside the lock: a handler may cancel registrations, or end the process).
  ///
  /// It unblocks the signals it serves: a process may start with them blocked (a mask is
  /// inherited through exec; a test runner's spawned processes had SIGHUP, SIGINT and SIGTERM
  /// blocked in every thread), and a signal blocked in every thread is never handled. The
  /// kernel gives a process's signal to a thread that does not block it: this one.
  private func readSignals(from readEnd: Int32) {
    var served = sigset_t()
    sigemptyset(&served)
    for number in Self.termination + [SIGQUIT] { sigaddset(&served, number) }
    pthread_sigmask(SIG_UNBLOCK, &served, nil)
    while true {
      var byte: UInt8 = 0
      let count = read(readEnd, &byte, 1)
      if count < 0 && currentErrno() == .interrupted { continue }
      guard count == 1 else { return }
      let number = Int32(byte)
      let handler = state.withLock { state in state.entries.last { $0.signals.contains(number) }?.handler }
      // None: it came as its registration was cancelled; what the default action would do.
      if let handler { handler(number) } else { Self.endAsSignalled(number) }
    }
  }

  private static func setAction(_ number: Int32, _ action: (@convention(c) (Int32) -> Void)?) -> (@convention(c) (Int32) -> Void)? {
    #if canImport(Glibc) && !DARWIN_CHECK
    return Glibc.signal(number, action)
    #else
    return Darwin.signal(number, action)
    #endif
  }

  private static func isIgnored(_ action: (@convention(c) (Int32) -> Void)?) -> Bool {
    guard let action else { return false }
    return unsafeBitCast(action, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
  }
}

/// The pipe's write end, for the C handler (which can capture nothing): -1 until the catcher runs.
private let signalPipeWriteEnd = Atomic<Int32>(-1)

/// The handler every caught signal runs: its number to the pipe, errno kept as it was.
private let forwardSignal: @convention(c) (Int32) -> Void = { number in
  let saved = currentErrno()
  var byte = UInt8(truncatingIfNeeded: number)
  let end = signalPipeWriteEnd.load(ordering: .acquiring)
  if end >= 0 { _ = write(end, &byte, 1) }
  setErrno(saved)
}

/// The first signal that came, for a job that stops at its next checkpoint: a registration's
/// handler calls `set`, the job reads `number`.
package final class SignalFlag: Sendable {
  private let caught = Atomic<Int32>(0)

  package init() {}

  /// The first signal set, if one was.
  package var number: Int32? {
    let value = caught.load(ordering: .acquiring)
    return value == 0 ? nil : value
  }

  package func set(_ number: Int32) {
    _ = caught.compareExchange(expected: 0, desired: number, ordering: .acquiringAndReleasing)
  }
}
