import AppDataSystem
import Dispatch
import Synchronization

/// SIGINT, SIGTERM and SIGHUP caught while a job runs, so that it stops at its next checkpoint
/// and removes what it wrote: `number` is the first signal that came. Paused while a password
/// is typed (the prompt restores the terminal and ends the process itself on a signal).
final class SignalCatcher: Sendable {
  private let caught = Atomic<Int32>(0)
  private let sources = Mutex<[DispatchSourceSignal]>([])
  private let queue = DispatchQueue(label: "appdata.signals")

  /// The signal that asked the job to stop, if one did.
  var number: Int32? {
    let value = caught.load(ordering: .acquiring)
    return value == 0 ? nil : value
  }

  func start() {
    sources.withLock { sources in
      guard sources.isEmpty else { return }
      sources = Syscalls.onTermination(queue: queue) { [self] number in
        _ = self.caught.compareExchange(expected: 0, desired: number, ordering: .acquiringAndReleasing)
      }
    }
  }

  /// The signals' default actions back until `start` (each source's cancel restores it).
  func stop() {
    sources.withLock { sources in
      for source in sources { source.cancel() }
      sources = []
    }
  }
}
