/// An app's data as Android's backup walks it: every entry of its storages, as nodes in flat
/// arrays (a name arena, parents, children), so that a tree of 200,000 entries is a few
/// allocations, not 200,000 paths. Folders are also found by their place; a file by its
/// folder's children.
package struct AndroidTree: Sendable {
  package enum Kind: Equatable, Sendable {
    case directory
    case file(size: UInt64)
    /// A symlink, FIFO, socket or device: never walked (BackupAgent.fullBackupFileTree keeps
    /// regular files and folders only).
    case other
  }

  package typealias Node = Int32

  private var arena: [UInt8] = []
  private var nameStart: [Int32] = []
  private var nameCount: [Int32] = []
  private var parents: [Node] = []
  private var kinds: [Kind] = []
  private var storages: [AndroidStorage] = []
  /// The node's path length in its storage (bytes, `/`s included), and whether a byte of it is
  /// above 127: what Android's measure needs of a name.
  private var lengths: [Int32] = []
  private var highBytes: [Bool] = []
  /// The top-level entry a node is in (itself at the top; -1 for a storage's root).
  private var tops: [Node] = []
  private var childLists: [[Node]] = []
  /// Folders (and the storages' roots) by place.
  private var folders: [AndroidPath: Node] = [:]
  /// Symlinks' targets, as read (`readlinkat`, or the archive's link name).
  private var linkTargets: [Node: [UInt8]] = [:]
  /// The bytes of names the tree holds: its names, and its folders' paths (what a reader of an
  /// archive counts against `--max-name-bytes`).
  package private(set) var nameBytes = 0

  package init() {}

  package var count: Int { kinds.count }
  package func kind(at node: Node) -> Kind { kinds[Int(node)] }
  package func children(of node: Node) -> [Node] { childLists[Int(node)] }
  package func storage(of node: Node) -> AndroidStorage { storages[Int(node)] }
  package func pathLength(of node: Node) -> Int { Int(lengths[Int(node)]) }
  package func hasHighByte(_ node: Node) -> Bool { highBytes[Int(node)] }
  package func top(of node: Node) -> Node { tops[Int(node)] }
  /// How many components the node's path has (0 for a storage's root).
  package func depth(of node: Node) -> Int {
    var depth = 0
    var current = node
    while parents[Int(current)] >= 0 { depth += 1; current = parents[Int(current)] }
    return depth
  }
  package func name(of node: Node) -> ArraySlice<UInt8> {
    let start = Int(nameStart[Int(node)])
    return arena[start..<(start + Int(nameCount[Int(node)]))]
  }
  package func size(of node: Node) -> UInt64 { if case .file(let size) = kinds[Int(node)] { size } else { 0 } }

  /// The node's place: its storage and path.
  package func place(_ node: Node) -> AndroidPath {
    var components: [ArraySlice<UInt8>] = []
    var current = node
    while parents[Int(current)] >= 0 {
      components.append(name(of: current))
      current = parents[Int(current)]
    }
    return AndroidPath(storages[Int(node)], Array(components.reversed().joined(separator: [0x2F])))
  }

  /// The root of `storage`, made when missing.
  package mutating func root(_ storage: AndroidStorage) -> Node {
    if let node = folders[AndroidPath(storage, [])] { return node }
    let node = append(name: [], parent: -1, kind: .directory, storage: storage)
    folders[AndroidPath(storage, [])] = node
    return node
  }

  private mutating func append(name: some Collection<UInt8>, parent: Node, kind: Kind, storage: AndroidStorage) -> Node {
    let node = Node(kinds.count)
    nameStart.append(Int32(arena.count))
    nameCount.append(Int32(name.count))
    arena.append(contentsOf: name)
    nameBytes += name.count
    parents.append(parent)
    kinds.append(kind)
    storages.append(storage)
    childLists.append([])
    if parent >= 0 {
      let parentIndex = Int(parent)
      lengths.append(lengths[parentIndex] + (parents[parentIndex] >= 0 ? 1 : 0) + Int32(name.count))
      highBytes.append(highBytes[parentIndex] || name.contains { $0 & 0x80 != 0 })
      tops.append(parents[parentIndex] >= 0 ? tops[parentIndex] : node)
      childLists[parentIndex].append(node)
    } else {
      lengths.append(0)
      highBytes.append(false)
      tops.append(-1)
    }
    return node
  }

  /// Adds the entry `name` in the folder `parent` (the walk: it knows its folder).
  @discardableResult
  package mutating func add(name: [UInt8], under parent: Node, _ kind: Kind) -> Node {
    add(name: name[...], under: parent, kind)
  }

  /// `add(name:under:_:)` with a name borrowed from a walk's buffer (a concrete type, not a
  /// generic one: called from another module, a generic would run unspecialized).
  @discardableResult
  package mutating func add(name: ArraySlice<UInt8>, under parent: Node, _ kind: Kind) -> Node {
    let node = append(name: name, parent: parent, kind: kind, storage: storages[Int(parent)])
    if kind == .directory {
      let place = place(node)
      nameBytes += place.path.count
      folders[place] = node
    }
    return node
  }

  /// Adds an entry by place; its folders are added as folders where missing. A folder added
  /// twice is one node; a file is not looked for first (what adds by place lists each once).
  @discardableResult
  package mutating func add(_ place: AndroidPath, _ kind: Kind) -> Node {
    if let existing = folders[place] {
      if kind != .directory { kinds[Int(existing)] = kind }
      return existing
    }
    if place.path.isEmpty { return root(place.storage) }
    let slash = place.path.lastIndex(of: 0x2F)
    let parentPlace = AndroidPath(place.storage, slash.map { Array(place.path[..<$0]) } ?? [])
    let parent = folders[parentPlace] ?? add(parentPlace, .directory)
    let name = place.path[(slash.map { $0 + 1 } ?? 0)...]
    let node = append(name: name, parent: parent, kind: kind, storage: place.storage)
    if kind == .directory {
      nameBytes += place.path.count
      folders[place] = node
    }
    return node
  }

  /// The node at `place`, if any: a folder by its place, a file among its folder's children.
  package func node(_ place: AndroidPath) -> Node? {
    if let folder = folders[place] { return folder }
    guard !place.path.isEmpty else { return nil }
    let slash = place.path.lastIndex(of: 0x2F)
    guard let parent = folders[AndroidPath(place.storage, slash.map { Array(place.path[..<$0]) } ?? [])] else { return nil }
    let name = place.path[(slash.map { $0 + 1 } ?? 0)...]
    return childLists[Int(parent)].first { self.name(of: $0).elementsEqual(name) }
  }

  package func kind(_ place: AndroidPath) -> Kind? { node(place).map { kinds[Int($0)] } }

  /// Records a symlink's target (the node is `.other`).
  package mutating func setLinkTarget(_ node: Node, _ target: [UInt8]) {
    linkTargets[node] = target
    nameBytes += target.count
  }
  package func linkTarget(_ node: Node) -> [UInt8]? { linkTargets[node] }

  /// A later entry of the same name (a tar that names a file twice: the last one wins, as
  /// `tar x` leaves it). A file, a symlink or a special file becomes another of those, or a
  /// folder; a folder stays a folder (tar cannot put a file over a folder that holds anything).
  package mutating func replace(_ node: Node, with kind: Kind) {
    guard kinds[Int(node)] != .directory else { return }
    linkTargets[node] = nil
    kinds[Int(node)] = kind
    if kind == .directory {
      let place = place(node)
      nameBytes += place.path.count
      folders[place] = node
    }
  }

  /// `place` as Java's `File.getCanonicalPath()` gives it: each symlink met on the way (one
  /// whose target is relative, within the same storage) replaced by its target, `.` and `..`
  /// resolved, up to 40 links (Linux's MAXSYMLINKS). What is not in the tree is kept as
  /// written. Nil when a link's target is absolute, climbs out of the storage, or loops.
  package func canonical(_ place: AndroidPath) -> AndroidPath? {
    var pending = place.path.split(separator: 0x2F).map(Array.init)
    pending.reverse()
    var resolved: [[UInt8]] = []
    var links = 0
    var current = folders[AndroidPath(place.storage, [])]
    while let component = pending.popLast() {
      if component == [0x2E] { continue }
      if component == [0x2E, 0x2E] {
        guard !resolved.isEmpty else { return nil }
        resolved.removeLast()
        current = folders[AndroidPath(place.storage, Array(resolved.joined(separator: [0x2F])))]
        continue
      }
      let child = current.flatMap { folder in childLists[Int(folder)].first { self.name(of: $0).elementsEqual(component) } }
      if let child, let target = linkTargets[child] {
        links += 1
        guard links <= 40, target.first != 0x2F, !target.isEmpty else { return nil }
        for part in target.split(separator: 0x2F).reversed() { pending.append(Array(part)) }
        continue
      }
      resolved.append(component)
      current = child.flatMap { kinds[Int($0)] == .directory ? $0 : nil }
    }
    return AndroidPath(place.storage, Array(resolved.joined(separator: [0x2F])))
  }
  package func isDirectory(_ place: AndroidPath) -> Bool { folders[place] != nil }
  /// The folder at `place`, found by place only (no scan of a folder's children: an archive of
  /// 20,000 siblings made that quadratic).
  package func folder(_ place: AndroidPath) -> Node? { folders[place] }
  package func has(_ storage: AndroidStorage) -> Bool { folders[AndroidPath(storage, [])] != nil }
  /// Every node, in the order added.
  package var nodes: Range<Node> { 0..<Node(kinds.count) }
}
