import AppDataSystem
import AppDataCore
/// One file of an extraction whose tree entry is made: its new file is open (created with
/// `O_EXCL | O_NOFOLLOW` by the thread that makes the tree), its payload is open or is the
/// archive entry being read; what is left is the bytes, the mode, the time and the attributes.
struct PayloadJob: @unchecked Sendable {  // @unchecked: its descriptors and decryptor move to one thread, which closes them
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
final class ExtractionProgress: @unchecked Sendable {  // @unchecked: the lock guards `written`
  private let lock = Lock()
  private var written: UInt64 = 0
  private let total: UInt64
  private let report: (@Sendable (UInt64, UInt64) -> Void)?

  init(total: UInt64, report: (@Sendable (UInt64, UInt64) -> Void)?) {
    self.total = total
    self.report = report
  }

  func add(_ bytes: UInt64) {
    guard let report else { return }
    let now = lock.withLock { () -> UInt64 in
      written = written.saturatingSum(bytes)
      return written
    }
    report(now, total)
  }
}

/// Writes jobs: their bytes (copied by the kernel, or decrypted a chunk at a time in a buffer
/// of its own), then attributes, mode and time through the open descriptor.
struct PayloadCopier: @unchecked Sendable {  // @unchecked: its buffer belongs to the one thread that writes with it
  let output: String
  let progress: ExtractionProgress
  /// True stops a write between chunks (Ctrl-C, SIGTERM, another thread's failure).
  let isStopped: @Sendable () -> Bool
  let buffer: UnsafeMutableRawBufferPointer
  /// What this copier's copies learn once (the kernel refused `copy_file_range` here).
  let copies = CopyContext()

  init(output: String, progress: ExtractionProgress, isStopped: @escaping @Sendable () -> Bool) {
    self.output = output
    self.progress = progress
    self.isStopped = isStopped
    buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ExtractionWriter.chunkSize, alignment: 16)
  }

  func deallocate() { buffer.deallocate() }

  func display(_ path: [UInt8]) -> String { RelativePath.display(RelativePath.join(Array(output.utf8), path)) }

  /// A write that failed (a full disk, an I/O error): the extraction stops, and nothing stays.
  static func failed(_ error: SystemError, output: String) -> Refusal {
    Refusal("\(TerminalText.escaped(output)): cannot write the extraction: \(error.reason) (\(TerminalText.escaped(error.path))); nothing was written")
  }

  static func interrupted(output: String) -> Refusal {
    Refusal("interrupted; nothing was written (\(TerminalText.escaped(output)) does not exist)")
  }

  /// Writes the job and closes its descriptors; throws what stops the whole extraction.
  func write(_ job: PayloadJob) throws(Refusal) -> PayloadOutcome {
    var job = job
    defer {
      job.decryptor?.wipe()
      job.closeDescriptors()
    }
    var outcome = PayloadOutcome(index: job.index, path: job.path, manifestSize: job.record?.size, hasNoRecord: job.record == nil, result: .written(0))
    let displayPath = display(job.path)
    if TestHooks.failsThisWrite() { throw Self.failed(SystemError(code: ErrnoValue.noSpace, operation: .write, path: displayPath), output: output) }
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
        if error.code == ErrnoValue.cancelled && isStopped() { throw Self.interrupted(output: output) }
        throw Self.failed(error, output: output)
      }
    } else if let source = job.source {
      (bytes, why) = try copy(from: source, decryptor: &job.decryptor, into: job.file, path: job.path)
    }
    if let why {
      outcome.result = .notWritten(why)
      outcome.removal = (job.folder, job.name)
      return outcome
    }
    // Attributes first: a file whose mode leaves out write permission takes none after it.
    for attribute in job.record?.extendedAttributes ?? [] {
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
  private func copy(from source: ExtractionWriter.PayloadReader, decryptor: inout BackupDecryption.PayloadDecryptor?, into file: FileDescriptor,
                    path: [UInt8]) throws(Refusal) -> (UInt64, String?) {
    let counter = WriteCounter(file: file, displayPath: display(path))
    var filled = 0
    while true {
      if isStopped() { throw Self.interrupted(output: output) }
      let count = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]), path: display(path))
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
final class PayloadWriters: @unchecked Sendable {  // @unchecked: `condition` guards every var
  static let capacity = 16
  private let condition = Condition()
  private var queue: [PayloadJob] = []
  private var head = 0
  private var outcomes: [PayloadOutcome] = []
  /// Jobs queued or being written.
  private var pending = 0
  private var closed = false
  private var failure: Refusal?
  private let signal: StopSignal
  private var isReleased = false
  /// The calling thread's own copier: the jobs it writes itself when no thread could be made,
  /// and the archive's payloads (one stream, read in order).
  let local: PayloadCopier
  private(set) var threads = 0

