import AppDataSystem
import AppDataCore
/// Reads a device backup's `Manifest.db` row by row (nothing is collected: memory does not grow
/// with the rows) into one visitor per app domain (`BackupSource` pairs it with the accumulator),
/// classifying each relativePath through the layout tables exactly as the walk classifies files on
/// disk. Every file the backup holds is backed up; a file from a location appdata predicts is
/// left out is a finding.
package struct BackupReader {
  let manifest: BackupManifest
  /// The backup folder as the user typed it (for `--verify`).
  let folderPath: String
  var allDomains = false
  var verify = false
  /// The password of a backup whose Manifest.db is encrypted.
  var password: SecretBuffer?
  /// `--max-key-rounds`.
  var maximumKeyRounds = BackupKeybag.defaultMaximumRounds
  /// Told what is under way while the key is derived (the progress line on a terminal).
  var progress: WalkProgress?
  /// Threads for the read: with two, SQLite steps on one while the rows are counted on the
  /// other (`ManifestRows`); `--jobs 1` keeps it to one.
  var threads = 2
  /// Where the class keys the password unwraps are kept, for `appdata extract`; nil: not kept.
  var unlockedKeys: UnlockedKeys?

  /// The most domains a backup may hold: each costs a report (about 8 KB), and a real backup
  /// holds a few hundred (an app, its extensions and its groups, plus the system's).
  static let maximumDomains = 20_000

  /// The environment variable an encrypted backup's password may come from.
  package static let passwordVariable = "APPDATA_BACKUP_PASSWORD"

  /// The refusal when no password was given (exit 2, before any report): how to give one.
  package static func noPassword(_ backup: String) -> Refusal {
    Refusal(.locked, path: backup, "an encrypted backup, and no password given: set \(passwordVariable), or use --password-file FILE or --password-stdin (at a terminal, appdata asks for it)")
  }

  /// The columns of the manifest's Files table appdata reads.
  static let columns = ["domain", "relativePath", "flags", "file", "fileID"]

  /// The name of the one line that sums the system domains.
  static let systemDomainsName = "(system domains)"

  /// One domain (or the system domains together): what its visitor and its report are made from.
  package struct Domain: Sendable {
    /// The domain's name (`AppDomain-…`), or `(system domains)` for their sum.
    package var name: String
    package var id: String?
    package var kind: ContainerKind
    package var layout: ContainerLayout
    /// `BACKUP//DOMAIN`, as reports name it.
    package var container: String
    /// Kept by `--app`: its rows are read (the others are only counted as domains).
    package var kept: Bool
  }

  /// One domain being read (its visitor is kept apart, in an array of its own: a generic state
  /// read per row was copied per row).
  private struct DomainState {
    var domain: Domain
    /// Files and bytes the backup holds from each location appdata predicts is left out.
    var excluded: [Int: (files: UInt64, bytes: UInt64)] = [:]
  }

  /// The app domain's kind and id (`AppDomainGroup-group.x-y` → group, `group.x-y`), or nil for
  /// a system domain.
  static func appDomain(_ domain: String) -> (kind: ContainerKind, id: String)? {
    guard let dash = domain.firstIndex(of: "-") else { return nil }
    let prefix = String(domain[..<dash])
    guard let known = ContainerPlaces.backupDomains.first(where: { $0.prefix == prefix }) else { return nil }
    return (known.kind, String(domain[domain.index(after: dash)...]))
  }

  /// The refusal for a database SQLite cannot read to the end.
  func damaged(_ error: SQLiteDatabase.Failure) -> Refusal {
    let why = error.isPastLimits ? "it asks for more than the limits appdata sets" : "truncated or damaged?"
    return Refusal(error.isPastLimits ? .tooLarge : .damaged, path: manifest.database, "cannot read the backup manifest (\(why)): \(error.message)")
  }

  /// Opens the database, read-only and immutable (decrypted into memory when it is encrypted),
  /// and checks it holds the Files table.
  func open() throws(Refusal) -> SQLiteDatabase {
    let path = TerminalText.escaped(manifest.database)
    do {
      let database: SQLiteDatabase
      if case .database(let keybag, let key) = manifest.encryption {
        database = try SQLiteDatabase(deserializing: try decrypt(keybag: keybag, key: key))
      } else if case .archive(let archived) = manifest.store, let memory = archived.database {
        database = try SQLiteDatabase(deserializing: memory)
      } else {
        database = try SQLiteDatabase(readOnlyImmutable: Syscalls.absolutePath(manifest.database))
      }
      guard try database.hasTable("Files") else {
        throw Refusal(.notAnInput, "\(path): a SQLite database without the Files table; not an iOS backup manifest")
      }
      if let problem = try database.unusualColumns(of: "Files", expecting: Self.columns) {
        throw Refusal(.damaged, "\(path): its Files table is not the one iOS writes (\(TerminalText.escaped(problem))); refusing to read it")
      }
      return database
    } catch let error as Refusal {
      throw error
    } catch let error as SQLiteDatabase.Failure {
      throw damaged(error)
    } catch {
      throw Refusal(.unreadable, "\(path): \(error)")
    }
  }

  /// The decrypted Manifest.db, in memory.
  private func decrypt(keybag: BackupKeybag, key: ManifestKey) throws(Refusal) -> SecretBuffer {
    let backup = TerminalText.escaped(manifest.info.path)
    guard let password else { throw Self.noPassword(manifest.info.path) }
    let plain: SecretBuffer
    guard keybag.totalRounds <= maximumKeyRounds else {
      throw Refusal(.tooLarge, "\(backup): its keybag asks for \(keybag.totalRounds) key-derivation rounds (DPIC \(keybag.passwordIterations ?? 0), ITER \(keybag.iterations)), more than the \(maximumKeyRounds) appdata runs (--max-key-rounds; iOS writes about 10,000,000); refusing to spend that time")
    }
    let sha256 = keybag.passwordIterations.map { "\(Plural.counted(UInt64($0), "SHA-256 key round")), then " } ?? ""
    let sha1 = Plural.counted(UInt64(keybag.iterations), "SHA-1 key round")
    progress?.setActivity("Unlocking the encrypted backup (\(sha256)\(sha1), then decrypting Manifest.db)")
    defer { progress?.setActivity(nil) }
    do {
      var memory: SecretBuffer?
      if case .archive(let archived) = manifest.store { memory = archived.database }
      let keys = unlockedKeys
      plain = try BackupDecryption.decryptDatabase(path: manifest.database, memory: memory, password: password, keybag: keybag, manifestKey: key,
                                                   unlocked: keys.map { box in { box.value = $0 } })
    } catch {
      switch error {
      case .wrongPassword:
        throw Refusal(.wrongPassword, path: nil, message: "\(backup): wrong password for this encrypted backup (the keybag's class key does not unwrap with it)")
      case .noClassKey(let protectionClass):
        throw Refusal(.damaged, "\(backup): the keybag holds no password-wrapped key for protection class \(protectionClass), which Manifest.plist's ManifestKey names; the backup is damaged")
      case .damaged(let reason):
        throw Refusal(.damaged, "\(backup): cannot decrypt the backup manifest: \(reason)")
      }
    }
    guard plain.bytes.starts(with: BackupManifest.sqliteHeader) else {
      throw Refusal(.damaged, path: manifest.database, "decrypted with the password, but not a SQLite database; it is damaged")
    }
    return plain
  }

  /// Every row into the visitor of its domain (`visitor(for:)` makes one per domain met, and per
  /// app the backup was made with), then the backup's own findings into each kept domain's:
  /// the kept domains and their visitors in the order met, and every domain's name.
  func read<V: EntryVisitor>(
    keeping keep: (_ id: String?) -> Bool, visitor makeVisitor: (Domain) -> V
  ) throws(Refusal) -> (domains: [(Domain, V)], available: [String]) {
    let database = try open()
    var states: [DomainState] = []
    var visitors: [V] = []
    var keys = DomainKeys()
    // Apps the backup was made with but that hold no row are containers with no files too.
    for identifier in manifest.applications {
      let name = "AppDomain-" + identifier
      Array(name.utf8).withUnsafeBufferPointer { keys.remember($0, state: states.count) }
      let made = domain(name, keeping: keep)
      states.append(DomainState(domain: made))
      visitors.append(makeVisitor(made))
    }

    var tooManyDomains = false
    let verifier = verify ? storedFileVerifier() : nil
    var decoder = MBFile.Decoder()
    do {
      let statement = try database.prepare("SELECT domain, relativePath, flags, file, fileID FROM Files")
      var scratch: [UInt8] = []
      // A small manifest is read on this thread: starting SQLite's own costs more than it saves
      // (a folder of 10,000 small backups started 10,000 threads).
      let pages = (try? database.prepare("PRAGMA page_count")).flatMap { page in (try? page.step()) == true ? page.integer(0) : nil } ?? .max
      let pipelined = pages > ManifestRows.pagesWorthAThread ? threads : 1
      try ManifestRows.forEach(statement, withFileID: verifier != nil, threads: pipelined) { row in
        let domainBytes = row.domain
        let key = keys.key(of: domainBytes)
        let current: Int
        if key < keys.stateOfKey.count {
          current = keys.stateOfKey[key]
        } else {
          let made = domain(String(decoding: domainBytes, as: UTF8.self), keeping: keep)
          // The system domains share one state unless --all-domains lists them one by one.
          if made.kind == .system && !allDomains, let shared = states.firstIndex(where: { $0.domain.name == Self.systemDomainsName }) {
            current = shared
          } else {
            guard states.count < Self.maximumDomains else { tooManyDomains = true; return false }
            current = states.count
            states.append(DomainState(domain: made))
            visitors.append(makeVisitor(made))
          }
          keys.stateOfKey.append(current)
        }
        guard states[current].domain.kept else { return true }
        let relative = row.relativePath
        if relative.isEmpty { return true }  // the domain's root folder
        if states[current].domain.kind == .system && !allDomains {
          // The summed system domains: paths are DOMAIN/relativePath.
          scratch.removeAll(keepingCapacity: true)
          scratch.append(contentsOf: domainBytes)
          scratch.append(0x2F)
          scratch.append(contentsOf: relative)
          scratch.withUnsafeBytes { path in
            visit(path: path, flags: row.flags, blob: row.file, fileID: row.fileID, decoder: &decoder,
                  state: &states[current], visitor: &visitors[current], verifier: verifier)
          }
        } else {
          visit(path: relative, flags: row.flags, blob: row.file, fileID: row.fileID, decoder: &decoder,
                state: &states[current], visitor: &visitors[current], verifier: verifier)
        }
        return true
      }
    } catch {
      throw damaged(error)
    }
    if tooManyDomains {
      throw Refusal(.tooLarge, path: manifest.database, "holds more than \(Self.maximumDomains) domains (a real backup holds a few hundred); refusing to build a report for each")
    }

    let kept = withBackupFindings(states, visitors)
    // The ids --app can name: app, group and extension domains (never the summed system domains).
    return (kept, states.compactMap { $0.domain.kind == .system ? nil : $0.domain.id })
  }

  /// Each domain's bytes to its state's index (`ByteKeyTable`'s index → `stateOfKey`): rows come
  /// in no domain order, so a lookup per row, without a copy or a per-byte `Hasher`.
  private struct DomainKeys {
    var table = ByteKeyTable()
    var stateOfKey: [Int] = []
    /// The last row's domain and its key: runs of rows from one domain skip the hash.
    var lastDomain: [UInt8] = []
    var lastKey = -1

    /// `key` (a domain's bytes) is the domain of the state at `state`.
    mutating func remember(_ key: UnsafeBufferPointer<UInt8>, state: Int) {
      let index = table.index(of: key, hash: ByteKeyTable.hash(key))
      if index == stateOfKey.count { stateOfKey.append(state) } else { stateOfKey[index] = state }
    }

    /// The key of a row's domain (`domainBytes`), added when it is new: `stateOfKey` has no
    /// entry for it yet then.
    mutating func key(of domainBytes: UnsafeBufferPointer<UInt8>) -> Int {
      let isLast = lastKey >= 0 && lastDomain.count == domainBytes.count && lastDomain.withUnsafeBufferPointer {
        domainBytes.isEmpty || Syscalls.compareBytes($0.baseAddress!, domainBytes.baseAddress!, count: domainBytes.count) == 0
      }
      let key = isLast ? lastKey : table.index(of: domainBytes, hash: ByteKeyTable.hash(domainBytes))
      if !isLast {
        lastDomain.removeAll(keepingCapacity: true)
        lastDomain.append(contentsOf: domainBytes)
        lastKey = key
      }
      return key
    }
  }

  /// The domain named `name` (`AppDomain-…`; a system domain is one of the summed system domains
  /// unless --all-domains lists them one by one), kept when `keep` takes its app's id.
  private func domain(_ name: String, keeping keep: (_ id: String?) -> Bool) -> Domain {
    let app = Self.appDomain(name)
    let isSummedSystem = app == nil && !allDomains
    return Domain(
      name: isSummedSystem ? Self.systemDomainsName : name, id: app?.id ?? (isSummedSystem ? nil : name),
      kind: app?.kind ?? .system, layout: ContainerLayout.forKind(app?.kind ?? .system),
      container: manifest.info.path + "//" + (isSummedSystem ? Self.systemDomainsName : name), kept: keep(app?.id))
  }

  /// `--verify`'s look at each file row's stored copy: in the backup folder, or in the archive
  /// it was read from.
  private func storedFileVerifier() -> StoredFileVerifier {
    if case .archive(let archived) = manifest.store {
      return StoredFileVerifier(storedSizes: archived.storedSizes, isEncrypted: manifest.info.isEncrypted)
    }
    return StoredFileVerifier(folderPath: folderPath, isEncrypted: manifest.info.isEncrypted)
  }

  /// The kept domains and their visitors, each told the backup's own findings: the files it holds
  /// from each location appdata predicts is left out, and a snapshot that did not finish.
  private func withBackupFindings<V: EntryVisitor>(_ states: [DomainState], _ visitors: [V]) -> [(Domain, V)] {
    var kept: [(Domain, V)] = []
    for (state, var visitor) in zip(states, visitors) where state.domain.kept {
      let layout = state.domain.layout
      for (ruleIndex, held) in state.excluded.sorted(by: { $0.key < $1.key }) {
        let rule = layout.rule(at: ruleIndex)
        let location = rule.pattern == layout.fallback.pattern ? "a folder outside the layout" : rule.pattern.joined(separator: "/")
        visitor.note(Finding(
          rule: .backupHoldsExcluded, path: Array((rule.pattern.first == "*" ? "." : rule.pattern.joined(separator: "/")).utf8),
          message: "the backup holds \(Plural.counted(held.files, "file")) (\(Plural.counted(held.bytes, "byte"))) from \(location), which appdata predicts is not backed up (\(rule.category.rawValue))",
          bytes: held.bytes))
      }
      if let snapshot = manifest.info.snapshotState, snapshot != "finished" {
        visitor.note(Finding(
          rule: .backupIncomplete, path: Array(".".utf8),
          message: "the backup's SnapshotState is '\(TerminalText.escaped(snapshot))', not 'finished': it may lack files", bytes: nil))
      }
      kept.append((state.domain, visitor))
    }
    return kept
  }

  /// One manifest row into its domain's visitor: its path split, placed and counted from its
  /// bytes, with no allocation in the common case.
  private func visit<V: EntryVisitor>(path: UnsafeRawBufferPointer, flags: Int64, blob: UnsafeRawBufferPointer,
                                      fileID: UnsafeRawBufferPointer, decoder: inout MBFile.Decoder,
                                      state: inout DomainState, visitor: inout V, verifier: StoredFileVerifier?) {
    let bytes = path.bindMemory(to: UInt8.self)
    // The first two components decide the location; the last slash splits folder and name;
    // `..` is never a path inside a container.
    var slashes = 0
    var firstSlash = -1
    var secondSlash = -1
    var lastSlash = -1
    var start = 0
    var hasParentComponent = false
    for index in 0...bytes.count where index == bytes.count || bytes[index] == 0x2F {
      if index - start == 2 && bytes[start] == 0x2E && bytes[start + 1] == 0x2E { hasParentComponent = true }
      if index < bytes.count {
        slashes += 1
        if firstSlash < 0 { firstSlash = index } else if secondSlash < 0 { secondSlash = index }
        lastSlash = index
      }
      start = index + 1
    }
    if bytes.count > RelativePath.maximumLength || slashes >= RelativePath.maximumComponents {
      visitor.note(RelativePath.tooDeep(Array(bytes), components: slashes + 1, source: "a relativePath"))
      return
    }
    if hasParentComponent {
      visitor.note(Finding(
        rule: .unreadable, path: Array(bytes), message: "relativePath contains '..'; not counted", bytes: nil))
      return
    }
    let kind: FileStatus.Kind
    var size: UInt64 = 0
    switch flags {
    case 1:
      guard let file = decoder.decode(blob) else {
        visitor.note(Finding(
          rule: .unreadable, path: Array(bytes), message: "cannot decode its manifest record (the MBFile archive in the file column); not counted", bytes: nil))
        return
      }
      kind = .regular
      size = file.size
    case 2: kind = .directory
    case 4: kind = .symbolicLink
    default: kind = .other
    }
    // A manifest holds no markers: what it carries is what MobileBackup took.
    let placement = firstSlash < 0
      ? state.domain.layout.place(first: bytes, second: nil, isExcluded: false)
      : state.domain.layout.place(
        first: UnsafeBufferPointer(rebasing: bytes[0..<firstSlash]),
        second: UnsafeBufferPointer(rebasing: bytes[(firstSlash + 1)..<(secondSlash < 0 ? bytes.count : secondSlash)]),
        isExcluded: false)
    let category = placement.category
    let parent = UnsafeBufferPointer(rebasing: bytes[0..<max(lastSlash, 0)])
    let name = UnsafeBufferPointer(rebasing: bytes[(lastSlash + 1)...])
    let status = FileStatus(describing: kind, size: size, allocatedSize: (size + 4095) / 4096 * 4096)
    visitor.visit(WalkedEntry(
      parentPath: parent, name: name, depth: slashes + 1, status: status, placement: placement,
      ownMarkers: [], inheritedExclusion: nil, declinesBackup: false, isCacheDirectoryTag: false, parentCategory: category))
    if kind != .directory && category != .critical {
      state.excluded[placement.ruleIndex, default: (0, 0)].files += 1
      state.excluded[placement.ruleIndex, default: (0, 0)].bytes = state.excluded[placement.ruleIndex, default: (0, 0)].bytes.saturatingSum(size)
    }
    if kind == .regular, let verifier, let finding = verifier.check(fileID: fileID, size: size, path: Array(bytes)) {
      visitor.note(finding)
    }
  }
}

