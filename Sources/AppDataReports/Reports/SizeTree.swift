import AppDataSystem
import AppDataCore
/// The folders (and large files) of a container with their bytes per category, aggregated for a
/// treemap: at most `maximumCells` cells whatever the tree, small files summed per folder as
/// "other files", small folders kept whole without their insides. The tree stops at
/// `maximumDepth` levels (a deeper file's bytes count in its folder at that depth), so building,
/// measuring, encoding and freeing it recurse no deeper than that whatever the container holds.
struct SizeTree {
  final class Node {
    let name: String
    /// Bytes per category, in `Category.allCases` order.
    var bytes = [UInt64](repeating: 0, count: Category.allCases.count)
    /// By name's bytes: two folders whose names differ only in Unicode composition are two.
    var children: [JSONKey: Node] = [:]
    var isFile = false
    /// Children already known to be below every threshold (`CompactBuilder`): their bytes per
    /// category and how many, counted in the "other items" cell and never made nodes.
    var smallBytes: [UInt64]?
    var smallCount = 0

    init(name: String) { self.name = name }

    var total: UInt64 { bytes.reduce(0) { $0.saturatingSum($1) } }
  }

  let root: Node

  /// Levels of folders the tree keeps: far more than a treemap can show.
  static let maximumDepth = 64

  /// The tree of `entries` (a container's listed files, every category). When every path is
  /// printable ASCII with no empty component (as nearly all are), the folders are found by
  /// their path bytes and only the files large enough ever to be a cell become nodes
  /// (`CompactBuilder`): a million entries cost about a tenth of a second. Otherwise names go
  /// through `String`, keyed by their bytes (`JSONKey`), and every component is a node. Either way the entries are read in the order they were listed, not sorted.
  /// (`compact: false` always takes the general builder: the tests compare the two.)
  ///
  /// `slot` says which of a node's byte sums an entry counts in: its category's by default; an
  /// Android report's treemap passes its destinations' (`AuditSet.destinationSlot`).
  init(name: String, entries: ListedEntries, compact: Bool = true,
       slot: @escaping (UnsafeBufferPointer<UInt8>, Category) -> Int = { $1.index }) {
    if compact, var builder = CompactBuilder(entries: entries, slot: slot), let root = builder.build(name: name) {
      self.root = root
      return
    }
    root = Node(name: name)
    entries.forEachStored { path, category, bytes in
      guard bytes > 0 else { return }
      let components = RelativePath.components(Array(path))
      var node = root
      let category = slot(path, category)
      node.bytes[category] = node.bytes[category].saturatingSum(bytes)
      for (index, component) in components.prefix(Self.maximumDepth).enumerated() {
        let key = RelativePath.display(component)
        let child = node.children[JSONKey(key)] ?? Node(name: key)
        node.children[JSONKey(key)] = child
        child.bytes[category] = child.bytes[category].saturatingSum(bytes)
        if index == components.count - 1 { child.isFile = true }
        node = child
      }
    }
  }

  /// The cell limit of a report: a few thousand keeps the file small and the page quick.
  static let maximumCells = 3000

  /// The tree as JSON for the page, keeping only cells of at least `threshold` bytes, raised
  /// until at most `maximumCells` cells remain.
  func json(maximumCells: Int = SizeTree.maximumCells) -> JSONValue {
    var threshold = max(1, root.total / UInt64(maximumCells))
    while count(root, threshold: threshold) > maximumCells && threshold < UInt64.max / 2 { threshold *= 2 }
    return encode(root, threshold: threshold)
  }

  private func count(_ node: Node, threshold: UInt64) -> Int {
    var cells = 1
    var hasRest = node.smallCount > 0
    for child in node.children.values {
      if child.total >= threshold { cells += child.isFile ? 1 : count(child, threshold: threshold) } else { hasRest = true }
    }
    return cells + (hasRest ? 1 : 0)
  }

