/// The failure of one of the library's jobs (`AuditFailure`, `ExtractFailure`, `RestoreFailure`,
/// `MigrationError`): an enum of causes a caller can switch on, each carrying the paths it is
/// about as given. Each says what it is as a `Refusal` (its cause, its path as given, its one line).
public protocol JobFailure: Error, Sendable {
  /// The failure as a `Refusal` (exit status 2), for a caller that does not tell causes apart.
  var refusal: Refusal { get }
}

extension JobFailure {
  /// The line shown after `appdata: error: `, with input-derived text escaped for a terminal.
  public var message: String { refusal.message }
}
