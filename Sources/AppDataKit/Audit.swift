import AppDataSystem
import AppDataCore
import AppDataReaders
import AppDataReports
import Synchronization

/// What `audit(paths:configuration:password:progress:)` is asked to do: the policy and what
/// overrides it, the baseline, the backup to compare with, which containers, and the bounds.
public struct AuditConfiguration: Sendable {
  /// The policy file's contents (`AuditPolicy.load(path:)`), with its per-container overrides.
  public var policy = AuditPolicy()
  /// Where the policy came from, as given; shown in the table's header and JSON's `policy`.
  public var policySource: String?
  /// What overrides the policy (the command line's options); nil fields leave the policy's value.
  public var overrides = Overrides()
  /// What to measure growth against.
  public var baseline: BaselineInput?
  /// A device backup to compare each container with (`--backup`), and the domain to compare a
  /// single container with (`--backup-domain`; by default the container's own).
  public var backup: String?
  public var backupDomain: String?
  /// `--app`: the ids to keep (each with its extensions and app groups); empty keeps all.
  public var apps: [String] = []
  /// `--root`: the folder inside PATH to read, by components.
  public var root: [[UInt8]]?
  public var limits = Limits()
  /// `--platform`: what PATH is taken to be where its shape would say otherwise.
  public var platform: InputPlatform = .auto
  /// For an Android app's data: the manifest's and the device's settings, and the rules read
  /// (`--android-rules`, `--target-sdk`, `--device-api`, ...).
  public var android = AndroidSettings()
  /// Device backups: check every stored file (`--verify`), list every system domain (`--all-domains`).
  public var verify = false
  public var allDomains = false
  /// Keep every entry of every category in the set returned (the HTML report's treemap needs
  /// them); `overrides.listedCategories` is then applied by `AuditSet.listing(_:)`.
  public var listsEveryEntry = false
  /// Receives the listed entries as NDJSON lines while the audit runs, instead of holding them
  /// (`AuditSet.render(format: .ndjson, …)` then writes the rest with `style.streamedNDJSON`).
  public var entrySink: (@Sendable ([UInt8]) -> Void)?
  /// Whether streamed NDJSON lines name their container (as in a report of many).
  public var tagsNDJSONLines = false

  public init() {}

  /// The options that override the policy; nil fields leave the policy's value.
  public struct Overrides: Sendable {
    public var maxFileSize: UInt64?
    public var maxBackupSize: UInt64?
    public var warnAt: Double?
    public var ignore: [Glob]?
    public var maxGrowth: UInt64?
    public var maxGrowthPercent: Double?
    public var top = 10
    public var jobs = AuditOptions.defaultJobs
    /// `--jobs` was given: the walk does not adapt its width.
    public var jobsAreFixed = false
    /// `--list`: the categories whose entries the report lists.
    public var listedCategories: Set<Category> = []
    public init() {}
  }

  /// The bounds on what is read.
  public struct Limits: Sendable {
    public var maximumArchiveBytes: UInt64?
    public var maximumManifestBytes: UInt64?
    public var maximumBackups: Int?
    /// The most key-derivation rounds an encrypted backup's keybag may ask for.
    public var maximumKeyRounds = BackupKeybag.defaultMaximumRounds
    /// `--max-name-bytes`: the most bytes of names a reader of an archive or of an Android
    /// backup keeps while it reads (nil: 64 MiB).
    public var maximumNameBytes: UInt64?
    public init() {}
  }

  /// A baseline: a saved report's baselines (`Baseline.load(path:)`), or any PATH, audited first
  /// with the same configuration.
  public enum BaselineInput: Sendable {
    case report(BaselineSet)
    case audit(path: String)
  }

