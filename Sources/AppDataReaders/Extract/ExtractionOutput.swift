import AppDataSystem
import AppDataCore
/// OUT, and the hidden folder a run builds it in (`BackupExtraction`): which OUT may be written
/// or replaced, a partial folder of the run's own (`OwnedArtifact`: a random token in its name
/// and an owner record beside it, locked from before the folder exists, so the next run removes
/// it only when the record proves the run that made it is gone), and putting it in place.
///
/// What `--force` may replace is proven, not assumed: an earlier extraction, which carries
/// `markerName` on its own folder (set on the partial folder the moment it is made, so nothing
/// else holds it: a backup, a user's folder or a container copied from a device never do), or an
/// empty folder. Never the backup, a folder holding it, or a folder inside it, with or without
/// `--force`.
final class ExtractionOutput {
  /// The extended attribute on OUT itself that says appdata extract made it (`user.appdata.extract`
  /// on Linux, `appdata.extract` on macOS). A manifest's attributes never reach OUT's own folder.
  static let markerName = MarkerTable.platformAttributeName("appdata.extract")
  static let markerValue = Array("1".utf8)

  /// OUT as typed, for messages; and normalised (no doubled or trailing `/`), for everything else.
  let typed: String
  let path: String
  let parent: FileDescriptor
  let name: [UInt8]
  /// The partial folder, its record and its lock.
  let artifact: OwnedArtifact
  var partialName: [UInt8] { artifact.name }
  var partial: FileDescriptor { artifact.descriptor }
  let partialIdentity: FileIdentity
  private var isClosed = false
  /// Restore's partial folder (`RestoreHandoff`): made beside the container it replaces, in a
  /// folder the restore keeps open (this value never closes it), and handed over, not renamed.
  private let handoff: RestoreHandoff?
  /// Set when the OUT that `--force` replaced could not be removed (it keeps its owner record,
  /// so the next run's sweep removes it).
  private(set) var leftAside: [UInt8]?

  /// `.OUT.appdata-extract-partial-`: what every run's partial folder for OUT starts with (OUT's
  /// name cut to 180 bytes, so the whole and its owner record stay names Linux takes).
  static func partialPrefix(of name: [UInt8]) -> [UInt8] { [0x2E] + name.prefix(180) + Array(".appdata-extract-partial-".utf8) }

