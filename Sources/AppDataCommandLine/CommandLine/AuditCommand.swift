import AppDataSystem
import AppDataKit
import Synchronization

/// `appdata audit`: options to an `AuditConfiguration`, the library's `audit` call, the report
/// to each chosen format and destination, findings to the exit status.
struct AuditCommand {
  var paths: [String]
  /// What the command line sets; the policy file and the baseline are read when it runs.
  var configuration = AuditConfiguration()
  /// The policy file, the Android files and the baseline named: read when the command runs
  /// (`AuditConfiguration.loadingFiles`).
  var files = AuditConfiguration.NamedFiles()
  var outputs: [AuditOutput]
  let failOn: Severity?
  let exactBytes: Bool
  let quiet: Bool
  let colorChoice: String
  /// `--list-apps`: ids and sizes, one per line, instead of the report.
  let listsApps: Bool
  /// `--password-file`, `--password-stdin` (or APPDATA_BACKUP_PASSWORD, or a prompt): an
  /// encrypted backup's password, read only when one is needed.
  let password: BackupPassword
  /// `--sarif-root DIR` as given (else GITHUB_WORKSPACE, read when the command runs).
  let sarifRoot: String?

  init(_ parsed: ParsedArguments) throws(UsageError) {
    paths = parsed.operands
    if !parsed.flag(.noConfig) {
      if let file = parsed.value(.config) {
        files.policyFile = file
      } else if (try? Syscalls.status(ofPath: AuditPolicy.defaultFileName)) != nil {
        files.policyFile = AuditPolicy.defaultFileName
      }
    }
    var options = AuditConfiguration.Overrides()
    options.maxFileSize = try parsed.size(.maxFileSize)
    options.maxBackupSize = try parsed.size(.maxBackupSize)
    if let text = parsed.value(.warnAt) {
      guard let fraction = Double(text), fraction > 0, fraction < 1 else {
        throw UsageError("invalid value '\(TerminalText.escaped(text))' for '--warn-at': expected a fraction between 0 and 1, such as 0.9")
      }
      options.warnAt = fraction
    }
    if parsed.contains(.ignore) {
      var globs: [Glob] = []
      for pattern in parsed.allValues(.ignore) {
        do { globs.append(try Glob(pattern)) } catch {
          throw UsageError("invalid glob '\(TerminalText.abbreviated(pattern))' for '--ignore': \(error.message)")
        }
      }
      options.ignore = globs
    }
    files.baseline = parsed.value(.baseline)
    options.maxGrowth = try parsed.size(.maxGrowth)
    if let text = parsed.value(.maxGrowthPercent) {
      guard let percent = Double(text), percent >= 0, percent.isFinite else {
        throw UsageError("invalid value '\(TerminalText.escaped(text))' for '--max-growth-percent': expected a number of percent, such as 10")
      }
      options.maxGrowthPercent = percent
    }
    if (options.maxGrowth != nil || options.maxGrowthPercent != nil) && files.baseline == nil {
      throw UsageError("'--max-growth' and '--max-growth-percent' need '--baseline FILE' to compare with")
    }
    options.top = try parsed.integer(.top) ?? 10
    options.jobs = try parsed.integer(.jobs, minimum: 1, maximum: 256) ?? AuditOptions.defaultJobs
    options.jobsAreFixed = parsed.allValues(.jobs).count > 0
    for value in parsed.allValues(.list) {
      for name in value.split(separator: ",") {
        if name == "all" { options.listedCategories.formUnion(Category.allCases) }
        else if let category = Category(rawValue: String(name)) { options.listedCategories.insert(category) }
      }
    }
    configuration.overrides = options
    outputs = try AuditOutput.outputs(parsed)
    // The parser checked the choices: error, warning, info or never (nil).
    failOn = Severity(rawValue: parsed.value(.failOn) ?? "error")
    exactBytes = parsed.flag(.bytes)
    quiet = parsed.flag(.quiet)
    colorChoice = parsed.value(.color) ?? "auto"
    listsApps = parsed.flag(.listApps)
    sarifRoot = parsed.value(.sarifRoot)
    configuration.root = try parsed.root(inside: "a folder inside PATH")
    configuration.limits.maximumArchiveBytes = try parsed.size(.maxArchiveBytes)
    configuration.limits.maximumManifestBytes = try parsed.size(.maxManifestBytes)
    configuration.limits.maximumNameBytes = try parsed.size(.maxNameBytes)
    configuration.limits.maximumBackups = try parsed.integer(.maxBackups, minimum: 1)
    configuration.limits.maximumKeyRounds = try parsed.integer(.maxKeyRounds, minimum: 1).map { UInt64($0) } ?? BackupKeybag.defaultMaximumRounds
    configuration.apps = parsed.allValues(.app)
    for app in configuration.apps where app.isEmpty { throw UsageError("'--app' needs a bundle id or group id") }
    configuration.verify = parsed.flag(.verify)
    configuration.allDomains = parsed.flag(.allDomains)
    configuration.backup = parsed.value(.backup)
    configuration.backupDomain = parsed.value(.backupDomain)
    password = try BackupPassword(parsed)
    configuration.platform = parsed.value(.platform).flatMap(InputPlatform.init(rawValue:)) ?? .auto
    files.android.project = parsed.value(.androidProject)
    files.android.manifest = parsed.value(.androidManifest)
    files.android.rules = parsed.allValues(.androidRules)
    files.android.package = parsed.value(.androidPackage)
    files.android.targetSdk = try parsed.integer(.targetSdk, minimum: 1, maximum: 1000)
    files.android.deviceAPI = try parsed.integer(.deviceApi, minimum: 1, maximum: 1000)
    files.android.notEncrypted = parsed.flag(.noEndToEndEncryption)
    files.android.deviceData = parsed.value(.androidDeviceData)
    files.android.external = parsed.value(.androidExternal)
    if configuration.backupDomain != nil && configuration.backup == nil {
      throw UsageError("'--backup-domain' needs '--backup BACKUP' to compare with")
    }
  }

