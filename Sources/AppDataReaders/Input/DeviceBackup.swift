import AppDataSystem
import AppDataCore
/// An iOS device backup folder (Finder or iTunes on a Mac, `idevicebackup2 backup` on Linux):
/// `Manifest.db` beside `Manifest.plist`, `Info.plist` and `Status.plist`. Each app domain
/// (`AppDomain-`, `AppDomainGroup-`, `AppDomainPlugin-`) is a container; the system domains are
/// summed into one line, or listed one by one with `--all-domains`.
enum DeviceBackup: FolderInputKind {
  static func source(for folder: ProbedFolder, base: String, limits: InputLimits) throws(Refusal) -> (any ContainerSource)? {
    guard BackupManifest.isBackup(folder) else { return nil }
    return BackupSource(source: Syscalls.absolutePath(folder.path), folderPath: folder.path, manifest: try BackupManifest.load(folder))
  }
}

/// What a device backup holds, per domain, read from its manifest (`BackupReader`).
package struct BackupSource: ContainerSource, BackupHolder {
  package let source: String
  package let folderPath: String
  let manifest: BackupManifest

  package var isCollection: Bool { true }
  package var needsPassword: Bool { manifest.needsPassword }
  package var readsBackups: Bool { true }

  /// A backup in an archive is part of its archive, which is what `ArchiveSource` names.
  package var identities: [FileIdentity?] { [Syscalls.identity(ofPath: folderPath)] }
  package func excluding(_ seen: Set<FileIdentity>) -> (any ContainerSource)? { wholeExcluding(seen) }
  package func deviceBackups() throws(Refusal) -> [BackupSource] { [self] }
  /// Its folder's name (the device's UDID in a Finder backup folder).
  package var name: String { SourceGroup.lastComponent(source) }

  package func folders() throws(Refusal) -> [ContainerRef] {
    throw Refusal(.notAnInput, path: folderPath, "is a device backup; appdata changes containers only in folders (restore the backup, or audit it)")
  }

  package func audit(_ request: AuditRequest) throws(Refusal) -> AuditOutcome {
    var reader = BackupReader(manifest: manifest, folderPath: folderPath)
    reader.password = request.password
    if reader.password == nil && manifest.needsPassword, let provider = request.passwordProvider {
      reader.password = try provider(manifest.info.path)
    }
    reader.maximumKeyRounds = request.maximumKeyRounds
    reader.progress = request.progress
    reader.allDomains = request.allDomains
    reader.verify = request.verify
    reader.threads = min(2, request.options(nil).jobs)
    let (domains, available) = try reader.read(keeping: { request.filter?.matches($0) ?? true }) { domain in
      var accumulator = AuditAccumulator(
        options: request.options(domain.id), layout: domain.layout, sink: domain.kept ? request.entrySink : nil,
        tag: request.tagsLines ? NDJSONTag(container: domain.container, id: domain.id) : nil)
      accumulator.everyFileIsBackedUp = true
      return accumulator
    }
    let reports = domains.map { domain, accumulator in
      var report = Auditor.report(from: [accumulator], options: accumulator.options, layout: domain.layout,
                                  container: domain.container, entrySink: request.entrySink, tag: accumulator.tag)
      report.id = domain.id
      report.kind = domain.kind
      report.name = domain.id ?? domain.name
      report.backupPath = manifest.info.path
      return report
    }
    var outcome = AuditOutcome(reports: reports, available: available, isCollection: true)
    outcome.backup = manifest.info
    return outcome
  }

  /// The rows of one domain, for `appdata audit CONTAINER --backup BACKUP`: relativePath to size
  /// (folders left out); nil when the backup holds no such domain. `password` opens an
  /// encrypted backup.
  package func files(ofDomain domain: String, password: SecretBuffer?, maximumKeyRounds: UInt64) throws(Refusal) -> [[UInt8]: UInt64]? {
    var reader = BackupReader(manifest: manifest, folderPath: folderPath)
    reader.password = password
    reader.maximumKeyRounds = maximumKeyRounds
    let database = try reader.open()
    var files: [[UInt8]: UInt64] = [:]
    var sawDomain = false
    do {
      let statement = try database.prepare("SELECT relativePath, flags, file FROM Files WHERE domain = ?1")
      statement.bind(1, domain)
      while try statement.step() {
        sawDomain = true
        let flags = statement.integer(1)
        guard flags != 2 else { continue }
        let relative = Array(statement.bytes(0))
        if relative.isEmpty { continue }
        files[relative] = flags == 1 ? (MBFile.decode(statement.bytes(2))?.size ?? 0) : 0
      }
    } catch {
      throw reader.damaged(error)
    }
    return sawDomain ? files : nil
  }
}