  /// The options of the container with `id`: the policy (with that id's overrides), then the
  /// overrides over it.
  package func options(for id: String?, isOnlyContainer: Bool, baselines: BaselineSet?) -> AuditOptions {
    let policy = policy.forContainer(id)
    var options = AuditOptions()
    options.maxFileSize = overrides.maxFileSize ?? policy.maxFileSize
    options.maxBackupSize = overrides.maxBackupSize ?? policy.maxBackupSize
    options.warnAt = overrides.warnAt ?? policy.warnAt
    options.severities = policy.severities
    options.budgets = policy.budgets
    options.ignore = overrides.ignore ?? policy.ignore
    options.baseline = baselines?.baseline(for: id, isOnlyContainer: isOnlyContainer)
    options.maxGrowth = overrides.maxGrowth
    options.maxGrowthPercent = overrides.maxGrowthPercent
    options.top = overrides.top
    options.jobs = overrides.jobs
    options.jobsAreFixed = overrides.jobsAreFixed
    options.listedCategories = overrides.listedCategories
    return options
  }
}

/// Why an audit could not run. Each case carries the paths it is about as given; `message` is
/// the one line a terminal shows, escaped.
public enum AuditFailure: JobFailure {
  /// PATH (or a part of it) could not be read as containers; the refusal says why and where.
  case input(Refusal)
  /// The password of an encrypted backup could not be had (the closure's own failure).
  case password(Refusal)
  /// `--backup BACKUP` is not a device backup, or could not be read.
  case notABackup(path: String)
  case backup(Refusal)
  /// The baseline could not be read, or PATH's report could not be used as one.
  case baseline(path: String, reason: String)
  /// `--app` matched no container, and no one id is plainly meant: `candidates` are the ids that
  /// hold what was typed, then near spellings (best first); `largest`, the apps with the most
  /// backed-up bytes.
  case noMatchingApp(ids: [String], source: String, candidates: [String], largest: [AppSize])
  /// A baseline of many containers, none with the audited container's id.
  case baselineHasNoSuchContainer(baseline: String, containers: Int, id: String?)
  /// `--backup-domain` names one domain, but PATH holds several containers.
  case backupDomainNeedsOneContainer(containers: Int)
  /// A container with no id to find its domain by.
  case containerHasNoID(container: String)
  /// The backup holds no domain of that name.
  case backupHasNoDomain(backup: String, domain: String)

  /// The failure as a `Refusal` (exit status 2), for a caller that does not tell causes apart;
  /// `message` is its line.
  public var refusal: Refusal {
    switch self {
    case .input(let refusal), .password(let refusal), .backup(let refusal):
      return refusal
    case .notABackup(let path): return OneDeviceBackup.notABackup(path, "--backup takes the backup folder")
    case .baseline(let path, let reason):
      return Refusal(.damaged, path: path, message: "\(TerminalText.escaped(path)): \(reason)")
    case .noMatchingApp(let ids, let source, let candidates, let largest):
      return Refusal(.notMatched, path: source,
                     message: AppFilter.noMatch(ids, source: source, candidates: candidates, largest: largest.map { ($0.id, $0.bytes) }).message)
    case .baselineHasNoSuchContainer(let baseline, let count, let id):
      let id = id.map { "'\(TerminalText.escaped($0))'" } ?? "(it has none)"
      return Refusal(.notMatched, path: baseline, message: "\(TerminalText.escaped(baseline)): a baseline of \(count) containers, none with this container's id \(id); give --baseline a report of this container, or audit the folder it was made from")
    case .backupDomainNeedsOneContainer(let count):
      return Refusal(.conflict, path: nil, message: "'--backup-domain' names the domain of one container; PATH holds \(Plural.counted(count, "container")): choose one with --app")
    case .containerHasNoID(let container):
      return Refusal(.notMatched, path: container, message: "\(TerminalText.escaped(container)): has no id (no metadata plist); name its domain in the backup with --backup-domain AppDomain-BUNDLE-ID")
    case .backupHasNoDomain(let backup, let domain):
      return Refusal(.notMatched, path: backup, message: "\(TerminalText.escaped(backup)): the backup holds no domain \(TerminalText.escaped(domain)); --backup-domain names another")
    }
  }
}

