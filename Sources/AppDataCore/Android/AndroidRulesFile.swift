import AppDataSystem

/// Where an Android app keeps data: the credential-encrypted folder (`/data/user/0/PKG`), the
/// device-encrypted one (`/data/user_de/0/PKG`) and the external files folder
/// (`Android/data/PKG/files`).
package enum AndroidStorage: String, Sendable, CaseIterable, Comparable {
  case credential, device, external
  package static func < (a: Self, b: Self) -> Bool { allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)! }
}

/// A rule's domain (FullBackup.BackupScheme's names) and where it points.
package enum AndroidDomain: String, Sendable, CaseIterable {
  case root, file, database, sharedpref, external
  case deviceRoot = "device_root", deviceFile = "device_file", deviceDatabase = "device_database"
  case deviceSharedpref = "device_sharedpref"

  /// The token the tar stream names the domain by (FullBackup's *_TREE_TOKEN).
  package var token: String {
    switch self {
    case .root: "r"
    case .file: "f"
    case .database: "db"
    case .sharedpref: "sp"
    case .external: "ef"
    case .deviceRoot: "d_r"
    case .deviceFile: "d_f"
    case .deviceDatabase: "d_db"
    case .deviceSharedpref: "d_sp"
    }
  }

  package var storage: AndroidStorage {
    switch self {
    case .root, .file, .database, .sharedpref: .credential
    case .deviceRoot, .deviceFile, .deviceDatabase, .deviceSharedpref: .device
    case .external: .external
    }
  }

  /// The domain's folder in its storage ("" for the storage's root).
  package var folder: [UInt8] {
    switch self {
    case .root, .deviceRoot, .external: []
    case .file, .deviceFile: Array("files".utf8)
    case .database, .deviceDatabase: Array("databases".utf8)
    case .sharedpref, .deviceSharedpref: Array("shared_prefs".utf8)
    }
  }

  /// The order BackupAgent.onFullBackup walks the domains in.
  package static let walkOrder: [AndroidDomain] = [
    .root, .deviceRoot, .file, .deviceFile, .database, .deviceDatabase, .sharedpref, .deviceSharedpref, .external,
  ]
}

/// A place in an app's data: a storage and a path in it (components joined by `/`, "" for
/// the storage's root). Names are bytes, as the kernel keeps them.
package struct AndroidPath: Hashable, Comparable, Sendable {
  package var storage: AndroidStorage
  package var path: [UInt8]
  package init(_ storage: AndroidStorage, _ path: [UInt8]) {
    self.storage = storage
    self.path = path
  }
  package func appending(_ name: [UInt8]) -> AndroidPath {
    AndroidPath(storage, path.isEmpty ? name : path + [0x2F] + name)
  }
  /// Whether `self` is `other` or inside it.
  package func isWithin(_ other: AndroidPath) -> Bool {
    storage == other.storage && (other.path.isEmpty || path == other.path || (path.starts(with: other.path) && path.count > other.path.count && path[other.path.count] == 0x2F))
  }
  package static func < (a: Self, b: Self) -> Bool {
    a.storage != b.storage ? a.storage < b.storage : a.path.lexicographicallyPrecedes(b.path)
  }
}

/// One `<include>` or `<exclude>` as BackupScheme keeps it: its domain and the place it names
/// (the domain's folder joined with the rule's path, `.` components and trailing slashes gone).
package struct AndroidRule: Equatable, Sendable {
  package var isInclude: Bool
  package var domain: AndroidDomain
  package var target: AndroidPath
  /// The path as written ("" when the rule names the whole domain).
  package var writtenPath: String
  /// `requireFlags` of a legacy `<include>` (FullBackup's getRequiredFlagsFromString).
  package var requiredFlags: Set<AndroidTransportFlag>
  package var line: Int
}

package enum AndroidTransportFlag: String, Sendable, Hashable {
  case clientSideEncryption, deviceToDeviceTransfer, fakeClientSideEncryption
}

/// A rule BackupScheme drops without a word: appdata names it.
package struct AndroidDroppedRule: Equatable, Sendable {
  package var line: Int
  package var element: String
  package var domain: String?
  package var path: String?
  package var reason: String
}

/// The includes and excludes of one scheme (a `<full-backup-content>`, or one section of a
/// `<data-extraction-rules>`), or why parsing it aborts: an element other than `<include>` and
/// `<exclude>`, or too many attributes, makes BackupScheme throw, and the app backs up nothing.
package struct AndroidScheme: Equatable, Sendable {
  package var includes: [AndroidRule] = []
  package var excludes: [AndroidRule] = []
  package var dropped: [AndroidDroppedRule] = []
  /// Why BackupScheme stops reading, and the line: the app then backs up nothing.
  package var abort: (reason: String, line: Int)?
  package var isEmpty: Bool { includes.isEmpty && excludes.isEmpty }

  package static func == (a: Self, b: Self) -> Bool {
    a.includes == b.includes && a.excludes == b.excludes && a.dropped == b.dropped && a.abort?.reason == b.abort?.reason && a.abort?.line == b.abort?.line
  }
}

