import AppDataSystem
import AppDataKit

/// Where a command's output goes. Injectable, so tests capture output without a process
/// (SwiftFormat's print closures); `standard` writes to the real stdout and stderr.
package struct CommandIO: Sendable {
  /// Writes text to standard output (already newline-terminated).
  package var writeOutput: @Sendable (String) -> Void
  /// Writes UTF-8 bytes to standard output, when the output takes them as they are (the real
  /// stdout): a long report's chunks are not made into strings first. Nil: `writeOutput`.
  package var writeOutputBytes: (@Sendable ([UInt8]) -> Void)?
  /// Writes text to standard error.
  package var writeError: @Sendable (String) -> Void
  /// Whether standard error is a terminal (progress is shown only there).
  package var isErrorTerminal: Bool
  /// Whether standard output is a terminal (colour is used only there, by default).
  package var isOutputTerminal: Bool
  /// The terminal's width when standard output is one (tables are fitted to it); nil otherwise.
  package var outputWidth: Int?
  /// Reads an environment variable (injectable for tests).
  package var environment: @Sendable (String) -> String?
  /// The first write to standard output that failed (a full disk, a closed stdout, a reader
  /// gone), or nil. Every later write is skipped, and the run fails at its end (`CLI.run`):
  /// never exit 0 with a report cut short.
  package var outputFailure: @Sendable () -> SystemError? = { nil }
  /// The first write to standard error that failed (a warning or an error line lost), or nil.
  package var errorFailure: @Sendable () -> SystemError? = { nil }

  package init(writeOutput: @escaping @Sendable (String) -> Void, writeError: @escaping @Sendable (String) -> Void,
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
  /// A stdout or stderr that was closed when appdata started (`>&-`) is held on /dev/null, and
  /// its first write fails as a write to it would have (EBADF).
  package static func standard() -> CommandIO {
    let closed = Syscalls.reserveStandardDescriptors()
    // One lock for both, so that text from the two never interleaves out of order.
    let sinks = Locked((output: OutputSink(name: "standard output", closedAtStart: closed[1]),
                        error: OutputSink(name: "standard error", closedAtStart: closed[2])))
    var io = CommandIO(
      writeOutput: { text in
        sinks.withLock { $0.output.write { () throws(SystemError) in try Syscalls.writeAll(.standardOutput, Array(text.utf8), displayPath: "standard output") } }
      },
      writeError: { text in
        sinks.withLock { $0.error.write { () throws(SystemError) in try Syscalls.writeAll(.standardError, Array(text.utf8), displayPath: "standard error") } }
      },
      isErrorTerminal: Syscalls.isStandardErrorATerminal && Syscalls.environment("TERM") != "dumb",
      isOutputTerminal: Syscalls.isStandardOutputATerminal)
    io.outputWidth = Syscalls.outputTerminalWidth()
    io.writeOutputBytes = { bytes in
      sinks.withLock { $0.output.write { () throws(SystemError) in try Syscalls.writeAll(.standardOutput, bytes, displayPath: "standard output") } }
    }
    io.outputFailure = { sinks.withLock { $0.output.failure } }
    io.errorFailure = { sinks.withLock { $0.error.failure } }
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

/// The first failed write to standard output (or error); the writes after it are skipped.
struct OutputSink: Sendable {
  let name: String
  var failure: SystemError?
  /// The descriptor was closed when the process started.
  let closedAtStart: Bool

  init(name: String, closedAtStart: Bool) {
    self.name = name
    self.closedAtStart = closedAtStart
  }

  mutating func write(_ body: () throws(SystemError) -> Void) {
    guard failure == nil else { return }
    if closedAtStart {
      failure = SystemError(errno: .badFileDescriptor, operation: .write, path: name)
      return
    }
    do { try body() } catch { failure = error }
  }
}
