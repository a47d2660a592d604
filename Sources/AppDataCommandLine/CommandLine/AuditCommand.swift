import AppDataSystem
import AppDataCore
import AppDataReaders
import AppDataReports
import AppDataMigration
import Dispatch
import Synchronization

/// The report formats of `appdata audit`.
public enum AuditFormat: String, CaseIterable, Sendable {
  case table, json, ndjson, github, junit, sarif, html
}

/// `appdata audit`: options (over the policy file) to `AuditOptions`, the report to each
/// chosen format and destination, findings to the exit status.
struct AuditCommand {
  /// One report to write: a format and where (nil: standard output).
  struct Output {
    var format: AuditFormat
    var file: String?
  }

  /// PATH: the first operand (the one `--root` and the messages name); `paths` is every operand.
  var path: String
  var paths: [String]
  /// The policy file's contents (its per-container overrides applied by `options(for:)`),
  /// read when the command runs (`loadNamedFiles`), never while the command line is parsed.
  var policy = AuditPolicy()
  /// `--baseline`'s argument, read (or audited) when the command runs.
  var baselineArgument: String?
  /// The options as the command line sets them over the policy (see `options(for:)`).
  var commandLine: CommandLineOptions
  var outputs: [Output]
  let failOn: Severity?
  let exactBytes: Bool
  let quiet: Bool
  let colorChoice: String
  let policyFile: String?
  let root: [[UInt8]]?
  let maximumArchiveBytes: UInt64?
  let maximumManifestBytes: UInt64?
  let maximumBackups: Int?
  /// `--max-key-rounds`.
  let maximumKeyRounds: UInt64
  let apps: [String]
  let verify: Bool
  let allDomains: Bool
  /// `--backup BACKUP`, `--backup-domain DOMAIN`: compare the containers with a device backup.
  let backupPath: String?
  let backupDomain: String?
  /// `--password-file`, `--password-stdin` (or APPDATA_BACKUP_PASSWORD, or a prompt): an
  /// encrypted backup's password, read only when one is needed.
  let password: BackupPassword
  /// `--baseline PATH` when PATH is not a saved JSON report: a container, package, archive,
  /// backup or folder of them, audited first with the same options (issue 34).
  var baselineInput: String?
  /// The password read once, for the baseline and PATH alike (one password is tried on both).
  var knownSecret: SecretBuffer?

  /// What the command line says; nil fields leave the policy's value.
  struct CommandLineOptions: Sendable {
    var maxFileSize: UInt64?
    var maxBackupSize: UInt64?
    var warnAt: Double?
    var ignore: [Glob]?
    var baselines: BaselineSet?
    var maxGrowth: UInt64?
    var maxGrowthPercent: Double?
    var top = 10
    var jobs = 1
    var jobsAreFixed = false
    var listedCategories: Set<Category> = []
  }

  /// Whether the terminal's locale is UTF-8 (LC_ALL, else LC_CTYPE, else LANG names UTF-8).
  static func localeIsUTF8(_ io: CommandIO) -> Bool {
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"].lazy.compactMap { io.environment($0) }.first { !$0.isEmpty } ?? ""
    let lowered = locale.lowercased()
    return lowered.contains("utf-8") || lowered.contains("utf8")
  }

