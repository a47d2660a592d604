import AppDataSystem
/// Every extended-attribute name appdata recognises, and how it is spelled on this
/// platform. The one place that knows about the `user.` namespace (Linux xattr(7): unprivileged names live there).
///
/// *Unconfirmed* facts live here so they change in one place:
/// - that iOS treats the modern marker as excluding whatever its value (borg's reading);
/// - that a copy made with `rsync -X` on Linux keeps the bare name after `user.`.
@usableFromInline package enum MarkerTable {
  /// What a recognised attribute means.
  @usableFromInline package enum Meaning: Equatable, Sendable {
    /// One of the two backup-exclusion markers.
    case marker(Marker)
    /// freedesktop's `user.xdg.robots.backup`: `false` asks Linux backup tools to skip the item.
    case robotsBackup
  }

  /// The namespace prefix Linux requires for unprivileged attributes; rsync -X adds it
  /// when copying from a Mac and strips it when copying back.
  package static let linuxNamespacePrefix = "user."

  /// The freedesktop attribute name (Linux only, always namespaced).
  package static let robotsBackupName = "user.xdg.robots.backup"

  /// Names recognised when reading, on every platform: bare (macOS, iOS) and `user.`-prefixed
  /// (a Mac container copied to Linux). Reading both everywhere makes an audit give the same
  /// answer for the same bytes on any host.
  package static let recognised: [(name: String, meaning: Meaning)] = {
    var table: [(String, Meaning)] = []
    for marker in Marker.allCases {
      table.append((marker.attributeName, .marker(marker)))
      table.append((linuxNamespacePrefix + marker.attributeName, .marker(marker)))
    }
    table.append((robotsBackupName, .robotsBackup))
    return table
  }()

  /// The recognised names as bytes, for matching a listxattr buffer without allocating.
  @usableFromInline package static let recognisedBytes: [(name: [UInt8], meaning: Meaning, attribute: String)] =
    recognised.map { (Array($0.name.utf8), $0.meaning, $0.name) }

  /// The name this platform reads and writes for `marker`: `user.` + name on Linux,
  /// the bare name on Darwin.
  package static func platformName(of marker: Marker) -> String {
    #if os(Linux) && !DARWIN_CHECK
    return linuxNamespacePrefix + marker.attributeName
    #else
    return marker.attributeName
    #endif
  }

  /// The name this platform stores the extended attribute Apple names `name` under: `user.` +
  /// name on Linux (unprivileged names live there), the name itself on Darwin.
  package static func platformAttributeName(_ name: String) -> String {
    #if os(Linux) && !DARWIN_CHECK
    return name.hasPrefix(linuxNamespacePrefix) ? name : linuxNamespacePrefix + name
    #else
    return name
    #endif
  }

  /// Whether this platform can store a marker on a symlink itself (Darwin can; Linux
  /// allows no user.* attributes on links).
  package static var canMarkSymbolicLinks: Bool {
    #if os(Linux) && !DARWIN_CHECK
    return false
    #else
    return true
    #endif
  }

  /// Every spelling of `marker` that may be found on disk here (for `include` to remove).
  package static func allNames(of marker: Marker) -> [String] {
    recognised.filter { $0.meaning == .marker(marker) }.map(\.name)
  }

  /// Whether a `user.xdg.robots.backup` value says "do not back up".
  @usableFromInline package static func robotsValueDeclinesBackup(_ value: [UInt8]) -> Bool {
    var text = value
    while let last = text.last, last == 0 || last == 0x0A || last == 0x20 { text.removeLast() }
    return String(decoding: text, as: UTF8.self).lowercased() == "false"
  }
}