  /// `{"n": name, "b": [bytes per category], "k": [children], "f": true for a file, "r": true for the rest}`.
  private func encode(_ node: Node, threshold: UInt64) -> JSONValue {
    var object: [JSONKey: JSONValue] = ["n": .string(node.name), "b": .array(node.bytes.map { .unsigned($0) })]
    if node.isFile && node.children.isEmpty && node.smallCount == 0 { object["f"] = .bool(true) }
    var kept: [JSONValue] = []
    var rest = node.smallBytes ?? [UInt64](repeating: 0, count: Category.allCases.count)
    var restCount = node.smallCount
    for child in node.children.values.sorted(by: { $0.total != $1.total ? $0.total > $1.total : $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) {
      if child.total >= threshold {
        kept.append(encode(child, threshold: threshold))
      } else {
        for index in rest.indices { rest[index] = rest[index].saturatingSum(child.bytes[index]) }
        restCount += 1
      }
    }
    if restCount > 0 {
      kept.append(.object(["n": .string("\(Plural.counted(restCount, "other item")) in \(node.name)"),
                           "b": .array(rest.map { .unsigned($0) }), "r": .bool(true)]))
    }
    if !kept.isEmpty { object["k"] = .array(kept) }
    return .object(object)
  }
}

/// The size tree of entries whose paths are printable ASCII without empty components, where a
/// name's bytes are its `String` and equal bytes are equal names: folders are keyed by their
/// path bytes in a `ByteKeyTable` (consecutive files share a folder, so most files cost one
/// comparison), and whatever is smaller than the smallest threshold the treemap can use (the
/// total over `maximumCells`), a file or a whole folder, is only added to its folder's "other
/// items" and never made a node. The result is the tree the general builder makes, with those
/// folded in advance: the same page. The entries are read in the order they were listed: once
/// for the total, once more for the tree (and once before, for the folders, when a file may
/// have the path of a folder).
private struct CompactBuilder {
  private let entries: ListedEntries
  /// Whether a file may have the path of a folder (not in a walk: `pathsAreUnique`).
  private let checksFilesAgainstFolders: Bool
  private var folderKeys = ByteKeyTable()
  /// Per folder: its parent (-1: the root), where its name starts in its key, whether a file
  /// of the same path was merged into it, and 6 sums a folder (by category): the bytes of the
  /// files counted in it directly (merged, or deeper than `maximumDepth`).
  private var parents: [Int32] = []
  private var nameStarts: [Int32] = []
  private var mergedFile: [Bool] = []
  private var bytes: [UInt64] = []
  /// Small items by folder: slot 0 the root, slot f + 1 folder f (6 sums a slot).
  private var smallBytes = [UInt64](repeating: 0, count: Category.allCases.count)
  private var smallCounts = [0]
  private static let categories = Category.allCases.count
  /// Which sum an entry counts in (`SizeTree.init`).
  private let slot: (UnsafeBufferPointer<UInt8>, Category) -> Int

  /// Nil when a path is listed twice (an archive may hold one path twice: the general builder
  /// makes one node of their summed bytes).
  init?(entries: ListedEntries, slot: @escaping (UnsafeBufferPointer<UInt8>, Category) -> Int) {
    guard !entries.hasRepeatedPaths else { return nil }
    self.entries = entries
    self.slot = slot
    checksFilesAgainstFolders = !entries.pathsAreUnique
  }

  /// Where `path`'s folder part ends (-1: none; at most `maximumDepth` components, `isDeep`
  /// when cut there), or nil when the path is not plain printable ASCII (no `"` or `\`) or has
  /// an empty component.
  private static func scan(_ path: UnsafeBufferPointer<UInt8>) -> (end: Int, isDeep: Bool)? {
    var slashes = 0
    var end = -1
    var deep = false
    var afterSlash = true  // a leading slash is an empty component
    for index in 0..<path.count {
      let byte = path[index]
      if byte == 0x2F {
        if afterSlash { return nil }
        afterSlash = true
        if !deep {
          slashes += 1
          end = index
          deep = slashes == SizeTree.maximumDepth
        }
      } else {
        guard RelativePath.isPlainJSON(byte) else { return nil }
        afterSlash = false
      }
    }
    return afterSlash ? nil : (end, deep)  // empty, or a trailing slash
  }

