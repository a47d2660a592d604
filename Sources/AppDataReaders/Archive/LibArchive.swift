import AppDataSystem
import AppDataCore
import CLibarchive

/// One entry's header, as libarchive reads it.
struct ArchiveHeader {
  enum Kind { case regular, directory, symbolicLink, hardLink, other }

  /// The path inside the archive, as stored (bytes; need not be UTF-8).
  var path: [UInt8]
  var kind: Kind
  /// The declared (uncompressed) size.
  var size: UInt64
  /// Extended attributes from pax headers (`SCHILY.xattr.*`, `LIBARCHIVE.xattr.*`) and the like.
  var attributes: [(name: String, value: [UInt8])]
  var isEncrypted: Bool
  /// A symlink's target, as stored.
  var linkTarget: [UInt8]? = nil
}

/// An archive being read with libarchive: any format and compression it detects from the
/// content (tar, pax, zip; gzip, xz, zstd, bzip2), one entry at a time, nothing extracted.
/// The thin wrapper: the only code that calls libarchive.
final class LibArchive {
  /// What libarchive said: its message (escaped) and its error number, which is what code
  /// decides by (`isUnrecognisedFormat`), never the words.
  struct Failure: Error {
    var message: String
    /// `archive_errno`: an errno value, or libarchive's own ARCHIVE_ERRNO_* (0 when none was set).
    var errno = Errno(rawValue: 0)

    /// ARCHIVE_ERRNO_FILE_FORMAT (EILSEQ on Linux, which has no EFTYPE): bytes of no format
    /// libarchive reads, or a format it reads but damaged.
    var isFileFormat: Bool { errno == .badFileTypeOrFormat }
  }

  /// libarchive's functions (the shim's table), loaded with the first archive.
  private let c: appdata_libarchive
  private let archive: OpaquePointer
  private var entry: OpaquePointer?
  let path: String
  /// The bytes an archive read from memory is read from, owned until the reader is freed.
  private var memory: UnsafeMutableRawBufferPointer?
  /// Entry data handed to appdata, and what of this reader's expansion `WorkCounters` was told.
  private var dataRead: UInt64 = 0
  private var counted: UInt64 = 0

  /// The sonames tried, in order. On macOS an absolute path: dlopen(3) searches a bare name in
  /// LC_RPATH, DYLD_LIBRARY_PATH and the working folder first, where anyone may put a
  /// libarchive.2.dylib; /usr/lib's is in the system's shared cache.
  #if os(macOS) || DARWIN_CHECK
  static let libraryNames = ["/usr/lib/libarchive.2.dylib"]
  #else
  static let libraryNames = ["libarchive.so.13", "libarchive.so"]
  #endif

  /// libarchive's functions, loaded the first time an archive is read: a run that reads none
  /// never maps libarchive and what it pulls in, and a missing library is a failure to read
  /// the archive, in words, rather than a binary that cannot start.
  private static let functions: Result<appdata_libarchive, Failure> = SharedLibrary.table(libraryNames, bind: appdata_libarchive_bind)
    .mapError { Failure(message: "cannot load libarchive (\(TerminalText.escaped($0.reason)))") }

  /// libarchive converts names to the locale's character set; in the C locale that is a slow
  /// byte-by-byte conversion to ASCII (and lossy). Names in archives are UTF-8: say so, once.
  private static let utf8Locale: Void = { Syscalls.useUTF8CharacterType() }()

  /// Reads the archive at `path`.
  convenience init(path: String) throws(Failure) {
    try self.init(path: path, bytes: nil)
  }

  /// Reads an archive held in memory (`bytes` is copied); `path` names it in messages.
  convenience init(bytes: [UInt8], path: String) throws(Failure) {
    try self.init(path: path, bytes: bytes)
  }

