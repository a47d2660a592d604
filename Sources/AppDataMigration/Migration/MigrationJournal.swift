import AppDataSystem
import AppDataCore

/// The journal at `<container>/.appdata-migration.journal`: the plan on its first line,
/// written atomically (temporary file, fsync, rename, fsync of the root) before the first
/// change, then one line per completed event. A rerun that finds it finishes the plan.
/// The journal is a record of intent; each step still checks the filesystem, so a lost
/// (unsynced) last line only means a step is checked again.
final class MigrationJournal {
  static let name = Array(ContainerLayout.migrationJournalName.utf8)
  static let formatVersion = 1

  private let container: ContainerAccess
  private var descriptor: FileDescriptor?
  /// Steps whose every change is done.
  private(set) var completed: Set<Int> = []
  /// Cross-filesystem steps whose copy was complete and synced before its final rename.
  private(set) var installing: Set<Int> = []
  /// Their partial copies' tokens (`OwnedArtifact`), as recorded.
  private(set) var partialTokens: [Int: [UInt8]] = [:]
  private let checkpoint: () -> Void

  private init(container: ContainerAccess, checkpoint: @escaping () -> Void) {
    self.container = container
    self.checkpoint = checkpoint
  }

  deinit { descriptor?.close() }

  // MARK: - Creating and loading

  /// Writes the plan atomically and opens the journal for appending. The plan is written into
  /// a hidden file of this run's own (`OwnedArtifact`), with the container's identity and the
  /// file's own (device and inode), then renamed to the journal's name without replacing: a
  /// rerun trusts a journal only when it is that same file in that same container, so one
  /// copied in, extracted from a backup or planted is never taken for a plan.
  static func create(for plan: MigrationPlan, in container: ContainerAccess, checkpoint: @escaping () -> Void) throws(SystemError) -> MigrationJournal {
    let journal = MigrationJournal(container: container, checkpoint: checkpoint)
    let display = ContainerLayout.migrationJournalName
    OwnedArtifact.sweep(prefix: temporaryPrefix, in: container.root)
    let file = try OwnedArtifact.make(.file, prefix: temporaryPrefix, in: container.root, mode: 0o644, displayPath: display)
    let rootIdentity = try Syscalls.status(of: container.root, displayPath: container.rootPath).identity
    let text = encode(plan, container: rootIdentity, journal: file.identity).serialized(pretty: false) + "\n"
    do {
      try Syscalls.writeAll(file.descriptor, Array(text.utf8), displayPath: display)
      try Syscalls.sync(file.descriptor, displayPath: display)
      try Syscalls.renameWithoutReplacing(file.name, in: container.root, to: name, in: container.root, displayPath: display)
    } catch {
      file.discard()
      throw error
    }
    file.relinquish()
    try Syscalls.sync(container.root, displayPath: container.rootPath)
    journal.descriptor = try Syscalls.open(name, in: container.root, options: .appendFile, displayPath: display)
    checkpoint()
    return journal
  }

  /// `.appdata-migration.journal.`: the hidden file a run writes the plan into before renaming it.
  static let temporaryPrefix = Array((ContainerLayout.migrationJournalName + ".").utf8)

