import AppDataSystem
import AppDataCore

/// Counts shared by the workers, shown on a terminal while a long walk runs.
// @unchecked Sendable: both counters are read and written only under `lock`.
public final class WalkProgress: @unchecked Sendable {
  private let lock = Lock()
  private var entries = 0
  private var bytes: UInt64 = 0
  private var activity: String?

  public init() {}

  func add(entries: Int, bytes: UInt64) {
    lock.lock()
    self.entries += entries
    self.bytes &+= bytes
    lock.unlock()
  }

  /// Says what is under way before any entry is counted (unlocking an encrypted backup); nil
  /// goes back to counting.
  func setActivity(_ text: String?) {
    lock.lock()
    activity = text
    lock.unlock()
  }

  /// What is under way, when it is not the count.
  public var currentActivity: String? {
    lock.lock()
    defer { lock.unlock() }
    return activity
  }

  /// The figures so far.
  public var snapshot: (entries: Int, bytes: UInt64) {
    lock.lock()
    defer { lock.unlock() }
    return (entries, bytes)
  }
}
