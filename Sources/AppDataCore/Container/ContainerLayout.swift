import AppDataSystem
/// The container layout as data: which location rule an entry falls under, decided by
/// the first one or two components of its path. (Apple's File System Programming Guide, Table 1-1,
/// QA1719, and MobileBackup's own include and exclude lists of iOS 18.)
@usableFromInline package struct LocationRule: Sendable {
  /// Path components from the container root; an element starting with `*` matches
  /// any name with that suffix (`*.app`).
  package let pattern: [String]
  /// The category of files here when no marker applies.
  @usableFromInline package let category: Category
  /// Whether the location is part of the standard layout (else: `unknown-location`).
  @usableFromInline package let isStandard: Bool
  /// What the location is for, for Docs/rules.md.
  package let purpose: String
  /// False for a fact not yet seen in a real backup (*unconfirmed* in Docs/rules.md).
  package let isConfirmed: Bool

  package init(pattern: [String], category: Category, isStandard: Bool, purpose: String, isConfirmed: Bool) {
    precondition((1...Self.maximumDepth).contains(pattern.count), "a location pattern has one or two elements")
    self.pattern = pattern
    self.category = category
    self.isStandard = isStandard
    self.purpose = purpose
    self.isConfirmed = isConfirmed
  }

  /// The longest pattern in the table: deeper entries inherit their folder's rule.
  @usableFromInline package static let maximumDepth = 2
}

/// A layout's patterns compiled to bytes for the matcher every reader calls per entry: one byte
/// arena, and per rule two fixed-size element records (the second absent for a one-element
/// pattern), so a match touches no `String`, no nested array and no reference count.
@usableFromInline
struct CompiledPatterns: Sendable {
  @usableFromInline
  struct Element: Sendable {
    /// Where the element's bytes (without a leading `*`) start in the arena, and how many.
    @usableFromInline var start: Int32
    @usableFromInline var count: Int32
    /// `*suffix`: matches any longer name ending in the bytes.
    @usableFromInline var isSuffix: Bool
    @usableFromInline var isPresent: Bool
  }

  @usableFromInline let arena: [UInt8]
  /// Two a rule, in the rules' order.
  @usableFromInline let elements: [Element]

  init(_ rules: [LocationRule]) {
    var arena: [UInt8] = []
    var elements: [Element] = []
    for rule in rules {
      for position in 0..<LocationRule.maximumDepth {
        guard position < rule.pattern.count else {
          elements.append(Element(start: 0, count: 0, isSuffix: false, isPresent: false))
          continue
        }
        let text = rule.pattern[position]
        let isSuffix = text.hasPrefix("*")
        let bytes = Array(text.utf8.dropFirst(isSuffix ? 1 : 0))
        elements.append(Element(start: Int32(arena.count), count: Int32(bytes.count), isSuffix: isSuffix, isPresent: true))
        arena.append(contentsOf: bytes)
      }
    }
    self.arena = arena
    self.elements = elements
  }

  /// The first rule whose pattern matches an entry whose path starts with `first` and, below
  /// the top level, `second` (nil for a top-level entry); -1 when none does.
  @inlinable
  func ruleIndex(first: UnsafeBufferPointer<UInt8>, second: UnsafeBufferPointer<UInt8>?) -> Int {
    arena.withUnsafeBufferPointer { arena in
      elements.withUnsafeBufferPointer { elements in
        var rule = 0
        while rule * 2 < elements.count {
          defer { rule += 1 }
          guard Self.matches(elements[rule * 2], first, arena) else { continue }
          let next = elements[rule * 2 + 1]
          if next.isPresent {
            guard let second, Self.matches(next, second, arena) else { continue }
          }
          return rule
        }
        return -1
      }
    }
  }

  @inlinable
  static func matches(_ element: Element, _ name: UnsafeBufferPointer<UInt8>, _ arena: UnsafeBufferPointer<UInt8>) -> Bool {
    let count = Int(element.count)
    if element.isSuffix {
      guard name.count > count else { return false }
    } else {
      guard name.count == count else { return false }
    }
    let offset = name.count - count
    let start = Int(element.start)
    for index in 0..<count where name[offset + index] != arena[start + index] { return false }
    return true
  }
}

