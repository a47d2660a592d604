#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A file a user named for output (`audit -o`, `init-config --output`), written completely or
/// not at all: the bytes go to a hidden file beside it (`.NAME.appdata-PID-RANDOM.tmp`), made
/// with `O_EXCL`, which is flushed (`fsync`) and renamed over NAME only once every write went
/// through. A failed write is kept (the first) and the rest are skipped; `commit` then throws it
/// and removes the hidden file, so a full disk leaves the old NAME, or nothing, never half a
/// report; a hidden file a killed run left is removed by the next run that writes NAME. A NAME
/// that exists and is not a regular file (`/dev/stdout`, a FIFO, a symlink) is
/// written in place, as it cannot be replaced.
public final class ReplacingFile: Sendable {
  public let path: String
  private let folder: FileDescriptor?
  private let name: [UInt8]
  private let temporaryName: [UInt8]?
  private let descriptor: FileDescriptor
  private struct State {
    /// The first write that failed.
    var failure: SystemError?
    var isDone = false
  }
  /// Held while writing, so that each write's bytes go out whole.
  private let state = Mutex(State())

  /// The first write that failed.
  public var failure: SystemError? { state.withLock { $0.failure } }

  public init(path: String) throws(SystemError) {
    self.path = path
    let bytes = Array(path.utf8)
    let slash = bytes.lastIndex(of: 0x2F)
    name = Array(bytes[(slash.map { $0 + 1 } ?? 0)...])
    let existing = try? Syscalls.status(ofPath: path)
    guard !name.isEmpty, existing == nil || existing?.kind == .regular else {
      folder = nil
      temporaryName = nil
      descriptor = try Syscalls.createOrTruncate(atPath: path)
      return
    }
    let folder = try Syscalls.openDirectory(atPath: Syscalls.folderPart(of: bytes))
    Self.removeLeftovers(of: name, in: folder)
    let made: (name: [UInt8], made: FileDescriptor)
    do {
      made = try Syscalls.makeUniquelyNamed(Self.prefix(of: name), suffix: ".tmp") { (candidate: [UInt8]) throws(SystemError) in
        try Syscalls.open(candidate, in: folder, options: .createNewFile, mode: 0o644, displayPath: path)
      }
    } catch {
      folder.close()
      throw error
    }
    self.folder = folder
    temporaryName = made.name
    descriptor = made.made
    // The report it replaces keeps its permission bits (a 0600 report stays private).
    if let existing { try? Syscalls.setMode(made.made, existing.permissions, displayPath: path) }
  }

  deinit { discard() }

  /// `.NAME.appdata-`: what this run's hidden file, and any a killed run left, start with.
  private static func prefix(of name: [UInt8]) -> [UInt8] { [0x2E] + name.prefix(180) + Array(".appdata-".utf8) }

  /// Removes the hidden files of runs that were killed (their process is gone) before they
  /// could rename theirs over NAME: `.NAME.appdata-PID-RANDOM.tmp` (`Syscalls.makeUniquelyNamed`).
  private static func removeLeftovers(of name: [UInt8], in folder: FileDescriptor) {
    let prefix = prefix(of: name)
    for entry in Syscalls.entryNames(of: folder) where entry.starts(with: prefix) && entry.count > prefix.count + 4 && entry.suffix(4).elementsEqual(".tmp".utf8) {
      let rest = entry[prefix.count...]
      guard let dash = rest.firstIndex(of: 0x2D), let pid = Int32(String(decoding: rest[..<dash], as: UTF8.self)), pid > 0 else { continue }
      if kill(pid, 0) == 0 || errno != ESRCH { continue }
      _ = try? Syscalls.remove(Array(entry), in: folder, isDirectory: false, displayPath: "")
    }
  }

  /// Writes all of `bytes`, unless a write failed already.
  /// Safe from several threads (the walk's workers stream NDJSON lines): each call's bytes go
  /// out whole.
  public func write(_ bytes: UnsafeRawBufferPointer) {
    state.withLock { state in
      guard state.failure == nil, !state.isDone else { return }
      do throws(SystemError) { try Syscalls.writeAll(descriptor, bytes, displayPath: path) } catch { state.failure = error }
    }
  }

  public func write(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { write($0) }
  }

  /// Flushes the file and puts it in place; throws the first failed write (or the flush's, or
  /// the rename's), having removed the hidden file.
  public func commit() throws(SystemError) {
    enum Step { case alreadyDone, failed(SystemError), rename }
    let step: Step = state.withLock { state in
      guard !state.isDone else { return .alreadyDone }
      if state.failure == nil, temporaryName != nil {
        do throws(SystemError) { try Syscalls.sync(descriptor, displayPath: path) } catch { state.failure = error }
      }
      if let failure = state.failure { return .failed(failure) }
      state.isDone = true
      return .rename
    }
    switch step {
    case .alreadyDone: return
    case .failed(let failure):
      discard()
      throw failure
    case .rename: break
    }
    descriptor.close()
    guard let folder, let temporaryName else { return }
    defer { folder.close() }
    do {
      try Syscalls.renameReplacing(temporaryName, in: folder, to: name, in: folder, displayPath: path)
    } catch {
      _ = try? Syscalls.remove(temporaryName, in: folder, isDirectory: false, displayPath: path)
      throw error
    }
  }

  /// Unlinks the hidden file by its name, touching nothing else: what a signal handler does
  /// (from its own thread) just before the process ends.
  public func removeHiddenFile() {
    guard let folder, let temporaryName else { return }
    _ = try? Syscalls.remove(temporaryName, in: folder, isDirectory: false, displayPath: path)
  }

  /// Removes the hidden file (a failed run); NAME is left as it was.
  public func discard() {
    guard state.withLock({ state in
      defer { state.isDone = true }
      return !state.isDone
    }) else { return }
    descriptor.close()
    guard let folder, let temporaryName else { return }
    _ = try? Syscalls.remove(temporaryName, in: folder, isDirectory: false, displayPath: path)
    folder.close()
  }
}
