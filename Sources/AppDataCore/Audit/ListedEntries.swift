import AppDataSystem
import Synchronization
/// The files `--list` reports, kept compactly: in segments of up to 32,768 files, each with its
/// paths' bytes back to back in one arena and one fixed-size record of numbers per file. An
/// `excludedBy` path equal to the last one stored (files come folder by folder under one marked
/// folder) is stored once. A million listed files take about 100 MB here, where an array of
/// `ListedEntry` values (two arrays each) and a JSON tree of them took 1.4 GB.
///
/// Segments make adding another worker's entries free (its segments are taken, not copied),
/// and a long listing grows without copying what it holds. Path order (`sortedByPath()`) is
/// an index of 32-bit positions made the first time something reads the entries in order: a
/// report that only sums them (the HTML treemap, through `forEachStored`) never sorts them.
///
/// A collection of `ListedEntry`: reading an element builds one; the reports' hot paths read the
/// bytes in place (`forEachInPlace`).
package struct ListedEntries: Sendable, RandomAccessCollection, ExpressibleByArrayLiteral {
  fileprivate struct Record: Sendable {
    var bytes: UInt64
    var allocatedBytes: UInt64
    var pathStart: Int
    var excludedStart: Int
    var pathCount: Int32
    /// -1: no `excludedBy`.
    var excludedCount: Int32
    var category: Category
    var marker: MarkerSet

    /// Where the path and the `excludedBy` path are in the segment's arena.
    var pathRange: Range<Int> { pathStart..<(pathStart + Int(pathCount)) }
    var excludedRange: Range<Int>? { excludedCount < 0 ? nil : excludedStart..<(excludedStart + Int(excludedCount)) }
  }

  fileprivate struct Segment: Sendable {
    var arena: [UInt8] = []
    var records: [Record] = []
  }

  /// Files a segment holds: a position in path order is a segment's number and a record's
  /// place in it, in 32 bits (up to 2^17 segments: 4 billion files).
  fileprivate static let segmentShift = 15
  fileprivate static let segmentEntries = 1 << segmentShift

  private var segments: [Segment] = []
  /// After `sortedByPath()`: the path order, made when first needed.
  private var pathOrder: PathOrder?
  package private(set) var count = 0
  /// No path is listed twice and none is also the folder of another: what a walk of a folder
  /// lists (each name comes once from its folder's listing). Said by the reader that knows.
  package var pathsAreUnique = false

  package init() {}

  package init(_ entries: [ListedEntry]) {
    for entry in entries { append(entry) }
  }

  package init(arrayLiteral elements: ListedEntry...) {
    self.init(elements)
  }

  package var startIndex: Int { 0 }
  package var endIndex: Int { count }

  /// The record at a position in the order the entries were added.
  private func stored(_ position: Int) -> (segment: Int, record: Int) {
    // Segments are full but for the last of each worker's listing: counted through.
    var segment = 0
    var rest = position
    while rest >= segments[segment].records.count {
      rest -= segments[segment].records.count
      segment += 1
    }
    return (segment, rest)
  }

  package subscript(position: Int) -> ListedEntry {
    let (segmentIndex, recordIndex): (Int, Int)
    if let order = pathOrder?.get(sorting: segments).order {
      let packed = Int(order[position])
      (segmentIndex, recordIndex) = (packed >> Self.segmentShift, packed & (Self.segmentEntries - 1))
    } else {
      (segmentIndex, recordIndex) = stored(position)
    }
    let segment = segments[segmentIndex]
    let record = segment.records[recordIndex]
    return ListedEntry(
      path: Array(segment.arena[record.pathRange]), category: record.category,
      bytes: record.bytes, allocatedBytes: record.allocatedBytes, marker: record.marker,
      excludedBy: record.excludedRange.map { Array(segment.arena[$0]) })
  }

  /// Adds a file: its path as its folder's path and its name (joined with `/` here), and the
  /// path of the marked item that excludes it, if any.
  package mutating func append(folder: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>, category: Category,
                               bytes: UInt64, allocatedBytes: UInt64, marker: MarkerSet, excludedBy: UnsafeBufferPointer<UInt8>?) {
    precondition(pathOrder == nil, "appending to sorted entries")
    if segments.isEmpty || segments[segments.count - 1].records.count == Self.segmentEntries {
      var segment = Segment()
      if let full = segments.last {
        // A long listing: room for a segment like the last, so that it never grows by copying.
        segment.records.reserveCapacity(Self.segmentEntries)
        segment.arena.reserveCapacity(full.arena.count + full.arena.count / 8)
      }
      segments.append(segment)
    }
    count += 1
    segments[segments.count - 1].append(folder: folder, name: name, category: category, bytes: bytes,
                                        allocatedBytes: allocatedBytes, marker: marker, excludedBy: excludedBy)
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

  /// Adds another worker's entries (unsorted): its segments are taken, not copied. A segment
  /// not full (the last of each worker) is followed by the next one's, so `stored(_:)` counts
  /// through them.
  package mutating func append(contentsOf other: ListedEntries) {
    precondition(pathOrder == nil && other.pathOrder == nil, "appending sorted entries")
    segments.append(contentsOf: other.segments.filter { !$0.records.isEmpty })
    count += other.count
  }

  /// The entries, to be read in path order (bytewise, as `RelativePath.precedes`; equal paths
  /// in the order they were added). The order is made when something first reads them in it.
  package func sortedByPath() -> ListedEntries {
    var sorted = self
    sorted.pathOrder = pathOrder ?? PathOrder()
    return sorted
  }

  /// Whether two entries have the same path (an archive may hold one twice): known without
  /// sorting when the reader said `pathsAreUnique`, else from the path order.
  package var hasRepeatedPaths: Bool {
    if pathsAreUnique { return false }
    return (pathOrder ?? PathOrder()).get(sorting: segments).hasRepeatedPaths
  }

  /// Only the entries of `categories`, in the same order.
  package func filtered(_ categories: Set<Category>) -> ListedEntries {
    var kept = ListedEntries()
    forEachInPlace { path, excludedBy, category, bytes, allocatedBytes, marker in
      guard categories.contains(category) else { return }
      kept.append(folder: UnsafeBufferPointer(start: path.baseAddress, count: 0), name: path, category: category,
                  bytes: bytes, allocatedBytes: allocatedBytes, marker: marker, excludedBy: excludedBy)
    }
    // Read in path order, they are in it already: sorting them again is one pass.
    if pathOrder != nil { kept.pathOrder = PathOrder() }
    kept.pathsAreUnique = pathsAreUnique
    return kept
  }

  /// Every entry in order, its paths lent in place (valid during the call).
  package func forEachInPlace(_ body: (_ path: UnsafeBufferPointer<UInt8>, _ excludedBy: UnsafeBufferPointer<UInt8>?, _ category: Category,
                                        _ bytes: UInt64, _ allocatedBytes: UInt64, _ marker: MarkerSet) -> Void) {
    guard let order = pathOrder?.get(sorting: segments).order else {
      for segment in segments {
        segment.forEach { record, path, excludedBy in
          body(path, excludedBy, record.category, record.bytes, record.allocatedBytes, record.marker)
        }
      }
      return
    }
    for packed in order {
      let segment = Int(packed) >> Self.segmentShift
      let record = segments[segment].records[Int(packed) & (Self.segmentEntries - 1)]
      segments[segment].arena.withUnsafeBufferPointer { arena in
        body(UnsafeBufferPointer(rebasing: arena[record.pathRange]), record.excludedRange.map { UnsafeBufferPointer(rebasing: arena[$0]) },
             record.category, record.bytes, record.allocatedBytes, record.marker)
      }
    }
  }

  /// Every entry in the order it was added, whatever the path order: for what only sums them.
  /// Reading the records one after another is several times quicker than in path order,
  /// where each one is somewhere else in memory.
  package func forEachStored(_ body: (_ path: UnsafeBufferPointer<UInt8>, _ category: Category, _ bytes: UInt64) -> Void) {
    for segment in segments {
      segment.forEach { record, path, _ in body(path, record.category, record.bytes) }
    }
  }
}

extension ListedEntries.Segment {
  mutating func append(folder: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>, category: Category,
                       bytes: UInt64, allocatedBytes: UInt64, marker: MarkerSet, excludedBy: UnsafeBufferPointer<UInt8>?) {
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
    records.append(ListedEntries.Record(
      bytes: bytes, allocatedBytes: allocatedBytes, pathStart: pathStart, excludedStart: excludedStart,
      pathCount: pathCount, excludedCount: excludedCount, category: category, marker: marker))
  }

  /// Every record in order, with its paths lent in place.
  func forEach(_ body: (ListedEntries.Record, UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>?) -> Void) {
    arena.withUnsafeBufferPointer { arena in
      for record in records {
        body(record, UnsafeBufferPointer(rebasing: arena[record.pathRange]), record.excludedRange.map { UnsafeBufferPointer(rebasing: arena[$0]) })
      }
    }
  }
}

/// The path order of entries that no longer change, sorted on first use (by whichever thread
/// reads them first), and whether two entries have the same path.
private final class PathOrder: Sendable {
  struct Sorted {
    /// Positions: a segment's number shifted by `segmentShift`, and a record's place in it.
    var order: [UInt32]
    var hasRepeatedPaths: Bool
  }
  let sorted: Mutex<Sorted?>

  init() { sorted = Mutex(nil) }

  func get(sorting segments: [ListedEntries.Segment]) -> Sorted {
    sorted.withLock { sorted in
      if let sorted { return sorted }
      let made = Self.sort(segments)
      sorted = made
      return made
    }
  }

  /// By path, bytewise (`RelativePath.precedes`); equal paths in the order they were added.
  /// A correct comparison sort compares every two entries that end up next to each other, so
  /// two equal paths are always seen by the comparison: it notes them.
  private static func sort(_ segments: [ListedEntries.Segment]) -> Sorted {
    var order: [UInt32] = []
    order.reserveCapacity(segments.reduce(0) { $0 + $1.records.count })
    for (number, segment) in segments.enumerated() {
      for record in 0..<segment.records.count { order.append(UInt32(number << ListedEntries.segmentShift | record)) }
    }
    var repeated = false
    let mask = ListedEntries.segmentEntries - 1
    order.sort { a, b in
      let leftSegment = Int(a) >> ListedEntries.segmentShift
      let rightSegment = Int(b) >> ListedEntries.segmentShift
      let left = segments[leftSegment].records[Int(a) & mask]
      let right = segments[rightSegment].records[Int(b) & mask]
      let common = Int(min(left.pathCount, right.pathCount))
      if common > 0 {
        let compared = segments[leftSegment].arena.withUnsafeBufferPointer { leftArena in
          segments[rightSegment].arena.withUnsafeBufferPointer { rightArena in
            Syscalls.compareBytes(leftArena.baseAddress! + left.pathStart, rightArena.baseAddress! + right.pathStart, count: common)
          }
        }
        if compared != 0 { return compared < 0 }
      }
      if left.pathCount != right.pathCount { return left.pathCount < right.pathCount }
      repeated = true
      return a < b
    }
    return Sorted(order: order, hasRepeatedPaths: repeated)
  }
}