  /// A reader of every format and filter, opened on `bytes` when given, else on the file at `path`.
  private init(path: String, bytes: [UInt8]?) throws(Failure) {
    _ = Self.utf8Locale
    let c = try Self.functions.get()
    guard let archive = c.archive_read_new() else { throw Failure(message: "cannot start libarchive") }
    self.c = c
    self.archive = archive
    self.path = path
    _ = c.archive_read_support_filter_all(archive)
    _ = c.archive_read_support_format_all(archive)
    // Every stored property is set, so deinit frees the reader (and the copy) if opening fails.
    let opened: Int32
    if let bytes {
      let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 16)
      copy.copyBytes(from: bytes)
      memory = copy
      opened = c.archive_read_open_memory(archive, copy.baseAddress, bytes.count)
    } else {
      opened = c.archive_read_open_filename(archive, path, 64 * 1024)
    }
    if opened != ARCHIVE_OK {
      throw failure()
    }
  }

  deinit {
    tally()
    _ = c.archive_read_free(archive)
    memory?.deallocate()
  }

  /// The reader's current error. libarchive's messages quote names and bytes from the archive:
  /// escaped like file names, here, where the failure is made.
  private func failure() -> Failure {
    let errno = Errno(rawValue: c.archive_errno(archive))
    guard let text = c.archive_error_string(archive) else { return Failure(message: "unexpected end of the archive", errno: errno) }
    return Failure(message: TerminalText.escaped(String(cString: text)), errno: errno)
  }

  /// What this reader expanded: a compression filter's output (the tar stream of a tgz, data
  /// skipped included), or the entries' data appdata read (a zip's deflate), whichever is more.
  var expandedBytes: UInt64 {
    let filtered = isCompressed ? UInt64(max(0, c.archive_filter_bytes(archive, 0))) : 0
    return max(filtered, dataRead)
  }

  /// Whether a compression filter (gzip, xz, zstd, bzip2…) stands between the file and the
  /// format: skipping an entry's data then means expanding it.
  var isCompressed: Bool { c.archive_filter_code(archive, 0) != ARCHIVE_FILTER_NONE }

  /// Tells `WorkCounters` what was expanded since it was last told.
  private func tally() {
    let now = expandedBytes
    if now > counted {
      WorkCounters.addDecompressed(now - counted)
      counted = now
    }
  }

  /// The next entry's header, or nil at the end of the archive.
  func next() throws(Failure) -> ArchiveHeader? {
    var current: OpaquePointer?
    let status = c.archive_read_next_header(archive, &current)
    tally()
    if status != ARCHIVE_EOF && current != nil { WorkCounters.addEntries(1) }
    if status == ARCHIVE_EOF { return nil }
    if status < ARCHIVE_WARN || current == nil { throw failure() }
    entry = current
    guard let current else { return nil }

    var pathBytes: [UInt8] = []
    if let name = c.archive_entry_pathname(current) {
      pathBytes = cNameBytes(name)
    } else if let wide = c.archive_entry_pathname_utf8(current) {
      pathBytes = cNameBytes(wide)
    }
    let kind: ArchiveHeader.Kind
    if c.archive_entry_hardlink(current) != nil {
      kind = .hardLink
    } else {
      // AE_IFREG, AE_IFDIR, AE_IFLNK: cast macros Swift cannot import; the values are POSIX's.
      switch UInt32(c.archive_entry_filetype(current)) {
      case 0o100000: kind = .regular
      case 0o040000: kind = .directory
      case 0o120000: kind = .symbolicLink
      default: kind = .other
      }
    }
    var attributes: [(String, [UInt8])] = []
    if c.archive_entry_xattr_reset(current) > 0 {
      var name: UnsafePointer<CChar>?
      var value: UnsafeRawPointer?
      var size = 0
      while c.archive_entry_xattr_next(current, &name, &value, &size) == ARCHIVE_OK {
        guard let name else { continue }
        let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
        attributes.append((String(cString: name), bytes))
      }
    }
    return ArchiveHeader(
      path: pathBytes, kind: kind, size: UInt64(max(0, c.archive_entry_size(current))), attributes: attributes,
      isEncrypted: c.archive_entry_is_encrypted(current) != 0,
      linkTarget: kind == .symbolicLink ? c.archive_entry_symlink(current).map { cNameBytes($0) } : nil)
  }

  /// Reads at most `limit` bytes of the current entry's data.
  func readData(limit: Int) throws(Failure) -> [UInt8] {
    var data: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16 * 1024)
    while data.count < limit {
      let count = chunk.withUnsafeMutableBytes { c.archive_read_data(archive, $0.baseAddress, min($0.count, limit - data.count)) }
      if count == 0 { break }
      if count < 0 { self.tally(); throw failure() }
      dataRead += UInt64(count)
      data.append(contentsOf: chunk[0..<count])
    }
    self.tally()
    return data
  }

  /// Reads the current entry's data into `buffer` from its start, until the entry ends or the
  /// buffer is full (its `count` then equals its capacity): the one copy of what is read, with
  /// no array that grows on the way.
  func readData(into buffer: SecretBuffer) throws(Failure) {
    let storage = buffer.storage
    var filled = 0
    defer {
      dataRead += UInt64(filled)
      tally()
    }
    while filled < storage.count {
      let count = c.archive_read_data(archive, storage.baseAddress! + filled, storage.count - filled)
      if count == 0 { break }
      if count < 0 { throw failure() }
      filled += count
    }
    buffer.setCount(filled)
  }

  /// Reads the next bytes of the current entry into `buffer`; 0 at its end.
  func readChunk(into buffer: UnsafeMutableRawBufferPointer) throws(Failure) -> Int {
    let count = c.archive_read_data(archive, buffer.baseAddress, buffer.count)
    if count > 0 { dataRead += UInt64(count) }
    self.tally()
    if count < 0 { throw failure() }
    return count
  }

  /// Uncompressed bytes read so far (the zip-bomb guard).
  var uncompressedBytes: UInt64 { UInt64(max(0, c.archive_filter_bytes(archive, -1), c.archive_filter_bytes(archive, 0))) }

  /// Whether libarchive took the file for an mtree listing: any text file whose lines look like
  /// paths (`notes.txt`). A listing of names holds no file's bytes: appdata treats it as a file
  /// that is not an archive.
  var isTextListing: Bool { (c.archive_format(archive) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_MTREE }

  /// Whether the archive is a tar (ustar, pax, GNU) read without a compression filter.
  var isUncompressedTar: Bool {
    (c.archive_format(archive) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_TAR && c.archive_filter_code(archive, 0) == ARCHIVE_FILTER_NONE
  }
}
