import AppDataSystem
import AppDataCore
/// Writes planned containers into the run's partial folder beside OUT (`ExtractionOutput`), then
/// has it put in place (`BackupExtraction`).
///
/// Rows come in path order, a folder's together right after it, so the tree is made the way a
/// depth-first walk goes: a stack of the folders from the container's root down to where the
/// current row goes (`FolderStack`), one descriptor held for the deepest and a parent reached
/// through `..`, so no row's folder is looked for from the root again and a folder's mode and time
/// are set the moment the rows leave it. Everything is created relative to its folder's
/// descriptor with `O_NOFOLLOW` (files with `O_CREAT | O_EXCL`). Memory holds one row at a time,
/// the stack, the container's symlinks (`SymlinkCheck`) and, for a backup inside an archive, the
/// files whose payload the second pass writes.
struct ExtractionWriter {
  /// The container's folder inside a package.
  static let packageContainerName = "AppData"
  /// What is read and written at a time: memory is bounded by it, whatever a file's size.
  static let chunkSize = 1 << 20

  let request: BackupExtraction.Request
  let isEncrypted: Bool
  let keys: BackupDecryption.Unlocked?
  /// OUT, and the partial folder this run builds it in.
  let output: ExtractionOutput
  var partial: FileDescriptor { output.partial }
  /// The backup folder's descriptor; nil for a backup inside an archive (its payloads are
  /// written in a second pass over the archive, `writePayloads(from:)`).
  let backup: FileDescriptor?
  /// Closes `backup` once, whichever of `abandon` and `finish` (or both) runs.
  private let backupCloser = CloseOnce()
  /// Writes the payloads: on threads of their own from a backup folder, on this one from an
  /// archive (one stream).
  let writers: PayloadWriters
  /// This thread's own copier: the jobs it writes itself when no thread could be made, and the
  /// archive's payloads (one stream, read in order).
  let local: PayloadCopier
  /// How many threads write payloads beside the one that makes the tree.
  static let writerThreads = 2
  /// Folders whose manifest mode leaves out some of the owner's permissions: they keep them
  /// until the end (a file may still be written or removed in them), then get their mode,
  /// deepest first.
  var restricted: [(path: [UInt8], mode: UInt32)] = []
  /// The mode and time OUT itself gets when it is a container root (its row's).
  var outSetting: FolderStack.Setting?

  /// The backup folder's `xx` folders opened so far (at most 65,536 names, 256 in a real backup).
  let shards = Shards()
  final class Shards {
    var descriptors: [Int: FileDescriptor] = [:]
    deinit { for descriptor in descriptors.values { descriptor.close() } }
  }
  /// Checkpoints passed (`Request.stopAfter`).
  var checkpoints = 0
  /// In an archive: the files made for payloads the second pass writes, by fileID (one row
  /// each: rows sharing a fileID are not written).
  var deferred: [String: Deferred] = [:]
  struct Deferred {
    var container: Int
    var domain: String
    var entry: BackupExtraction.Plan.Entry
    /// The file's folder relative to the partial folder, and its name.
    var folder: [UInt8]
    var name: [UInt8]
  }

  /// A checkpoint: where a crash test may kill the run, and a test may pause it.
  private mutating func checkpoint() {
    checkpoints += 1
    if let stop = request.stopAfter, checkpoints >= stop { Syscalls.killSelf() }
    TestHooks.pause(at: "extract", releasedBy: request.isInterrupted)
  }

  init(request: BackupExtraction.Request, backupPath: String, backupFolder: String?, isEncrypted: Bool, keys: BackupDecryption.Unlocked?,
       totalBytes: UInt64) throws(Refusal) {
    self.request = request
    self.isEncrypted = isEncrypted
    self.keys = keys
    output = try ExtractionOutput(output: request.output, force: request.force, backupPath: backupPath)
    if let backupFolder {
      do {
        backup = try Syscalls.openDirectory(atPath: backupFolder)
      } catch {
        output.abandon()
        throw Refusal("\(TerminalText.escaped(backupFolder)): cannot open the backup folder: \(error.reason)")
      }
    } else {
      backup = nil
    }
    let progress = ExtractionProgress(total: totalBytes, report: request.progress)
    let writers = PayloadWriters(threads: backupFolder == nil ? 0 : Self.writerThreads, output: output.path, progress: progress,
                                 isInterrupted: request.isInterrupted)
    self.writers = writers
    local = PayloadCopier(output: output.path, progress: progress, isStopped: { writers.isStopping })
  }

