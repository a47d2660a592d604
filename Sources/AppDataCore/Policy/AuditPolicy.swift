import AppDataSystem
/// The policy file (`appdata.json`, Docs/config.schema.json): limits, a warning band,
/// rule severities, ignored paths and per-path budgets. Command-line options override it.
public struct AuditPolicy: Sendable {
  /// A budget: backed-up bytes under the paths matching `path` must stay within `maxBytes`.
  public struct Budget: Sendable, Equatable {
    public var path: Glob
    public var maxBytes: UInt64
    public init(path: Glob, maxBytes: UInt64) {
      self.path = path
      self.maxBytes = maxBytes
    }
  }

  public var maxFileSize: UInt64?
  public var maxBackupSize: UInt64?
  /// A fraction of a limit (0 < warnAt < 1) above which a warning comes before the error.
  public var warnAt: Double?
  /// Severity per rule id; nil turns the rule off.
  public var severities: [String: Severity?] = [:]
  /// Paths left out of findings (still counted).
  public var ignore: [Glob] = []
  public var budgets: [Budget] = []
  /// Per-container overrides by id (`"containers": {"com.example.app": {…}}`): the keys each
  /// gives replace the top level's for that container (`rules` are merged, rule by rule).
  public var containers: [JSONKey: Override] = [:]
  /// `"android": {...}`: what an Android audit is told (Docs/android.md); the command line's
  /// options override each key.
  public var android: AndroidPolicy?

  /// The policy file's `android` object, its paths as written (relative to the policy file's
  /// folder).
  public struct AndroidPolicy: Sendable, Equatable {
    public var rules: [String] = []
    public var manifest: String?
    public var project: String?
    public var package: String?
    public var targetSdk: Int?
    public var deviceAPI: Int?
    public var endToEndEncrypted: Bool?
    public var deviceData: String?
    public var external: String?
    public static let keys = ["rules", "manifest", "project", "package", "targetSdk", "deviceApi", "endToEndEncrypted", "deviceData", "external"]
  }

  /// One container's override: its values, and which keys it gave.
  public struct Override: Sendable {
    public var policy: AuditPolicy
    public var keys: Set<String>
  }

  public init() {}

  /// The policy for the container with `id`: the top level with that id's override applied.
  public func forContainer(_ id: String?) -> AuditPolicy {
    guard let id, let override = containers[id] else { return self }
    var merged = self
    let keys = override.keys
    if keys.contains("maxFileSize") { merged.maxFileSize = override.policy.maxFileSize }
    if keys.contains("maxBackupSize") { merged.maxBackupSize = override.policy.maxBackupSize }
    if keys.contains("warnAt") { merged.warnAt = override.policy.warnAt }
    if keys.contains("rules") { merged.severities.merge(override.policy.severities) { $1 } }
    if keys.contains("ignore") { merged.ignore = override.policy.ignore }
    if keys.contains("budgets") { merged.budgets = override.policy.budgets }
    merged.containers = [:]
    return merged
  }

  /// The file `appdata audit` reads when neither `--config` nor `--no-config` is given.
  public static let defaultFileName = "appdata.json"
  /// The keys a policy file may hold.
  public static let keys = ["$schema", "maxFileSize", "maxBackupSize", "warnAt", "rules", "ignore", "budgets", "containers", "android"]
  /// The keys a per-container override may hold.
  public static let containerKeys = ["maxFileSize", "maxBackupSize", "warnAt", "rules", "ignore", "budgets"]
  /// Policy files are small; anything bigger is a mistake, not a policy.
  package static let maximumFileSize = 1 << 20

  /// A policy file that cannot be used: the message names the key; the caller adds the file.
  public struct LoadError: Error, Sendable {
    public var message: String
  }

  /// Reads and checks a policy file.
  public static func load(path: String) throws(LoadError) -> AuditPolicy {
    let bytes: [UInt8]
    do {
      bytes = try FileReading.read(path: path, limit: maximumFileSize)
    } catch {
      throw LoadError(message: error.message)
    }
    let document: JSONValue
    do {
      document = try JSONParser.parse(bytes)
    } catch {
      throw LoadError(message: "not valid JSON: \(error)")
    }
    return try parse(document)
  }

