import AppDataSystem
/// Where a file stands with respect to the backup (QA1719's four categories and two more).
public enum Category: String, CaseIterable, Sendable, Comparable {
  /// In a backed-up location, not excluded: the backup carries it.
  case critical
  /// In a backed-up location, excluded by a marker on it or on a folder above it.
  case offline
  /// Under `Library/Caches`: never backed up, purgeable.
  case cached
  /// Under `tmp/`: never backed up, purged when the app is not running.
  case temporary
  /// Paths iOS manages itself and does not back up.
  case system
  /// Outside the backup's include list: unknown top-level entries, the `.app` bundle.
  case other

  /// True only for `critical`: the one category the backup carries.
  public var isBackedUp: Bool { self == .critical }

  public static func < (lhs: Category, rhs: Category) -> Bool {
    allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
  }
}

extension Category {
  /// Position in `allCases`, for array-indexed totals in the hot loop.
  @inlinable package var index: Int {
    switch self {
    case .critical: return 0
    case .offline: return 1
    case .cached: return 2
    case .temporary: return 3
    case .system: return 4
    case .other: return 5
    }
  }
}