  /// Interrupted (Ctrl-C, SIGTERM), or stopped by a failure: checked by every copier between
  /// chunks.
  final class StopSignal: @unchecked Sendable {  // @unchecked: the lock guards `stopped`
    private let lock = Lock()
    private var stopped = false
    let isInterrupted: @Sendable () -> Bool
    init(isInterrupted: @escaping @Sendable () -> Bool) { self.isInterrupted = isInterrupted }
    var isStopping: Bool { isInterrupted() || lock.withLock { stopped } }
    func stop() { lock.withLock { stopped = true } }
  }

  init(threads wanted: Int, output: String, progress: ExtractionProgress, isInterrupted: @escaping @Sendable () -> Bool) {
    let signal = StopSignal(isInterrupted: isInterrupted)
    self.signal = signal
    local = PayloadCopier(output: output, progress: progress, isStopped: { signal.isStopping })
    for _ in 0..<max(0, wanted) {
      let copier = PayloadCopier(output: output, progress: progress, isStopped: { signal.isStopping })
      let started = Threads.start(stackSize: 1 << 19) { [self] in
        self.work(with: copier)
        copier.deallocate()
      }
      if started { threads += 1 } else { copier.deallocate() }
    }
  }

  private func work(with copier: PayloadCopier) {
    while true {
      condition.lock()
      while head == queue.count && !closed { condition.wait() }
      if head == queue.count {
        condition.unlock()
        return
      }
      let job = queue[head]
      head += 1
      // The jobs taken go once they are as many as may wait: the array stays within twice that.
      if head >= Self.capacity {
        queue.removeFirst(head)
        head = 0
      }
      let skip = signal.isStopping
      condition.broadcast()
      condition.unlock()
      var result: Result<PayloadOutcome, Refusal>?
      if skip {
        job.closeDescriptors()
        result = .failure(PayloadCopier.interrupted(output: copier.output))
      } else {
        do throws(Refusal) { result = .success(try copier.write(job)) } catch { result = .failure(error) }
      }
      condition.lock()
      switch result {
      case .success(let outcome)?: outcomes.append(outcome)
      case .failure(let error)?:
        if failure == nil { failure = error }
        signal.stop()
      case nil: break
      }
      pending -= 1
      condition.broadcast()
      condition.unlock()
    }
  }

  /// Hands a job over, waiting while the queue is full; written here when there is no thread.
  func submit(_ job: PayloadJob) throws(Refusal) {
    guard threads > 0 else {
      let outcome = try local.write(job)
      condition.lock()
      outcomes.append(outcome)
      condition.unlock()
      return
    }
    condition.lock()
    while queue.count - head >= Self.capacity && failure == nil { condition.wait() }
    if let failure {
      condition.unlock()
      job.closeDescriptors()
      throw failure
    }
    queue.append(job)
    pending += 1
    condition.broadcast()
    condition.unlock()
  }

  /// The failure a thread met, if any (checked between rows).
  func check() throws(Refusal) {
    condition.lock()
    let failure = self.failure
    condition.unlock()
    if let failure { throw failure }
  }

  /// The outcomes of the jobs written so far, without waiting: taken between rows, so that what
  /// is held does not grow with the rows.
  func collect() -> [PayloadOutcome] {
    condition.lock()
    let done = outcomes
    outcomes = []
    condition.unlock()
    return done
  }

  /// Waits until every job handed over is written; their outcomes, in the order handed over.
  func drain() throws(Refusal) -> [PayloadOutcome] {
    condition.lock()
    while pending > 0 { condition.wait() }
    let done = outcomes
    outcomes = []
    let failure = self.failure
    condition.unlock()
    if let failure { throw failure }
    return done.sorted { $0.index < $1.index }
  }

  /// Stops: the threads drop the jobs still queued, finish the one they are writing (it stops
  /// at its next chunk) and end. Returns once nothing is being written.
  func stop() {
    signal.stop()
    condition.lock()
    closed = true
    condition.broadcast()
    while pending > 0 { condition.wait() }
    condition.unlock()
  }

  /// No more jobs: the threads end once the queue is empty.
  func close() {
    condition.lock()
    closed = true
    condition.broadcast()
    let release = !isReleased
    isReleased = true
    condition.unlock()
    if release { local.deallocate() }
  }
}
