import AppDataSystem
/// appdata could not run on what it was given: a folder that is no container, a damaged or
/// locked backup, a wrong password, a report it cannot write. One line on standard error,
/// nothing on standard output, exit status 2 (`ExitCode.usage`), as for a usage error; the two
/// stay apart so that a usage error is always about the command line.
///
/// A caller switches on `cause` (and reads `path`, as given, unescaped); `message` is the line a
/// terminal shows, with input-derived text already escaped.
public struct Refusal: Error, Equatable, Sendable {
  /// Why appdata could not run, as a caller can act on it.
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
    /// Past one of appdata's bounds (archive bytes, manifest bytes, backups, key rounds).
    case tooLarge
    /// An output cannot be written, or written there.
    case cannotWrite
    /// Nothing matched what was asked for (`--app`, `--backup-domain`, `--root`).
    case notMatched
    /// The request contradicts itself or what is there (an existing output, two inputs that
    /// are one).
    case conflict
    /// Anything else; `message` says what.
    case other
  }

  public var cause: Cause
  /// The path the refusal is about, as given (not escaped); nil when it is about no one path.
  public var path: String?
  /// The line shown after `appdata: error: `, with input-derived text already escaped.
  public var message: String
  /// An encrypted backup that was given no password, or a wrong one: in a report of many it is
  /// listed as locked rather than refusing the whole run.
  public var isLocked: Bool { cause == .locked || cause == .wrongPassword }

  public init(_ message: String, isLocked: Bool = false) {
    self.cause = isLocked ? .locked : .other
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
