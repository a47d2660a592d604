import AppDataSystem
import AppDataCore
import Synchronization
/// Carries out a plan step by step, recording progress in the journal. Every step first
/// looks at the filesystem, so running it again after an interruption at any instant
/// finishes the job without moving anything twice or losing anything:
///
/// - same filesystem: `renameat2(RENAME_NOREPLACE)`; the source is either still there
///   (move it) or gone and the destination present (it was moved; mark it);
/// - across filesystems: copy into a folder of this run's own in the destination,
///   `.appdata-partial-<token>` (`OwnedArtifact`: made with a random token and a locked
///   owner record, so a leftover is removed only when its record proves a dead run made it,
///   never for its name), fsync, record `installing` with the token durably, rename the copy
///   into place without replacing, fsync, then remove the source; a rerun that finds the
///   `installing` record and no partial copy knows the rename happened and finishes the removal.
final class Migrator {
  private let container: ContainerAccess
  private let plan: MigrationPlan
  private let journal: MigrationJournal
  private let checkpoint: () -> Void
  /// How many moves are done, for the line an interrupt prints.
  private let progress: MigrationProgress?
  /// Testing only: treat every rename as crossing filesystems (EXDEV).
  private let forceCopy = Syscalls.environment("APPDATA_TEST_FORCE_COPY") == "1"
  private var touchedFolders: [[[UInt8]]] = []

  init(container: ContainerAccess, plan: MigrationPlan, journal: MigrationJournal, checkpoint: @escaping () -> Void,
       progress: MigrationProgress? = nil) {
    self.container = container
    self.plan = plan
    self.journal = journal
    self.checkpoint = checkpoint
    self.progress = progress
  }

  /// Runs every step not yet completed. Returns the entries and the errors not tied to one.
  func run() -> (entries: [MigrationReport.Entry], errors: [String], defaultsNote: String?) {
    var entries: [MigrationReport.Entry] = []
    var errors: [String] = []
    var defaultsNote: String?
    progress?.start(moves: plan.moves, completed: journal.completed)
    TestHooks.pause(at: "migrate")
    TestHooks.waitForProgress()
    for step in plan.steps {
      switch step.kind {
      case .createFolder:
        if journal.completed.contains(step.id) { continue }
        do {
          try createFolder(step)
          try journal.record("done", step: step.id, durable: false)
        } catch {
          // Later moves into this folder would fail the same way: stop here.
          errors.append("\(container.display(step.destination)): cannot create the folder: \(error.reason)")
          return (entries, errors, nil)
        }
      case .move:
        var entry = move(step)
        if entry.action == .moved || entry.action == .copied {
          do {
            try journal.record("done", step: step.id, durable: false)
          } catch {
            entry.action = .failed
            entry.message = "cannot record progress in the journal: \(error.reason)"
          }
        }
        entries.append(entry)
        progress?.moved(step)
      case .updateDefaults:
        // Only after every entry is in place: the flag says the legacy path is still in use.
        if entries.contains(where: { $0.action == .failed || $0.action == .conflict }) || !errors.isEmpty {
          defaultsNote = "\(step.key ?? "") kept: the migration is not complete"
          continue
        }
        do {
          syncTouchedFolders()
          let removed = try DefaultsPlist.removeKey(step.key ?? "", at: step.source, in: container)
          defaultsNote = removed ? "removed \(step.key ?? "") from \(container.display(step.source))"
                                 : "\(step.key ?? "") already absent from \(container.display(step.source))"
          try? journal.record("done", step: step.id, durable: false)
        } catch {
          errors.append(error.message)
        }
      }
    }
    syncTouchedFolders()
    sweepPartialCopies()
    return (entries, errors, defaultsNote)
  }

  /// Once every step ran: partial copies killed runs left in the destination folders, proven
  /// theirs by their owner records (a user's entry of a like name is never touched).
  private func sweepPartialCopies() {
    var folders: [[[UInt8]]] = []
    for step in plan.steps where step.kind == .move && !folders.contains(Array(step.destination.dropLast())) {
      folders.append(Array(step.destination.dropLast()))
    }
    for folder in folders {
      guard let opened = try? container.openFolder(folder) else { continue }
      let descriptor = OwnedDescriptor(owning: opened)
      OwnedArtifact.sweep(prefix: Self.partialPrefix, in: descriptor.descriptor)
    }
  }

