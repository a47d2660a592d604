import AppDataSystem
/// appdata could not run on what it was given: a folder that is no container, a damaged or
/// locked backup, a wrong password, a report it cannot write. One line on standard error,
/// nothing on standard output, exit status 2 (`ExitCode.usage`), as for a usage error; the two
/// stay apart so that a usage error is always about the command line.
public struct Refusal: Error, Equatable, Sendable {
  /// The line shown after `appdata: error: `, with input-derived text already escaped.
  public var message: String
  /// An encrypted backup that was given no password, or a wrong one: in a report of many it is
  /// listed as locked rather than refusing the whole run.
  public var isLocked = false

  public init(_ message: String, isLocked: Bool = false) {
    self.message = message
    self.isLocked = isLocked
  }
}
