import AppDataSystem
import AppDataCore
import Dispatch

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
    let pipe = BatchPipe(count: batchCount)
    let producer = StatementBox(statement)
    let finished = DispatchSemaphore(value: 0)
    let produce: @Sendable () -> Void = {
      var failure: SQLiteDatabase.Failure?
      if var batch = pipe.takeEmpty() {
        do throws(SQLiteDatabase.Failure) {
          while try producer.statement.step() {
            batch.append(row(of: producer.statement, withFileID: withFileID))
            if batch.rowCount >= batchRows || batch.byteCount >= batchBytes {
              pipe.putFull(batch)
              guard let next = pipe.takeEmpty() else { break }
              batch = next
            }
          }
        } catch {
          failure = error
        }
        pipe.finish(last: batch, failure: failure)
      } else {
        pipe.finish(last: nil, failure: nil)
      }
      finished.signal()
    }
    guard Threads.start(stackSize: 1 << 20, produce) else {
      // No second thread to be had: SQLite steps on this one.
      return try forEach(statement, withFileID: withFileID, threads: 1, body)
    }
    var stopped = false
    while !stopped, let batch = pipe.takeFull() {
      stopped = !batch.forEach(body)
      pipe.putEmpty(batch)
    }
    if stopped { pipe.cancel() }
    finished.wait()
    if !stopped, let failure = pipe.failure { throw failure }
  }

  private static func row(of statement: SQLiteDatabase.Statement, withFileID: Bool) -> ManifestRow {
    ManifestRow(
      domain: statement.bytes(0).bindMemory(to: UInt8.self), relativePath: statement.bytes(1), flags: statement.integer(2),
      file: statement.bytes(3), fileID: withFileID ? statement.bytes(4) : UnsafeRawBufferPointer(start: nil, count: 0))
  }
}

/// Rows copied out of SQLite: their bytes back to back in one arena, and per row where each
/// value ends. A class, so handing one between threads copies no bytes. Reused batch after batch: no allocation per row once the arena has grown.
private final class RowBatch {
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

/// The batches between SQLite's thread and the reader's: empty ones go to SQLite, full ones
/// come back in order.
// @unchecked Sendable: every property is touched only while holding `condition`'s lock; a batch
// taken out is owned by the one thread that took it until it is put back.
private final class BatchPipe: @unchecked Sendable {
  private let condition = Condition()
  private var empty: [RowBatch]
  private var full: [RowBatch] = []
  private var fullStart = 0
  private var done = false
  private var cancelled = false
  private(set) var failure: SQLiteDatabase.Failure?

  init(count: Int) {
    empty = (0..<count).map { _ in RowBatch() }
  }

  /// An empty batch for SQLite's thread; nil when the reader has stopped.
  func takeEmpty() -> RowBatch? {
    condition.lock()
    defer { condition.unlock() }
    while empty.isEmpty && !cancelled { condition.wait() }
    if cancelled { return nil }
    let batch = empty.removeLast()
    batch.clear()
    return batch
  }

  func putFull(_ batch: RowBatch) {
    condition.lock()
    full.append(batch)
    condition.unlock()
    condition.broadcast()
  }

  /// SQLite is done: its last batch (maybe partly filled) and its failure, if any.
  func finish(last: RowBatch?, failure: SQLiteDatabase.Failure?) {
    condition.lock()
    if let last, last.rowCount > 0 { full.append(last) }
    self.failure = failure
    done = true
    condition.unlock()
    condition.broadcast()
  }

  /// The next full batch for the reader, in order; nil when SQLite is done and all were read.
  func takeFull() -> RowBatch? {
    condition.lock()
    defer { condition.unlock() }
    while fullStart == full.count && !done { condition.wait() }
    guard fullStart < full.count else { return nil }
    let batch = full[fullStart]
    fullStart += 1
    if fullStart == full.count {
      full.removeAll(keepingCapacity: true)
      fullStart = 0
    }
    return batch
  }

  func putEmpty(_ batch: RowBatch) {
    condition.lock()
    empty.append(batch)
    condition.unlock()
    condition.broadcast()
  }

  /// The reader stopped early: SQLite's thread stops at its next batch.
  func cancel() {
    condition.lock()
    cancelled = true
    condition.unlock()
    condition.broadcast()
  }
}

/// The statement, stepped only by SQLite's thread while the reader waits on batches.
// @unchecked Sendable: one thread uses the statement at a time (the producer, until `finished`).
private final class StatementBox: @unchecked Sendable {
  let statement: SQLiteDatabase.Statement
  init(_ statement: SQLiteDatabase.Statement) { self.statement = statement }
}
