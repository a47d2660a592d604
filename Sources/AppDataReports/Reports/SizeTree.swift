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
    var children: [String: Node] = [:]
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
  /// (`CompactBuilder`): a million entries cost a tenth of a second. Otherwise names go through
  /// `String`, whose equality merges canonically equivalent ones, and every component is a node.
  init(name: String, entries: ListedEntries) {
    if var builder = CompactBuilder(entries: entries) {
      root = builder.build(name: name)
      return
    }
    root = Node(name: name)
    entries.forEachInPlace { path, _, category, bytes, _, _ in
      guard bytes > 0 else { return }
      let components = RelativePath.components(Array(path))
      var node = root
      let category = category.index
      node.bytes[category] = node.bytes[category].saturatingSum(bytes)
      for (index, component) in components.prefix(Self.maximumDepth).enumerated() {
        let key = RelativePath.display(component)
        let child = node.children[key] ?? Node(name: key)
        node.children[key] = child
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
    var object: [String: JSONValue] = ["n": .string(node.name), "b": .array(node.bytes.map { .unsigned($0) })]
    if node.isFile && node.children.isEmpty && node.smallCount == 0 { object["f"] = .bool(true) }
    var kept: [JSONValue] = []
    var rest = node.smallBytes ?? [UInt64](repeating: 0, count: Category.allCases.count)
    var restCount = node.smallCount
    for child in node.children.values.sorted(by: { $0.total != $1.total ? $0.total > $1.total : $0.name < $1.name }) {
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
/// path bytes in a `ByteKeyTable` (consecutive files share a folder, so most
/// files cost one comparison), and a file smaller than the smallest threshold the treemap can
/// use (the total over `maximumCells`) is only added to its folder's "other items". The result
/// is the tree the general builder makes, with those files folded in advance.
private struct CompactBuilder {
  private let entries: ListedEntries
  private var folderKeys = ByteKeyTable()
  /// Per folder: its parent (-1: the root), its name's range in the folder's key, its files'
  /// bytes per category (6 a folder), and whether a file of the same path was merged into it.
  private var parents: [Int32] = []
  private var nameStarts: [Int32] = []
  private var bytes: [UInt64] = []
  private var mergedFile: [Bool] = []
  private var rootBytes = [UInt64](repeating: 0, count: Category.allCases.count)
  private static let categories = Category.allCases.count

  /// Nil when some path is not plain printable ASCII, has an empty component, or is listed
  /// twice (an archive may hold one path twice: one node of their summed bytes).
  init?(entries: ListedEntries) {
    var plain = true
    var previous: UnsafeBufferPointer<UInt8>?
    entries.forEachInPlace { path, _, _, bytes, _, _ in
      guard plain, bytes > 0 else { return }
      if path.isEmpty || path.first == 0x2F || path.last == 0x2F || !RelativePath.isPlainJSON(path) { plain = false; return }
      for index in 1..<path.count where path[index] == 0x2F && path[index - 1] == 0x2F { plain = false; return }
      if let previous, previous.count == path.count,
         Syscalls.compareBytes(previous.baseAddress!, path.baseAddress!, count: path.count) == 0 { plain = false; return }
      previous = path
    }
    guard plain else { return nil }
    self.entries = entries
  }

  /// The folder of `path`'s first `components` components (the end of that prefix is `end`),
  /// made with its ancestors when new.
  private mutating func folder(_ path: UnsafeBufferPointer<UInt8>, end: Int) -> Int {
    let key = UnsafeBufferPointer(rebasing: path[0..<end])
    let hash = ByteKeyTable.hash(key)
    if let found = folderKeys.find(key, hash: hash) { return found }
    let slash = key.lastIndex(of: 0x2F)
    let parent = slash.map { folder(path, end: $0) } ?? -1
    let index = folderKeys.index(of: key, hash: hash)
    parents.append(Int32(parent))
    nameStarts.append(Int32(slash.map { $0 + 1 } ?? 0))
    bytes.append(contentsOf: repeatElement(0, count: Self.categories))
    mergedFile.append(false)
    return index
  }

  mutating func build(name: String) -> SizeTree.Node {
    // The whole tree's bytes, hence the smallest threshold `json()` can use.
    entries.forEachInPlace { _, _, category, size, _, _ in
      guard size > 0 else { return }
      rootBytes[category.index] = rootBytes[category.index].saturatingSum(size)
    }
    let total = rootBytes.reduce(UInt64(0)) { $0.saturatingSum($1) }
    let smallest = max(1, total / UInt64(SizeTree.maximumCells))

    // Every folder, with its ancestors; the end of each file's folder part (at most
    // `maximumDepth` components: a deeper file's bytes count in that folder).
    var ends: [Int32] = []
    var isDeep: [Bool] = []
    var lastKey: [UInt8] = []
    var lastFolder = -1
    entries.forEachInPlace { path, _, _, size, _, _ in
      guard size > 0 else { return }
      var slashes = 0
      var end = -1
      var deep = false
      for index in 0..<path.count where path[index] == 0x2F {
        slashes += 1
        if slashes == SizeTree.maximumDepth { end = index; deep = true; break }
        end = index
      }
      ends.append(Int32(end))
      isDeep.append(deep)
      guard end > 0 else { return }
      let same = lastFolder >= 0 && lastKey.count == end && lastKey.withUnsafeBufferPointer {
        Syscalls.compareBytes($0.baseAddress!, path.baseAddress!, count: end) == 0
      }
      if !same {
        lastFolder = folder(path, end: end)
        lastKey.removeAll(keepingCapacity: true)
        lastKey.append(contentsOf: UnsafeBufferPointer(rebasing: path[0..<end]))
      }
    }

    // Files: into a folder of the same path (merged, as the general builder's one node per
    // name does), as a node of their own when large enough to be a cell, else into their
    // folder's small items.
    // Small files per folder (slot 0: the root, slot f + 1: folder f).
    var smallBytes = [UInt64](repeating: 0, count: (parents.count + 1) * Self.categories)
    var smallCounts = [Int](repeating: 0, count: parents.count + 1)
    var largeFiles: [(folder: Int, name: String, category: Int, bytes: UInt64)] = []
    var position = 0
    lastKey.removeAll()
    lastFolder = -1
    entries.forEachInPlace { path, _, category, size, _, _ in
      guard size > 0 else { return }
      let end = Int(ends[position])
      let deep = isDeep[position]
      position += 1
      var parent = -1
      if end > 0 {
        let same = lastFolder >= 0 && lastKey.count == end && lastKey.withUnsafeBufferPointer {
          Syscalls.compareBytes($0.baseAddress!, path.baseAddress!, count: end) == 0
        }
        if !same {
          let key = UnsafeBufferPointer(rebasing: path[0..<end])
          lastFolder = folderKeys.find(key, hash: ByteKeyTable.hash(key))!
          lastKey.removeAll(keepingCapacity: true)
          lastKey.append(contentsOf: UnsafeBufferPointer(rebasing: path[0..<end]))
        }
        parent = lastFolder
      }
      if deep {
        bytes[parent * Self.categories + category.index] = bytes[parent * Self.categories + category.index].saturatingSum(size)
        return
      }
      if let merged = folderKeys.find(path, hash: ByteKeyTable.hash(path)) {
        bytes[merged * Self.categories + category.index] = bytes[merged * Self.categories + category.index].saturatingSum(size)
        mergedFile[merged] = true
        return
      }
      if size >= smallest {
        largeFiles.append((parent, String(decoding: UnsafeBufferPointer(rebasing: path[(end + 1)...]), as: UTF8.self), category.index, size))
      } else {
        let slot = (parent + 1) * Self.categories + category.index
        smallBytes[slot] = smallBytes[slot].saturatingSum(size)
        smallCounts[parent + 1] += 1
      }
    }

    // Nodes: folders (their bytes summed up from the deepest, made after their parents),
    // then the large files.
    let root = SizeTree.Node(name: name)
    root.bytes = rootBytes
    var nodes: [SizeTree.Node] = []
    nodes.reserveCapacity(parents.count)
    folderKeys.forEach { key, index, _ in
      let node = SizeTree.Node(name: String(decoding: UnsafeBufferPointer(rebasing: key[Int(nameStarts[index])...]), as: UTF8.self))
      node.isFile = mergedFile[index]
      nodes.append(node)
    }
    var sums = bytes
    for (file, _, category, size) in largeFiles where file >= 0 {
      sums[file * Self.categories + category] = sums[file * Self.categories + category].saturatingSum(size)
    }
    for folder in 0..<parents.count where smallCounts[folder + 1] > 0 {
      for category in 0..<Self.categories {
        let small = smallBytes[(folder + 1) * Self.categories + category]
        sums[folder * Self.categories + category] = sums[folder * Self.categories + category].saturatingSum(small)
      }
    }
    for index in stride(from: parents.count - 1, through: 0, by: -1) {
      let parent = Int(parents[index])
      for category in 0..<Self.categories {
        let value = sums[index * Self.categories + category]
        nodes[index].bytes[category] = value
        if parent >= 0 {
          sums[parent * Self.categories + category] = sums[parent * Self.categories + category].saturatingSum(value)
        }
      }
      (parent >= 0 ? nodes[parent] : root).children[nodes[index].name] = nodes[index]
    }
    for (folder, name, category, size) in largeFiles {
      let node = SizeTree.Node(name: name)
      node.bytes[category] = size
      node.isFile = true
      (folder >= 0 ? nodes[folder] : root).children[name] = node  // one file a path: checked in init
    }
    for slot in smallCounts.indices where smallCounts[slot] > 0 {
      let node = slot > 0 ? nodes[slot - 1] : root
      node.smallBytes = Array(smallBytes[(slot * Self.categories)..<((slot + 1) * Self.categories)])
      node.smallCount = smallCounts[slot]
    }
    return root
  }
}
