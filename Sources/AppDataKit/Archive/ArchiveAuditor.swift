/// Audits a container inside an archive made on a Mac (or on Linux), without extracting it:
/// tar, pax, zip, compressed or not, detected by content. Markers come from pax headers
/// (`SCHILY.xattr.NAME`, `LIBARCHIVE.xattr.NAME`), from AppleDouble entries (`._NAME` beside the
/// file in tar archives, `__MACOSX/…/._NAME` in zips) and from `user.`-prefixed names. The
/// entries are classified exactly as the walk classifies files on disk, by the same accumulator.
public struct ArchiveAuditor {
  public struct Failure: Error, Sendable {
    public var message: String
  }

  public let archivePath: String
  public let options: AuditOptions
  /// `--root`: the container's folder inside the archive; nil to find it.
  public var root: [[UInt8]]?
  /// `--max-archive-bytes`: refuse archives that expand beyond this (zip bombs).
  public var maximumBytes: UInt64 = 4 << 30
  public var entrySink: (@Sendable ([UInt8]) -> Void)?

  public init(archivePath: String, options: AuditOptions) {
    self.archivePath = archivePath
    self.options = options
  }

  /// The top-level folders that mark a container root.
  static let rootMarkers: Set<[UInt8]> = [Array("Documents".utf8), Array("Library".utf8), Array("tmp".utf8)]
  /// AppleDouble and other metadata files are read up to this size; larger ones are not metadata.
  static let metadataLimit = 16 << 20

  public func run() throws(Failure) -> AuditReport {
    var pass = try Pass(auditor: self, root: root)
    try pass.read()
    // Candidate roots nested in another belong to it; disjoint ones are separate containers.
    let roots = pass.candidates.filter { candidate in !pass.candidates.contains { $0 != candidate && candidate.starts(with: $0) } }
    if root == nil {
      if roots.count > 1 {
        let list = roots.map { $0.isEmpty ? "/" : TerminalText.escaped(RelativePath.join($0)) }.sorted().joined(separator: ", ")
        throw Failure(message: "holds \(roots.count) containers (\(list)); choose one with --root")
      }
      if roots.isEmpty {
        throw Failure(message: "holds no app data container (no Documents, Library or tmp folder); name its folder with --root")
      }
      if roots[0] != pass.root {
        // The first folder seen was not the container root (a tmp folder inside a stray folder
        // came first): read again knowing the root. Rare, and still correct.
        pass = try Pass(auditor: self, root: roots[0])
        try pass.read()
      }
    }
    var container = Syscalls.absolutePath(archivePath)
    if let chosen = pass.root, !chosen.isEmpty { container += "//" + RelativePath.display(RelativePath.join(chosen)) }
    return Auditor.report(from: [pass.accumulator], options: options, container: container, entrySink: entrySink)
  }

  // MARK: - One pass over the archive

  /// What is known about a folder inside the container: what it passes down to its entries.
  struct FolderInfo {
    var exclusion: Exclusion?
    var category: Category
    /// The location rule, inherited below depth 2 (as the walk does).
    var ruleIndex: Int
    var locationCategory: Category
  }

  /// An entry seen before the container root was known (usually a handful: the root's own
  /// folders and metadata plist).
  struct Deferred {
    var components: [[UInt8]]
    var kind: ArchiveHeader.Kind
    var size: UInt64
    var attributes: EntryAttributes
    var isCacheTag: Bool
  }

  struct Pass {
    let auditor: ArchiveAuditor
    var root: [[UInt8]]?
    var accumulator: AuditAccumulator
    var candidates: [[[UInt8]]] = []
    var folders: [[UInt8]: FolderInfo] = [:]
    var rootExclusion: Exclusion?
    var deferred: [Deferred] = []
    /// Markers from AppleDouble files, by the path (in the archive) of the file they describe.
    var appleDouble: [[UInt8]: EntryAttributes] = [:]
    var declaredBytes: UInt64 = 0