  /// Whether `--baseline FILE` names a saved JSON report (a regular file named `.json`, or
  /// whose first byte after white space is `{`), rather than something to audit (a folder, an
  /// archive).
  static func isSavedReport(_ file: String) -> Bool {
    if file.lowercased().hasSuffix(".json") { return true }
    // A path that cannot be read: the load names the problem.
    guard let status = try? Syscalls.status(ofPath: file) else { return true }
    guard status.kind == .regular else { return false }
    guard let descriptor = try? Syscalls.openFile(atPath: file) else { return true }
    defer { descriptor.close() }
    let head = (try? Syscalls.readUpTo(descriptor, 4096, displayPath: file)) ?? []
    let first = head.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF }.first
    return first == 0x7B || head.isEmpty
  }

  init(_ parsed: ParsedArguments) throws(UsageError) {
    path = parsed.operands[0]
    paths = parsed.operands

    // The policy file (read when the command runs); every command-line option overrides it.
    var policyFile: String?
    if !parsed.flag("no-config") {
      if let file = parsed.value("config") {
        policyFile = file
      } else if (try? Syscalls.status(ofPath: AuditPolicy.defaultFileName)) != nil {
        policyFile = AuditPolicy.defaultFileName
      }
    }
    self.policyFile = policyFile

    var options = CommandLineOptions()
    options.maxFileSize = try parsed.size("max-file-size")
    options.maxBackupSize = try parsed.size("max-backup-size")
    if let text = parsed.value("warn-at") {
      guard let fraction = Double(text), fraction > 0, fraction < 1 else {
        throw UsageError("invalid value '\(TerminalText.escaped(text))' for '--warn-at': expected a fraction between 0 and 1, such as 0.9")
      }
      options.warnAt = fraction
    }
    if parsed.contains("ignore") {
      var globs: [Glob] = []
      for pattern in parsed.allValues("ignore") {
        do {
          globs.append(try Glob(pattern))
        } catch {
          throw UsageError("invalid glob '\(TerminalText.abbreviated(pattern))' for '--ignore': \(error.message)")
        }
      }
      options.ignore = globs
    }
    if let file = parsed.value("baseline") {
      // A saved report is read, anything else audited, when the command runs.
      baselineArgument = file
      options.baselines = BaselineSet(file: file, baselines: [])
    }
    options.maxGrowth = try parsed.size("max-growth")
    if let text = parsed.value("max-growth-percent") {
      guard let percent = Double(text), percent >= 0, percent.isFinite else {
        throw UsageError("invalid value '\(TerminalText.escaped(text))' for '--max-growth-percent': expected a number of percent, such as 10")
      }
      options.maxGrowthPercent = percent
    }
    if (options.maxGrowth != nil || options.maxGrowthPercent != nil) && options.baselines == nil {
      throw UsageError("'--max-growth' and '--max-growth-percent' need '--baseline FILE' to compare with")
    }
    options.top = try parsed.integer("top") ?? 10
    options.jobs = try parsed.integer("jobs", minimum: 1, maximum: 256) ?? AuditOptions.defaultJobs
    options.jobsAreFixed = parsed.allValues("jobs").count > 0
    for value in parsed.allValues("list") {
      for name in value.split(separator: ",") {
        if name == "all" { options.listedCategories.formUnion(Category.allCases) }
        else if let category = Category(rawValue: String(name)) { options.listedCategories.insert(category) }
      }
    }
    commandLine = options
    outputs = try Self.outputs(parsed)
    switch parsed.value("fail-on") ?? "error" {
    case "never": failOn = nil
    case let level: failOn = Severity(rawValue: level)!
    }
    exactBytes = parsed.flag("bytes")
    quiet = parsed.flag("quiet")
    colorChoice = parsed.value("color") ?? "auto"
    root = try parsed.root(inside: "a folder inside PATH")
    maximumArchiveBytes = try parsed.size("max-archive-bytes")
    maximumManifestBytes = try parsed.size("max-manifest-bytes")
    maximumBackups = try parsed.integer("max-backups", minimum: 1)
    maximumKeyRounds = try parsed.integer("max-key-rounds", minimum: 1).map { UInt64($0) } ?? BackupKeybag.defaultMaximumRounds
    apps = parsed.allValues("app")
    for app in apps where app.isEmpty { throw UsageError("'--app' needs a bundle id or group id") }
    verify = parsed.flag("verify")
    allDomains = parsed.flag("all-domains")
    backupPath = parsed.value("backup")
    backupDomain = parsed.value("backup-domain")
    password = try BackupPassword(parsed)
    if backupDomain != nil && backupPath == nil {
      throw UsageError("'--backup-domain' needs '--backup BACKUP' to compare with")
    }
  }

  /// The options of the container with `id`: the policy file (with that id's overrides), then
  /// the command line over it.
  func options(for id: String?, isOnlyContainer: Bool) -> AuditOptions {
    let policy = policy.forContainer(id)
    var options = AuditOptions()
    options.maxFileSize = commandLine.maxFileSize ?? policy.maxFileSize
    options.maxBackupSize = commandLine.maxBackupSize ?? policy.maxBackupSize
    options.warnAt = commandLine.warnAt ?? policy.warnAt
    options.severities = policy.severities
    options.budgets = policy.budgets
    options.ignore = commandLine.ignore ?? policy.ignore
    options.baseline = commandLine.baselines?.baseline(for: id, isOnlyContainer: isOnlyContainer)
    options.maxGrowth = commandLine.maxGrowth
    options.maxGrowthPercent = commandLine.maxGrowthPercent
    options.top = commandLine.top
    options.jobs = commandLine.jobs
    options.jobsAreFixed = commandLine.jobsAreFixed
    options.listedCategories = commandLine.listedCategories
    return options
  }

  /// `--backup BACKUP`: it must be a device backup.
  private static func backupSource(_ path: String) throws(Refusal) -> BackupSource {
    guard let backup = try InputResolver.resolve(path) as? BackupSource else {
      throw Refusal("\(TerminalText.escaped(path)): not a device backup (no Manifest.db beside Manifest.plist, Info.plist or Status.plist); --backup takes the backup folder")
    }
    return backup
  }

  /// Compares each container with its domain in the backup, then drops the listing unless asked.
  private func compare(_ reports: inout [AuditReport], with backup: BackupSource, password: SecretBuffer?) throws(Refusal) {
    if backupDomain != nil && reports.count != 1 {
      throw Refusal("'--backup-domain' names the domain of one container; PATH holds \(Plural.counted(reports.count, "container")): choose one with --app")
    }
    for index in reports.indices {
      let report = reports[index]
      guard report.kind != .system else { continue }
      guard let domain = backupDomain ?? report.id.map({ BackupComparison.domain(kind: report.kind, id: $0) }) else {
        throw Refusal("\(TerminalText.escaped(report.container)): has no id (no metadata plist); name its domain in the backup with --backup-domain AppDomain-BUNDLE-ID")
      }
      guard let files = try backup.files(ofDomain: domain, password: password, maximumKeyRounds: maximumKeyRounds) else {
        throw Refusal("\(TerminalText.escaped(backup.folderPath)): the backup holds no domain \(TerminalText.escaped(domain)); --backup-domain names another")
      }
      BackupComparison.compare(&reports[index], backupFiles: files, backup: backup.source, domain: domain)
      let options = self.options(for: report.id, isOnlyContainer: reports.count == 1)
      reports[index].findings = Finding.sortedForReport(Auditor.applyPolicy(to: reports[index].findings, options: options))
    }
  }

  /// Pairs each `--output` with the `--format` (or `--json`) just before it, or, for an
  /// `--output` given first, the first one after it. Formats without a file go to standard
  /// output (one at most); when every format has a file, the table goes there.
  static func outputs(_ parsed: ParsedArguments) throws(UsageError) -> [Output] {
    var outputs: [Output] = []
    var pendingFile: String?  // an --output seen before any --format
    var formatValues = parsed.allValues("format").makeIterator()
    var fileValues = parsed.allValues("output").makeIterator()
    for name in parsed.order {
      switch name {
      case "format", "json":
        let format = name == "json" ? AuditFormat.json : AuditFormat(rawValue: formatValues.next()!)!
        outputs.append(Output(format: format, file: pendingFile))
        pendingFile = nil
      case "output":
        let file = fileValues.next()!
        if let last = outputs.indices.last, outputs[last].file == nil, pendingFile == nil {
          outputs[last].file = file
        } else if pendingFile == nil && outputs.isEmpty {
          pendingFile = file
        } else {
          throw UsageError("'--output \(TerminalText.escaped(file))' has no --format of its own; give one --format before each --output")
        }
      default:
        continue
      }
    }
    if let pendingFile {
      throw UsageError("'--output \(TerminalText.escaped(pendingFile))' needs a --format to write (json, ndjson, github, junit, sarif, html or table)")
    }
    if outputs.isEmpty { outputs = [Output(format: .table, file: nil)] }
    let toStandardOutput = outputs.filter { $0.file == nil }
    if toStandardOutput.count > 1 {
      throw UsageError("only one format can go to standard output; give --output FILE after the others")
    }
    if toStandardOutput.isEmpty && !outputs.contains(where: { $0.format == .table }) {
      outputs.append(Output(format: .table, file: nil))
    }
    return outputs
  }

  func run(io: CommandIO) throws(Refusal) -> ExitCode {
    var command = self
    try command.loadNamedFiles()
    return try command.run(io: io, collect: nil)
  }

  /// Reads what the command line named: the policy file, and `--baseline` when it is a saved
  /// report (anything else is audited first, by `run`). Parsing the command line reads nothing.
  mutating func loadNamedFiles() throws(Refusal) {
    if let policyFile {
      do {
        policy = try AuditPolicy.load(path: policyFile)
      } catch {
        throw Refusal("\(TerminalText.escaped(policyFile)): \(error.message)")
      }
    }
    if let file = baselineArgument {
      baselineArgument = nil
      if Self.isSavedReport(file) {
        do {
          commandLine.baselines = try Baseline.load(path: file)
        } catch {
          throw Refusal("\(TerminalText.escaped(file)): \(error.message)")
        }
      } else {
        baselineInput = file
      }
    }
  }

  /// `--baseline PATH`: PATH audited with this command's options, its reports as the
  /// baselines. When the audit lists files, the baseline lists its critical files too, so that
  /// growth is known file by file where both sides list them; else, as a saved report made
  /// without `--list`, it has the largest files and the folder summary (and costs one audit).
  private func baselines(auditing input: String, io: CommandIO) throws(Refusal) -> (BaselineSet, SecretBuffer?) {
    var command = self
    command.path = input
    command.paths = [input]
    command.outputs = [Output(format: .json, file: nil)]
    command.baselineInput = nil
    command.commandLine.baselines = nil
    command.commandLine.maxGrowth = nil
    command.commandLine.maxGrowthPercent = nil
    if !commandLine.listedCategories.isEmpty { command.commandLine.listedCategories.insert(.critical) }
    var collected: AuditSet?
    var secret: SecretBuffer?
    _ = try command.run(io: io) { set, password in
      collected = set
      secret = password
    }
    guard let collected else { return (BaselineSet(file: input, baselines: []), secret) }
    // Read exactly as a report saved from it would be: its JSON (the listing is written by the
    // report, not held as values), through the same reader.
    do {
      let document = try JSONParser.parse(collected.jsonDocument().serializedBytes(pretty: false))
      return (try Baseline.set(of: document, file: input), secret)
    } catch let error as JSONParser.ParseError {
      throw Refusal("\(TerminalText.escaped(input)): cannot use its report as a baseline: \(error)")
    } catch let error as AuditPolicy.LoadError {
      throw Refusal("\(TerminalText.escaped(input)): cannot use its report as a baseline: \(error.message)")
    } catch {
      throw Refusal("\(TerminalText.escaped(input)): cannot use its report as a baseline: \(error)")
    }
  }

  /// Runs the audit; with `collect`, hands it the reports (and the password read, if any)
  /// instead of writing them (the audit of a baseline PATH).
  private func run(io: CommandIO, collect: ((AuditSet, SecretBuffer?) -> Void)?) throws(Refusal) -> ExitCode {
    if let baselineInput {
      var command = self
      (command.commandLine.baselines, command.knownSecret) = try baselines(auditing: baselineInput, io: io)
      command.baselineInput = nil
      return try command.run(io: io, collect: collect)
    }
    // Ctrl-C, SIGTERM, SIGHUP while report files are being written: their hidden files go, the
    // reports named stay as they were, and the process ends as the signal would have ended it.
    var signalSources: [DispatchSourceSignal] = []
    if collect == nil && outputs.contains(where: { $0.file != nil }) {
      let reports = Self.openReports
      signalSources = Syscalls.onTermination(queue: DispatchQueue(label: "appdata.audit.signals")) { number in
        reports.removeHiddenFiles()
        Syscalls.exitNow(128 + number)
      }
    }
    defer { for source in signalSources { source.cancel() } }
    // A report that cannot be written is refused before anything is read, not after the walk.
    for file in outputs.compactMap(\.file) {
      do {
        try Syscalls.checkCanCreateOrWrite(atPath: file)
      } catch {
        throw Refusal("\(TerminalText.escaped(file)): cannot write the report: \(error.reason)")
      }
    }
    let source = try InputResolver.resolve(paths, root: root, maximumArchiveBytes: maximumArchiveBytes,
                                           maximumManifestBytes: maximumManifestBytes, limits: InputLimits(maximumBackups: maximumBackups))
    TestHooks.pause(at: "resolved")
    for notice in source.notices { io.warning(notice) }
    let isOnlyContainer = !source.isCollection
    // Comparing with a backup, and the HTML treemap, need every file: list them all, and give
    // the other formats only what was asked.
    let backup = try backupPath.map { path throws(Refusal) in try Self.backupSource(path) }
    // An encrypted backup's password, asked for before the progress line starts (the same
    // password opens PATH and --backup BACKUP when both need one).
    let needsPassword = source.needsPassword ? source.source : backup.flatMap { $0.needsPassword ? $0.source : nil }
    var secret: SecretBuffer?
    do {
      secret = try needsPassword.map { path throws(Refusal) in
        if let knownSecret { return knownSecret }
        return try password.read(for: path)
      }
    } catch where error.isLocked && source.passwordIsOptional && backup == nil {
      // A report of many backups lists the encrypted ones it cannot open as locked.
      secret = nil
    }
    let listsEverything = backup != nil || outputs.contains { $0.format == .html }
    let command = self
    var request = AuditRequest(options: { id in
      var options = command.options(for: id, isOnlyContainer: isOnlyContainer)
      if listsEverything { options.listedCategories = Set(Category.allCases) }
      return options
    })
    request.optionsDependOnID = !policy.containers.isEmpty
    if !apps.isEmpty { request.filter = AppFilter(ids: apps) }
    request.verify = verify
    request.allDomains = allDomains
    request.password = secret
    request.maximumKeyRounds = maximumKeyRounds
    // NDJSON streams entries as they are classified when it is the only report; every line
    // names its container.
    let streamsNDJSON = outputs.count == 1 && outputs[0].format == .ndjson && !commandLine.listedCategories.isEmpty && !listsEverything
    var streamFile: ReplacingFile?
    if streamsNDJSON {
      if let file = outputs[0].file {
        let replacing = try Self.create(file)
        streamFile = replacing
        request.entrySink = { lines in replacing.write(lines) }
      } else {
        let write = io.writeOutput
        request.entrySink = { lines in write(String(decoding: lines, as: UTF8.self)) }
      }
    }
    request.tagsLines = outputs.contains { $0.format == .ndjson }
    let progress = quiet || !io.isErrorTerminal ? nil : WalkProgress()
    request.progress = progress
    let display = progress.map { ProgressLine(progress: $0, io: io) }
    if secret == nil {
      // A backup found while reading (inside an archive) asks for the password then: once,
      // with the progress line stopped first.
      let lazy = LazyPassword { [password, display] (backup: String) throws(Refusal) -> SecretBuffer in
        display?.stop()
        return try password.read(for: backup)
      }
      request.passwordProvider = { (backup: String) throws(Refusal) -> SecretBuffer in try lazy.get(for: backup) }
    }
    display?.start()
    let outcome: AuditOutcome
    do {
      outcome = try source.audit(request)
    } catch {
      display?.stop()
      streamFile?.discard()
      throw error
    }
    display?.stop()
    if outcome.reports.isEmpty && !apps.isEmpty {
      streamFile?.discard()
      throw AppFilter.noMatch(apps, source: paths.count == 1 ? path : paths.joined(separator: ", "), available: outcome.available)
    }
    // A baseline of many containers is matched by id; given to one container whose id it does
    // not hold, it would compare with nothing: say so rather than ignore it.
    if !outcome.isCollection, outcome.reports.count == 1, let baselines = commandLine.baselines, baselines.baselines.count > 1,
       baselines.baseline(for: outcome.reports[0].id, isOnlyContainer: true) == nil {
      streamFile?.discard()
      let id = outcome.reports[0].id.map { "'\(TerminalText.escaped($0))'" } ?? "(it has none)"
      throw Refusal("\(TerminalText.escaped(baselines.file)): a baseline of \(baselines.baselines.count) containers, none with this container's id \(id); give --baseline a report of this container, or audit the folder it was made from")
    }
    var compared = outcome.reports
    if let backup { try compare(&compared, with: backup, password: secret) }
    var everything = AuditSet(source: source.source, reports: compared, isCollection: outcome.isCollection)
    everything.backupInfo = outcome.backup
    everything.backups = outcome.backups
    if paths.count > 1 { everything.sources = paths.map(Syscalls.absolutePath) }
    everything.policySource = policyFile
    if let baselines = commandLine.baselines {
      everything.baselineIDs = (baselines.file, baselines.baselines.compactMap(\.id))
    }
    if let collect {
      collect(everything, secret ?? knownSecret)
      return .success
    }
    var reports = everything
    if listsEverything {
      let listed = commandLine.listedCategories
      for index in reports.reports.indices {
        reports.reports[index].entries = listed.isEmpty ? nil : reports.reports[index].entries?.filtered(listed)
      }
    }

    for output in outputs {
      let set = output.format == .html ? everything : reports
      // The report in chunks, each written as it is made: a JSON listing of a million files is
      // never whole in memory.
      func chunks(_ write: ([UInt8]) -> Void) {
        if output.format == .json {
          set.jsonDocument().serialize(pretty: true, to: write)
          write([0x0A])
        } else {
          write(Array(render(set, as: output.format, streamed: streamsNDJSON, toTerminal: output.file == nil, io: io).utf8))
        }
      }
      if let file = output.file {
        // Complete or not at all: a hidden file beside it, renamed over it once all is written.
        let replacing: ReplacingFile
        if let streamFile { replacing = streamFile } else { replacing = try Self.create(file) }
        chunks { replacing.write($0) }
        do { try replacing.commit() } catch {
          throw Refusal("\(TerminalText.escaped(file)): cannot write the report: \(error.reason); it was left as it was")
        }
      } else {
        chunks { chunk in
          if let write = io.writeOutputBytes { write(chunk) } else { io.writeOutput(String(decoding: chunk, as: UTF8.self)) }
        }
      }
      if output.format == .github, let summaryFile = io.environment("GITHUB_STEP_SUMMARY"), !summaryFile.isEmpty {
        do {
          let descriptor = try Syscalls.openForAppending(atPath: summaryFile)
          defer { descriptor.close() }
          try Syscalls.writeAll(descriptor, Array(reports.githubStepSummary(failOn: failOn).utf8), displayPath: summaryFile)
        } catch {
          io.warning("\(TerminalText.escaped(summaryFile)): cannot append the job summary: \(error.reason)")
        }
      }
    }
    return reports.fails(at: failOn) ? .failure : .success
  }

  private func render(_ reports: AuditSet, as format: AuditFormat, streamed: Bool, toTerminal: Bool, io: CommandIO) -> String {
    switch format {
    case .table:
      let colors: Bool
      switch colorChoice {
      case "always": colors = true
      case "never": colors = false
      default:
        colors = toTerminal && io.isOutputTerminal && (io.environment("NO_COLOR") ?? "").isEmpty && io.environment("TERM") != "dumb"
      }
      return reports.table(exactBytes: exactBytes, failOn: failOn, colors: colors, findingsOnly: quiet, unicode: Self.localeIsUTF8(io))
    case .json:
      return reports.jsonDocument().serialized(pretty: true) + "\n"  // written in chunks by the caller
    case .ndjson:
      return reports.ndjson(streamed: streamed)
    case .github:
      return reports.githubCommands(hasStepSummary: !(io.environment("GITHUB_STEP_SUMMARY") ?? "").isEmpty)
    case .junit:
      let disabled = Set(policy.severities.filter { $0.value == nil }.map(\.key))
      return reports.junitXML(failOn: failOn, disabledRules: disabled)
    case .sarif:
      return reports.sarifDocument().serialized(pretty: true) + "\n"
    case .html:
      return reports.html(failOn: failOn)
    }
  }

  /// The report files being written, whose hidden files an interrupt removes.
  static let openReports = OpenReports()

  /// The report files of a run, for the signal handler.
  final class OpenReports: Sendable {
    private let files = Mutex<[ReplacingFile]>([])
    func add(_ file: ReplacingFile) { files.withLock { $0.append(file) } }
    func removeHiddenFiles() { for file in files.withLock({ $0 }) { file.removeHiddenFile() } }
  }

  private static func create(_ file: String) throws(Refusal) -> ReplacingFile {
    do {
      let replacing = try ReplacingFile(path: file)
      openReports.add(replacing)
      return replacing
    } catch {
      throw Refusal("\(TerminalText.escaped(file)): cannot write the report: \(error.reason)")
    }
  }
}

