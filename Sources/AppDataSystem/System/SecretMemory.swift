#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Memory for secrets (a backup's password) and for what is decrypted with them (a backup's
/// Manifest.db): its own anonymous mapping, left out of core dumps (`MADV_DONTDUMP`), wiped with
/// `secureZero` (explicit_bzero, memset_s on Darwin: the compiler may not drop it) and unmapped when released. Never a file:
/// not in TMPDIR, not in /dev/shm.
// Unchecked Sendable: the mapping's address and length are constants; its bytes are written by
// one thread while it fills them (the password read, the manifest decrypted), before the
// buffer is shared, and only read after; `wipe` runs when no reader is left.
public final class SecretBuffer: @unchecked Sendable {
  /// The mapping's start and length (a multiple of the page size; at least one page).
  private let base: UnsafeMutableRawPointer
  private let mappedLength: Int
  /// The bytes in use, from the start.
  public private(set) var count: Int

  /// A zeroed buffer of `capacity` bytes, `count` 0; nil when the memory cannot be mapped.
  public init?(capacity: Int) {
    let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    let length = max(page, (capacity + page - 1) / page * page)
    // mmap(2) fails with MAP_FAILED, ((void *)-1): spelled out, as only Glibc's Swift overlay
    // declares the constant.
    guard let pointer = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
          pointer != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
    #if canImport(Glibc) && !DARWIN_CHECK
    _ = madvise(pointer, length, MADV_DONTDUMP)
    #endif
    base = pointer
    mappedLength = length
    count = 0
  }

  /// Copies a secret that lives elsewhere (a C string, a caller's buffer) into a new buffer;
  /// nil when the memory cannot be mapped. The caller wipes its own copy.
  public convenience init?(copying bytes: UnsafeRawBufferPointer) {
    self.init(capacity: bytes.count)
    if let source = bytes.baseAddress, bytes.count > 0 { base.copyMemory(from: source, byteCount: bytes.count) }
    count = bytes.count
  }

  /// Copies `bytes` (a password a library caller holds: `SecretBuffer(copying: Array("pw".utf8))`)
  /// into a new buffer; nil when the memory cannot be mapped.
  public convenience init?(copying bytes: some Collection<UInt8>) {
    self.init(capacity: bytes.count)
    var index = 0
    for byte in bytes {
      base.storeBytes(of: byte, toByteOffset: index, as: UInt8.self)
      index += 1
    }
    count = index
  }

  deinit {
    secureZero(base, mappedLength)
    munmap(base, mappedLength)
  }

  /// How many bytes the buffer can hold.
  public var capacity: Int { mappedLength }

  /// The bytes in use.
  public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

  /// All of the buffer, to be written in place; `setCount` then says how much is in use.
  public var storage: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(start: base, count: mappedLength) }

  /// Says how many bytes from the start are in use (wiping what is dropped).
  public func setCount(_ newCount: Int) {
    precondition(newCount >= 0 && newCount <= mappedLength)
    if newCount < count { secureZero(base + newCount, count - newCount) }
    count = newCount
  }

  /// Appends bytes read from `descriptor` until a newline, the end of the input, or the buffer is
  /// full: the first line (without its newline, or a final `\r`). Reads one byte at a time, so
  /// nothing after the line is taken from a pipe. Returns false when the line did not fit.
  /// While nothing is there to read (a pipe whose writer is silent), `stopping` is asked every
  /// tenth of a second; true ends the read with EINTR (a signal the process catches does not
  /// interrupt a read on another thread).
  package func readLine(from descriptor: FileDescriptor, displayPath: @autoclosure () -> String,
                        stopping: () -> Bool = { false }) throws(SystemError) -> Bool {
    setCount(0)
    while true {
      if count == mappedLength { return false }
      while !Syscalls.waitUntilReadable(descriptor, milliseconds: 100) {
        if stopping() { throw SystemError(errno: .interrupted, operation: .read, path: displayPath()) }
      }
      let read = try Syscalls.read(descriptor, into: UnsafeMutableRawBufferPointer(start: base + count, count: 1),
                                   displayPath: displayPath())
      if read == 0 { break }
      if base.load(fromByteOffset: count, as: UInt8.self) == 0x0A {
        secureZero(base + count, 1)
        break
      }
      count += 1
    }
    if count > 0 && base.load(fromByteOffset: count - 1, as: UInt8.self) == 0x0D { setCount(count - 1) }
    return true
  }
}

