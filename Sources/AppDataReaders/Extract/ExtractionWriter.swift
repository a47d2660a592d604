import AppDataSystem
import AppDataCore
/// Writes planned containers into a hidden partial folder beside OUT, then renames it into
/// place (`BackupExtraction`). Everything below the partial folder is created relative to its
/// folder's descriptor, reached from the partial folder one component at a time with
/// `O_NOFOLLOW`; files with `O_CREAT | O_EXCL | O_NOFOLLOW`.
struct ExtractionWriter {
  /// The container's folder inside a package.
  static let packageContainerName = "AppData"
  /// What is read and written at a time: memory is bounded by it, whatever a file's size.
  static let chunkSize = 1 << 20

  let request: BackupExtraction.Request
  let backupFolder: String?
  let isEncrypted: Bool
  let keys: BackupDecryption.Unlocked?
  /// OUT's folder and its name; the partial folder beside it.
  let parent: FileDescriptor
  let name: [UInt8]
  let partialName: [UInt8]
  let partial: FileDescriptor
  /// The backup folder's descriptor; nil for a backup inside an archive (its payloads are
  /// written in a second pass over the archive, `writePayloads(from:)`).
  let backup: FileDescriptor?
  /// Writes the payloads: on threads of their own from a backup folder, on this one from an
  /// archive (one stream).
  let writers: PayloadWriters
  /// How many threads write payloads beside the one that makes the tree.
  static let writerThreads = 2
  /// Folders whose mode and time are set last (children first), so a folder without write
  /// permission can still be filled.
  var folders: [(path: [UInt8], mode: UInt32?, time: Int64?)] = []
  /// The folder the last entry went in, kept open for the next (closed when replaced or released).
  final class FolderCache {
    private(set) var components: [[UInt8]] = []
    private(set) var descriptor: FileDescriptor?
    func keep(_ opened: FileDescriptor, for components: [[UInt8]]) {
      descriptor?.close()
      descriptor = opened
      self.components = components
    }
    deinit { descriptor?.close() }
  }

  /// The backup folder's `xx` folders opened so far (at most 65,536 names, 256 in a real backup).
  let shards = Shards()
  final class Shards {
    var descriptors: [Int: FileDescriptor] = [:]
    deinit { for descriptor in descriptors.values { descriptor.close() } }
  }
  /// Checkpoints passed (`Request.stopAfter`).
  var checkpoints = 0
  /// In an archive: the files whose payloads the second pass writes, by fileID (a fileID is
  /// the Files table's primary key: one row each).
  var deferred: [String: (container: Int, root: [UInt8], entry: BackupExtraction.Plan.Entry, domain: String)] = [:]

  /// A checkpoint: where a crash test may kill the run, and a test may pause it.
  private mutating func checkpoint() {
    checkpoints += 1
    if let stop = request.stopAfter, checkpoints >= stop { Syscalls.killSelf() }
    TestHooks.pause(at: "extract")
  }

  /// The hidden folder a run builds OUT in: its name says what it is, and the next extract to
  /// the same OUT removes one left by a run that was killed.
  static func partialName(of name: [UInt8]) -> [UInt8] { [0x2E] + name + Array(".appdata-extract-partial".utf8) }