/// A password read the first time it is asked for, then kept (a failure is not kept: each
/// backup that asks is told why).
// @unchecked Sendable: `value` is read and written only under `lock`.
final class LazyPassword: @unchecked Sendable {
  private let read: (String) throws(Refusal) -> SecretBuffer
  private let lock = Lock()
  private var value: SecretBuffer?

  init(_ read: @escaping (String) throws(Refusal) -> SecretBuffer) { self.read = read }

  /// The password, read for (and named in the prompt by) `backup` the first time.
  func get(for backup: String) throws(Refusal) -> SecretBuffer {
    lock.lock()
    defer { lock.unlock() }
    if let value { return value }
    let read = try read(backup)
    value = read
    return read
  }
}

/// One line of stderr, refreshed while a long walk runs: entries and bytes so far.
/// Shown only on a terminal, only after half a second, and erased at the end.
// @unchecked Sendable: `shown` is read and written only on `queue` (the timer's handler and the
// `queue.sync` in `stop()`); the other properties are constants.
final class ProgressLine: @unchecked Sendable {
  private let progress: WalkProgress
  private let io: CommandIO
  private let queue = DispatchQueue(label: "appdata.progress")
  private let timer: DispatchSourceTimer
  private var shown = false
  private var interrupt: DispatchSourceSignal?

