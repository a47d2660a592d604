/// The container layout as data: which location rule an entry falls under, decided by
/// the first one or two components of its path. (DOMAIN.md section 1, seed 002 Table 1-1,
/// and MobileBackup's include/exclude lists.)
public struct LocationRule: Sendable {
  /// Path components from the container root; an element starting with `*` matches
  /// any name with that suffix (`*.app`).
  public let pattern: [String]
  /// The category of files here when no marker applies.
  public let category: Category
  /// Whether the location is part of the standard layout (else: `unknown-location`).
  public let isStandard: Bool
  /// What the location is for, for Docs/rules.md.
  public let purpose: String
  /// False where DOMAIN.md marks the fact *unconfirmed*.
  public let isConfirmed: Bool

  public init(pattern: [String], category: Category, isStandard: Bool, purpose: String, isConfirmed: Bool) {
    self.pattern = pattern
    self.category = category
    self.isStandard = isStandard
    self.purpose = purpose
    self.isConfirmed = isConfirmed
  }

  /// The longest pattern in the table: deeper entries inherit their folder's rule.
  static let maximumDepth = 2

  func matches(_ components: ArraySlice<[UInt8]>) -> Bool {
    guard components.count >= pattern.count else { return false }
    for (element, component) in zip(pattern, components) {
      if element.hasPrefix("*") {
        let suffix = Array(element.utf8.dropFirst())
        guard component.count > suffix.count, component.suffix(suffix.count).elementsEqual(suffix) else { return false }
      } else if !component.elementsEqual(element.utf8) {
        return false
      }
    }
    return true
  }
}

/// The table itself; first match wins, so the more specific rules come first.
public enum ContainerLayout {
  /// Every location rule, in matching order.
  public static let rules: [LocationRule] = [
    LocationRule(pattern: [".com.apple.mobile_container_manager.metadata.plist"], category: .system, isStandard: true,
                 purpose: "container metadata written by iOS (MCMMetadataIdentifier = bundle id)", isConfirmed: true),
    LocationRule(pattern: [migrationJournalName], category: .other, isStandard: true,
                 purpose: "appdata's own migration journal, present only while a migration is unfinished", isConfirmed: true),
    LocationRule(pattern: ["Library", "Caches"], category: .cached, isStandard: true,
                 purpose: "re-creatable data; never backed up, purged when space is low", isConfirmed: true),
    LocationRule(pattern: ["Library", "SplashBoard"], category: .system, isStandard: true,
                 purpose: "launch snapshots managed by iOS; excluded by MobileBackup", isConfirmed: false),
    LocationRule(pattern: ["Library", "Saved Application State"], category: .system, isStandard: true,
                 purpose: "state restoration data managed by the system; excluded by MobileBackup", isConfirmed: false),
    LocationRule(pattern: ["Library", "SyncedPreferences"], category: .system, isStandard: true,
                 purpose: "iCloud key-value store cache; excluded by MobileBackup", isConfirmed: false),
    LocationRule(pattern: ["SystemData"], category: .system, isStandard: true,
                 purpose: "data iOS keeps for the app; excluded by MobileBackup", isConfirmed: false),
    LocationRule(pattern: ["Documents"], category: .critical, isStandard: true,
                 purpose: "user-generated content; backed up", isConfirmed: true),
    LocationRule(pattern: ["Library"], category: .critical, isStandard: true,
                 purpose: "app files that are not user data (Application Support, Preferences, ...); backed up", isConfirmed: true),
    LocationRule(pattern: ["GeoJSON"], category: .critical, isStandard: true,
                 purpose: "routing-app coverage files; on MobileBackup's include list", isConfirmed: false),
    LocationRule(pattern: ["tmp"], category: .temporary, isStandard: true,
                 purpose: "temporary files; never backed up, purged when the app is not running", isConfirmed: true),
    LocationRule(pattern: ["*.app"], category: .other, isStandard: true,
                 purpose: "the app bundle (older layouts kept it beside Documents); not backed up", isConfirmed: true),
  ]

  /// What anything else at the top level falls under.
  public static let unknownTopLevel = LocationRule(
    pattern: ["*"], category: .other, isStandard: false,
    purpose: "not on the backup's include list; not part of the standard layout", isConfirmed: true)

  /// The folders iOS defines, which QA1719 says not to mark (`excluded-system-folder`).
  public static let systemDefinedFolders: [String] = [
    "Documents", "Library", "Library/Application Support", "Library/Preferences",
  ]

  /// The name of the migration journal at the container root.
  public static let migrationJournalName = ".appdata-migration.journal"

  /// The file whose `MCMMetadataIdentifier` names the bundle id.
  public static let metadataFileName = ".com.apple.mobile_container_manager.metadata.plist"

  /// The rule for an entry whose path components (from the container root) are `components`.
  public static func rule(for components: ArraySlice<[UInt8]>) -> LocationRule {
    rules.first { $0.matches(components) } ?? unknownTopLevel
  }

  /// Index form of `rule(for:)`, for the walk (-1 = unknown top-level entry).
  static func ruleIndex(for components: ArraySlice<[UInt8]>) -> Int {
    rules.firstIndex { $0.matches(components) } ?? -1
  }

  static func rule(at index: Int) -> LocationRule { index < 0 ? unknownTopLevel : rules[index] }

  /// The categories of the rules, as plain values for the walk's hot loop.
  private static let categories: [Category] = rules.map(\.category)

  private static let standardFlags: [Bool] = rules.map(\.isStandard)

  static func category(at index: Int) -> Category { index < 0 ? unknownTopLevel.category : categories[index] }
  static func isStandard(at index: Int) -> Bool { index < 0 ? unknownTopLevel.isStandard : standardFlags[index] }
}
