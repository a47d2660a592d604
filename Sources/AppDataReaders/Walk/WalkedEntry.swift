import AppDataSystem
import AppDataCore
/// A marker that excludes an entry: the path carrying it and which markers it holds.
package struct Exclusion: Hashable, Sendable {
  /// The path (relative to the container, `.` for the root) of the marked item.
  package var path: [UInt8]
  /// The excluding markers on that item.
  package var markers: MarkerSet
}

/// Everything the walk learned about one entry, handed to a `WalkVisitor`.
///
/// Its paths are borrowed from the walk (the name from the directory buffer, the folder's
/// path and the inherited marker's path from the folder being read), so an entry is a plain
/// value: building, passing and copying one costs no allocation and no reference counting,
/// which on two threads was a fifth of appdata's own time. It is valid only during
/// `visit(_:)`; keep one longer with `detached()`.
package struct WalkedEntry {
  private var parentBytes: UnsafeBufferPointer<UInt8>
  private var nameBytes: UnsafeBufferPointer<UInt8>
  /// 1 for top-level entries.
  package var depth: Int
  package var status: FileStatus
  /// Where the entry stands: its location rule and category (`ContainerLayout.place`).
  package var placement: Placement
  /// The index of the location rule the entry falls under (the container's `ContainerLayout`
  /// rules; -1: its fallback).
  package var ruleIndex: Int { placement.ruleIndex }
  /// The rule's category: where the entry lives, before markers.
  package var locationCategory: Category { placement.locationCategory }
  /// Whether the location is part of the standard layout.
  package var isStandardLocation: Bool { placement.isStandardLocation }
  /// The final category: the rule's, or `offline` when a marker excludes a backed-up location.
  package var category: Category { placement.category }
  /// Excluding markers on the entry itself.
  package var ownMarkers: MarkerSet
  /// The nearest excluding marker strictly above the entry: its path and markers.
  private var inherited: BorrowedExclusion?
  /// `user.xdg.robots.backup` = `false` on the entry.
  package var declinesBackup: Bool
  /// The entry is a `CACHEDIR.TAG` file with the right signature.
  package var isCacheDirectoryTag: Bool
  /// The category the entry's folder would have as a file (for `cache-in-backup` on a tag).
  package var parentCategory: Category
  /// A symlink's target, in a walk that reads them (`Walker.Reading.linkTargets`); nil
  /// otherwise, or when it could not be read.
  package var linkTarget: [UInt8]?

  init(parentPath: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>, depth: Int, status: FileStatus, placement: Placement,
       ownMarkers: MarkerSet, inheritedExclusion: BorrowedExclusion?,
       declinesBackup: Bool, isCacheDirectoryTag: Bool, parentCategory: Category) {
    self.parentBytes = parentPath
    self.nameBytes = name
    self.depth = depth
    self.status = status
    self.placement = placement
    self.ownMarkers = ownMarkers
    self.inherited = inheritedExclusion
    self.declinesBackup = declinesBackup
    self.isCacheDirectoryTag = isCacheDirectoryTag
    self.parentCategory = parentCategory
  }

  /// The entry's folder, relative to the container root (empty at the top level).
  package var parentPath: [UInt8] { Array(parentBytes) }

  /// The entry's folder's path, borrowed (valid during the visit).
  package var parentBuffer: UnsafeBufferPointer<UInt8> { parentBytes }

  /// The entry's own name, borrowed.
  package var nameBuffer: UnsafeBufferPointer<UInt8> { nameBytes }

  /// The path and markers of `exclusion`, lent to `body` without copying an inherited path
  /// (nil and no markers when nothing excludes the entry).
  func withExclusion<R>(_ body: (_ path: UnsafeBufferPointer<UInt8>?, _ markers: MarkerSet) -> R) -> R {
    if ownMarkers.isExcluding { return path.withUnsafeBufferPointer { body($0, ownMarkers) } }
    if let inherited { return body(inherited.path, inherited.markers) }
    return body(nil, [])
  }

  /// The entry's own name.
  package var name: [UInt8] { Array(nameBytes) }

  /// The entry's path relative to the container root, `/`-separated.
  package var path: [UInt8] {
    var path: [UInt8] = []
    path.reserveCapacity(parentBytes.count + 1 + nameBytes.count)
    path.append(contentsOf: parentBytes)
    if !parentBytes.isEmpty { path.append(0x2F) }
    path.append(contentsOf: nameBytes)
    return path
  }

  /// The markers of the nearest excluding marker strictly above the entry (empty when none).
  package var inheritedMarkers: MarkerSet { inherited?.markers ?? [] }

  /// The nearest excluding marker strictly above the entry.
  package var inheritedExclusion: Exclusion? {
    inherited.map { Exclusion(path: Array($0.path), markers: $0.markers) }
  }

  /// The nearest excluding marker on the entry itself or a folder above it, inside the container.
  package var exclusion: Exclusion? {
    ownMarkers.isExcluding ? Exclusion(path: path, markers: ownMarkers) : inheritedExclusion
  }

  /// A copy that owns its paths, to keep after `visit(_:)` returns.
  package func detached() -> DetachedEntry {
    var copy = self
    copy.parentBytes = UnsafeBufferPointer(start: nil, count: 0)
    copy.nameBytes = UnsafeBufferPointer(start: nil, count: 0)
    copy.inherited = nil
    return DetachedEntry(entry: copy, parentPath: parentPath, name: name, inheritedExclusion: inheritedExclusion)
  }
}

/// An exclusion as the walk passes it down: the marked folder's path, borrowed.
struct BorrowedExclusion {
  var path: UnsafeBufferPointer<UInt8>
  var markers: MarkerSet

  /// Lends `exclusion`'s path to `body`.
  static func with<R>(_ exclusion: Exclusion?, _ body: (BorrowedExclusion?) -> R) -> R {
    guard let exclusion else { return body(nil) }
    return exclusion.path.withUnsafeBufferPointer { body(BorrowedExclusion(path: $0, markers: exclusion.markers)) }
  }
}

/// A `WalkedEntry` kept past its visit (a hard-linked file, counted when the walk is over).
package struct DetachedEntry {
  private let entry: WalkedEntry
  package let parentPath: [UInt8]
  package let name: [UInt8]
  package let inheritedExclusion: Exclusion?

  fileprivate init(entry: WalkedEntry, parentPath: [UInt8], name: [UInt8], inheritedExclusion: Exclusion?) {
    self.entry = entry
    self.parentPath = parentPath
    self.name = name
    self.inheritedExclusion = inheritedExclusion
  }

  package var category: Category { entry.category }
  package var path: [UInt8] { RelativePath.join(parentPath, name) }

  /// The entry again, its paths lent to `body`.
  package func withEntry<R>(_ body: (WalkedEntry) -> R) -> R {
    parentPath.withUnsafeBufferPointer { parent in
      name.withUnsafeBufferPointer { name in
        BorrowedExclusion.with(inheritedExclusion) { exclusion in
          var copy = entry
          copy.reborrow(parentPath: parent, name: name, inheritedExclusion: exclusion)
          return body(copy)
        }
      }
    }
  }
}

extension WalkedEntry {
  fileprivate mutating func reborrow(parentPath: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>,
                                     inheritedExclusion: BorrowedExclusion?) {
    parentBytes = parentPath
    nameBytes = name
    inherited = inheritedExclusion
  }
}
