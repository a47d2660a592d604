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
  let totalBytes: UInt64
  var written: UInt64 = 0
  /// Folders whose mode and time are set last (children first), so a folder without write
  /// permission can still be filled.
  var folders: [(path: [UInt8], mode: UInt32?, time: Int64?)] = []
  var buffer: UnsafeMutableRawBufferPointer
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
    self.totalBytes = totalBytes
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
    buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
  }

  /// Removes the partial folder (after a failure or an interrupt).
  func abandon() {
    partial.close()
    backup?.close()
    Syscalls.removeTree(partialName, in: parent)
    parent.close()
    buffer.deallocate()
  }

  private func display(_ path: [UInt8]) -> String {
    RelativePath.display(RelativePath.join(Array(request.output.utf8), path))
  }

  private func checkInterrupt() throws(Refusal) {
    if request.isInterrupted() { throw Refusal("interrupted; nothing was written (\(TerminalText.escaped(request.output)) does not exist)") }
  }

  /// A write that failed (a full disk, an I/O error): the extraction stops, and nothing stays.
  private func failed(_ error: SystemError) -> Refusal {
    Refusal("\(TerminalText.escaped(request.output)): cannot write the extraction: \(error.reason) (\(TerminalText.escaped(error.path))); nothing was written")
  }

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
    for entry in plan.entries {
      checkpoint()
      try checkInterrupt()
      let path = RelativePath.join(entry.components)
      func problem(_ message: String, isError: Bool = true) {
        problems.append(BackupExtraction.Report.Problem(domain: plan.domain, path: path, message: message, isError: isError))
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
        try setAttributes(entry.record, name: name, in: folder, path: path, problem: problem)
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
        let result = try writeFile(entry, name: name, in: folder, path: path, mode: mode ?? 0o644)
        switch result {
        case .written(let bytes):
          container.files += 1
          container.bytes = container.bytes.saturatingSum(bytes)
          if let size = entry.record?.size, size != bytes { container.sizeDifferences.append((path, size, bytes)) }
          if entry.record == nil { problem("its record (the manifest's MBFile) cannot be read: written with mode 0644 and no time of its own", isError: false) }
          try setAttributes(entry.record, name: name, in: folder, path: path, problem: problem)
        case .notWritten(let why):
          problem("not written: \(why)")
        }
      }
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

  /// Copies (or decrypts) one payload into a new file; a payload that cannot be had is a
  /// finding and leaves no file, a write that fails stops everything. `source` nil: the
  /// payload is opened in the backup folder (or the file has none).
  private mutating func writeFile(_ entry: BackupExtraction.Plan.Entry, name: [UInt8], in folder: FileDescriptor, path: [UInt8],
                                  mode: UInt32, source given: PayloadReader? = nil) throws(Refusal) -> FileResult {
    var decryptor: BackupDecryption.PayloadDecryptor?
    switch self.decryptor(for: entry) {
    case .success(let made): decryptor = made
    case .failure(let problem): return .notWritten(problem.message)
    }
    var source = given
    var opened: FileDescriptor?
    if source == nil && Self.hasPayload(entry, isEncrypted: isEncrypted) {
      switch openPayload(entry) {
      case .success(let descriptor):
        opened = descriptor
        source = .file(descriptor)
      case .failure(let problem): return .notWritten(problem.message)
      }
    }
    defer { opened?.close() }
    let file: FileDescriptor
    do {
      file = try Syscalls.open(name, in: folder, options: .createNewFile, mode: 0o600, displayPath: display(path))
    } catch {
      if error.isExists { return .notWritten("another row already made this path") }
      throw failed(error)
    }
    var bytes: UInt64 = 0
    var why: String?
    do throws(Refusal) {
      if let opened, decryptor == nil {
        // A plain payload on disk: the kernel copies it (copy_file_range), holes kept.
        do {
          bytes = try Syscalls.copyData(from: opened, to: file, displayPath: display(path))
          bytes = try Syscalls.status(of: file, displayPath: display(path)).size
        } catch {
          throw failed(error)
        }
        written = written.saturatingSum(bytes)
        request.progress?(written, totalBytes)
      } else if let source {
        (bytes, why) = try copy(from: source, decryptor: &decryptor, into: file, path: path)
      }
      if why == nil {
        do { try Syscalls.setMode(file, mode, displayPath: display(path)) } catch { throw failed(error) }
      }
    } catch {
      file.close()
      try? Syscalls.remove(name, in: folder, isDirectory: false, displayPath: display(path))
      throw error
    }
    file.close()
    if let why {
      try? Syscalls.remove(name, in: folder, isDirectory: false, displayPath: display(path))
      return .notWritten(why)
    }
    setTime(entry.record?.lastModified, of: name, in: folder, path: path)
    return .written(bytes)
  }

  /// Copies `source` into `file` a chunk at a time, decrypting it with `decryptor` when there
  /// is one; the bytes written, or why the payload cannot be decrypted (not whole blocks, bad
  /// padding).
  private mutating func copy(from source: PayloadReader, decryptor: inout BackupDecryption.PayloadDecryptor?, into file: FileDescriptor,
                             path: [UInt8]) throws(Refusal) -> (UInt64, String?) {
    let counter = WriteCounter(file: file, displayPath: display(path))
    var filled = 0
    while true {
      try checkInterrupt()
      let count = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]), path: display(path))
      filled += count
      let atEnd = count == 0
      // Whole blocks only, but for the end.
      let usable = decryptor == nil ? filled : atEnd ? filled : filled - filled % 16
      if usable > 0 && (filled == buffer.count || atEnd) {
        let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<usable])
        if decryptor != nil {
          do { try decryptor!.update(chunk, write: counter.write) } catch { return (counter.bytes, Self.words(error)) }
        } else {
          counter.write(chunk)
        }
        if let failure = counter.failure { throw failed(failure) }
        written = written.saturatingSum(UInt64(usable))
        request.progress?(written, totalBytes)
        let rest = filled - usable
        if rest > 0 { buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + usable, byteCount: rest) }
        filled = rest
      }
      if atEnd { break }
    }
    guard decryptor != nil else { return (counter.bytes, nil) }
    do { try decryptor!.finish(write: counter.write) } catch { return (counter.bytes, Self.words(error)) }
    if let failure = counter.failure { throw failed(failure) }
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
      switch try writeFile(item.entry, name: name, in: folder, path: path, mode: item.entry.record?.mode.map { $0 & 0o777 } ?? 0o644,
                           source: .archive(reader)) {
      case .written(let bytes):
        containers[item.container].files += 1
        containers[item.container].bytes = containers[item.container].bytes.saturatingSum(bytes)
        if let size = item.entry.record?.size, size != bytes { containers[item.container].sizeDifferences.append((path, size, bytes)) }
        if item.entry.record == nil { problem("its record (the manifest's MBFile) cannot be read: written with mode 0644 and no time of its own", false) }
        try setAttributes(item.entry.record, name: name, in: folder, path: path) { problem($0, $1) }
      case .notWritten(let why):
        problem("not written: \(why)", true)
      }
    }
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
    buffer.deallocate()
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
