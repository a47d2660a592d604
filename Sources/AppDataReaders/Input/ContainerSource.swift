import AppDataSystem
import AppDataCore
/// One container PATH resolved to.
package struct ContainerRef: Sendable {
  /// The bundle id or app group id from its metadata; nil when it has none.
  package var id: String?
  package var kind: ContainerKind
  /// The container root on disk, as a path to open (inside an archive: see `ArchiveSource`).
  package var root: String
  /// The folder name people know it by (a package's name, a Mac app's `<id>` folder), shown
  /// where there is no id.
  package var folderName: String

  /// Findings about its identity plists (`metadata-unreadable`), noted in its report.
  package var identityFindings: [Finding] = []

  /// The id, or else the folder name.
  package var name: String { id ?? folderName }
}

/// What an audit of a source needs: each container's options, where streamed lines go, progress.
package struct AuditRequest: Sendable {
  /// The options of a container, by its id (the policy's per-container overrides, the baseline).
  package var options: @Sendable (String?) -> AuditOptions
  /// Whether `options` gives different limits or budgets for different ids.
  package var optionsDependOnID = false
  /// `--app`: the containers to keep.
  package var filter: AppFilter?
  /// Receives listed entries as NDJSON lines while the audit runs (see `Auditor.entrySink`).
  package var entrySink: (@Sendable ([UInt8]) -> Void)?
  /// Tag streamed lines with their container (a report of many).
  package var tagsLines = false
  package var progress: WalkProgress?
  /// Device backups: list every system domain (`--all-domains`), check stored files (`--verify`).
  package var allDomains = false
  package var verify = false
  /// The password of a source that `needsPassword` (an encrypted device backup), read before
  /// the audit starts (see `BackupPassword`).
  package var password: SecretBuffer?
  /// Reads the password when a source finds out only while reading that it needs one (an
  /// encrypted backup inside an archive), given the backup's path; nil when there is no way to
  /// give one.
  package var passwordProvider: (@Sendable (String) throws(Refusal) -> SecretBuffer)?
  /// `--max-key-rounds`: the most key-derivation rounds (DPIC and ITER together) an encrypted
  /// backup's keybag may ask for.
  package var maximumKeyRounds = BackupKeybag.defaultMaximumRounds
  /// For an Android app's data: what the manifest and the device say (`AndroidSettings`).
  package var android = AndroidSettings()

  package init(options: @escaping @Sendable (String?) -> AuditOptions) {
    self.options = options
  }
}

/// What an audit of a source found: the reports of the containers kept, and the names of all.
package struct AuditOutcome: Sendable {
  package var reports: [AuditReport]
  /// Every container's name (id or folder), kept or not, for a `--app` that matches none.
  package var available: [String]
  /// Whether the report is one of many containers (see `ContainerSource.isCollection`; an
  /// archive knows once it is read).
  package var isCollection: Bool
  /// For a device backup: what the backup is.
  package var backup: BackupManifest.Info?
  /// For a report of many backups (a folder of backups, several PATHs): each backup, read or
  /// not; their containers are in `reports`, named `BACKUP//DOMAIN`.
  package var backups: [BackupAudit] = []
  /// One line each about what reading found that the user should know (an archive with no
  /// extended attributes at all); the command prints them as warnings.
  package var notices: [String] = []

  package init(reports: [AuditReport], available: [String], isCollection: Bool) {
    self.reports = reports
    self.available = available
    self.isCollection = isCollection
  }
}

/// One kind of input PATH can be: it knows its containers and how to read them. Commands ask
/// `InputResolver` for one and never branch on the kind; a new input kind is a new source.
package protocol ContainerSource: Sendable {
  /// PATH, absolute.
  var source: String { get }
  /// Whether PATH names a folder of containers: its report is a report of many, however many
  /// it holds, so that a script's `jq` filter does not depend on how many apps are installed.
  var isCollection: Bool { get }
  /// The containers as folders on disk, for commands that change them; nil when they cannot be
  /// changed in place (an archive), with the reason.
  func folders() throws(Refusal) -> [ContainerRef]
  /// Audits the containers the request's filter keeps.
  func audit(_ request: AuditRequest) throws(Refusal) -> AuditOutcome
  /// Whether reading it needs a password (`AuditRequest.password`).
  var needsPassword: Bool { get }
  /// Whether it can be audited without the password it needs: a report of many lists an
  /// encrypted backup it cannot open as locked.
  var passwordIsOptional: Bool { get }
  /// Whether it is, or holds, a device backup (`--verify` and `--all-domains` apply to it).
  var readsBackups: Bool { get }
  /// What it reads, each as the file it is (a container's folder, a backup's folder, an
  /// archive; nil when it cannot be told, and then never taken for another): an input named
  /// twice, or inside another PATH given, is read once (`InputResolver.resolve(_:)`).
  var identities: [FileIdentity?] { get }
  /// The source without the parts whose identity is in `seen`; nil when none is left.
  func excluding(_ seen: Set<FileIdentity>) -> (any ContainerSource)?
  /// One line each about how PATH was read that the user should know (an input named twice,
  /// read once); the command prints them as warnings before the audit.
  var notices: [String] { get }
  /// What `--backup BACKUP` is to it: nil when BACKUP is a device backup its containers are
  /// compared with (`audit` reads it as one); else its platform's own backup, which it reads
  /// itself (`AuditRequest.android.backupPath`: an Android app's data and its Android backup),
  /// and whether that needs a password.
  func ownBackup(atPath path: String) -> OwnBackup?
}

