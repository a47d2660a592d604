import AppDataSystem
import AppDataCore

/// `appdata migrate --android-rules LEGACY -o NEW`: the migration Android lint asks every app
/// for, from a legacy `<full-backup-content>` to a `<data-extraction-rules>` that says the same
/// on Android 12 and later: each rule in both sections (`<cloud-backup>` and
/// `<device-transfer>`). appdata's own model checks it: for each destination, the new file (a
/// target of 34) carries the same entries as the legacy file did for a target of 30, both on
/// the newest Android (so the device's own walk is the same on both sides), on the app's data
/// when given and on trees made from the rules' own paths.
public enum AndroidRulesMigration {
  public struct Outcome: Sendable {
    /// The `<data-extraction-rules>` document.
    public var xml: String
    /// What could not be said in the new format (a rule with `requireFlags`), one line each.
    public var notes: [String]
    /// Where the new file carries something else than the legacy one, one line each; empty
    /// when they are equivalent on every tree checked.
    public var differences: [String]
    /// The trees the check ran on, in words.
    public var checkedOn: [String]
  }

  public struct Failure: Error, Sendable {
    public var message: String
  }

  /// Converts the legacy file `bytes` (named `name`); `data` is the app's data read into a
  /// tree, when given.
  package static func convert(_ bytes: [UInt8], name: String, data: AndroidTree? = nil) throws(Failure) -> Outcome {
    let legacy: AndroidRulesFile
    do { legacy = try AndroidRulesFile.parse(bytes, name: name) } catch { throw Failure(message: error.reason) }
    guard legacy.kind == .fullBackupContent, let scheme = legacy.legacy else {
      throw Failure(message: "\(name): a <data-extraction-rules> already; migrate converts a <full-backup-content>")
    }
    if let abort = scheme.abort {
      throw Failure(message: "\(name) line \(abort.line): \(abort.reason): Android backs up nothing with it, so there is nothing to carry over; fix it first")
    }
    var notes: [String] = []
    var lines: [String] = []
    for rule in (scheme.includes + scheme.excludes).sorted(by: { $0.line < $1.line }) {
      if !rule.requiredFlags.isEmpty {
        let flags = rule.requiredFlags.map(\.rawValue).sorted().joined(separator: "|")
        notes.append("\(name) line \(rule.line): <include domain=\"\(rule.domain.rawValue)\" path=\"\(TerminalText.escaped(rule.writtenPath))\" requireFlags=\"\(flags)\">: <data-extraction-rules> has no per-rule flags, so it is not written")
        continue
      }
      let element = rule.isInclude ? "include" : "exclude"
      let path = rule.writtenPath.isEmpty ? "" : " path=\"\(xmlEscaped(rule.writtenPath))\""
      lines.append("<\(element) domain=\"\(rule.domain.rawValue)\"\(path)/>")
    }
    for dropped in scheme.dropped {
      notes.append("\(name) line \(dropped.line): <\(dropped.element)> is dropped by Android (\(dropped.reason)), and not written")
    }
    var xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    xml += "<!-- Written by appdata migrate from \(xmlComment(name)): the same rules for the cloud backup and for device-to-device transfer. -->\n"
    xml += "<data-extraction-rules>\n"
    for section in ["cloud-backup", "device-transfer"] {
      xml += "    <\(section)>\n"
      for line in lines { xml += "        \(line)\n" }
      xml += "    </\(section)>\n"
    }
    xml += "</data-extraction-rules>\n"

    // The check.
    let converted: AndroidRulesFile
    do { converted = try AndroidRulesFile.parse(Array(xml.utf8), name: "the new file") } catch {
      throw Failure(message: "the file written would not read back: \(error.reason)")
    }
    var old = AndroidApp(package: "com.example.app")
    old.fullBackupContent = .rules(legacy)
    // The legacy file as the newest device applies it to a target of 30 (no
    // dataExtractionRules, no compat change): both sides share the device's own walk.
    old.deviceAPI = AndroidFacts.newestAPI
    old.targetSdk = 30
    var new = AndroidApp(package: "com.example.app")
    new.dataExtractionRules = converted
    new.deviceAPI = AndroidFacts.newestAPI
    new.targetSdk = 34
    var trees: [(String, AndroidTree)] = []
    if let data { trees.append(("the app's data", data)) }
    trees.append(("a tree of the rules' paths as files", Self.tree(for: scheme, targetsAreFolders: false)))
    trees.append(("a tree of the rules' paths as folders", Self.tree(for: scheme, targetsAreFolders: true)))
    var differences: [String] = []
    for (words, tree) in trees {
      for destination in AndroidDestination.allCases {
        let before = AndroidBackupModel.outcome(old, tree: tree, destination: destination, quota: nil)
        let after = AndroidBackupModel.outcome(new, tree: tree, destination: destination, quota: nil)
        let beforeSent = Dictionary(before.entries.map { (tree.place($0.node), 1) }, uniquingKeysWith: +)
        let afterSent = Dictionary(after.entries.map { (tree.place($0.node), 1) }, uniquingKeysWith: +)
        guard beforeSent != afterSent else { continue }
        let lost = beforeSent.keys.filter { afterSent[$0] == nil }.sorted()
        let gained = afterSent.keys.filter { beforeSent[$0] == nil }.sorted()
        var line = "on \(words), \(destination.words)"
        if !lost.isEmpty { line += " no longer carries \(Plural.listed(lost.map { TerminalText.escaped(AndroidAnalysis.reportPath($0)) }, limit: 5))" }
        if !gained.isEmpty { line += (lost.isEmpty ? "" : ", and") + " now carries \(Plural.listed(gained.map { TerminalText.escaped(AndroidAnalysis.reportPath($0)) }, limit: 5))" }
        if lost.isEmpty && gained.isEmpty { line += " carries the same entries a different number of times" }
        differences.append(line)
      }
    }
    return Outcome(xml: xml, notes: notes, differences: differences, checkedOn: trees.map(\.0))
  }

