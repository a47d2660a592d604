import AppDataSystem
import AppDataCore
import Synchronization
/// One file of an extraction whose tree entry is made: its new file is open (created with
/// `O_EXCL | O_NOFOLLOW` by the thread that makes the tree), its payload is open or is the
/// archive entry being read; what is left is the bytes, the mode, the time and the attributes.
/// Handed to a writing thread through the writers' `WorkQueue`; the thread that writes it closes
/// its descriptors.
struct PayloadJob: Sendable {
  /// The entry's place among its container's rows: outcomes are reported in this order.
  var index: Int
  var source: ExtractionWriter.PayloadReader?
  /// The payload file's length when it was opened (its `fstat`), if it is a file.
  var payloadSize: UInt64?
  var file: FileDescriptor
  var decryptor: BackupDecryption.PayloadDecryptor?
  var mode: UInt32
  var record: MBFileRecord?
  /// Relative to the container (the report), and the folder it is in relative to the partial
  /// folder (the file is removed from there if its payload turns out not to decrypt).
  var path: [UInt8]
  var folder: [UInt8]
  var name: [UInt8]

  /// Closes the new file and the payload file (an archive entry has none of its own).
  func closeDescriptors() {
    file.close()
    if case .file(let payload) = source { payload.close() }
  }
}

/// What became of a job.
struct PayloadOutcome: Sendable {
  var index: Int
  var path: [UInt8]
  /// The record's `Size`; whether there was no record to read.
  var manifestSize: UInt64?
  var hasNoRecord: Bool
  var result: ExtractionWriter.FileResult
  /// Attributes not kept: a warning each.
  var warnings: [String] = []
  /// The file made for a payload that did not decrypt: removed once all writing has stopped, so
  /// that which later rows find it there does not depend on the threads' timing.
  var removal: (folder: [UInt8], name: [UInt8])?
}

/// The bytes written so far (the progress line) and the total, shared by the writing threads.
final class ExtractionProgress: Sendable {
  private let written = Mutex<UInt64>(0)
  private let total: UInt64
  private let report: (@Sendable (UInt64, UInt64) -> Void)?

  init(total: UInt64, report: (@Sendable (UInt64, UInt64) -> Void)?) {
    self.total = total
    self.report = report
  }

  func add(_ bytes: UInt64) {
    guard let report else { return }
    let now = written.withLock { written in
      written = written.saturatingSum(bytes)
      return written
    }
    report(now, total)
  }
}

/// Writes jobs: their bytes (copied by the kernel, or decrypted a chunk at a time in a buffer
/// of its own), then attributes, mode and time through the open descriptor.
/// Not Sendable: each writing thread makes its own (its buffer is the thread's).
struct PayloadCopier {
  let output: String
  let progress: ExtractionProgress
  /// True stops a write between chunks (Ctrl-C, SIGTERM, another thread's failure).
  let isStopped: @Sendable () -> Bool
  /// The chunk buffer, freed with the last copy of the copier.
  private let chunk = ChunkBuffer()
  var buffer: UnsafeMutableRawBufferPointer { chunk.bytes }
  /// What this copier's copies learn once (the kernel refused `copy_file_range` here).
  let copies = CopyContext()

  init(output: String, progress: ExtractionProgress, isStopped: @escaping @Sendable () -> Bool) {
    self.output = output
    self.progress = progress
    self.isStopped = isStopped
  }

