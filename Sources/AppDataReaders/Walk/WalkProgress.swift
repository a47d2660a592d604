import AppDataSystem
import AppDataCore
import Synchronization

/// Counts shared by the workers, shown on a terminal while a long walk runs.
public final class WalkProgress: Sendable {
  private let state = Mutex<(entries: Int, bytes: UInt64, activity: String?)>((0, 0, nil))

  public init() {}

  func add(entries: Int, bytes: UInt64) {
    state.withLock { state in
      state.entries += entries
      state.bytes &+= bytes
    }
  }

  /// Says what is under way before any entry is counted (unlocking an encrypted backup); nil
  /// goes back to counting.
  func setActivity(_ text: String?) {
    state.withLock { $0.activity = text }
  }

  /// What is under way, when it is not the count.
  public var currentActivity: String? { state.withLock { $0.activity } }

  /// The figures so far.
  public var snapshot: (entries: Int, bytes: UInt64) { state.withLock { ($0.entries, $0.bytes) } }
}
