#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Threads, a lock and a condition from pthreads: what the walk's workers, the backup reader's
// SQLite thread and the shared counters need. Foundation's Thread, NSLock and NSCondition wrap
// the same calls, but linking Foundation costs every run its start: a static binary that imports
// Foundation starts in 58 ms with a cold page cache, one that does not in 37 ms.

/// A mutex. `lock()` and `unlock()` pair as with NSLock; `withLock` for a scope.
public final class Lock: @unchecked Sendable {  // @unchecked: the mutex is what makes it safe
  fileprivate let mutex: UnsafeMutablePointer<pthread_mutex_t>

  public init() {
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deinitialize(count: 1)
    mutex.deallocate()
  }

  public func lock() { pthread_mutex_lock(mutex) }
  public func unlock() { pthread_mutex_unlock(mutex) }

  public func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    lock()
    defer { unlock() }
    return try body()
  }
}

/// A mutex with a condition variable, used as NSCondition is: lock, `wait()` in a loop until
/// the state it guards says go on, unlock; `broadcast()` after a change.
public final class Condition: @unchecked Sendable {  // @unchecked: the mutex is what makes it safe
  private let mutex = Lock()
  private let condition: UnsafeMutablePointer<pthread_cond_t>

  public init() {
    condition = .allocate(capacity: 1)
    condition.initialize(to: pthread_cond_t())
    pthread_cond_init(condition, nil)
  }

  deinit {
    pthread_cond_destroy(condition)
    condition.deinitialize(count: 1)
    condition.deallocate()
  }

  public func lock() { mutex.lock() }
  public func unlock() { mutex.unlock() }
  /// Unlocks, sleeps until a broadcast (or spuriously), locks again.
  public func wait() { pthread_cond_wait(condition, mutex.mutex) }
  public func broadcast() { pthread_cond_broadcast(condition) }
}

public enum Threads {
  /// Runs `body` on a new detached thread with a stack of `stackSize` bytes. False when the
  /// system will not make one (pthread_create fails with EAGAIN at the process's or the
  /// system's thread limit); the caller then does without it, and `body` never runs.
  public static func start(stackSize: Int, _ body: @escaping @Sendable () -> Void) -> Bool {
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setstacksize(&attributes, stackSize)
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    let context = Unmanaged.passRetained(Body(body)).toOpaque()
    #if canImport(Glibc)
    var thread = pthread_t()
    #else
    var thread: pthread_t?
    #endif
    let status = pthread_create(&thread, &attributes, { context in
      let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
      body.run()
      return nil
    }, context)
    guard status == 0 else {
      Unmanaged<Body>.fromOpaque(context).release()
      return false
    }
    return true
  }

  private final class Body {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
  }
}
