#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
import CLibattr
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Something appdata makes beside what the user named and may later delete or replace (a
/// partial extraction, an output's hidden file, a cross-filesystem copy, a probe), made so that
/// its ownership is proven, never inferred from its name.
///
/// - **Made by this run.** Its name is `PREFIX TOKEN SUFFIX`, TOKEN 32 hex digits of
///   `getrandom(2)`, created with `O_EXCL` (`mkdirat` for a folder): a name that was taken
///   fails, and another token is tried.
/// - **An owner record beside it, locked from birth.** `PREFIX TOKEN SUFFIX.owner`, holding
///   `appdata-owner 1 TOKEN KIND`, the record's own device and inode (read from its descriptor
///   before it has a name, so a copy of it, which has another inode, proves nothing) and, once
///   the artifact exists, the artifact's device and inode (two while `--force` exchanges OUT). On Linux
///   the record is made with `O_TMPFILE`, locked (`flock`) and written *before* it gets its name
///   (`linkat`), so no other run ever sees it unlocked while this one lives. Elsewhere (Darwin, a
///   filesystem without `O_TMPFILE`) it is created with `O_EXCL` and then locked and written: a
///   sweep that catches it in between finds no token in it, and leaves it.
/// - **A sweep removes only what a dead run proves.** `sweep` removes an artifact only when its
///   record's lock is free (the run that held it is gone), the record is a regular file of this
///   user's whose token is the one in both names and whose own identity is the one it records,
///   and the artifact is this user's and is a file the record names (device and inode). It is
///   removed through the descriptor that proved it, never by its name again (a folder is emptied
///   through it, then its name removed only while it still names it and it is empty).
///   A name alone, legacy names included, proves nothing: such entries are left as they are; so
///   does a record whose name names something else than it records (both stay). A record whose
///   artifact is gone (renamed into place, or removed, before the run could remove the record)
///   is removed.
///
/// The caller owns the folder descriptor it passes, and keeps it open for as long as this value
/// lives; this value owns the artifact's descriptor and the record's. Sendable: its mutable state
/// (done, and the identity an exchange changes) is in a Mutex; a signal handler's thread may
/// call `unlinkFileForExit`.
package final class OwnedArtifact: Sendable {
  package enum Kind: String, Sendable { case file, folder }

  package let kind: Kind
  /// The artifact's name, and its record's, in `folder`.
  package let name: [UInt8]
  package let recordName: [UInt8]
  /// The artifact, open: a folder (`O_DIRECTORY`) or a file (read and write).
  package var descriptor: FileDescriptor { state.withLock { $0.descriptor } }
  /// Which file the artifact is.
  package var identity: FileIdentity { state.withLock { $0.identity } }
  private let folder: FileDescriptor
  private let record: FileDescriptor
  private let token: [UInt8]
  private struct State {
    var descriptor: FileDescriptor
    var identity: FileIdentity
    /// What the record says the name may name: the artifact, and while `--force` exchanges OUT,
    /// the old OUT too.
    var recorded: [FileIdentity]
    var isDone = false
  }
  private let state: Mutex<State>

  /// Marks this value done; false when it was already.
  private func finishOnce() -> Bool {
    state.withLock { state in
      defer { state.isDone = true }
      return !state.isDone
    }
  }

  /// What every owner record's first line starts with.
  static let recordMagic = Array("appdata-owner 1 ".utf8)
  static let recordSuffix = Array(".owner".utf8)

  private init(kind: Kind, name: [UInt8], recordName: [UInt8], descriptor: FileDescriptor, identity: FileIdentity,
               folder: FileDescriptor, record: FileDescriptor, token: [UInt8], recorded: [FileIdentity]? = nil) {
    self.kind = kind
    self.name = name
    self.recordName = recordName
    state = Mutex(State(descriptor: descriptor, identity: identity, recorded: recorded ?? [identity]))
    self.folder = folder
    self.record = record
    self.token = token
  }

  deinit { discard() }

  /// A new random token: 32 lowercase hex digits.
  static func newToken() -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    let digits = Array("0123456789abcdef".utf8)
    var token: [UInt8] = []
    for _ in 0..<2 {
      var value = generator.next() as UInt64
      for _ in 0..<16 {
        token.append(digits[Int(value & 0xF)])
        value >>= 4
      }
    }
    return token
  }

  static func isToken(_ bytes: ArraySlice<UInt8>) -> Bool {
    bytes.count == 32 && bytes.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
  }

  /// Makes a new artifact `prefix TOKEN suffix` in `folder` (a file opened for reading and
  /// writing, or a folder opened as one) with `mode`, and its locked owner record.
  /// `mark`, when given, is applied to the record before it has a name (where the system allows)
  /// and to the artifact the moment it exists, before anything is written in it: what a caller
  /// uses to give both the do-not-back-up marker, so a leftover is never backed up.
  package static func make(_ kind: Kind, prefix: [UInt8], suffix: [UInt8] = [], in folder: FileDescriptor,
                          mode: UInt32 = 0o600, mark: ((FileDescriptor) -> Void)? = nil,
                          displayPath: @autoclosure () -> String) throws(SystemError) -> OwnedArtifact {
    var last = SystemError(errno: .fileExists, operation: .create, path: displayPath())
    for _ in 0..<8 {
      let token = newToken()
      let name = prefix + token + suffix
      let recordName = name + recordSuffix
      // Ours, and closed when this turn ends, unless handed to the artifact.
      let record: OwnedDescriptor
      do {
        record = OwnedDescriptor(owning: try makeRecord(recordName, token: token, kind: kind, in: folder, mark: mark, displayPath: displayPath()))
      } catch {
        last = error
        if error.errno == .fileExists { continue }
        throw error
      }
      do throws(SystemError) {
        let descriptor: OwnedDescriptor
        switch kind {
        case .folder:
          try Syscalls.makeDirectory(name, in: folder, mode: mode, displayPath: displayPath())
          descriptor = OwnedDescriptor(owning: try Syscalls.open(name, in: folder, options: .directory, displayPath: displayPath()))
        case .file:
          descriptor = OwnedDescriptor(owning: try Syscalls.open(name, in: folder, options: .createNewReadWrite, mode: mode, displayPath: displayPath()))
        }
        mark?(descriptor.descriptor)
        let status = try Syscalls.status(of: descriptor.descriptor, displayPath: displayPath())
        let artifact = OwnedArtifact(kind: kind, name: name, recordName: recordName, descriptor: descriptor.release(),
                                     identity: status.identity, folder: folder, record: record.release(), token: token)
        artifact.writeRecord()
        return artifact
      } catch {
        // The record is ours (we made and hold it): it goes; the name that was taken stays.
        unlinkIfSame(recordName, as: record.descriptor, in: folder)
        last = error
        if error.errno == .fileExists { continue }
        throw error
      }
    }
    throw last
  }

  /// Makes the owner record, locked before any other run can open it where the system allows.
  private static func makeRecord(_ recordName: [UInt8], token: [UInt8], kind: Kind, in folder: FileDescriptor,
                                 mark: ((FileDescriptor) -> Void)?, displayPath: @autoclosure () -> String) throws(SystemError) -> FileDescriptor {
    func firstLines(_ record: FileDescriptor) throws(SystemError) -> [UInt8] {
      let own = try Syscalls.status(of: record, displayPath: displayPath()).identity
      return recordMagic + token + [0x20] + Array(kind.rawValue.utf8) + [0x0A] + identityText(own) + [0x0A]
    }
    #if canImport(Glibc) && !DARWIN_CHECK
    let unnamed = appdata_open_tmpfile(folder.rawValue)
    if unnamed >= 0 {
      // Closed when this block ends unless it was linked: then it is the caller's.
      let record = OwnedDescriptor(owning: FileDescriptor(rawValue: unnamed))
      _ = flock(record.descriptor.rawValue, LOCK_EX)
      mark?(record.descriptor)
      try Syscalls.writeAll(record.descriptor, try firstLines(record.descriptor), displayPath: displayPath())
      let linked = withCName(recordName) { appdata_link_tmpfile(record.descriptor.rawValue, folder.rawValue, $0) }
      if linked == 0 { return record.release() }
      let code = currentErrno()
      if code == .fileExists { throw SystemError(errno: code, operation: .create, path: displayPath()) }
      // No /proc, or a filesystem that cannot link it: the portable way below.
    }
    #endif
    let record = OwnedDescriptor(owning: try Syscalls.open(recordName, in: folder, options: .createNewReadWrite, mode: 0o600, displayPath: displayPath()))
    // Blocking: a sweep that opened it in the instant since may hold the lock for a moment.
    _ = flock(record.descriptor.rawValue, LOCK_EX)
    mark?(record.descriptor)
    do {
      try Syscalls.writeAll(record.descriptor, try firstLines(record.descriptor), displayPath: displayPath())
    } catch {
      unlinkIfSame(recordName, as: record.descriptor, in: folder)
      throw error
    }
    return record.release()
  }

  /// Writes the record anew: its first line, its own identity and what the name may name (two
  /// identities, the same one twice when there is one), each number 20 digits wide: every
  /// rewrite has the same length and is one `pwrite`, so a run killed at any instant leaves the
  /// old record or the new, never a cut one.
  private func writeRecord() {
    let recorded = state.withLock { $0.recorded }
    guard let own = try? Syscalls.status(of: record, displayPath: "").identity, let first = recorded.first else { return }
    let second = recorded.count > 1 ? recorded[1] : first
    let text = Self.recordMagic + token + [0x20] + Array(kind.rawValue.utf8) + [0x0A]
      + Self.identityText(own) + [0x0A] + Self.identityText(first) + [0x20] + Self.identityText(second) + [0x0A]
    _ = text.withUnsafeBytes { pwrite(record.rawValue, $0.baseAddress, $0.count, 0) }
  }

  /// `DEVICE INODE`, each 20 digits.
  static func identityText(_ identity: FileIdentity) -> [UInt8] {
    func padded(_ value: UInt64) -> [UInt8] {
      let digits = Array(String(value).utf8)
      return [UInt8](repeating: 0x30, count: max(0, 20 - digits.count)) + digits
    }
    return padded(identity.device) + [0x20] + padded(identity.inode)
  }

  /// Before an exchange puts `other` (the old OUT) at the artifact's name: the record says the
  /// name may name either, so that a run killed at any instant of it leaves a name the next
  /// sweep can prove, whichever it names.
  package func mayAlsoName(_ other: FileIdentity) {
    state.withLock { $0.recorded = [$0.identity, other] }
    writeRecord()
  }

  /// After the exchange: the artifact's name names `other`, open at `descriptor` (this value now
  /// owns it); what it named before is in place elsewhere, and its descriptor is closed.
  package func nowNames(_ other: FileIdentity, descriptor: FileDescriptor) {
    let previous = state.withLock { state in
      defer {
        state.descriptor = descriptor
        state.identity = other
        state.recorded = [other]
      }
      return state.descriptor
    }
    previous.close()
    writeRecord()
  }

  /// What the record says the name may name, in the order written: the artifact first, then
  /// (after `mayAlsoName`) the other. `appdata restore` tells by it which side of its exchange a
  /// run stopped on: its name naming the second is the container's previous contents, kept.
  package var recordedIdentities: [FileIdentity] { state.withLock { $0.recorded } }

  /// The artifact stays, and so does its record, unlocked: a later run may `claim` it (restore's
  /// kept copy, which `--undo` puts back). Its descriptors are closed.
  package func keep() {
    guard finishOnce() else { return }
    record.close()
    descriptor.close()
  }

  /// Whether the artifact's name still names the artifact.
  package var isInPlace: Bool {
    (try? Syscalls.status(of: name, in: folder, displayPath: ""))?.identity == identity
  }

  /// The artifact was renamed into place (or is otherwise no longer a leftover): the record goes
  /// and its lock with it. The artifact's descriptor is closed.
  package func relinquish() {
    guard finishOnce() else { return }
    Self.unlinkIfSame(recordName, as: record, in: folder)
    record.close()
    descriptor.close()
  }

  /// The artifact, removed through its descriptor (a folder emptied through it, then its name
  /// removed only while it names that folder; a file's name only while it names that file).
  private func removeArtifact() -> Bool {
    guard isInPlace else { return true }
    if kind == .folder { return Syscalls.removeFolder(name, in: folder, opened: descriptor) }
    return (try? Syscalls.remove(name, in: folder, isDirectory: false, displayPath: "")) != nil
  }

  /// Removes the artifact, if its name still names it, then the record: a failed or interrupted
  /// run. Folders the run made with mode 0000 are made writable first. True when both are gone.
  @discardableResult
  package func discard() -> Bool {
    guard finishOnce() else { return true }
    let removed = removeArtifact()
    descriptor.close()
    // A folder that could not be removed keeps its record, for the next run's sweep.
    if removed { Self.unlinkIfSame(recordName, as: record, in: folder) }
    record.close()
    return removed
  }

  /// Removes the artifact's name only (a signal handler's last act, from its own thread): no
  /// descriptor is closed and no lock released; the process ends next.
  package func unlinkFileForExit() {
    guard kind == .file, !state.withLock({ $0.isDone }), isInPlace else { return }
    _ = try? Syscalls.remove(name, in: folder, isDirectory: false, displayPath: "")
    Self.unlinkIfSame(recordName, as: record, in: folder)
  }

  /// Unlinks `name` in `folder` if it is still the file `descriptor` has open.
  static func unlinkIfSame(_ name: [UInt8], as descriptor: FileDescriptor, in folder: FileDescriptor) {
    guard let mine = try? Syscalls.status(of: descriptor, displayPath: "").identity,
          (try? Syscalls.status(of: name, in: folder, displayPath: ""))?.identity == mine else { return }
    _ = try? Syscalls.remove(name, in: folder, isDirectory: false, displayPath: "")
  }

  // MARK: - Sweeping dead runs' artifacts

  /// Removes, in `folder`, the artifacts `prefix TOKEN suffix` of runs that are gone, as the
  /// type's comment says; returns the names removed. Anything not proven is left as it is.
  @discardableResult
  package static func sweep(prefix: [UInt8], suffix: [UInt8] = [], in folder: FileDescriptor) -> [[UInt8]] {
    var removed: [[UInt8]] = []
    let tail = suffix + recordSuffix
    for entry in Syscalls.entryNames(of: folder)
    where entry.count == prefix.count + 32 + tail.count && entry.starts(with: prefix) && entry.suffix(tail.count).elementsEqual(tail) {
      let token = Array(entry[prefix.count..<(prefix.count + 32)])
      guard let claimed = claim(prefix: prefix, token: token, suffix: suffix, in: folder) else { continue }
      let present = claimed.isInPlace
      if claimed.discard() && present { removed.append(claimed.name) }
    }
    return removed
  }

  /// Takes over the artifact `prefix TOKEN suffix` of a run that is gone, when its record proves
  /// it (see the type's comment): the record's lock is then this run's, and the value can put
  /// the artifact in place (`relinquish` after renaming it) or `discard` it. nil when not proven
  /// (a live run's, another user's, a name alone, a name that names something other than the
  /// record does) or when there is no such record. An artifact that is gone comes back with
  /// `isInPlace` false, and `discard` then removes the record only.
  package static func claim(prefix: [UInt8], token: [UInt8], suffix: [UInt8] = [], in folder: FileDescriptor) -> OwnedArtifact? {
    guard isToken(token[...]) else { return nil }
    let name = prefix + token + suffix
    let recordName = name + recordSuffix
    let me = Syscalls.effectiveUserID
    // The record (and its lock, once taken): closed on every way out but the last, where the
    // artifact takes it. Open for writing too: a claimed artifact rewrites it (`nowNames`,
    // `mayAlsoName`; the hostile round of issue 52 found undo's rewrite failing with EBADF).
    guard let openedRecord = try? Syscalls.open(recordName, in: folder, options: .readWriteMaybeFile, displayPath: "") else { return nil }
    let record = OwnedDescriptor(owning: openedRecord)
    guard let status = try? Syscalls.status(of: record.descriptor, displayPath: ""), status.kind == .regular,
          status.owner == me, status.size <= 256, Syscalls.lockExclusively(record.descriptor),
          let text = try? Syscalls.readUpTo(record.descriptor, 257, displayPath: ""),
          let parsed = parseRecord(text), parsed.token == token else {
      return nil
    }
    // The record must be the very file a run wrote: its own identity, recorded from its
    // descriptor before it had a name, is not a copy's (nor a planted file's).
    guard parsed.own == status.identity else { return nil }
    var descriptor = FileDescriptor(rawValue: -1)
    var identity = FileIdentity(device: UInt64.max, inode: UInt64.max)
    let found: FileStatus?
    do {
      found = try Syscalls.status(of: name, in: folder, displayPath: "")
    } catch {
      found = nil
      if error.errno != .noSuchFileOrDirectory { return nil }
    }
    if let found, found.owner == me,
       found.kind == (parsed.kind == .folder ? .directory : .regular),
       let openedArtifact = try? Syscalls.open(name, in: folder, options: parsed.kind == .folder ? .directory : .readMaybeFile, displayPath: "") {
      // Closed here unless proven (then the artifact's).
      let opened = OwnedDescriptor(owning: openedArtifact)
      if let openedStatus = try? Syscalls.status(of: opened.descriptor, displayPath: "") {
        // Proven as a file the record names; or, for a run killed between making it and
        // recording it (the record, proven by its own inode, names none yet), as an empty one:
        // nothing was written in it before it was recorded. Never for its name alone.
        let emptyAndUnrecorded = parsed.artifacts.isEmpty
          && (parsed.kind == .folder ? Syscalls.firstEntry(of: opened.descriptor) == nil : openedStatus.size == 0)
        if parsed.artifacts.contains(openedStatus.identity) || emptyAndUnrecorded {
          descriptor = opened.release()
          identity = openedStatus.identity
        }
      }
    }
    if descriptor.rawValue < 0 {
      // The name names something the record does not: nothing is proven, and both stay.
      if found != nil { return nil }
      // Nothing is at the name (the run put it in place, or removed it): the record goes.
      guard let folderCopy = try? Syscalls.reopen(folder, displayPath: "") else { return nil }
      descriptor = folderCopy
    }
    return OwnedArtifact(kind: parsed.kind, name: name, recordName: recordName, descriptor: descriptor,
                         identity: identity, folder: folder, record: record.release(), token: token,
                         recorded: parsed.artifacts.isEmpty ? nil : parsed.artifacts)
  }

  /// A record's fields: its token, the artifact's kind, the record's own identity and the
  /// identities its artifact's name may name (none before the artifact was made).
  static func parseRecord(_ text: [UInt8]) -> (token: [UInt8], kind: Kind, own: FileIdentity, artifacts: [FileIdentity])? {
    let lines = text.split(separator: 0x0A, omittingEmptySubsequences: false)
    guard lines.count >= 3, let first = lines.first, first.starts(with: recordMagic) else { return nil }
    let fields = first.dropFirst(recordMagic.count).split(separator: 0x20)
    guard fields.count == 2, isToken(fields[0]), let kind = Kind(rawValue: String(decoding: fields[1], as: UTF8.self)) else { return nil }
    func identities(_ line: ArraySlice<UInt8>) -> [FileIdentity]? {
      let words = line.split(separator: 0x20)
      let numbers = words.compactMap { UInt64(String(decoding: $0, as: UTF8.self)) }
      guard numbers.count == words.count, numbers.count % 2 == 0, numbers.count <= 4 else { return nil }
      return stride(from: 0, to: numbers.count, by: 2).map { FileIdentity(device: numbers[$0], inode: numbers[$0 + 1]) }
    }
    guard let own = identities(lines[1]), own.count == 1 else { return nil }
    let artifacts = lines.count >= 4 ? identities(lines[2]) ?? [] : []
    return (Array(fields[0]), kind, own[0], artifacts)
  }




  // MARK: - A file's hidden stand-in beside it

  /// `.NAME.appdata-`: what the hidden file written before it replaces (or becomes) NAME starts
  /// with, `.NAME.appdata-TOKEN.tmp` whole (NAME cut to 180 bytes, so the name and its record's
  /// stay names Linux takes): `-o` outputs, the rewritten defaults plist, the rules migration's
  /// new file.
  package static func hiddenPrefix(of name: [UInt8]) -> [UInt8] { [0x2E] + name.prefix(180) + Array(".appdata-".utf8) }
  package static let hiddenSuffix = Array(".tmp".utf8)

  // MARK: - Names reserved for appdata's own files

  /// Whether a name is one appdata keeps for its own files, which no input may bring in:
  /// `.appdata-*` (the migration journal, partial copies, probes) and `.NAME.appdata-*` (hidden
  /// outputs, partial extractions, owner records).
  package static func isReserved(_ name: [UInt8]) -> Bool {
    let marker = Array(".appdata-".utf8)
    guard name.first == 0x2E, name.count >= marker.count else { return false }
    if name.starts(with: marker) { return true }
    var index = 1
    while index + marker.count <= name.count {
      if name[index] == 0x2E && name[index..<(index + marker.count)].elementsEqual(marker) { return true }
      index += 1
    }
    return false
  }
}
