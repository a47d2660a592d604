import AppDataSystem
/// What PATH is taken to be: decided by its shape (`auto`), or said with `--platform`.
public enum InputPlatform: String, Sendable, CaseIterable {
  case auto, ios, android
}

/// What an Android audit is told about the app (`--android-rules`, `--target-sdk`, ...; or
/// appdata.json's `android` object): its manifest's backup attributes and the device's.
public struct AndroidSettings: Sendable {
  /// The rules files given, read (`AndroidRulesFile.parse`): each is a `<full-backup-content>`
  /// (the manifest's android:fullBackupContent) or a `<data-extraction-rules>`
  /// (android:dataExtractionRules), recognised by its root element.
  package var rules: [AndroidRulesFile] = []
  /// Rules files a manifest names under the attribute of the other kind (android:dataExtractionRules
  /// naming a `<full-backup-content>`): Android refuses them (`AndroidApp.misnamed`).
  package var misnamed: [(attribute: AndroidRulesFile.Kind, file: AndroidRulesFile)] = []
  /// The package name; without it, the folder's name where it looks like one.
  public var package: String?
  public var allowBackup = true
  /// `android:fullBackupContent="false"`.
  public var fullBackupContentDisabled = false
  public var backupAgent: String?
  public var fullBackupOnly = false
  public var targetSdk: Int?
  public var deviceAPI: Int?
  /// Whether the cloud backup is end-to-end encrypted (a screen lock): yes unless said.
  public var isEncrypted = true
  /// The rules files' names, as given, for messages and reports.
  public var rulesPaths: [String] = []
  /// The device-encrypted storage (`/data/user_de/0/PKG`) and the external files folder
  /// (`Android/data/PKG/files`), when given: read beside the credential-encrypted folder, and
  /// reported under `user_de/` and `external/`.
  public var deviceDataPath: String?
  public var externalPath: String?
  /// `--backup`: an `adb backup` file or a LocalTransport stream of the app, compared with
  /// what the cloud backup's rules carry.
  public var backupPath: String?

  public init() {}

  /// Reads the rules file `bytes` (named `name`) into the settings; a file of the same kind as
  /// one read before replaces it.
  /// `attribute`: the manifest attribute that names the file, when a manifest does; a file
  /// whose root is of the other kind is then kept as misnamed, as Android would refuse it.
  package mutating func addRules(_ bytes: [UInt8], name: String, attribute: String? = nil) throws(AndroidRulesError) {
    let file: AndroidRulesFile
    do { file = try AndroidRulesFile.parse(bytes, name: name) } catch { throw AndroidRulesError(message: error.reason) }
    if let attribute = attribute.flatMap(AndroidRulesFile.Kind.init(attribute:)), attribute != file.kind {
      misnamed.removeAll { $0.attribute == attribute }
      misnamed.append((attribute, file))
      rulesPaths.append(name)
      return
    }
    rules.removeAll { $0.kind == file.kind }
    rules.append(file)
    rulesPaths.append(name)
  }

  /// The app as the model sees it.
  /// ParsingPackageUtils.parseBaseApplication reads android:backupAgent, fullBackupOnly and
  /// fullBackupContent only when allowBackup is true (`if (pkg.isBackupAllowed())`): with
  /// allowBackup false the app has neither, whatever the manifest says. dataExtractionRules is
  /// read whatever allowBackup says (parseBaseAppBasicFlags). Read in the version with
  /// isBackupAllowed(), its release not identified (Docs/android.md, unconfirmed).
  package func app(package: String) -> AndroidApp {
    var app = AndroidApp(package: package)
    app.allowBackup = allowBackup
    app.dataExtractionRules = rules.first { $0.kind == .dataExtractionRules }
    app.misnamed = misnamed.filter { allowBackup || !AndroidFacts.allowBackupGatesAgentAndLegacyRules || $0.attribute == .dataExtractionRules }
    if allowBackup || !AndroidFacts.allowBackupGatesAgentAndLegacyRules {
      if let legacy = rules.first(where: { $0.kind == .fullBackupContent }) { app.fullBackupContent = .rules(legacy) }
      if fullBackupContentDisabled { app.fullBackupContent = .disabled }
      app.backupAgent = backupAgent
      app.fullBackupOnly = fullBackupOnly
    }
    app.targetSdk = targetSdk ?? AndroidFacts.newestAPI
    app.deviceAPI = deviceAPI ?? AndroidFacts.newestAPI
    app.isEncrypted = isEncrypted
    return app
  }
}

/// A rules file appdata cannot read (not XML it reads, or neither root element), in one line.
package struct AndroidRulesError: Error, Sendable {
  package var message: String
}

