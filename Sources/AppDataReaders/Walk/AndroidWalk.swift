import AppDataSystem
import AppDataCore

/// The walk of an Android app's data folder (or its device-encrypted storage, or its external
/// files folder): the one walker (`Walker`, reading statuses and symlink targets, no extended
/// attribute: Android's backup looks at none) with a visitor that keeps each folder's entries
/// (`AndroidWalkVisitor`). The tree and the findings are then put together on one thread,
/// depth first in byte order, the order a walk on one thread reads them in: the same tree and
/// the same findings whatever the threads did.
enum AndroidWalk {
  /// Walks the folder at `path` with up to `jobs` threads and adds what it finds to `tree`
  /// under `storage`'s root. A root that cannot be read throws; anything below it that cannot
  /// be read is a finding.
  static func walk(_ path: String, storage: AndroidStorage, jobs: Int, into tree: inout AndroidTree,
                   directories: inout UInt64, findings: inout [Finding]) throws(SystemError) {
    let root = Walker.Root(path: path, layout: .app, reading: .linkTargets)
    let visitors = try Walker.walk(roots: [root], jobs: max(1, jobs)) { _ in AndroidWalkVisitor() }[0].get()
    var read = AndroidWalkVisitor.Read()
    for visitor in visitors { read.merge(visitor.read) }
    try assemble(read, storage: storage, into: &tree, directories: &directories, findings: &findings)
  }

  /// The tree and the findings from the folders read, depth first in byte order.
  static func assemble(_ read: AndroidWalkVisitor.Read, storage: AndroidStorage, into tree: inout AndroidTree,
                       directories: inout UInt64, findings: inout [Finding]) throws(SystemError) {
    var stack: [(path: [UInt8], node: AndroidTree.Node)] = [([], tree.root(storage))]
    while let (path, node) = stack.popLast() {
      if !read.streamFailures.isEmpty, let error = read.streamFailures[path] {
        if path.isEmpty { throw error }
        findings.append(Finding(rule: .unreadable, path: path, message: "cannot read the folder: \(error.reason)", bytes: nil))
        continue
      }
      guard let folder = read.folders[FolderPath(path)] else { continue }
      if let failure = folder.readFailure {
        findings.append(Finding(rule: .unreadable, path: path.isEmpty ? [0x2E] : path,
                                message: "cannot read the folder: \(SystemError(code: failure, operation: .readFolder, path: "").reason)", bytes: nil))
      }
      func child(_ index: Int) -> [UInt8] { path.isEmpty ? Array(folder.name(index)) : path + [0x2F] + folder.name(index) }
      for index in folder.entries.indices {
        switch folder.entries[index] {
        case .tooLong:
          let child = child(index)
          findings.append(RelativePath.tooDeep(child, components: child.count(where: { $0 == 0x2F }) + 1, source: "a path"))
        case .statusFailed(let code):
          findings.append(Finding(rule: .unreadable, path: child(index),
                                  message: "cannot read the status: \(SystemError(code: code, operation: .readStatus, path: "").reason)", bytes: nil))
        case .directory:
          let added = tree.add(name: folder.name(index), under: node, .directory)
          directories += 1
          let below = child(index)
          if !read.openFailures.isEmpty, let code = read.openFailures[below] {
            findings.append(Finding(rule: .unreadable, path: below,
                                    message: "cannot open the folder: \(SystemError(code: code, operation: .openFolder, path: "").reason)", bytes: nil))
          } else {
            stack.append((below, added))
          }
        case .file(let size): tree.add(name: folder.name(index), under: node, .file(size: size))
        case .other: tree.add(name: folder.name(index), under: node, .other)
        case .link(let target):
          let added = tree.add(name: folder.name(index), under: node, .other)
          if let target { tree.setLinkTarget(added, target) }
        }
      }
    }
  }
}

/// What the walk hands over for an Android app's data: each folder's entries, kept by the
/// folder's path and sorted by name in byte order when the folder ends (on the worker's
/// thread), and the folders that could not be opened or read. One per worker thread; the
/// walk's caller merges them (`Read.merge`).
struct AndroidWalkVisitor: WalkVisitor {
  /// One entry of a folder.
  enum Entry: Sendable {
    case file(size: UInt64)
    case other
    /// A symlink, and its target (nil when it could not be read).
    case link([UInt8]?)
    case directory
    /// fstatat failed with this errno.
    case statusFailed(Int32)
    /// Its path is past `RelativePath`'s bounds: not counted.
    case tooLong
  }

  /// One folder as a worker read it: its entries in byte order of their names.
  struct Folder: Sendable {
    var arena: [UInt8] = []
    /// Each entry's name in `arena` (start, count), in byte order of the names.
    var spans: [(start: Int32, count: Int32)] = []
    var entries: [Entry] = []
    /// Reading its names failed part-way with this errno (the names before were kept).
    var readFailure: Int32?