  // MARK: - Steps

  private func createFolder(_ step: MigrationStep) throws(SystemError) {
    let parentPath = Array(step.destination.dropLast())
    let name = step.destination.last!
    let parent = OwnedDescriptor(owning: try container.openFolder(parentPath))
    do {
      try Syscalls.makeDirectory(name, in: parent.descriptor, mode: 0o755, displayPath: container.display(step.destination))
    } catch Errno.fileExists {
      let status = try Syscalls.status(of: name, in: parent.descriptor, displayPath: container.display(step.destination))
      guard status.isDirectory else { throw SystemError(errno: .notDirectory, operation: .createFolderOverFile, path: container.display(step.destination)) }
    }
    if step.mark { try mark(name, in: parent.descriptor, display: container.display(step.destination)) }
    try Syscalls.sync(parent.descriptor, displayPath: container.display(parentPath))
    checkpoint()
  }

  private func move(_ step: MigrationStep) -> MigrationReport.Entry {
    var entry = MigrationReport.Entry(action: .failed, source: step.source, destination: step.destination,
                                      files: step.files, bytes: step.bytes, markers: [], message: nil)
    let sourceName = step.source.last!
    let destinationName = step.destination.last!
    let sourceDisplay = container.display(step.source)
    let destinationDisplay = container.display(step.destination)
    do throws(SystemError) {
      // Both folders stay open to the end of this block (their owners close them there, after
      // the deferred discard below, which works in the destination folder).
      let sourceOwner = OwnedDescriptor(owning: try container.openFolder(Array(step.source.dropLast())))
      let sourceFolder = sourceOwner.descriptor
      let destinationOwner = OwnedDescriptor(owning: try container.openFolder(Array(step.destination.dropLast())))
      let destinationFolder = destinationOwner.descriptor
      touch(Array(step.source.dropLast()))
      touch(Array(step.destination.dropLast()))

      let sourceStatus = try statusOrNil(sourceName, in: sourceFolder, display: sourceDisplay)
      let destinationStatus = try statusOrNil(destinationName, in: destinationFolder, display: destinationDisplay)
      // The partial copy the journal names, when its owner record proves it.
      let claimed = journal.partialTokens[step.id].flatMap { OwnedArtifact.claim(prefix: Self.partialPrefix, token: $0, in: destinationFolder) }
      defer { claimed?.discard() }
      let partial: OwnedArtifact? = claimed.flatMap { claimed in
        claimed.isInPlace && (try? Syscalls.status(of: destinationName, in: claimed.descriptor, displayPath: "")) != nil ? claimed : nil
      }
      let wasInstalling = journal.installing.contains(step.id)

      switch (sourceStatus != nil, destinationStatus != nil) {
      case (true, false) where wasInstalling && partial != nil:
        // Interrupted between the durable `installing` record and the final rename.
        try install(partial!, as: destinationName, in: destinationFolder, step: step)
        try finishCopy(sourceName, in: sourceFolder, step: step)
        entry.action = .copied
      case (true, false):
        if forceCopy {
          entry.copiedBytes = try copyAcross(sourceName, from: sourceFolder, to: destinationName, in: destinationFolder, step: step)
          entry.action = .copied
        } else {
          do {
            try Syscalls.renameWithoutReplacing(sourceName, in: sourceFolder, to: destinationName, in: destinationFolder, displayPath: sourceDisplay)
            checkpoint()
            entry.action = .moved
          } catch Errno.crossDevice {
            entry.copiedBytes = try copyAcross(sourceName, from: sourceFolder, to: destinationName, in: destinationFolder, step: step)
            entry.action = .copied
          }
        }
      case (false, true):
        // Moved by an earlier, interrupted run (or its copy installed and the source removed).
        entry.action = wasInstalling ? .copied : .moved
      case (true, true) where wasInstalling && partial == nil:
        // The copy was installed; the source's removal was interrupted.
        try finishCopy(sourceName, in: sourceFolder, step: step)
        entry.action = .copied
      case (true, true):
        entry.action = .conflict
        entry.message = "\(destinationDisplay) appeared after planning; it was not replaced"
        return entry
      case (false, false):
        entry.message = "\(sourceDisplay) is gone and \(destinationDisplay) does not exist; nothing to move"
        return entry
      }

      if step.mark {
        let status = try Syscalls.status(of: destinationName, in: destinationFolder, displayPath: destinationDisplay)
        if status.kind == .symbolicLink && !MarkerTable.canMarkSymbolicLinks {
          entry.message = "a symlink: not marked (Linux stores no user attributes on links; a link carries no file data)"
        } else {
          try mark(destinationName, in: destinationFolder, display: destinationDisplay)
          entry.markers = plan.markers
        }
      }
    } catch {
      entry.action = (error.errno == .fileExists) ? .conflict : .failed
      entry.message = (error.errno == .fileExists)
        ? "\(destinationDisplay) appeared after planning; it was not replaced"
        : "\(error.path.isEmpty ? sourceDisplay : error.path): cannot \(error.operation): \(error.reason)"
    }
    return entry
  }

