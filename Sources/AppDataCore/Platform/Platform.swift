import AppDataSystem

/// One place an app's data goes when the user moves to a new device: iOS's iCloud and
/// computer backup; Android's cloud backup and device-to-device transfer. Every report holds
/// its platform's (`AuditReport.destinations`), and every renderer shows them in a loop.
public struct Destination: Sendable, Equatable {
  /// Its key in JSON (`destinations.ID`) and its name in JUnit's properties: `backup`, `cloud`,
  /// `deviceTransfer`.
  public var id: String
  /// Its name as a heading (the table's lines): `iCloud and computer backup`, `Google cloud
  /// backup`, `Phone switch (device-to-device)`.
  public var title: String
  /// Its name in a sentence or a table cell: `iCloud and computer backup`, `cloud backup`,
  /// `device-to-device transfer`.
  public var name: String
  /// Whether it carries the app (Android: eligible, rules that parse, not over its quota, not
  /// empty; iOS: always).
  public var carried: Bool
  /// Why it does not, when it does not.
  public var reason: String?
  /// Which rules decided what it carries, in words.
  public var rules: String
  /// The files and bytes it carries (or would carry, when it does not carry the app).
  public var files: UInt64
  public var bytes: UInt64
  /// The platform's own measure, which the quota is compared with (Android: the tar stream's
  /// size; iOS: the bytes).
  public var measured: UInt64
  /// The platform's quota on `measured`; nil for none.
  public var quota: UInt64?

  public init(id: String, title: String, name: String, carried: Bool, reason: String? = nil, rules: String, files: UInt64, bytes: UInt64,
              measured: UInt64, quota: UInt64? = nil) {
    self.id = id
    self.title = title
    self.name = name
    self.carried = carried
    self.reason = reason
    self.rules = rules
    self.files = files
    self.bytes = bytes
    self.measured = measured
    self.quota = quota
  }
}

/// What the one walk (`Walker`) reads of each entry beside its status, as a platform's backup
/// decides: its `Platform.walkReading`.
public enum WalkReading: Sendable {
  /// Its extended attributes (the markers) and a `CACHEDIR.TAG`'s signature, and it places each
  /// entry in the container's layout (`ContainerLayout.place`): iOS's.
  case markers
  /// A symlink's target and nothing else, and no placement: Android's, whose backup reads no
  /// attribute and whose rules follow symlinks (the walk's visitor, `AndroidWalkVisitor`, keeps
  /// each folder's entries for the tree its categories are decided on).
  case linkTargets
}

/// A platform an app's data is audited for: iOS (`IOSPlatform`) or Android (`AndroidPlatform`).
/// It decides each file's category (its classifier: `ContainerLayout.place` for iOS,
/// `AndroidPlatform.category` for Android), which destinations carry the app and what they
/// carry, and which rules its findings come from; a report holds it (`AuditReport.platform`)
/// and the renderers ask it, never which platform it is.
public protocol Platform: Sendable {
  /// What its walk reads of each entry (`Walker` walks every platform's folders, each with its
  /// visitor).
  static var walkReading: WalkReading { get }
  /// Its destinations, with their figures; `backup` is what the report's categories put in the
  /// backup (`AuditReport.backup`).
  func destinations(backup: CategoryTotals) -> [Destination]
  /// Its name in words: `iOS`, `Android` (`Android measures`, `Android destination`).
  var name: String { get }
  /// The `platform` member of JSON and of SARIF's and JUnit's properties; nil for iOS, which a
  /// report without one has always meant.
  var reportedName: String? { get }
  /// What the report is about, as its heading says: `Container`, `Android app data`.
  var subject: String { get }
  /// The table's first line: the subject and the container's path (and what else names it).
  func subjectLine(container: String) -> String
  /// The categories a report has a row for (Android has no counterpart of iOS's `tmp/` and of
  /// the paths iOS manages).
  var categories: [Category] { get }
  /// Whether a category's files are in the backup the "backed up" column names, given the
  /// report's destinations.
  func isBackedUp(_ category: Category, destinations: [Destination]) -> Bool
  /// The table's heading of that column, and its cell for critical files not backed up.
  var backedUpHeading: String { get }
  var criticalNotBackedUp: String { get }
  /// The heading of the largest files.
  var largestHeading: String { get }
  /// The rules its findings come from (SARIF's rules, JUnit's test cases).
  var rules: [AuditRule] { get }
  /// Whether reports spell each destination out (its rules, its measure against its quota) or
  /// show its one destination as the backup line (the backup against `maxBackupSize`).
  var itemizesDestinations: Bool { get }
  /// The table's lines above the destinations (Android: the target SDK and device API taken).
  var tableLines: [String] { get }
  /// The members it adds to JSON's document and NDJSON's summary line.
  var jsonMembers: [JSONKey: JSONValue] { get }
  /// What `init-config` writes for it beside the limits: the rules the policy file lists, the
  /// members of its own (Android's `android`, the package), and what its message adds.
  var policyRules: [AuditRule] { get }
  var policyMembers: [JSONKey: JSONValue] { get }
  var policyNote: String? { get }
  /// The ids of the destinations that carry a listed file, by its path in the report; nil
  /// where its category says where it goes (iOS).
  func carriers(of path: [UInt8]) -> [String]?
}

extension Platform {
  /// The label of a listed file in the table: its category, or the destinations that carry it.
  public func listingLabel(path: [UInt8], category: Category) -> String {
    guard let carriers = carriers(of: path) else { return category.rawValue }
    return carriers.isEmpty ? "neither" : carriers.map { $0 == "cloud" ? "cloud" : "transfer" }.joined(separator: "+")
  }
}

/// iOS: one destination, the iCloud and computer backup, which carries the critical category
/// (`ContainerLayout.place` decides each file's, from its location and its markers).
public struct IOSPlatform: Platform {
  public init() {}

  public static var walkReading: WalkReading { .markers }

  /// Its one destination: what the backup carries (`AuditReport.backup`).
  public func destinations(backup: CategoryTotals) -> [Destination] {
    [Destination(id: "backup", title: "iCloud and computer backup", name: "iCloud and computer backup", carried: true,
                 rules: "the container's layout and its exclusion markers", files: backup.files, bytes: backup.bytes,
                 measured: backup.bytes)]
  }

  public var name: String { "iOS" }
  public var reportedName: String? { nil }
  public var subject: String { "Container" }
  public func subjectLine(container: String) -> String { "Container: \(TerminalText.escaped(container))" }
  public var categories: [Category] { Category.allCases }
  public func isBackedUp(_ category: Category, destinations: [Destination]) -> Bool { category.isBackedUp }
  public var backedUpHeading: String { "BACKED UP" }
  public var criticalNotBackedUp: String { "no" }
  public var largestHeading: String { "Largest backed-up files:" }
  public var rules: [AuditRule] { AuditRule.all }
  public var itemizesDestinations: Bool { false }
  public var tableLines: [String] { [] }
  public var jsonMembers: [JSONKey: JSONValue] { [:] }
  public var policyRules: [AuditRule] { AuditRule.all }
  public var policyMembers: [JSONKey: JSONValue] { [:] }
  public var policyNote: String? { nil }
  public func carriers(of path: [UInt8]) -> [String]? { nil }
}