  /// Removes the partial folder (after a failure or an interrupt). Safe to call more than once.
  func abandon() {
    writers.stop()
    writers.close()
    backupCloser.close(backup)
    output.abandon()
  }

  private func display(_ path: [UInt8]) -> String { local.display(path) }

  /// Between rows: an interrupt, or a failure a writing thread met, stops the extraction.
  private func checkInterrupt() throws(Refusal) {
    if request.isInterrupted() { throw PayloadCopier.interrupted(output: output.path) }
    try writers.check()
  }

  private func failed(_ error: SystemError) -> Refusal { PayloadCopier.failed(error, output: output.path) }

  /// A package's `AppDataInfo.plist`: what the backup's Manifest.plist knows of the app.
  mutating func writePackageInfo(id: String, manifest: BackupManifest) throws(Refusal) {
    var members: [(key: String, value: PropertyListWriter.Value)] = [("CFBundleIdentifier", .string(id))]
    if let version = manifest.applicationVersions[id] { members.append(("XCExecutableVersion", .string(version))) }
    if let date = manifest.info.date { members.append(("XCDownloadDate", .string(Self.xcodeDate(date)))) }
    try writeSmallFile(Array("AppDataInfo.plist".utf8), in: partial, bytes: PropertyListWriter.dictionary(members))
  }

  /// `2026-11-01T12:00:00Z` as Xcode writes `XCDownloadDate` (`2026-11-01 12:00.00.000`).
  static func xcodeDate(_ iso: String) -> String {
    let bytes = Array(iso.utf8)
    guard bytes.count >= 19 else { return iso }
    let day = String(decoding: bytes[0..<10], as: UTF8.self)
    let hour = String(decoding: bytes[11..<13], as: UTF8.self)
    let minute = String(decoding: bytes[14..<16], as: UTF8.self)
    let second = String(decoding: bytes[17..<19], as: UTF8.self)
    return "\(day) \(hour):\(minute).\(second).000"
  }

  private func writeSmallFile(_ name: [UInt8], in folder: FileDescriptor, bytes: [UInt8]) throws(Refusal) {
    do {
      let file = try Syscalls.open(name, in: folder, options: .createNewFile, mode: 0o644, displayPath: display(name))
      defer { file.close() }
      try Syscalls.writeAll(file, bytes, displayPath: display(name))
    } catch {
      throw failed(error)
    }
  }

