import AppDataSystem
/// appdata could not run on what it was given: a folder that is no container, a damaged or
/// locked backup, a wrong password, a report it cannot write. One line on standard error,
/// nothing on standard output, exit status 2 (`ExitCode.usage`), as for a usage error; the two
/// stay apart so that a usage error is always about the command line.
///
/// A caller switches on `cause` (and reads `path`, as given, unescaped); `message` is the line a
/// terminal shows, with input-derived text already escaped.
public struct Refusal: Error, Equatable, Sendable {
  /// Why appdata could not run, as a caller can act on it. Every refusal has one of these;
  /// there is no "other" (`PortabilityTests.everyRefusalHasASpecificCause`).
  public enum Cause: String, Sendable, CaseIterable {
    /// The path is not what the job reads (not a container, backup or archive of them).
    case notAnInput
    /// The path does not exist.
    case notFound
    /// The path exists but cannot be read (permissions, an I/O error, a limit of the system).
    case unreadable
    /// What was read is damaged or not in the format it claims (a manifest, a plist, an archive).
    case damaged
    /// An encrypted backup with no password.
    case locked
    /// An encrypted backup whose keybag does not open with the password given.
    case wrongPassword
    /// Past one of appdata's bounds (archive bytes, manifest bytes, names, backups, domains,
    /// key rounds, a password's length).
    case tooLarge
    /// An output cannot be written, or written there.
    case cannotWrite
    /// Nothing matched what was asked for (`--app`, `--backup-domain`, `--root`).
    case notMatched
    /// The request contradicts itself or what is there (an existing output, two inputs that
    /// are one).
    case conflict
    /// A password given that is empty (an empty file or line, a CI secret set to nothing).
    /// Unlike `.locked`, it refuses the run even where locked backups would be listed: a
    /// password was meant to be there.
    case emptyPassword
    /// The caller stopped the job (`isInterrupted`, a signal) before it ended; nothing was left.
    case interrupted
  }

  public var cause: Cause
  /// The path the refusal is about, as given (not escaped); nil when it is about no one path.
  public var path: String?
  /// The line shown after `appdata: error: `, with input-derived text already escaped.
  public var message: String
  /// An encrypted backup that was given no password, or a wrong one: in a report of many it is
  /// listed as locked rather than refusing the whole run.
  public var isLocked: Bool { cause == .locked || cause == .wrongPassword }

  /// A message made here, about no one path (or one it names itself, escaped).
  public init(_ cause: Cause, _ message: String) {
    self.cause = cause
    self.message = message
  }

  /// `PATH: DETAIL`, the path escaped for the terminal; `detail` is shown as given.
  public init(_ cause: Cause, path: String, _ detail: String) {
    self.cause = cause
    self.path = path
    self.message = TerminalText.escaped(path) + ": " + detail
  }

  /// A message made elsewhere, with its cause and path.
  public init(_ cause: Cause, path: String?, message: String) {
    self.cause = cause
    self.path = path
    self.message = message
  }
}
