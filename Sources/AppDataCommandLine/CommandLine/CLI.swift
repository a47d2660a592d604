import AppDataSystem
import AppDataKit
/// A command built from its parsed options, whose run may refuse (audit, migrate, extract,
/// restore, init-config): `CLI` builds it, runs it, and turns its refusal into exit 2.
protocol RefusingCommand {
  init(_ parsed: ParsedArguments) throws(UsageError)
  func run(io: CommandIO) throws(Refusal) -> ExitCode
}

/// The command line: parse, dispatch to a command, map the outcome to an exit status.
/// `main.swift` is `exit(CLI.run(CommandLine.arguments, io: .standard()).rawValue)`.
package enum CLI {
  /// What a command line asks for, worked out without running anything.
  package enum Invocation {
    /// Print this text to standard output and exit with this status (help, version).
    case text(String, ExitCode)
    /// Help: the text for the terminal's width (nil: not a terminal), to standard output, exit 0.
    case help(@Sendable (Int?) -> String)
    /// A usage error: one line for `appdata: error:`, exit 2.
    case usage(String)
    /// A parsed and checked command, ready to run.
    case command((CommandIO) -> ExitCode)
  }

  /// Runs `arguments` (argv, program name first) and returns the exit status.
  package static func run(_ arguments: [String], io: CommandIO) -> ExitCode {
    let status: ExitCode
    switch prepare(arguments) {
    case .text(let text, let code):
      if code == .success { io.writeOutput(text) } else { io.writeError(text) }
      status = code
    case .help(let text):
      io.writeOutput(text(io.outputWidth))
      status = .success
    case .usage(let message):
      io.error(message)
      return .usage
    case .command(let run):
      status = run(io)
    }
    // Whatever the command decided, output that did not all go out fails the run.
    if let failure = io.outputFailure() {
      if failure.errno == .brokenPipe { return .brokenPipe }
      io.error("standard output: cannot write: \(failure.reason); the output is incomplete")
      return .usage
    }
    // A warning or an error line lost: a run that would have passed does not (nothing can say
    // why where it could not be written; a failing status already says it failed).
    if io.errorFailure() != nil && status == .success { return .usage }
    return status
  }

  /// Parses and checks a command line: everything `run` does before touching a container.
  /// Separate so that the parser can be fuzzed without side effects.
  package static func prepare(_ arguments: [String]) -> Invocation {
    let rest = Array(arguments.dropFirst())
    guard let first = rest.first else { return .text(HelpFormatter.overview(), .usage) }
    switch first {
    case "-h", "--help": return .help { HelpFormatter.overview(width: $0) }
    case "-V", "--version": return .text("\(AppDataVersion.name) \(AppDataVersion.current)\n", .success)
    case "help": return help(Array(rest.dropFirst()))
    case "_docs": return generatedDocument(Array(rest.dropFirst()))
    default: break
    }
    guard let command = Commands.all.first(where: { $0.name == first }) else {
      if first.hasPrefix("-") {
        let names = Commands.global.map { "--" + $0.name }
        var message = "unknown option '\(TerminalText.escaped(first))'"
        if let suggestion = Suggestion.nearest(to: first, among: names) { message += " (did you mean '\(suggestion)'?)" }
        return .usage(message + "; a command comes first, see '\(AppDataVersion.name) --help'")
      }
      var message = "unknown command '\(TerminalText.escaped(first))'"
      if let suggestion = Suggestion.nearest(to: first, among: Commands.all.map(\.name) + ["help"]) {
        message += " (did you mean '\(suggestion)'?)"
      }
      return .usage(message + "; see '\(AppDataVersion.name) --help'")
    }
    do throws(UsageError) {
      let parsed = try ArgumentParser(command: command).parse(Array(rest.dropFirst()), indexOffset: 2)
      if parsed.flag(.help) { return .help { HelpFormatter.help(for: command, width: $0) } }
      return .command(try runner(for: command, parsed))
    } catch {
      return .usage(error.message)
    }
  }

  /// Builds (and so checks) the command; the closure does the work.
  private static func runner(for command: CommandSpec, _ parsed: ParsedArguments) throws(UsageError) -> (CommandIO) -> ExitCode {
    // The command built now (its usage errors thrown); its refusal, when it runs, is its
    // message and exit 2.
    func guarded<Command: RefusingCommand>(_: Command.Type) throws(UsageError) -> (CommandIO) -> ExitCode {
      let built = try Command(parsed)
      return { io in
        do throws(Refusal) {
          return try built.run(io: io)
        } catch {
          io.error(error.message)
          return .usage
        }
      }
    }
    switch command.name {
    case "audit": return try guarded(AuditCommand.self)
    case "migrate": return try guarded(MigrateCommand.self)
    case "extract": return try guarded(ExtractCommand.self)
    case "restore": return try guarded(RestoreCommand.self)
    case "exclude": return { io in MarkerCommands.exclude(parsed, io: io) }
    case "include": return { io in MarkerCommands.include(parsed, io: io) }
    case "status": return { io in MarkerCommands.status(parsed, io: io) }
    case "init-config": return try guarded(InitConfigCommand.self)
    default:
      guard let script = CompletionScripts.script(for: parsed.operands[0]) else {
        var message = "unknown shell '\(TerminalText.escaped(parsed.operands[0]))': expected bash, zsh or fish"
        if let suggestion = Suggestion.nearest(to: parsed.operands[0], among: CompletionScripts.shells) { message += "; did you mean '\(suggestion)'?" }
        throw UsageError(message)
      }
      return { io in
        io.writeOutput(script)
        return .success
      }
    }
  }

  private static func help(_ arguments: [String]) -> Invocation {
    guard let name = arguments.first else { return .help { HelpFormatter.overview(width: $0) } }
    if arguments.count > 1 { return .usage("'\(AppDataVersion.name) help' takes one command name") }
    guard let command = Commands.all.first(where: { $0.name == name }) else {
      var message = "unknown command '\(TerminalText.escaped(name))'"
      if let suggestion = Suggestion.nearest(to: name, among: Commands.all.map(\.name)) {
        message += "; did you mean '\(suggestion)'?"
      }
      return .usage(message)
    }
    return .help { HelpFormatter.help(for: command, width: $0) }
  }

  /// `appdata _docs man|rules`: the generated documents (used by `make docs` and the docs test).
  private static func generatedDocument(_ arguments: [String]) -> Invocation {
    switch arguments.first {
    case "man": return .text(HelpFormatter.manPage(), .success)
    case "rules": return .text(RulesDocument.markdown(), .success)
    default: return .usage("'_docs' takes man or rules")
    }
  }
}

