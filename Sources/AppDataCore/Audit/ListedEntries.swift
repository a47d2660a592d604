import AppDataSystem
/// The files `--list` reports, kept compactly: every path's bytes back to back in one arena,
/// and per file one fixed-size record of its numbers. An `excludedBy` path equal to the last
/// one stored (files come folder by folder under one marked folder) is stored once. Sorted
/// once, by an index of 32-bit positions. A million listed files take about 100 MB here,
/// where an array of `ListedEntry` values (two arrays each) and a JSON tree of them took 1.4 GB.
///
/// A collection of `ListedEntry`: reading an element builds one; the reports' hot paths read the
/// bytes in place (`forEachInPlace`).
public struct ListedEntries: Sendable, RandomAccessCollection, ExpressibleByArrayLiteral {
  private struct Record: Sendable {
    var bytes: UInt64
    var allocatedBytes: UInt64
    var pathStart: Int
    var excludedStart: Int
    var pathCount: Int32
    /// -1: no `excludedBy`.
    var excludedCount: Int32
    var category: Category
    var marker: MarkerSet
  }

  private var arena: [UInt8] = []
  private var records: [Record] = []
  /// After `sortedByPath()`: the records in path order.
  private var order: [Int32]?

  public init() {}

  public init(_ entries: [ListedEntry]) {
    for entry in entries { append(entry) }
  }

  public init(arrayLiteral elements: ListedEntry...) {
    self.init(elements)
  }

  public var startIndex: Int { 0 }
  public var endIndex: Int { records.count }

  public subscript(position: Int) -> ListedEntry {
    let record = records[order.map { Int($0[position]) } ?? position]
    return ListedEntry(
      path: Array(arena[record.pathStart..<(record.pathStart + Int(record.pathCount))]), category: record.category,
      bytes: record.bytes, allocatedBytes: record.allocatedBytes, marker: record.marker,
      excludedBy: record.excludedCount < 0 ? nil : Array(arena[record.excludedStart..<(record.excludedStart + Int(record.excludedCount))]))
  }

  /// Adds a file: its path as its folder's path and its name (joined with `/` here), and the
  /// path of the marked item that excludes it, if any.
  package mutating func append(folder: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>, category: Category,
                               bytes: UInt64, allocatedBytes: UInt64, marker: MarkerSet, excludedBy: UnsafeBufferPointer<UInt8>?) {
    precondition(order == nil, "appending to sorted entries")
    let pathStart = arena.count
    arena.append(contentsOf: folder)
    if !folder.isEmpty { arena.append(0x2F) }
    arena.append(contentsOf: name)
    let pathCount = Int32(arena.count - pathStart)
    var excludedStart = 0
    var excludedCount: Int32 = -1
    if let excludedBy {
      if let last = records.last, last.excludedCount == Int32(excludedBy.count),
         arena.withUnsafeBufferPointer({ stored in
           excludedBy.isEmpty || Syscalls.compareBytes(stored.baseAddress! + last.excludedStart, excludedBy.baseAddress!, count: excludedBy.count) == 0
         }) {
        excludedStart = last.excludedStart
      } else {
        excludedStart = arena.count
        arena.append(contentsOf: excludedBy)
      }
      excludedCount = Int32(excludedBy.count)
    }
    records.append(Record(
      bytes: bytes, allocatedBytes: allocatedBytes, pathStart: pathStart, excludedStart: excludedStart,
      pathCount: pathCount, excludedCount: excludedCount, category: category, marker: marker))
  }

  package mutating func append(_ entry: ListedEntry) {
    entry.path.withUnsafeBufferPointer { path in
      let excluded = entry.excludedBy ?? []
      excluded.withUnsafeBufferPointer { excludedBy in
        append(folder: UnsafeBufferPointer(start: path.baseAddress, count: 0), name: path, category: entry.category,
               bytes: entry.bytes, allocatedBytes: entry.allocatedBytes, marker: entry.marker,
               excludedBy: entry.excludedBy == nil ? nil : excludedBy)
      }
    }
  }

  /// Adds another worker's entries (unsorted).
  package mutating func append(contentsOf other: ListedEntries) {
    precondition(order == nil && other.order == nil, "appending sorted entries")
    let shift = arena.count
    arena.append(contentsOf: other.arena)
    records.reserveCapacity(records.count + other.records.count)
    for var record in other.records {
      record.pathStart += shift
      record.excludedStart += shift
      records.append(record)
    }
  }

  /// The entries sorted by path, bytewise (`RelativePath.precedes`).
  package func sortedByPath() -> ListedEntries {
    var sorted = self
    var order = (0..<Int32(records.count)).map { $0 }
    arena.withUnsafeBufferPointer { arena in
      records.withUnsafeBufferPointer { records in
        order.sort { a, b in
          let left = records[Int(a)]
          let right = records[Int(b)]
          let common = Int(Swift.min(left.pathCount, right.pathCount))
          if common > 0 {
            let compared = Syscalls.compareBytes(arena.baseAddress! + left.pathStart, arena.baseAddress! + right.pathStart, count: common)
            if compared != 0 { return compared < 0 }
          }
          // Equal paths (an archive may hold one twice) keep the order they were read in.
          return left.pathCount != right.pathCount ? left.pathCount < right.pathCount : a < b
        }
      }
    }
    sorted.order = order
    return sorted
  }

  /// Only the entries of `categories`, in the same order.
  package func filtered(_ categories: Set<Category>) -> ListedEntries {
    var kept = ListedEntries()
    forEachInPlace { path, excludedBy, category, bytes, allocatedBytes, marker in
      guard categories.contains(category) else { return }
      kept.append(folder: UnsafeBufferPointer(start: path.baseAddress, count: 0), name: path, category: category,
                  bytes: bytes, allocatedBytes: allocatedBytes, marker: marker, excludedBy: excludedBy)
    }
    if order != nil { kept.order = (0..<Int32(kept.records.count)).map { $0 } }
    return kept
  }

  /// Every entry in order, its paths lent in place (valid during the call).
  package func forEachInPlace(_ body: (_ path: UnsafeBufferPointer<UInt8>, _ excludedBy: UnsafeBufferPointer<UInt8>?, _ category: Category,
                                        _ bytes: UInt64, _ allocatedBytes: UInt64, _ marker: MarkerSet) -> Void) {
    arena.withUnsafeBufferPointer { arena in
      for position in 0..<records.count {
        let record = records[order.map { Int($0[position]) } ?? position]
        body(UnsafeBufferPointer(rebasing: arena[record.pathStart..<(record.pathStart + Int(record.pathCount))]),
             record.excludedCount < 0 ? nil : UnsafeBufferPointer(rebasing: arena[record.excludedStart..<(record.excludedStart + Int(record.excludedCount))]),
             record.category, record.bytes, record.allocatedBytes, record.marker)
      }
    }
  }
}
