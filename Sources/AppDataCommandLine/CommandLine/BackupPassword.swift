import AppDataSystem
import AppDataKit
/// Where the password of an encrypted device backup comes from. Never an option's value (it
/// would show in `ps` and the shell's history): `--password-file FILE` (its first line),
/// `--password-stdin` (the first line of standard input), `APPDATA_BACKUP_PASSWORD` (a CI
/// secret), or, when standard input is a terminal and none of those is given, a prompt that does
/// not echo. It is read only when a backup needs it, into a `SecretBuffer`.
struct BackupPassword: Sendable {
  static let environmentVariable = BackupReader.passwordVariable
  /// The longest first line read as a password.
  static let maximumLength = 4096

  var file: String?
  var fromStandardInput = false

  init(_ parsed: ParsedArguments) throws(UsageError) {
    file = parsed.value(.passwordFile)
    fromStandardInput = parsed.flag(.passwordStdin)
    if file != nil && fromStandardInput {
      throw UsageError("give the password one way: '--password-file FILE' or '--password-stdin', not both")
    }
  }

  /// Reads the password for the backup at `backup` (named in the prompt and the errors).
  /// Whether `read` will ask at the terminal (and so take over SIGINT, SIGTERM and SIGHUP while
  /// the terminal does not echo): no file, no pipe and no environment variable gives it.
  var prompts: Bool {
    guard Syscalls.isStandardInputATerminal else { return false }
    if fromStandardInput || file == "-" { return true }
    return file == nil && Syscalls.environment(Self.environmentVariable) == nil
  }

  /// The password for `backup`. `stopping` (a signal caught) ends a read from a pipe that waits.
  func read(for backup: String, stopping: () -> Bool = { false }) throws(Refusal) -> SecretBuffer {
    guard let secret = SecretBuffer(capacity: Self.maximumLength) else {
      throw Refusal(.unreadable, "cannot map memory to hold the password")
    }
    let source: String
    if fromStandardInput || file == "-", Syscalls.isStandardInputATerminal {
      // Standard input is a terminal: read the line without echoing it, as the prompt does.
      try prompt(into: secret, for: backup)
      return secret
    } else if fromStandardInput || file == "-" {
      source = "the first line of standard input"
      TestHooks.pause(at: "password")
      try readLine(into: secret, from: FileDescriptor(rawValue: 0), source: source, stopping: stopping)
    } else if let file {
      source = "\(TerminalText.escaped(file)): its first line"
      let descriptor: OwnedDescriptor
      let status: FileStatus
      do {
        let (opened, openedStatus) = try Syscalls.openWithoutWaiting(atPath: file)
        descriptor = OwnedDescriptor(owning: opened)
        status = openedStatus
      } catch {
        throw Refusal(.unreadable, path: file, "cannot read the password file: \(error.reason)")
      }
      guard status.kind == .regular else {
        throw Refusal(.notAnInput, path: file, "\(FileReading.notRegular); give a password from a pipe on standard input (--password-file - or --password-stdin)")
      }
      try readLine(into: secret, from: descriptor.descriptor, source: source)
    } else if let environment = Syscalls.takeSecretEnvironment(Self.environmentVariable) {
      guard environment.count > 0 else {
        throw Refusal(.emptyPassword, "\(Self.environmentVariable) is set but empty (a CI secret that is not defined here?); \(TerminalText.escaped(backup)) needs its password")
      }
      return environment
    } else if Syscalls.isStandardInputATerminal {
      try prompt(into: secret, for: backup)
      return secret
    } else {
      throw BackupReader.noPassword(backup)
    }
    guard secret.count > 0 else {
      throw Refusal(.emptyPassword, "\(source) is empty; \(TerminalText.escaped(backup)) needs its password")
    }
    return secret
  }

  /// Asks for the password at the terminal without echo.
  private func prompt(into secret: SecretBuffer, for backup: String) throws(Refusal) {
    let fits: Bool
    do {
      fits = try Syscalls.readSecretLine(prompt: "Password for the encrypted backup \(TerminalText.escaped(backup)): ", into: secret)
    } catch {
      throw Refusal(.unreadable, "cannot read the password from the terminal: \(error.reason)")
    }
    guard fits else { throw Refusal(.tooLarge, "the password typed is longer than \(Self.maximumLength) bytes; not a password") }
    guard secret.count > 0 else { throw Refusal(.emptyPassword, "the password typed is empty; \(TerminalText.escaped(backup)) needs its password") }
  }

  private func readLine(into secret: SecretBuffer, from descriptor: FileDescriptor, source: String,
                        stopping: () -> Bool = { false }) throws(Refusal) {
    let fits: Bool
    do {
      fits = try secret.readLine(from: descriptor, displayPath: source, stopping: stopping)
    } catch where error.errno == .interrupted {
      throw Refusal(.interrupted, "interrupted while reading the password from \(source); nothing was written")
    } catch {
      throw Refusal(.unreadable, "cannot read \(source): \(error.reason)")
    }
    guard fits else { throw Refusal(.tooLarge, "\(source) is longer than \(Self.maximumLength) bytes; not a password") }
  }
}

/// A job's failure (`AuditFailure`, `ExtractFailure`, `RestoreFailure`) that says whether it is
/// an interrupt's.
protocol CommandFailure: JobFailure {
  var isInterrupted: Bool { get }
}

/// An interrupt: the job's own, or a password read that a signal ended.
extension CommandFailure {
  var isInterrupted: Bool { refusal.cause == .interrupted }
}

extension AuditFailure: CommandFailure {}
extension ExtractFailure: CommandFailure {}
extension RestoreFailure: CommandFailure {}

extension BackupPassword {
  /// Runs `job` with this password as its source: a password typed at the prompt that does not
  /// open the backup gets three tries, as sudo and ssh give (none once a signal came). Before
  /// the prompt, `display` (the progress line) is paused.
  func retrying<Result, Failure: CommandFailure>(io: CommandIO, caught: SignalFlag? = nil, display: ProgressLine? = nil,
                                             _ job: (@escaping PasswordSource) throws(Failure) -> Result) throws(Failure) -> Result {
    let password = self
    let source: PasswordSource = { (backup: String) throws(Refusal) -> SecretBuffer in
      let stopping = { caught?.number != nil }
      guard password.prompts, let display else { return try password.read(for: backup, stopping: stopping) }
      display.pause()
      defer { display.resume() }
      return try password.read(for: backup, stopping: stopping)
    }
    var tries = 1
    while true {
      do {
        return try job(source)
      } catch where prompts && tries < 3 && error.refusal.cause == .wrongPassword && caught?.number == nil {
        tries += 1
        io.writeError("Sorry, that password does not open the backup; try again.\n")
      }
    }
  }

  /// A job's failure, after the progress line is erased: an interrupt ends the process with
  /// 128 + the signal's number (its line said first; the run fails whether or not it goes
  /// out), anything else is the refusal to report.
  static func ending<Failure: CommandFailure>(_ error: Failure, caught: SignalFlag, io: CommandIO, erasing: Bool) -> Refusal {
    if erasing { io.writeError("\r\u{1B}[2K") }
    if error.isInterrupted, let number = caught.number {
      io.error(error.refusal.message)
      _ = WorkCounters.reportIfAsked()
      Syscalls.exitNow(128 + number)
    }
    return error.refusal
  }
}