  /// The folder of `path`'s first `end` bytes, made with its ancestors when new.
  private mutating func folder(_ path: UnsafeBufferPointer<UInt8>, end: Int) -> Int {
    let key = UnsafeBufferPointer(rebasing: path[0..<end])
    let hash = ByteKeyTable.hash(key)
    if let found = folderKeys.find(key, hash: hash) { return found }
    let slash = key.lastIndex(of: 0x2F)
    let parent = slash.map { folder(path, end: $0) } ?? -1
    let index = folderKeys.index(of: key, hash: hash)
    parents.append(Int32(parent))
    nameStarts.append(Int32(slash.map { $0 + 1 } ?? 0))
    mergedFile.append(false)
    bytes.append(contentsOf: repeatElement(0, count: Self.categories))
    smallBytes.append(contentsOf: repeatElement(0, count: Self.categories))
    smallCounts.append(0)
    return index
  }

  /// The tree, or nil when some path is not plain (`scan(_:)`): then the general builder makes it.
  mutating func build(name: String) -> SizeTree.Node? {
    // The whole tree's bytes, hence the smallest threshold `json()` can use.
    var rootBytes = [UInt64](repeating: 0, count: Self.categories)
    entries.forEachStored { path, category, size in
      let index = slot(path, category)
      rootBytes[index] = rootBytes[index].saturatingSum(size)
    }
    let total = rootBytes.reduce(UInt64(0)) { $0.saturatingSum($1) }
    let smallest = max(1, total / UInt64(SizeTree.maximumCells))
    if checksFilesAgainstFolders {
      guard makeFoldersFirst() else { return nil }
    }
    guard let largeFiles = placeFiles(smallest: smallest) else { return nil }
    let sums = folderSums(largeFiles: largeFiles)
    return nodes(name: name, rootBytes: rootBytes, sums: sums, largeFiles: largeFiles, smallest: smallest)
  }

  /// The last folder found, and its key: consecutive files share a folder, so most cost one
  /// comparison.
  private var lastKey: [UInt8] = []
  private var lastFolder = -1

  /// The folder of a path whose folder part ends at `end` (> 0): one comparison when it is
  /// the last one's.
  private mutating func folder(of path: UnsafeBufferPointer<UInt8>, end: Int) -> Int {
    let same = lastFolder >= 0 && lastKey.count == end && lastKey.withUnsafeBufferPointer {
      Syscalls.compareBytes($0.baseAddress!, path.baseAddress!, count: end) == 0
    }
    if !same {
      lastFolder = folder(path, end: end)
      lastKey.removeAll(keepingCapacity: true)
      lastKey.append(contentsOf: UnsafeBufferPointer(rebasing: path[0..<end]))
    }
    return lastFolder
  }

  /// Every folder first, so that a file listed before a folder of its path is merged into it.
  /// False when some path is not plain.
  private mutating func makeFoldersFirst() -> Bool {
    var plain = true
    let entries = self.entries
    entries.forEachStored { path, _, size in
      guard plain, size > 0 else { return }
      guard let end = Self.scan(path)?.end else { plain = false; return }
      if end > 0 { _ = folder(of: path, end: end) }
    }
    return plain
  }

  private typealias LargeFile = (folder: Int, name: String, category: Int, bytes: UInt64)

  /// Files: into a folder of the same path (merged, as the general builder's one node per
  /// name does), as a node of their own when large enough to be a cell (returned), else into
  /// their folder's small items. Nil when some path is not plain.
  private mutating func placeFiles(smallest: UInt64) -> [LargeFile]? {
    var plain = true
    var largeFiles: [LargeFile] = []
    let entries = self.entries
    entries.forEachStored { path, category, size in
      guard plain, size > 0 else { return }
      guard let (end, deep) = Self.scan(path).map({ ($0.end, $0.isDeep) }) else { plain = false; return }
      let category = slot(path, category)
      let parent = end > 0 ? folder(of: path, end: end) : -1
      if deep {
        bytes[parent * Self.categories + category] = bytes[parent * Self.categories + category].saturatingSum(size)
        return
      }
      if checksFilesAgainstFolders, let merged = folderKeys.find(path, hash: ByteKeyTable.hash(path)) {
        bytes[merged * Self.categories + category] = bytes[merged * Self.categories + category].saturatingSum(size)
        mergedFile[merged] = true
        return
      }
      if size >= smallest {
        largeFiles.append((parent, String(decoding: UnsafeBufferPointer(rebasing: path[(end + 1)...]), as: UTF8.self), category, size))
      } else {
        let small = (parent + 1) * Self.categories + category
        smallBytes[small] = smallBytes[small].saturatingSum(size)
        smallCounts[parent + 1] += 1
      }
    }
    return plain ? largeFiles : nil
  }