/// Audits `paths` (containers, packages, devices, archives, backups, folders of them) as
/// `appdata audit` does, and returns the reports; nothing is written.
///
/// - `password` is asked only when an encrypted backup needs one, at most once per call (the
///   same password is tried on the baseline, PATH and `--backup`); it may prompt.
/// - `progress` counts entries and bytes while the walk runs; read it from another thread.
/// - Safe to call from several threads at once; each call walks with its own threads.
public func audit(paths: [String], configuration: AuditConfiguration, password: PasswordSource? = nil,
                  progress: WalkProgress? = nil) throws(AuditFailure) -> AuditSet {
  let cache = PasswordCache(password)
  var configuration = configuration
  var baselines: BaselineSet?
  switch configuration.baseline {
  case .report(let set): baselines = set
  case .audit(let path): baselines = try AuditRun.baselines(auditing: path, configuration: configuration, password: cache)
  case nil: break
  }
  configuration.baseline = baselines.map { .report($0) }
  var set = try AuditRun(paths: paths, configuration: configuration, baselines: baselines, password: cache, progress: progress).runChoosingApps()
  // Comparing with a backup lists every entry; the report keeps only the ones asked for.
  if configuration.backup != nil && !configuration.listsEveryEntry {
    set = set.listing(configuration.overrides.listedCategories)
  }
  return set
}

/// One audit: PATH resolved, read, compared with the backup, assembled.
struct AuditRun {
  var paths: [String]
  var configuration: AuditConfiguration
  var baselines: BaselineSet?
  var password: PasswordCache
  var progress: WalkProgress?

  func run() throws(AuditFailure) -> AuditSet {
    let limits = configuration.limits
    var inputLimits = InputLimits(maximumBackups: limits.maximumBackups)
    inputLimits.platform = configuration.platform
    if let maximumNameBytes = limits.maximumNameBytes { inputLimits.maximumNameBytes = maximumNameBytes }
    let source: any ContainerSource
    do {
      source = try InputResolver.resolve(paths, root: configuration.root, maximumArchiveBytes: limits.maximumArchiveBytes,
                                         maximumManifestBytes: limits.maximumManifestBytes, limits: inputLimits)
    } catch {
      throw .input(error)
    }
    TestHooks.pause(at: "resolved")
    let isOnlyContainer = !source.isCollection
    // --backup: a backup of the source's own platform, which it compares itself (an Android
    // app's data and its Android backup), or a device backup.
    let ownBackup = configuration.backup.flatMap { source.ownBackup(atPath: $0) }
    let backup = ownBackup != nil ? nil : try configuration.backup.map { path throws(AuditFailure) in try Self.backupSource(path) }
    // An encrypted backup's password, asked for before the walk starts (the same password
    // opens PATH and --backup BACKUP when both need one).
    let ownBackupPassword = ownBackup?.needsPassword == true ? configuration.backup : nil
    let needsPassword = source.needsPassword ? source.source : backup.flatMap { $0.needsPassword ? $0.source : nil } ?? ownBackupPassword
    var secret: SecretBuffer?
    if let needsPassword {
      do {
        secret = try password.get(for: needsPassword)
      } catch where error.isLocked && source.passwordIsOptional && backup == nil {
        secret = nil  // a report of many lists the encrypted backups it cannot open as locked
      } catch {
        throw .password(error)
      }
    }
    // Comparing with a backup, and the HTML treemap, need every file: list them all.
    let listsEverything = backup != nil || configuration.listsEveryEntry
    let request = request(isOnlyContainer: isOnlyContainer, listsEverything: listsEverything, secret: secret,
                          ownBackup: ownBackup != nil ? configuration.backup : nil)
    let outcome: AuditOutcome
    do {
      outcome = try source.audit(request)
    } catch {
      throw .input(error)
    }
    let apps = configuration.apps
    if outcome.reports.isEmpty && !apps.isEmpty {
      // Candidates and sizes are found by the caller (`audit`), which may read PATH again.
      throw .noMatchingApp(ids: apps, source: paths.count == 1 ? paths[0] : paths.joined(separator: ", "), candidates: outcome.available, largest: [])
    }
    // A baseline of many containers is matched by id; given to one container whose id it does
    // not hold, it would compare with nothing: say so rather than ignore it.
    if !outcome.isCollection, outcome.reports.count == 1, let baselines, baselines.baselines.count > 1,
       baselines.baseline(for: outcome.reports[0].id, isOnlyContainer: true) == nil {
      throw .baselineHasNoSuchContainer(baseline: baselines.file, containers: baselines.baselines.count, id: outcome.reports[0].id)
    }
    var compared = outcome.reports
    if let backup { try compare(&compared, with: backup, password: secret) }
    var set = AuditSet(source: source.source, reports: compared, isCollection: outcome.isCollection)
    set.backupInfo = outcome.backup
    set.backups = outcome.backups
    set.orderBackupsByDate()
    set.notices = source.notices + outcome.notices
    if paths.count > 1 { set.sources = paths.map(Syscalls.absolutePath) }
    set.policySource = configuration.policySource
    if let baselines {
      set.baselineIDs = (baselines.file, baselines.baselines.compactMap(\.id))
      for baseline in baselines.baselines { if let id = baseline.id { set.baselineBytes[id] = baseline.backupBytes } }
    }
    return set
  }

