/// A marker that excludes an entry: the path carrying it and which markers it holds.
public struct Exclusion: Hashable, Sendable {
  /// The path (relative to the container, `.` for the root) of the marked item.
  public var path: [UInt8]
  /// The excluding markers on that item.
  public var markers: MarkerSet
}

/// Everything the walk learned about one entry, handed to a `WalkVisitor`.
///
/// The name is borrowed from the walk's directory buffer, so building an entry costs no
/// allocation; it is valid only during `visit(_:)`. Keep an entry longer with `detached()`.
public struct WalkedEntry {
  /// The entry's folder, relative to the container root (empty at the top level).
  public var parentPath: [UInt8]
  private var borrowedName: UnsafeBufferPointer<UInt8>
  private var ownedName: [UInt8]?
  /// 1 for top-level entries.
  public var depth: Int
  public var status: FileStatus
  /// The index of the location rule the entry falls under (`ContainerLayout.rules`; -1: unknown
  /// top-level entry). Plain values rather than the rule itself: sharing one reference-counted
  /// object between walker threads costs more than the walk's own work.
  public var ruleIndex: Int
  /// The rule's category: where the entry lives, before markers.
  public var locationCategory: Category
  /// Whether the location is part of the standard layout.
  public var isStandardLocation: Bool
  /// The final category: the rule's, or `offline` when a marker excludes a backed-up location.
  public var category: Category
  /// Excluding markers on the entry itself.
  public var ownMarkers: MarkerSet
  /// The nearest excluding marker strictly above the entry.
  public var inheritedExclusion: Exclusion?
  /// `user.xdg.robots.backup` = `false` on the entry.
  public var declinesBackup: Bool
  /// The entry is a `CACHEDIR.TAG` file with the right signature.
  public var isCacheDirectoryTag: Bool
  /// The category the entry's folder would have as a file (for `cache-in-backup` on a tag).
  public var parentCategory: Category

  init(parentPath: [UInt8], name: UnsafeBufferPointer<UInt8>, depth: Int, status: FileStatus, ruleIndex: Int,
       locationCategory: Category, category: Category, ownMarkers: MarkerSet, inheritedExclusion: Exclusion?, declinesBackup: Bool,
       isCacheDirectoryTag: Bool, parentCategory: Category) {
    self.parentPath = parentPath
    self.borrowedName = name
    self.depth = depth
    self.status = status
    self.ruleIndex = ruleIndex
    self.locationCategory = locationCategory
    self.isStandardLocation = depth == 1 ? ContainerLayout.isStandard(at: ruleIndex) : true
    self.category = category
    self.ownMarkers = ownMarkers
    self.inheritedExclusion = inheritedExclusion
    self.declinesBackup = declinesBackup
    self.isCacheDirectoryTag = isCacheDirectoryTag
    self.parentCategory = parentCategory
  }

  /// The location rule the entry falls under.
  public var rule: LocationRule { ContainerLayout.rule(at: ruleIndex) }

  /// The entry's own name.
  public var name: [UInt8] { ownedName ?? Array(borrowedName) }

  /// The entry's path relative to the container root, `/`-separated.
  public var path: [UInt8] {
    if let ownedName { return RelativePath.join(parentPath, ownedName) }
    var path: [UInt8] = []
    path.reserveCapacity(parentPath.count + 1 + borrowedName.count)
    path.append(contentsOf: parentPath)
    if !parentPath.isEmpty { path.append(0x2F) }
    path.append(contentsOf: borrowedName)
    return path
  }

  /// The nearest excluding marker on the entry itself or a folder above it, inside the container.
  public var exclusion: Exclusion? {
    ownMarkers.isExcluding ? Exclusion(path: path, markers: ownMarkers) : inheritedExclusion
  }

  /// A copy that owns its name, to keep after `visit(_:)` returns.
  public func detached() -> WalkedEntry {
    var copy = self
    copy.ownedName = name
    copy.borrowedName = UnsafeBufferPointer(start: nil, count: 0)
    return copy
  }
}

/// Relative paths as bytes: names on disk need not be UTF-8.
public enum RelativePath {
  /// `parent/name`, or `name` at the top level.
  public static func join(_ parent: [UInt8], _ name: [UInt8]) -> [UInt8] {
    if parent.isEmpty { return name }
    var path = parent
    path.reserveCapacity(parent.count + 1 + name.count)
    path.append(0x2F)
    path.append(contentsOf: name)
    return path
  }

  /// The components of a relative path (empty ones dropped).
  public static func components(_ path: [UInt8]) -> [[UInt8]] {
    var result: [[UInt8]] = []
    var start = 0
    for index in path.indices where path[index] == 0x2F {
      if index > start { result.append(Array(path[start..<index])) }
      start = index + 1
    }
    if start < path.count { result.append(Array(path[start...])) }
    return result
  }

  /// A display string: invalid UTF-8 becomes U+FFFD (JSON's `path`; `pathBase64` keeps the bytes).
  public static func display(_ path: [UInt8]) -> String { String(decoding: path, as: UTF8.self) }

  /// True when the bytes are valid UTF-8, so `display` loses nothing.
  public static func isValidUTF8(_ path: [UInt8]) -> Bool {
    var iterator = path.makeIterator()
    var decoder = UTF8()
    while true {
      switch decoder.decode(&iterator) {
      case .scalarValue: continue
      case .emptyInput: return true
      case .error: return false
      }
    }
  }
}