extension Syscalls {
  /// An environment variable's value copied into secret memory, then overwritten in this
  /// process's environment (so it no longer shows in /proc/PID/environ); nil when it is not set.
  package static func takeSecretEnvironment(_ name: String) -> SecretBuffer? {
    guard let value = getenv(name) else { return nil }
    let length = strlen(value)
    let secret = SecretBuffer(copying: UnsafeRawBufferPointer(start: value, count: length))
    secureZero(value, length)
    unsetenv(name)
    return secret
  }

  /// Whether standard input is a terminal (a password can be asked for).
  package static var isStandardInputATerminal: Bool { isatty(0) == 1 }

  /// Writes `prompt` to standard error and reads one line from the terminal on standard input
  /// with echo off (the settings are restored after the line, and on SIGINT, SIGTERM, SIGHUP or
  /// SIGQUIT before the signal's default action: a registration with `SignalCatcher`, on top
  /// of the job's while the line is read).
  package static func readSecretLine(prompt: String, into secret: SecretBuffer) throws(SystemError) -> Bool {
    var settings = termios()
    let canSilence = tcgetattr(0, &settings) == 0
    var registration: SignalCatcher.Registration?
    if canSilence {
      let saved = TerminalSettings(settings)
      let mine = Locked<SignalCatcher.Registration?>(nil)
      // On a signal: the terminal back as it was, then the job's own registration (its clean-up:
      // an audit's hidden report files), then the signal's default action, since the line being
      // read would otherwise wait on.
      let registered = SignalCatcher.shared.register(SignalCatcher.termination + [SIGQUIT]) { number in
        saved.restore()
        if let below = mine.withLock({ $0 }) { SignalCatcher.shared.passOn(number, from: below) }
        SignalCatcher.endAsSignalled(number)
      }
      mine.withLock { $0 = registered }
      registration = registered
      var silent = settings
      silent.c_lflag &= ~tcflag_t(ECHO | ECHONL)
      silent.c_lflag |= tcflag_t(ICANON)
      // Under the lock the handler restores under: a signal before this line leaves echo on.
      saved.silence(silent)
    }
    func restore() {
      guard canSilence else { return }
      _ = tcsetattr(0, TCSAFLUSH, &settings)
      registration?.cancel()
    }
    let fits: Bool
    do {
      // The prompt once echo is off and pending input flushed (as getpass(3) does): whoever
      // types after seeing it is neither echoed nor flushed away.
      try writeAll(.standardError, Array(prompt.utf8), displayPath: "standard error")
      fits = try secret.readLine(from: FileDescriptor(rawValue: 0), displayPath: "the terminal")
    } catch {
      restore()
      throw error
    }
    restore()
    // The newline the silenced terminal did not echo.
    if canSilence { try writeAll(.standardError, [0x0A], displayPath: "standard error") }
    return fits
  }
}

/// A terminal's settings, kept for a signal's registration to put back.
private final class TerminalSettings: Sendable {
  private let settings: termios
  /// Whether a signal's handler has put the settings back: silencing then does nothing.
  private let restored = Mutex(false)
  init(_ settings: termios) { self.settings = settings }
  func restore() {
    restored.withLock { restored in
      restored = true
      var settings = settings
      _ = tcsetattr(0, TCSAFLUSH, &settings)
    }
  }
  func silence(_ silent: termios) {
    restored.withLock { restored in
      guard !restored else { return }
      var silent = silent
      _ = tcsetattr(0, TCSAFLUSH, &silent)
    }
  }
}

/// Zeroes memory in a way the compiler may not drop: explicit_bzero(3) on Linux; memset_s(3) on
/// Darwin, which has no explicit_bzero (memset_s "shall not be optimized away", C11 Annex K).
@inline(__always)
func secureZero(_ pointer: UnsafeMutableRawPointer, _ count: Int) {
  #if canImport(Glibc) && !DARWIN_CHECK
  explicit_bzero(pointer, count)
  #else
  _ = memset_s(pointer, count, 0, count)
  #endif
}