  /// Writes one container: its rows in path order, then its folders' modes and times.
  mutating func write(_ plan: BackupExtraction.Plan, from database: SQLiteDatabase, sharedFileIDs: Set<String>,
                      into container: inout BackupExtraction.Report.Container, problems: inout [BackupExtraction.Report.Problem],
                      withMetadata: Bool, containerIndex: Int) throws(Refusal) {
    let rootPath: [UInt8] = plan.root == "." ? [] : Array(plan.root.utf8)
    let root: FileDescriptor
    if rootPath.isEmpty {
      root = partial
    } else {
      do {
        try Syscalls.makeDirectory(rootPath, in: partial, mode: 0o700, displayPath: display(rootPath))
        root = try Syscalls.open(rootPath, in: partial, options: .directory, displayPath: display(rootPath))
      } catch {
        if error.isCausedByEntry {
          problems.append(BackupExtraction.Report.Problem(domain: plan.domain, path: [], message: "not written: its folder cannot be made (\(error.reason))",
                                                          isError: true))
          return
        }
        throw failed(error)
      }
    }
    defer { if !rootPath.isEmpty { root.close() } }
    if withMetadata {
      // The container's metadata plist, as iOS keeps it at the root: it names the container.
      let contentClass: Int64 = plan.kind == .group ? 7 : plan.kind == .plugin ? 4 : 2
      try writeSmallFile(Array(ContainerLayout.metadataFileName.utf8), in: root, bytes: PropertyListWriter.dictionary([
        ("MCMMetadataIdentifier", .string(plan.id)), ("MCMMetadataContentClass", .integer(contentClass)),
      ]))
    }
    let (symlinks, isComplete) = try plan.symlinks(database)
    let links = SymlinkCheck(links: symlinks, isComplete: isComplete)
    let tree = FolderStack(root: root, rootPath: rootPath)
    var rootRecord: MBFileRecord?
    // What was not written, by row: the rows' files are written on other threads, and what
    // they find joins these in row order once they are done.
    var noted: [(index: Int, problem: BackupExtraction.Report.Problem)] = []
    var removals: [(folder: [UInt8], name: [UInt8])] = []
    func take(_ outcomes: [PayloadOutcome]) {
      for outcome in outcomes {
        Self.note(outcome, in: &container, removals: &removals) { message, isError in
          noted.append((outcome.index, BackupExtraction.Report.Problem(domain: plan.domain, path: outcome.path, message: message, isError: isError)))
        }
      }
    }
    var index = 0
    try plan.each(database, sharedFileIDs: sharedFileIDs, root: { rootRecord = $0 }) { entry throws(Refusal) in
      index += 1
      try writeEntry(entry, index: index, plan: plan, tree: tree, links: links, container: &container, containerIndex: containerIndex) {
        noted.append((index, $0))
      }
      // The written files' outcomes, now and then: only what they found is kept.
      if index % 256 == 0 { take(writers.collect()) }
    } problem: { problem in
      index += 1
      noted.append((index, problem))
    }
    take(try writers.drain())
    do { try tree.leaveAll() } catch { throw failed(error) }
    restricted += tree.restricted
    removeFiles(removals)
    // The container's own folder: its row's mode and time.
    let setting = FolderStack.Setting(mode: rootRecord?.mode.map { $0 & 0o777 } ?? 0o755, time: rootRecord?.lastModified)
    if rootPath.isEmpty {
      outSetting = setting
    } else if let mode = setting.mode {
      try? Syscalls.setMode(root, mode | 0o700, displayPath: display(rootPath))
      if mode & 0o700 != 0o700 { restricted.append((rootPath, mode)) }
      if let time = setting.time { try? Syscalls.setTimes(root, access: Self.fileTime(time), modification: Self.fileTime(time), displayPath: "") }
    }
    // In row order; a row's own findings in the order they were made.
    problems += noted.enumerated().sorted { a, b in
      a.element.index != b.element.index ? a.element.index < b.element.index : a.offset < b.offset
    }.map(\.element.problem)
  }

  static func fileTime(_ seconds: Int64) -> FileTime { FileTime(seconds: Int(clamping: seconds), nanoseconds: 0) }