  /// Each folder's bytes: its own, its large files', its small items', then summed up into
  /// its parent from the deepest (a folder is made after its parent: a larger index).
  private func folderSums(largeFiles: [LargeFile]) -> [UInt64] {
    var sums = bytes
    for (file, _, category, size) in largeFiles where file >= 0 {
      sums[file * Self.categories + category] = sums[file * Self.categories + category].saturatingSum(size)
    }
    for folder in 0..<parents.count where smallCounts[folder + 1] > 0 {
      for category in 0..<Self.categories {
        sums[folder * Self.categories + category] = sums[folder * Self.categories + category]
          .saturatingSum(smallBytes[(folder + 1) * Self.categories + category])
      }
    }
    for index in stride(from: parents.count - 1, through: 0, by: -1) where parents[index] >= 0 {
      let parent = Int(parents[index])
      for category in 0..<Self.categories {
        sums[parent * Self.categories + category] = sums[parent * Self.categories + category]
          .saturatingSum(sums[index * Self.categories + category])
      }
    }
    return sums
  }

  /// Nodes, parents first: a folder smaller than `smallest` can never be a cell, so it is one
  /// of its parent's small items (and its insides are in it), never a node.
  private mutating func nodes(name: String, rootBytes: [UInt64], sums: [UInt64], largeFiles: [LargeFile], smallest: UInt64) -> SizeTree.Node {
    let root = SizeTree.Node(name: name)
    root.bytes = rootBytes
    var nodes = [SizeTree.Node?](repeating: nil, count: parents.count)
    let (parents, nameStarts, mergedFile) = (self.parents, self.nameStarts, self.mergedFile)
    var (smallBytes, smallCounts) = (self.smallBytes, self.smallCounts)
    folderKeys.forEach { key, index, _ in
      let parent = Int(parents[index])
      guard let parentNode = parent >= 0 ? nodes[parent] : root else { return }  // inside a small folder
      let folderBytes = Array(sums[(index * Self.categories)..<((index + 1) * Self.categories)])
      if folderBytes.reduce(UInt64(0), { $0.saturatingSum($1) }) >= smallest {
        let node = SizeTree.Node(name: String(decoding: UnsafeBufferPointer(rebasing: key[Int(nameStarts[index])...]), as: UTF8.self))
        node.bytes = folderBytes
        node.isFile = mergedFile[index]
        parentNode.children[JSONKey(node.name)] = node
        nodes[index] = node
      } else {
        for category in 0..<Self.categories {
          let slot = (parent + 1) * Self.categories + category
          smallBytes[slot] = smallBytes[slot].saturatingSum(folderBytes[category])
        }
        smallCounts[parent + 1] += 1
      }
    }
    (self.smallBytes, self.smallCounts) = (smallBytes, smallCounts)
    for (folder, name, category, size) in largeFiles {
      // A large file's folder is at least as large: a node.
      guard let parentNode = folder >= 0 ? nodes[folder] : root else { continue }
      let node = SizeTree.Node(name: name)
      node.bytes[category] = size
      node.isFile = true
      parentNode.children[JSONKey(name)] = node  // one file a path: checked in init
    }
    for slot in smallCounts.indices where smallCounts[slot] > 0 {
      guard let node = slot > 0 ? nodes[slot - 1] : root else { continue }
      node.smallBytes = Array(smallBytes[(slot * Self.categories)..<((slot + 1) * Self.categories)])
      node.smallCount = smallCounts[slot]
    }
    return root
  }
}
