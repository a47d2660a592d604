import AppDataSystem
import AppDataCore

/// One row of the manifest's Files table as the reader uses it; its bytes are valid only during
/// the call that receives it.
struct ManifestRow {
  var domain: UnsafeBufferPointer<UInt8>
  var relativePath: UnsafeRawBufferPointer
  var flags: Int64
  /// The MBFile archive.
  var file: UnsafeRawBufferPointer
  /// Empty unless asked for (`--verify`).
  var fileID: UnsafeRawBufferPointer
}

/// Steps a `SELECT domain, relativePath, flags, file, fileID` statement to its end and hands every
/// row to the reader. Inline, SQLite's stepping and appdata's work on a row alternate on one
/// thread; pipelined (`threads` > 1), SQLite steps on a thread of its own and copies each row into
/// one of a few fixed batches (a byte arena and fixed-size records), which the calling thread
/// reads while SQLite fills the next: a backup is read in about the time SQLite alone needs, in
/// memory that does not grow with the rows (`batchCount` batches of `batchRows` rows). The
/// batches are small so that they stay in the cores' own caches: 1024-row batches (4 MiB in
/// flight) cost half again as much CPU on this 2-CPU machine as 256-row ones.
enum ManifestRows {
  static let batchRows = 256
  static let batchCount = 4
  /// A batch is handed over early when its bytes pass this (a row holds at most four values of
  /// `SQLiteDatabase.maximumValueLength`).
  static let batchBytes = 128 << 10
  /// Below this many database pages (256 of 4 KiB: about 3,000 rows) SQLite steps on the
  /// calling thread: the whole read takes less than starting a thread and handing batches over.
  static let pagesWorthAThread: Int64 = 256

  /// Calls `body` with every row in order until it returns false; throws SQLite's failure after
  /// the rows read before it were handed over.
  static func forEach(_ statement: SQLiteDatabase.Statement, withFileID: Bool, threads: Int,
                      _ body: (ManifestRow) -> Bool) throws(SQLiteDatabase.Failure) {
    guard threads > 1 else {
      while try statement.step() {
        guard body(row(of: statement, withFileID: withFileID)) else { return }
      }
      return
    }
    // Empty batches go to SQLite's thread, full ones come back in order: `batchCount` batches in
    // all, reused, so the memory is fixed whatever the manifest.
    let empty = WorkQueue<RowBatch>()
    let full = WorkQueue<RowBatch>()
    for _ in 0..<batchCount { empty.push(RowBatch()) }
    let producer = StatementBox(statement)
    let failure = Locked<SQLiteDatabase.Failure?>(nil)
    let produce: @Sendable () -> Void = {
      var finished = false
      if var batch = empty.pop() {
        batch.clear()
        do throws(SQLiteDatabase.Failure) {
          while try producer.statement.step() {
            batch.append(row(of: producer.statement, withFileID: withFileID))
            if batch.rowCount >= batchRows || batch.byteCount >= batchBytes {
              full.push(batch)
              guard let next = empty.pop(finishedPrevious: finished) else { return full.close() }
              finished = true
              batch = next
              batch.clear()
            }
          }
        } catch {
          failure.withLock { $0 = error }
        }
        if batch.rowCount > 0 { full.push(batch) }
      }
      full.close()
    }
    let threads = ThreadGroup()
    guard threads.start(stackSize: 1 << 20, produce) else {
      // No second thread to be had: SQLite steps on this one.
      return try forEach(statement, withFileID: withFileID, threads: 1, body)
    }
    var stopped = false
    var finished = false
    while !stopped, let batch = full.pop(finishedPrevious: finished) {
      finished = true
      stopped = !batch.forEach(body)
      empty.push(batch)
    }
    // Stopped early: SQLite's thread stops at its next batch.
    if stopped { _ = empty.cancel() }
    threads.join()
    if !stopped, let failure = failure.withLock({ $0 }) { throw failure }
  }

  private static func row(of statement: SQLiteDatabase.Statement, withFileID: Bool) -> ManifestRow {
    ManifestRow(
      domain: statement.bytes(0).bindMemory(to: UInt8.self), relativePath: statement.bytes(1), flags: statement.integer(2),
      file: statement.bytes(3), fileID: withFileID ? statement.bytes(4) : UnsafeRawBufferPointer(start: nil, count: 0))
  }
}

/// Rows copied out of SQLite: their bytes back to back in one arena, and per row where each
/// value ends. A class, so handing one between threads copies no bytes. Reused batch after batch: no allocation per row once the arena has grown.
// Unchecked Sendable: a batch is used by one thread at a time, the one that popped it from a
// `WorkQueue` (SQLite's thread fills it, the reader's reads it); the compiler cannot see that
// its rows, copied from the statement's memory, no longer refer to it.
private final class RowBatch: @unchecked Sendable {
  private struct Record {
    var flags: Int64
    var domainEnd: Int32
    var pathEnd: Int32
    var fileEnd: Int32
    var fileIDEnd: Int32
  }

  private var arena: [UInt8] = []
  private var records: [Record] = []

  init() {
    arena.reserveCapacity(ManifestRows.batchBytes + 4096)
    records.reserveCapacity(ManifestRows.batchRows)
  }

  var rowCount: Int { records.count }
  var byteCount: Int { arena.count }

  func append(_ row: ManifestRow) {
    arena.append(contentsOf: row.domain)
    let domainEnd = Int32(arena.count)
    arena.append(contentsOf: row.relativePath.bindMemory(to: UInt8.self))
    let pathEnd = Int32(arena.count)
    arena.append(contentsOf: row.file.bindMemory(to: UInt8.self))
    let fileEnd = Int32(arena.count)
    arena.append(contentsOf: row.fileID.bindMemory(to: UInt8.self))
    records.append(Record(flags: row.flags, domainEnd: domainEnd, pathEnd: pathEnd, fileEnd: fileEnd, fileIDEnd: Int32(arena.count)))
  }

  func clear() {
    arena.removeAll(keepingCapacity: true)
    records.removeAll(keepingCapacity: true)
  }

  /// Each row to `body`, in order; false when `body` asked to stop.
  func forEach(_ body: (ManifestRow) -> Bool) -> Bool {
    arena.withUnsafeBytes { bytes in
      var start = 0
      for record in records {
        let row = ManifestRow(
          domain: UnsafeRawBufferPointer(rebasing: bytes[start..<Int(record.domainEnd)]).bindMemory(to: UInt8.self),
          relativePath: UnsafeRawBufferPointer(rebasing: bytes[Int(record.domainEnd)..<Int(record.pathEnd)]),
          flags: record.flags,
          file: UnsafeRawBufferPointer(rebasing: bytes[Int(record.pathEnd)..<Int(record.fileEnd)]),
          fileID: UnsafeRawBufferPointer(rebasing: bytes[Int(record.fileEnd)..<Int(record.fileIDEnd)]))
        guard body(row) else { return false }
        start = Int(record.fileIDEnd)
      }
      return true
    }
  }
}

/// The statement, stepped only by SQLite's thread while the reader waits on batches.
// Unchecked Sendable: one thread uses the statement at a time: SQLite's, from its start until
// `ThreadGroup.join` returns (the caller waits there before it touches the statement again).
private final class StatementBox: @unchecked Sendable {
  let statement: SQLiteDatabase.Statement
  init(_ statement: SQLiteDatabase.Statement) { self.statement = statement }
}