    func name(_ index: Int) -> ArraySlice<UInt8> {
      let span = spans[index]
      return arena[Int(span.start)..<Int(span.start + span.count)]
    }
  }

  /// Everything read, by folder path.
  struct Read {
    var folders: [FolderPath: Folder] = [:]
    /// Folders that could not be opened from their parent, with the errno.
    var openFailures: [[UInt8]: Int32] = [:]
    /// Folders opened whose descriptor could not be read as a folder.
    var streamFailures: [[UInt8]: SystemError] = [:]

    mutating func merge(_ other: Read) {
      // One worker's (a walk on one thread, or the first of several): taken as it is.
      if folders.isEmpty && openFailures.isEmpty && streamFailures.isEmpty {
        self = other
        return
      }
      folders.merge(other.folders) { first, _ in first }
      openFailures.merge(other.openFailures) { first, _ in first }
      streamFailures.merge(other.streamFailures) { first, _ in first }
    }
  }

  private(set) var read = Read()
  /// The folder being read: its path and its components, its entries as found (unsorted),
  /// whether one is open.
  private var path: [UInt8] = []
  private var depth = 0
  private var current = Folder()
  private var isReading = false

  mutating func beginFolder(_ path: UnsafeBufferPointer<UInt8>) {
    self.path = Array(path)
    depth = path.isEmpty ? 0 : path.count(where: { $0 == 0x2F }) + 1
    current = Folder()
    isReading = true
  }

  mutating func visit(_ entry: WalkedEntry) {
    let kind: Entry
    if isTooLong(name: entry.nameBuffer.count) {
      kind = .tooLong
    } else {
      switch entry.status.kind {
      case .directory: kind = .directory
      case .regular: kind = .file(size: entry.status.size)
      case .symbolicLink: kind = .link(entry.linkTarget)
      default: kind = .other
      }
    }
    add(entry.nameBuffer, kind)
  }

  mutating func failed(path failedPath: [UInt8], error: SystemError) {
    if isReading && error.operation == .readStatus {
      let name = failedPath.suffix(failedPath.count - path.count - (path.isEmpty ? 0 : 1))
      name.withUnsafeBufferPointer { add($0, isTooLong(name: $0.count) ? .tooLong : .statusFailed(error.code)) }
    } else if isReading && error.operation == .readFolder && failedPath == path {
      current.readFailure = error.code
    } else if error.operation == .openFolder {
      read.openFailures[failedPath] = error.code
    } else {
      read.streamFailures[failedPath] = error
    }
  }

  mutating func endFolder() {
    // In byte order, so that the tree (and whatever follows its order) is the same on every
    // filesystem.
    let unsorted = current
    let order = unsorted.arena.withUnsafeBufferPointer { arena in
      unsorted.spans.indices.sorted { left, right in
        let a = unsorted.spans[left], b = unsorted.spans[right]
        return UnsafeBufferPointer(rebasing: arena[Int(a.start)..<Int(a.start + a.count)])
          .lexicographicallyPrecedes(UnsafeBufferPointer(rebasing: arena[Int(b.start)..<Int(b.start + b.count)]))
      }
    }
    var folder = Folder(arena: unsorted.arena, readFailure: unsorted.readFailure)
    folder.spans = order.map { unsorted.spans[$0] }
    folder.entries = order.map { unsorted.entries[$0] }
    read.folders[FolderPath(path)] = folder
    current = Folder()
    isReading = false
  }

  /// Whether an entry of the folder being read, of a name of `name` bytes, is past
  /// `RelativePath`'s bounds (in components or in bytes): then it is not counted.
  private func isTooLong(name: Int) -> Bool {
    let room = RelativePath.maximumLength - path.count - (path.isEmpty ? 0 : 1)
    return depth + 1 >= RelativePath.maximumComponents || name > room
  }

  private mutating func add(_ name: UnsafeBufferPointer<UInt8>, _ kind: Entry) {
    current.spans.append((Int32(current.arena.count), Int32(name.count)))
    current.arena.append(contentsOf: name)
    current.entries.append(kind)
  }
}

/// A folder's path as a dictionary key, hashed as one run of bytes (an array of bytes hashes
/// byte by byte, which cost the Android walk 5% of its time).
struct FolderPath: Hashable {
  let bytes: [UInt8]
  init(_ bytes: [UInt8]) { self.bytes = bytes }
  func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
  static func == (left: FolderPath, right: FolderPath) -> Bool {
    guard left.bytes.count == right.bytes.count else { return false }
    if left.bytes.isEmpty { return true }
    return left.bytes.withUnsafeBytes { a in
      right.bytes.withUnsafeBytes { b in Syscalls.compareBytes(a.baseAddress!, b.baseAddress!, count: a.count) == 0 }
    }
  }
}