  /// One row: its folder reached (made where the manifest has no row for it), then the row
  /// made there. A row that cannot be is a finding; only a failure of OUT itself throws.
  private mutating func writeEntry(_ entry: BackupExtraction.Plan.Entry, index: Int, plan: BackupExtraction.Plan, tree: FolderStack,
                                   links: SymlinkCheck, container: inout BackupExtraction.Report.Container, containerIndex: Int,
                                   problem note: (BackupExtraction.Report.Problem) -> Void) throws(Refusal) {
    checkpoint()
    try checkInterrupt()
    let path = entry.path
    func problem(_ message: String, isError: Bool = true) {
      note(BackupExtraction.Report.Problem(domain: plan.domain, path: path, message: message, isError: isError))
    }
    let slash = path.lastIndex(of: 0x2F)
    let name = Array(path[(slash.map { $0 + 1 } ?? 0)...])
    switch tree.move(to: path[..<(slash ?? 0)], isLink: links.isLink) {
    case .failure(let error):
      if !error.isCausedByEntry { throw failed(SystemError(code: error.code, operation: .openFolder, path: display(path))) }
      problem("not written: its folder cannot be opened without following a symlink (\(SystemError(code: error.code, operation: .openFolder, path: "").reason))")
      return
    case .success: break
    }
    let folder = tree.descriptor
    let mode = entry.record?.mode.map { $0 & 0o777 }
    func entryFailed(_ error: SystemError) throws(Refusal) {
      if error.isExists { problem("not written: another row already made this path"); return }
      if error.isCausedByEntry { problem("not written: \(error.reason)"); return }
      throw failed(error)
    }
    switch entry.kind {
    case .folder:
      if links.isLink(path) {
        problem("not written: a symlink row has the same path")
        return
      }
      do {
        try Syscalls.makeDirectory(name, in: folder, mode: 0o700, displayPath: display(path))
      } catch {
        try entryFailed(error)
        return
      }
      let made: FileDescriptor
      do { made = try Syscalls.open(name, in: folder, options: .directory, displayPath: display(path)) } catch { throw failed(error) }
      for attribute in entry.record?.extendedAttributes ?? [] {
        do {
          try ExtendedAttributes.setValue(attribute.value, of: MarkerTable.platformAttributeName(attribute.name), on: made, displayPath: display(path))
        } catch {
          problem("its extended attribute \(TerminalText.escaped(attribute.name)) was not kept: \(error.reason)", isError: false)
        }
      }
      tree.enter(name, descriptor: made, setting: FolderStack.Setting(mode: mode ?? 0o755, time: entry.record?.lastModified))
      container.folders += 1
    case .symlink:
      let target = entry.record?.target ?? []
      if let why = links.verdict(path, target: target) {
        // Written as a file holding the target: a link out of the container is never made.
        do {
          let file = try Syscalls.open(name, in: folder, options: .createNewFile, mode: 0o644, displayPath: display(path))
          defer { file.close() }
          try Syscalls.writeAll(file, target, displayPath: display(path))
        } catch {
          try entryFailed(error)
          return
        }
        problem("a symlink to '\(TerminalText.escaped(target))', which \(why): written as a file holding its target", isError: false)
        container.files += 1
        return
      }
      do {
        try Syscalls.makeSymbolicLink(name, in: folder, target: target, displayPath: display(path))
      } catch {
        try entryFailed(error)
        return
      }
      if let time = entry.record?.lastModified {
        try? Syscalls.setTimes(name, in: folder, access: Self.fileTime(time), modification: Self.fileTime(time), displayPath: display(path))
      }
      container.symlinks += 1
    case .file:
      let folderPath = tree.path
      if backup == nil {
        // Inside an archive: made now, in row order; its bytes when the second pass meets its
        // payload.
        if case .failure(let why) = decryptor(for: entry, payloadSize: nil) {
          problem("not written: \(why.message)")
          return
        }
        do {
          let file = try Syscalls.open(name, in: folder, options: .createNewFile, mode: 0o600, displayPath: display(path))
          file.close()
        } catch {
          try entryFailed(error)
          return
        }
        deferred[entry.fileID] = Deferred(container: containerIndex, domain: plan.domain, entry: entry, folder: folderPath, name: name)
        return
      }
      switch try startFile(entry, index: index, name: name, in: folder, folderPath: folderPath, path: path, mode: mode ?? 0o644) {
      case .success(let job): try writers.submit(job)
      case .failure(let why): problem("not written: \(why.message)")
      }
    }
  }

  /// What a written job adds to its container's figures and findings.
  static func note(_ outcome: PayloadOutcome, in container: inout BackupExtraction.Report.Container,
                   removals: inout [(folder: [UInt8], name: [UInt8])], problem: (String, Bool) -> Void) {
    switch outcome.result {
    case .written(let bytes):
      container.files += 1
      container.bytes = container.bytes.saturatingSum(bytes)
      if let size = outcome.manifestSize, size != bytes { container.sizeDifferences.append((outcome.path, size, bytes)) }
      if outcome.hasNoRecord { problem("its record (the manifest's MBFile) cannot be read: written with mode 0644 and no time of its own", false) }
      for warning in outcome.warnings { problem(warning, false) }
    case .notWritten(let why):
      problem("not written: \(why)", true)
    }
    if let removal = outcome.removal { removals.append(removal) }
  }

  /// The folder at `path` below the partial folder (the partial folder itself for an empty
  /// path), reached one component at a time without following a symlink, and whether the
  /// caller closes it; nil when it cannot be opened.
  private func folder(at path: [UInt8]) -> (descriptor: FileDescriptor, isOwned: Bool)? {
    if path.isEmpty { return (partial, false) }
    guard case .success(let opened) = Syscalls.openFolder(relativePath: path, below: partial) else { return nil }
    return (opened, true)
  }

