#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

// Threads and the one queue between them, from pthreads: what the walk's workers, the backup
// reader's SQLite thread and the extraction's writers need. Shared counters and state use
// `Mutex` and `Atomic` (Synchronization). Real threads, not Swift's task pool: the work is
// blocking syscalls (a cold disk, a slow NFS folder) and each walk worker calls
// `unshare(CLONE_FILES)`, which would change a pool thread for every task run after it.
// Foundation's Thread and NSCondition wrap the same calls, but linking Foundation costs every
// run its start (58 ms against 37 ms with a cold page cache).

/// Threads that are joined: `join()` returns once every thread started in the group has ended,
/// those started by its own threads while it waits included.
package final class ThreadGroup: Sendable {
  /// The threads not yet joined. Glibc's pthread_t is an integer; Darwin's is a pointer, which
  /// is not Sendable, so it is kept as its bit pattern.
  private let running = Mutex<[UInt]>([])

  package init() {}

  /// Runs `body` on a new thread of the group with a stack of `stackSize` bytes. False when the
  /// system will not make one (pthread_create fails with EAGAIN at the process's or the
  /// system's thread limit); the caller then does without it, and `body` never runs.
  package func start(stackSize: Int, _ body: @escaping @Sendable () -> Void) -> Bool {
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setstacksize(&attributes, stackSize)
    let context = Unmanaged.passRetained(Body(body)).toOpaque()
    // Added under the lock before the thread can end, so `join` cannot miss it.
    return running.withLock { running in
      #if canImport(Glibc) && !DARWIN_CHECK
      var thread = pthread_t()
      #else
      var thread: pthread_t? = nil
      #endif
      // The start routine's argument is optional in Glibc and in today's macOS SDK
      // (libpthread's pthread.h), non-optional in older SDKs: `run` takes an optional, which
      // either converts to.
      let status = pthread_create(&thread, &attributes, { context in
        ThreadGroup.run(context)
        return nil
      }, context)
      guard status == 0 else {
        Unmanaged<Body>.fromOpaque(context).release()
        return false
      }
      #if canImport(Glibc) && !DARWIN_CHECK
      running.append(thread)
      #else
      running.append(UInt(bitPattern: thread))
      #endif
      return true
    }
  }

  /// A new thread's first call: `context` is the retained `Body` `start` passed.
  private static func run(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
  }

  /// Waits for every thread of the group, including those started while it waits.
  package func join() {
    while let thread = running.withLock({ $0.popLast() }) {
      #if canImport(Glibc) && !DARWIN_CHECK
      pthread_join(thread, nil)
      #else
      if let thread = pthread_t(bitPattern: thread) { pthread_join(thread, nil) }
      #endif
    }
  }

  private final class Body {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
  }
}

/// A value shared between threads behind a `Mutex`, in a class so that closures can capture it.
package final class Locked<Value>: Sendable {
  private let mutex: Mutex<Value>

  package init(_ value: sending Value) { mutex = Mutex(value) }

  package func withLock<Result, E: Error>(_ body: (inout sending Value) throws(E) -> sending Result) throws(E) -> sending Result {
    try mutex.withLock(body)
  }
}