  /// What the source is asked: each container's options, the filter, the password (or how to
  /// ask for it), and `ownBackup`, the backup of its own platform it compares itself with.
  private func request(isOnlyContainer: Bool, listsEverything: Bool, secret: SecretBuffer?, ownBackup: String?) -> AuditRequest {
    let configuration = configuration
    let baselines = baselines
    var request = AuditRequest(options: { id in
      var options = configuration.options(for: id, isOnlyContainer: isOnlyContainer, baselines: baselines)
      if listsEverything { options.listedCategories = Set(Category.allCases) }
      return options
    })
    request.optionsDependOnID = !configuration.policy.containers.isEmpty
    if !configuration.apps.isEmpty { request.filter = AppFilter(ids: configuration.apps) }
    request.verify = configuration.verify
    request.allDomains = configuration.allDomains
    request.password = secret
    request.maximumKeyRounds = configuration.limits.maximumKeyRounds
    request.android = configuration.android
    request.android.backupPath = ownBackup
    request.entrySink = configuration.entrySink
    request.tagsLines = configuration.tagsNDJSONLines
    request.progress = progress
    if secret == nil && password.canAsk {
      // A backup found while reading (inside an archive) asks for the password then.
      let password = password
      request.passwordProvider = { (backup: String) throws(Refusal) -> SecretBuffer in try password.get(for: backup) }
    }
    return request
  }

  /// `run`, and for `--app NAME` that is no id PATH holds: the one id it plainly means
  /// (`whatsapp`, `WhatsApp`), said in a notice; else the best candidates and the largest apps.
  func runChoosingApps() throws(AuditFailure) -> AuditSet {
    do {
      return try run()
    } catch {
      guard case .noMatchingApp(let ids, let source, let available, _) = error else { throw error }
      var chosen: [String] = []
      var candidates: [String] = []
      for id in ids {
        switch AppChoice.choose(id, among: available) {
        case .chosen(let match): chosen.append(match)
        case .candidates(let found): candidates += found
        }
      }
      guard chosen.count == ids.count else {
        var everything = self
        everything.configuration.apps = []
        everything.configuration.listsEveryEntry = false
        everything.configuration.entrySink = nil
        everything.progress = nil
        let reports = (try? everything.run().reports) ?? []
        let largest = reports.filter { $0.kind == .app }.compactMap(AppSize.init).filter { !candidates.contains($0.id) }
          .sorted(by: AppSize.largestFirst).prefix(max(3, AppChoice.limit - candidates.count))
        throw .noMatchingApp(ids: ids, source: source, candidates: candidates, largest: Array(largest))
      }
      var again = self
      again.configuration.apps = chosen
      var set = try again.run()
      set.notices += zip(ids, chosen).map { "--app '\(TerminalText.escaped($0))' is \(TerminalText.escaped($1)), the one id that fits it" }
      return set
    }
  }