  /// `path` without doubled slashes or a trailing one (`out//` is `out`, `/` stays `/`).
  static func normalized(_ path: String) -> String {
    var bytes: [UInt8] = []
    for byte in path.utf8 where !(byte == 0x2F && bytes.last == 0x2F) { bytes.append(byte) }
    while bytes.count > 1 && bytes.last == 0x2F { bytes.removeLast() }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Checks OUT against the backup and `force`, removes partial folders killed runs left, and
  /// makes this run's. Nothing is changed when a check refuses.
  init(output typed: String, force: Bool, backupPath: String) throws(Refusal) {
    handoff = nil
    self.typed = typed
    path = Self.normalized(typed)
    let bytes = Array(path.utf8)
    let components = RelativePath.components(bytes)
    guard let last = components.last, last != [0x2E], last != [0x2E, 0x2E] else {
      throw Refusal(.cannotWrite, path: typed, "not a name for the output (give OUT a name of its own)")
    }
    name = last
    let parentPath = Syscalls.folderPart(of: bytes)
    // Closed when a check below refuses or the partial folder cannot be made; then this value
    // owns it (`closeParent`).
    let parentOwner: OwnedDescriptor
    do {
      parentOwner = OwnedDescriptor(owning: try Syscalls.openDirectory(atPath: parentPath))
    } catch {
      throw Refusal(.cannotWrite, path: parentPath, "cannot open the folder OUT goes in: \(error.reason)")
    }
    let parent = parentOwner.descriptor
    let existing = try? Syscalls.status(of: last, in: parent, displayPath: typed)
    try Self.checkApart(parent: parent, existing: existing, backupPath: backupPath, output: typed)
    if let existing { try Self.checkReplaceable(existing, name: last, in: parent, force: force, output: typed) }
    Self.removeLeftovers(of: last, in: parent)
    // This run's partial folder: a name no other run has, its owner record locked before the
    // folder exists and for as long as the run lives.
    do {
      artifact = try OwnedArtifact.make(.folder, prefix: Self.partialPrefix(of: last), in: parent, mode: 0o700,
                                        displayPath: parentPath)
    } catch {
      throw Refusal(.cannotWrite, path: parentPath, "cannot create the output there: \(error.reason)")
    }
    self.parent = parentOwner.release()
    partialIdentity = artifact.identity
    try? ExtendedAttributes.setValue(Self.markerValue, of: Self.markerName, on: artifact.descriptor, displayPath: typed)
  }

  /// OUT is not the backup, does not lie inside it and does not hold it: both resolved fully
  /// first (realpath(3) of BACKUP, and of OUT's folder with OUT's name), so a symlink on either
  /// side hides nothing; then compared by path and by identity.
  private static func checkApart(parent: FileDescriptor, existing: FileStatus?, backupPath: String, output: String) throws(Refusal) {
    guard let backup = Syscalls.identity(ofPath: backupPath) else { return }
    let backupName = TerminalText.escaped(backupPath)
    let resolvedBackup = Syscalls.absolutePath(backupPath)
    let resolvedOut = Syscalls.absolutePath(Syscalls.folderPart(of: Array(normalized(output).utf8)))
      + "/" + String(decoding: RelativePath.components(Array(normalized(output).utf8)).last ?? [], as: UTF8.self)
    func isBelow(_ path: String, _ top: String) -> Bool { path == top || path.hasPrefix(top == "/" ? "/" : top + "/") }
    if let existing, existing.identity == backup || resolvedOut == resolvedBackup {
      throw Refusal(.conflict, path: output, "is the backup \(backupName); appdata extract never writes there")
    }
    if Syscalls.isAncestor(backup, ofFolder: parent) || isBelow(resolvedOut, resolvedBackup) {
      throw Refusal(.conflict, path: output, "lies inside the backup \(backupName); appdata extract never writes there")
    }
    var holds = isBelow(resolvedBackup, resolvedOut)
    if !holds, let existing, existing.isDirectory {
      // The backup's own folder (or the backup itself, a folder), reached through every link.
      let holder = (try? Syscalls.status(ofPath: resolvedBackup))?.isDirectory == true ? resolvedBackup
        : Syscalls.folderPart(of: Array(resolvedBackup.utf8))
      if let opened = try? Syscalls.openDirectory(atPath: holder) {
        let folder = OwnedDescriptor(owning: opened)
        holds = Syscalls.isAncestor(existing.identity, ofFolder: folder.descriptor)
      }
    }
    if holds {
      throw Refusal(.conflict, path: output, "holds the backup \(backupName); appdata extract never writes over it")
    }
  }

  /// What `--force` may replace: a folder of this user's carrying the marker, or an empty folder
  /// of this user's (another user's folder is never appdata's own).
  static func isReplaceable(_ folder: FileDescriptor) -> Bool {
    guard (try? Syscalls.status(of: folder, displayPath: ""))?.owner == Syscalls.effectiveUserID else { return false }
    if let value = try? ExtendedAttributes.value(of: markerName, on: folder, displayPath: ""), value == markerValue { return true }
    return Syscalls.firstEntry(of: folder) == nil
  }

  private static func checkReplaceable(_ existing: FileStatus, name: [UInt8], in parent: FileDescriptor, force: Bool, output: String) throws(Refusal) {
    let out = TerminalText.escaped(output)
    let rule = "--force replaces only an earlier appdata extract (its folder carries the extended attribute \(markerName)) or an empty folder"
    var what: String
    var replaceable = false
    switch existing.kind {
    case .directory:
      guard let opened = try? Syscalls.open(name, in: parent, options: .directory, displayPath: output) else {
        throw Refusal(.conflict, "\(out): already exists and cannot be opened; appdata extract never writes over it")
      }
      let folder = OwnedDescriptor(owning: opened)
      replaceable = isReplaceable(folder.descriptor)
      let first = Syscalls.firstEntry(of: folder.descriptor).map { TerminalText.escaped(RelativePath.display($0)) } ?? ""
      what = "holds what appdata did not make ('\(first)')"
    case .symbolicLink: what = "is a symlink"
    case .regular: what = "is a file"
    case .other: what = "is neither a file nor a folder"
    }
    if !force {
      throw Refusal(.conflict, "\(out): already exists; appdata extract never writes over it" + (replaceable ? " (--force replaces it once the new one is complete)" : ""))
    }
    if !replaceable { throw Refusal(.conflict, "\(out): \(what); \(rule)") }
  }

  /// Removes the partial folders of runs that were killed: those whose owner record proves it
  /// (`OwnedArtifact.sweep`). A folder of a like name without such a record, the fixed names
  /// earlier versions used among them, is left alone.
  private static func removeLeftovers(of name: [UInt8], in parent: FileDescriptor) {
    OwnedArtifact.sweep(prefix: partialPrefix(of: name), in: parent)
  }

  /// Restore's: the partial folder `.NAME.appdata-restore-TOKEN` beside the container NAME it
  /// replaces, with its owner record; no marker of extract's (it becomes the container).
  init(restoring handoff: RestoreHandoff) throws(Refusal) {
    self.handoff = handoff
    typed = handoff.displayPath
    path = handoff.displayPath
    parent = handoff.folder
    name = handoff.name
    do {
      artifact = try OwnedArtifact.make(.folder, prefix: RestoreHandoff.prefix(of: handoff.name), in: handoff.folder, mode: 0o700,
                                        displayPath: handoff.displayPath)
    } catch {
      throw Refusal(.cannotWrite, path: handoff.displayPath, "cannot create the new contents beside it: \(error.reason)")
    }
    partialIdentity = artifact.identity
  }

  /// Closes `parent` unless it is restore's.
  private func closeParent() {
    if handoff == nil { parent.close() }
  }

  /// Restore's partial folder, complete: handed to the restore, which exchanges it.
  func handOver(checkpoints: Int) {
    guard !isClosed, let handoff else { return }
    isClosed = true
    handoff.take(artifact, checkpoints: checkpoints)
  }

  /// Whether `partialName` still names the folder this run made.
  private func partialIsOurs() -> Bool { artifact.isInPlace }

  /// Removes the partial folder (after a failure or an interrupt), if its name still names it.
  func abandon() {
    guard !isClosed else { return }
    isClosed = true
    artifact.discard()
    closeParent()
  }

  /// Renames the partial folder to OUT. With `force`, an OUT that is there (again) is replaced
  /// if it still may be, in one exchange, and removed after; without, an OUT another run put
  /// in place meanwhile is left as it is and this run fails.
  func putInPlace(force: Bool) throws(Refusal) {
    guard !isClosed else { return }
    let out = TerminalText.escaped(typed)
    guard partialIsOurs() else {
      isClosed = true
      artifact.discard()
      closeParent()
      throw Refusal(.conflict, "\(out): the folder this run built it in (\(TerminalText.escaped(RelativePath.display(partialName)))) was moved or replaced; nothing was put in place")
    }
    do {
      try Syscalls.renameWithoutReplacing(partialName, in: parent, to: name, in: parent, displayPath: typed)
    } catch {
      guard error.errno == .fileExists else {
        abandon()
        throw Refusal(.cannotWrite, "\(out): cannot put the extraction in place: \(error.reason); nothing was written")
      }
      guard force else {
        abandon()
        throw Refusal(.conflict, "\(out): appeared while this run extracted (another appdata extract?); it was left as it is and nothing was written")
      }
      try replace()
      return
    }
    isClosed = true
    artifact.relinquish()
    closeParent()
  }

  /// Swaps the partial folder with the OUT that is there, once it is proven replaceable, then
  /// removes what was OUT. Runs that replace one OUT take turns: each locks (`flock`) its own
  /// folder, then the folder OUT names, checks that OUT still names it, and swaps and checks the
  /// swap only while it holds both locks; a run that finds this run's folder at OUT waits for
  /// that lock. So two swaps never interleave (issue 48's race script found that they did: one
  /// run's check then saw the other's folder at OUT, undid the swap it took for its own, and
  /// left a whole extraction at its hidden name without a record). The record says, before the
  /// swap, that the hidden name may hold the old OUT (`mayAlsoName`): a run killed on either side
  /// of the swap leaves what its record proves, and the next run removes it.
  private func replace() throws(Refusal) {
    let out = TerminalText.escaped(typed)
    // This run's folder is locked too, before it becomes OUT: a run that would replace it must
    // wait until this one has checked its swap (no run locks it before: it is not OUT yet).
    Syscalls.waitForExclusiveLock(partial)
    // Each turn that finds OUT changed was another run's swap: at most one a run.
    for _ in 0..<4096 {
      guard let opened = try? Syscalls.open(name, in: parent, options: .directory, displayPath: typed) else { return try putInPlaceWhereOUTWent() }
      // The old OUT, held (and its lock, once taken) to the end of this turn.
      let oldOwner = OwnedDescriptor(owning: opened)
      let old = oldOwner.descriptor
      guard let oldIdentity = try? Syscalls.status(of: old, displayPath: typed).identity else { return try putInPlaceWhereOUTWent() }
      // Waits while another run swaps (it holds the lock for its swap and the removal after).
      if !Syscalls.lockExclusively(old) {
        TestHooks.announce("waiting-for-turn")
        Syscalls.waitForExclusiveLock(old)
      }
      guard (try? Syscalls.status(of: name, in: parent, displayPath: ""))?.identity == oldIdentity else { continue }
      guard Self.isReplaceable(old) else {
        abandon()
        throw Refusal(.conflict, "\(out): was replaced meanwhile by something appdata did not make; it was left as it is and nothing was written")
      }
      TestHooks.pause(at: "replace")
      artifact.mayAlsoName(oldIdentity)
      do {
        try Syscalls.exchange(partialName, with: name, in: parent, displayPath: typed)
      } catch {
        abandon()
        throw Refusal(.cannotWrite, "\(out): cannot put the extraction in place: \(error.reason); nothing was written")
      }
      TestHooks.pause(at: "exchanged")
      // The exchange swapped what the two names named at that instant: they must be the two
      // folders checked (something that does not take turns, a user's mv, may have moved one),
      // or it is undone.
      let now = (try? Syscalls.status(of: name, in: parent, displayPath: ""))?.identity
      let aside = (try? Syscalls.status(of: partialName, in: parent, displayPath: ""))?.identity
      guard now == partialIdentity && aside == oldIdentity else {
        try? Syscalls.exchange(partialName, with: name, in: parent, displayPath: typed)
        abandon()
        throw Refusal(.conflict, "\(out): changed while it was being replaced; it was left as it is and nothing was written")
      }
      // The old OUT now has the partial folder's name: the record says so, then it goes,
      // through the descriptor of the folder checked (never by its name again). One that cannot
      // be removed keeps the record, so the next run's sweep removes it.
      guard let oldCopy = try? Syscalls.reopen(old, displayPath: typed) else {
        leftAside = partialName
        isClosed = true
        closeParent()
        return
      }
      artifact.nowNames(oldIdentity, descriptor: oldCopy)
      if !artifact.discard() { leftAside = partialName }
      isClosed = true
      closeParent()
      return
    }
    abandon()
    throw Refusal(.conflict, "\(out): changed while it was being replaced; it was left as it is and nothing was written")
  }

  /// OUT went (a user removed it) while `replace` ran: this run's folder is put in place as if
  /// it never was.
  private func putInPlaceWhereOUTWent() throws(Refusal) {
    do {
      try Syscalls.renameWithoutReplacing(partialName, in: parent, to: name, in: parent, displayPath: typed)
    } catch {
      abandon()
      throw Refusal(.conflict, "\(TerminalText.escaped(typed)): is no longer a folder appdata may replace; nothing was written")
    }
    isClosed = true
    artifact.relinquish()
    closeParent()
  }
}