/// A rules file: a legacy `<full-backup-content>`, or Android 12's `<data-extraction-rules>`
/// with its `<cloud-backup>` and `<device-transfer>` sections. Recognised by its root element,
/// whatever its name. Read as AOSP's FullBackup.BackupScheme reads it (parseRules,
/// validateInnerTagContents, extractCanonicalFile); every departure from that is a bug.
package struct AndroidRulesFile: Equatable, Sendable {
  package enum Kind: String, Sendable {
    case fullBackupContent = "full-backup-content", dataExtractionRules = "data-extraction-rules"
    /// The kind a manifest attribute names (`fullBackupContent`, `dataExtractionRules`).
    init?(attribute: String) {
      switch attribute {
      case "fullBackupContent": self = .fullBackupContent
      case "dataExtractionRules": self = .dataExtractionRules
      default: return nil
      }
    }
  }
  package var kind: Kind
  /// A `<full-backup-content>`'s rules.
  package var legacy: AndroidScheme?
  /// A `<data-extraction-rules>`'s sections, nil where the file has none.
  package var cloud: AndroidScheme?
  package var deviceTransfer: AndroidScheme?
  /// `<cloud-backup disableIfNoEncryptionCapabilities="true">`: no cloud backup at all unless it
  /// is end-to-end encrypted.
  package var cloudNeedsEncryption = false
  /// Where the file came from, for messages.
  package var name: String

  package struct Malformed: Error, Equatable, Sendable {
    package var reason: String
  }

  /// Reads `bytes`; throws when it is not XML appdata reads or its root is neither element.
  package static func parse(_ bytes: [UInt8], name: String) throws(Malformed) -> AndroidRulesFile {
    let events: [XMLEvents.Event]
    do { events = try XMLEvents.events(bytes) } catch { throw Malformed(reason: "\(name): not XML appdata reads: \(error.reason)") }
    guard case .start(let root, let rootAttributes, _)? = events.first else { throw Malformed(reason: "\(name): no root element") }
    switch root {
    case Kind.fullBackupContent.rawValue:
      var file = AndroidRulesFile(kind: .fullBackupContent, name: name)
      file.legacy = scheme(events, from: 1, endingTag: root, legacy: true)
      return file
    case Kind.dataExtractionRules.rawValue:
      _ = rootAttributes
      var file = AndroidRulesFile(kind: .dataExtractionRules, name: name)
      // parseNewBackupSchemeFromXmlLocked: every start tag named after the section, wherever it
      // is, starts a section read to its end; several add up.
      for (index, event) in events.enumerated() {
        guard case .start(let element, let attributes, _) = event else { continue }
        if element == "cloud-backup" {
          file.cloud = merge(file.cloud, scheme(events, from: index + 1, endingTag: element, legacy: false))
          if attributes.contains(where: { $0.namespace.isEmpty && $0.localName == "disableIfNoEncryptionCapabilities" && $0.value == "true" }) {
            file.cloudNeedsEncryption = true
          }
        } else if element == "device-transfer" {
          file.deviceTransfer = merge(file.deviceTransfer, scheme(events, from: index + 1, endingTag: element, legacy: false))
        }
      }
      return file
    default:
      throw Malformed(reason: "\(name): its root element is <\(root)>, neither <full-backup-content> nor <data-extraction-rules>")
    }
  }

  private static func merge(_ a: AndroidScheme?, _ b: AndroidScheme) -> AndroidScheme {
    guard var a else { return b }
    if a.abort != nil { return a }
    a.includes += b.includes
    a.excludes += b.excludes
    a.dropped += b.dropped
    a.abort = b.abort
    return a
  }

  /// parseRules: the start tags up to the next event named `endingTag`.
  private static func scheme(_ events: [XMLEvents.Event], from start: Int, endingTag: String, legacy: Bool) -> AndroidScheme {
    var scheme = AndroidScheme()
    var index = start
    while index < events.count {
      let event = events[index]
      index += 1
      switch event {
      case .end(let name) where name == endingTag: return scheme
      case .start(let name, _, _) where name == endingTag: return scheme
      case .start(let element, let allAttributes, let line):
        let attributes = allAttributes.filter { AndroidFacts.toolsAttributesCount || $0.namespace != XMLEvents.toolsNamespace }
        // validateInnerTagContents
        switch element {
        case "include" where attributes.count > 3:
          scheme.abort = ("<include> has \(attributes.count) attributes; BackupScheme allows at most 3 (domain, path, requireFlags)", line)
          return scheme
        case "exclude" where attributes.count > 2:
          scheme.abort = ("<exclude> has \(attributes.count) attributes; BackupScheme allows at most 2 (domain, path)", line)
          return scheme
        case "include", "exclude": break
        default:
          scheme.abort = ("<\(element)> is neither <include> nor <exclude>", line)
          return scheme
        }
        func value(_ name: String) -> String? { attributes.first { $0.namespace.isEmpty && $0.localName == name }?.value }
        let domainName = value("domain")
        let written = value("path")
        func drop(_ reason: String) {
          scheme.dropped.append(AndroidDroppedRule(line: line, element: element, domain: domainName, path: written, reason: reason))
        }
        guard let domainName, !domainName.isEmpty else { drop("it has no domain"); continue }
        guard let domain = AndroidDomain(rawValue: domainName) else { drop("'\(domainName)' is not a domain"); continue }
        let path = written ?? ""
        if path.contains("..") { drop("its path contains '..'"); continue }
        if path.contains("//") { drop("its path contains '//'"); continue }
        let isInclude = element == "include"
        var flags: Set<AndroidTransportFlag> = []
        if legacy && isInclude, let text = value("requireFlags"), !text.isEmpty {
          for name in text.split(separator: "|", omittingEmptySubsequences: false) {
            if let flag = AndroidTransportFlag(rawValue: String(name)) { flags.insert(flag) }
          }
        }
        var target = AndroidPath(domain.storage, domain.folder)
        for component in path.split(separator: "/") where component != "." {
          target = target.appending(Array(component.utf8))
        }
        let rule = AndroidRule(isInclude: isInclude, domain: domain, target: target, writtenPath: path, requiredFlags: flags, line: line)
        if isInclude { scheme.includes.append(rule) } else { scheme.excludes.append(rule) }
      default:
        continue
      }
    }
    return scheme
  }
}
