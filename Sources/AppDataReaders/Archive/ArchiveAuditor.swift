import AppDataSystem
import AppDataCore
/// Audits the containers inside an archive made on a Mac (or on Linux), without extracting it:
/// tar, pax, zip, compressed or not, detected by content. Markers come from pax headers
/// (`SCHILY.xattr.NAME`, `LIBARCHIVE.xattr.NAME`), from AppleDouble entries (`._NAME` beside the
/// file in tar archives, `__MACOSX/…/._NAME` in zips) and from `user.`-prefixed names. The
/// entries are classified exactly as the walk classifies files on disk, by the same classifier,
/// and handed to a visitor per container (`ArchiveSource` pairs them with the accumulator).
///
/// Containers are found in the same single pass: a folder holding `Documents`, `Library` or
/// `tmp`, or a container metadata plist, is a container root (never below `Bundle/Application`);
/// entries met before their root is known wait for it. Their ids come from the metadata plists
/// and `.xcappdata` info plists read on the way.
package struct ArchiveAuditor {
  /// Why the archive was refused (`cause`), and the line saying so, about the archive.
  package struct Failure: Error, Sendable {
    package var cause: Refusal.Cause
    package var message: String
    package init(_ cause: Refusal.Cause, message: String) {
      self.cause = cause
      self.message = message
    }
  }

  /// A container root as the reader knows it when it makes the root's visitor.
  package struct Root: Sendable {
    package var components: [[UInt8]]
    /// The id, when already known (`--root` or a second pass); else found while reading.
    package var id: String?
    package var layout: ContainerLayout
    /// `ARCHIVE//ROOT`, as reports name it.
    package var container: String
    /// Whether this pass's entries are final, and may be streamed (a first pass that a second
    /// one may replace must not stream).
    package var streams: Bool
  }

  /// One container found in the archive, and its visitor once every entry was read.
  package struct Container<V: EntryVisitor> {
    package var root: [[UInt8]]
    package var id: String?
    package var kind: ContainerKind
    /// Whether it sits in a folder of containers (`Data/Application/<UUID>`, …).
    package var isInCollection: Bool
    /// `ARCHIVE//ROOT`.
    package var container: String
    /// What people call it: its id, else its folder's name.
    package var name: String
    package var layout: ContainerLayout
    package var visitor: V
  }

  /// What an archive holds: its containers (with their visitors) and its device backups.
  package struct Contents<V: EntryVisitor> {
    package var containers: [Container<V>]
    /// The device backups found (a zipped or tarred backup folder, or folder of backups), by
    /// their folder in the archive.
    package var backups: [ArchivedBackup]
    /// Whether any entry carried an extended attribute (a pax xattr record, or an AppleDouble
    /// `._` file or `__MACOSX` entry). None at all: the archive's maker may have dropped them
    /// (GNU tar without --xattrs), and no marker can be known.
    package var hasAttributes = true
  }

  package let archivePath: String
  /// `--root`: the container's folder inside the archive; nil to find them.
  package var root: [[UInt8]]?
  /// `--max-archive-bytes`: refuse archives that expand beyond this (zip bombs).
  package var maximumBytes: UInt64 = 4 << 30
  /// `--max-manifest-bytes`: the most a device backup's Manifest.db found in the archive may
  /// expand to. It is held in memory whole (SQLite reads it there), so this bounds that memory.
  package var maximumManifestBytes: UInt64 = ArchiveAuditor.defaultMaximumManifestBytes
  /// 256 MiB: a backup of about half a million files (a real Manifest.db takes 300 to 500 bytes
  /// a row), and, with SQLite's heap, within the 512 MiB an audit of untrusted input may use.
  package static let defaultMaximumManifestBytes: UInt64 = 256 << 20
  /// Entries are streamed as they are read (NDJSON): a first pass that may be read again does not.
  package var streams = false
  /// Options differ by container id (the policy file's `containers`): containers are then found
  /// and identified in a first pass, so that each is counted with its own limits and budgets.
  package var optionsDependOnID = false
  /// `--verify`: the lengths of a backup's stored files are kept for checking.
  package var recordsStoredFiles = false
  /// `--max-name-bytes`: the most bytes of names a pass keeps at once (`NameBudget`): the
  /// entries waiting for their container's root, every folder's path, AppleDouble and identity
  /// files' paths, the stored files' paths with `--verify`, and the findings that name entries.
  package var maximumNameBytes = NameBudget.defaultMaximum

  package init(archivePath: String) {
    self.archivePath = archivePath
  }

  /// The top-level folders that mark a container root.
  static let rootMarkers: Set<[UInt8]> = Set(ContainerPlaces.rootFolderNames.map { Array($0.utf8) })
  /// The file whose presence marks its folder as a container root.
  static let metadataName = Array(ContainerLayout.metadataFileName.utf8)
  /// Plists read for identity (metadata and `.xcappdata` info), small files only.
  static let identityFiles: Set<[UInt8]> = Set((ContainerPlaces.metadataFileNames + [ContainerPlaces.packageInfoFileName]).map { Array($0.utf8) })
  static let identityLimit = 1 << 20
  /// AppleDouble and other metadata files are read up to this size; larger ones are not metadata.
  static let metadataLimit = 16 << 20

  /// Reads the archive into a visitor per container (`makeVisitor`), sorted by root.
  package func run<V: EntryVisitor>(visitor makeVisitor: @escaping (Root) -> V) throws(Failure) -> Contents<V> {
    var pass = Pass(auditor: self, fixed: root.map { [Identity(components: $0, id: nil, kind: nil)] },
                    streams: streams && !optionsDependOnID, makeVisitor: makeVisitor)
    try pass.read()
    let backups = pass.backups()
    // A backup (or a folder of them) that --root names, or that is all the archive holds.
    if let root, let backup = backups.first(where: { $0.components == root }) {
      return Contents(containers: [], backups: [backup])
    }
    if root == nil && pass.roots.isEmpty && !backups.isEmpty {
      return Contents(containers: [], backups: backups)
    }
    if let root, pass.roots.first?.looksLikeContainer != true {
      let inside = backups.filter { $0.components.starts(with: root) }
      if !inside.isEmpty { return Contents(containers: [], backups: inside) }
    }
    if root == nil && pass.roots.isEmpty {
      throw Failure(.notAnInput, message: "holds no app data container (no Documents, Library or tmp folder, no container metadata plist) and no device backup (no Manifest.db beside Manifest.plist); name its folder with --root, or give --platform android for an Android app's data")
    }
    // --root never turns a folder that is no container into a container audit.
    if let root, let state = pass.roots.first, !state.looksLikeContainer {
      throw Failure(.notMatched, message: "--root \(RelativePath.display(RelativePath.join(root))) names no app data container and no device backup in the archive (no Documents, Library or tmp folder, no container metadata plist, no Manifest.db beside Manifest.plist under it)")
    }
    // A root found inside another (a `Library` folder deep in a container's Documents, met before
    // the container's own folders) belongs to it; a container whose metadata plist names another
    // kind than its place suggested needs the other layout; per-id options need the ids. Each is
    // rare or asked for: read again knowing every root.
    let roots = pass.roots.map(\.components)
    let nested = roots.contains { candidate in roots.contains { $0 != candidate && candidate.starts(with: $0) } }
    var identities = pass.identities()
    let kindChanged = zip(pass.roots, identities).contains { $0.layout.name != ContainerLayout.forKind($1.kind ?? .app).name }
    if nested || kindChanged || optionsDependOnID {
      let outer = identities.filter { candidate in !roots.contains { $0 != candidate.components && candidate.components.starts(with: $0) } }
      pass = Pass(auditor: self, fixed: outer, streams: streams, makeVisitor: makeVisitor)
      try pass.read()
      identities = pass.identities()
    }
    let containers = pass.finish(identities).sorted { RelativePath.precedes(RelativePath.join($0.root), RelativePath.join($1.root)) }
    var contents = Contents(containers: containers, backups: root == nil ? pass.backups() : [])
    contents.hasAttributes = pass.sawAttributes
    return contents
  }

  /// The folder of containers `root` sits in (`…/Data/Application/<UUID>`), if any.
  static func place(of root: [[UInt8]]) -> ContainerPlace? {
    guard root.count >= 3 else { return nil }
    return ContainerPlaces.place(endingWith: root.dropLast().map { String(decoding: $0, as: UTF8.self) })
  }

  // MARK: - One pass over the archive

  /// A root and what is known of it: its id and kind (nil: not known yet).
  struct Identity {
    var components: [[UInt8]]
    var id: String?
    var kind: ContainerKind?
    /// `metadata-unreadable` findings: identity plists there that cannot be read.
    var findings: [Finding] = []
  }

  /// What is known about a folder inside the container: what it passes down to its entries.
  struct FolderInfo {
    var exclusion: Exclusion?
    /// The folder's placement, inherited below depth 2 (as the walk does).
    var placement: Placement
  }

  /// An entry seen before its container root was known (usually a handful: the root's own
  /// folders and metadata plist).
  struct Deferred {
    var components: [[UInt8]]
    var kind: ArchiveHeader.Kind
    var size: UInt64
    var attributes: EntryAttributes
    var isCacheTag: Bool
  }

  /// One container root being read: what its folders pass down. (Its visitor is kept apart, in
  /// `Pass.visitors`: a generic state read per entry was copied per entry.)
  struct RootState {
    var components: [[UInt8]]
    var layout: ContainerLayout
    var folders: [[UInt8]: FolderInfo] = [:]
    var rootExclusion: Exclusion?
    /// Whether an entry under the root showed it is a container (`Documents`, `Library`, `tmp`,
    /// or the metadata plist at its top): a `--root` that names anything else is refused.
    var looksLikeContainer = false
  }

  struct Pass<V: EntryVisitor> {
    let auditor: ArchiveAuditor
    let makeVisitor: (Root) -> V
    /// Roots known before reading (`--root`, or a second pass): no others are looked for.
    let isFixed: Bool
    let streams: Bool
    var roots: [RootState] = []
    /// The roots' visitors, in `roots` order.
    var visitors: [V] = []
    var deferred: [Deferred] = []
    /// Markers from AppleDouble files, by the path (in the archive) of the file they describe.
    var appleDouble: [[UInt8]: EntryAttributes] = [:]
    /// Whether any entry carried an extended attribute, in a pax record or an AppleDouble file.
    var sawAttributes = false
    /// Metadata and info plists, by their path in the archive, for the containers' ids.
    var identityPlists: [[UInt8]: [UInt8]] = [:]
    var declaredBytes: UInt64 = 0
    /// Findings about entries outside every root (a `..` path), reported with the first container.
    var strayFindings: [Finding] = []
    /// Files of device backups (plists, Manifest.db, stored files' lengths), by their folder.
    var backupFolders: [[UInt8]: ArchivedBackup] = [:]
    /// The archive's path as reports name it.
    let archive: String
    /// The bytes of the names this pass holds (`maximumNameBytes`).
    var names: NameBudget

    init(auditor: ArchiveAuditor, fixed: [Identity]?, streams: Bool, makeVisitor: @escaping (Root) -> V) {
      self.auditor = auditor
      names = NameBudget(maximum: auditor.maximumNameBytes)
      self.makeVisitor = makeVisitor
      self.isFixed = fixed != nil
      self.streams = streams
      archive = Syscalls.absolutePath(auditor.archivePath)
      for identity in fixed ?? [] { addRoot(identity) }
    }

    /// A new root, with the layout of its kind (known, or from where it sits: an app's otherwise).
    private mutating func addRoot(_ identity: Identity) {
      let kind = identity.kind ?? ArchiveAuditor.place(of: identity.components)?.kind ?? .app
      let layout = ContainerLayout.forKind(kind)
      let container = ArchiveAuditor.containerName(archive: archive, root: identity.components)
      let root = Root(components: identity.components, id: identity.id, layout: layout, container: container, streams: streams)
      roots.append(RootState(components: identity.components, layout: layout))
      visitors.append(makeVisitor(root))
    }

    mutating func read() throws(Failure) {
      let reader: LibArchive
      do {
        reader = try LibArchive(path: auditor.archivePath)
      } catch {
        throw Failure(error.isFileFormat ? .notAnInput : .damaged, message: error.isFileFormat ? ArchiveAuditor.notAnArchive(auditor.archivePath, error.message)
          : "cannot read the archive (truncated or damaged?): \(error.message)")
      }
      var sawEntry = false
      // Zips from Finder put __MACOSX/ at the end: read those first (the central directory
      // makes that cheap), then the entries.
      if try readsMetadataFirst(reader) {
        try collectZipMetadata()
      }
      while true {
        let header: ArchiveHeader?
        do {
          header = try reader.next()
        } catch {
          let unrecognised = !sawEntry && error.isFileFormat
          throw Failure(unrecognised ? .notAnInput : .damaged, message: unrecognised ? ArchiveAuditor.notAnArchive(auditor.archivePath, error.message)
                                              : "cannot read the archive (truncated or damaged?): \(error.message)")
        }
        guard let header else { break }
        if !sawEntry && reader.isTextListing { throw Failure(.notAnInput, message: ArchiveAuditor.notAnArchive(auditor.archivePath, "a text file")) }
        sawEntry = true
        try guardSize(header, reader: reader)
        try handle(header, reader: reader)
      }
      if !sawEntry { throw Failure(.damaged, message: "cannot read the archive: it holds no entries") }
      // libarchive, like GNU tar, accepts a tar that stops between two entries without its
      // end-of-archive blocks: exactly what a cut-off copy looks like. Check them ourselves.
      if reader.isUncompressedTar, !endsWithZeroBlocks() {
        throw Failure(.damaged, message: "cannot read the archive (truncated or damaged?): it ends without the two zero blocks that end a tar archive")
      }
    }

    /// Counts `count` more bytes of names held; past the bound the archive is refused.
    private mutating func keep(_ count: Int) throws(Failure) {
      guard names.keep(count) else { throw Failure(.tooLarge, message: names.exceeded) }
    }

    /// The bytes a path held as components costs.
    private static func bytes(_ components: [[UInt8]]) -> Int {
      components.reduce(components.count) { $0 + $1.count }
    }

    /// Whether the file's last 1,024 bytes are zero (a tar archive's end marker, padding included).
    private func endsWithZeroBlocks() -> Bool {
      guard let opened = try? Syscalls.openFile(atPath: auditor.archivePath) else { return false }
      let owner = OwnedDescriptor(owning: opened)
      let file = owner.descriptor
      guard let status = try? Syscalls.status(of: file, displayPath: auditor.archivePath), status.size >= 1024 else { return false }
      var tail = [UInt8](repeating: 1, count: 1024)
      let count = tail.withUnsafeMutableBytes { raw in Syscalls.readAt(file, into: raw, offset: status.size - 1024) }
      return count == 1024 && tail.allSatisfy { $0 == 0 }
    }

    private func readsMetadataFirst(_ reader: LibArchive) throws(Failure) -> Bool {
      // Zip archives are seekable; a second reader collects their AppleDouble entries.
      let bytes: [UInt8]
      do {
        let file = OwnedDescriptor(owning: try Syscalls.openFile(atPath: auditor.archivePath))
        bytes = (try? Syscalls.readUpTo(file.descriptor, 4, displayPath: auditor.archivePath)) ?? []
      } catch {
        throw Failure(.unreadable, message: "cannot read the archive: \(error.reason)")
      }
      return bytes == [0x50, 0x4B, 0x03, 0x04]
    }

    private mutating func collectZipMetadata() throws(Failure) {
      let reader: LibArchive
      do {
        reader = try LibArchive(path: auditor.archivePath)
      } catch {
        throw Failure(.damaged, message: "cannot read the archive: \(error.message)")
      }
      while true {
        let header: ArchiveHeader?
        do { header = try reader.next() } catch { throw Failure(.damaged, message: "cannot read the archive: \(error.message)") }
        guard let header else { return }
        let components = RelativePath.components(header.path)
        guard components.first == Array("__MACOSX".utf8), header.kind == .regular else { continue }
        if header.isEncrypted { throw Failure(.notAnInput, message: "is encrypted (\(TerminalText.escaped(header.path))); appdata cannot read encrypted archives") }
        try readAppleDouble(components: Array(components.dropFirst()), header: header, reader: reader)
      }
    }

    private mutating func guardSize(_ header: ArchiveHeader, reader: LibArchive) throws(Failure) {
      declaredBytes &+= header.size
      let expanded = max(declaredBytes, reader.uncompressedBytes)
      if expanded > auditor.maximumBytes {
        throw Failure(.tooLarge, message: "expands to more than \(auditor.maximumBytes) bytes (--max-archive-bytes); refusing a possible archive bomb")
      }
    }

    /// Reads a `._NAME` entry: if it is AppleDouble, its attributes belong to NAME.
    /// Returns false when the entry is not AppleDouble after all (a file that happens to be named `._x`).
    @discardableResult
    private mutating func readAppleDouble(components: [[UInt8]], header: ArchiveHeader, reader: LibArchive) throws(Failure) -> Bool {
      guard let name = components.last, name.starts(with: [0x2E, 0x5F]), name.count > 2, header.size <= UInt64(ArchiveAuditor.metadataLimit) else { return false }
      let data: [UInt8]
      do { data = try reader.readData(limit: ArchiveAuditor.metadataLimit) } catch { throw Failure(.damaged, message: "cannot read the archive: \(error.message)") }
      guard let attributes = AppleDouble.attributes(data) else { return false }
      sawAttributes = true
      let target = RelativePath.join(Array(components.dropLast()) + [Array(name.dropFirst(2))])
      if appleDouble[target] == nil { try keep(target.count) }
      var interpreted = appleDouble[target] ?? EntryAttributes()
      let found = EntryAttributes(attributes: attributes)
      interpreted.markers.formUnion(found.markers)
      interpreted.declinesBackup = interpreted.declinesBackup || found.declinesBackup
      appleDouble[target] = interpreted
      return true
    }

    private mutating func handle(_ header: ArchiveHeader, reader: LibArchive) throws(Failure) {
      let components = RelativePath.components(header.path).filter { $0 != [0x2E] }
      let tooDeep = header.path.count > RelativePath.maximumLength || components.count > RelativePath.maximumComponents
      if tooDeep || components.contains([0x2E, 0x2E]) {
        let finding = tooDeep ? RelativePath.tooDeep(header.path, components: components.count, source: "an entry path")
          : Finding(rule: .unreadable, path: header.path, message: "entry path contains '..'; not counted", bytes: nil)
        try keep(finding.path.count)
        if let index = rootIndex(containing: components) {
          visitors[index].note(finding)
        } else {
          strayFindings.append(finding)
        }
        return
      }
      guard !components.isEmpty else { return }
      if components.first == Array("__MACOSX".utf8) { return }  // metadata, read first
      if header.isEncrypted {
        throw Failure(.notAnInput, message: "is encrypted (\(TerminalText.escaped(header.path))); appdata cannot read encrypted archives")
      }
      if header.kind == .regular && !ArchiveAuditor.isInBundles(components) {
        // A device backup's own files: read into memory. A plist of that name may yet belong
        // to a container found later, so it goes on to be counted too; a stored file does not.
        if ArchivedBackup.mayBeCaptured(components.last!) && ArchivedBackup.capturedNames.contains(components.last!) {
          try captureBackupFile(components, header: header, reader: reader)
        } else if ArchivedBackup.isStoredFile(components) {
          if auditor.recordsStoredFiles {
            let stored = try backup(in: Array(components.dropLast(2)))
            let key = RelativePath.join(Array(components.suffix(2)))
            if stored.storedSizes[key] == nil { try keep(key.count) }
            stored.storedSizes[key] = header.size
          }
          if rootIndex(containing: components) == nil { return }
        }
      }
      if header.kind == .regular, components.last!.starts(with: [0x2E, 0x5F]),
         try readAppleDouble(components: components, header: header, reader: reader) {
        return  // metadata beside its file: not counted, not reported
      }
      if !header.attributes.isEmpty { sawAttributes = true }
      var attributes = header.attributes.isEmpty ? EntryAttributes() : EntryAttributes(attributes: header.attributes)
      if !appleDouble.isEmpty, let extra = appleDouble.removeValue(forKey: RelativePath.join(components)) {
        names.release(RelativePath.join(components).count)
        attributes.markers.formUnion(extra.markers)
        attributes.declinesBackup = attributes.declinesBackup || extra.declinesBackup
      }
      var isCacheTag = false
      if header.kind == .regular && components.last! == CacheDirectoryTag.nameBytes {
        let data = (try? reader.readData(limit: 43)) ?? []
        isCacheTag = data.elementsEqual(CacheDirectoryTag.signature.utf8)
      }
      if header.kind == .regular && ArchiveAuditor.identityFiles.contains(components.last!)
          && header.size <= UInt64(ArchiveAuditor.identityLimit) {
        let key = RelativePath.join(components)
        if identityPlists[key] == nil { try keep(key.count) }
        identityPlists[key] = (try? reader.readData(limit: ArchiveAuditor.identityLimit)) ?? []
      }

      try file(Deferred(components: components, kind: header.kind, size: header.size, attributes: attributes, isCacheTag: isCacheTag))
    }

    /// An entry to count: placed in the container whose folder holds it, or in a container it
    /// shows to be one (those held back for it placed too), or held back until one is found.
    private mutating func file(_ item: Deferred) throws(Failure) {
      let components = item.components
      if let index = rootIndex(containing: components) {
        try place(item, in: index)
        return
      }
      if !isFixed, let candidate = candidateRoot(components, kind: item.kind) {
        addRoot(Identity(components: candidate, id: nil, kind: nil))
        let index = roots.count - 1
        let waiting = deferred
        deferred = []
        for entry in waiting {
          if entry.components.starts(with: candidate) {
            names.release(Self.bytes(entry.components))
            try place(entry, in: index)
          } else {
            deferred.append(entry)
          }
        }
        try place(item, in: index)
        return
      }
      // Bundles are never app data, and a fixed set of roots takes nothing else: drop at once.
      if isFixed || ArchiveAuditor.isInBundles(components) { return }
      try keep(Self.bytes(components))
      deferred.append(item)
    }

    /// The backup whose folder is `folder`, made when first met.
    private mutating func backup(in folder: [[UInt8]]) throws(Failure) -> ArchivedBackup {
      let key = RelativePath.join(folder)
      if let known = backupFolders[key] { return known }
      try keep(key.count)
      let made = ArchivedBackup(archive: archive, components: folder, archivePath: auditor.archivePath)
      backupFolders[key] = made
      return made
    }

    /// Reads a file a device backup holds at its top into memory: a plist (up to the plist
    /// limit), Manifest.db (up to the archive's limit), or notes a pre-iOS 10 Manifest.mbdb.
    private mutating func captureBackupFile(_ components: [[UInt8]], header: ArchiveHeader, reader: LibArchive) throws(Failure) {
      let name = String(decoding: components.last!, as: UTF8.self)
      let backup = try backup(in: Array(components.dropLast()))
      switch name {
      case BackupManifest.oldDatabaseName:
        backup.hasOldDatabase = true
      case BackupManifest.databaseName:
        // Held once, in memory of its own, and bounded before a byte is expanded: the declared
        // size is checked first, and a size not declared is caught when the buffer fills.
        let limit = auditor.maximumManifestBytes
        let name = RelativePath.display(RelativePath.join(components))
        func tooLarge(_ what: String) -> Failure {
          Failure(.tooLarge, message: "\(TerminalText.escaped(name)) \(what), more than the \(ByteSize.human(limit)) a backup's Manifest.db may be (--max-manifest-bytes raises it); refusing a possible archive bomb")
        }
        if header.size > limit { throw tooLarge("expands to \(ByteSize.human(header.size))") }
        // One byte more than the bound, to tell a database of exactly the bound from a larger one.
        let capacity = Int(clamping: (header.size > 0 ? header.size : limit) &+ 1)
        guard let memory = SecretBuffer(capacity: capacity) else {
          throw Failure(.unreadable, message: "cannot map \(ByteSize.human(UInt64(capacity))) of memory for \(TerminalText.escaped(name))")
        }
        do { try reader.readData(into: memory) } catch { throw Failure(.damaged, message: "cannot read the archive (truncated or damaged?): \(error.message)") }
        if UInt64(memory.count) > limit { throw tooLarge("expands to more") }
        if header.size > 0 && UInt64(memory.count) > header.size { throw tooLarge("expands to more than its declared \(ByteSize.human(header.size))") }
        backup.database = memory
      default:
        let limit = PropertyList.Limits.maximumFileSize
        guard header.size <= UInt64(limit) else {
          backup.unreadPlists[name] = "\(header.size) bytes, larger than the \(ByteSize.human(UInt64(limit))) appdata reads from such a file"
          return
        }
        backup.plists[name] = (try? reader.readData(limit: limit)) ?? []
      }
    }

    /// The folders holding a device backup's files, as a folder on disk would be recognised.
    func backups() -> [ArchivedBackup] {
      backupFolders.values.filter { BackupManifest.isBackup($0) }
        .sorted { RelativePath.precedes(RelativePath.join($0.components), RelativePath.join($1.components)) }
    }

    /// The root holding `components` (the deepest, if roots nest), if any.
    private func rootIndex(containing components: [[UInt8]]) -> Int? {
      var best: Int?
      for (index, root) in roots.enumerated() where components.count >= root.components.count && components.starts(with: root.components) {
        if best == nil || root.components.count > roots[best!].components.count { best = index }
      }
      return best
    }

    /// The container root an entry reveals: the folder above a `Documents`, `Library` or `tmp`
    /// folder, or the folder holding a container metadata plist; never inside `Bundle/Application`.
    private func candidateRoot(_ components: [[UInt8]], kind: ArchiveHeader.Kind) -> [[UInt8]]? {
      var candidate: [[UInt8]]?
      if let index = components.firstIndex(where: { ArchiveAuditor.rootMarkers.contains($0) }),
         index < components.count - 1 || kind == .directory {
        candidate = Array(components[..<index])
      } else if kind == .regular, components.last! == ArchiveAuditor.metadataName {
        candidate = Array(components.dropLast())
      }
      guard let candidate, !ArchiveAuditor.isInBundles(candidate) else { return nil }
      return candidate
    }

    /// Each root's id and kind, from the plists read on the way.
    func identities() -> [Identity] {
      roots.map { root in
        let found = ContainerIdentity.find(root: root.components) { path in identityPlists[RelativePath.join(path)] }
        let place = ArchiveAuditor.place(of: root.components)?.kind
        return Identity(components: root.components, id: found.id, kind: place ?? found.kind ?? .app, findings: found.findings)
      }
    }

    /// The containers, one per root (`identities` in the roots' order), with their visitors.
    mutating func finish(_ identities: [Identity]) -> [Container<V>] {
      var containers: [Container<V>] = []
      for (index, identity) in identities.enumerated() {
        var visitor = visitors[index]
        if index == 0 { for finding in strayFindings { visitor.note(finding) } }
        for finding in identity.findings { visitor.note(finding) }
        containers.append(Container(
          root: identity.components, id: identity.id, kind: identity.kind ?? .app,
          isInCollection: ArchiveAuditor.place(of: identity.components) != nil,
          container: ArchiveAuditor.containerName(archive: archive, root: identity.components),
          name: identity.id ?? ArchiveAuditor.folderName(identity.components, archive: archive),
          layout: roots[index].layout, visitor: visitor))
      }
      return containers
    }

    /// Classifies one entry under its root, as the walk would.
    private mutating func place(_ item: Deferred, in index: Int) throws(Failure) {
      let rootComponents = roots[index].components
      guard item.components.count >= rootComponents.count, item.components.starts(with: rootComponents) else { return }
      let relative = item.components.dropFirst(rootComponents.count)
      if relative.isEmpty {
        if item.attributes.markers.isExcluding { roots[index].rootExclusion = Exclusion(path: Array(".".utf8), markers: item.attributes.markers) }
        return
      }
      if !roots[index].looksLikeContainer, let first = relative.first,
         ArchiveAuditor.rootMarkers.contains(first) || (relative.count == 1 && first == ArchiveAuditor.metadataName) {
        roots[index].looksLikeContainer = true
      }
      if item.kind == .hardLink { return }  // the same file as an earlier entry: counted once
      let layout = roots[index].layout
      let parentComponents = relative.dropLast()
      let parentPath = RelativePath.join(Array(parentComponents))
      let parent = try folderInfo(parentComponents, path: parentPath, in: index)
      let name = relative.last!
      let path = RelativePath.join(parentPath, name)
      let depth = relative.count
      let exclusion = item.attributes.markers.isExcluding ? Exclusion(path: path, markers: item.attributes.markers) : parent.exclusion
      let placement = layout.place(depth: depth, leadingComponents: relative, parent: parent.placement, isExcluded: exclusion != nil)
      if item.kind == .directory {
        let seen = roots[index].folders[path] != nil
        if !seen { try keep(path.count) }
        roots[index].folders[path] = FolderInfo(exclusion: exclusion, placement: placement)
        if seen { return }  // already counted, from an entry inside it that came first
      }
      let kind: FileStatus.Kind
      switch item.kind {
      case .regular: kind = .regular
      case .directory: kind = .directory
      case .symbolicLink: kind = .symbolicLink
      default: kind = .other
      }
      let size = kind == .regular ? item.size : 0
      // Archives carry no allocation; estimate it as 4 KiB blocks, as ext4 and APFS allocate.
      visit(name: name, parentPath: parentPath, depth: depth, kind: kind, size: size, allocated: (size + 4095) / 4096 * 4096,
            placement: placement, attributes: item.attributes, isCacheTag: item.isCacheTag, parent: parent, in: index)
    }

    private mutating func visit(
      name: [UInt8], parentPath: [UInt8], depth: Int, kind: FileStatus.Kind, size: UInt64, allocated: UInt64,
      placement: Placement, attributes: EntryAttributes, isCacheTag: Bool, parent: FolderInfo, in index: Int
    ) {
      let status = FileStatus(describing: kind, size: size, allocatedSize: allocated)
      parentPath.withUnsafeBufferPointer { parentPath in
        name.withUnsafeBufferPointer { buffer in
          BorrowedExclusion.with(parent.exclusion) { exclusion in
            visitors[index].visit(WalkedEntry(
              parentPath: parentPath, name: buffer, depth: depth, status: status, placement: placement,
              ownMarkers: attributes.markers, inheritedExclusion: exclusion, declinesBackup: attributes.declinesBackup,
              isCacheDirectoryTag: isCacheTag, parentCategory: parent.placement.category))
          }
        }
      }
    }

    /// A folder's info; folders an archive lists no entry for inherit from theirs, and are
    /// counted as the walk would count them on disk.
    private mutating func folderInfo(_ relative: ArraySlice<[UInt8]>, path: [UInt8], in index: Int) throws(Failure) -> FolderInfo {
      if relative.isEmpty { return FolderInfo(exclusion: roots[index].rootExclusion, placement: .root) }
      if let known = roots[index].folders[path] { return known }
      let layout = roots[index].layout
      let parentComponents = relative.dropLast()
      let parentPath = RelativePath.join(Array(parentComponents))
      let parent = try folderInfo(parentComponents, path: parentPath, in: index)
      let depth = relative.count
      let info = FolderInfo(
        exclusion: parent.exclusion,
        placement: layout.place(depth: depth, leadingComponents: relative, parent: parent.placement, isExcluded: parent.exclusion != nil))
      try keep(path.count)
      roots[index].folders[path] = info
      visit(name: relative.last!, parentPath: parentPath, depth: depth, kind: .directory, size: 0, allocated: 0,
            placement: info.placement, attributes: EntryAttributes(), isCacheTag: false, parent: parent, in: index)
      return info
    }
  }

  /// `ARCHIVE//ROOT` (just `ARCHIVE` for a container at the archive's top).
  static func containerName(archive: String, root: [[UInt8]]) -> String {
    root.isEmpty ? archive : archive + "//" + RelativePath.display(RelativePath.join(root))
  }

  /// The folder name shown for a container without an id: `NAME.xcappdata` for a package's
  /// `AppData`, the `<id>` above a Mac app's `Data`, else the root's own name.
  static func folderName(_ root: [[UInt8]], archive: String) -> String {
    guard let last = root.last else { return String(archive.split(separator: "/").last ?? "") }
    if root.count >= 2, last == Array(ContainerPlaces.packageContainerName.utf8) || last == Array("Data".utf8) {
      return RelativePath.display(root[root.count - 2])
    }
    return RelativePath.display(last)
  }

  /// Whether a path lies in a folder of `.app` bundles (`Bundle/Application`): never app data.
  static func isInBundles(_ components: [[UInt8]]) -> Bool {
    guard components.count >= 2 else { return false }
    for index in 0..<(components.count - 1)
    where components[index] == Array("Bundle".utf8) && components[index + 1] == Array("Application".utf8) {
      return true
    }
    return false
  }
}

