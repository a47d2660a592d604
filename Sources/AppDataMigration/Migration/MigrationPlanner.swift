import AppDataSystem
import AppDataCore

/// Works out the plan: which top-level entries of the source move to which names.
struct MigrationPlanner {
  let container: ContainerAccess
  let options: MigrationOptions

  /// Names the system owns in Library/Caches, besides the app's own bundle-id folder.
  static func systemReason(for name: [UInt8], bundleID: String?) -> String? {
    if name.starts(with: Array("com.apple.".utf8)) { return "owned by the system (com.apple.*)" }
    if name == Array("Snapshots".utf8) { return "owned by the system (app snapshots)" }
    if let bundleID, name == Array(bundleID.utf8) { return "the app's own URL cache (\(bundleID))" }
    return nil
  }

  /// What a plan holds while it is worked out: its steps, and the entries that stay and that
  /// conflict.
  private struct Draft {
    var steps: [MigrationStep] = []
    var skipped: [SkippedEntry] = []
    var conflicts: [SkippedEntry] = []

    /// A step that moves nothing (a folder made, the defaults key updated), after the others.
    mutating func add(_ kind: MigrationStep.Kind, source: [[UInt8]] = [], destination: [[UInt8]], mark: Bool, key: String? = nil) {
      steps.append(MigrationStep(id: steps.count + 1, kind: kind, source: source, destination: destination, mark: mark, files: 0, bytes: 0, key: key))
    }
  }

  /// Where the entries land: the destination itself, or the --into folder in it; `exists` when
  /// there are names in it already to collide with.
  private enum Landing {
    case folder([[UInt8]], exists: Bool)
    /// --on-conflict skip and an existing --into folder: the plan is that the source stays.
    case sourceStays(SkippedEntry)
  }

  func plan() throws(MigrationError) -> MigrationPlan {
    let source = options.source
    let destination = options.destination
    if source.starts(with: destination) || destination.starts(with: source) {
      throw .overlap(source: display(source), destination: display(destination))
    }

    // The source must be a real folder inside the container.
    let sourceFolder = try open(source, role: "source")
    let sourceNames = try sortedNames(in: sourceFolder.descriptor, at: source)

    var draft = Draft()
    // The destination exists, or its missing folders are created (as journaled steps).
    let existingDepth = try existingDepth(of: destination)
    for depth in (existingDepth + 1)..<(destination.count + 1) where depth > existingDepth {
      draft.add(.createFolder, destination: Array(destination.prefix(depth)), mark: false)
    }
    let destinationExists = existingDepth == destination.count
    // Names are compared as the destination's filesystem compares them (a case-insensitive one
    // sees Photos and photos as one name): the deepest folder of it that exists says, as what
    // is made in it inherits its casefolding.
    let comparison = try nameComparison(of: Array(destination.prefix(existingDepth)))

    // Where entries land: the destination, or the --into folder inside it.
    var target = destination
    var targetExists = destinationExists
    let bundleID = options.bundleID ?? readBundleID()
    // With nothing to move, an existing --into folder is no conflict: a finished migration run
    // again has nothing left to do (exit 0), and nothing would go into the folder.
    if let into = options.into, sourceNames.contains(where: { staysBecause($0, bundleID: bundleID) == nil }) {
      switch try landing(into: into, destinationExists: destinationExists, comparison: comparison, draft: &draft) {
      case .sourceStays(let entry):
        return MigrationPlan(source: source, destination: destination, into: into, markers: options.markers, onConflict: options.onConflict,
                             steps: [], skipped: [entry], conflicts: [])
      case .folder(let folder, let exists):
        target = folder
        targetExists = exists
      }
    }

    try planEntries(sourceNames, into: target, targetExists: targetExists, comparison: comparison, bundleID: bundleID, draft: &draft)

    if let key = options.defaultsKey {
      draft.add(.updateDefaults, source: defaultsPlistPath(bundleID: bundleID), destination: [], mark: false, key: key)
    }
    // A plan that moves nothing needs no folders created.
    if !draft.steps.contains(where: { $0.kind == .move }) { draft.steps.removeAll() }
    for index in draft.steps.indices { draft.steps[index].id = index + 1 }
    return MigrationPlan(source: source, destination: destination, into: options.into, markers: options.markers,
                         onConflict: options.onConflict, steps: draft.steps, skipped: draft.skipped, conflicts: draft.conflicts)
  }