    init(auditor: ArchiveAuditor, root: [[UInt8]]?) throws(Failure) {
      self.auditor = auditor
      self.root = root
      accumulator = AuditAccumulator(options: auditor.options, sink: auditor.entrySink)
      if let root { candidates = [root] }
    }

    mutating func read() throws(Failure) {
      let reader: LibArchive
      do {
        reader = try LibArchive(path: auditor.archivePath)
      } catch {
        throw Failure(message: error.message.contains("Unrecognized archive format")
          ? "is neither a container folder nor an archive appdata can read (\(error.message))"
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
          let unrecognised = !sawEntry && error.message.contains("Unrecognized archive format")
          throw Failure(message: unrecognised ? "is neither a container folder nor an archive appdata can read (\(error.message))"
                                              : "cannot read the archive (truncated or damaged?): \(error.message)")
        }
        guard let header else { break }
        sawEntry = true
        try guardSize(header, reader: reader)
        try handle(header, reader: reader)
      }
      if !sawEntry { throw Failure(message: "cannot read the archive: it holds no entries") }
      // libarchive, like GNU tar, accepts a tar that stops between two entries without its
      // end-of-archive blocks: exactly what a cut-off copy looks like. Check them ourselves.
      if reader.isUncompressedTar, !endsWithZeroBlocks() {
        throw Failure(message: "cannot read the archive (truncated or damaged?): it ends without the two zero blocks that end a tar archive")
      }
    }

    /// Whether the file's last 1,024 bytes are zero (a tar archive's end marker, padding included).
    private func endsWithZeroBlocks() -> Bool {
      guard let file = try? Syscalls.openFile(atPath: auditor.archivePath) else { return false }
      defer { file.close() }
      guard let status = try? Syscalls.status(of: file, displayPath: auditor.archivePath), status.size >= 1024 else { return false }
      var tail = [UInt8](repeating: 1, count: 1024)
      let count = tail.withUnsafeMutableBytes { raw in Syscalls.readAt(file, into: raw, offset: status.size - 1024) }
      return count == 1024 && tail.allSatisfy { $0 == 0 }
    }

    private func readsMetadataFirst(_ reader: LibArchive) throws(Failure) -> Bool {
      // Zip archives are seekable; a second reader collects their AppleDouble entries.
      let bytes: [UInt8]
      do {
        let file = try Syscalls.openFile(atPath: auditor.archivePath)
        defer { file.close() }
        bytes = (try? Syscalls.readUpTo(file, 4, displayPath: auditor.archivePath)) ?? []
      } catch {
        throw Failure(message: "cannot read the archive: \(error.reason)")
      }
      return bytes == [0x50, 0x4B, 0x03, 0x04]
    }

    private mutating func collectZipMetadata() throws(Failure) {
      let reader: LibArchive
      do {
        reader = try LibArchive(path: auditor.archivePath)
      } catch {
        throw Failure(message: "cannot read the archive: \(error.message)")
      }
      while true {
        let header: ArchiveHeader?
        do { header = try reader.next() } catch { throw Failure(message: "cannot read the archive: \(error.message)") }
        guard let header else { return }
        let components = RelativePath.components(header.path)
        guard components.first == Array("__MACOSX".utf8), header.kind == .regular else { continue }
        if header.isEncrypted { throw Failure(message: "is encrypted (\(TerminalText.escaped(header.path))); appdata cannot read encrypted archives") }
        try readAppleDouble(components: Array(components.dropFirst()), header: header, reader: reader)
      }
    }

    private mutating func guardSize(_ header: ArchiveHeader, reader: LibArchive) throws(Failure) {
      declaredBytes &+= header.size
      let expanded = max(declaredBytes, reader.uncompressedBytes)
      if expanded > auditor.maximumBytes {
        throw Failure(message: "expands to more than \(auditor.maximumBytes) bytes (--max-archive-bytes); refusing a possible archive bomb")
      }
    }