/// The backup attributes of a source `AndroidManifest.xml` (`--android-manifest`): on
/// `<application>`, android:allowBackup, android:fullBackupContent, android:dataExtractionRules,
/// android:backupAgent and android:fullBackupOnly; the package (the root's `package`, the
/// Gradle `namespace` being elsewhere); `<uses-sdk android:targetSdkVersion>` where the source
/// still has one.
package struct AndroidManifest: Sendable, Equatable {
  package var package: String?
  package var allowBackup: Bool?
  /// `"false"`, or a resource (`@xml/backup_rules`).
  package var fullBackupContent: String?
  package var dataExtractionRules: String?
  package var backupAgent: String?
  package var fullBackupOnly: Bool?
  package var targetSdk: Int?

  /// Reads `bytes`; throws a one-line reason when it is not a manifest appdata reads.
  package static func parse(_ bytes: [UInt8], name: String) throws(AndroidRulesError) -> AndroidManifest {
    let events: [XMLEvents.Event]
    do { events = try XMLEvents.events(bytes) } catch { throw AndroidRulesError(message: "\(name): not XML appdata reads: \(error.reason)") }
    guard case .start("manifest", let rootAttributes, _)? = events.first else {
      throw AndroidRulesError(message: "\(name): its root element is not <manifest>")
    }
    var manifest = AndroidManifest()
    manifest.package = rootAttributes.first { $0.namespace.isEmpty && $0.localName == "package" }?.value
    func android(_ attributes: [XMLEvents.Attribute], _ name: String) -> String? {
      attributes.first { $0.namespace == XMLEvents.androidNamespace && $0.localName == name }?.value
    }
    for event in events {
      guard case .start(let element, let attributes, _) = event else { continue }
      if element == "application" {
        manifest.allowBackup = android(attributes, "allowBackup").map { $0 != "false" }
        manifest.fullBackupContent = android(attributes, "fullBackupContent")
        manifest.dataExtractionRules = android(attributes, "dataExtractionRules")
        manifest.backupAgent = android(attributes, "backupAgent")
        manifest.fullBackupOnly = android(attributes, "fullBackupOnly").map { $0 == "true" }
      } else if element == "uses-sdk", let target = android(attributes, "targetSdkVersion").flatMap({ Int($0) }) {
        manifest.targetSdk = target
      }
    }
    return manifest
  }

  /// The resource names of the rules files it points at (`backup_rules` for `@xml/backup_rules`).
  package var rulesResources: [String] { rulesResourcesByAttribute.map(\.resource) }

  /// The same, each with the attribute that names it (`fullBackupContent`, `dataExtractionRules`).
  package var rulesResourcesByAttribute: [(attribute: String, resource: String)] {
    [("fullBackupContent", fullBackupContent), ("dataExtractionRules", dataExtractionRules)].compactMap { attribute, value in
      guard let value, value.hasPrefix("@xml/") else { return nil }
      return (attribute, String(value.dropFirst(5)))
    }
  }
}

extension AndroidSettings {
  /// The manifest's attributes, over the defaults (options given after it override it).
  package mutating func apply(_ manifest: AndroidManifest) {
    if let package = manifest.package { self.package = package }
    if let allowBackup = manifest.allowBackup { self.allowBackup = allowBackup }
    if manifest.fullBackupContent == "false" { fullBackupContentDisabled = true }
    backupAgent = manifest.backupAgent ?? backupAgent
    if let fullBackupOnly = manifest.fullBackupOnly { self.fullBackupOnly = fullBackupOnly }
    if let target = manifest.targetSdk { targetSdk = target }
  }

  /// Reads the rules file at `path` (a user-named file, at most 4 MiB).
  package mutating func addRules(atPath path: String, attribute: String? = nil) throws(AndroidRulesError) {
    let bytes: [UInt8]
    do { bytes = try FileReading.read(path: path, limit: 4 << 20) } catch {
      throw AndroidRulesError(message: "\(TerminalText.escaped(path)): \(error.message)")
    }
    try addRules(bytes, name: TerminalText.escaped(path), attribute: attribute)
  }

  /// `--android-project DIR`: the module's `src/main/AndroidManifest.xml`, or
  /// `DIR/AndroidManifest.xml`, read as `readManifest` reads it.
  package mutating func readProject(atPath given: String) throws(AndroidRulesError) {
    // `app/` and `app` name the same module: no `app//src` in what is printed.
    var folder = given
    while folder.count > 1 && folder.hasSuffix("/") { folder.removeLast() }
    let candidates = ["\(folder)/src/main/AndroidManifest.xml", "\(folder)/AndroidManifest.xml"]
    guard let manifest = candidates.first(where: { (try? Syscalls.status(ofPath: $0))?.kind == .regular }) else {
      throw AndroidRulesError(message: "\(TerminalText.escaped(folder)): no src/main/AndroidManifest.xml or AndroidManifest.xml in it")
    }
    try readManifest(atPath: manifest)
  }

  /// Reads the manifest at `path` and the rules files it names, found in `res/xml/` beside it
  /// (a module's `src/main`). A resource it names that is not there is an error: the audit
  /// would otherwise judge the data against no rules.
  package mutating func readManifest(atPath path: String) throws(AndroidRulesError) {
    let bytes: [UInt8]
    do { bytes = try FileReading.read(path: path, limit: 4 << 20) } catch {
      throw AndroidRulesError(message: "\(TerminalText.escaped(path)): \(error.message)")
    }
    let manifest = try AndroidManifest.parse(bytes, name: TerminalText.escaped(path))
    apply(manifest)
    let folder = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
    for (attribute, resource) in manifest.rulesResourcesByAttribute {
      guard resource.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
        throw AndroidRulesError(message: "\(TerminalText.escaped(path)): the resource @xml/\(TerminalText.escaped(resource)) is not a resource name")
      }
      try addRules(atPath: "\(folder)/res/xml/\(resource).xml", attribute: attribute)
    }
  }
}