  /// Removes files made for payloads that did not decrypt (or that an archive lacked), once
  /// nothing is being written; their folders keep the mode and time they were given.
  private func removeFiles(_ removals: [(folder: [UInt8], name: [UInt8])]) {
    for removal in removals {
      guard let folder = folder(at: removal.folder) else { continue }
      defer { if folder.isOwned { folder.descriptor.close() } }
      let before = try? Syscalls.status(of: folder.descriptor, displayPath: "")
      try? Syscalls.setMode(folder.descriptor, 0o700, displayPath: "")
      try? Syscalls.remove(removal.name, in: folder.descriptor, isDirectory: false, displayPath: display(RelativePath.join(removal.folder, removal.name)))
      if let before {
        try? Syscalls.setMode(folder.descriptor, before.permissions, displayPath: "")
        try? Syscalls.setTimes(folder.descriptor, access: before.accessTime, modification: before.modificationTime, displayPath: "")
      }
    }
  }

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
          throw Refusal("\(TerminalText.escaped(path)): cannot read its payload: \(error.reason); nothing was written")
        }
      case .archiveEntry:
        guard let archive else { return 0 }
        do { return try archive.readChunk(into: buffer) } catch {
          throw Refusal("cannot read the archive (truncated or damaged?): \(error.message); nothing was written")
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
  private func decryptor(for entry: BackupExtraction.Plan.Entry, payloadSize: UInt64?) -> Result<BackupDecryption.PayloadDecryptor?, ExtractionProblem> {
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
  private func shard(_ name: [UInt8]) -> FileDescriptor? {
    guard name.count == 2, let backup else { return nil }
    let index = Int(name[0]) << 8 | Int(name[1])
    if let known = shards.descriptors[index] { return known }
    guard case .success(let opened) = Syscalls.openFolder(relativePath: name, below: backup) else { return nil }
    shards.descriptors[index] = opened
    return opened
  }

  /// The payload file of an entry in the backup folder: xx/<fileID>, a regular file, not
  /// followed if it is a link and not waited on if it is a FIFO; nil when there is none.
  private func openPayload(_ entry: BackupExtraction.Plan.Entry) -> Result<(FileDescriptor, UInt64)?, ExtractionProblem> {
    let fileID = Array(entry.fileID.utf8)
    let name = "\(entry.fileID.prefix(2))/\(entry.fileID)"
    guard let shard = shard(Array(fileID.prefix(2))) else { return .success(nil) }
    do {
      let opened = try Syscalls.open(fileID, in: shard, options: .readMaybeFile, displayPath: entry.fileID)
      let status = try Syscalls.status(of: opened, displayPath: entry.fileID)
      guard status.kind == .regular else {
        opened.close()
        return .failure(ExtractionProblem("its payload \(name) is not a regular file"))
      }
      return .success((opened, status.size))
    } catch {
      return error.isNotFound ? .success(nil) : .failure(ExtractionProblem("its payload cannot be read: \(error.reason)"))
    }
  }

  /// Makes one file's entry (or takes `existing`, made by the first pass over an archive) and
  /// opens what it is written from: the job that writes it, or why it is not written (its
  /// payload cannot be had: no file is made). `source` nil: the payload is opened in the
  /// backup folder, or the file is empty.
  private func startFile(_ entry: BackupExtraction.Plan.Entry, index: Int, name: [UInt8], in folder: FileDescriptor, folderPath: [UInt8],
                         path: [UInt8], mode: UInt32, source given: PayloadReader? = nil, payloadSize givenSize: UInt64? = nil,
                         existing: FileDescriptor? = nil) throws(Refusal) -> Result<PayloadJob, ExtractionProblem> {
    var source = given
    var payloadSize = givenSize
    var opened: FileDescriptor?
    if source == nil && backup != nil {
      switch openPayload(entry) {
      case .success(let (descriptor, size)?):
        opened = descriptor
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
      opened?.close()
      return .failure(problem)
    }
    let file: FileDescriptor
    if let existing {
      file = existing
    } else {
      do {
        file = try Syscalls.open(name, in: folder, options: .createNewFile, mode: 0o600, displayPath: display(path))
      } catch {
        opened?.close()
        if error.isExists { return .failure(ExtractionProblem("another row already made this path")) }
        if error.isCausedByEntry { return .failure(ExtractionProblem(error.reason)) }
        throw failed(error)
      }
    }
    return .success(PayloadJob(index: index, source: source, payloadSize: opened == nil ? nil : payloadSize, file: file, decryptor: decryptor,
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
      throw Refusal("\(TerminalText.escaped(archivePath)): cannot read the archive: \(error.message)")
    }
    var removals: [(folder: [UInt8], name: [UInt8])] = []
    while !deferred.isEmpty {
      let header: ArchiveHeader?
      do { header = try reader.next() } catch {
        throw Refusal("\(TerminalText.escaped(archivePath)): cannot read the archive (truncated or damaged?): \(error.message)")
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
  private mutating func writeDeferred(_ item: Deferred, source: PayloadReader?, archive: LibArchive? = nil, size: UInt64?, containers: inout [BackupExtraction.Report.Container],
                                      problems: inout [BackupExtraction.Report.Problem], removals: inout [(folder: [UInt8], name: [UInt8])]) throws(Refusal) {
    func problem(_ message: String, _ isError: Bool) {
      problems.append(BackupExtraction.Report.Problem(domain: item.domain, path: item.entry.path, message: message, isError: isError))
    }
    guard let (folder, isOwned) = folder(at: item.folder) else {
      problem("not written: its folder cannot be opened again", true)
      return
    }
    defer { if isOwned { folder.close() } }
    let file: FileDescriptor
    do {
      file = try Syscalls.open(item.name, in: folder, options: .writeExistingFile, displayPath: display(item.entry.path))
    } catch {
      throw failed(error)
    }
    switch try startFile(item.entry, index: 0, name: item.name, in: folder, folderPath: item.folder, path: item.entry.path,
                         mode: item.entry.record?.mode.map { $0 & 0o777 } ?? 0o644, source: source, payloadSize: size, existing: file) {
    case .success(let job): Self.note(try local.write(job, archive: archive), in: &containers[item.container], removals: &removals, problem: problem)
    case .failure(let why):
      file.close()
      removals.append((item.folder, item.name))
      problem("not written: \(why.message)", true)
    }
  }

  /// Gives the folders that keep less than the owner's permissions their mode (deepest first),
  /// then has OUT put in place (an OUT replaced with --force goes only once the new one is).
  mutating func finish() throws(Refusal) {
    checkpoint()
    do { try checkInterrupt() } catch {
      abandon()
      throw error
    }
    for folder in restricted.sorted(by: { $0.path.count > $1.path.count }) {
      guard let opened = self.folder(at: folder.path) else { continue }
      try? Syscalls.setMode(opened.descriptor, folder.mode, displayPath: display(folder.path))
      if opened.isOwned { opened.descriptor.close() }
    }
    // A package or a folder of containers: OUT itself is a plain folder (the partial folder
    // was made 0700 so that nobody else sees it half written).
    let setting = outSetting ?? FolderStack.Setting(mode: 0o755, time: nil)
    if let mode = setting.mode { try? Syscalls.setMode(partial, mode, displayPath: output.path) }
    if let time = setting.time { try? Syscalls.setTimes(partial, access: Self.fileTime(time), modification: Self.fileTime(time), displayPath: "") }
    backupCloser.close(backup)
    writers.close()
    try output.putInPlace(force: request.force)
  }
}

/// The folders from a container's root down to where the current row goes, for rows that come
/// in path order (`BackupExtraction.Plan.each`): only the deepest is open, its parent is reached
/// through its `..` (a folder this run made, mode 0700 until the end, that nobody else can move),
/// so a tree of any depth holds one descriptor and each folder is entered and left once. A
/// folder's mode and time are set as the rows leave it, when nothing more is made in it; a mode
/// that leaves out some of the owner's permissions is kept with them until the end
/// (`restricted`).
final class FolderStack {
  struct Setting {
    var mode: UInt32?
    var time: Int64?
  }

  let root: FileDescriptor
  let rootPath: [UInt8]
  /// The deepest folder's path below the root, and where each of its components ends in it.
  private var joined: [UInt8] = []
  private var ends: [Int] = []
  private var settings: [Setting] = []
  private var current: FileDescriptor?
  private(set) var restricted: [(path: [UInt8], mode: UInt32)] = []

  init(root: FileDescriptor, rootPath: [UInt8]) {
    self.root = root
    self.rootPath = rootPath
  }

  deinit { current?.close() }

  /// The deepest folder's descriptor (the root's when the stack is empty).
  var descriptor: FileDescriptor { current ?? root }
  /// The deepest folder's path relative to the partial folder.
  var path: [UInt8] { RelativePath.join(rootPath, joined) }

  /// Goes to the folder `folder` (a path below the root, empty for the root): leaves the
  /// folders not on its way, enters (or makes, where no symlink row holds the path) the ones
  /// missing. A component that is not a folder (a file, a symlink) stops it there with its error.
  func move(to folder: ArraySlice<UInt8>, isLink: ([UInt8]) -> Bool) -> Result<Void, SystemError> {
    // The folders kept: those whose whole path `folder` starts with, up to a `/` or its end.
    var same = 0
    joined.withUnsafeBufferPointer { have in
      folder.withUnsafeBufferPointer { want in
        let limit = min(have.count, want.count)
        while same < limit && have[same] == want[same] { same += 1 }
      }
    }
    var kept = 0
    while kept < ends.count && ends[kept] <= same && (ends[kept] == folder.count || folder[folder.startIndex + ends[kept]] == 0x2F) { kept += 1 }
    do {
      while ends.count > kept { try leave() }
      var start = folder.startIndex + joined.count + (joined.isEmpty ? 0 : 1)
      while start < folder.endIndex {
        let end = folder[start...].firstIndex(of: 0x2F) ?? folder.endIndex
        let name = Array(folder[start..<end])
        start = end + 1
        switch withCName(name, { Syscalls.open(cName: $0, in: descriptor, options: .directory) }) {
        case .success(let opened):
          // Made before and left: its mode and time are set already.
          enter(name, descriptor: opened, setting: Setting(mode: nil, time: nil))
        case .failure(let error) where error.code == ErrnoValue.notFound:
          if isLink(RelativePath.join(joined, name)) { return .failure(SystemError(code: ErrnoValue.loop, operation: .openFolder, path: "")) }
          try Syscalls.makeDirectory(name, in: descriptor, mode: 0o700, displayPath: "")
          enter(name, descriptor: try Syscalls.open(name, in: descriptor, options: .directory, displayPath: ""), setting: Setting(mode: 0o755, time: nil))
        case .failure(let error):
          return .failure(SystemError(code: error.code, operation: .openFolder, path: ""))
        }
      }
    } catch {
      return .failure(error)
    }
    return .success(())
  }

  /// Makes `descriptor`, the folder `name` in the deepest one, the deepest.
  func enter(_ name: [UInt8], descriptor: FileDescriptor, setting: Setting) {
    if !joined.isEmpty { joined.append(0x2F) }
    joined.append(contentsOf: name)
    ends.append(joined.count)
    settings.append(setting)
    current?.close()
    current = descriptor
  }

  /// Sets the deepest folder's mode and time and goes up to its parent.
  private func leave() throws(SystemError) {
    guard let folder = current else { return }
    let setting = settings.removeLast()
    if let mode = setting.mode {
      try? Syscalls.setMode(folder, mode | 0o700, displayPath: "")
      if mode & 0o700 != 0o700 { restricted.append((path, mode)) }
    }
    if let time = setting.time {
      try? Syscalls.setTimes(folder, access: ExtractionWriter.fileTime(time), modification: ExtractionWriter.fileTime(time), displayPath: "")
    }
    ends.removeLast()
    joined.removeLast(joined.count - max(0, (ends.last ?? 0)))
    current = nil
    defer { folder.close() }
    if !ends.isEmpty { current = try Syscalls.open([0x2E, 0x2E], in: folder, options: .directory, displayPath: "..") }
  }

  /// Leaves every folder (the container's rows are all made).
  func leaveAll() throws(SystemError) {
    while !ends.isEmpty { try leave() }
  }
}

/// Closes a descriptor the first time it is asked to, and never again.
final class CloseOnce {
  private var isClosed = false
  func close(_ descriptor: FileDescriptor?) {
    guard !isClosed else { return }
    isClosed = true
    descriptor?.close()
  }
}

/// Why an entry is not written, in words for the report.
struct ExtractionProblem: Error {
  var message: String
  init(_ message: String) { self.message = message }
}
