import AppDataSystem
import AppDataCore
import Synchronization
/// `appdata migrate`: plan, pre-check, journal, move, mark, verify; or resume a journal.
public struct Migration {
  /// The report and the exit status it calls for.
  public struct Outcome: Sendable {
    public var report: MigrationReport
    public var status: ExitCode
    /// One line per problem that stopped the migration before any change (conflicts).
    public var preCheckErrors: [String]
  }

  public let rootPath: String
  public let options: MigrationOptions
  /// The folder the user named, when the container was found below it (see `ContainerAccess`).
  public var below: String?
  /// Told how many moves are done (what an interrupt's line says).
  package var progress: MigrationProgress?

  public init(rootPath: String, options: MigrationOptions) {
    self.rootPath = rootPath
    self.options = options
  }

  /// Throws when nothing could start: a failed pre-check, with nothing changed on disk.
  public func run() throws(MigrationError) -> Outcome {
    let container: ContainerAccess
    do {
      container = try ContainerAccess(container: rootPath, below: below)
    } catch {
      throw .cannotOpenContainer(container: rootPath, error)
    }
    guard Syscalls.lockExclusively(container.root) else {
      throw .alreadyRunning(container: rootPath)
    }
    let stopAfter = options.stopAfter
    let counter = CheckpointCounter(stopAfter: stopAfter)
    let checkpoint: () -> Void = { counter.reach() }
    var report = MigrationReport(
      container: Syscalls.absolutePath(rootPath), source: options.source, destination: options.destination,
      dryRun: options.dryRun, resumed: false, entries: [], errors: [], defaultsNote: nil)

    // An interrupted migration comes first: its plan is the one to finish.
    if let (plan, journal) = try MigrationJournal.load(from: container, checkpoint: checkpoint) {
      report.resumed = true
      report.source = plan.source
      report.destination = plan.destination
      if options.dryRun {
        report.entries = plan.moves.filter { !journal.completed.contains($0.id) }.map(Self.plannedEntry)
        return Outcome(report: report, status: .success, preCheckErrors: [])
      }
      return finish(plan: plan, journal: journal, container: container, report: report, checkpoint: checkpoint)
    }

    let planner = MigrationPlanner(container: container, options: options)
    if let note = try legacyPathNotInUse(planner: planner, container: container) {
      report.defaultsNote = note
      return Outcome(report: report, status: .success, preCheckErrors: [])
    }

    let plan = try planner.plan()
    report.entries = plan.skipped.map { skipped in
      MigrationReport.Entry(action: .skipped, source: skipped.source, destination: skipped.conflictWith,
                            files: skipped.files, bytes: skipped.bytes, markers: [], message: skipped.reason)
    }
    if !plan.conflicts.isEmpty && plan.onConflict == .fail {
      return refused(plan, conflictsIn: container, report: report)
    }
    if options.dryRun {
      report.entries = plan.moves.map(Self.plannedEntry) + report.entries
      return Outcome(report: report, status: .success, preCheckErrors: [])
    }
    if plan.moves.isEmpty {
      // Nothing to move is a complete migration: the legacy flag can go.
      if let key = options.defaultsKey {
        let plist = planner.defaultsPlistPath(bundleID: options.bundleID ?? planner.readBundleID())
        let removed = try DefaultsPlist.removeKey(key, at: plist, in: container)
        report.defaultsNote = removed ? "removed \(key) from \(container.display(plist))" : nil
      }
      return Outcome(report: report, status: .success, preCheckErrors: [])
    }

    try probeMarker(in: container, plan: plan)
    let journal: MigrationJournal
    do {
      journal = try MigrationJournal.create(for: plan, in: container, checkpoint: checkpoint)
    } catch {
      throw .cannotWriteJournal(container: rootPath, error)
    }
    return finish(plan: plan, journal: journal, container: container, report: report, checkpoint: checkpoint)
  }

  /// With `--defaults-key`: nil when the key is true in the app's defaults (the legacy path is in
  /// use: the migration goes on), else the note saying there is nothing to migrate.
  private func legacyPathNotInUse(planner: MigrationPlanner, container: ContainerAccess) throws(MigrationError) -> String? {
    guard let key = options.defaultsKey else { return nil }
    let bundleID = options.bundleID ?? planner.readBundleID()
    if bundleID == nil && options.defaultsPlist == nil {
      throw .noBundleID(container: rootPath)
    }
    let plist = planner.defaultsPlistPath(bundleID: bundleID)
    guard try DefaultsPlist.isTrue(key, at: plist, in: container) else {
      return "\(key) is not true in \(container.display(plist)): the legacy path is not in use, nothing to migrate"
    }
    return nil
  }

