import AppDataSystem
/// appdata could not run on what it was given: a folder that is no container, a damaged or
/// locked backup, a wrong password, a report it cannot write. One line on standard error,
/// nothing on standard output, exit status 2 (`ExitCode.usage`), as for a usage error; the two
/// stay apart so that a usage error is always about the command line.
public struct Refusal: Error, Equatable, Sendable {
  /// The line shown after `appdata: error: `, with input-derived text already escaped.
  public var message: String

  public init(_ message: String) {
    self.message = message
  }
}
