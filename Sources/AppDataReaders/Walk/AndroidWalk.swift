import AppDataSystem
import AppDataCore
import Synchronization

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
    let root = Walker.Root(path: path, layout: .app, reading: AndroidPlatform.walkReading)
    let numbers = AndroidWalkVisitor.Numbers()
    let visitors = try Walker.walk(roots: [root], jobs: max(1, jobs)) { _ in AndroidWalkVisitor(numbers: numbers) }[0].get()
    var folders = [AndroidWalkVisitor.Folder?](repeating: nil, count: numbers.next.load(ordering: .relaxed))
    for visitor in visitors { for (number, folder) in visitor.read { folders[number] = folder } }
    try assemble(folders, storage: storage, into: &tree, directories: &directories, findings: &findings)
  }

  /// The tree and the findings from the folders read (by number: the root is 0), depth first
  /// in byte order.
  static func assemble(_ folders: [AndroidWalkVisitor.Folder?], storage: AndroidStorage, into tree: inout AndroidTree,
                       directories: inout UInt64, findings: inout [Finding]) throws(SystemError) {
    var stack: [(number: Int, path: [UInt8], node: AndroidTree.Node)] = [(0, [], tree.root(storage))]
    while let (number, path, node) = stack.popLast() {
      guard let folder = folders[number] else { continue }
      if let failure = folder.readFailure {
        findings.append(Finding(rule: .unreadable, path: path.isEmpty ? [0x2E] : path,
                                message: "cannot read the folder: \(SystemError(errno: failure, operation: .readFolder, path: "").reason)", bytes: nil))
      }
      func child(_ index: Int) -> [UInt8] { path.isEmpty ? Array(folder.name(index)) : path + [0x2F] + folder.name(index) }
      for index in folder.entries.indices {
        switch folder.entries[index] {
        case .tooLong:
          let child = child(index)
          findings.append(RelativePath.tooDeep(child, components: child.count(where: { $0 == 0x2F }) + 1, source: "a path"))
        case .statusFailed(let code):
          findings.append(Finding(rule: .unreadable, path: child(index),
                                  message: "cannot read the status: \(SystemError(errno: code, operation: .readStatus, path: "").reason)", bytes: nil))
        case .directory(let below):
          let added = tree.add(name: folder.name(index), under: node, .directory)
          directories += 1
          if let code = folders[below]?.openFailure {
            findings.append(Finding(rule: .unreadable, path: child(index),
                                    message: "cannot open the folder: \(SystemError(errno: code, operation: .openFolder, path: "").reason)", bytes: nil))
          } else {
            stack.append((below, child(index), added))
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

/// What the walk hands over for an Android app's data: each folder's entries, sorted by name in
/// byte order when the folder ends (on the worker's thread), by the folder's number (given when
/// its parent found it, from `Numbers`, shared by every worker's visitor; the root is 0), and
/// whether it could be opened and read. One per worker thread.
struct AndroidWalkVisitor: WalkVisitor {
  /// One entry of a folder.
  enum Entry: Sendable {
    case file(size: UInt64)
    case other
    /// A symlink, and its target (nil when it could not be read).
    case link([UInt8]?)
    /// A folder, read as folder number `Int`.
    case directory(Int)
    /// fstatat failed with this errno.
    case statusFailed(Errno)
    /// Its path is past `RelativePath`'s bounds: not counted.
    case tooLong
  }

  /// One folder as a worker read it: its entries in byte order of their names.
  struct Folder: Sendable {
    var arena: [UInt8] = []
    /// Each entry's name in `arena` (start, count), in byte order of the names.
    var spans: [(start: Int32, count: Int32)] = []
    var entries: [Entry] = []
    /// Opening it from its parent failed with this errno (it was then not read).
    var openFailure: Errno?
    /// Reading it failed with this errno: as a folder, or its names part-way (the names before
    /// were kept).
    var readFailure: Errno?

    func name(_ index: Int) -> ArraySlice<UInt8> {
      let span = spans[index]
      return arena[Int(span.start)..<Int(span.start + span.count)]
    }
  }

  /// Folder numbers, handed out as folders are found.
  final class Numbers: Sendable {
    let next = Atomic<Int>(1)
    func take() -> Int { next.add(1, ordering: .relaxed).oldValue }
  }

  let numbers: Numbers
  /// The folders this worker read, with their numbers.
  private(set) var read: [(Int, Folder)] = []
  /// The folder being read: its number, its path's bytes and components, its entries as found
  /// (unsorted).
  private var number = 0
  private var pathLength = 0
  private var depth = 0
  private var current = Folder()

  init(numbers: Numbers) { self.numbers = numbers }

  mutating func beginFolder(_ path: UnsafeBufferPointer<UInt8>, tag: Int) {
    number = tag
    pathLength = path.count
    depth = path.isEmpty ? 0 : path.count(where: { $0 == 0x2F }) + 1
    current = Folder()
  }

  mutating func visit(_ entry: WalkedEntry) {
    let kind: Entry
    if isTooLong(name: entry.nameBuffer.count) {
      kind = .tooLong
    } else {
      switch entry.status.kind {
      case .directory: kind = .directory(numbers.take())
      case .regular: kind = .file(size: entry.status.size)
      case .symbolicLink: kind = .link(entry.linkTarget)
      default: kind = .other
      }
    }
    add(entry.nameBuffer, kind)
  }

  /// The number `visit` gave the folder it was just handed; a folder too long to count gets
  /// one of its own, which nothing reaches (it is walked, never put in the tree).
  mutating func folderTag() -> Int {
    if case .directory(let found)? = current.entries.last { return found }
    return numbers.take()
  }

  mutating func failed(path failedPath: [UInt8], error: SystemError) {
    switch error.operation {
    case .readStatus:
      let name = failedPath.suffix(failedPath.count - pathLength - (pathLength == 0 ? 0 : 1))
      name.withUnsafeBufferPointer { add($0, isTooLong(name: $0.count) ? .tooLong : .statusFailed(error.errno)) }
    case .openFolder: current.openFailure = error.errno
    default: current.readFailure = error.errno  // the folder as a folder, or its names
    }
  }

  mutating func endFolder() {
    // In byte order, so that the tree (and whatever follows its order) is the same on every
    // filesystem.
    let unsorted = current
    current = Folder()
    let order = unsorted.arena.withUnsafeBufferPointer { arena in
      unsorted.spans.indices.sorted { left, right in
        let a = unsorted.spans[left], b = unsorted.spans[right]
        return UnsafeBufferPointer(rebasing: arena[Int(a.start)..<Int(a.start + a.count)])
          .lexicographicallyPrecedes(UnsafeBufferPointer(rebasing: arena[Int(b.start)..<Int(b.start + b.count)]))
      }
    }
    var folder = Folder(arena: unsorted.arena, openFailure: unsorted.openFailure, readFailure: unsorted.readFailure)
    folder.spans = order.map { unsorted.spans[$0] }
    folder.entries = order.map { unsorted.entries[$0] }
    read.append((number, folder))
  }

  /// Whether an entry of the folder being read, of a name of `name` bytes, is past
  /// `RelativePath`'s bounds (in components or in bytes): then it is not counted.
  private func isTooLong(name: Int) -> Bool {
    let room = RelativePath.maximumLength - pathLength - (pathLength == 0 ? 0 : 1)
    return depth + 1 >= RelativePath.maximumComponents || name > room
  }

  private mutating func add(_ name: UnsafeBufferPointer<UInt8>, _ kind: Entry) {
    current.spans.append((Int32(current.arena.count), Int32(name.count)))
    current.arena.append(contentsOf: name)
    current.entries.append(kind)
  }
}
