import AppDataSystem

/// One destination's figures, as a report shows them.
public struct AndroidDestinationFigures: Sendable, Equatable {
  public var destination: String
  public var carried: Bool
  public var reason: String?
  /// Which rules decided, in words.
  public var rules: String
  public var files: Int
  public var bytes: UInt64
  /// Android's own measure (the tar stream's size), which the quota is compared with.
  public var measured: UInt64
  public var quota: UInt64?
}

/// What an Android audit adds to a report: the platform's destinations.
public struct AndroidSummary: Sendable, Equatable {
  public var package: String
  public var cloud: AndroidDestinationFigures
  public var deviceTransfer: AndroidDestinationFigures
  /// The destinations that carry each carried file, by its path in the report.
  public var carriedBy: [[UInt8]: [String]]
}

/// An app's data, its rules and the settings, analysed: each file's category, the
/// destinations, the findings. The one place an Android file's category is decided (beside
/// `ContainerLayout.place`, which decides an iOS file's).
package struct AndroidAnalysis {
  package var summary: AndroidSummary
  package var findings: [Finding]
  /// Each regular file's category, by its path in the report.
  package var categories: [(path: [UInt8], bytes: UInt64, category: Category)]

  /// A path as the report names it: the credential-encrypted folder's paths as they are, the
  /// others under a prefix naming their storage.
  package static func reportPath(_ place: AndroidPath) -> [UInt8] {
    switch place.storage {
    case .credential: place.path
    case .device: Array("user_de".utf8) + (place.path.isEmpty ? [] : [0x2F] + place.path)
    case .external: Array("external".utf8) + (place.path.isEmpty ? [] : [0x2F] + place.path)
    }
  }

  package init(app: AndroidApp, tree: AndroidTree, rulesFiles: [AndroidRulesFile], cloudQuota: UInt64?, transferQuota: UInt64?, warnAt: Double?) {
    let cloud = AndroidBackupModel.outcome(app, tree: tree, destination: .cloud, quota: cloudQuota)
    let transfer = AndroidBackupModel.outcome(app, tree: tree, destination: .deviceTransfer, quota: transferQuota)
    var carriedBy: [[UInt8]: [String]] = [:]
    for (outcome, name) in [(cloud, "cloud"), (transfer, "deviceTransfer")] where outcome.carried {
      for entry in outcome.entries where !entry.isDirectory { carriedBy[Self.reportPath(entry.place), default: []].append(name) }
    }
    func figures(_ outcome: AndroidOutcome, _ name: String) -> AndroidDestinationFigures {
      AndroidDestinationFigures(destination: name, carried: outcome.carried, reason: outcome.reason, rules: outcome.rules, files: outcome.files,
                                bytes: outcome.bytes, measured: outcome.measured, quota: outcome.quota)
    }
    summary = AndroidSummary(package: app.package, cloud: figures(cloud, "cloud"), deviceTransfer: figures(transfer, "deviceTransfer"), carriedBy: carriedBy)

    // Categories: what the cloud backup's rules carry is critical (whether or not the app is
    // eligible: that is the destination's `carried`), cache/ and code_cache/ are cached, the
    // rest (no_backup/, what a rule excludes) offline; a symlink or special file is other.
    let sentByCloud = Set(cloud.entries.map(\.place))
    var categories: [(path: [UInt8], bytes: UInt64, category: Category)] = []
    for (place, kind) in tree.kinds {
      let category: Category
      var bytes: UInt64 = 0
      switch kind {
      case .directory: continue
      case .other: category = .other
      case .file(let size):
        bytes = size
        if sentByCloud.contains(place) {
          category = .critical
        } else if place.storage != .external,
                  place.path.starts(with: Array("cache/".utf8)) || place.path.starts(with: Array("code_cache/".utf8)) {
          category = .cached
        } else {
          category = .offline
        }
      }
      categories.append((Self.reportPath(place), bytes, category))
    }
    self.categories = categories.sorted { $0.path.lexicographicallyPrecedes($1.path) }
    findings = AndroidFindings.all(app: app, tree: tree, rulesFiles: rulesFiles, cloud: cloud, transfer: transfer, warnAt: warnAt)
  }
}