  init(request: BackupExtraction.Request, backupFolder: String?, isEncrypted: Bool, keys: BackupDecryption.Unlocked?,
       totalBytes: UInt64) throws(Refusal) {
    self.request = request
    self.backupFolder = backupFolder
    self.isEncrypted = isEncrypted
    self.keys = keys
    let output = request.output.hasSuffix("/") && request.output.count > 1 ? String(request.output.dropLast()) : request.output
    let components = RelativePath.components(Array(output.utf8))
    guard let last = components.last, last != [0x2E], last != [0x2E, 0x2E] else {
      throw Refusal("\(TerminalText.escaped(request.output)): not a name for the output (give OUT a name of its own)")
    }
    name = last
    partialName = Self.partialName(of: last)
    let parentPath = output.utf8.count > last.count ? String(decoding: Array(output.utf8).dropLast(last.count), as: UTF8.self) : "."
    do {
      parent = try Syscalls.openDirectory(atPath: parentPath)
    } catch {
      throw Refusal("\(TerminalText.escaped(parentPath)): cannot open the folder OUT goes in: \(error.reason)")
    }
    let exists = (try? Syscalls.status(ofPath: output)) != nil
    if exists && !request.force {
      parent.close()
      throw Refusal("\(TerminalText.escaped(request.output)): already exists; appdata extract never writes over it (--force replaces it once the new one is complete)")
    }
    // A partial folder a killed run left: it is ours, by its name.
    Syscalls.removeTree(partialName, in: parent)
    do {
      try Syscalls.makeDirectory(partialName, in: parent, mode: 0o700, displayPath: RelativePath.display(partialName))
      partial = try Syscalls.open(partialName, in: parent, options: .directory, displayPath: RelativePath.display(partialName))
    } catch {
      parent.close()
      throw Refusal("\(TerminalText.escaped(parentPath)): cannot create the output there: \(error.reason)")
    }
    if let backupFolder {
      do {
        backup = try Syscalls.openDirectory(atPath: backupFolder)
      } catch {
        Syscalls.removeTree(partialName, in: parent)
        parent.close()
        throw Refusal("\(TerminalText.escaped(backupFolder)): cannot open the backup folder: \(error.reason)")
      }
    } else {
      backup = nil
    }
    writers = PayloadWriters(threads: backupFolder == nil ? 0 : Self.writerThreads, output: request.output,
                             progress: ExtractionProgress(total: totalBytes, report: request.progress), isInterrupted: request.isInterrupted)
  }

  /// Removes the partial folder (after a failure or an interrupt).
  func abandon() {
    writers.stop()
    writers.close()
    partial.close()
    backup?.close()
    Syscalls.removeTree(partialName, in: parent)
    parent.close()
  }

  private func display(_ path: [UInt8]) -> String { writers.local.display(path) }

  /// Between rows: an interrupt, or a failure a writing thread met, stops the extraction.
  private func checkInterrupt() throws(Refusal) {
    if request.isInterrupted() { throw PayloadCopier.interrupted(output: request.output) }
    try writers.check()
  }

  private func failed(_ error: SystemError) -> Refusal { PayloadCopier.failed(error, output: request.output) }

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

