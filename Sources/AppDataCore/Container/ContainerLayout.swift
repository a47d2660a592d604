import AppDataSystem
/// The container layout as data: which location rule an entry falls under, decided by
/// the first one or two components of its path. (Apple's File System Programming Guide, Table 1-1,
/// QA1719, and MobileBackup's own include and exclude lists of iOS 18.)
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
  /// False for a fact not yet seen in a real backup (*unconfirmed* in Docs/rules.md).
  public let isConfirmed: Bool

  public init(pattern: [String], category: Category, isStandard: Bool, purpose: String, isConfirmed: Bool) {
    self.pattern = pattern
    self.category = category
    self.isStandard = isStandard
    self.purpose = purpose
    self.isConfirmed = isConfirmed
    isSuffix = pattern.map { $0.hasPrefix("*") }
    patternBytes = pattern.map { Array($0.utf8.dropFirst($0.hasPrefix("*") ? 1 : 0)) }
  }

  /// The longest pattern in the table: deeper entries inherit their folder's rule.
  public static let maximumDepth = 2

  /// The pattern as bytes, each element without its leading `*` (`isSuffix` says which had one):
  /// the matcher compares bytes, never `String`s.
  @usableFromInline let patternBytes: [[UInt8]]
  @usableFromInline let isSuffix: [Bool]

  @inlinable
  package func matches(_ components: ArraySlice<[UInt8]>) -> Bool {
    guard components.count >= patternBytes.count else { return false }
    var component = components.startIndex
    for index in patternBytes.indices {
      let element = patternBytes[index]
      let name = components[component]
      if isSuffix[index] {
        guard name.count > element.count, name.suffix(element.count).elementsEqual(element) else { return false }
      } else if name != element {
        return false
      }
      component += 1
    }
    return true
  }
}

/// A layout table: which location rule an entry falls under, first match wins, so the more
/// specific rules come first. An app (and an app extension) uses `app`; an app group container,
/// whose files sit at its root, uses `group`.
public struct ContainerLayout: Sendable {
  /// A short name for docs and reports (`app`, `group`).
  public let name: String
  /// Every location rule, in matching order.
  public let rules: [LocationRule]
  /// What anything else at the top level falls under.
  public let fallback: LocationRule
  /// The folders iOS defines, which QA1719 says not to mark (`excluded-system-folder`).
  public let systemDefinedFolders: [String]

  /// The categories of the rules, as plain values for the walk's hot loop.
  @usableFromInline package let categories: [Category]
  @usableFromInline package let standardFlags: [Bool]

  package init(name: String, rules: [LocationRule], fallback: LocationRule, systemDefinedFolders: [String]) {
    self.name = name
    self.rules = rules
    self.fallback = fallback
    self.systemDefinedFolders = systemDefinedFolders
    categories = rules.map(\.category)
    standardFlags = rules.map(\.isStandard)
  }

  /// The rule for an entry whose path components (from the container root) are `components`.
  public func rule(for components: ArraySlice<[UInt8]>) -> LocationRule {
    rule(at: ruleIndex(for: components))
  }

  /// Index form of `rule(for:)`, for the walk (-1 = the fallback).
  @inlinable
  package func ruleIndex(for components: ArraySlice<[UInt8]>) -> Int {
    rules.firstIndex { $0.matches(components) } ?? -1
  }

  package func rule(at index: Int) -> LocationRule { index < 0 ? fallback : rules[index] }
  @inlinable package func category(at index: Int) -> Category { index < 0 ? fallback.category : categories[index] }
  @inlinable package func isStandard(at index: Int) -> Bool { index < 0 ? fallback.isStandard : standardFlags[index] }

  /// The name of the migration journal at the container root.
  public static let migrationJournalName = ".appdata-migration.journal"

  /// The file at an iOS (and Simulator) container's root whose `MCMMetadataIdentifier` names
  /// the bundle id or app group id.
  public static let metadataFileName = ".com.apple.mobile_container_manager.metadata.plist"

  /// Rules every layout starts with: the container's own metadata, and appdata's journal.
  private static let metadataRules: [LocationRule] = [
    LocationRule(pattern: [metadataFileName], category: .system, isStandard: true,
                 purpose: "container metadata written by iOS (MCMMetadataIdentifier = bundle id or group id)", isConfirmed: true),
    LocationRule(pattern: [migrationJournalName], category: .other, isStandard: true,
                 purpose: "appdata's own migration journal, present only while a migration is unfinished", isConfirmed: true),
  ]

