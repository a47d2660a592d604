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

    init(name: String) { self.name = name }

    var total: UInt64 { bytes.reduce(0) { $0.saturatingSum($1) } }
  }

  let root: Node

  /// Levels of folders the tree keeps: far more than a treemap can show.
  static let maximumDepth = 64

  /// The tree of `entries` (a container's listed files, every category).
  init(name: String, entries: ListedEntries) {
    root = Node(name: name)
    for entry in entries where entry.bytes > 0 {
      let components = RelativePath.components(entry.path)
      var node = root
      let category = entry.category.index
      node.bytes[category] = node.bytes[category].saturatingSum(entry.bytes)
      for (index, component) in components.prefix(Self.maximumDepth).enumerated() {
        let key = RelativePath.display(component)
        let child = node.children[key] ?? Node(name: key)
        node.children[key] = child
        child.bytes[category] = child.bytes[category].saturatingSum(entry.bytes)
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
    var hasRest = false
    for child in node.children.values {
      if child.total >= threshold { cells += child.isFile ? 1 : count(child, threshold: threshold) } else { hasRest = true }
    }
    return cells + (hasRest ? 1 : 0)
  }

  /// `{"n": name, "b": [bytes per category], "k": [children], "f": true for a file, "r": true for the rest}`.
  private func encode(_ node: Node, threshold: UInt64) -> JSONValue {
    var object: [String: JSONValue] = ["n": .string(node.name), "b": .array(node.bytes.map { .unsigned($0) })]
    if node.isFile && node.children.isEmpty { object["f"] = .bool(true) }
    var kept: [JSONValue] = []
    var rest = [UInt64](repeating: 0, count: Category.allCases.count)
    var restCount = 0
    for child in node.children.values.sorted(by: { $0.total != $1.total ? $0.total > $1.total : $0.name < $1.name }) {
      if child.total >= threshold {
        kept.append(encode(child, threshold: threshold))
      } else {
        for index in rest.indices { rest[index] += child.bytes[index] }
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