  /// Writes one container.
  mutating func write(_ plan: BackupExtraction.Plan, into container: inout BackupExtraction.Report.Container,
                      problems: inout [BackupExtraction.Report.Problem], withMetadata: Bool, containerIndex: Int) throws(Refusal) {
    let rootPath: [UInt8] = plan.root == "." ? [] : Array(plan.root.utf8)
    if !rootPath.isEmpty {
      do { try Syscalls.makeDirectory(rootPath, in: partial, mode: 0o700, displayPath: display(rootPath)) } catch { throw failed(error) }
    }
    folders.append((rootPath, plan.rootRecord?.mode.map { $0 & 0o777 } ?? 0o755, plan.rootRecord?.lastModified))
    let root: FileDescriptor
    if rootPath.isEmpty {
      root = partial
    } else {
      guard case .success(let opened) = Syscalls.openFolder(relativePath: rootPath, below: partial) else {
        throw Refusal("\(TerminalText.escaped(request.output)): cannot open the container's folder it made")
      }
      root = opened
    }
    defer { if !rootPath.isEmpty { root.close() } }
    if withMetadata {
      // The container's metadata plist, as iOS keeps it at the root: it names the container.
      let contentClass: Int64 = plan.kind == .group ? 7 : plan.kind == .plugin ? 4 : 2
      try writeSmallFile(Array(ContainerLayout.metadataFileName.utf8), in: root, bytes: PropertyListWriter.dictionary([
        ("MCMMetadataIdentifier", .string(plan.id)), ("MCMMetadataContentClass", .integer(contentClass)),
      ]))
    }
    let cache = FolderCache()
    // What was not written, by row: the rows' files are written on other threads, and what
    // they find joins these in row order once they are done.
    var noted: [(index: Int, problem: BackupExtraction.Report.Problem)] = []
    for (index, entry) in plan.entries.enumerated() {
      checkpoint()
      try checkInterrupt()
      let path = RelativePath.join(entry.components)
      func problem(_ message: String, isError: Bool = true) {
        noted.append((index, BackupExtraction.Report.Problem(domain: plan.domain, path: path, message: message, isError: isError)))
      }
      // The folder the entry goes in, reached without following a symlink (one this extraction
      // made for an earlier row is not a folder, and stops here).
      // Entries come in path order, so the files of a folder follow each other: its descriptor
      // is kept for the next entry (it stays the folder it was, whatever a later row makes).
      let parentComponents = Array(entry.components.dropLast())
      let folder: FileDescriptor
      if parentComponents.isEmpty {
        folder = root
      } else if let cached = cache.descriptor, cache.components == parentComponents {
        folder = cached
      } else {
        switch try openOrMake(parentComponents, below: root, rootPath: rootPath) {
        case .success(let opened):
          cache.keep(opened, for: parentComponents)
          folder = opened
        case .failure(let error):
          problem("not written: its folder cannot be opened without following a symlink (\(SystemError(code: error.code, operation: .openFolder, path: "").reason))")
          continue
        }
      }
      let name = entry.components[entry.components.count - 1]
      let mode = entry.record?.mode.map { $0 & 0o777 }
      switch entry.kind {
      case .folder:
        do {
          try Syscalls.makeDirectory(name, in: folder, mode: 0o700, displayPath: display(path))
        } catch {
          if error.isExists { problem("not written: another row already made this path"); continue }
          throw failed(error)
        }
        folders.append((RelativePath.join(rootPath, path), mode ?? 0o755, entry.record?.lastModified))
        try setAttributes(entry.record, name: name, in: folder, path: path) { problem($0, isError: $1) }
        container.folders += 1
      case .symlink:
        let target = entry.record?.target ?? []
        if let why = Self.escapingTarget(target, depth: entry.components.count - 1) {
          // Written as a file holding the target: a link out of the container is never made.
          do {
            let file = try Syscalls.open(name, in: folder, options: .createNewFile, mode: 0o644, displayPath: display(path))
            defer { file.close() }
            try Syscalls.writeAll(file, target, displayPath: display(path))
          } catch {
            if error.isExists { problem("not written: another row already made this path"); continue }
            throw failed(error)
          }
          problem("a symlink to '\(TerminalText.escaped(target))', which \(why): written as a file holding its target", isError: false)
          container.files += 1
          continue
        }
        do {
          try Syscalls.makeSymbolicLink(name, in: folder, target: target, displayPath: display(path))
        } catch {
          if error.isExists { problem("not written: another row already made this path"); continue }
          throw failed(error)
        }
        // Inline, not `setTime`: Swift 6.3.1's optimizer crashes (an ownership verifier failure
        // in SILCombine) when this mutating method calls that one here.
        if let time = entry.record?.lastModified {
          let when = FileTime(seconds: Int(time), nanoseconds: 0)
          try? Syscalls.setTimes(name, in: folder, access: when, modification: when, displayPath: display(path))
        }
        container.symlinks += 1
      case .file:
        if backup == nil && Self.hasPayload(entry, isEncrypted: isEncrypted) {
          // Inside an archive: written when the second pass meets its payload.
          deferred[entry.fileID] = (containerIndex, rootPath, entry, plan.domain)
          continue
        }
        let folderPath = RelativePath.join(rootPath, RelativePath.join(parentComponents))
        switch try startFile(entry, index: index, name: name, in: folder, folderPath: folderPath, path: path, mode: mode ?? 0o644) {
        case .success(let job): try writers.submit(job)
        case .failure(let why): problem("not written: \(why.message)")
        }
      }
    }
    var removals: [(folder: [UInt8], name: [UInt8])] = []
    for outcome in try writers.drain() {
      Self.note(outcome, in: &container, removals: &removals) { message, isError in
        noted.append((outcome.index, BackupExtraction.Report.Problem(domain: plan.domain, path: outcome.path, message: message, isError: isError)))
      }
    }
    removeFailedFiles(removals)
    // In row order; a row's own findings in the order they were made.
    problems += noted.enumerated().sorted { a, b in
      a.element.index != b.element.index ? a.element.index < b.element.index : a.offset < b.offset
    }.map(\.element.problem)
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

  /// Removes the files made for payloads that did not decrypt, once nothing is being written.
  private func removeFailedFiles(_ removals: [(folder: [UInt8], name: [UInt8])]) {
    for removal in removals {
      guard let folder = folder(at: removal.folder) else { continue }
      try? Syscalls.remove(removal.name, in: folder.descriptor, isDirectory: false, displayPath: display(RelativePath.join(removal.folder, removal.name)))
      if folder.isOwned { folder.descriptor.close() }
    }
  }

  /// The folder at `components` below `root`, one component at a time with `O_NOFOLLOW`; a
  /// folder the manifest has no row for (real manifests may leave one out) is made, with the
  /// usual mode. A component that is a file or a symlink fails (ENOTDIR, ELOOP).
  private mutating func openOrMake(_ components: [[UInt8]], below root: FileDescriptor, rootPath: [UInt8]) throws(Refusal) -> Result<FileDescriptor, Errno> {
    var current: FileDescriptor?
    var path = rootPath
    for component in components {
      path = RelativePath.join(path, component)
      var result = Syscalls.openFolder(relativePath: component, below: current ?? root)
      if case .failure(let error) = result, error.code == ErrnoValue.notFound {
        do {
          try Syscalls.makeDirectory(component, in: current ?? root, mode: 0o700, displayPath: display(path))
        } catch {
          current?.close()
          throw failed(error)
        }
        folders.append((path, 0o755, nil))
        result = Syscalls.openFolder(relativePath: component, below: current ?? root)
      }
      current?.close()
      switch result {
      case .success(let next): current = next
      case .failure(let error): return .failure(error)
      }
    }
    guard let current else { return .failure(Errno(code: ErrnoValue.notFound)) }
    return .success(current)
  }

  /// Sets an entry's modification (and access) time to the record's `LastModified`, without
  /// following a symlink; a time that cannot be set is left as the write made it.
  private func setTime(_ time: Int64?, of name: [UInt8], in folder: FileDescriptor, path: [UInt8]) {
    guard let time else { return }
    let when = FileTime(seconds: Int(time), nanoseconds: 0)
    try? Syscalls.setTimes(name, in: folder, access: when, modification: when, displayPath: display(path))
  }

  /// The folder at `path` below the partial folder (the partial folder itself for an empty
  /// path), reached without following a symlink, and whether the caller closes it; nil when
  /// it cannot be opened.
  private func folder(at path: [UInt8]) -> (descriptor: FileDescriptor, isOwned: Bool)? {
    if path.isEmpty { return (partial, false) }
    guard case .success(let opened) = Syscalls.openFolder(relativePath: path, below: partial) else { return nil }
    return (opened, true)
  }

  /// Why a symlink's target would point out of the container, or nil: absolute, or climbing
  /// above the container from an entry `depth` folders down.
  static func escapingTarget(_ target: [UInt8], depth: Int) -> String? {
    if target.first == 0x2F { return "is absolute" }
    if target.isEmpty { return "is empty" }
    var level = depth
    for part in target.split(separator: 0x2F, omittingEmptySubsequences: true) {
      if part.elementsEqual([0x2E, 0x2E]) { level -= 1 } else if !part.elementsEqual([0x2E]) { level += 1 }
      if level < 0 { return "climbs out of the container" }
    }
    return nil
  }

  enum FileResult { case written(UInt64), notWritten(String) }

  /// Where a file's bytes are read from: its payload file in the backup folder, or the entry
  /// of the archive being read.
  enum PayloadReader {
    case file(FileDescriptor)
    case archive(LibArchive)

    func read(into buffer: UnsafeMutableRawBufferPointer, path: String) throws(Refusal) -> Int {
      switch self {
      case .file(let descriptor):
        do { return try Syscalls.read(descriptor, into: buffer, displayPath: path) } catch {
          throw Refusal("\(TerminalText.escaped(path)): cannot read its payload: \(error.reason); nothing was written")
        }
      case .archive(let reader):
        do { return try reader.readChunk(into: buffer) } catch {
          throw Refusal("cannot read the archive (truncated or damaged?): \(error.message); nothing was written")
        }
      }
    }
  }

  /// The decryptor of an entry of an encrypted backup (nil for a plain one), or why there is none.
  private func decryptor(for entry: BackupExtraction.Plan.Entry) -> Result<BackupDecryption.PayloadDecryptor?, ExtractionProblem> {
    let size = entry.record?.size ?? 0
    guard isEncrypted && (size > 0 || entry.record?.encryptionKey != nil) else { return .success(nil) }
    guard let key = entry.record?.encryptionKey else { return .failure(ExtractionProblem("its record has no EncryptionKey")) }
    guard let keys else { return .failure(ExtractionProblem("the backup's class keys are not known")) }
    do {
      return .success(try keys.payload(encryptionKey: key))
    } catch {
      return .failure(ExtractionProblem(Self.words(error)))
    }
  }

  /// Whether an entry's bytes come from a payload: one with bytes, an encrypted one, or one
  /// whose record cannot be read (its size is unknown: the payload decides).
  static func hasPayload(_ entry: BackupExtraction.Plan.Entry, isEncrypted: Bool) -> Bool {
    (entry.record?.size ?? 0) > 0 || entry.record == nil || isEncrypted && entry.record?.encryptionKey != nil
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
  /// followed if it is a link and not waited on if it is a FIFO.
  private func openPayload(_ entry: BackupExtraction.Plan.Entry) -> Result<FileDescriptor, ExtractionProblem> {
    let fileID = Array(entry.fileID.utf8)
    let name = "\(entry.fileID.prefix(2))/\(entry.fileID)"
    guard let shard = shard(Array(fileID.prefix(2))) else {
      return .failure(ExtractionProblem("its payload \(name) is missing"))
    }
    do {
      let opened = try Syscalls.open(fileID, in: shard, options: .readMaybeFile, displayPath: entry.fileID)
      guard try Syscalls.status(of: opened, displayPath: entry.fileID).kind == .regular else {
        opened.close()
        return .failure(ExtractionProblem("its payload \(name) is not a regular file"))
      }
      return .success(opened)
    } catch {
      return .failure(ExtractionProblem(error.isNotFound ? "its payload \(name) is missing" : "its payload cannot be read: \(error.reason)"))
    }
  }

  /// Makes one file's entry and opens what it is written from: the job that writes it, or why
  /// it is not written (its payload cannot be had: no file is made). `source` nil: the payload
  /// is opened in the backup folder (or the file has none).
  private func startFile(_ entry: BackupExtraction.Plan.Entry, index: Int, name: [UInt8], in folder: FileDescriptor, folderPath: [UInt8],
                         path: [UInt8], mode: UInt32, source given: PayloadReader? = nil) throws(Refusal) -> Result<PayloadJob, ExtractionProblem> {
    var decryptor: BackupDecryption.PayloadDecryptor?
    switch self.decryptor(for: entry) {
    case .success(let made): decryptor = made
    case .failure(let problem): return .failure(problem)
    }
    var source = given
    var opened: FileDescriptor?
    if source == nil && Self.hasPayload(entry, isEncrypted: isEncrypted) {
      switch openPayload(entry) {
      case .success(let descriptor):
        opened = descriptor
        source = .file(descriptor)
      case .failure(let problem): return .failure(problem)
      }
    }
    let file: FileDescriptor
    do {
      file = try Syscalls.open(name, in: folder, options: .createNewFile, mode: 0o600, displayPath: display(path))
    } catch {
      opened?.close()
      if error.isExists { return .failure(ExtractionProblem("another row already made this path")) }
      throw failed(error)
    }
    return .success(PayloadJob(index: index, source: source, file: file, decryptor: decryptor, mode: mode, record: entry.record,
                               path: path, folder: folderPath, name: name))
  }

  static func words(_ error: BackupDecryption.Failure) -> String {
    switch error {
    case .wrongPassword: return "its key does not unwrap"
    case .noClassKey(let protectionClass): return "the keybag holds no password-wrapped key for its protection class \(protectionClass)"
    case .damaged(let reason): return "its payload cannot be decrypted: \(reason)"
    }
  }

  /// The record's extended attributes, with the platform's names (`user.` on Linux).
  private func setAttributes(_ record: MBFileRecord?, name: [UInt8], in folder: FileDescriptor, path: [UInt8],
                             problem: (String, Bool) -> Void) throws(Refusal) {
    for attribute in record?.extendedAttributes ?? [] {
      let platformName = MarkerTable.platformAttributeName(attribute.name)
      do {
        try ExtendedAttributes.setValue(attribute.value, of: platformName, onEntry: name, in: folder, displayPath: display(path))
      } catch {
        problem("its extended attribute \(TerminalText.escaped(attribute.name)) was not kept: \(error.reason)", false)
      }
    }
  }

  /// The second pass over an archive: each payload of `backup` (its `xx/<fileID>` entries)
  /// written into the file its row planned, then the rows whose payload the archive lacks.
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
      let path = RelativePath.join(item.entry.components)
      func problem(_ message: String, _ isError: Bool) {
        problems.append(BackupExtraction.Report.Problem(domain: item.domain, path: path, message: message, isError: isError))
      }
      guard let (root, isOwned) = folder(at: item.root) else { continue }
      defer { if isOwned { root.close() } }
      let folder: FileDescriptor
      if item.entry.components.count == 1 {
        folder = root
      } else {
        switch try openOrMake(Array(item.entry.components.dropLast()), below: root, rootPath: item.root) {
        case .success(let opened): folder = opened
        case .failure(let error):
          problem("not written: its folder cannot be opened without following a symlink (\(SystemError(code: error.code, operation: .openFolder, path: "").reason))", true)
          continue
        }
      }
      defer { if item.entry.components.count > 1 { folder.close() } }
      let name = item.entry.components[item.entry.components.count - 1]
      let folderPath = RelativePath.join(item.root, RelativePath.join(Array(item.entry.components.dropLast())))
      switch try startFile(item.entry, index: 0, name: name, in: folder, folderPath: folderPath, path: path,
                           mode: item.entry.record?.mode.map { $0 & 0o777 } ?? 0o644, source: .archive(reader)) {
      case .success(let job): Self.note(try writers.local.write(job), in: &containers[item.container], removals: &removals, problem: problem)
      case .failure(let why): problem("not written: \(why.message)", true)
      }
    }
    removeFailedFiles(removals)
    for (fileID, item) in deferred.sorted(by: { $0.key < $1.key }) {
      problems.append(BackupExtraction.Report.Problem(domain: item.domain, path: RelativePath.join(item.entry.components),
                                                      message: "not written: its payload \(fileID.prefix(2))/\(fileID) is not in the archive", isError: true))
    }
    deferred = [:]
  }

