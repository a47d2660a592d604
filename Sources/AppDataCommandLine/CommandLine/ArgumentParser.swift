import AppDataSystem
import AppDataKit
/// What the parser found: option values by long name, and the operands.
package struct ParsedArguments: Sendable {
  /// For each value option given, its values in command-line order.
  package private(set) var values: [OptionName: [String]] = [:]
  /// For each flag given, its final state (the last of `--x` / `--no-x` wins).
  package private(set) var flags: [OptionName: Bool] = [:]
  /// Operands, in order.
  package private(set) var operands: [String] = []
  /// The options in the order they were given (for "which came last" questions).
  package private(set) var order: [OptionName] = []

  /// The last value of a value option, or nil if absent.
  package func value(_ name: OptionName) -> String? { values[name]?.last }
  /// Every value of a repeatable option.
  package func allValues(_ name: OptionName) -> [String] { values[name] ?? [] }
  /// Whether a flag ended up on.
  package func flag(_ name: OptionName) -> Bool { flags[name] ?? false }
  /// Whether the option (flag or value) appeared at all.
  package func contains(_ name: OptionName) -> Bool { values[name] != nil || flags[name] != nil }

  mutating func add(_ option: OptionSpec, value: String) {
    if option.isRepeatable { values[option.key, default: []].append(value) } else { values[option.key] = [value] }
    order.append(option.key)
  }

  mutating func set(_ option: OptionSpec, _ state: Bool) {
    flags[option.key] = state
    order.append(option.key)
  }

  mutating func addOperand(_ operand: String) { operands.append(operand) }
}