  /// The unfinished migration's plan and progress, or nil when there is no journal. A journal
  /// is data until proven a plan: it must be this user's regular file, the very file this
  /// container's run wrote (the identities it records), and every step's path must be plain
  /// components below the plan's source and destination. Anything else is an error, and
  /// nothing is changed.
  static func load(from container: ContainerAccess, checkpoint: @escaping () -> Void) throws(MigrationError) -> (MigrationPlan, MigrationJournal)? {
    let display = ContainerLayout.migrationJournalName
    let opened: FileDescriptor
    do {
      opened = try container.open([name], options: .readMaybeFile)
    } catch Errno.noSuchFileOrDirectory {
      return nil
    } catch {
      throw .cannotReadJournal(path: display, error)
    }
    let bytes: [UInt8]
    let status: FileStatus
    let rootIdentity: FileIdentity
    do {
      let file = OwnedDescriptor(owning: opened)  // closed when this block ends
      status = try Syscalls.status(of: file.descriptor, displayPath: display)
      rootIdentity = try Syscalls.status(of: container.root, displayPath: container.rootPath).identity
      guard status.kind == .regular else {
        throw MigrationError.journalNotAFile(path: display)
      }
      bytes = try Syscalls.readUpTo(file.descriptor, (64 << 20) + 1, displayPath: display)
    } catch let error as MigrationError {
      throw error
    } catch let error as SystemError {
      throw .cannotReadJournal(path: display, error)
    } catch {
      throw .cannotReadJournal(path: display, nil)
    }
    let lines = bytes.split(separator: 0x0A)
    guard bytes.count <= 64 << 20, let first = lines.first, let (plan, identities) = decode(Array(first)) else {
      throw .journalNotReadable(path: display)
    }
    guard status.owner == Syscalls.effectiveUserID, identities.container == rootIdentity, identities.journal == status.identity else {
      throw .journalNotThisContainers(path: display)
    }
    guard isValid(plan) else {
      throw .journalLeavesThePlan(path: display)
    }
    let journal = MigrationJournal(container: container, checkpoint: checkpoint)
    for line in lines.dropFirst() {
      // A torn last line (a crash mid-write) is ignored: its step is checked again.
      guard let record = (try? JSONParser.parse(Array(line)))?.objectValue,
            let event = record["event"]?.stringValue, let step = record["step"]?.intValue else { continue }
      if event == "done" { journal.completed.insert(step) }
      if event == "installing" {
        journal.installing.insert(step)
        if let token = record["partial"]?.stringValue { journal.partialTokens[step] = Array(token.utf8) }
      }
    }
    do {
      journal.descriptor = try container.open([name], options: .appendFile)
    } catch {
      throw .cannotOpenJournal(path: display, error)
    }
    return (plan, journal)
  }

  /// Every path of the plan is plain components (`Beneath.isPlainName`); each move takes an
  /// entry below the source to somewhere below the destination, each folder made is below the
  /// destination, and the defaults plist is below Library/Preferences.
  static func isValid(_ plan: MigrationPlan) -> Bool {
    func plain(_ path: [[UInt8]]) -> Bool { !path.isEmpty && path.count <= RelativePath.maximumComponents && path.allSatisfy(Beneath.isPlainName) }
    func below(_ path: [[UInt8]], _ top: [[UInt8]]) -> Bool { path.count > top.count && Array(path.prefix(top.count)) == top }
    guard plain(plan.source), plain(plan.destination), plan.into.map({ Beneath.isPlainName($0) }) ?? true,
          !below(plan.destination, plan.source) && !below(plan.source, plan.destination) && plan.source != plan.destination else { return false }
    for step in plan.steps {
      switch step.kind {
      case .move:
        guard plain(step.source), plain(step.destination), below(step.source, plan.source), below(step.destination, plan.destination) else { return false }
      case .createFolder:
        guard plain(step.destination), step.destination == plan.destination || below(step.destination, plan.destination) else { return false }
      case .updateDefaults:
        guard plain(step.source), below(step.source, [Array("Library".utf8), Array("Preferences".utf8)]) else { return false }
      }
    }
    return true
  }

  // MARK: - Recording

  /// Records an event; `durable` fsyncs it before returning (needed before a step's
  /// change that a rerun could not otherwise tell apart from someone else's).
  func record(_ event: String, step: Int, durable: Bool, partialToken: [UInt8]? = nil) throws(SystemError) {
    guard let descriptor else { return }
    let partial = partialToken.map { ",\"partial\":\"\(String(decoding: $0, as: UTF8.self))\"" } ?? ""
    let line = "{\"event\":\"\(event)\",\"step\":\(step)\(partial)}\n"
    try Syscalls.writeAll(descriptor, Array(line.utf8), displayPath: ContainerLayout.migrationJournalName)
    if durable { try Syscalls.sync(descriptor, displayPath: ContainerLayout.migrationJournalName) }
    if event == "done" { completed.insert(step) }
    if event == "installing" {
      installing.insert(step)
      partialTokens[step] = partialToken
    }
    checkpoint()
  }