  /// `--on-conflict fail` with conflicts: nothing moves; each conflict is listed and named in
  /// one line (a dry run shows the whole plan: what would move, what stays, what stops it).
  private func refused(_ plan: MigrationPlan, conflictsIn container: ContainerAccess, report: MigrationReport) -> Outcome {
    var report = report
    report.entries += plan.conflicts.map { conflict in
      MigrationReport.Entry(action: .conflict, source: conflict.source, destination: conflict.conflictWith,
                            files: conflict.files, bytes: conflict.bytes, markers: [], message: conflict.reason)
    }
    if options.dryRun { report.entries = plan.moves.map(Self.plannedEntry) + report.entries }
    let errors = plan.conflicts.map { conflict in
      "\(container.display(conflict.conflictWith ?? [])): already exists, so \(container.display(conflict.source)) cannot move there; nothing was changed (choose --on-conflict skip, keep-both or merge)"
    }
    return Outcome(report: report, status: .usage, preCheckErrors: errors)
  }

  private func finish(plan: MigrationPlan, journal: MigrationJournal, container: ContainerAccess,
                      report: MigrationReport, checkpoint: @escaping () -> Void) -> Outcome {
    var report = report
    let migrator = Migrator(container: container, plan: plan, journal: journal, checkpoint: checkpoint, progress: progress)
    let result = migrator.run()
    report.entries = result.entries + report.entries
    report.errors = result.errors
    report.defaultsNote = result.defaultsNote
    if report.hasFailures {
      return Outcome(report: report, status: .failure, preCheckErrors: [])
    }
    do {
      try journal.finish()
    } catch {
      report.errors.append("cannot remove the journal: \(error.reason)")
      return Outcome(report: report, status: .failure, preCheckErrors: [])
    }
    return Outcome(report: report, status: .success, preCheckErrors: [])
  }

  /// Pre-checks that need the filesystem's answer: the source's folders can lose entries, and
  /// where entries land a file can be created and keeps the marker (set and removed on a probe
  /// file), so a read-only container or a filesystem without user attributes fails here,
  /// before anything changes.
  private func probeMarker(in container: ContainerAccess, plan: MigrationPlan) throws(MigrationError) {
    for move in plan.moves {
      let folder = Array(move.source.dropLast())
      guard let opened = try? container.openFolder(folder) else { continue }
      let descriptor = OwnedDescriptor(owning: opened)
      if !Syscalls.canModify(descriptor.descriptor) {
        throw .cannotMoveOut(folder: container.display(folder))
      }
    }
    var folderPath = plan.destination
    while !folderPath.isEmpty, (try? container.status(folderPath)) == nil { folderPath.removeLast() }
    let display = container.display(folderPath)
    let folder: OwnedDescriptor
    do {
      folder = OwnedDescriptor(owning: try container.openFolder(folderPath))
    } catch {
      throw .cannotOpenDestination(path: display, error)
    }
    // A probe of this run's own (`OwnedArtifact`: a random token, an owner record locked from
    // birth), never a fixed name: a user's file of any name is left alone, and a probe a run
    // killed right here left is removed by the next one when its record proves it.
    OwnedArtifact.sweep(prefix: Self.probePrefix, in: folder.descriptor)
    let probe: OwnedArtifact
    do {
      probe = try OwnedArtifact.make(.file, prefix: Self.probePrefix, in: folder.descriptor, displayPath: display)
    } catch {
      throw .cannotCreateInDestination(path: display, error)
    }
    defer { probe.discard() }
    do throws(SystemError) {
      for marker in plan.markers {
        let attribute = MarkerTable.platformName(of: marker)
        try ExtendedAttributes.setValue(marker.valueToWrite, of: attribute, on: probe.descriptor, displayPath: display)
        guard try ExtendedAttributes.value(of: attribute, on: probe.descriptor, displayPath: display) != nil else {
          throw SystemError(errno: .noAttribute, operation: .keepMarker(nil), path: display)
        }
      }
    } catch {
      throw .markerNotKept(path: display, error)
    }
  }

  /// `.appdata-marker-probe-`: the probe file's name before its token.
  static let probePrefix = Array(".appdata-marker-probe-".utf8)

  private static func plannedEntry(_ step: MigrationStep) -> MigrationReport.Entry {
    MigrationReport.Entry(action: .planned, source: step.source, destination: step.destination,
                          files: step.files, bytes: step.bytes, markers: [], message: nil)
  }
}

/// Counts checkpoints (journal records, renames, copied files) and, for crash tests only,
/// kills the process with SIGKILL at the chosen one.
final class CheckpointCounter: Sendable {
  private let stopAfter: Int?
  private let count = Atomic<Int>(0)

  init(stopAfter: Int?) { self.stopAfter = stopAfter }

  func reach() {
    let reached = count.add(1, ordering: .relaxed).newValue
    if let stopAfter, reached >= stopAfter { Syscalls.killSelf() }
  }
}
