import AppDataSystem
import AppDataCore
/// Several sources audited as one report of many: the backups of a folder of backups (and the
/// containers beside them), or several PATH operands. A backup that cannot be opened (locked,
/// damaged) is listed with its reason and the others are audited; any other source that fails
/// refuses the run, as it would alone.
package struct SourceGroup: ContainerSource, BackupHolder {
  package enum Part: Sendable {
    /// A source; `label` (a PATH operand as typed) names its containers in a report of several
    /// PATHs, nil keeps their names.
    case source(any ContainerSource, label: String?)
    /// A backup whose plists could not be read: its folder (absolute), name and why.
    case refusedBackup(path: String, udid: String, refusal: Refusal)

    /// The part a device backup is: its source, or, when its plists refuse it, that refusal.
    /// `path` is the backup as reports name it, `folderPath` as typed (for `--verify`).
    static func backup(_ contents: some BackupContents, path: String, folderPath: String, name: String) -> Part {
      do throws(Refusal) {
        return .source(BackupSource(source: path, folderPath: folderPath, manifest: try BackupManifest.load(contents)), label: nil)
      } catch {
        return .refusedBackup(path: path, udid: name, refusal: error)
      }
    }
  }

  package let source: String
  package var members: [Part]
  /// When no part can be read, refuse the run (as one backup alone would be); false when the
  /// report holds other containers.
  package var refusesWhenNothingRead = true

  /// What `notices` says (inputs named twice, read once).
  package var notes: [String] = []

  package init(source: String, parts: [Part]) {
    self.source = source
    self.members = parts
  }

  package var notices: [String] { notes + sources.flatMap(\.notices) }

  package func deviceBackups() throws(Refusal) -> [BackupSource] {
    var found: [BackupSource] = []
    var refused: Refusal?
    for member in members {
      switch member {
      case .source(let source, _): found += try InputResolver.deviceBackups(in: source)
      case .refusedBackup(_, _, let refusal): refused = refused ?? refusal
      }
    }
    // Only backups that cannot be read: why the first cannot.
    if found.isEmpty, let refused { throw refused }
    return found
  }

  package var identities: [FileIdentity?] {
    members.flatMap { member -> [FileIdentity?] in
      switch member {
      case .source(let source, _): return source.identities
      case .refusedBackup(let path, _, _): return [Syscalls.identity(ofPath: path)]
      }
    }
  }

  package func excluding(_ seen: Set<FileIdentity>) -> (any ContainerSource)? {
    var kept = self
    kept.members = members.compactMap { member -> Part? in
      switch member {
      case .source(let source, let label): return source.excluding(seen).map { .source($0, label: label) }
      case .refusedBackup(let path, _, _): return Syscalls.identity(ofPath: path).map(seen.contains) ?? false ? nil : member
      }
    }
    return kept.members.isEmpty ? nil : kept
  }

  package var isCollection: Bool { true }
  package var passwordIsOptional: Bool { true }
  package var needsPassword: Bool { sources.contains { $0.needsPassword } }
  package var readsBackups: Bool { members.contains { if case .refusedBackup = $0 { return true } else { return false } } || sources.contains { $0.readsBackups } }

  private var sources: [any ContainerSource] {
    members.compactMap { if case .source(let source, _) = $0 { return source } else { return nil } }
  }

  package func folders() throws(Refusal) -> [ContainerRef] {
    var all: [ContainerRef] = []
    for part in members {
      switch part {
      case .source(let source, _): all += try source.folders()
      case .refusedBackup(let path, _, _):
        throw Refusal(.notAnInput, path: path, "is a device backup; appdata changes containers only in folders (restore the backup, or audit it)")
      }
    }
    return all
  }

  package func audit(_ request: AuditRequest) throws(Refusal) -> AuditOutcome {
    if (request.verify || request.allDomains) && !readsBackups {
      throw Refusal(.notAnInput, path: source, "holds no device backup; --verify and --all-domains apply to device backups")
    }
    var outcome = AuditOutcome(reports: [], available: [], isCollection: true)
    var failures: [Refusal] = []
    for part in members {
      switch part {
      case .refusedBackup(let path, let udid, let refusal):
        outcome.backups.append(BackupAudit(path: path, udid: udid, info: nil, status: .refused, message: refusal.message))
        failures.append(refusal)
      case .source(let source, let label):
        // --verify and --all-domains are for the backups among the parts.
        var partRequest = request
        if !source.readsBackups {
          partRequest.verify = false
          partRequest.allDomains = false
        }
        do {
          var result = try source.audit(partRequest)
          if let info = result.backup {
            outcome.backups.append(BackupAudit(path: info.path, udid: Self.lastComponent(info.path), info: info, status: .audited))
          } else if let label {
            for index in result.reports.indices {
              result.reports[index].name = result.isCollection ? label + ": " + result.reports[index].name : label
            }
          }
          outcome.backups += result.backups
          outcome.reports += result.reports
          outcome.available += result.available
          outcome.notices += result.notices
        } catch {
          guard let backup = source as? BackupSource else { throw error }
          outcome.backups.append(BackupAudit(path: backup.source, udid: Self.lastComponent(backup.source), info: backup.manifest.info,
                                             status: error.isLocked ? .locked : .refused, message: error.message))
          failures.append(error)
        }
      }
    }
    // Nothing read at all: that is a refusal, as for the one backup alone.
    if refusesWhenNothingRead, failures.count == members.count, let first = failures.first {
      if failures.count == 1 { throw first }
      // Locked when every one is (so a caller lists them as locked); else the cause of the first
      // that is not locked.
      throw Refusal(failures.first(where: { !$0.isLocked })?.cause ?? .locked, path: source,
                    "none of its \(failures.count) backups could be read; the first: \(first.message)")
    }
    return outcome
  }

  static func lastComponent(_ path: String) -> String {
    String(path.split(separator: "/").last ?? Substring(path))
  }
}

/// A folder whose child folders are device backups, as Finder and iTunes keep them
/// (`~/Library/Application Support/MobileSync/Backup`, one folder per device named by its UDID),
/// or `MobileSync` itself. Containers beside the backups are audited with them, never skipped.
enum FolderOfBackups: FolderInputKind {
  /// The folder of backups inside `MobileSync`.
  static let backupFolderName = "Backup"

  static func source(for folder: ProbedFolder, base: String, limits: InputLimits) throws(Refusal) -> (any ContainerSource)? {
    var folder = folder
    var backups = backupFolders(in: folder)
    if backups.isEmpty, let inner = folder.folder(backupFolderName) {
      folder = inner
      backups = backupFolders(in: inner)
    }
    guard !backups.isEmpty else { return nil }
    try limits.checkBackups(backups.count, in: folder.path)
    var parts = backups.map { child in
      SourceGroup.Part.backup(child, path: child.absolutePath, folderPath: child.path, name: child.name)
    }
    if let match = try FolderOfContainers.recognize(folder) {
      parts.append(.source(FolderSource(source: Syscalls.absolutePath(folder.path), base: base, isCollection: true,
                                        containers: match.containers.sorted { $0.root.utf8.lexicographicallyPrecedes($1.root.utf8) }), label: nil))
    }
    return SourceGroup(source: Syscalls.absolutePath(folder.path), parts: parts)
  }

  /// The child folders that are device backups, by name.
  static func backupFolders(in folder: ProbedFolder) -> [ProbedFolder] {
    folder.folderNames.compactMap { name in
      guard let child = folder.folder(name), BackupManifest.isBackup(child) else { return nil }
      return child
    }
  }
}
