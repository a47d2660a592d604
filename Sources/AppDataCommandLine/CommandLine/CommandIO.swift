import AppDataSystem
import AppDataCore
import AppDataReaders
import AppDataReports
import AppDataMigration

/// Where a command's output goes. Injectable, so tests capture output without a process
/// (SwiftFormat's print closures); `standard` writes to the real stdout and stderr.
public struct CommandIO: Sendable {
  /// Writes text to standard output (already newline-terminated).
  public var writeOutput: @Sendable (String) -> Void
  /// Writes UTF-8 bytes to standard output, when the output takes them as they are (the real
  /// stdout): a long report's chunks are not made into strings first. Nil: `writeOutput`.
  public var writeOutputBytes: (@Sendable ([UInt8]) -> Void)?
  /// Writes text to standard error.
  public var writeError: @Sendable (String) -> Void
  /// Whether standard error is a terminal (progress is shown only there).
  public var isErrorTerminal: Bool
  /// Whether standard output is a terminal (colour is used only there, by default).
  public var isOutputTerminal: Bool
  /// Reads an environment variable (injectable for tests).
  public var environment: @Sendable (String) -> String?

  public init(writeOutput: @escaping @Sendable (String) -> Void, writeError: @escaping @Sendable (String) -> Void,
              isErrorTerminal: Bool = false, isOutputTerminal: Bool = false,
              environment: @escaping @Sendable (String) -> String? = { Syscalls.environment($0) }) {
    self.writeOutput = writeOutput
    self.writeError = writeError
    self.isErrorTerminal = isErrorTerminal
    self.isOutputTerminal = isOutputTerminal
    self.environment = environment
  }

  /// The process's stdout and stderr, written with write(2) and nothing buffered, so a consumer
  /// such as `jq` sees NDJSON lines as they are made (and text from the two never interleaves
  /// out of order). Each call writes whole lines: the NDJSON stream hands over 64 KiB chunks.
  public static func standard() -> CommandIO {
    let lock = Lock()
    var io = CommandIO(
      writeOutput: { text in
        lock.lock()
        try? Syscalls.writeAll(.standardOutput, Array(text.utf8), displayPath: "standard output")
        lock.unlock()
      },
      writeError: { text in
        lock.lock()
        try? Syscalls.writeAll(.standardError, Array(text.utf8), displayPath: "standard error")
        lock.unlock()
      },
      isErrorTerminal: Syscalls.isStandardErrorATerminal && Syscalls.environment("TERM") != "dumb",
      isOutputTerminal: Syscalls.isStandardOutputATerminal)
    io.writeOutputBytes = { bytes in
      lock.lock()
      try? Syscalls.writeAll(.standardOutput, bytes, displayPath: "standard output")
      lock.unlock()
    }
    return io
  }

  /// `appdata: error: MESSAGE` on one line. Every error and warning is written here, and here
  /// any control character left in it is escaped (`TerminalText.controlsEscaped`): input text a
  /// message quotes can neither break the line nor reach the terminal raw.
  func error(_ message: String) {
    writeError("\(AppDataVersion.name): error: \(TerminalText.controlsEscaped(message))\n")
  }

  /// `appdata: warning: MESSAGE` on one line, escaped as `error` escapes it.
  func warning(_ message: String) {
    writeError("\(AppDataVersion.name): warning: \(TerminalText.controlsEscaped(message))\n")
  }
}