    /// Reads a `._NAME` entry: if it is AppleDouble, its attributes belong to NAME.
    /// Returns false when the entry is not AppleDouble after all (a file that happens to be named `._x`).
    @discardableResult
    private mutating func readAppleDouble(components: [[UInt8]], header: ArchiveHeader, reader: LibArchive) throws(Failure) -> Bool {
      guard let name = components.last, name.starts(with: [0x2E, 0x5F]), name.count > 2, header.size <= UInt64(ArchiveAuditor.metadataLimit) else { return false }
      let data: [UInt8]
      do { data = try reader.readData(limit: ArchiveAuditor.metadataLimit) } catch { throw Failure(message: "cannot read the archive: \(error.message)") }
      guard let attributes = AppleDouble.attributes(data) else { return false }
      let target = Array(components.dropLast()) + [Array(name.dropFirst(2))]
      var interpreted = appleDouble[RelativePath.join(target)] ?? EntryAttributes()
      let found = EntryAttributes(attributes: attributes)
      interpreted.markers.formUnion(found.markers)
      interpreted.declinesBackup = interpreted.declinesBackup || found.declinesBackup
      appleDouble[RelativePath.join(target)] = interpreted
      return true
    }

    private mutating func handle(_ header: ArchiveHeader, reader: LibArchive) throws(Failure) {
      let components = RelativePath.components(header.path).filter { $0 != [0x2E] }
      if components.contains([0x2E, 0x2E]) {
        accumulator.findings.append(Finding(
          rule: .unreadable, path: header.path, message: "entry path contains '..'; not counted", bytes: nil))
        return
      }
      guard !components.isEmpty else { return }
      if components.first == Array("__MACOSX".utf8) { return }  // metadata, read first
      if header.isEncrypted {
        throw Failure(message: "is encrypted (\(TerminalText.escaped(header.path))); appdata cannot read encrypted archives")
      }
      if header.kind == .regular, components.last!.starts(with: [0x2E, 0x5F]),
         try readAppleDouble(components: components, header: header, reader: reader) {
        return  // metadata beside its file: not counted, not reported
      }
      var attributes = header.attributes.isEmpty ? EntryAttributes() : EntryAttributes(attributes: header.attributes)
      if !appleDouble.isEmpty, let extra = appleDouble.removeValue(forKey: RelativePath.join(components)) {
        attributes.markers.formUnion(extra.markers)
        attributes.declinesBackup = attributes.declinesBackup || extra.declinesBackup
      }
      var isCacheTag = false
      if header.kind == .regular && components.last! == CacheDirectoryTag.nameBytes {
        let data = (try? reader.readData(limit: 43)) ?? []
        isCacheTag = data.elementsEqual(CacheDirectoryTag.signature.utf8)
      }

      if root == nil, let index = components.firstIndex(where: { ArchiveAuditor.rootMarkers.contains($0) }),
         index < components.count - 1 || header.kind == .directory {
        let candidate = Array(components[..<index])
        if !candidates.contains(candidate) { candidates.append(candidate) }
        root = candidate
        let waiting = deferred
        deferred = []
        for item in waiting { place(item) }
      } else if root == nil {
        deferred.append(Deferred(components: components, kind: header.kind, size: header.size, attributes: attributes, isCacheTag: isCacheTag))
        return
      } else if !components.starts(with: root!),
                let index = components.firstIndex(where: { ArchiveAuditor.rootMarkers.contains($0) }),
                index < components.count - 1 || header.kind == .directory {
        let candidate = Array(components[..<index])
        if !candidates.contains(candidate) { candidates.append(candidate) }
      }
      place(Deferred(components: components, kind: header.kind, size: header.size, attributes: attributes, isCacheTag: isCacheTag))
    }