  /// MobileBackup's exclusions, the same for apps, extensions and groups
  /// (`MBAppRelativePathsNotToBackup`, iOS 18).
  private static let systemExclusions: [LocationRule] = [
    LocationRule(pattern: ["Library", "Caches"], category: .cached, isStandard: true,
                 purpose: "re-creatable data; never backed up, purged when space is low", isConfirmed: true),
    LocationRule(pattern: ["Library", "SplashBoard"], category: .system, isStandard: true,
                 purpose: "launch snapshots managed by iOS; excluded by MobileBackup", isConfirmed: true),
    LocationRule(pattern: ["Library", "Saved Application State"], category: .system, isStandard: true,
                 purpose: "state restoration data managed by the system; excluded by MobileBackup", isConfirmed: true),
    LocationRule(pattern: ["Library", "SyncedPreferences"], category: .system, isStandard: true,
                 purpose: "iCloud key-value store cache; excluded by MobileBackup", isConfirmed: true),
    LocationRule(pattern: ["SystemData", "com.apple.AuthenticationServices"], category: .system, isStandard: true,
                 purpose: "sign-in data iOS keeps for the app; excluded by MobileBackup", isConfirmed: true),
    LocationRule(pattern: ["SystemData", "com.apple.chrono"], category: .system, isStandard: true,
                 purpose: "widget timelines iOS keeps for the app; excluded by MobileBackup", isConfirmed: true),
  ]

  /// An app's (or an app extension's) data container: MobileBackup includes `Documents`, `Library`
  /// and `GeoJSON`, minus its exclusions; anything else is not backed up.
  public static let app = ContainerLayout(
    name: "app",
    rules: metadataRules + systemExclusions + [
      LocationRule(pattern: ["SystemData"], category: .system, isStandard: true,
                   purpose: "data iOS keeps for the app; not on MobileBackup's include list", isConfirmed: true),
      LocationRule(pattern: ["Documents"], category: .critical, isStandard: true,
                   purpose: "user-generated content; backed up", isConfirmed: true),
      LocationRule(pattern: ["Library"], category: .critical, isStandard: true,
                   purpose: "app files that are not user data (Application Support, Preferences, ...); backed up", isConfirmed: true),
      LocationRule(pattern: ["GeoJSON"], category: .critical, isStandard: true,
                   purpose: "routing-app coverage files; on MobileBackup's include list", isConfirmed: true),
      LocationRule(pattern: ["tmp"], category: .temporary, isStandard: true,
                   purpose: "temporary files; never backed up, purged when the app is not running", isConfirmed: true),
      LocationRule(pattern: ["*.app"], category: .other, isStandard: true,
                   purpose: "the app bundle (older layouts kept it beside Documents); not backed up", isConfirmed: true),
    ],
    fallback: LocationRule(
      pattern: ["*"], category: .other, isStandard: false,
      purpose: "not on the backup's include list; not part of the standard layout", isConfirmed: true),
    systemDefinedFolders: ["Documents", "Library", "Library/Application Support", "Library/Preferences"])

  /// An app group container (`Shared/AppGroup/<UUID>`, `~/Library/Group Containers/<id>`): its
  /// files sit at the root (`ChatStorage.sqlite`, `stickers/`). MobileBackup backs up the whole
  /// root except the app exclusions and the metadata plist, so a group's `tmp/` is backed up.
  public static let group = ContainerLayout(
    name: "group",
    rules: metadataRules + systemExclusions + [
      LocationRule(pattern: ["tmp"], category: .critical, isStandard: true,
                   purpose: "temporary files, but backed up: a group's whole root is on MobileBackup's include list", isConfirmed: true),
    ],
    fallback: LocationRule(
      pattern: ["*"], category: .critical, isStandard: true,
      purpose: "the group's shared files, wherever they sit; backed up", isConfirmed: true),
    systemDefinedFolders: ["Library", "Library/Application Support", "Library/Preferences"])

  /// A device backup's system domains: no app layout applies; everything there is backed up.
  public static let system = ContainerLayout(
    name: "system", rules: [],
    fallback: LocationRule(pattern: ["*"], category: .critical, isStandard: true,
                           purpose: "a system domain of a device backup: everything it holds is backed up", isConfirmed: true),
    systemDefinedFolders: [])

  /// The layout a container of `kind` uses: groups their own, apps and plugins the app's.
  public static func forKind(_ kind: ContainerKind) -> ContainerLayout {
    switch kind {
    case .group: return group
    case .system: return system
    case .app, .plugin: return app
    }
  }

  /// Every layout, for Docs/rules.md.
  public static let all: [ContainerLayout] = [app, group]
}
