import AppDataSystem
import AppDataCore
import CSQLite

/// A SQLite database opened read-only and immutable, and its statements: the only code that
/// calls SQLite. `immutable=1` tells SQLite the file cannot change, so it takes no locks and never
/// creates `-wal` or `-shm` files beside it: auditing a backup writes nothing into it, also when
/// the folder is read-only or belongs to another user. A decrypted database is read from memory
/// (`sqlite3_deserialize`), never through a file.
///
/// The file is someone else's, and SQLite runs what its schema says: a generated column or a
/// default value is an expression evaluated per row (`printf('%.*c', 900000000, 'a')`). So every
/// connection runs with the schema untrusted (`trusted_schema` off, defensive mode), with
/// strings and blobs capped at `maximumValueLength` and SQLite's heap at `heapLimit`, and
/// `unusualColumns(of:expecting:)` finds a `Files` table that is not plain stored columns, which
/// the reader refuses before a row is read.
final class SQLiteDatabase {
  /// A failure: SQLite's result code, which code decides by, and its words (escaped here, where
  /// the failure is made: SQLite's messages quote names from the file's schema).
  struct Failure: Error {
    var message: String
    /// The primary result code (`SQLITE_CORRUPT`, `SQLITE_NOTADB`, `SQLITE_TOOBIG`, ...).
    var code: Int32

    init(message: String, code: Int32) {
      self.message = TerminalText.escaped(message)
      self.code = code & 0xFF
    }

    /// A value or an allocation past the limits `distrust` sets: the file asked for too much.
    var isPastLimits: Bool { code == SQLITE_TOOBIG || code == SQLITE_NOMEM }
  }

  /// The longest string or blob SQLite builds for appdata: a relativePath is at most a few KB
  /// and an MBFile record a few hundred bytes; real manifests stay far below.
  static let maximumValueLength: Int32 = 16 << 20
  /// What SQLite may allocate in all (its page cache, statements, values), process-wide. A
  /// decrypted manifest is in appdata's own memory, not SQLite's heap.
  static let heapLimit: Int64 = 256 << 20

  /// SQLite's functions (the shim's table), loaded with the first database.
  private let c: appdata_sqlite
  private let handle: OpaquePointer
  /// The memory a deserialized database is read from: kept until the connection is closed.
  private let memory: SecretBuffer?

  /// Opens `path` with the URI `file:PATH?mode=ro&immutable=1`.
  init(readOnlyImmutable path: String) throws(Failure) {
    let c = try Self.functions.get()
    var handle: OpaquePointer?
    let uri = "file:" + Self.uriEscaped(path) + "?mode=ro&immutable=1"
    let status = c.sqlite3_open_v2(uri, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nil)
    guard status == SQLITE_OK, let handle else {
      throw Self.closing(handle, status: status, c)
    }
    try Self.distrust(handle, c)
    self.c = c
    self.handle = handle
    memory = nil
  }

