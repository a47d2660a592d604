import AppDataSystem

/// Android: two destinations, the cloud backup and device-to-device transfer, each with its
/// own rules and walk (`AndroidBackupModel`); a file's category is what the cloud backup's
/// walk makes of it (`category(of:in:sentByCloud:)`, the one place it is decided). A report's
/// platform carries the app it is about: its package, the target SDK and device API taken,
/// and, for a listed file, the destinations that carry it.
public struct AndroidPlatform: Platform, Equatable {
  public var package: String
  /// The cloud backup, then device-to-device transfer.
  public var destinations: [Destination] = []
  /// The destinations that carry each listed file, by its path in the report.
  public var carriedBy: [[UInt8]: [String]]
  /// The app's target and the device's API level the audit took, and whether each was assumed
  /// (neither given nor read from a manifest: the newest).
  public var targetSdk: Int = AndroidFacts.newestAPI
  public var targetSdkAssumed = true
  public var deviceAPI: Int = AndroidFacts.newestAPI
  public var deviceAPIAssumed = true

  package init(package: String, carriedBy: [[UInt8]: [String]] = [:], targetSdk: Int = AndroidFacts.newestAPI,
               deviceAPI: Int = AndroidFacts.newestAPI) {
    self.package = package
    self.carriedBy = carriedBy
    self.targetSdk = targetSdk
    self.deviceAPI = deviceAPI
  }

  /// A destination as reports show it, from what its walk would send.
  package static func destination(_ outcome: AndroidOutcome) -> Destination {
    let isCloud = outcome.destination == .cloud
    return Destination(id: outcome.destination.rawValue, title: isCloud ? "Google cloud backup" : "Phone switch (device-to-device)",
                       name: isCloud ? "cloud backup" : "device-to-device transfer", carried: outcome.carried, reason: outcome.reason,
                       rules: outcome.rules, files: UInt64(outcome.files), bytes: outcome.bytes, measured: outcome.measured, quota: outcome.quota)
  }

  public static var walkReading: WalkReading { .linkTargets }
  public func destinations(backup: CategoryTotals) -> [Destination] { destinations }
  public var name: String { "Android" }
  public var reportedName: String? { "android" }
  public var subject: String { "Android app data" }
  public func subjectLine(container: String) -> String {
    "Android app data: \(TerminalText.escaped(container)) (\(TerminalText.escaped(package)))"
  }
  /// iOS's own categories (tmp/, the paths iOS manages) have no Android counterpart.
  public var categories: [Category] { Category.allCases.filter { $0 != .temporary && $0 != .system } }
  /// Critical is what the cloud backup's walk sends: backed up only if the cloud backup carries the app.
  public func isBackedUp(_ category: Category, destinations: [Destination]) -> Bool {
    category == .critical && destinations.contains { $0.id == AndroidDestination.cloud.rawValue && $0.carried }
  }
  public var backedUpHeading: String { "CLOUD BACKUP" }
  public var criticalNotBackedUp: String { "no: NOT CARRIED" }
  public var largestHeading: String { "Largest files the cloud backup's walk sends:" }
  public var rules: [AuditRule] { AuditRule.android }
  public var itemizesDestinations: Bool { true }

  /// The question an Android developer asks first: which target SDK and device API decided.
  public var tableLines: [String] {
    func versions(_ name: String, _ value: Int, _ assumed: Bool) -> String { "\(name) \(value)" + (assumed ? " (assumed)" : "") }
    return [versions("Target SDK", targetSdk, targetSdkAssumed) + ", " + versions("device API", deviceAPI, deviceAPIAssumed)
      + (targetSdkAssumed && deviceAPIAssumed ? "; --target-sdk and --device-api say otherwise"
         : targetSdkAssumed ? "; --target-sdk says otherwise" : deviceAPIAssumed ? "; --device-api says otherwise" : "")]
  }

  /// `android`: the package, and the target SDK and device API the audit took, each with
  /// whether it was assumed.
  public var jsonMembers: [JSONKey: JSONValue] {
    ["android": .object([
      "package": .string(package),
      "targetSdk": .object(["value": .integer(Int64(targetSdk)), "assumed": .bool(targetSdkAssumed)]),
      "deviceApi": .object(["value": .integer(Int64(deviceAPI)), "assumed": .bool(deviceAPIAssumed)]),
    ])]
  }

  /// The rules an Android audit raises: Android's, the app's own limits and budgets, unreadable.
  public var policyRules: [AuditRule] {
    AuditRule.android + [.backupFileTooLarge, .backupFileNearLimit, .backupTooLarge, .backupNearLimit, .budgetExceeded, .budgetNearLimit, .unreadable]
  }
  public var policyMembers: [JSONKey: JSONValue] { ["android": .object(["package": .string(package)])] }
  /// maxBackupSize and maxFileSize are the app's own limits, never Android's quota.
  public var policyNote: String? {
    "the app's own limits on what each destination carries; Android's \(AndroidBackupModel.quotaText(AndroidFacts.cloudQuota)) cloud quota is not a key and always applies"
  }

  public func carriers(of path: [UInt8]) -> [String]? { carriedBy[path] ?? [] }
}
