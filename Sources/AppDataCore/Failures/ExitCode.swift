import AppDataSystem
/// Every exit status appdata uses. Scripts rely on these; Docs/appdata.1 lists them.
public enum ExitCode: Int32, Sendable {
  /// Done, and nothing reached `--fail-on` (audit) / everything planned was done (migrate).
  case success = 0
  /// The command ran but found a problem: findings at or above `--fail-on`, or some paths
  /// or entries failed (the rest were done).
  case failure = 1
  /// Nothing could run: a usage error, a missing or unusable PATH, a failed pre-check.
  case usage = 2
  /// The reader of standard output went away (`| head`) while SIGPIPE was ignored, so a write
  /// failed with EPIPE: the run ends quietly with the status a shell shows for a process that
  /// SIGPIPE ended, 128 + 13 (Docs/options.md, "Exit status").
  case brokenPipe = 141
}