  /// A tree holding, for every domain, a file, and for every rule's place that place (a file,
  /// or a folder holding one), its database companions, a sibling and a parent.
  static func tree(for scheme: AndroidScheme, targetsAreFolders: Bool) -> AndroidTree {
    var tree = AndroidTree()
    tree.add(AndroidPath(.credential, []), .directory)
    tree.add(AndroidPath(.device, []), .directory)
    tree.add(AndroidPath(.external, []), .directory)
    for domain in AndroidDomain.allCases {
      tree.add(AndroidPath(domain.storage, domain.folder).appending(Array("appdata-sample".utf8)), .file(size: 1))
    }
    for storage in [AndroidStorage.credential, .device] {
      for folder in ["cache", "code_cache", "no_backup", "app_sample"] {
        tree.add(AndroidPath(storage, Array(folder.utf8)).appending(Array("f".utf8)), .file(size: 1))
      }
    }
    for rule in scheme.includes + scheme.excludes where !rule.target.path.isEmpty {
      if tree.kind(rule.target) == nil {
        if targetsAreFolders {
          tree.add(rule.target.appending(Array("child".utf8)), .file(size: 1))
        } else {
          tree.add(rule.target, .file(size: 1))
        }
      }
      for suffix in ["-journal", "-wal", "-shm", ".xml", "-sibling"] {
        var companion = rule.target
        companion.path += Array(suffix.utf8)
        if tree.kind(companion) == nil { tree.add(companion, .file(size: 1)) }
      }
    }
    return tree
  }

  /// `text` as an attribute value between double quotes. A newline, carriage return or tab
  /// is a character reference: written raw, an XML reader takes each for a space (attribute
  /// value normalization), and the rule would name another path.
  static func xmlEscaped(_ text: String) -> String {
    XMLReference.escaped(text) { scalar in
      switch scalar {
      case "\n": "&#10;"
      case "\r": "&#13;"
      case "\t": "&#9;"
      default: nil
      }
    }
  }

  /// Text safe inside `<!-- -->`: no `--`, and no control characters.
  static func xmlComment(_ text: String) -> String {
    var result = ""
    for character in TerminalText.escaped(text) {
      if character == "-" && result.last == "-" { result += " " }
      result.append(character)
    }
    return result
  }

  /// Writes `xml` to `path`, a file that must not exist: a hidden file beside it,
  /// `.NAME.appdata-TOKEN.tmp` (an `OwnedArtifact`: made with `O_EXCL`, its owner record locked
  /// from birth), flushed, then renamed to `path` without replacing anything (a file made
  /// meanwhile is never overwritten); on any failure nothing is left. A hidden file a killed run
  /// left is removed by the next run that writes `path`, when its owner record proves the run is
  /// gone; a user's file of a like name never is.
  public static func write(_ xml: String, to path: String) throws(Failure) {
    let slash = path.lastIndex(of: "/")
    let folderPath = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    let name = Array((slash.map { String(path[path.index(after: $0)...]) } ?? path).utf8)
    guard Beneath.isPlainName(name) else { throw Failure(message: "\(TerminalText.escaped(path)): names a folder, not a file") }
    if (try? Syscalls.status(ofPath: path)) != nil {
      throw Failure(message: "\(TerminalText.escaped(path)): already exists; appdata never replaces a file it did not make (choose another name)")
    }
    let folder: OwnedDescriptor
    do { folder = OwnedDescriptor(owning: try Syscalls.openDirectory(atPath: folderPath)) } catch {
      throw Failure(message: "\(TerminalText.escaped(path)): cannot \(error.action) its folder: \(error.reason)")
    }
    let prefix = OwnedArtifact.hiddenPrefix(of: name)
    OwnedArtifact.sweep(prefix: prefix, suffix: OwnedArtifact.hiddenSuffix, in: folder.descriptor)
    do throws(SystemError) {
      let hidden = try OwnedArtifact.make(.file, prefix: prefix, suffix: OwnedArtifact.hiddenSuffix, in: folder.descriptor, mode: 0o644, displayPath: path)
      do throws(SystemError) {
        try Syscalls.writeAll(hidden.descriptor, Array(xml.utf8), displayPath: path)
        try Syscalls.sync(hidden.descriptor, displayPath: path)
        TestHooks.pause(at: "rules")
        try Syscalls.renameWithoutReplacing(hidden.name, in: folder.descriptor, to: name, in: folder.descriptor, displayPath: path)
      } catch {
        hidden.discard()
        throw error
      }
      hidden.relinquish()
    } catch {
      if error.errno == .fileExists { throw Failure(message: "\(TerminalText.escaped(path)): appeared while it was written, and was left as it is; nothing was written") }
      throw Failure(message: "\(TerminalText.escaped(path)): cannot \(error.action): \(error.reason); nothing was written")
    }
  }
}