  func run(io: CommandIO) throws(Refusal) -> ExitCode {
    var configuration = try configuration.loadingFiles(files)
    let progress = quiet || !io.isErrorTerminal ? nil : WalkProgress()
    let display = progress.map { ProgressLine(progress: $0, io: io) }
    // Ctrl-C, SIGTERM, SIGHUP while report files are being written: their hidden files go, the
    // reports named stay as they were, and the process ends with 128 + the signal's number.
    // Ctrl-C alone while the progress line shows: the line is erased first, so that the
    // shell's prompt does not land after it.
    let writesFiles = outputs.contains { $0.file != nil }
    let signals = writesFiles || display != nil
      ? SignalCatcher.shared.register(writesFiles ? SignalCatcher.termination : SignalCatcher.interrupt) { number in
        display?.erase()
        if writesFiles { AuditOutput.openReports.removeHiddenFiles() }
        Syscalls.exitNow(128 + number)
      }
      : nil
    defer { signals?.cancel() }
    // A report that cannot be written is refused before anything is read, not after the walk.
    for file in outputs.compactMap(\.file) {
      do { try Syscalls.checkCanCreateOrWrite(atPath: file) } catch {
        throw Refusal(.cannotWrite, path: file, "cannot write the report: \(error.reason)")
      }
    }
    configuration.listsEveryEntry = outputs.contains { $0.format == .html }
    // NDJSON streams entries as they are classified when it is the only report; every line
    // names its container.
    let listsEverything = configuration.backup != nil || configuration.listsEveryEntry
    let streamsNDJSON = outputs.count == 1 && outputs[0].format == .ndjson && !configuration.overrides.listedCategories.isEmpty && !listsEverything
    var streamFile: ReplacingFile?
    if streamsNDJSON {
      if let file = outputs[0].file {
        let replacing = try AuditOutput.create(file)
        streamFile = replacing
        configuration.entrySink = { lines in replacing.write(lines) }
      } else {
        let write = io.writeOutput
        configuration.entrySink = { lines in write(String(decoding: lines, as: UTF8.self)) }
      }
    }
    configuration.tagsNDJSONLines = outputs.contains { $0.format == .ndjson }
    let password = self.password
    let passwordSource: PasswordSource = { (backup: String) throws(Refusal) -> SecretBuffer in
      // A prompt takes the terminal: the progress line is erased and stops until it is done.
      guard password.prompts else { return try password.read(for: backup) }
      display?.pause()
      defer { display?.resume() }
      return try password.read(for: backup)
    }
    display?.start()
    var everything: AuditSet
    var tries = 1
    while true {
      do {
        everything = try audit(paths: paths, configuration: configuration, password: passwordSource, progress: progress)
        break
      } catch {
        // A password typed at the prompt: three tries, as sudo and ssh give.
        if password.prompts && tries < 3 && error.refusal.cause == .wrongPassword {
          tries += 1
          io.writeError("Sorry, that password does not open the backup; try again.\n")
          continue
        }
        display?.stop()
        streamFile?.discard()
        throw error.refusal
      }
    }
    display?.stop()
    for notice in everything.notices { io.warning(notice) }
    if listsApps {
      io.writeOutput(everything.appSizes().map { "\(TerminalText.escaped($0.id))\t\($0.bytes)\n" }.joined())
      return .success
    }
    let reports = configuration.listsEveryEntry ? everything.listing(configuration.overrides.listedCategories) : everything
    var style = RenderStyle()
    style.failOn = failOn
    style.exactBytes = exactBytes
    style.findingsOnly = quiet
    style.unicode = AuditOutput.localeIsUTF8(io)
    style.disabledRules = Set(configuration.policy.severities.filter { $0.value == nil }.map(\.key))
    style.hasStepSummary = !(io.environment("GITHUB_STEP_SUMMARY") ?? "").isEmpty
    style.streamedNDJSON = streamsNDJSON
    style.sarif = sarifAnchors(configuration: configuration, io: io)
    style.top = configuration.overrides.top
    for output in outputs {
      let set = output.format == .html ? everything : reports
      style.colors = output.format == .table && AuditOutput.usesColors(colorChoice, toTerminal: output.file == nil, io: io)
      style.width = output.file == nil ? io.outputWidth : nil
      if let file = output.file {
        // Complete or not at all: a hidden file beside it, renamed over it once all is written.
        let replacing: ReplacingFile
        if let streamFile { replacing = streamFile } else { replacing = try AuditOutput.create(file) }
        set.render(format: output.format, style: style) { replacing.write($0) }
        do { try replacing.commit() } catch {
          throw Refusal(.cannotWrite, path: file, "cannot write the report: \(error.reason); it was left as it was")
        }
      } else {
        set.render(format: output.format, style: style) { chunk in
          if let write = io.writeOutputBytes { write(chunk) } else { io.writeOutput(String(decoding: chunk, as: UTF8.self)) }
        }
      }
      if output.format == .github, let summaryFile = io.environment("GITHUB_STEP_SUMMARY"), !summaryFile.isEmpty {
        AuditOutput.appendSummary(reports.githubStepSummary(failOn: failOn), to: summaryFile, io: io)
      }
    }
    return reports.fails(at: failOn) ? .failure : .success
  }

  /// SARIF's anchors: the checkout (`--sarif-root`, else GITHUB_WORKSPACE), and the policy file
  /// with the rules whose limit it set (those the command line did not).
  func sarifAnchors(configuration: AuditConfiguration, io: CommandIO) -> SARIFAnchors {
    var anchors = SARIFAnchors()
    if let root = sarifRoot ?? io.environment("GITHUB_WORKSPACE"), !root.isEmpty {
      anchors.root = Syscalls.absolutePath(root)
    }
    if let policyFile = files.policyFile {
      anchors.policyFile = Syscalls.absolutePath(policyFile)
      let overrides = configuration.overrides
      var rules: Set<String> = [AuditRule.budgetExceeded.id, AuditRule.budgetNearLimit.id]
      if overrides.maxBackupSize == nil { rules.formUnion([AuditRule.backupTooLarge.id, AuditRule.backupNearLimit.id]) }
      if overrides.maxGrowth == nil && overrides.maxGrowthPercent == nil { rules.insert(AuditRule.backupGrew.id) }
      anchors.policyRules = rules
    }
    return anchors
  }
}
