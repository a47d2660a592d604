import Synchronization

/// appdata's own counts of the work an untrusted input made it do, for the tests: with
/// `APPDATA_DEBUG_STATS=1` the binary ends by writing one line on stderr,
/// `appdata-stats: decompressed-bytes=N entries-read=N key-rounds=N symlink-steps=N` (Docs/development.md: its
/// words are not a stable interface). The hostile-input harness holds a bomb to a bound on these
/// counts rather than on seconds, which depend on the machine.
///
/// - decompressed bytes: what a compression filter or an archive's own compression (a zip's
///   deflate) produced, for libarchive's readers, and what zlib inflated from an adb backup;
/// - entries read: archive headers, an adb backup's tar headers and the rows SQLite handed over;
/// - key rounds: PBKDF2 rounds asked for (counted before they are computed);
/// - symlink steps: the components `appdata extract`'s symlink check visited, resolving where
///   its links lead (`SymlinkCheck`).
///
/// Each reader adds what it did when it has done it (a header read, a chunk of data, a statement
/// finalized), so the counts are exact at exit and cost one atomic add per header or chunk.
package enum WorkCounters {
  private static let decompressed = Atomic<UInt64>(0)
  private static let entries = Atomic<UInt64>(0)
  private static let rounds = Atomic<UInt64>(0)
  private static let symlinks = Atomic<UInt64>(0)

  package static func addDecompressed(_ bytes: UInt64) {
    if bytes > 0 { decompressed.wrappingAdd(bytes, ordering: .relaxed) }
  }

  package static func addEntries(_ count: UInt64) {
    if count > 0 { entries.wrappingAdd(count, ordering: .relaxed) }
  }

  package static func addKeyRounds(_ count: UInt64) {
    if count > 0 { rounds.wrappingAdd(count, ordering: .relaxed) }
  }

  package static func addSymlinkSteps(_ count: UInt64) {
    if count > 0 { symlinks.wrappingAdd(count, ordering: .relaxed) }
  }

  /// The counts so far.
  package static var decompressedBytes: UInt64 { decompressed.load(ordering: .relaxed) }
  package static var entriesRead: UInt64 { entries.load(ordering: .relaxed) }
  package static var keyRounds: UInt64 { rounds.load(ordering: .relaxed) }
  package static var symlinkSteps: UInt64 { symlinks.load(ordering: .relaxed) }

  /// The line `APPDATA_DEBUG_STATS=1` asks for, with its newline.
  package static var line: String {
    "appdata-stats: decompressed-bytes=\(decompressedBytes) entries-read=\(entriesRead) key-rounds=\(keyRounds) symlink-steps=\(symlinkSteps)\n"
  }

  /// Writes the line on stderr when `APPDATA_DEBUG_STATS=1` (the binary's last act before exit);
  /// false when it was asked for and could not be written (the run then fails: a test reading
  /// the counts must not read a run without them as one that did no work).
  package static func reportIfAsked() -> Bool {
    guard Syscalls.environment("APPDATA_DEBUG_STATS") == "1" else { return true }
    do {
      try Syscalls.writeAll(.standardError, Array(line.utf8), displayPath: "standard error")
      return true
    } catch {
      return false
    }
  }
}