  /// The names in the source folder (`folder`, at `source`), in byte order.
  private func sortedNames(in folder: FileDescriptor, at source: [[UInt8]]) throws(MigrationError) -> [[UInt8]] {
    do {
      return try DirectoryStream(taking: Syscalls.reopen(folder, displayPath: display(source)), displayPath: display(source)).names()
        .sorted { $0.lexicographicallyPrecedes($1) }
    } catch {
      throw .cannotReadFolder(path: display(source), error)
    }
  }

  /// How many of the destination's leading components exist, each a folder (anything else there
  /// is refused).
  private func existingDepth(of destination: [[UInt8]]) throws(MigrationError) -> Int {
    var existingDepth = 0
    for depth in 1...destination.count {
      guard let status = try statusOrFail(Array(destination.prefix(depth))) else { break }
      guard status.isDirectory else {
        throw .destinationNotAFolder(path: display(Array(destination.prefix(depth))), isSymlink: status.kind == .symbolicLink)
      }
      existingDepth = depth
    }
    return existingDepth
  }

  /// Why an entry of the source stays where it is (the system's, or left out by --only or
  /// --skip), or nil when it is to move.
  private func staysBecause(_ name: [UInt8], bundleID: String?) -> String? {
    if let reason = Self.systemReason(for: name, bundleID: bundleID) { return reason }
    // Named as appdata's own files are (a partial copy, an owner record, a hidden output):
    // moved, it would stand in the destination where appdata looks for its own.
    if OwnedArtifact.isReserved(name) { return "named as appdata's own files are (.appdata-*, .NAME.appdata-*); left where it is" }
    if !options.only.isEmpty && !options.only.contains(where: { $0.matches(name) }) { return "not selected by --only" }
    if let glob = options.skip.first(where: { $0.matches(name) }) { return "excluded by --skip \(glob.pattern)" }
    return nil
  }

  /// The --into folder `into` in the destination, made by a step of the plan unless it is
  /// merged into. One that exists already is what --on-conflict says: a conflict (fail), the
  /// whole plan (skip), another name (keep-both), or the folder the entries merge into (merge).
  private func landing(into: [UInt8], destinationExists: Bool, comparison: NameComparison, draft: inout Draft) throws(MigrationError) -> Landing {
    let source = options.source
    let destination = options.destination
    var targetExists = destinationExists
    var name = into
    let existing = FolderNames(comparison, names: destinationExists ? try names(in: destination) : [])
    if let other = existing.existing(name) {
      name = other
      switch options.onConflict {
      case .fail:
        draft.conflicts.append(measured(SkippedEntry(source: source, reason: "the --into folder already exists", conflictWith: destination + [name])))
      case .skip:
        return .sourceStays(measured(SkippedEntry(source: source, reason: "the --into folder already exists", conflictWith: destination + [name])))
      case .keepBoth:
        name = Self.freeName(for: into, avoiding: existing.contains)
      case .merge:
        guard try statusOrFail(destination + [name])?.isDirectory == true else {
          throw .cannotMergeInto(path: display(destination + [name]))
        }
        targetExists = true
      }
    }
    let target = destination + [name]
    if !(options.onConflict == .merge && existing.contains(into)) {
      draft.add(.createFolder, destination: target, mark: true)
      targetExists = false
    }
    return .folder(target, exists: targetExists)
  }

