import AppDataSystem
import AppDataCore

// Writing payloads: the file each row gets, the payload it is written from (a file in the backup
// folder, or the entry of the archive being read), its decryptor, and the job handed to the
// writing threads (PayloadWriters.swift).
extension ExtractionWriter {
  enum FileResult { case written(UInt64), notWritten(String) }

  /// Where a file's bytes are read from: its payload file in the backup folder, or the entry
  /// of the archive being read (the archive's reader itself stays on the thread reading it).
  enum PayloadReader: Sendable {
    case file(FileDescriptor)
    case archiveEntry

    func read(into buffer: UnsafeMutableRawBufferPointer, path: String, archive: LibArchive?) throws(Refusal) -> Int {
      switch self {
      case .file(let descriptor):
        do { return try Syscalls.read(descriptor, into: buffer, displayPath: path) } catch {
          throw Refusal(.unreadable, path: path, "cannot read its payload: \(error.reason); nothing was written")
        }
      case .archiveEntry:
        guard let archive else { return 0 }
        do { return try archive.readChunk(into: buffer) } catch {
          throw Refusal(.damaged, "cannot read the archive (truncated or damaged?): \(error.message); nothing was written")
        }
      }
    }
  }

  /// Whether a row with no payload is an empty file: its record says 0 bytes and holds no key.
  /// Any other row needs its payload; a payload that exists is written whatever `Size` says.
  func canBeEmpty(_ entry: BackupExtraction.Plan.Entry) -> Bool {
    guard let record = entry.record else { return false }
    return record.size == 0 && !(isEncrypted && record.encryptionKey != nil)
  }

  /// The decryptor of an entry of an encrypted backup (nil for a plain one, or an empty file
  /// whose payload is missing or empty: nothing to decrypt), or why there is none.
  /// `payloadSize`: nil when there is no payload, or it is not known yet.
  func decryptor(for entry: BackupExtraction.Plan.Entry, payloadSize: UInt64?) -> Result<BackupDecryption.PayloadDecryptor?, ExtractionProblem> {
    guard isEncrypted && ((payloadSize ?? 0) > 0 || !canBeEmpty(entry)) else { return .success(nil) }
    guard let key = entry.record?.encryptionKey else { return .failure(ExtractionProblem("its record has no EncryptionKey")) }
    guard let keys else { return .failure(ExtractionProblem("the backup's class keys are not known")) }
    do {
      return .success(try keys.payload(encryptionKey: key))
    } catch {
      return .failure(ExtractionProblem(Self.words(error)))
    }
  }

  /// The backup folder's `xx` folder, opened once (without following a symlink) and kept.
  func shard(_ name: [UInt8]) -> FileDescriptor? {
    guard name.count == 2, let backup else { return nil }
    let index = Int(name[0]) << 8 | Int(name[1])
    if let known = shards.descriptors[index] { return known }
    guard case .success(let opened) = Syscalls.openFolder(relativePath: name, below: backup) else { return nil }
    shards.descriptors[index] = opened
    return opened
  }

  /// The payload file of an entry in the backup folder: xx/<fileID>, a regular file, not
  /// followed if it is a link and not waited on if it is a FIFO; nil when there is none.
  func openPayload(_ entry: BackupExtraction.Plan.Entry) -> Result<(FileDescriptor, UInt64)?, ExtractionProblem> {
    let fileID = Array(entry.fileID.utf8)
    let name = "\(entry.fileID.prefix(2))/\(entry.fileID)"
    guard let shard = shard(Array(fileID.prefix(2))) else { return .success(nil) }
    do {
      // Closed here unless it is returned, its status not had among the ways out.
      let opened = OwnedDescriptor(owning: try Syscalls.open(fileID, in: shard, options: .readMaybeFile, displayPath: entry.fileID))
      let status = try Syscalls.status(of: opened.descriptor, displayPath: entry.fileID)
      guard status.kind == .regular else {
        return .failure(ExtractionProblem("its payload \(name) is not a regular file"))
      }
      return .success((opened.release(), status.size))
    } catch {
      return error.errno == .noSuchFileOrDirectory ? .success(nil) : .failure(ExtractionProblem("its payload cannot be read: \(error.reason)"))
    }
  }

