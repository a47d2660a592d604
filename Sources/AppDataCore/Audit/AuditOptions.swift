import AppDataSystem
/// What `appdata audit` is asked to do.
package struct AuditOptions: Sendable {
  /// `--max-file-size`: a backed-up file above this is a `backup-file-too-large` finding.
  package var maxFileSize: UInt64?
  /// `--max-backup-size`: backed-up bytes above this are a `backup-too-large` finding.
  package var maxBackupSize: UInt64?
  /// `--list`: the categories whose files are listed one by one.
  package var listedCategories: Set<Category> = []
  /// `--top`: how many of the largest backed-up files to report.
  package var top: Int = 10
  /// `--jobs`: worker threads for the walk; without `--jobs` (`jobsAreFixed` false), the most
  /// it grows to (`Walker.walk`'s `startingWith`).
  package var jobs: Int = AuditOptions.defaultJobs
  /// `--jobs N` was given: the walk uses N threads from the start, whatever the cache.
  package var jobsAreFixed = false
  /// `warnAt`: the fraction of a limit above which a warning comes first.
  package var warnAt: Double?
  /// `budgets` from the policy file.
  package var budgets: [AuditPolicy.Budget] = []
  /// Rule severities from the policy file (nil: off).
  package var severities: [String: Severity?] = [:]
  /// Paths left out of findings.
  package var ignore: [Glob] = []
  /// `--baseline`: an earlier report to compare with.
  package var baseline: Baseline?
  /// `--max-growth`, `--max-growth-percent`.
  package var maxGrowth: UInt64?
  package var maxGrowthPercent: Double?

  package init() {}
}

/// A file as `--list` reports it.
package struct ListedEntry: Sendable, Hashable {
  package var path: [UInt8]
  package var category: Category
  package var bytes: UInt64
  package var allocatedBytes: UInt64
  /// The markers that exclude it (its own or its nearest marked folder's).
  package var marker: MarkerSet
  /// The path carrying that marker.
  package var excludedBy: [UInt8]?

  package init(path: [UInt8], category: Category, bytes: UInt64, allocatedBytes: UInt64, marker: MarkerSet, excludedBy: [UInt8]? = nil) {
    self.path = path
    self.category = category
    self.bytes = bytes
    self.allocatedBytes = allocatedBytes
    self.marker = marker
    self.excludedBy = excludedBy
  }
}

/// Files and bytes of one category.
public struct CategoryTotals: Sendable, Equatable {
  public var files: UInt64 = 0
  public var bytes: UInt64 = 0
  public var allocatedBytes: UInt64 = 0

  package mutating func add(_ other: CategoryTotals) {
    files = files.saturatingSum(other.files)
    bytes = bytes.saturatingSum(other.bytes)
    allocatedBytes = allocatedBytes.saturatingSum(other.allocatedBytes)
  }

  package init(files: UInt64 = 0, bytes: UInt64 = 0, allocatedBytes: UInt64 = 0) {
    self.files = files
    self.bytes = bytes
    self.allocatedBytes = allocatedBytes
  }
}

extension UInt64 {
  /// `self + other`, or `UInt64.max` when the sum does not fit. Sizes come from files other
  /// people made (a manifest row may record 2^63 − 1 bytes, a sparse file on btrfs may claim
  /// 8 EiB): totals stop at the largest value, 18.4 EB, instead of trapping.
  @inlinable package func saturatingSum(_ other: UInt64) -> UInt64 {
    let (sum, overflow) = addingReportingOverflow(other)
    return overflow ? .max : sum
  }
}

/// One of the largest backed-up files.
package struct LargeFile: Sendable, Hashable {
  package var path: [UInt8]
  package var bytes: UInt64
  package var category: Category

  /// Largest first; equal sizes by path, so the list does not depend on walk order.
  package static func isLarger(_ a: LargeFile, _ b: LargeFile) -> Bool {
    a.bytes != b.bytes ? a.bytes > b.bytes : RelativePath.precedes(a.path, b.path)
  }

  package init(path: [UInt8], bytes: UInt64, category: Category) {
    self.path = path
    self.bytes = bytes
    self.category = category
  }
}

extension AuditOptions {
  /// The default `--jobs`: eight threads per online CPU, at least 8 and at most 16. A walk waits on
  /// the disk when the cache is cold, and more threads than cores keep more reads in flight;
  /// warm, the extra threads cost little. Measured on 2 CPUs, a 200,000-entry container
  /// (`make bench`, medians): cold (page cache dropped) --jobs 2 1.43 s, 4 1.13 s, 8 1.00 s,
  /// 16 0.945 s, 32 1.03 s (the C floor walker's best: 0.92 s, at 32 threads); warm --jobs 2
  /// 0.268 s, 8 0.292 s, 16 0.294 s, 32 0.300 s.
  package static var defaultJobs: Int { min(16, max(8, 8 * Syscalls.onlineProcessorCount)) }

  /// The walkers a walk without `--jobs` starts with: one per online CPU, all a warm cache can
  /// use (warm --jobs 2 was the floor's best on 2 CPUs, 16 was 1.0 to 1.18 times it). It grows
  /// towards `defaultJobs` while its workers wait on the disk (`Walker.walk`).
  package static var startingJobs: Int { min(defaultJobs, Syscalls.onlineProcessorCount) }
}