/// A layout table: which location rule an entry falls under, first match wins, so the more
/// specific rules come first. An app (and an app extension) uses `app`; an app group container,
/// whose files sit at its root, uses `group`.
@usableFromInline package struct ContainerLayout: Sendable {
  /// A short name for docs and reports (`app`, `group`).
  package let name: String
  /// Every location rule, in matching order.
  package let rules: [LocationRule]
  /// What anything else at the top level falls under.
  @usableFromInline package let fallback: LocationRule
  /// The folders iOS defines, which QA1719 says not to mark (`excluded-system-folder`).
  package let systemDefinedFolders: [String]

  /// The categories of the rules, as plain values for the walk's hot loop.
  @usableFromInline package let categories: [Category]
  @usableFromInline package let standardFlags: [Bool]
  /// The rules' patterns as bytes: what the matcher reads.
  @usableFromInline let patterns: CompiledPatterns

  package init(name: String, rules: [LocationRule], fallback: LocationRule, systemDefinedFolders: [String]) {
    self.name = name
    self.rules = rules
    self.fallback = fallback
    self.systemDefinedFolders = systemDefinedFolders
    categories = rules.map(\.category)
    standardFlags = rules.map(\.isStandard)
    patterns = CompiledPatterns(rules)
  }

  /// The rule for an entry whose path components (from the container root) are `components`.
  package func rule(for components: ArraySlice<[UInt8]>) -> LocationRule {
    rule(at: ruleIndex(for: components))
  }

  /// Index form of `rule(for:)`, for the walk (-1 = the fallback).
  @inlinable
  package func ruleIndex(for components: ArraySlice<[UInt8]>) -> Int {
    guard let first = components.first else { return -1 }
    return first.withUnsafeBufferPointer { first in
      guard components.count > 1 else { return patterns.ruleIndex(first: first, second: nil) }
      return components[components.startIndex + 1].withUnsafeBufferPointer { patterns.ruleIndex(first: first, second: $0) }
    }
  }

  /// Index form for a path's first one or two components as bytes (`second` nil at the top
  /// level): what a reader holding the whole path (a manifest row) passes, with no copy.
  @inlinable
  package func ruleIndex(first: UnsafeBufferPointer<UInt8>, second: UnsafeBufferPointer<UInt8>?) -> Int {
    patterns.ruleIndex(first: first, second: second)
  }

  package func rule(at index: Int) -> LocationRule { index < 0 ? fallback : rules[index] }
  @inlinable package func category(at index: Int) -> Category { index < 0 ? fallback.category : categories[index] }
  @inlinable package func isStandard(at index: Int) -> Bool { index < 0 ? fallback.isStandard : standardFlags[index] }

  /// The name of the migration journal at the container root.
  package static let migrationJournalName = ".appdata-migration.journal"

  /// The file at an iOS (and Simulator) container's root whose `MCMMetadataIdentifier` names
  /// the bundle id or app group id.
  package static let metadataFileName = ".com.apple.mobile_container_manager.metadata.plist"

  /// Rules every layout starts with: the container's own metadata, and appdata's journal.
  private static let metadataRules: [LocationRule] = [
    LocationRule(pattern: [metadataFileName], category: .system, isStandard: true,
                 purpose: "container metadata written by iOS (MCMMetadataIdentifier = bundle id or group id)", isConfirmed: true),
    LocationRule(pattern: [migrationJournalName], category: .other, isStandard: true,
                 purpose: "appdata's own migration journal, present only while a migration is unfinished", isConfirmed: true),
    // A container copied or opened on a Mac (an .xcappdata, a Simulator folder, ~/Library/Containers)
    // gets Finder's .DS_Store: it is not the app's data and no device backs it up.
    LocationRule(pattern: [".DS_Store"], category: .system, isStandard: true,
                 purpose: "Finder's folder view settings, written when the folder was opened on a Mac; never on a device", isConfirmed: true),
    LocationRule(pattern: [".localized"], category: .system, isStandard: true,
                 purpose: "Finder's marker for a folder shown under a localized name, added on a Mac; never on a device", isConfirmed: true),
    LocationRule(pattern: ["Icon\r"], category: .system, isStandard: true,
                 purpose: "Finder's custom folder icon (the name ends in a carriage return), added on a Mac; never on a device", isConfirmed: true),
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
  package static let app = ContainerLayout(
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
  package static let group = ContainerLayout(
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
  package static let system = ContainerLayout(
    name: "system", rules: [],
    fallback: LocationRule(pattern: ["*"], category: .critical, isStandard: true,
                           purpose: "a system domain of a device backup: everything it holds is backed up", isConfirmed: true),
    systemDefinedFolders: [])

  /// The layout a container of `kind` uses: groups their own, apps and plugins the app's.
  package static func forKind(_ kind: ContainerKind) -> ContainerLayout {
    switch kind {
    case .group: return group
    case .system: return system
    case .app, .plugin: return app
    }
  }

  /// Every layout, for Docs/rules.md.
  package static let all: [ContainerLayout] = [app, group]
}