extension ArchiveAuditor {
  /// The names of a device backup's own files.
  static let backupFileNames: Set<String> = ["Manifest.db", "Manifest.plist", "Info.plist", "Status.plist", "Manifest.db-wal", "Manifest.db-shm"]

  /// The backup folder a file belongs to, when it is one of a device backup's own files (its
  /// folder holds Manifest.db beside Manifest.plist); nil otherwise.
  static func backupFolder(holding path: String) -> String? {
    let bytes = Array(path.utf8)
    let name = String(decoding: bytes[((bytes.lastIndex(of: 0x2F)).map { $0 + 1 } ?? 0)...], as: UTF8.self)
    guard backupFileNames.contains(name) else { return nil }
    let folder = Syscalls.folderPart(of: bytes)
    guard (try? Syscalls.status(ofPath: folder + "/Manifest.db"))?.kind == .regular,
          (try? Syscalls.status(ofPath: folder + "/Manifest.plist"))?.kind == .regular else { return nil }
    return folder
  }

  /// Whether libarchive reads `path` as an archive (its format is known, and it has an entry or
  /// none).
  static func isArchive(_ path: String) -> Bool {
    guard let reader = try? LibArchive(path: path) else { return false }
    do { _ = try reader.next() } catch { return !error.isFileFormat }
    return !reader.isTextListing
  }

  /// The refusal of a file that is not an archive: a device backup's own file names its
  /// folder; any other file says what PATH can be.
  static func notAnArchive(_ path: String, _ reason: String) -> String {
    if let folder = backupFolder(holding: path) {
      return "is a file of a device backup; give the backup's folder: \(TerminalText.escaped(folder))"
    }
    return "is neither a container folder nor an archive appdata can read (\(reason)); give a container's folder, an .xcappdata package, a Simulator device, a device backup's folder, or a tar or zip of one"
  }
}