/// The queue between threads: producers `push`, consumers `pop`, under one mutex and condition.
///
/// - Bounded: `push` waits while `capacity` items wait, so a producer that runs ahead (SQLite's
///   thread, the extraction's tree) holds a fixed number of buffers and descriptors.
/// - An item is `sending`: the thread that pushed it gives it up, the one that pops it owns it.
/// - `close()`: no more items; consumers take what is left, then `pop` returns nil.
/// - `cancel()`: the items left are handed back (to close what they hold), `push` refuses, `pop`
///   returns nil.
/// - Work that makes work (the walk): with `endsWhenIdle`, `pop` returns nil once nothing is
///   queued and no consumer is busy (a consumer is busy from one `pop` to its next).
/// - `lastInFirstOut` for a depth-first walk; first in, first out otherwise.
// Unchecked Sendable: every stored var is read and written only while holding `mutex`; the
// items cross threads only through `push` and `pop`, whose `sending` lets the compiler check
// that the pushing thread keeps no reference.
package final class WorkQueue<Item>: @unchecked Sendable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private let condition: UnsafeMutablePointer<pthread_cond_t>
  private var items: [Item] = []
  private var head = 0
  private let capacity: Int
  private let lastInFirstOut: Bool
  private let endsWhenIdle: Bool
  private var closed = false
  private var cancelled = false
  private var busy = 0
  private var idle = 0

  package init(capacity: Int = .max, lastInFirstOut: Bool = false, endsWhenIdle: Bool = false) {
    self.capacity = max(1, capacity)
    self.lastInFirstOut = lastInFirstOut
    self.endsWhenIdle = endsWhenIdle
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
    condition = .allocate(capacity: 1)
    condition.initialize(to: pthread_cond_t())
    pthread_cond_init(condition, nil)
  }

  deinit {
    pthread_cond_destroy(condition)
    condition.deinitialize(count: 1)
    condition.deallocate()
    pthread_mutex_destroy(mutex)
    mutex.deinitialize(count: 1)
    mutex.deallocate()
  }

  private func locked<T>(_ body: () -> T) -> T {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return body()
  }

  private var count: Int { items.count - head }

  /// Queues `item`, waiting while the queue is full; hands it back when the queue was
  /// cancelled or closed (so that the caller closes what it holds), nil once it is queued.
  @discardableResult
  package func push(_ item: sending Item) -> sending Item? {
    let refused: Item? = locked {
      while count >= capacity && !cancelled && !closed { pthread_cond_wait(condition, mutex) }
      guard !cancelled && !closed else { return item }
      items.append(item)
      pthread_cond_broadcast(condition)
      return nil
    }
    nonisolated(unsafe) let handedBack = refused
    return handedBack
  }

  /// Queues several items at once, ignoring the bound (a walk's folders, pushed by a consumer
  /// that must not wait on itself). Popped last-in-first-out, the first of them comes out first.
  package func push(contentsOf newItems: sending [Item]) {
    guard !newItems.isEmpty else { return }
    locked {
      guard !cancelled && !closed else { return }
      items.append(contentsOf: lastInFirstOut ? newItems.reversed() : newItems)
      pthread_cond_broadcast(condition)
    }
  }

  /// The next item, waiting while none is queued; nil once the queue is closed and empty, or
  /// cancelled, or (`endsWhenIdle`) empty with no consumer busy. `finishedPrevious`: the caller
  /// is done with the item it popped before (with `endsWhenIdle`, it may have pushed more).
  package func pop(finishedPrevious: Bool = false) -> sending Item? {
    let item: Item? = locked {
      if finishedPrevious {
        busy -= 1
        if busy == 0 { pthread_cond_broadcast(condition) }
      }
      while count == 0 && !cancelled && !closed {
        if endsWhenIdle && busy == 0 {
          pthread_cond_broadcast(condition)
          return nil
        }
        idle += 1
        pthread_cond_wait(condition, mutex)
        idle -= 1
      }
      guard count > 0 && !cancelled else { return nil }
      busy += 1
      pthread_cond_broadcast(condition)  // room for a waiting producer
      if lastInFirstOut { return items.removeLast() }
      let item = items[head]
      head += 1
      // The items taken go once they are as many as those left: the array stays within twice
      // what waits.
      if head >= 64 && head * 2 >= items.count {
        items.removeFirst(head)
        head = 0
      }
      return item
    }
    nonisolated(unsafe) let taken = item
    return taken
  }

  /// Whether a consumer waits and nothing is queued (a busy walk worker then shares its folders).
  package var wantsWork: Bool { locked { idle > 0 && count == 0 } }

  /// No more items: consumers take what is left, then `pop` returns nil.
  package func close() {
    locked {
      closed = true
      pthread_cond_broadcast(condition)
    }
  }

  /// Drops what is queued and hands it back; `push` refuses and `pop` returns nil from now on.
  package func cancel() -> sending [Item] {
    let left: [Item] = locked {
      cancelled = true
      let left = Array(items[head...])
      items = []
      head = 0
      pthread_cond_broadcast(condition)
      return left
    }
    nonisolated(unsafe) let taken = left
    return taken
  }

  /// Waits until nothing is queued and no consumer is busy (every item popped was finished).
  package func waitUntilDone() {
    locked {
      while (count > 0 && !cancelled) || busy > 0 { pthread_cond_wait(condition, mutex) }
    }
  }
}

/// Calls `tick` on a thread of its own, first after `delay` milliseconds, then every `interval`,
/// until `stop()`: a progress line's clock. The thread sleeps in poll(2) on a pipe, which
/// `stop()` writes to, so that stopping wakes it at once; once `stop()` returns, no tick runs.
package final class Ticker: Sendable {
  private let delay: Int32
  private let interval: Int32
  private let tick: @Sendable () -> Void
  private let thread = ThreadGroup()
  /// The pipe's ends while the thread runs, else -1: both closed by `stop()` once the thread
  /// has ended (so that its write never meets a closed read end: SIGPIPE).
  private let ends = Mutex<(read: Int32, write: Int32)>((-1, -1))

  package init(delayMilliseconds delay: Int, intervalMilliseconds interval: Int, tick: @escaping @Sendable () -> Void) {
    self.delay = Int32(clamping: max(0, delay))
    self.interval = Int32(clamping: max(1, interval))
    self.tick = tick
  }

  /// Starts the clock; false when no pipe or thread can be made (nothing then ticks).
  @discardableResult
  package func start() -> Bool {
    ends.withLock { open in
      guard open.write < 0 else { return true }
      var ends: [Int32] = [-1, -1]
      guard pipe(&ends) == 0 else { return false }
      for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
      let (readEnd, delay, interval, tick) = (ends[0], delay, interval, tick)
      guard thread.start(stackSize: 256 << 10, {
        var timeout = delay
        while true {
          var waiting = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
          let ready = poll(&waiting, 1, timeout)
          if ready < 0 && currentErrno() == .interrupted { continue }
          guard ready == 0 else { break }  // woken by stop(), or poll failed
          tick()
          timeout = interval
        }
      }) else {
        close(ends[0])
        close(ends[1])
        return false
      }
      open = (ends[0], ends[1])
      return true
    }
  }

  /// Stops the clock and waits for a tick in progress to end.
  package func stop() {
    let pipe = ends.withLock { open in
      defer { open = (-1, -1) }
      return open
    }
    guard pipe.write >= 0 else { return }
    var byte: UInt8 = 1
    _ = write(pipe.write, &byte, 1)
    thread.join()
    close(pipe.read)
    close(pipe.write)
  }
}

extension Syscalls {
  /// poll(2) for input on `descriptor`, at most `milliseconds`: true when a read will not wait
  /// (data, the end of the input, or an error to report), false when the time ran out or a
  /// signal interrupted the wait (the caller asks whether to stop, then waits again; a read
  /// after a signal would block).
  package static func waitUntilReadable(_ descriptor: FileDescriptor, milliseconds: Int32) -> Bool {
    var waiting = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
    let ready = poll(&waiting, 1, milliseconds)
    if ready < 0 && currentErrno() == .interrupted { return false }
    return ready != 0
  }
}
