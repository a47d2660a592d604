import AppDataSystem
import AppDataCore
/// Containers that are folders on disk (a container root, an `.xcappdata`'s `AppData`, the
/// containers of a Simulator device or a folder of containers), walked together in one walk.
struct FolderSource: ContainerSource {
  let source: String
  /// PATH as typed: every container root starts with it, and is opened below it.
  let base: String
  let isCollection: Bool
  let containers: [ContainerRef]

  func folders() throws(Refusal) -> [ContainerRef] { containers }

  var identities: [FileIdentity?] { containers.map { Syscalls.identity(ofPath: $0.root) } }

  func excluding(_ seen: Set<FileIdentity>) -> (any ContainerSource)? {
    let kept = containers.filter { container in Syscalls.identity(ofPath: container.root).map { !seen.contains($0) } ?? true }
    if kept.count == containers.count { return self }
    return kept.isEmpty ? nil : FolderSource(source: source, base: base, isCollection: isCollection, containers: kept)
  }

  func audit(_ request: AuditRequest) throws(Refusal) -> AuditOutcome {
    try Self.refuseBackupOptions(request, path: base)
    let selected = containers.filter { request.filter?.matches($0.id) ?? true }
    let options = selected.map { request.options($0.id) }
    let layouts = selected.map { ContainerLayout.forKind($0.kind) }
    let tags = selected.map { request.tagsLines ? NDJSONTag(container: Syscalls.absolutePath($0.root), id: $0.id) : nil }
    // One walk over every container: their folders share the threads.
    var walked = Walker.walk(
      roots: zip(selected, layouts).map { Walker.Root(path: $0.root, layout: $1, below: base) },
      jobs: request.options(nil).jobs, startingWith: request.options(nil).jobsAreFixed ? nil : AuditOptions.startingJobs,
      progress: request.progress
    ) { index in
      AuditAccumulator(options: options[index], layout: layouts[index], sink: request.entrySink, tag: tags[index])
    }
    var reports: [AuditReport] = []
    for (index, container) in selected.enumerated() {
      let path = Syscalls.absolutePath(container.root)
      var report: AuditReport
      let result = walked[index]
      walked[index] = .success([])  // the report takes the accumulators' listings: none kept here
      switch consume result {
      case .success(var visitors):
        if !visitors.isEmpty { for finding in container.identityFindings { visitors[0].note(finding) } }
        report = Auditor.report(from: visitors, options: options[index], layout: layouts[index], container: path,
                                entrySink: request.entrySink, tag: tags[index])
        // A walk meets each path once, from its folder's listing.
        report.entries?.pathsAreUnique = true
      case .failure(let error):
        // One container of many that cannot be opened is a finding; the others are audited.
        guard isCollection else {
          throw Refusal(error.errno == .noSuchFileOrDirectory ? .notFound : .unreadable, path: error.path, message: TerminalText.escaped(error.description))
        }
        report = AuditReport(container: path, categories: [:], directories: 0, maxFileSize: options[index].maxFileSize,
                             maxBackupSize: options[index].maxBackupSize, findings: [
                               Finding(rule: .unreadable, path: Array(".".utf8), message: "cannot \(error.action): \(error.reason)", bytes: nil),
                             ], largest: [], entries: nil)
      }
      report.id = container.id
      report.kind = container.kind
      report.name = container.name
      reports.append(report)
    }
    let kept = reports.filter { request.filter?.matches($0.id) ?? true }
    return AuditOutcome(reports: kept, available: containers.map(\.name), isCollection: isCollection)
  }
}

extension FolderSource {
  /// `--verify` and `--all-domains` read a device backup's manifest; elsewhere they are a mistake.
  static func refuseBackupOptions(_ request: AuditRequest, path: String) throws(Refusal) {
    if request.verify || request.allDomains {
      throw Refusal(.notAnInput, path: path, "not a device backup; --verify and --all-domains apply to device backups")
    }
  }
}

/// Containers inside an archive, read in one pass without extracting it (`ArchiveAuditor`).
struct ArchiveSource: ContainerSource, BackupHolder {
  let source: String
  let path: String
  let root: [[UInt8]]?
  let maximumBytes: UInt64?
  let maximumManifestBytes: UInt64?
  let limits: InputLimits
  /// Whether the archive holds a folder of containers; known once it is read.
  var isCollection: Bool { false }

  var identities: [FileIdentity?] { [Syscalls.identity(ofPath: path)] }
  func excluding(_ seen: Set<FileIdentity>) -> (any ContainerSource)? { wholeExcluding(seen) }

  /// The device backups in the archive, read as `audit` reads them (plists and Manifest.db
  /// into memory, within the archive's limits); nothing else is extracted.
  func deviceBackups() throws(Refusal) -> [BackupSource] {
    var auditor = ArchiveAuditor(archivePath: path)
    auditor.root = root
    if let maximumBytes { auditor.maximumBytes = maximumBytes }
    if let maximumManifestBytes { auditor.maximumManifestBytes = maximumManifestBytes }
    auditor.maximumNameBytes = limits.maximumNameBytes
    let contents: ArchiveAuditor.Contents<IgnoringVisitor>
    do {
      contents = try auditor.run { _ in IgnoringVisitor() }
    } catch {
      throw Refusal(error.cause, path: path, TerminalText.escaped(error.message))
    }
    try limits.checkBackups(contents.backups.count, in: path)
    var found: [BackupSource] = []
    for backup in contents.backups {
      found.append(BackupSource(source: backup.path, folderPath: backup.path, manifest: try BackupManifest.load(backup)))
    }
    return found
  }