  package static func parse(_ document: JSONValue, prefix: String = "", allowed: [String] = keys) throws(LoadError) -> AuditPolicy {
    guard let members = document.objectValue else {
      throw LoadError(message: prefix.isEmpty ? "expected an object at the top level, found \(document.typeName)"
                                              : "key '\(prefix.dropLast())': expected an object of policy keys, found \(document.typeName)")
    }
    var policy = AuditPolicy()
    for key in members.keys.sorted().map(\.string) where !allowed.contains(key) {
      var message = "unknown key '\(prefix)\(TerminalText.escaped(key))'"
      if let suggestion = Suggestion.nearest(to: key, among: allowed) { message += "; did you mean '\(suggestion)'?" }
      throw LoadError(message: message)
    }
    if let value = members["containers"] {
      guard let containers = value.objectValue else {
        throw LoadError(message: "key 'containers': expected an object of container id to policy keys, found \(value.typeName)")
      }
      for (id, item) in containers.sorted(by: { $0.key < $1.key }).map({ ($0.key.string, $0.value) }) {
        let prefix = "containers.\(TerminalText.escaped(id))."
        let inner: AuditPolicy
        do {
          inner = try parse(item, prefix: prefix, allowed: containerKeys)
        } catch {
          // The inner keys' messages name them from the top of the override: add where it is.
          var message = error.message
          if !message.contains(prefix), let range = message.firstRange(of: "key '") {
            message.replaceSubrange(range, with: "key '" + prefix)
          }
          throw LoadError(message: message)
        }
        policy.containers[id] = Override(policy: inner, keys: Set(item.objectValue?.keys.map(\.string) ?? []))
      }
    }
    if let value = members["android"] { policy.android = try android(value) }
    if let value = members["maxFileSize"] { policy.maxFileSize = try size(value, key: "maxFileSize") }
    if let value = members["maxBackupSize"] { policy.maxBackupSize = try size(value, key: "maxBackupSize") }
    if let value = members["warnAt"], value != .null {
      guard let fraction = value.doubleValue, fraction > 0, fraction < 1 else {
        throw LoadError(message: "key 'warnAt': expected a number between 0 and 1 (for example 0.9), found \(describe(value))")
      }
      policy.warnAt = fraction
    }
    if let value = members["rules"] {
      guard let rules = value.objectValue else { throw LoadError(message: "key 'rules': expected an object of rule id to severity, found \(value.typeName)") }
      for (id, level) in rules.sorted(by: { $0.key < $1.key }).map({ ($0.key.string, $0.value) }) {
        guard AuditRule.named(id) != nil else {
          var message = "key 'rules': unknown rule '\(TerminalText.escaped(id))'"
          if let suggestion = Suggestion.nearest(to: id, among: AuditRule.everyRule.map(\.id)) { message += "; did you mean '\(suggestion)'?" }
          throw LoadError(message: message)
        }
        guard let name = level.stringValue, name == "off" || Severity(rawValue: name) != nil else {
          throw LoadError(message: "key 'rules.\(id)': expected \"error\", \"warning\", \"info\" or \"off\", found \(describe(level))")
        }
        policy.severities[id] = name == "off" ? .some(nil) : Severity(rawValue: name)
      }
    }
    if let value = members["ignore"] {
      guard let items = value.arrayValue else { throw LoadError(message: "key 'ignore': expected an array of globs, found \(value.typeName)") }
      for (index, item) in items.enumerated() {
        policy.ignore.append(try glob(item, key: "ignore[\(index)]"))
      }
    }
    if let value = members["budgets"] {
      guard let items = value.arrayValue else { throw LoadError(message: "key 'budgets': expected an array of {\"path\", \"maxBytes\"}, found \(value.typeName)") }
      for (index, item) in items.enumerated() {
        let key = "budgets[\(index)]"
        guard let budget = item.objectValue else { throw LoadError(message: "key '\(key)': expected an object with \"path\" and \"maxBytes\", found \(item.typeName)") }
        for name in budget.keys.sorted().map(\.string) where name != "path" && name != "maxBytes" {
          throw LoadError(message: "key '\(key)': unknown key '\(TerminalText.escaped(name))' (a budget holds \"path\" and \"maxBytes\")")
        }
        guard let path = budget["path"] else { throw LoadError(message: "key '\(key).path': missing") }
        guard let maxBytes = budget["maxBytes"] else { throw LoadError(message: "key '\(key).maxBytes': missing") }
        guard let limit = try size(maxBytes, key: "\(key).maxBytes") else { throw LoadError(message: "key '\(key).maxBytes': must not be null") }
        policy.budgets.append(Budget(path: try glob(path, key: "\(key).path"), maxBytes: limit))
      }
    }
    return policy
  }

