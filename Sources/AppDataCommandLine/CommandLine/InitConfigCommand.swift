import AppDataSystem
import AppDataKit
/// `appdata init-config`: a starting policy file from the container's current figures.
struct InitConfigCommand: RefusingCommand {
  let path: String
  let output: String
  let headroom: Int
  let force: Bool
  let quiet: Bool

  init(_ parsed: ParsedArguments) throws(UsageError) {
    path = parsed.operands[0]
    output = try parsed.outputName(or: AuditPolicy.defaultFileName)
    headroom = try parsed.integer(.headroom, minimum: PolicyDraft.headrooms.lowerBound, maximum: PolicyDraft.headrooms.upperBound) ?? 20
    force = parsed.flag(.force)
    quiet = parsed.flag(.quiet)
  }

  func run(io: CommandIO) throws(Refusal) -> ExitCode {
    let draft = try PolicyDraft(path: path, headroom: headroom) { () throws(Refusal) in
      if !force, (try? Syscalls.status(ofPath: output)) != nil {
        throw Refusal(.conflict, path: output, "already exists; give --force to replace it, or --output FILE")
      }
    }
    return try write(draft.document, io: io, saying: "Wrote \(TerminalText.escaped(output)): maxBackupSize \(ByteSize.written(draft.maxBackupSize)), "
                      + "maxFileSize \(ByteSize.written(draft.maxFileSize)) (current figures + \(headroom)%)"
                      + (draft.note.map { ", " + $0 } ?? "") + "\n")
  }

  /// Writes the policy file, complete or not at all (a hidden file beside it, renamed over it
  /// once written), then, unless quiet, `line` and, for the default name, that every later
  /// audit in this folder reads it (issue 41).
  private func write(_ document: JSONValue, io: CommandIO, saying line: @autoclosure () -> String) throws(Refusal) -> ExitCode {
    let text = document.serialized(pretty: true) + "\n"
    do {
      let file = try ReplacingFile(path: output)
      file.write(Array(text.utf8))
      try file.commit()
    } catch where error.operation == .writeReport {
      throw Refusal(.cannotWrite, path: output, ReplacingFile.problem(error, writing: "the policy file", notAFile: "give the policy file a file's name", shown: TerminalText.escaped))
    } catch {
      throw Refusal(.cannotWrite, path: output, "cannot write: \(error.reason); it was left as it was")
    }
    if quiet { return .success }
    io.writeOutput(line())
    if output == AuditPolicy.defaultFileName {
      io.writeOutput("Every 'appdata audit' run in this folder now applies it, and names it on its report's Policy line ('--no-config' to not).\n")
    }
    return .success
  }
}