  /// Sets the folders' modes and times (deepest first), then renames the partial folder to OUT
  /// (an OUT replaced with --force goes only once the new one is in place).
  mutating func finish() throws(Refusal) {
    checkpoint()
    do { try checkInterrupt() } catch {
      abandon()
      throw error
    }
    // A package or a folder of containers: OUT itself is a plain folder (the partial folder
    // was made 0700 so that nobody else sees it half written).
    if !folders.contains(where: { $0.path.isEmpty }) { try? Syscalls.setMode(partial, 0o755, displayPath: request.output) }
    for folder in folders.reversed() {
      if let mode = folder.mode, let opened = self.folder(at: folder.path) {
        try? Syscalls.setMode(opened.descriptor, mode, displayPath: display(folder.path))
        if opened.isOwned { opened.descriptor.close() }
      }
      let components = RelativePath.components(folder.path)
      if let last = components.last, let parentFolder = self.folder(at: RelativePath.join(Array(components.dropLast()))) {
        setTime(folder.time, of: last, in: parentFolder.descriptor, path: folder.path)
        if parentFolder.isOwned { parentFolder.descriptor.close() }
      }
    }
    partial.close()
    backup?.close()
    writers.close()
    defer { parent.close() }
    let old = [0x2E] + name + Array(".appdata-extract-replaced".utf8)
    if request.force {
      Syscalls.removeTree(old, in: parent)
      try? Syscalls.renameWithoutReplacing(name, in: parent, to: old, in: parent, displayPath: request.output)
    }
    do {
      try Syscalls.renameWithoutReplacing(partialName, in: parent, to: name, in: parent, displayPath: request.output)
    } catch {
      Syscalls.removeTree(partialName, in: parent)
      if request.force { try? Syscalls.renameWithoutReplacing(old, in: parent, to: name, in: parent, displayPath: request.output) }
      throw Refusal("\(TerminalText.escaped(request.output)): cannot put the extraction in place: \(error.reason); nothing was written")
    }
    if request.force { Syscalls.removeTree(old, in: parent) }
  }
}

/// Why an entry is not written, in words for the report.
struct ExtractionProblem: Error {
  var message: String
  init(_ message: String) { self.message = message }
}
