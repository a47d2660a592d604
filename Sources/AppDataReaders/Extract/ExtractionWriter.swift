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
///
/// Split by job: making the tree (this file, and `FolderStack.swift`), writing payloads
/// (`ExtractionWriter+Payloads.swift`: the file each row gets and what it is written from;
/// `PayloadWriters.swift`: the threads and the copier), publishing OUT (`ExtractionOutput.swift`:
/// the partial folder, what `--force` may replace, the rename into place).
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
  /// How the filesystem OUT is made on compares names (a Mac's ignores case; an iOS device's,
  /// where the backup's names come from, does not).
  lazy var names = NameComparison.of(partial)
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
  /// What the symlink checks of every container may still spend (`SymlinkCheck.Budget`).
  var symlinkBudget = SymlinkCheck.Budget()
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
  mutating func checkpoint() {
    checkpoints += 1
    if let stop = request.stopAfter, checkpoints >= stop { Syscalls.killSelf() }
    TestHooks.pause(at: "extract", releasedBy: request.isInterrupted)
  }

  init(request: BackupExtraction.Request, backupPath: String, backupFolder: String?, isEncrypted: Bool, keys: BackupDecryption.Unlocked?,
       totalBytes: UInt64) throws(Refusal) {
    self.request = request
    self.isEncrypted = isEncrypted
    self.keys = keys
    if let handoff = request.restore {
      output = try ExtractionOutput(restoring: handoff)
    } else {
      output = try ExtractionOutput(output: request.output, force: request.force, backupPath: backupPath)
    }
    if let backupFolder {
      do {
        backup = try Syscalls.openDirectory(atPath: backupFolder)
      } catch {
        output.abandon()
        throw Refusal(.unreadable, path: backupFolder, "cannot open the backup folder: \(error.reason)")
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

  func display(_ path: [UInt8]) -> String { local.display(path) }

  /// Between rows: an interrupt, or a failure a writing thread met, stops the extraction.
  func checkInterrupt() throws(Refusal) {
    if request.isInterrupted() { throw PayloadCopier.interrupted(output: output.path) }
    try writers.check()
  }

  func failed(_ error: SystemError) -> Refusal { PayloadCopier.failed(error, output: output.path) }

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
      let file = OwnedDescriptor(owning: try Syscalls.open(name, in: folder, options: .createNewFile, mode: 0o644, displayPath: display(name)))
      try Syscalls.writeAll(file.descriptor, bytes, displayPath: display(name))
    } catch {
      throw failed(error)
    }
  }

  /// Writes one container: its rows in path order, then its folders' modes and times.
  mutating func write(_ plan: BackupExtraction.Plan, from database: SQLiteDatabase, sharedFileIDs: Set<String>,
                      into container: inout BackupExtraction.Report.Container, problems: inout [BackupExtraction.Report.Problem],
                      withMetadata: Bool, containerIndex: Int) throws(Refusal) {
    let rootPath: [UInt8] = plan.root == "." ? [] : Array(plan.root.utf8)
    let rootFolder: OwnedDescriptor
    if rootPath.isEmpty {
      rootFolder = OwnedDescriptor(borrowing: partial)
    } else {
      do {
        try Syscalls.makeDirectory(rootPath, in: partial, mode: 0o700, displayPath: display(rootPath))
        rootFolder = OwnedDescriptor(owning: try Syscalls.open(rootPath, in: partial, options: .directory, displayPath: display(rootPath)))
      } catch {
        if error.errno.isCausedByEntry {
          problems.append(BackupExtraction.Report.Problem(domain: plan.domain, path: [], message: "not written: its folder cannot be made (\(error.reason))",
                                                          isError: true))
          return
        }
        throw failed(error)
      }
    }
    let root = rootFolder.descriptor
    if withMetadata {
      // The container's metadata plist, as iOS keeps it at the root: it names the container.
      let contentClass: Int64 = plan.kind == .group ? 7 : plan.kind == .plugin ? 4 : 2
      try writeSmallFile(Array(ContainerLayout.metadataFileName.utf8), in: root, bytes: PropertyListWriter.dictionary([
        ("MCMMetadataIdentifier", .string(plan.id)), ("MCMMetadataContentClass", .integer(contentClass)),
      ]))
    }
    let (symlinks, isComplete) = try plan.symlinks(database)
    TestHooks.pause(at: "symlinks", releasedBy: request.isInterrupted)
    let links = SymlinkCheck(links: symlinks, isComplete: isComplete, comparison: names, budget: &symlinkBudget, isInterrupted: request.isInterrupted)
    // An interrupted check's verdicts are not to be used, whatever the flag says next.
    if links.interrupted { throw PayloadCopier.interrupted(output: output.path) }
    try checkInterrupt()
    let tree = FolderStack(root: root, rootPath: rootPath, comparison: names)
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
    switch tree.move(to: path[..<(slash ?? 0)], blocked: links.folderBlocked) {
    case .failure(.blocked(let folder, let why)):
      problem("not written: its folder \(TerminalText.escaped(folder)) is not made: \(why)")
      return
    case .failure(.collision(let folder, let other)):
      problem("not written: its folder \(TerminalText.escaped(folder)) is the same name as \(TerminalText.escaped(other)), made from another row, on this filesystem (it \(tree.comparison.phrase))")
      return
    case .failure(.system(let error)):
      if !error.errno.isCausedByEntry { throw failed(SystemError(errno: error.errno, operation: .openFolder, path: display(path))) }
      problem("not written: its folder cannot be opened without following a symlink (\(SystemError(errno: error.errno, operation: .openFolder, path: "").reason))")
      return
    case .success: break
    }
    // A folder not made where a link row's path is (or may be) takes no name from the link.
    if entry.kind == .folder, let why = links.folderBlocked(path) {
      problem("not written: \(why)")
      return
    }
    if let other = tree.claim(name) {
      problem("not written: its name is the same as \(TerminalText.escaped(other)), made from another row, on this filesystem (it \(tree.comparison.phrase))")
      return
    }
    let row = Row(entry: entry, name: name, folder: tree.descriptor, mode: entry.record?.mode.map { $0 & 0o777 })
    switch entry.kind {
    case .folder: try makeFolder(row, tree: tree, container: &container, problem: problem)
    case .symlink: try makeSymlink(row, comparison: tree.comparison, links: links, container: &container, problem: problem)
    case .file: try makeFile(row, index: index, tree: tree, domain: plan.domain, containerIndex: containerIndex, problem: problem)
    }
  }

  /// A row at its place: its name, the folder it is made in (the stack's deepest), and the mode
  /// its record gives (the permission bits; nil without a record).
  private struct Row {
    let entry: BackupExtraction.Plan.Entry
    let name: [UInt8]
    let folder: FileDescriptor
    let mode: UInt32?
    var path: [UInt8] { entry.path }
  }

  /// A call making the row that failed: a finding when the row is the cause (EEXIST: another row
  /// made the path, or a name the filesystem takes for it), else a failure of OUT, thrown.
  private func entryFailed(_ error: SystemError, comparison: NameComparison, problem: (String, Bool) -> Void) throws(Refusal) {
    if error.errno == .fileExists {
      // Where names are folded, the filesystem may take two names for one that the stack's key
      // did not (`FolderStack.claim`; ß and ss): its EEXIST says so.
      problem(comparison == .bytes ? "not written: another row already made this path"
        : "not written: another row made this path, or a name this filesystem takes for it (it \(comparison.phrase))", true)
      return
    }
    if error.errno.isCausedByEntry { problem("not written: \(error.reason)", true); return }
    throw failed(error)
  }

  /// A folder row: made (0700 until the rows leave it), given its extended attributes but
  /// appdata's own, and entered; its mode and time are set when the stack leaves it.
  private func makeFolder(_ row: Row, tree: FolderStack, container: inout BackupExtraction.Report.Container,
                          problem: (String, Bool) -> Void) throws(Refusal) {
    do {
      try Syscalls.makeDirectory(row.name, in: row.folder, mode: 0o700, displayPath: display(row.path))
    } catch {
      try entryFailed(error, comparison: tree.comparison, problem: problem)
      return
    }
    let made: FileDescriptor
    do { made = try Syscalls.open(row.name, in: row.folder, options: .directory, displayPath: display(row.path)) } catch { throw failed(error) }
    for attribute in row.entry.record?.extendedAttributes ?? [] {
      // appdata's own attribute, which proves OUT an extraction --force may replace, is
      // never taken from a manifest.
      if MarkerTable.platformAttributeName(attribute.name) == ExtractionOutput.markerName {
        problem("its extended attribute \(TerminalText.escaped(attribute.name)) was not kept: it is appdata's own", false)
        continue
      }
      do {
        try ExtendedAttributes.setValue(attribute.value, of: MarkerTable.platformAttributeName(attribute.name), on: made, displayPath: display(row.path))
      } catch {
        problem("its extended attribute \(TerminalText.escaped(attribute.name)) was not kept: \(error.reason)", false)
      }
    }
    // The stack owns it from here, and closes it when it leaves the folder.
    tree.enter(row.name, descriptor: made, setting: FolderStack.Setting(mode: row.mode ?? 0o755, time: row.entry.record?.lastModified))
    container.written.folders += 1
  }

  /// A symlink row: made as it is, or, when it resolves out of the container (`SymlinkCheck`), a
  /// file holding its target.
  private func makeSymlink(_ row: Row, comparison: NameComparison, links: SymlinkCheck, container: inout BackupExtraction.Report.Container,
                           problem: (String, Bool) -> Void) throws(Refusal) {
    let target = row.entry.record?.target ?? []
    if let why = links.verdict(row.path, target: target) {
      // Written as a file holding the target: a link out of the container is never made.
      do {
        let file = OwnedDescriptor(owning: try Syscalls.open(row.name, in: row.folder, options: .createNewFile, mode: 0o644, displayPath: display(row.path)))
        try Syscalls.writeAll(file.descriptor, target, displayPath: display(row.path))
      } catch {
        try entryFailed(error, comparison: comparison, problem: problem)
        return
      }
      problem("a symlink to '\(TerminalText.escaped(target))', which \(why): written as a file holding its target", false)
      container.written.files += 1
      return
    }
    do {
      try Syscalls.makeSymbolicLink(row.name, in: row.folder, target: target, displayPath: display(row.path))
    } catch {
      try entryFailed(error, comparison: comparison, problem: problem)
      return
    }
    if let time = row.entry.record?.lastModified {
      try? Syscalls.setTimes(row.name, in: row.folder, access: Self.fileTime(time), modification: Self.fileTime(time), displayPath: display(row.path))
    }
    container.written.symlinks += 1
  }

  /// A file row: from a backup folder, a job for the writing threads; inside an archive, made
  /// empty now, in row order, and written when the second pass meets its payload.
  private mutating func makeFile(_ row: Row, index: Int, tree: FolderStack, domain: String, containerIndex: Int,
                                 problem: (String, Bool) -> Void) throws(Refusal) {
    let folderPath = tree.path
    if backup == nil {
      if case .failure(let why) = decryptor(for: row.entry, payloadSize: nil) {
        problem("not written: \(why.message)", true)
        return
      }
      do {
        // Made empty and closed at once: the second pass opens it again.
        _ = OwnedDescriptor(owning: try Syscalls.open(row.name, in: row.folder, options: .createNewFile, mode: 0o600, displayPath: display(row.path)))
      } catch {
        try entryFailed(error, comparison: tree.comparison, problem: problem)
        return
      }
      deferred[row.entry.fileID] = Deferred(container: containerIndex, domain: domain, entry: row.entry, folder: folderPath, name: row.name)
      return
    }
    switch try startFile(row.entry, index: index, name: row.name, in: row.folder, folderPath: folderPath, path: row.path, mode: row.mode ?? 0o644) {
    case .success(let job): try writers.submit(job)
    case .failure(let why): problem("not written: \(why.message)", true)
    }
  }

  /// What a written job adds to its container's figures and findings.
  static func note(_ outcome: PayloadOutcome, in container: inout BackupExtraction.Report.Container,
                   removals: inout [(folder: [UInt8], name: [UInt8])], problem: (String, Bool) -> Void) {
    switch outcome.result {
    case .written(let bytes):
      container.written.addFile(bytes: bytes)
      if let size = outcome.manifestSize, size != bytes { container.sizeDifferences.append((outcome.path, size, bytes)) }
      if outcome.hasNoRecord { problem("its record (the manifest's MBFile) cannot be read: written with mode 0644 and no time of its own", false) }
      for warning in outcome.warnings { problem(warning, false) }
    case .notWritten(let why):
      problem("not written: \(why)", true)
    }
    if let removal = outcome.removal { removals.append(removal) }
  }

  /// The folder at `path` below the partial folder (the partial folder itself for an empty
  /// path), reached one component at a time without following a symlink, owned when it was
  /// opened here; nil when it cannot be opened.
  func folder(at path: [UInt8]) -> OwnedDescriptor? {
    if path.isEmpty { return OwnedDescriptor(borrowing: partial) }
    guard case .success(let opened) = Syscalls.openFolder(relativePath: path, below: partial) else { return nil }
    return OwnedDescriptor(owning: opened)
  }

  /// Removes files made for payloads that did not decrypt (or that an archive lacked), once
  /// nothing is being written; their folders keep the mode and time they were given.
  func removeFiles(_ removals: [(folder: [UInt8], name: [UInt8])]) {
    for removal in removals {
      guard let folder = folder(at: removal.folder) else { continue }
      let before = try? Syscalls.status(of: folder.descriptor, displayPath: "")
      try? Syscalls.setMode(folder.descriptor, 0o700, displayPath: "")
      try? Syscalls.remove(removal.name, in: folder.descriptor, isDirectory: false, displayPath: display(RelativePath.join(removal.folder, removal.name)))
      if let before {
        try? Syscalls.setMode(folder.descriptor, before.permissions, displayPath: "")
        try? Syscalls.setTimes(folder.descriptor, access: before.accessTime, modification: before.modificationTime, displayPath: "")
      }
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
    }
    // A package or a folder of containers: OUT itself is a plain folder (the partial folder
    // was made 0700 so that nobody else sees it half written).
    let setting = outSetting ?? FolderStack.Setting(mode: 0o755, time: nil)
    if let mode = setting.mode { try? Syscalls.setMode(partial, mode, displayPath: output.path) }
    if let time = setting.time { try? Syscalls.setTimes(partial, access: Self.fileTime(time), modification: Self.fileTime(time), displayPath: "") }
    backupCloser.close(backup)
    writers.close()
    if request.restore != nil {
      output.handOver(checkpoints: checkpoints)
      return
    }
    try output.putInPlace(force: request.force)
  }
}