    /// Classifies one entry under the known root, as the walk would.
    private mutating func place(_ item: Deferred) {
      guard let root, item.components.count >= root.count, item.components.starts(with: root) else { return }
      let relative = item.components.dropFirst(root.count)
      if relative.isEmpty {
        if item.attributes.markers.isExcluding { rootExclusion = Exclusion(path: Array(".".utf8), markers: item.attributes.markers) }
        return
      }
      if item.kind == .hardLink { return }  // the same file as an earlier entry: counted once
      let parentComponents = relative.dropLast()
      let parentPath = RelativePath.join(Array(parentComponents))
      let parent = folderInfo(parentComponents, path: parentPath)
      let name = relative.last!
      let path = RelativePath.join(parentPath, name)
      let depth = relative.count
      let ruleIndex = depth <= LocationRule.maximumDepth ? ContainerLayout.ruleIndex(for: relative) : parent.ruleIndex
      let locationCategory = depth <= LocationRule.maximumDepth ? ContainerLayout.category(at: ruleIndex) : parent.locationCategory
      let exclusion = item.attributes.markers.isExcluding ? Exclusion(path: path, markers: item.attributes.markers) : parent.exclusion
      let category: Category = locationCategory == .critical && exclusion != nil ? .offline : locationCategory
      if item.kind == .directory {
        let seen = folders[path] != nil
        folders[path] = FolderInfo(exclusion: exclusion, category: category, ruleIndex: ruleIndex, locationCategory: locationCategory)
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
            ruleIndex: ruleIndex, locationCategory: locationCategory, category: category, attributes: item.attributes,
            isCacheTag: item.isCacheTag, parent: parent)
    }

    private mutating func visit(
      name: [UInt8], parentPath: [UInt8], depth: Int, kind: FileStatus.Kind, size: UInt64, allocated: UInt64, ruleIndex: Int,
      locationCategory: Category, category: Category, attributes: EntryAttributes, isCacheTag: Bool, parent: FolderInfo
    ) {
      let status = FileStatus.described(kind: kind, size: size, allocatedSize: allocated)
      parentPath.withUnsafeBufferPointer { parentPath in
        name.withUnsafeBufferPointer { buffer in
          BorrowedExclusion.with(parent.exclusion) { exclusion in
            accumulator.visit(WalkedEntry(
              parentPath: parentPath, name: buffer, depth: depth, status: status, ruleIndex: ruleIndex,
              locationCategory: locationCategory, category: category, ownMarkers: attributes.markers,
              inheritedExclusion: exclusion, declinesBackup: attributes.declinesBackup,
              isCacheDirectoryTag: isCacheTag, parentCategory: parent.category))
          }
        }
      }
    }

    /// A folder's info; folders an archive lists no entry for inherit from theirs, and are
    /// counted as the walk would count them on disk.
    private mutating func folderInfo(_ relative: ArraySlice<[UInt8]>, path: [UInt8]) -> FolderInfo {
      if relative.isEmpty { return FolderInfo(exclusion: rootExclusion, category: .other, ruleIndex: -1, locationCategory: .other) }
      if let known = folders[path] { return known }
      let parentComponents = relative.dropLast()
      let parentPath = RelativePath.join(Array(parentComponents))
      let parent = folderInfo(parentComponents, path: parentPath)
      let depth = relative.count
      let ruleIndex = depth <= LocationRule.maximumDepth ? ContainerLayout.ruleIndex(for: relative) : parent.ruleIndex
      let locationCategory = depth <= LocationRule.maximumDepth ? ContainerLayout.category(at: ruleIndex) : parent.locationCategory
      let info = FolderInfo(exclusion: parent.exclusion,
                            category: locationCategory == .critical && parent.exclusion != nil ? .offline : locationCategory,
                            ruleIndex: ruleIndex, locationCategory: locationCategory)
      folders[path] = info
      visit(name: relative.last!, parentPath: parentPath, depth: depth, kind: .directory, size: 0, allocated: 0, ruleIndex: ruleIndex,
            locationCategory: locationCategory, category: info.category, attributes: EntryAttributes(), isCacheTag: false, parent: parent)
      return info
    }
  }
}