  init(progress: WalkProgress, io: CommandIO) {
    self.progress = progress
    self.io = io
    timer = DispatchSource.makeTimerSource(queue: queue)
  }

  /// Half a second, so quick audits print nothing; `APPDATA_PROGRESS_DELAY_MS` lets tests shorten it.
  private static let delay = Int(Syscalls.environment("APPDATA_PROGRESS_DELAY_MS") ?? "") ?? 500

  func start() {
    timer.schedule(deadline: .now() + .milliseconds(Self.delay), repeating: .milliseconds(200))
    timer.setEventHandler { [self] in
      let (entries, bytes) = progress.snapshot
      shown = true
      if let activity = progress.currentActivity {
        io.writeError("\r\u{1B}[2K\(activity)")
      } else {
        io.writeError("\r\u{1B}[2KScanning: \(Plural.counted(entries, "entry", "entries")), \(ByteSize.human(bytes))")
      }
    }
    timer.resume()
    // Ctrl-C: erase the line first, so the shell's prompt does not land after it.
    interrupt = Syscalls.onInterrupt(queue: queue) { [self] in
      if shown { io.writeError("\r\u{1B}[2K") }
      Syscalls.exitNow(130)
    }
  }

  func stop() {
    timer.cancel()
    queue.sync { interrupt?.cancel() }
    // On the timer's queue: after any handler in flight, erase the line if one was drawn.
    queue.sync { if shown { io.writeError("\r\u{1B}[2K") } }
  }
}
