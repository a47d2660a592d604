import CSQLite

/// A SQLite database opened read-only and immutable, and its statements: the only code that
/// calls SQLite. `immutable=1` tells SQLite the file cannot change, so it takes no locks and never
/// creates `-wal` or `-shm` files beside it: auditing a backup writes nothing into it, also when
/// the folder is read-only or belongs to another user. A decrypted database is read from memory
/// (`sqlite3_deserialize`), never through a file.
final class SQLiteDatabase {
  struct Failure: Error { var message: String }

  private let handle: OpaquePointer
  /// The memory a deserialized database is read from: kept until the connection is closed.
  private let memory: SecretBuffer?

  /// Opens `path` with the URI `file:PATH?mode=ro&immutable=1`.
  init(readOnlyImmutable path: String) throws(Failure) {
    var handle: OpaquePointer?
    let uri = "file:" + Self.uriEscaped(path) + "?mode=ro&immutable=1"
    let status = sqlite3_open_v2(uri, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nil)
    guard status == SQLITE_OK, let handle else {
      throw Self.closing(handle, status: status)
    }
    self.handle = handle
    memory = nil
  }

  /// Reads the database in `memory` (the bytes in use) without copying it, read-only: SQLite
  /// neither writes nor frees it. A database in WAL mode (header bytes 18 and 19 are 2) is
  /// marked as a rollback-journal one first, as SQLite's in-memory databases cannot use a WAL
  /// (no -wal file is read either when a backup folder's file is opened immutable). Temporary
  /// storage is memory, so nothing decrypted reaches a temporary file.
  init(deserializing memory: SecretBuffer) throws(Failure) {
    let bytes = memory.storage
    if memory.count >= 20 && bytes[18] == 2 && bytes[19] == 2 {
      bytes[18] = 1
      bytes[19] = 1
    }
    var handle: OpaquePointer?
    var status = sqlite3_open_v2(":memory:", &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
    if status == SQLITE_OK, let handle {
      // Sorts and temporary tables in memory too: never a temporary file of decrypted rows.
      status = sqlite3_exec(handle, "PRAGMA temp_store = MEMORY", nil, nil, nil)
    }
    if status == SQLITE_OK, let handle {
      status = sqlite3_deserialize(handle, "main", bytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                   sqlite3_int64(memory.count), sqlite3_int64(memory.count), UInt32(SQLITE_DESERIALIZE_READONLY))
    }
    guard status == SQLITE_OK, let handle else {
      throw Self.closing(handle, status: status)
    }
    self.handle = handle
    self.memory = memory
  }

  deinit { sqlite3_close(handle) }

  /// The failure to open: SQLite's message for the connection (or for `status` when there is
  /// none), after closing the connection.
  private static func closing(_ handle: OpaquePointer?, status: Int32) -> Failure {
    let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
    sqlite3_close(handle)
    return Failure(message: message)
  }

  /// Whether a table of that name exists (a damaged file fails here, with SQLite's words).
  func hasTable(_ name: String) throws(Failure) -> Bool {
    let statement = try prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")
    statement.bind(1, name)
    return try statement.step()
  }

  func prepare(_ sql: String) throws(Failure) -> Statement {
    var statement: OpaquePointer?
    guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
      throw Failure(message: String(cString: sqlite3_errmsg(handle)))
    }
    return Statement(handle: statement, database: handle)
  }

  /// A prepared statement whose rows are read one at a time: nothing is collected.
  final class Statement {
    fileprivate let handle: OpaquePointer
    private let database: OpaquePointer

    fileprivate init(handle: OpaquePointer, database: OpaquePointer) {
      self.handle = handle
      self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    /// Advances to the next row: true when there is one.
    func step() throws(Failure) -> Bool {
      switch sqlite3_step(handle) {
      case SQLITE_ROW: return true
      case SQLITE_DONE: return false
      default: throw Failure(message: String(cString: sqlite3_errmsg(database)))
      }
    }

    /// Column `index`'s text or blob bytes, valid until the next `step` (no copy).
    func bytes(_ index: Int32) -> UnsafeRawBufferPointer {
      guard let pointer = sqlite3_column_blob(handle, index) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
      return UnsafeRawBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, index)))
    }

    func integer(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// Binds text to parameter `index` (from 1); SQLite copies it.
    func bind(_ index: Int32, _ text: String) {
      sqlite3_bind_text(handle, index, text, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
    }
  }

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
