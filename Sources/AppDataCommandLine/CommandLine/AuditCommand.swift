import AppDataSystem
import AppDataKit
import Synchronization

/// `appdata audit`: options to an `AuditConfiguration`, the library's `audit` call, the report
/// to each chosen format and destination, findings to the exit status.
struct AuditCommand: RefusingCommand {
  var paths: [String]
  /// What the command line sets; the policy file and the baseline are read when it runs.
  var configuration = AuditConfiguration()
  /// The policy file, the Android files and the baseline named: read when the command runs
  /// (`AuditConfiguration.loadingFiles`).
  var files = AuditConfiguration.NamedFiles()
  var outputs: [AuditOutput]
  /// What the command line sets of the reports' look (`--fail-on`, `--bytes`, `-q`); the rest
  /// (`--top` among it, from the configuration) is set when the command runs.
  var style = RenderStyle()
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
    files = try Self.namedFiles(parsed)
    configuration.overrides = try Self.overrides(parsed, hasBaseline: files.baseline != nil)
    outputs = try AuditOutput.outputs(parsed)
    // The parser checked the choices: error, warning, info or never (nil).
    style.failOn = Severity(rawValue: parsed.value(.failOn) ?? "error")
    style.exactBytes = parsed.flag(.bytes)
    style.findingsOnly = parsed.flag(.quiet)
    colorChoice = parsed.value(.color) ?? "auto"
    listsApps = parsed.flag(.listApps)
    sarifRoot = parsed.value(.sarifRoot)
    configuration.root = try parsed.root(inside: "a folder inside PATH")
    configuration.limits = try Self.limits(parsed)
    configuration.apps = parsed.allValues(.app)
    for app in configuration.apps where app.isEmpty { throw UsageError("'--app' needs a bundle id or group id") }
    configuration.verify = parsed.flag(.verify)
    configuration.allDomains = parsed.flag(.allDomains)
    configuration.backup = parsed.value(.backup)
    configuration.backupDomain = parsed.value(.backupDomain)
    password = try BackupPassword(parsed)
    configuration.platform = parsed.value(.platform).flatMap(InputPlatform.init(rawValue:)) ?? .auto
    files.android = try Self.androidOptions(parsed)
    if configuration.backupDomain != nil && configuration.backup == nil {
      throw UsageError("'--backup-domain' needs '--backup BACKUP' to compare with")
    }
  }

  func run(io: CommandIO) throws(Refusal) -> ExitCode {
    var configuration = try configuration.loadingFiles(files)
    let progress = style.findingsOnly || !io.isErrorTerminal ? nil : WalkProgress()
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
    configuration.tagsNDJSONLines = outputs.contains { $0.format == .ndjson }
    let stream = try streamNDJSON(&configuration, io: io)
    display?.start()
    let everything: AuditSet
    do { everything = try audit(configuration, display: display, progress: progress, io: io) } catch {
      display?.stop()
      stream.file?.discard()
      throw error
    }
    display?.stop()
    for notice in everything.notices { io.warning(notice) }
    if listsApps {
      io.writeOutput(everything.appSizes().map { "\(TerminalText.escaped($0.id))\t\($0.bytes)\n" }.joined())
      return .success
    }
    let reports = configuration.listsEveryEntry ? everything.listing(configuration.overrides.listedCategories) : everything
    var style = style
    style.unicode = AuditOutput.localeIsUTF8(io)
    style.disabledRules = Set(configuration.policy.severities.filter { $0.value == nil }.map(\.key))
    style.hasStepSummary = !(io.environment("GITHUB_STEP_SUMMARY") ?? "").isEmpty
    style.streamedNDJSON = stream.isStreamed
    style.sarif = AuditOutput.sarifAnchors(root: sarifRoot, policyFile: files.policyFile, overrides: configuration.overrides, io: io)
    style.top = configuration.overrides.top
    try AuditOutput.write(outputs, everything: everything, reports: reports, style: style, colorChoice: colorChoice, streamFile: stream.file, io: io)
    return reports.fails(at: style.failOn) ? .failure : .success
  }

  /// NDJSON streams entries as they are classified when it is the only report (every line
  /// names its container): the configuration's sink writes them to the report's hidden file,
  /// or to standard output.
  private func streamNDJSON(_ configuration: inout AuditConfiguration, io: CommandIO) throws(Refusal) -> (isStreamed: Bool, file: ReplacingFile?) {
    let listsEverything = configuration.backup != nil || configuration.listsEveryEntry
    guard outputs.count == 1 && outputs[0].format == .ndjson && !configuration.overrides.listedCategories.isEmpty && !listsEverything else {
      return (false, nil)
    }
    guard let file = outputs[0].file else {
      let write = io.writeOutput
      configuration.entrySink = { lines in write(String(decoding: lines, as: UTF8.self)) }
      return (true, nil)
    }
    let replacing = try AuditOutput.create(file)
    configuration.entrySink = { lines in replacing.write(lines) }
    return (true, replacing)
  }

  /// The library's audit; a password typed at the prompt gets three tries, as sudo and ssh
  /// give, with the progress line erased while it is asked for.
  private func audit(_ configuration: AuditConfiguration, display: ProgressLine?, progress: WalkProgress?, io: CommandIO) throws(Refusal) -> AuditSet {
    do {
      return try password.retrying(io: io, display: display) { source throws(AuditFailure) in
        try AppDataKit.audit(paths: paths, configuration: configuration, password: source, progress: progress)
      }
    } catch {
      throw error.refusal
    }
  }

}