  private static func android(_ value: JSONValue) throws(LoadError) -> AndroidPolicy {
    guard let members = value.objectValue else { throw LoadError(message: "key 'android': expected an object, found \(value.typeName)") }
    for key in members.keys.sorted().map(\.string) where !AndroidPolicy.keys.contains(key) {
      var message = "unknown key 'android.\(TerminalText.escaped(key))'"
      if let suggestion = Suggestion.nearest(to: key, among: AndroidPolicy.keys) { message += "; did you mean '\(suggestion)'?" }
      throw LoadError(message: message)
    }
    var policy = AndroidPolicy()
    func string(_ key: String) throws(LoadError) -> String? {
      guard let value = members[JSONKey(key)], value != .null else { return nil }
      guard let text = value.stringValue, !text.isEmpty else { throw LoadError(message: "key 'android.\(key)': expected a non-empty string, found \(describe(value))") }
      return text
    }
    func level(_ key: String) throws(LoadError) -> Int? {
      guard let value = members[JSONKey(key)], value != .null else { return nil }
      guard let number = value.unsignedValue, (1...1000).contains(number) else {
        throw LoadError(message: "key 'android.\(key)': expected an API level from 1 to 1000, found \(describe(value))")
      }
      return Int(number)
    }
    if let value = members["rules"] {
      guard let items = value.arrayValue else { throw LoadError(message: "key 'android.rules': expected an array of file paths, found \(value.typeName)") }
      for (index, item) in items.enumerated() {
        guard let path = item.stringValue, !path.isEmpty else { throw LoadError(message: "key 'android.rules[\(index)]': expected a file path, found \(describe(item))") }
        policy.rules.append(path)
      }
    }
    policy.manifest = try string("manifest")
    policy.project = try string("project")
    policy.package = try string("package")
    policy.deviceData = try string("deviceData")
    policy.external = try string("external")
    policy.targetSdk = try level("targetSdk")
    policy.deviceAPI = try level("deviceApi")
    if let value = members["endToEndEncrypted"], value != .null {
      guard let flag = value.boolValue else { throw LoadError(message: "key 'android.endToEndEncrypted': expected true or false, found \(describe(value))") }
      policy.endToEndEncrypted = flag
    }
    return policy
  }

  /// A size: a non-negative integer, a size string (`"50MB"`), or null for none.
  private static func size(_ value: JSONValue, key: String) throws(LoadError) -> UInt64? {
    switch value {
    case .null: return nil
    case .string(let text):
      guard let bytes = ByteSize.parse(text) else {
        throw LoadError(message: "key '\(key)': invalid size \"\(TerminalText.escaped(text))\" (expected bytes or a number with a unit such as 500K, 10MB, 1.5G)")
      }
      return bytes
    default:
      guard let bytes = value.unsignedValue else {
        throw LoadError(message: "key '\(key)': expected a byte count or a size string, found \(describe(value))")
      }
      return bytes
    }
  }

  private static func glob(_ value: JSONValue, key: String) throws(LoadError) -> Glob {
    guard let pattern = value.stringValue else { throw LoadError(message: "key '\(key)': expected a glob string, found \(value.typeName)") }
    do {
      return try Glob(pattern)
    } catch {
      throw LoadError(message: "key '\(key)': invalid glob \"\(TerminalText.abbreviated(pattern))\": \(error.message)")
    }
  }

  private static func describe(_ value: JSONValue) -> String {
    switch value {
    case .string(let text): return "\"\(TerminalText.escaped(text))\""
    case .double, .integer, .unsigned, .bool, .null: return value.serialized(pretty: false)
    default: return value.typeName
    }
  }
}