extension ParsedArguments {
  /// Whether the output is JSON: the last of `--format` and `--json` decides (`--format table
  /// --json` is JSON, `--json --format table` is not).
  var asksForJSON: Bool {
    let last = order.last { $0 == .format || $0 == .json }
    return last == .json ? flag(.json) : value(.format) == "json"
  }

  /// `--output NAME`, else `fallback`; an empty name is a usage error.
  func outputName(or fallback: String) throws(UsageError) -> String {
    let name = value(.output) ?? fallback
    if name.isEmpty { throw UsageError("'--output' needs a name") }
    return name
  }

  /// A non-negative integer option, or a usage error naming it.
  func integer(_ name: OptionName, minimum: Int = 0, maximum: Int = Int.max) throws(UsageError) -> Int? {
    guard let text = value(name) else { return nil }
    guard let number = Int(text), number >= minimum, number <= maximum else {
      var range = "an integer of at least \(minimum)"
      if maximum != Int.max { range = "an integer from \(minimum) to \(maximum)" }
      throw UsageError("invalid value '\(TerminalText.escaped(text))' for '--\(name.rawValue)': expected \(range)")
    }
    return number
  }

  /// `--root PATH-IN`: a folder inside PATH, as components without `.`; `..` is a usage error.
  func root(inside what: String) throws(UsageError) -> [[UInt8]]? {
    guard let text = value(.root) else { return nil }
    let components = RelativePath.components(Array(text.utf8))
    guard !components.contains([0x2E, 0x2E]) else {
      throw UsageError("invalid value '\(TerminalText.escaped(text))' for '--root': expected \(what), without '..'")
    }
    return components.filter { $0 != [0x2E] }
  }

  /// A size option (`10M`, `1.5G`, `500kB`), or a usage error naming it.
  func size(_ name: OptionName) throws(UsageError) -> UInt64? {
    guard let text = value(name) else { return nil }
    guard let bytes = ByteSize.parse(text) else {
      throw UsageError("invalid size '\(TerminalText.escaped(text))' for '--\(name.rawValue)': expected bytes or a number with a unit such as 500K, 10MB, 1.5G or 2GiB")
    }
    return bytes
  }
}
