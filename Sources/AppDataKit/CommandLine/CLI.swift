/// The command line: parse, dispatch to a command, map the outcome to an exit status.
/// `main.swift` is `exit(CLI.run(CommandLine.arguments, io: .standard()).rawValue)`.
public enum CLI {
  /// Runs `arguments` (argv, program name first) and returns the exit status.
  public static func run(_ arguments: [String], io: CommandIO) -> ExitCode {
    let rest = Array(arguments.dropFirst())
    guard let first = rest.first else {
      io.writeError(HelpFormatter.overview())
      return .usage
    }
    switch first {
    case "-h", "--help":
      io.writeOutput(HelpFormatter.overview())
      return .success
    case "-V", "--version":
      io.writeOutput("\(AppDataVersion.name) \(AppDataVersion.current)\n")
      return .success
    case "help":
      return help(Array(rest.dropFirst()), io: io)
    case "_docs":
      return generatedDocument(Array(rest.dropFirst()), io: io)
    default:
      break
    }
    guard let command = Commands.all.first(where: { $0.name == first }) else {
      if first.hasPrefix("-") {
        let names = Commands.global.map { "--" + $0.name }
        var message = "unknown option '\(TerminalText.escaped(first))'"
        if let suggestion = Suggestion.nearest(to: first, among: names) { message += "; did you mean '\(suggestion)'?" }
        io.error(message + "; a command comes first, see '\(AppDataVersion.name) --help'")
      } else {
        var message = "unknown command '\(TerminalText.escaped(first))'"
        if let suggestion = Suggestion.nearest(to: first, among: Commands.all.map(\.name) + ["help"]) {
          message += "; did you mean '\(suggestion)'?"
        }
        io.error(message + "; see '\(AppDataVersion.name) --help'")
      }
      return .usage
    }

    let parsed: ParsedArguments
    do {
      parsed = try ArgumentParser(command: command).parse(Array(rest.dropFirst()), indexOffset: 2)
    } catch {
      io.error(error.message)
      return .usage
    }
    if parsed.flag("help") {
      io.writeOutput(HelpFormatter.help(for: command))
      return .success
    }
    do throws(UsageError) {
      switch command.name {
      case "audit": return try AuditCommand(parsed).run(io: io)
      case "migrate": return try MigrateCommand(parsed).run(io: io)
      case "exclude": return MarkerCommands.exclude(parsed, io: io)
      case "include": return MarkerCommands.include(parsed, io: io)
      case "init-config": return try InitConfigCommand(parsed).run(io: io)
      case "completion":
        guard let script = CompletionScripts.script(for: parsed.operands[0]) else {
          var message = "unknown shell '\(TerminalText.escaped(parsed.operands[0]))': expected bash, zsh or fish"
          if let suggestion = Suggestion.nearest(to: parsed.operands[0], among: CompletionScripts.shells) { message += "; did you mean '\(suggestion)'?" }
          throw UsageError(message)
        }
        io.writeOutput(script)
        return .success
      default: return MarkerCommands.status(parsed, io: io)
      }
    } catch {
      io.error(error.message)
      return .usage
    }
  }

  private static func help(_ arguments: [String], io: CommandIO) -> ExitCode {
    guard let name = arguments.first else {
      io.writeOutput(HelpFormatter.overview())
      return .success
    }
    if arguments.count > 1 {
      io.error("'\(AppDataVersion.name) help' takes one command name")
      return .usage
    }
    guard let command = Commands.all.first(where: { $0.name == name }) else {
      var message = "unknown command '\(TerminalText.escaped(name))'"
      if let suggestion = Suggestion.nearest(to: name, among: Commands.all.map(\.name)) {
        message += "; did you mean '\(suggestion)'?"
      }
      io.error(message)
      return .usage
    }
    io.writeOutput(HelpFormatter.help(for: command))
    return .success
  }

  /// `appdata _docs man|rules`: the generated documents (used by `make docs` and the docs test).
  private static func generatedDocument(_ arguments: [String], io: CommandIO) -> ExitCode {
    switch arguments.first {
    case "man": io.writeOutput(HelpFormatter.manPage())
    case "rules": io.writeOutput(RulesDocument.markdown())
    default:
      io.error("'_docs' takes man or rules")
      return .usage
    }
    return .success
  }
}

extension ParsedArguments {
  /// A non-negative integer option, or a usage error naming it.
  func integer(_ name: String, minimum: Int = 0, maximum: Int = Int.max) throws(UsageError) -> Int? {
    guard let text = value(name) else { return nil }
    guard let number = Int(text), number >= minimum, number <= maximum else {
      var range = "an integer of at least \(minimum)"
      if maximum != Int.max { range = "an integer from \(minimum) to \(maximum)" }
      throw UsageError("invalid value '\(TerminalText.escaped(text))' for '--\(name)': expected \(range)")
    }
    return number
  }

  /// A size option (`10M`, `1.5G`, `500kB`), or a usage error naming it.
  func size(_ name: String) throws(UsageError) -> UInt64? {
    guard let text = value(name) else { return nil }
    guard let bytes = ByteSize.parse(text) else {
      throw UsageError("invalid size '\(TerminalText.escaped(text))' for '--\(name)': expected bytes or a number with a unit such as 500K, 10MB, 1.5G or 2GiB")
    }
    return bytes
  }
}