  /// Makes one file's entry (or takes `existing`, made by the first pass over an archive) and
  /// opens what it is written from: the job that writes it, or why it is not written (its
  /// payload cannot be had: no file is made). `source` nil: the payload is opened in the
  /// backup folder, or the file is empty.
  func startFile(_ entry: BackupExtraction.Plan.Entry, index: Int, name: [UInt8], in folder: FileDescriptor, folderPath: [UInt8],
                         path: [UInt8], mode: UInt32, source given: PayloadReader? = nil, payloadSize givenSize: UInt64? = nil,
                         existing: FileDescriptor? = nil) throws(Refusal) -> Result<PayloadJob, ExtractionProblem> {
    var source = given
    var payloadSize = givenSize
    // The payload file opened here: closed on the ways out before the job holds it.
    var opened: OwnedDescriptor?
    if source == nil && backup != nil {
      switch openPayload(entry) {
      case .success(let (descriptor, size)?):
        opened = OwnedDescriptor(owning: descriptor)
        payloadSize = size
        source = .file(descriptor)
      case .success(nil):
        if !canBeEmpty(entry) { return .failure(ExtractionProblem("its payload \(entry.fileID.prefix(2))/\(entry.fileID) is missing")) }
      case .failure(let problem): return .failure(problem)
      }
    }
    var decryptor: BackupDecryption.PayloadDecryptor?
    switch self.decryptor(for: entry, payloadSize: payloadSize) {
    case .success(let made): decryptor = made
    case .failure(let problem):
      return .failure(problem)
    }
    let file: FileDescriptor
    if let existing {
      file = existing
    } else {
      do {
        file = try Syscalls.open(name, in: folder, options: .createNewFile, mode: 0o600, displayPath: display(path))
      } catch {
        if error.errno == .fileExists { return .failure(ExtractionProblem("another row already made this path")) }
        if error.errno.isCausedByEntry { return .failure(ExtractionProblem(error.reason)) }
        throw failed(error)
      }
    }
    let opensPayload = opened != nil
    _ = opened.take()?.release()  // the job closes it
    return .success(PayloadJob(index: index, source: source, payloadSize: opensPayload ? payloadSize : nil, file: file, decryptor: decryptor,
                               mode: mode, record: entry.record, path: path, folder: folderPath, name: name))
  }

  static func words(_ error: BackupDecryption.Failure) -> String {
    switch error {
    case .wrongPassword: return "its key does not unwrap"
    case .noClassKey(let protectionClass): return "the keybag holds no password-wrapped key for its protection class \(protectionClass)"
    case .damaged(let reason): return "its payload cannot be decrypted: \(reason)"
    }
  }

  /// The second pass over an archive: each payload of `backup` (its `xx/<fileID>` entries)
  /// written into the file the first pass made for its row; then the rows whose payload the
  /// archive lacks: an empty file where the row may be one, else removed and named.
  mutating func writePayloads(from backup: ArchivedBackup, archivePath: String, containers: inout [BackupExtraction.Report.Container],
                              problems: inout [BackupExtraction.Report.Problem]) throws(Refusal) {
    let reader: LibArchive
    do { reader = try LibArchive(path: archivePath) } catch {
      throw Refusal(.unreadable, path: archivePath, "cannot read the archive: \(error.message)")
    }
    var removals: [(folder: [UInt8], name: [UInt8])] = []
    while !deferred.isEmpty {
      let header: ArchiveHeader?
      do { header = try reader.next() } catch {
        throw Refusal(.damaged, path: archivePath, "cannot read the archive (truncated or damaged?): \(error.message)")
      }
      guard let header else { break }
      // `./` and `.` components mean nothing here, as to the first pass.
      let components = RelativePath.components(header.path).filter { $0 != [0x2E] }
      guard header.kind == .regular, components.count == backup.components.count + 2, components.starts(with: backup.components),
            ArchivedBackup.isStoredFile(components),
            let item = deferred.removeValue(forKey: String(decoding: components[components.count - 1], as: UTF8.self)) else { continue }
      checkpoint()
      try checkInterrupt()
      try writeDeferred(item, source: .archiveEntry, archive: reader, size: header.size, containers: &containers, problems: &problems, removals: &removals)
    }
    for (fileID, item) in deferred.sorted(by: { $0.key < $1.key }) {
      if canBeEmpty(item.entry) {
        try writeDeferred(item, source: nil, size: nil, containers: &containers, problems: &problems, removals: &removals)
        continue
      }
      removals.append((item.folder, item.name))
      problems.append(BackupExtraction.Report.Problem(domain: item.domain, path: item.entry.path,
                                                      message: "not written: its payload \(fileID.prefix(2))/\(fileID) is not in the archive", isError: true))
    }
    deferred = [:]
    removeFiles(removals)
  }

  /// Writes a file the first pass made, from `source` (nil: it stays empty).
  mutating func writeDeferred(_ item: Deferred, source: PayloadReader?, archive: LibArchive? = nil, size: UInt64?, containers: inout [BackupExtraction.Report.Container],
                                      problems: inout [BackupExtraction.Report.Problem], removals: inout [(folder: [UInt8], name: [UInt8])]) throws(Refusal) {
    func problem(_ message: String, _ isError: Bool) {
      problems.append(BackupExtraction.Report.Problem(domain: item.domain, path: item.entry.path, message: message, isError: isError))
    }
    guard let opened = folder(at: item.folder) else {
      problem("not written: its folder cannot be opened again", true)
      return
    }
    let folder = opened.descriptor
    // Closed here unless the job holds it.
    let file: OwnedDescriptor
    do {
      file = OwnedDescriptor(owning: try Syscalls.open(item.name, in: folder, options: .writeExistingFile, displayPath: display(item.entry.path)))
    } catch {
      throw failed(error)
    }
    switch try startFile(item.entry, index: 0, name: item.name, in: folder, folderPath: item.folder, path: item.entry.path,
                         mode: item.entry.record?.mode.map { $0 & 0o777 } ?? 0o644, source: source, payloadSize: size, existing: file.descriptor) {
    case .success(let job):
      _ = file.release()  // the job closes it
      Self.note(try local.write(job, archive: archive), in: &containers[item.container], removals: &removals, problem: problem)
    case .failure(let why):
      _ = consume file  // closed before the file is named for removal
      removals.append((item.folder, item.name))
      problem("not written: \(why.message)", true)
    }
  }
}