  func folders() throws(Refusal) -> [ContainerRef] {
    // Only what libarchive reads as an archive is called one (issue 41: notes.txt was "an archive").
    if let backup = ArchiveAuditor.backupFolder(holding: path) {
      throw Refusal(.notAnInput, path: path, "is a file of a device backup, which appdata does not change; to work on an app's data, 'appdata extract \(TerminalText.escaped(backup)) --app ID' makes a container of it")
    }
    guard ArchiveAuditor.isArchive(path) else {
      throw Refusal(.notAnInput, path: path, "is a file, not a container folder; give the container's folder (the one holding Documents, Library and tmp), an .xcappdata package or a Simulator device")
    }
    throw Refusal(.notAnInput, path: path, "is an archive; appdata changes containers only in folders: extract it first (with 'tar --xattrs' or 'ditto -x -k' on a Mac)")
  }

  func audit(_ request: AuditRequest) throws(Refusal) -> AuditOutcome {
    var auditor = ArchiveAuditor(archivePath: path)
    auditor.root = root
    if let maximumBytes { auditor.maximumBytes = maximumBytes }
    if let maximumManifestBytes { auditor.maximumManifestBytes = maximumManifestBytes }
    auditor.maximumNameBytes = limits.maximumNameBytes
    auditor.streams = request.entrySink != nil
    auditor.optionsDependOnID = request.optionsDependOnID
    auditor.recordsStoredFiles = request.verify
    let contents: ArchiveAuditor.Contents<AuditAccumulator>
    do {
      contents = try auditor.run { root in
        AuditAccumulator(options: request.options(root.id), layout: root.layout, sink: root.streams ? request.entrySink : nil,
                         tag: request.tagsLines ? NDJSONTag(container: root.container, id: root.id) : nil)
      }
    } catch {
      throw Refusal(error.cause, path: path, TerminalText.escaped(error.message))
    }
    if contents.backups.isEmpty { try FolderSource.refuseBackupOptions(request, path: path) }
    let containers = contents.containers
    let isCollection = containers.count > 1 || containers.contains(where: \.isInCollection)
    let reports = containers.map { found in
      var accumulator = found.visitor
      accumulator.flushStream()
      // The baseline is matched by id, known only now; limits and budgets by id were known
      // before counting (a first pass found the ids when the policy names any).
      var options = accumulator.options
      options.baseline = request.options(found.id).baseline
      var report = Auditor.report(from: [accumulator], options: options, layout: found.layout, container: found.container,
                                  entrySink: request.entrySink, tag: accumulator.tag)
      report.id = found.id
      report.kind = found.kind
      report.name = found.name
      report.archive = Syscalls.absolutePath(path)
      return report
    }
    let kept = reports.filter { request.filter?.matches($0.id) ?? true }
    var outcome = AuditOutcome(reports: kept, available: containers.map(\.name), isCollection: isCollection)
    if !containers.isEmpty && !contents.hasAttributes { outcome.notices.append(Self.noAttributesNotice(path)) }
    guard !contents.backups.isEmpty else { return outcome }
    // Device backups in the archive, read from memory as their folders would be read from disk:
    // one alone is audited as a backup folder is, several as a folder of backups.
    try limits.checkBackups(contents.backups.count, in: path)
    let parts = contents.backups.map { backup in
      SourceGroup.Part.backup(backup, path: backup.path, folderPath: backup.path, name: backup.name)
    }
    if containers.isEmpty && parts.count == 1 {
      switch parts[0] {
      case .source(let backup, _): return try backup.audit(request)
      case .refusedBackup(_, _, let refusal): throw refusal
      }
    }
    var group = SourceGroup(source: source, parts: parts)
    group.refusesWhenNothingRead = containers.isEmpty
    let found = try group.audit(request)
    outcome.reports += found.reports
    outcome.backups = found.backups
    outcome.available += found.available
    outcome.isCollection = true
    return outcome
  }
}

/// A visitor that keeps nothing: reading an archive only for the backups it holds.
struct IgnoringVisitor: EntryVisitor {
  mutating func visit(_ entry: WalkedEntry) {}
  mutating func failed(path: [UInt8], error: SystemError) {}
  mutating func note(_ finding: Finding) {}
}

extension ArchiveSource {
  /// Said once for an archive of containers with no extended attribute at all (issue 51): GNU
  /// `tar czf` keeps none without `--xattrs`, and every marker is then lost without a word.
  static func noAttributesNotice(_ archive: String) -> String {
    "\(TerminalText.escaped(archive)): the archive holds no extended attributes at all, so its backup-exclusion markers cannot be known"
      + " (every file in a backed-up location is counted as backed up): either no file had any, or the tool that made it dropped them."
      + " To keep them, make it with 'tar --xattrs' (GNU tar), or on a Mac with its tar (bsdtar) or 'ditto -c -k --sequesterRsrc'"
  }
}