  /// Each entry of the source: left where it is (with why), or moved into `target`; one whose
  /// name is taken there is what --on-conflict says: a conflict, left, moved under a free name,
  /// or merged.
  private func planEntries(_ sourceNames: [[UInt8]], into target: [[UInt8]], targetExists: Bool, comparison: NameComparison,
                           bundleID: String?, draft: inout Draft) throws(MigrationError) {
    var taken = FolderNames(comparison, names: targetExists ? try names(in: target) : [])
    for name in sourceNames {
      let from = options.source + [name]
      if let reason = staysBecause(name, bundleID: bundleID) {
        draft.skipped.append(measured(SkippedEntry(source: from, reason: reason)))
        continue
      }
      // With --into, the entries are marked through their folder.
      let markEach = options.into == nil
      // Where the filesystem folds names in ways a key cannot foresee (ß and ss, say), it is
      // asked: fstatat finds an entry it takes to be the same name.
      var other = taken.existing(name)
      if other == nil && comparison != .bytes && targetExists, try statusOrFail(target + [name]) != nil { other = name }
      guard let other else {
        taken.insert(name)
        try addMove(from: from, to: target + [name], mark: markEach, into: &draft.steps)
        continue
      }
      let reason = other == name ? "destination exists" : "destination exists as \(display(target + [other])) (this filesystem \(comparison.phrase))"
      switch options.onConflict {
      case .fail:
        draft.conflicts.append(measured(SkippedEntry(source: from, reason: reason, conflictWith: target + [other])))
      case .skip:
        draft.skipped.append(measured(SkippedEntry(source: from, reason: reason, conflictWith: target + [other])))
      case .keepBoth:
        let free = Self.freeName(for: name, avoiding: taken.contains)
        taken.insert(free)
        try addMove(from: from, to: target + [free], mark: markEach, into: &draft.steps)
      case .merge:
        try planMerge(from: from, to: target + [other], mark: true, comparison: comparison, into: &draft.steps)
      }
    }
  }