  final class ChunkBuffer {
    let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: ExtractionWriter.chunkSize, alignment: 16)
    deinit { bytes.deallocate() }
  }

  func display(_ path: [UInt8]) -> String { RelativePath.display(RelativePath.join(Array(output.utf8), path)) }

  /// A write that failed (a full disk, an I/O error): the extraction stops, and nothing stays.
  static func failed(_ error: SystemError, output: String) -> Refusal {
    Refusal(.cannotWrite, path: output, "cannot write the extraction: \(error.reason) (\(TerminalText.escaped(error.path))); nothing was written")
  }

  static func interrupted(output: String) -> Refusal {
    Refusal(.interrupted, "interrupted; nothing was written (\(TerminalText.escaped(output)) does not exist)")
  }

  /// Writes the job and closes its descriptors; throws what stops the whole extraction.
  func write(_ job: PayloadJob, archive: LibArchive? = nil) throws(Refusal) -> PayloadOutcome {
    var job = job
    defer {
      job.decryptor?.wipe()
      job.closeDescriptors()
    }
    var outcome = PayloadOutcome(index: job.index, path: job.path, manifestSize: job.record?.size, hasNoRecord: job.record == nil, result: .written(0))
    let displayPath = display(job.path)
    if TestHooks.failsThisWrite() { throw Self.failed(SystemError(errno: .noSpace, operation: .write, path: displayPath), output: output) }
    var bytes: UInt64 = 0
    var why: String?
    if case .file(let payload) = job.source, job.decryptor == nil {
      // A plain payload on disk: the kernel copies it (copy_file_range), holes kept.
      do {
        // A step at a time, so that the progress line moves and an interrupt is heard within a
        // large file.
        _ = try Syscalls.copyData(from: payload, to: job.file, displayPath: displayPath, step: { count in
          progress.add(count)
          return !isStopped()
        }, sourceSize: job.payloadSize, context: copies)
        // The copy ends at the source's length (holes included): no fstat of the file written.
        if let size = job.payloadSize { bytes = size } else { bytes = try Syscalls.status(of: job.file, displayPath: displayPath).size }
      } catch {
        if error.errno == .canceled && isStopped() { throw Self.interrupted(output: output) }
        throw Self.failed(error, output: output)
      }
    } else if let source = job.source {
      (bytes, why) = try copy(from: source, archive: archive, decryptor: &job.decryptor, into: job.file, path: job.path)
    }
    if let why {
      outcome.result = .notWritten(why)
      outcome.removal = (job.folder, job.name)
      return outcome
    }
    // Attributes first: a file whose mode leaves out write permission takes none after it.
    for attribute in job.record?.extendedAttributes ?? [] {
      if MarkerTable.platformAttributeName(attribute.name) == ExtractionOutput.markerName {
        outcome.warnings.append("its extended attribute \(TerminalText.escaped(attribute.name)) was not kept: it is appdata's own")
        continue
      }
      do {
        try ExtendedAttributes.setValue(attribute.value, of: MarkerTable.platformAttributeName(attribute.name), on: job.file, displayPath: displayPath)
      } catch {
        outcome.warnings.append("its extended attribute \(TerminalText.escaped(attribute.name)) was not kept: \(error.reason)")
      }
    }
    do { try Syscalls.setMode(job.file, job.mode, displayPath: displayPath) } catch { throw Self.failed(error, output: output) }
    if let time = job.record?.lastModified {
      let when = FileTime(seconds: Int(time), nanoseconds: 0)
      try? Syscalls.setTimes(job.file, access: when, modification: when, displayPath: displayPath)
    }
    outcome.result = .written(bytes)
    return outcome
  }

  /// Copies `source` into `file` a chunk at a time, decrypting it with `decryptor` when there
  /// is one; the bytes written, or why the payload cannot be decrypted (not whole blocks, bad
  /// padding).
  private func copy(from source: ExtractionWriter.PayloadReader, archive: LibArchive?, decryptor: inout BackupDecryption.PayloadDecryptor?, into file: FileDescriptor,
                    path: [UInt8]) throws(Refusal) -> (UInt64, String?) {
    let counter = WriteCounter(file: file, displayPath: display(path))
    var filled = 0
    while true {
      if isStopped() { throw Self.interrupted(output: output) }
      let count = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]), path: display(path), archive: archive)
      filled += count
      let atEnd = count == 0
      // Whole blocks only, but for the end.
      let usable = decryptor == nil ? filled : atEnd ? filled : filled - filled % 16
      if usable > 0 && (filled == buffer.count || atEnd) {
        let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<usable])
        if decryptor != nil {
          do { try decryptor!.update(chunk, write: counter.write) } catch { return (counter.bytes, ExtractionWriter.words(error)) }
        } else {
          counter.write(chunk)
        }
        if let failure = counter.failure { throw Self.failed(failure, output: output) }
        progress.add(UInt64(usable))
        let rest = filled - usable
        if rest > 0 { buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + usable, byteCount: rest) }
        filled = rest
      }
      if atEnd { break }
    }
    guard decryptor != nil else { return (counter.bytes, nil) }
    do { try decryptor!.finish(write: counter.write) } catch { return (counter.bytes, ExtractionWriter.words(error)) }
    if let failure = counter.failure { throw Self.failed(failure, output: output) }
    return (counter.bytes, nil)
  }

  /// Writes what it is handed to a file, counting the bytes and keeping the first failure
  /// (a full disk): the decryptor hands its plaintext over in place.
  final class WriteCounter {
    let file: FileDescriptor
    let displayPath: String
    var bytes: UInt64 = 0
    var failure: SystemError?

    init(file: FileDescriptor, displayPath: String) {
      self.file = file
      self.displayPath = displayPath
    }

    func write(_ piece: UnsafeRawBufferPointer) {
      guard failure == nil, !piece.isEmpty else { return }
      do { try Syscalls.writeAll(file, piece, displayPath: displayPath) } catch { failure = error }
      bytes += UInt64(piece.count)
    }
  }
}