/// A backup of a platform's own kind that a source compares its data with (`ContainerSource.ownBackup`).
package struct OwnBackup: Sendable {
  package var needsPassword: Bool
  package init(needsPassword: Bool) { self.needsPassword = needsPassword }
}

/// A source that is or may hold device backups (a backup, a folder of them, an archive).
package protocol BackupHolder {
  /// The device backups it is or holds, each ready to read (`appdata extract`); an archive is
  /// read for them as `audit` reads it. A backup whose plists refuse it is that refusal.
  func deviceBackups() throws(Refusal) -> [BackupSource]
}

extension InputResolver {
  /// The device backups PATH is or holds (none when it holds only containers).
  package static func deviceBackups(in source: any ContainerSource) throws(Refusal) -> [BackupSource] {
    try (source as? BackupHolder)?.deviceBackups() ?? []
  }
}

extension ContainerSource {
  package var needsPassword: Bool { false }
  package var passwordIsOptional: Bool { false }
  package var readsBackups: Bool { false }
  package var notices: [String] { [] }
  package func ownBackup(atPath path: String) -> OwnBackup? { nil }

  /// A source read whole: it is one part, or none of it.
  func wholeExcluding(_ seen: Set<FileIdentity>) -> (any ContainerSource)? {
    identities.contains { $0.map(seen.contains) ?? false } ? nil : self
  }
}

/// `--app ID`: the containers whose id is ID or one of its extensions (`ID.…`), and its app
/// groups (`group.ID`, `group.ID.…`).
package struct AppFilter: Sendable {
  package var ids: [String]

  package init(ids: [String]) { self.ids = ids }

  package func matches(_ id: String?) -> Bool {
    guard let id else { return false }
    // By bytes, as every name: an id in NFD is not the NFC one.
    let bytes = Array(id.utf8)
    return ids.contains { wanted in
      let wanted = Array(wanted.utf8)
      let group = Array("group.".utf8) + wanted
      return bytes == wanted || bytes.starts(with: wanted + [0x2E]) || bytes == group || bytes.starts(with: group + [0x2E])
    }
  }

  /// The exit-2 message when no container matches: the best candidates first (the ids holding
  /// what was typed, then near spellings), then the largest apps; never an alphabetical list.
  package static func noMatch(_ ids: [String], source: String, candidates: [String], largest: [(id: String, bytes: UInt64)]) -> Refusal {
    let wanted = ids.map { "'\(TerminalText.escaped($0))'" }.joined(separator: ", ")
    var message = "\(TerminalText.escaped(source)): no container matches --app \(wanted)"
    if !candidates.isEmpty {
      message += candidates.count == 1 ? " (did you mean '\(TerminalText.escaped(candidates[0]))'?)"
        : "; it fits \(Plural.listed(candidates.map(TerminalText.escaped), limit: AppChoice.limit)): give one of them"
    }
    if !largest.isEmpty {
      message += "; the apps with the most backed-up bytes: "
        + largest.map { "\(TerminalText.escaped($0.id)) (\(ByteSize.human($0.bytes)))" }.joined(separator: ", ")
    } else if candidates.isEmpty {
      message += "; it holds no container with an id"
    }
    return Refusal(.notMatched, path: source, message: message + " (appdata audit --list-apps PATH lists them all)")
  }

  /// The same, from the names found alone (no sizes: `migrate`, which reads no file).
  package static func noMatch(_ ids: [String], source: String, available: [String]) -> Refusal {
    var candidates: [String] = []
    for id in ids { if case .candidates(let found) = AppChoice.choose(id, among: available) { candidates += found } }
    let rest = Array(Set(available)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.filter { !candidates.contains($0) }
    let wanted = ids.map { "'\(TerminalText.escaped($0))'" }.joined(separator: ", ")
    let shown = (candidates + rest).map(TerminalText.escaped)
    return Refusal(.notMatched, path: source,
                   message: "\(TerminalText.escaped(source)): no container matches --app \(wanted); the ids found: \(shown.isEmpty ? "none" : Plural.listed(shown, limit: 10))")
  }
}