/// GNU-style parsing of one command's arguments against its option table:
/// `--opt=value` and `--opt value`, unambiguous prefixes of long names (`--max-f`),
/// `-j4` and `-j 4`, bundled short flags (`-qb`), options after operands, `--` to end options,
/// `-` as an operand. One loop switching on the option's kind.
package struct ArgumentParser {
  package let command: CommandSpec

  package init(command: CommandSpec) { self.command = command }

  /// Parses `arguments` (without the program and command names). `indexOffset` is added to
  /// error indexes so they point into the full argv.
  package func parse(_ arguments: [String], indexOffset: Int = 0) throws(UsageError) -> ParsedArguments {
    var result = ParsedArguments()
    var index = 0
    var optionsEnded = false
    while index < arguments.count {
      let argument = arguments[index]
      let argvIndex = index + indexOffset
      if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
        if !optionsEnded, Self.isSizeUnit(argument), let (option, value) = sizeOption(before: index, in: arguments) {
          // `--max-file-size 5 MB`: the unit would be taken for PATH ("MB: no such file").
          throw UsageError("'--\(option) \(TerminalText.escaped(value)) \(TerminalText.escaped(argument))': a size is one word; write '--\(option) \(TerminalText.escaped(value + argument))'",
                           argumentIndex: argvIndex)
        }
        result.addOperand(argument)
      } else if argument == "--" {
        optionsEnded = true
      } else if argument.hasPrefix("--") {
        index = try parseLong(argument, at: index, in: arguments, argvIndex: argvIndex, into: &result)
      } else {
        index = try parseShortCluster(argument, at: index, in: arguments, argvIndex: argvIndex, into: &result)
      }
      index += 1
    }
    if result.flag(.help) { return result }
    for rule in command.rules {
      if let violation = rule.violation(in: result) { throw violation }
    }
    try checkOperands(result.operands, argumentCount: arguments.count + indexOffset)
    return result
  }

  // MARK: - Long options

  private func parseLong(_ argument: String, at index: Int, in arguments: [String], argvIndex: Int,
                         into result: inout ParsedArguments) throws(UsageError) -> Int {
    let body = argument.dropFirst(2)
    let name: String
    let inlineValue: String?
    if let equals = body.firstIndex(of: "=") {
      name = String(body[..<equals])
      inlineValue = String(body[body.index(after: equals)...])
    } else {
      name = String(body)
      inlineValue = nil
    }
    let (option, negated) = try resolveLong(name, argvIndex: argvIndex)
    if option.takesValue {
      if let inlineValue {
        result.add(option, value: try checkedValue(inlineValue, for: option, argvIndex: argvIndex))
        return index
      }
      guard index + 1 < arguments.count else {
        throw UsageError("option '--\(option.name)' needs a value (\(option.metavar!))", argumentIndex: argvIndex)
      }
      result.add(option, value: try checkedValue(arguments[index + 1], for: option, argvIndex: argvIndex + 1))
      return index + 1
    }
    if inlineValue != nil {
      throw UsageError("option '--\(negated ? "no-" : "")\(option.name)' takes no value", argumentIndex: argvIndex)
    }
    result.set(option, !negated)
    return index
  }

  /// The size option (and its value) that ends just before `index`: `--NAME VALUE` or
  /// `--NAME=VALUE`, NAME taking a SIZE.
  private func sizeOption(before index: Int, in arguments: [String]) -> (String, String)? {
    func sizeName(_ typed: Substring) -> String? {
      guard let option = try? resolveLong(String(typed), argvIndex: 0).0, option.metavar == "SIZE" else { return nil }
      return option.name
    }
    if index >= 1, arguments[index - 1].hasPrefix("--"), let equals = arguments[index - 1].firstIndex(of: "=") {
      let typed = arguments[index - 1]
      if let name = sizeName(typed.dropFirst(2)[..<equals]) { return (name, String(typed[typed.index(after: equals)...])) }
    }
    if index >= 2, arguments[index - 2].hasPrefix("--"), let name = sizeName(arguments[index - 2].dropFirst(2)) {
      return (name, arguments[index - 1])
    }
    return nil
  }

  /// A word that is only a size's unit (`MB`, `KiB`, `bytes`), as when a size is typed in two.
  static func isSizeUnit(_ word: String) -> Bool {
    ["b", "byte", "bytes", "k", "kb", "kib", "m", "mb", "mib", "g", "gb", "gib", "t", "tb", "tib"].contains(word.lowercased())
  }

  /// Exact name, `no-NAME` of a negatable flag, or an unambiguous prefix.
  private func resolveLong(_ name: String, argvIndex: Int) throws(UsageError) -> (OptionSpec, negated: Bool) {
    var spellings: [(spelling: String, option: OptionSpec, negated: Bool)] = []
    for option in command.options {
      spellings.append((option.name, option, false))
      if option.isNegatable { spellings.append(("no-" + option.name, option, true)) }
    }
    if let exact = spellings.first(where: { $0.spelling == name }) { return (exact.option, exact.negated) }
    if name == "password" && command.options.contains(where: { $0.name == "password-file" }) {
      throw UsageError("there is no '--password': a password is never an option's value, which the shell's history and ps would keep; "
                       + "give it with '--password-file FILE', '--password-stdin', or \(BackupReader.passwordVariable), or type it at the prompt",
                       argumentIndex: argvIndex)
    }
    let prefixed = name.isEmpty ? [] : spellings.filter { $0.spelling.hasPrefix(name) }
    if prefixed.count == 1 { return (prefixed[0].option, prefixed[0].negated) }
    if prefixed.count > 1 {
      let names = prefixed.map { "'--\($0.spelling)'" }.joined(separator: ", ")
      throw UsageError("option '--\(name)' is ambiguous: it could be \(names)", argumentIndex: argvIndex)
    }
    var message = "unknown option '--\(TerminalText.escaped(name))' for '\(AppDataVersion.name) \(command.name)'"
    let visible = spellings.filter { !$0.option.isHidden }.map(\.spelling)
    if let suggestion = Suggestion.nearest(to: name, among: visible) {
      message += "; did you mean '--\(suggestion)'?"
    }
    throw UsageError(message, argumentIndex: argvIndex)
  }

  // MARK: - Short options

  private func parseShortCluster(_ argument: String, at index: Int, in arguments: [String], argvIndex: Int,
                                 into result: inout ParsedArguments) throws(UsageError) -> Int {
    var letters = Substring(argument.dropFirst())
    while let letter = letters.first {
      letters = letters.dropFirst()
      guard let option = command.options.first(where: { $0.short == letter }) else {
        var message = "unknown option '-\(TerminalText.escaped(String(letter)))' for '\(AppDataVersion.name) \(command.name)'"
        if let long = command.options.first(where: { !$0.isHidden && $0.name.first == letter }) {
          message += "; did you mean '--\(long.name)'?"
        }
        throw UsageError(message, argumentIndex: argvIndex)
      }
      if option.takesValue {
        if !letters.isEmpty {
          result.add(option, value: try checkedValue(String(letters), for: option, argvIndex: argvIndex))
          return index
        }
        guard index + 1 < arguments.count else {
          throw UsageError("option '-\(letter)' needs a value (\(option.metavar!))", argumentIndex: argvIndex)
        }
        result.add(option, value: try checkedValue(arguments[index + 1], for: option, argvIndex: argvIndex + 1))
        return index + 1
      }
      result.set(option, true)
    }
    return index
  }

  // MARK: - Values and operands

  /// Checks a value against the option's choices (a comma-separated list for repeatable options).
  private func checkedValue(_ value: String, for option: OptionSpec, argvIndex: Int) throws(UsageError) -> String {
    guard let choices = option.choices else { return value }
    let parts = option.isRepeatable ? value.split(separator: ",", omittingEmptySubsequences: false).map(String.init) : [value]
    for part in parts where !choices.contains(part) {
      var message = "invalid value '\(TerminalText.escaped(part))' for '--\(option.name)': expected "
      message += choices.count == 1 ? choices[0] : choices.dropLast().joined(separator: ", ") + " or " + choices.last!
      if let suggestion = Suggestion.nearest(to: part, among: choices) { message += "; did you mean '\(suggestion)'?" }
      throw UsageError(message, argumentIndex: argvIndex)
    }
    return value
  }

  private func checkOperands(_ operands: [String], argumentCount: Int) throws(UsageError) {
    if operands.count < command.minimumOperands {
      throw UsageError("'\(AppDataVersion.name) \(command.name)' needs \(command.operands); see '\(AppDataVersion.name) \(command.name) --help'")
    }
    if let maximum = command.maximumOperands, operands.count > maximum {
      let extra = operands[maximum]
      throw UsageError("unexpected argument '\(TerminalText.escaped(extra))': '\(AppDataVersion.name) \(command.name)' takes \(command.operands)")
    }
  }
}