/// `--verify`: each file row's stored copy at `<fileID[0:2]>/<fileID>`, examined through the
/// backup folder's descriptor with `O_NOFOLLOW` and `fstatat(AT_SYMLINK_NOFOLLOW)`. In an
/// encrypted backup a stored copy is AES-CBC with PKCS#7 padding, and the recorded size lags
/// behind some SQLite files' content: there a copy only needs to be at least that long.
final class StoredFileVerifier {
  private let isEncrypted: Bool
  private let folder: FileDescriptor?
  private var subfolders: [[UInt8]: FileDescriptor?] = [:]
  /// In an archive: `xx/<fileID>` to the stored file's length, as its entry records it.
  private let storedSizes: [[UInt8]: UInt64]?

  init(folderPath: String, isEncrypted: Bool) {
    self.isEncrypted = isEncrypted
    folder = try? Syscalls.openDirectory(atPath: folderPath)
    storedSizes = nil
  }

  init(storedSizes: [[UInt8]: UInt64], isEncrypted: Bool) {
    self.isEncrypted = isEncrypted
    folder = nil
    self.storedSizes = storedSizes
  }

  deinit {
    for case let descriptor?? in subfolders.values { descriptor.close() }
    folder?.close()
  }

  /// A finding when the stored file is missing or its length is not `size`.
  func check(fileID raw: UnsafeRawBufferPointer, size: UInt64, path: [UInt8]) -> Finding? {
    let fileID = Array(raw)
    guard fileID.count == 40, fileID.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
      return Finding(rule: .backupFileMissing, path: path, message: "its fileID '\(TerminalText.escaped(fileID))' is not 40 lowercase hex digits", bytes: size)
    }
    let prefix = Array(fileID[0..<2])
    let display = String(decoding: prefix + [0x2F] + fileID, as: UTF8.self)
    let stored: UInt64
    if let storedSizes {
      guard let length = storedSizes[prefix + [0x2F] + fileID] else {
        return Finding(rule: .backupFileMissing, path: path, message: "its stored copy \(display) is not in the archive", bytes: size)
      }
      stored = length
    } else {
      if subfolders[prefix] == nil, let folder {
        subfolders[prefix] = .some(try? Syscalls.open(prefix, in: folder, options: .directory, displayPath: display))
      }
      guard case let subfolder?? = subfolders[prefix],
            let status = try? Syscalls.status(of: fileID, in: subfolder, displayPath: display), status.kind == .regular else {
        return Finding(rule: .backupFileMissing, path: path, message: "its stored copy \(display) is not in the backup folder", bytes: size)
      }
      stored = status.size
    }
    if isEncrypted && stored < size {
      return Finding(rule: .backupFileSizeMismatch, path: path,
                     message: "its stored copy \(display) is \(stored) bytes, shorter than the \(size) the manifest records (an encrypted copy is at least as long)", bytes: size)
    }
    if !isEncrypted && stored != size {
      return Finding(rule: .backupFileSizeMismatch, path: path,
                     message: "its stored copy \(display) is \(stored) bytes, the manifest says \(size)", bytes: size)
    }
    return nil
  }
}