  /// Merges folder `from` into existing folder `to`: what is new moves, folders on both sides
  /// merge, and anything else that collides moves under a free name (kept both ways).
  private func planMerge(from: [[UInt8]], to: [[UInt8]], mark: Bool, comparison: NameComparison, into steps: inout [MigrationStep]) throws(MigrationError) {
    let fromIsFolder = try statusOrFail(from)?.isDirectory == true
    let toIsFolder = try statusOrFail(to)?.isDirectory == true
    guard fromIsFolder && toIsFolder else {
      var taken = FolderNames(comparison, names: try names(in: Array(to.dropLast())))
      for step in steps where Array(step.destination.dropLast()) == Array(to.dropLast()) {
        if let last = step.destination.last { taken.insert(last) }
      }
      try addMove(from: from, to: Array(to.dropLast()) + [Self.freeName(for: from.last!, avoiding: taken.contains)], mark: mark, into: &steps)
      return
    }
    var existing = FolderNames(comparison, names: try names(in: to))
    for name in try names(in: from).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
      if let other = existing.existing(name) {
        try planMerge(from: from + [name], to: to + [other], mark: mark, comparison: comparison, into: &steps)
      } else {
        // Two names of the source that are one name here (a case-sensitive source merged into
        // a folder that ignores case): the second moves under a free name, as a collision with
        // an existing file does.
        existing.insert(name)
        try addMove(from: from + [name], to: to + [name], mark: mark, into: &steps)
      }
    }
  }

  /// `entry` with the files and bytes its source holds (0 and 0 when it cannot be measured: a
  /// left entry is reported, never a reason to stop).
  private func measured(_ entry: SkippedEntry) -> SkippedEntry {
    var entry = entry
    if let size = try? measure(entry.source) {
      entry.files = size.files
      entry.bytes = size.bytes
    }
    return entry
  }

  private func addMove(from: [[UInt8]], to: [[UInt8]], mark: Bool, into steps: inout [MigrationStep]) throws(MigrationError) {
    let size = try measure(from)
    steps.append(MigrationStep(id: steps.count + 1, kind: .move, source: from, destination: to, mark: mark,
                               files: size.files, bytes: size.bytes, key: nil))
  }

  /// The files and bytes at `path` (a folder's whole tree), reached through descriptors.
  private func measure(_ path: [[UInt8]]) throws(MigrationError) -> (files: UInt64, bytes: UInt64) {
    let parent: OwnedDescriptor
    do {
      parent = OwnedDescriptor(owning: try container.openFolder(Array(path.dropLast())))
    } catch {
      throw .cannotOpenToMeasure(error)
    }
    do {
      return try TreeOperations.measure(path.last!, in: parent.descriptor, display: display(path))
    } catch {
      throw .cannotMeasure(error)
    }
  }

  /// `name 2.ext`, `name 3.ext`, ... (Finder's style), the first not `taken`. A name that would
  /// pass the 255 bytes a file name may have (NAME_MAX on Linux and APFS) loses the end of its
  /// stem, cut where a UTF-8 character starts (and its extension too when that alone is too
  /// long): the hostile round of issue 52 found a 255-byte name's `NAME 2` failing at its move,
  /// every rerun alike.
  static func freeName(for name: [UInt8], avoiding taken: ([UInt8]) -> Bool) -> [UInt8] {
    var base = name
    var suffix: [UInt8] = []
    if let dot = name.lastIndex(of: 0x2E), dot > 0 {
      base = Array(name[..<dot])
      suffix = Array(name[dot...])
    }
    var number = 2
    while true {
      let marker = Array(" \(number)".utf8)
      var stem = base
      var ending = suffix
      if stem.count + marker.count + ending.count > maximumNameBytes {
        if marker.count + ending.count >= maximumNameBytes { stem = base + suffix; ending = [] }
        var cut = max(0, min(stem.count, maximumNameBytes - marker.count - ending.count))
        while cut > 0 && cut < stem.count && stem[cut] & 0xC0 == 0x80 { cut -= 1 }
        stem = Array(stem[..<cut])
      }
      let candidate = stem + marker + ending
      if !taken(candidate) { return candidate }
      number += 1
    }
  }

  /// The most bytes a file name may have (NAME_MAX: Linux's filesystems and APFS alike).
  static let maximumNameBytes = 255

  // MARK: - Helpers

  func readBundleID() -> String? {
    guard let bytes = try? container.readFile([Array(ContainerLayout.metadataFileName.utf8)]),
          let plist = PropertyListFile.dictionary(bytes)
    else { return nil }
    return plist["MCMMetadataIdentifier"]?.stringValue
  }

  func defaultsPlistPath(bundleID: String?) -> [[UInt8]] {
    options.defaultsPlist ?? [Array("Library".utf8), Array("Preferences".utf8), Array("\(bundleID ?? "unknown").plist".utf8)]
  }

  private func open(_ components: [[UInt8]], role: String) throws(MigrationError) -> OwnedDescriptor {
    do {
      return OwnedDescriptor(owning: try container.openFolder(components))
    } catch {
      throw .cannotOpen(path: display(components), role: role, error)
    }
  }

  /// How the filesystem of the folder at `components` compares names.
  private func nameComparison(of components: [[UInt8]]) throws(MigrationError) -> NameComparison {
    let folder = try open(components, role: "folder")
    return NameComparison.of(folder.descriptor)
  }

  private func names(in components: [[UInt8]]) throws(MigrationError) -> [[UInt8]] {
    let folder = try open(components, role: "folder")
    do {
      return try DirectoryStream(taking: folder.release(), displayPath: display(components)).names()
    } catch {
      throw .cannotReadFolder(path: display(components), error)
    }
  }

  private func statusOrFail(_ components: [[UInt8]]) throws(MigrationError) -> FileStatus? {
    do {
      return try container.status(components)
    } catch {
      throw .cannotOpen(path: display(components), role: "path", error)
    }
  }

  private func display(_ components: [[UInt8]]) -> String { container.display(components) }
}
