@testable import AppDataCore
@testable import AppDataReports
@testable import AppDataKit
import Testing

/// The HTML treemap's tree: the compact builder (folders by path bytes, small files and folders
/// folded in advance, the listing read unsorted) makes the page the general builder makes.
@Suite("size tree")
struct SizeTreeTests {
  /// Random listings: 1 to 70 levels deep (past `maximumDepth`), sizes over six orders of
  /// magnitude (so some files and folders are cells and most are not), every category, and
  /// with `filesOnFolders` some files at the path of a folder (an archive may hold both).
  static func listing(seed: UInt64, count: Int, filesOnFolders: Bool) -> ListedEntries {
    var random = SplitMix64(state: seed)
    var entries = ListedEntries()
    var folders: [String] = []
    var filesOnFolder: Set<String> = []
    for index in 0..<count {
      let depth = random.next() % 10 == 0 ? Int(random.next() % 70) + 1 : Int(random.next() % 4) + 1
      var components = (0..<(depth - 1)).map { level in "d\(random.next() % (level < 2 ? 6 : 2))" }
      components.append("f\(index).bin")
      var path = components.joined(separator: "/")
      if filesOnFolders, !folders.isEmpty, random.next() % 20 == 0,
         case let folder = folders[Int(random.next() % UInt64(folders.count))], filesOnFolder.insert(folder).inserted {
        path = folder
      } else if depth > 1 {
        folders.append(components.dropLast().joined(separator: "/"))
      }
      let bytes = random.next() % 8 == 0 ? 0 : UInt64(1) << (random.next() % 20) + random.next() % 1000
      let category = AppDataCore.Category.allCases[Int(random.next() % UInt64(AppDataCore.Category.allCases.count))]
      entries.append(ListedEntry(path: Array(path.utf8), category: category, bytes: bytes, allocatedBytes: bytes, marker: [], excludedBy: nil))
    }
    entries.pathsAreUnique = !filesOnFolders
    return entries
  }

  @Test(arguments: [(1, false), (2, false), (3, true), (4, true)])
  func theCompactBuilderMakesTheGeneralBuildersPage(seed: UInt64, filesOnFolders: Bool) {
    let entries = Self.listing(seed: seed, count: 4_000, filesOnFolders: filesOnFolders)
    for cells in [SizeTree.maximumCells, 50] {
      let compact = SizeTree(name: "c", entries: entries).json(maximumCells: cells).serialized(pretty: false)
      let general = SizeTree(name: "c", entries: entries, compact: false).json(maximumCells: cells).serialized(pretty: false)
      #expect(compact == general)
      #expect(compact.contains("other item"))
    }
    #expect(!entries.hasRepeatedPaths)
    // The compact builder made it, and only the folders that can be cells.
    #expect(Self.nodes(SizeTree(name: "c", entries: entries).root) * 4 < Self.nodes(SizeTree(name: "c", entries: entries, compact: false).root))
  }

  static func nodes(_ node: SizeTree.Node) -> Int {
    node.children.values.reduce(1) { $0 + nodes($1) }
  }

  @Test func aPathListedTwiceOrNotPlainTakesTheGeneralBuilder() {
    let twice: ListedEntries = [
      ListedEntry(path: Array("Documents/a".utf8), category: .critical, bytes: 10, allocatedBytes: 0, marker: [], excludedBy: nil),
      ListedEntry(path: Array("Documents/b".utf8), category: .critical, bytes: 5, allocatedBytes: 0, marker: [], excludedBy: nil),
      ListedEntry(path: Array("Documents/a".utf8), category: .offline, bytes: 20, allocatedBytes: 0, marker: [], excludedBy: nil),
    ]
    #expect(twice.hasRepeatedPaths)
    let tree = SizeTree(name: "c", entries: twice)
    let file = tree.root.children["Documents"]?.children["a"]
    #expect(file?.bytes[AppDataCore.Category.critical.index] == 10)
    #expect(file?.bytes[AppDataCore.Category.offline.index] == 20)
    // Canonically equivalent names are two names to the general builder, as to the file system
    // (issue 32): é as one scalar and as e with a combining accent.
    let equivalent: ListedEntries = [
      ListedEntry(path: Array("Documents/caf\u{E9}/x".utf8), category: .critical, bytes: 10, allocatedBytes: 0, marker: [], excludedBy: nil),
      ListedEntry(path: Array("Documents/cafe\u{301}/y".utf8), category: .critical, bytes: 5, allocatedBytes: 0, marker: [], excludedBy: nil),
    ]
    #expect(!equivalent.hasRepeatedPaths)
    #expect(SizeTree(name: "c", entries: equivalent).root.children["Documents"]?.children.count == 2)
  }
}
