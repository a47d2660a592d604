import AppDataSystem
import AppDataKit
/// `appdata migrate`: options to `MigrationOptions`, the report to the chosen format.
struct MigrateCommand: RefusingCommand {
  let path: String
  let options: MigrationOptions
  let apps: [String]
  let shown: ReportChoice

  /// `--android-rules FILE --output NEW`: the Android rules migration instead.
  let androidRules: (file: String, output: String)?
  /// `--max-name-bytes`: what an archive of the app's data (PATH, with `--android-rules`) may
  /// keep of its names.
  let maximumNameBytes: UInt64?

  init(_ parsed: ParsedArguments) throws(UsageError) {
    if let rules = parsed.value(.androidRules) {
      guard let output = parsed.value(.output) else { throw UsageError("'--android-rules' needs '--output NEW', the <data-extraction-rules> file to write") }
      androidRules = (rules, output)
    } else {
      androidRules = nil
      if parsed.value(.output) != nil { throw UsageError("'--output' applies to '--android-rules'") }
      if parsed.value(.maxNameBytes) != nil { throw UsageError("'--max-name-bytes' applies to '--android-rules' (an archive of the app's data)") }
      guard !parsed.operands.isEmpty else { throw UsageError("missing PATH: the container to migrate") }
    }
    path = parsed.operands.first ?? ""
    maximumNameBytes = try parsed.size(.maxNameBytes)
    var options = MigrationOptions()
    if let from = parsed.value(.from) { options.source = try Self.relative(from, option: "from") }
    if let to = parsed.value(.to) { options.destination = try Self.relative(to, option: "to") }
    if let into = parsed.value(.into) {
      guard let components = RelativePath.checkedComponents(into), components.count == 1 else {
        throw UsageError("invalid value '\(TerminalText.escaped(into))' for '--into': expected one folder name")
      }
      options.into = components[0]
    }
    if let plist = parsed.value(.defaultsPlist) { options.defaultsPlist = try Self.relative(plist, option: "defaults-plist") }
    options.bundleID = parsed.value(.bundleId)
    options.only = try Self.globs(parsed, .only)
    options.skip = try Self.globs(parsed, .skip)
    options.onConflict = parsed.value(.onConflict).flatMap(MigrationOptions.ConflictPolicy.init(rawValue:)) ?? .fail
    switch parsed.value(.marker) ?? "modern" {
    case "legacy": options.markers = [.legacy]
    case "both": options.markers = [.modern, .legacy]
    default: options.markers = [.modern]
    }
    options.defaultsKey = parsed.value(.defaultsKey)
    if options.defaultsKey?.isEmpty == true { throw UsageError("'--defaults-key' needs a key name") }
    options.dryRun = parsed.flag(.dryRun)
    options.stopAfter = try parsed.integer(.testStopAfter, minimum: 1)
    self.options = options
    apps = parsed.allValues(.app)
    shown = ReportChoice(parsed)
  }

  /// The one app container PATH names (the library's `MigrationInput`).
  func container() throws(Refusal) -> ContainerRef {
    try MigrationInput.container(at: path, apps: apps)
  }

  /// A path relative to the container that cannot leave it.
  /// `--only`/`--skip` patterns: the policy file's glob syntax (`Glob`), one engine for both.
  static func globs(_ parsed: ParsedArguments, _ option: OptionName) throws(UsageError) -> [Glob] {
    var globs: [Glob] = []
    for pattern in parsed.allValues(option) {
      do {
        globs.append(try Glob(pattern))
      } catch {
        throw UsageError("invalid glob '\(TerminalText.abbreviated(pattern))' for '--\(option)': \(error.message)")
      }
    }
    return globs
  }

  static func relative(_ text: String, option: String) throws(UsageError) -> [[UInt8]] {
    guard let components = RelativePath.checkedComponents(text) else {
      throw UsageError("invalid value '\(TerminalText.escaped(text))' for '--\(option)': expected a path inside the container, relative to it, without '..'")
    }
    return components
  }

