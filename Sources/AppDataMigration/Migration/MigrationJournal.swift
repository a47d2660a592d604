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
  private let checkpoint: () -> Void

  private init(container: ContainerAccess, checkpoint: @escaping () -> Void) {
    self.container = container
    self.checkpoint = checkpoint
  }

  deinit { descriptor?.close() }

  // MARK: - Creating and loading

  /// Writes the plan atomically and opens the journal for appending.
  static func create(for plan: MigrationPlan, in container: ContainerAccess, checkpoint: @escaping () -> Void) throws(SystemError) -> MigrationJournal {
    let journal = MigrationJournal(container: container, checkpoint: checkpoint)
    let temporary = name + Array(".tmp".utf8)
    try? Syscalls.remove(temporary, in: container.root, isDirectory: false, displayPath: "")
    let file = try Syscalls.open(temporary, in: container.root, options: .createNewFile, mode: 0o644, displayPath: ContainerLayout.migrationJournalName)
    let text = encode(plan).serialized(pretty: false) + "\n"
    try file.closeAfter { () throws(SystemError) in
      try Syscalls.writeAll(file, Array(text.utf8), displayPath: ContainerLayout.migrationJournalName)
      try Syscalls.sync(file, displayPath: ContainerLayout.migrationJournalName)
    }
    try Syscalls.renameReplacing(temporary, in: container.root, to: name, in: container.root, displayPath: ContainerLayout.migrationJournalName)
    try Syscalls.sync(container.root, displayPath: container.rootPath)
    journal.descriptor = try Syscalls.open(name, in: container.root, options: .appendFile, displayPath: ContainerLayout.migrationJournalName)
    checkpoint()
    return journal
  }

  /// The unfinished migration's plan and progress, or nil when there is no journal.
  static func load(from container: ContainerAccess, checkpoint: @escaping () -> Void) throws(MigrationError) -> (MigrationPlan, MigrationJournal)? {
    let bytes: [UInt8]
    do {
      bytes = try container.readFile([name])
    } catch where error.isNotFound {
      return nil
    } catch {
      throw MigrationError("\(ContainerLayout.migrationJournalName): cannot read the journal: \(error.reason)")
    }
    let lines = bytes.split(separator: 0x0A)
    guard let first = lines.first, let plan = decode(Array(first)) else {
      throw MigrationError("\(ContainerLayout.migrationJournalName): not a journal this version of appdata can read; move it away to start over")
    }
    let journal = MigrationJournal(container: container, checkpoint: checkpoint)
    for line in lines.dropFirst() {
      // A torn last line (a crash mid-write) is ignored: its step is checked again.
      guard let record = (try? JSONParser.parse(Array(line)))?.objectValue,
            let event = record["event"]?.stringValue, let step = record["step"]?.intValue else { continue }
      if event == "done" { journal.completed.insert(step) }
      if event == "installing" { journal.installing.insert(step) }
    }
    do {
      journal.descriptor = try Syscalls.open(name, in: container.root, options: .appendFile, displayPath: ContainerLayout.migrationJournalName)
    } catch {
      throw MigrationError("\(ContainerLayout.migrationJournalName): cannot open the journal: \(error.reason)")
    }
    return (plan, journal)
  }

  // MARK: - Recording

  /// Records an event; `durable` fsyncs it before returning (needed before a step's
  /// change that a rerun could not otherwise tell apart from someone else's).
  func record(_ event: String, step: Int, durable: Bool) throws(SystemError) {
    guard let descriptor else { return }
    let line = "{\"event\":\"\(event)\",\"step\":\(step)}\n"
    try Syscalls.writeAll(descriptor, Array(line.utf8), displayPath: ContainerLayout.migrationJournalName)
    if durable { try Syscalls.sync(descriptor, displayPath: ContainerLayout.migrationJournalName) }
    if event == "done" { completed.insert(step) }
    if event == "installing" { installing.insert(step) }
    checkpoint()
  }

  /// Removes the journal once every step is done, durably.
  func finish() throws(SystemError) {
    descriptor?.close()
    descriptor = nil
    try Syscalls.remove(Self.name, in: container.root, isDirectory: false, displayPath: ContainerLayout.migrationJournalName)
    try Syscalls.sync(container.root, displayPath: container.rootPath)
  }

  // MARK: - The plan as JSON (paths as base64: names need not be UTF-8)

  static func encode(_ plan: MigrationPlan) -> JSONValue {
    func path(_ components: [[UInt8]]) -> JSONValue { .array(components.map { .string(Base64.encode($0)) }) }
    return .object([
      "appdataMigrationJournal": .integer(Int64(formatVersion)),
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

  static func decode(_ line: [UInt8]) -> MigrationPlan? {
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
    return MigrationPlan(source: source, destination: destination, into: bytes(object["into"]),
                         markers: markerNames.compactMap(Marker.init(rawValue:)), onConflict: policy,
                         steps: steps, skipped: [], conflicts: [])
  }

}