  /// Limits a connection to what reading a manifest needs, before the schema is first read.
  private static func distrust(_ handle: OpaquePointer, _ c: appdata_sqlite) throws(Failure) {
    _ = c.sqlite3_hard_heap_limit64(heapLimit)
    _ = c.sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, maximumValueLength)
    _ = c.sqlite3_limit(handle, SQLITE_LIMIT_SQL_LENGTH, 1 << 20)
    _ = c.sqlite3_limit(handle, SQLITE_LIMIT_EXPR_DEPTH, 100)
    _ = c.sqlite3_limit(handle, SQLITE_LIMIT_COLUMN, 100)
    var table = c
    var status = appdata_sqlite3_db_config_flag(&table, handle, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0)
    if status == SQLITE_OK { status = appdata_sqlite3_db_config_flag(&table, handle, SQLITE_DBCONFIG_DEFENSIVE, 1) }
    guard status == SQLITE_OK else { throw closing(handle, status: status, c) }
  }

  /// Reads the database in `memory` (the bytes in use) without copying it, read-only: SQLite
  /// neither writes nor frees it. A database in WAL mode (header bytes 18 and 19 are 2) is
  /// marked as a rollback-journal one first, as SQLite's in-memory databases cannot use a WAL
  /// (no -wal file is read either when a backup folder's file is opened immutable). Temporary
  /// storage is memory, so nothing decrypted reaches a temporary file.
  init(deserializing memory: SecretBuffer) throws(Failure) {
    let c = try Self.functions.get()
    let bytes = memory.storage
    if memory.count >= 20 && bytes[18] == 2 && bytes[19] == 2 {
      bytes[18] = 1
      bytes[19] = 1
    }
    var handle: OpaquePointer?
    var status = c.sqlite3_open_v2(":memory:", &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
    if status == SQLITE_OK, let handle {
      try Self.distrust(handle, c)
      // Sorts and temporary tables in memory too: never a temporary file of decrypted rows.
      status = c.sqlite3_exec(handle, "PRAGMA temp_store = MEMORY", nil, nil, nil)
    }
    if status == SQLITE_OK, let handle {
      status = c.sqlite3_deserialize(handle, "main", bytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                   sqlite3_int64(memory.count), sqlite3_int64(memory.count), UInt32(SQLITE_DESERIALIZE_READONLY))
    }
    guard status == SQLITE_OK, let handle else {
      throw Self.closing(handle, status: status, c)
    }
    self.c = c
    self.handle = handle
    self.memory = memory
  }

  deinit { _ = c.sqlite3_close(handle) }

  /// The failure to open: SQLite's message for the connection (or for `status` when there is
  /// none), after closing the connection.
  private static func closing(_ handle: OpaquePointer?, status: Int32, _ c: appdata_sqlite) -> Failure {
    let message = Self.text(handle.flatMap { c.sqlite3_errmsg($0) } ?? c.sqlite3_errstr(status))
    let code = handle.map { c.sqlite3_extended_errcode($0) } ?? status
    _ = c.sqlite3_close(handle)
    return Failure(message: message, code: code)
  }

  /// Whether a table of that name exists (a damaged file fails here, with SQLite's words).
  func hasTable(_ name: String) throws(Failure) -> Bool {
    let statement = try prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")
    statement.bind(1, name)
    return try statement.step()
  }

  /// Why table `name` is not a plain table holding `columns` as stored values, or nil when it
  /// is: a virtual table, or one of the columns generated, hidden or with a default, would
  /// have SQLite compute what the file's author chose for every row read.
  func unusualColumns(of name: String, expecting columns: [String]) throws(Failure) -> String? {
    let table = try prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1")
    table.bind(1, name)
    guard try table.step() else { return "no table \(name)" }
    let sql = String(decoding: table.bytes(0), as: UTF8.self)
    guard sql.uppercased().starts(with: "CREATE TABLE") else { return "\(name) is not a plain table" }
    // cid, name, type, notnull, dflt_value, pk, hidden
    let info = try prepare("SELECT name, hidden, dflt_value IS NOT NULL FROM pragma_table_xinfo(?1)")
    info.bind(1, name)
    var found = Set<String>()
    while try info.step() {
      let column = String(decoding: info.bytes(0), as: UTF8.self)
      guard columns.contains(column) else { continue }
      found.insert(column)
      if info.integer(1) != 0 { return "its column \(column) is computed (generated or hidden), not stored" }
      if info.integer(2) != 0 { return "its column \(column) has a default value" }
    }
    if let missing = columns.first(where: { !found.contains($0) }) { return "it has no column \(missing)" }
    return nil
  }

  func prepare(_ sql: String) throws(Failure) -> Statement {
    var statement: OpaquePointer?
    guard c.sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
      throw Failure(message: Self.text(c.sqlite3_errmsg(handle)), code: c.sqlite3_extended_errcode(handle))
    }
    return Statement(handle: statement, database: handle, c)
  }

  /// A prepared statement whose rows are read one at a time: nothing is collected.
  final class Statement {
    fileprivate let handle: OpaquePointer
    private let database: OpaquePointer
    private let c: appdata_sqlite
    /// Rows stepped to, told to `WorkCounters` when the statement is finalized.
    private var rows: UInt64 = 0

    fileprivate init(handle: OpaquePointer, database: OpaquePointer, _ c: appdata_sqlite) {
      self.c = c
      self.handle = handle
      self.database = database
    }

    deinit {
      WorkCounters.addEntries(rows)
      _ = c.sqlite3_finalize(handle)
    }

    /// Advances to the next row: true when there is one.
    func step() throws(Failure) -> Bool {
      switch c.sqlite3_step(handle) {
      case SQLITE_ROW:
        rows &+= 1
        return true
      case SQLITE_DONE: return false
      default: throw Failure(message: SQLiteDatabase.text(c.sqlite3_errmsg(database)), code: c.sqlite3_extended_errcode(database))
      }
    }

    /// Column `index`'s text or blob bytes, valid until the next `step` (no copy).
    func bytes(_ index: Int32) -> UnsafeRawBufferPointer {
      guard let pointer = c.sqlite3_column_blob(handle, index) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
      return UnsafeRawBufferPointer(start: pointer, count: Int(c.sqlite3_column_bytes(handle, index)))
    }

    func integer(_ index: Int32) -> Int64 { c.sqlite3_column_int64(handle, index) }

    /// Binds text to parameter `index` (from 1); SQLite copies it.
    func bind(_ index: Int32, _ text: String) {
      _ = c.sqlite3_bind_text(handle, index, text, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
    }
  }

  /// SQLite's words (never nil in practice: SQLite returns a static text when out of memory).
  fileprivate static func text(_ words: UnsafePointer<CChar>?) -> String {
    words.map { String(cString: $0) } ?? "unknown error"
  }

  /// The sonames tried, in order. On macOS an absolute path (see `LibArchive.libraryNames`).
  #if os(macOS) || DARWIN_CHECK
  static let libraryNames = ["/usr/lib/libsqlite3.dylib"]
  #else
  static let libraryNames = ["libsqlite3.so.0", "libsqlite3.so"]
  #endif

  /// SQLite's functions, loaded the first time a database is opened: a run that reads no
  /// backup never maps SQLite, and a missing library is a failure to open the database, in
  /// words, rather than a binary that cannot start.
  private static let functions: Result<appdata_sqlite, Failure> = SharedLibrary.table(libraryNames, bind: appdata_sqlite_bind)
    .mapError { Failure(message: "cannot load SQLite (\($0.reason))", code: SQLITE_CANTOPEN) }

  /// Percent-encodes what a `file:` URI path cannot hold as it is (`?`, `#`, `%`, controls).
  static func uriEscaped(_ path: String) -> String {
    var output = ""
    for byte in path.utf8 {
      switch byte {
      case 0x25, 0x3F, 0x23, 0x00...0x20, 0x7F...0xFF:
        let hex = Array("0123456789ABCDEF")
        output += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0xF)])
      default:
        output.unicodeScalars.append(Unicode.Scalar(byte))
      }
    }
    return output
  }
}