/// Threads that write jobs while the calling thread makes the tree: the tree (every name made,
/// in row order) stays on one thread, so what a hostile manifest makes does not depend on
/// timing; the bytes, which take the time, go on in parallel. A bounded queue keeps the
/// descriptors held and the memory fixed: at most `capacity` jobs wait, each thread has one
/// buffer of `ExtractionWriter.chunkSize`.
final class PayloadWriters: Sendable {
  static let capacity = 16
  private let queue = WorkQueue<PayloadJob>(capacity: PayloadWriters.capacity)
  private let group = ThreadGroup()
  /// The outcomes not yet collected, and the first failure a thread met.
  private let state = Mutex<(outcomes: [PayloadOutcome], failure: Refusal?)>(([], nil))
  private let stopped = Atomic<Bool>(false)
  private let isInterrupted: @Sendable () -> Bool
  private let output: String
  private let started = Atomic<Int>(0)
  /// The threads that could be started (none: the caller writes every job itself).
  var threads: Int { started.load(ordering: .relaxed) }

  /// Interrupted (Ctrl-C, SIGTERM), or stopped by a failure: checked by every copier between
  /// chunks.
  var isStopping: Bool { isInterrupted() || stopped.load(ordering: .relaxed) }

  init(threads wanted: Int, output: String, progress: ExtractionProgress, isInterrupted: @escaping @Sendable () -> Bool) {
    self.isInterrupted = isInterrupted
    self.output = output
    for _ in 0..<max(0, wanted) {
      // Each thread holds the writers until `close` or `stop` ends it (and joins it).
      if group.start(stackSize: 1 << 19, { self.work(output: output, progress: progress) }) {
        started.add(1, ordering: .relaxed)
      }
    }
  }

  private func work(output: String, progress: ExtractionProgress) {
    let copier = PayloadCopier(output: output, progress: progress, isStopped: { [self] in isStopping })
    var finished = false
    while let job = queue.pop(finishedPrevious: finished) {
      finished = true
      if isStopping {
        job.closeDescriptors()
        fail(PayloadCopier.interrupted(output: output))
        continue
      }
      do throws(Refusal) {
        let outcome = try copier.write(job)
        state.withLock { $0.outcomes.append(outcome) }
      } catch {
        fail(error)
      }
    }
  }

  /// The first failure stops every thread: the jobs still queued are closed, not written.
  private func fail(_ error: Refusal) {
    state.withLock { if $0.failure == nil { $0.failure = error } }
    stopped.store(true, ordering: .relaxed)
    for job in queue.cancel() { job.closeDescriptors() }
  }

  /// Hands a job over, waiting while the queue is full.
  func submit(_ job: sending PayloadJob) throws(Refusal) {
    if let refused = queue.push(job) {
      refused.closeDescriptors()
      try check()
      throw PayloadCopier.interrupted(output: output)
    }
  }

  /// The failure a thread met, if any (checked between rows).
  func check() throws(Refusal) {
    if let failure = state.withLock({ $0.failure }) { throw failure }
  }

  /// The outcomes of the jobs written so far, without waiting: taken between rows, so that what
  /// is held does not grow with the rows.
  func collect() -> [PayloadOutcome] {
    state.withLock { state in
      defer { state.outcomes = [] }
      return state.outcomes
    }
  }

  /// Waits until every job handed over is written; their outcomes, in the order handed over.
  func drain() throws(Refusal) -> [PayloadOutcome] {
    queue.waitUntilDone()
    try check()
    return collect().sorted { $0.index < $1.index }
  }

  /// Stops: the jobs still queued are closed, the ones being written stop at their next chunk,
  /// and the threads end. Returns once they have.
  func stop() {
    stopped.store(true, ordering: .relaxed)
    for job in queue.cancel() { job.closeDescriptors() }
    group.join()
  }

  /// No more jobs: the threads end once the queue is empty; returns once they have.
  func close() {
    queue.close()
    group.join()
  }
}
