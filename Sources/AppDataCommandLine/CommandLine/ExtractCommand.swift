import AppDataSystem
import AppDataCore
import AppDataReaders
import AppDataReports
import AppDataMigration
import Dispatch
/// `appdata extract BACKUP --app ID [-o OUT]`: options to a `BackupExtraction.Request`, the
/// report to the chosen format, an interrupt to a clean exit with nothing left behind.
struct ExtractCommand {
  let path: String
  let root: [[UInt8]]?
  let id: String
  let output: String
  let withExtensions: Bool
  let force: Bool
  let dryRun: Bool
  let json: Bool
  let quiet: Bool
  let failOn: String
  let maximumKeyRounds: UInt64
  let password: BackupPassword
  let stopAfter: Int?

  init(_ parsed: ParsedArguments) throws(UsageError) {
    path = parsed.operands[0]
    guard let id = parsed.value("app"), !id.isEmpty else {
      throw UsageError("'appdata extract' needs '--app ID': the app, app group or plugin to extract")
    }
    self.id = id
    withExtensions = parsed.flag("with-extensions")
    output = parsed.value("output") ?? (withExtensions ? id : id + ".xcappdata")
    if output.isEmpty { throw UsageError("'--output' needs a name") }
    force = parsed.flag("force")
    dryRun = parsed.flag("dry-run")
    let lastFormatOption = parsed.order.last { $0 == "format" || $0 == "json" }
    json = lastFormatOption == "json" ? parsed.flag("json") : parsed.value("format") == "json"
    quiet = parsed.flag("quiet")
    failOn = parsed.value("fail-on") ?? "error"
    maximumKeyRounds = try parsed.integer("max-key-rounds", minimum: 1).map { UInt64($0) } ?? BackupKeybag.defaultMaximumRounds
    root = try parsed.root(inside: "a backup's folder inside BACKUP")
    password = try BackupPassword(parsed)
    stopAfter = try parsed.integer("test-stop-after", minimum: 1)
  }

  /// The backup BACKUP (and `--root`) names; several without `--root` are refused, naming them.
  func backup() throws(Refusal) -> BackupSource {
    let backups = try InputResolver.deviceBackups(in: InputResolver.resolve(path, root: root))
    if backups.count == 1 { return backups[0] }
    if backups.count > 1 {
      let names = backups.map { TerminalText.escaped($0.name) }
      throw Refusal("\(TerminalText.escaped(path)): holds \(Plural.counted(names.count, "backup")); name the one to extract from with --root (\(Plural.listed(names, limit: 10)))")
    }
    throw Refusal("\(TerminalText.escaped(path)): not a device backup (no Manifest.db beside Manifest.plist, Info.plist or Status.plist); appdata extract reads backups")
  }

  func run(io: CommandIO) throws(Refusal) -> ExitCode {
    let backup = try backup()
    var request = BackupExtraction.Request(id: id, output: output)
    request.withExtensions = withExtensions
    request.force = force
    request.dryRun = dryRun
    request.maximumKeyRounds = maximumKeyRounds
    request.stopAfter = stopAfter
    if backup.needsPassword { request.password = try password.read(for: backup.source) }
    // Ctrl-C, SIGTERM, SIGHUP: the extraction stops at its next file or chunk and removes what
    // it wrote; then the process ends as the signal would have ended it.
    let signalled = Signalled()
    let queue = DispatchQueue(label: "appdata.extract.signals")
    let sources = Syscalls.onTermination(queue: queue) { number in signalled.set(number) }
    defer { for source in sources { source.cancel() } }
    request.isInterrupted = { signalled.number != nil }
    if io.isErrorTerminal && !quiet && !json {
      let progress = ExtractProgress(io: io)
      request.progress = { done, total in progress.show(done, total) }
    }
    let report: BackupExtraction.Report
    do {
      report = try BackupExtraction.run(backup, request: request)
    } catch {
      if io.isErrorTerminal { io.writeError("\r\u{1B}[2K") }
      if let number = signalled.number {
        io.error("\(TerminalText.escaped(output)): interrupted; nothing was written")
        Syscalls.exitNow(128 + number)
      }
      throw error
    }
    if io.isErrorTerminal && request.progress != nil { io.writeError("\r\u{1B}[2K") }
    if json {
      io.writeOutput(report.jsonDocument().serialized(pretty: true) + "\n")
    } else if !quiet {
      io.writeOutput(report.table())
    }
    let notWritten = report.problems.filter(\.isError)
    let warnings = report.problems.count - notWritten.count
    let fails: Bool
    switch failOn {
    case "never": fails = false
    case "warning": fails = notWritten.count + warnings > 0
    default: fails = !notWritten.isEmpty
    }
    if !notWritten.isEmpty {
      // Which, too, where no table or JSON said it (-q).
      let which = quiet ? ": " + Plural.listed(notWritten.map { TerminalText.escaped(RelativePath.display($0.path)) }, limit: 10) : ""
      let line = "\(TerminalText.escaped(path)): \(Plural.counted(notWritten.count, "entry", "entries")) not written\(which) (the rest are in \(TerminalText.escaped(output)))"
      if fails { io.error(line) } else { io.warning(line) }
    }
    return fails ? .failure : .success
  }
}