  /// `.appdata-partial-`: what partial copies' names start with (the token follows).
  static let partialPrefix = Array(".appdata-partial-".utf8)

  private func copyAcross(
    _ sourceName: [UInt8], from sourceFolder: FileDescriptor, to destinationName: [UInt8], in destinationFolder: FileDescriptor,
    step: MigrationStep
  ) throws(SystemError) -> UInt64 {
    let display = container.display(step.destination)
    // Partial copies of killed runs, proven theirs by their records, go; the copy is redone.
    OwnedArtifact.sweep(prefix: Self.partialPrefix, in: destinationFolder)
    // The partial folder and its record carry the do-not-back-up marker from birth, and so
    // does the copy's top entry when its destination will (else it lies in a folder that is
    // marked already): an interrupt never leaves a copy that is backed up.
    let markers = plan.markers
    let partial = try OwnedArtifact.make(.folder, prefix: Self.partialPrefix, in: destinationFolder, mode: 0o700,
                                         mark: { descriptor in
                                           for marker in markers {
                                             try? ExtendedAttributes.setValue(marker.valueToWrite, of: MarkerTable.platformName(of: marker), on: descriptor, displayPath: display)
                                           }
                                         }, displayPath: display)
    defer { partial.discard() }
    let copied: UInt64
    do {
      let markTop: ((FileDescriptor) throws(SystemError) -> Void)? = step.mark ? { (top: FileDescriptor) throws(SystemError) in
        for marker in markers {
          try ExtendedAttributes.setValue(marker.valueToWrite, of: MarkerTable.platformName(of: marker), on: top, displayPath: display)
        }
      } : nil
      copied = try TreeOperations.copy(sourceName, in: sourceFolder, to: destinationName, in: partial.descriptor,
                                       display: container.display(step.source),
                                       checkpoint: { [progress] in checkpoint(); progress?.copiedFile() },
                                       copied: { [progress] bytes in progress?.copied(bytes: bytes) },
                                       markTop: markTop)
    }
    try Syscalls.sync(partial.descriptor, displayPath: display)
    try Syscalls.sync(destinationFolder, displayPath: display)
    try journal.record("installing", step: step.id, durable: true, partialToken: Array(partial.name.dropFirst(Self.partialPrefix.count)))
    try install(partial, as: destinationName, in: destinationFolder, step: step)
    try finishCopy(sourceName, in: sourceFolder, step: step)
    return copied
  }

  /// Renames the copy out of the partial folder into place without replacing; the partial
  /// folder, then empty, goes with its record.
  private func install(_ partial: OwnedArtifact, as name: [UInt8], in folder: FileDescriptor, step: MigrationStep) throws(SystemError) {
    let display = container.display(step.destination)
    try Syscalls.renameWithoutReplacing(name, in: partial.descriptor, to: name, in: folder, displayPath: display)
    try Syscalls.sync(folder, displayPath: display)
    partial.discard()
    checkpoint()
  }