  /// `--backup BACKUP`: it must be a device backup.
  static func backupSource(_ path: String) throws(AuditFailure) -> BackupSource {
    let source: any ContainerSource
    do { source = try InputResolver.resolve(path) } catch { throw .backup(error) }
    guard let backup = source as? BackupSource else { throw .notABackup(path: path) }
    return backup
  }

  /// Compares each container with its domain in the backup.
  private func compare(_ reports: inout [AuditReport], with backup: BackupSource, password: SecretBuffer?) throws(AuditFailure) {
    let domainOption = configuration.backupDomain
    if domainOption != nil && reports.count != 1 { throw .backupDomainNeedsOneContainer(containers: reports.count) }
    for index in reports.indices {
      let report = reports[index]
      guard report.kind != .system else { continue }
      guard let domain = domainOption ?? report.id.map({ BackupComparison.domain(kind: report.kind, id: $0) }) else {
        throw .containerHasNoID(container: report.container)
      }
      let found: [[UInt8]: UInt64]?
      do {
        found = try backup.files(ofDomain: domain, password: password, maximumKeyRounds: configuration.limits.maximumKeyRounds)
      } catch {
        throw .backup(error)
      }
      guard let files = found else { throw .backupHasNoDomain(backup: backup.folderPath, domain: domain) }
      BackupComparison.compare(&reports[index], backupFiles: files, backup: backup.source, domain: domain)
      let options = configuration.options(for: report.id, isOnlyContainer: reports.count == 1, baselines: baselines)
      reports[index].findings = Finding.sortedForReport(Auditor.applyPolicy(to: reports[index].findings, options: options))
    }
  }

  /// `--baseline PATH`: PATH audited with the same configuration, its reports as the baselines.
  /// When the audit lists files, the baseline lists its critical files too, so that growth is
  /// known file by file where both sides list them; else, as a saved report made without
  /// `--list`, it has the largest files and the folder summary.
  static func baselines(auditing path: String, configuration: AuditConfiguration, password: PasswordCache) throws(AuditFailure) -> BaselineSet {
    var configuration = configuration
    configuration.baseline = nil
    configuration.overrides.maxGrowth = nil
    configuration.overrides.maxGrowthPercent = nil
    configuration.listsEveryEntry = false
    configuration.entrySink = nil
    configuration.tagsNDJSONLines = false
    if !configuration.overrides.listedCategories.isEmpty { configuration.overrides.listedCategories.insert(.critical) }
    let set = try AuditRun(paths: [path], configuration: configuration, baselines: nil, password: password, progress: nil).runChoosingApps()
    return BaselineSet(of: set, file: path)
  }
}

/// The password, asked for the first time it is needed and then kept (a failure is not kept:
/// each backup that asks is told why).
final class PasswordCache: Sendable {
  private let source: PasswordSource?
  private let value = Mutex<SecretBuffer?>(nil)

  init(_ source: PasswordSource?) { self.source = source }

  var canAsk: Bool { source != nil }

  func get(for backup: String) throws(Refusal) -> SecretBuffer {
    try value.withLock { (value: inout SecretBuffer?) throws(Refusal) -> SecretBuffer in
      if let value { return value }
      guard let source else { throw BackupReader.noPassword(backup) }
      let read = try source(backup)
      value = read
      return read
    }
  }
}
