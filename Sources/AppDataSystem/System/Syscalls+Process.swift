#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
import CLibattr
#elseif canImport(Darwin)
import Darwin
#endif

// The process: CPUs, limits, environment, its descriptor table, how it ends.
extension Syscalls {
  /// Gives the calling thread a private copy of the process's descriptor table (Linux
  /// `unshare(CLONE_FILES)`); false where that is not possible. While threads share one
  /// table, every syscall on a descriptor takes and drops a reference on the open file; a
  /// walker thread alone in its table skips that (perf: 3% of a two-thread walk).
  package static func unshareDescriptorTable() -> Bool {
    #if canImport(Glibc) && !DARWIN_CHECK
    return appdata_unshare_files() == 0
    #else
    return false
    #endif
  }

  /// CLOCK_MONOTONIC, in nanoseconds (vDSO: no system call).
  package static func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
  }

  /// What the calling thread has used so far (`getrusage(RUSAGE_THREAD)`): its CPU time, user
  /// and system, and the blocks its reads took from a disk. With `monotonicNanoseconds`, whether
  /// a stretch of work waited on the disk: its reads counted blocks (the page cache did not have
  /// them, whatever the disk's speed), or its wall-clock time ran ahead of its CPU time.
  package struct ThreadUsage: Sendable {
    package var cpuNanoseconds: UInt64
    package var blocksRead: UInt64
  }

  package static func threadUsage() -> ThreadUsage {
    var usage = rusage()
    #if canImport(Glibc) && !DARWIN_CHECK
    let who = __rusage_who_t(1)  // RUSAGE_THREAD, which glibc declares only under _GNU_SOURCE
    #else
    let who = RUSAGE_SELF
    #endif
    guard getrusage(who, &usage) == 0 else { return ThreadUsage(cpuNanoseconds: 0, blocksRead: 0) }
    func nanoseconds(_ time: timeval) -> UInt64 {
      UInt64(max(0, time.tv_sec)) &* 1_000_000_000 &+ UInt64(max(0, time.tv_usec)) &* 1_000
    }
    return ThreadUsage(
      cpuNanoseconds: nanoseconds(usage.ru_utime) &+ nanoseconds(usage.ru_stime),
      blocksRead: UInt64(max(0, usage.ru_inblock)))
  }

  /// The number of online CPUs (sysconf(_SC_NPROCESSORS_ONLN)).
  package static var onlineProcessorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

  /// Raises the soft open-file limit to the hard one, so a wide walk does not run out of descriptors.
  package static func raiseOpenFileLimit() {
    var limit = rlimit()
    #if canImport(Glibc) && !DARWIN_CHECK
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    let resource = RLIMIT_NOFILE
    #endif
    if getrlimit(resource, &limit) == 0 && limit.rlim_cur < limit.rlim_max {
      limit.rlim_cur = limit.rlim_max
      #if !canImport(Glibc) || DARWIN_CHECK
      // macOS refuses RLIM_INFINITY for RLIMIT_NOFILE (setrlimit(2): EINVAL above OPEN_MAX, or
      // kern.maxfilesperproc): ask for OPEN_MAX, so the limit does not stay at 256.
      limit.rlim_cur = min(limit.rlim_max, rlim_t(OPEN_MAX))
      #endif
      _ = setrlimit(resource, &limit)
    }
  }

  /// getenv(3).
  package static func environment(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    return String(cString: value)
  }

  /// usleep(3).
  package static func sleep(milliseconds: Int) { usleep(useconds_t(milliseconds * 1000)) }

  /// Ends the process at once with SIGKILL, as a crash or power loss would (test hook).
  package static func killSelf() -> Never {
    kill(getpid(), SIGKILL)
    _exit(137)
  }

  /// exit(3): flushes stdio and ends the process with `status`.
  package static func exit(_ status: Int32) -> Never {
    #if canImport(Glibc) && !DARWIN_CHECK
    Glibc.exit(status)
    #else
    Darwin.exit(status)
    #endif
  }

  /// memcmp(3): the three-way comparison of `count` bytes (negative, zero, positive).
  @inlinable @inline(__always)
  package static func compareBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Int32 {
    memcmp(a, b, count)
  }

  /// setlocale(3) of LC_CTYPE to a UTF-8 locale (C.UTF-8, else en_US.UTF-8), for libraries that
  /// convert names through the locale's character set; false when neither exists.
  @discardableResult
  package static func useUTF8CharacterType() -> Bool {
    setlocale(LC_CTYPE, "C.UTF-8") != nil || setlocale(LC_CTYPE, "en_US.UTF-8") != nil
  }

  /// _exit(2): ends the process at once, with `status` (130 after SIGINT, as shells report it).
  package static func exitNow(_ status: Int32) -> Never {
    _exit(status)
  }
}
