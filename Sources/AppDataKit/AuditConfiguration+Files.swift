import AppDataSystem
import AppDataCore
import AppDataReaders
import AppDataReports

/// The files a configuration names, read into it by the library rather than by each caller: the
/// policy file with its `android` object (whose paths are relative to the policy file's folder),
/// the Android project, manifest and rules files, and the baseline. `appdata audit` gives what
/// its options name; a library caller gives the same and gets what the command gets.
extension AuditConfiguration {
  public struct NamedFiles: Sendable {
    /// `--config FILE`, or `appdata.json` in the working folder (the caller decides which).
    public var policyFile: String?
    /// The Android options, applied over the policy's `android` object.
    public var android = AndroidOptions()
    /// `--baseline`: a saved report (a `.json` name, or a file starting with `{`) is read; any
    /// other PATH is audited first when the audit runs.
    public var baseline: String?
    public init() {}
  }

  /// The Android options a command line gives; each, when set, wins over the policy's.
  public struct AndroidOptions: Sendable {
    public var project: String?
    public var manifest: String?
    public var rules: [String] = []
    public var package: String?
    public var targetSdk: Int?
    public var deviceAPI: Int?
    public var notEncrypted = false
    public var deviceData: String?
    public var external: String?
    public init() {}
  }

  /// This configuration with the named files read: the policy file (`policy`, `policySource`),
  /// its `android` object, then `files.android`, then the baseline. Reads nothing else; a file
  /// that cannot be read or parsed is a `Refusal` naming it.
  public func loadingFiles(_ files: NamedFiles) throws(Refusal) -> AuditConfiguration {
    var configuration = self
    if let policyFile = files.policyFile {
      do { configuration.policy = try AuditPolicy.load(path: policyFile) } catch {
        throw Refusal(.damaged, path: policyFile, error.message)
      }
      configuration.policySource = policyFile
    }
    do throws(AndroidRulesError) {
      if let policy = configuration.policy.android { try configuration.applyPolicyAndroid(policy, policyFile: files.policyFile) }
      let android = files.android
      if let project = android.project { try configuration.android.readProject(atPath: project) }
      if let manifest = android.manifest { try configuration.android.readManifest(atPath: manifest) }
      for file in android.rules { try configuration.android.addRules(atPath: file) }
    } catch {
      throw Refusal(.damaged, path: "", message: error.message)
    }
    configuration.applyAndroidValues(files.android)
    if let file = files.baseline {
      if Self.isSavedReport(file) {
        do { configuration.baseline = .report(try Baseline.load(path: file)) } catch {
          throw Refusal(.damaged, path: file, error.message)
        }
      } else {
        configuration.baseline = .audit(path: file)
      }
    }
    return configuration
  }

  /// The policy file's `android` object, its paths from the policy file's folder.
  private mutating func applyPolicyAndroid(_ policy: AuditPolicy.AndroidPolicy, policyFile: String?) throws(AndroidRulesError) {
    let base = policyFile.flatMap { file in file.lastIndex(of: "/").map { String(file[...$0]) } } ?? ""
    func path(_ file: String) -> String { file.hasPrefix("/") ? file : base + file }
    if let project = policy.project { try android.readProject(atPath: path(project)) }
    if let manifest = policy.manifest { try android.readManifest(atPath: path(manifest)) }
    for file in policy.rules { try android.addRules(atPath: path(file)) }
    if let package = policy.package { android.package = package }
    if let target = policy.targetSdk { android.targetSdk = target }
    if let device = policy.deviceAPI { android.deviceAPI = device }
    if let encrypted = policy.endToEndEncrypted { android.isEncrypted = encrypted }
    if let folder = policy.deviceData { android.deviceDataPath = path(folder) }
    if let folder = policy.external { android.externalPath = path(folder) }
  }

  /// The command line's Android values, over the policy's.
  private mutating func applyAndroidValues(_ options: AndroidOptions) {
    if let package = options.package { android.package = package }
    if let target = options.targetSdk { android.targetSdk = target }
    if let device = options.deviceAPI { android.deviceAPI = device }
    if options.notEncrypted { android.isEncrypted = false }
    if let folder = options.deviceData { android.deviceDataPath = folder }
    if let folder = options.external { android.externalPath = folder }
  }

  /// Whether `--baseline FILE` names a saved JSON report rather than something to audit: a
  /// `.json` name, a path that cannot be read (the load names the problem), or a regular file
  /// whose first byte past white space and a BOM is `{` (or an empty one).
  public static func isSavedReport(_ file: String) -> Bool {
    if file.lowercased().hasSuffix(".json") { return true }
    guard let status = try? Syscalls.status(ofPath: file) else { return true }
    guard status.kind == .regular else { return false }
    guard let opened = try? Syscalls.openFile(atPath: file) else { return true }
    let descriptor = OwnedDescriptor(owning: opened)
    let head = (try? Syscalls.readUpTo(descriptor.descriptor, 4096, displayPath: file)) ?? []
    let first = head.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF }.first
    return first == 0x7B || head.isEmpty
  }
}