  /// Removes the journal once every step is done, durably.
  func finish() throws(SystemError) {
    // Only the journal this run has open: a file that took its name meanwhile stays.
    let mine = descriptor.flatMap { try? Syscalls.status(of: $0, displayPath: "").identity }
    descriptor?.close()
    descriptor = nil
    guard let mine, (try? Syscalls.status(of: Self.name, in: container.root, displayPath: ""))?.identity == mine else { return }
    try Syscalls.remove(Self.name, in: container.root, isDirectory: false, displayPath: ContainerLayout.migrationJournalName)
    try Syscalls.sync(container.root, displayPath: container.rootPath)
  }

  // MARK: - The plan as JSON (paths as base64: names need not be UTF-8)

  static func encode(_ plan: MigrationPlan, container: FileIdentity, journal: FileIdentity) -> JSONValue {
    func identity(_ value: FileIdentity) -> JSONValue { .object(["device": .unsigned(value.device), "inode": .unsigned(value.inode)]) }
    func path(_ components: [[UInt8]]) -> JSONValue { .array(components.map { .string(Base64.encode($0)) }) }
    return .object([
      "appdataMigrationJournal": .integer(Int64(formatVersion)),
      "container": identity(container),
      "journal": identity(journal),
      "source": path(plan.source),
      "destination": path(plan.destination),
      "into": plan.into.map { .string(Base64.encode($0)) } ?? .null,
      "markers": .array(plan.markers.map { .string($0.rawValue) }),
      "onConflict": .string(plan.onConflict.rawValue),
      "steps": .array(plan.steps.map { step in
        .object([
          "id": .integer(Int64(step.id)),
          "kind": .string(step.kind.rawValue),
          "source": path(step.source),
          "destination": path(step.destination),
          "mark": .bool(step.mark),
          "files": .unsigned(step.files),
          "bytes": .unsigned(step.bytes),
          "key": step.key.map { .string($0) } ?? .null,
        ])
      }),
    ])
  }

  static func decode(_ line: [UInt8]) -> (MigrationPlan, (container: FileIdentity, journal: FileIdentity))? {
    guard let object = (try? JSONParser.parse(line))?.objectValue,
          object["appdataMigrationJournal"]?.intValue == formatVersion else { return nil }
    func bytes(_ value: JSONValue?) -> [UInt8]? {
      value?.stringValue.flatMap { Base64.decode(Array($0.utf8)) }
    }
    func path(_ value: JSONValue?) -> [[UInt8]]? {
      guard let items = value?.arrayValue else { return nil }
      let decoded = items.compactMap(bytes)
      return decoded.count == items.count ? decoded : nil
    }
    func identity(_ value: JSONValue?) -> FileIdentity? {
      guard let object = value?.objectValue, let device = object["device"]?.unsignedValue,
            let inode = object["inode"]?.unsignedValue else { return nil }
      return FileIdentity(device: device, inode: inode)
    }
    guard let containerIdentity = identity(object["container"]), let journalIdentity = identity(object["journal"]) else { return nil }
    guard let source = path(object["source"]), let destination = path(object["destination"]),
          let markerNames = object["markers"]?.arrayValue?.compactMap(\.stringValue),
          let policyName = object["onConflict"]?.stringValue,
          let policy = MigrationOptions.ConflictPolicy(rawValue: policyName),
          let stepObjects = object["steps"]?.arrayValue else { return nil }
    var steps: [MigrationStep] = []
    for value in stepObjects {
      guard let item = value.objectValue, let id = item["id"]?.intValue, let kindName = item["kind"]?.stringValue,
            let kind = MigrationStep.Kind(rawValue: kindName),
            let stepSource = path(item["source"]), let stepDestination = path(item["destination"]),
            let mark = item["mark"]?.boolValue else { return nil }
      steps.append(MigrationStep(
        id: id, kind: kind, source: stepSource, destination: stepDestination, mark: mark,
        files: item["files"]?.unsignedValue ?? 0, bytes: item["bytes"]?.unsignedValue ?? 0,
        key: item["key"]?.stringValue))
    }
    let plan = MigrationPlan(source: source, destination: destination, into: bytes(object["into"]),
                             markers: markerNames.compactMap(Marker.init(rawValue:)), onConflict: policy,
                             steps: steps, skipped: [], conflicts: [])
    return (plan, (containerIdentity, journalIdentity))
  }

}