  func run(io: CommandIO) throws(Refusal) -> ExitCode {
    if let androidRules {
      return try Self.migrateAndroidRules(androidRules.file, output: androidRules.output, data: path.isEmpty ? nil : path, dryRun: options.dryRun,
                                          maximumNameBytes: maximumNameBytes, io: io)
    }
    let container = try container()
    TestHooks.pause(at: "resolved")
    var options = options
    if options.bundleID == nil, container.kind == .app { options.bundleID = container.id }
    let outcome: Migration.Outcome
    // Ctrl-C, SIGTERM, SIGHUP: the process ends at once, as a crash would (the journal makes
    // any instant safe), with one line saying where the migration stopped and how to finish it.
    let progress = MigrationProgress()
    // On a terminal: `Migrating: 1,234 of 20,000 files, 1.2 GiB of 1.9 GiB`, after half a second.
    let display = options.dryRun || !shown.allowsProgress || !io.isErrorTerminal ? nil : ProgressLine(io: io) {
      let amounts = progress.amounts
      guard amounts.totalFiles > 0 || amounts.totalBytes > 0 else { return nil }
      return "Migrating: \(amounts.files) of \(Plural.counted(amounts.totalFiles, "file")), \(ByteSize.human(amounts.bytes)) of \(ByteSize.human(amounts.totalBytes))"
    }
    var signals: SignalCatcher.Registration?
    if !options.dryRun {
      let path = self.path
      signals = SignalCatcher.shared.register { number in
        display?.erase()
        let (done, total) = progress.counts
        io.error("\(TerminalText.escaped(path)): interrupted after \(done) of \(Plural.counted(total, "entry", "entries")); the rest are where they were, "
                 + "and \(ContainerLayout.migrationJournalName) records where it stopped: run 'appdata migrate' on it again to finish")
        Syscalls.exitNow(128 + number)
      }
    }
    defer { signals?.cancel() }
    do {
      var migration = Migration(rootPath: container.root, options: options)
      migration.below = path
      migration.progress = progress
      display?.start()
      defer { display?.stop() }
      outcome = try migration.run()
    } catch {
      throw error.refusal
    }
    for line in outcome.preCheckErrors { io.error(line) }
    io.writeReport(shown, document: outcome.report.jsonDocument, table: outcome.report.table)
    if outcome.status == .failure {
      let failed = outcome.report.entries.filter { $0.action == .failed || $0.action == .conflict }.count
      io.error("\(TerminalText.escaped(path)): \(Plural.counted(failed, "entry", "entries")) not migrated\(outcome.report.errors.isEmpty ? "" : " and " + Plural.counted(outcome.report.errors.count, "error")); the journal is kept, fix the cause and run 'appdata migrate' again")
    }
    return outcome.status
  }

  /// The Android rules migration: read, convert and check (the library's one call), print, write.
  static func migrateAndroidRules(_ file: String, output: String, data: String?, dryRun: Bool, maximumNameBytes: UInt64?,
                                  io: CommandIO) throws(Refusal) -> ExitCode {
    let outcome = try AndroidRulesMigration.convert(file: file, data: data, maximumNameBytes: maximumNameBytes)
    for note in outcome.notes { io.warning(note) }
    for difference in outcome.differences { io.warning("not the same: " + difference) }
    if dryRun {
      io.writeOutput(outcome.xml)
    } else if outcome.differences.isEmpty {
      // Only a file that passes its check is written: one that makes Android carry something
      // else is never left for a build to pick up.
      do throws(AndroidRulesMigration.Failure) { try AndroidRulesMigration.write(outcome.xml, to: output) } catch {
        throw Refusal(.cannotWrite, path: output, message: error.message)
      }
      io.writeOutput("Wrote \(TerminalText.escaped(output)): the <data-extraction-rules> for \(TerminalText.escaped(file))\n")
    }
    let checked = "checked on \(Plural.listed(outcome.checkedOn, limit: 5))"
    io.writeOutput(outcome.differences.isEmpty
                   ? "Android 12 carries the same with it as Android 11 with the legacy file, for the cloud backup and device-to-device transfer (\(checked))\n"
                   : "Android 12 carries something else with it than Android 11 with the legacy file: \(Plural.counted(outcome.differences.count, "difference")) (\(checked))\n")
    if !dryRun && !outcome.differences.isEmpty {
      io.error("\(TerminalText.escaped(output)): not written, since Android 12 would carry something else with it than Android 11 with \(TerminalText.escaped(file)) (--dry-run prints it)")
    }
    return outcome.differences.isEmpty ? .success : .failure
  }
}