/// The signal that asked the extraction to stop, if one did.
final class Signalled: @unchecked Sendable {
  private let lock = Lock()
  private var value: Int32?
  func set(_ number: Int32) { lock.withLock { if value == nil { value = number } } }
  var number: Int32? { lock.withLock { value } }
}

/// `Extracting: 12.0 MiB of 1.0 GiB` on standard error, at most five times a second.
final class ExtractProgress: @unchecked Sendable {
  private let io: CommandIO
  private let lock = Lock()
  private var last: UInt64 = 0

  init(io: CommandIO) { self.io = io }

  func show(_ done: UInt64, _ total: UInt64) {
    let now = Syscalls.monotonicNanoseconds()
    let due = lock.withLock { () -> Bool in
      guard now &- last >= 200_000_000 else { return false }
      last = now
      return true
    }
    if due { io.writeError("\r\u{1B}[2KExtracting: \(ByteSize.human(done)) of \(ByteSize.human(total))") }
  }
}

extension BackupExtraction.Report {
  /// The table: each container's folders, files, symlinks and bytes, then what was not written.
  func table() -> String {
    var lines = ["Backup: \(TerminalText.escaped(backup))", (dryRun ? "Would write: " : "Written: ") + TerminalText.escaped(output)
                 + (isPackage ? " (an Xcode package; the container in AppData)" : ""), ""]
    var rows: [[String]] = [["CONTAINER", "KIND", "FOLDER", "FOLDERS", "FILES", "SYMLINKS", "BYTES"]]
    for container in containers {
      rows.append([TerminalText.escaped(container.id), container.kind.rawValue, TerminalText.escaped(container.root), String(container.folders),
                   String(container.files), String(container.symlinks), ByteSize.human(container.bytes)])
    }
    lines += TextTable.render(rows, rightAligned: [3, 4, 5, 6])
    let differences = containers.flatMap { container in container.sizeDifferences.map { (container.id, $0) } }
    if !differences.isEmpty {
      lines.append("")
      lines.append("Written with another length than the manifest's Size (the file changed while the backup was made):")
      for (id, difference) in differences {
        lines.append("  \(TerminalText.escaped(id)): \(TerminalText.escaped(RelativePath.display(difference.path))): \(difference.written) bytes, recorded \(difference.manifestSize)")
      }
    }
    lines.append("")
    let errors = problems.filter(\.isError)
    lines.append(errors.isEmpty && problems.isEmpty ? "Not written: none" : "Not written: \(errors.count); warnings: \(problems.count - errors.count)")
    for problem in problems {
      lines.append("  \(problem.isError ? "error  " : "warning") \(TerminalText.escaped(problem.domain)): \(TerminalText.escaped(RelativePath.display(problem.path))): \(TerminalText.escaped(problem.message))")
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// `{schemaVersion, tool, backup, output, package, dryRun, containers, problems}`
  /// (Docs/extract.schema.json).
  func jsonDocument() -> JSONValue {
    .object([
      "schemaVersion": .integer(1),
      "tool": AppDataVersion.toolJSON,
      "backup": .string(backup),
      "output": .string(output),
      "package": .bool(isPackage),
      "dryRun": .bool(dryRun),
      "containers": .array(containers.map { container in
        .object([
          "id": .string(container.id), "kind": .string(container.kind.rawValue), "domain": .string(container.domain),
          "folder": .string(container.root), "folders": .unsigned(container.folders), "files": .unsigned(container.files),
          "symlinks": .unsigned(container.symlinks), "bytes": .unsigned(container.bytes),
          "sizeDifferences": .array(container.sizeDifferences.map { difference in
            var object = JSONValue.pathFields(difference.path)
            object["manifestSize"] = .unsigned(difference.manifestSize)
            object["written"] = .unsigned(difference.written)
            return .object(object)
          }),
        ])
      }),
      "problems": .array(problems.map { problem in
        var object = JSONValue.pathFields(problem.path)
        object["domain"] = .string(problem.domain)
        object["message"] = .string(problem.message)
        object["severity"] = .string(problem.isError ? "error" : "warning")
        return .object(object)
      }),
    ])
  }
}