  private func finishCopy(_ sourceName: [UInt8], in sourceFolder: FileDescriptor, step: MigrationStep) throws(SystemError) {
    try TreeOperations.remove(sourceName, in: sourceFolder, display: container.display(step.source))
    try Syscalls.sync(sourceFolder, displayPath: container.display(Array(step.source.dropLast())))
    checkpoint()
  }

  /// Sets each planned marker and reads it back: atomic saves and some filesystems drop them.
  private func mark(_ name: [UInt8], in folder: FileDescriptor, display: String) throws(SystemError) {
    for marker in plan.markers {
      let attribute = MarkerTable.platformName(of: marker)
      try ExtendedAttributes.setValue(marker.valueToWrite, of: attribute, onEntry: name, in: folder, displayPath: display)
      let stored = try ExtendedAttributes.value(of: attribute, onEntry: name, in: folder, displayPath: display)
      guard let stored, marker.isExcluding(value: stored) else {
        throw SystemError(errno: .noAttribute, operation: .keepMarker(marker.rawValue), path: display)
      }
    }
  }

  private func statusOrNil(_ name: [UInt8], in folder: FileDescriptor, display: String) throws(SystemError) -> FileStatus? {
    do {
      return try Syscalls.status(of: name, in: folder, displayPath: display)
    } catch Errno.noSuchFileOrDirectory {
      return nil
    }
  }

  private func touch(_ folder: [[UInt8]]) {
    if !touchedFolders.contains(folder) { touchedFolders.append(folder) }
  }

  /// Renames are durable once their folders are synced; done once at the end, not per entry.
  private func syncTouchedFolders() {
    for folder in touchedFolders {
      guard let opened = try? container.openFolder(folder) else { continue }
      let descriptor = OwnedDescriptor(owning: opened)
      try? Syscalls.sync(descriptor.descriptor, displayPath: "")
    }
    touchedFolders.removeAll()
  }
}

/// How far a migration is, read by the command line when an interrupt stops it: the moves
/// planned and those done (a resumed one's earlier moves included).
package final class MigrationProgress: Sendable {
  private struct State {
    var done = 0, total = 0
    var files: UInt64 = 0, totalFiles: UInt64 = 0
    var bytes: UInt64 = 0, totalBytes: UInt64 = 0
    /// What the copy under way has written (across filesystems), until its move is done.
    var stepFiles: UInt64 = 0, stepBytes: UInt64 = 0
  }
  private let state = Mutex(State())

  package init() {}

  func start(moves: [MigrationStep], completed: Set<Int>) {
    state.withLock { state in
      state = State()
      state.total = moves.count
      for move in moves {
        state.totalFiles &+= move.files
        state.totalBytes &+= move.bytes
        if completed.contains(move.id) {
          state.done += 1
          state.files &+= move.files
          state.bytes &+= move.bytes
        }
      }
    }
  }

  /// A move is done (renamed, or copied and the source removed).
  func moved(_ step: MigrationStep) {
    state.withLock { state in
      state.done += 1
      state.files &+= step.files
      state.bytes &+= step.bytes
      state.stepFiles = 0
      state.stepBytes = 0
    }
  }

  /// A copy across filesystems wrote `bytes` more, or finished a file.
  func copied(bytes: UInt64) { state.withLock { $0.stepBytes &+= bytes } }
  func copiedFile() { state.withLock { $0.stepFiles &+= 1 } }

  /// Moves done, and planned.
  package var counts: (done: Int, total: Int) { state.withLock { ($0.done, $0.total) } }

  /// Files and bytes moved so far (a copy under way included), and in all.
  package var amounts: (files: UInt64, totalFiles: UInt64, bytes: UInt64, totalBytes: UInt64) {
    state.withLock { state in
      (min(state.totalFiles, state.files &+ state.stepFiles), state.totalFiles, min(state.totalBytes, state.bytes &+ state.stepBytes), state.totalBytes)
    }
  }
}
