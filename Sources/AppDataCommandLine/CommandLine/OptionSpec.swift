import AppDataSystem
import AppDataKit
/// One command-line option as data: spelling, kind and help. The parser, the help text,
/// the man page and the docs test all read the same table (swift-driver's approach).
package struct OptionSpec: Sendable, Hashable {
  /// What the option takes.
  package enum Kind: Sendable, Hashable {
    /// A switch; `negatable` adds `--no-NAME`, and the last of the two wins.
    case flag(negatable: Bool)
    /// A value, shown as `metavar` in help; `choices` (if any) are checked by the parser.
    case value(metavar: String, choices: [String]?)
  }

  /// The long name (`max-file-size`, without dashes, as `key.rawValue`).
  package let key: OptionName
  package var name: String { key.rawValue }
  /// The short letter, if any (`j` for `-j`).
  package let short: Character?
  package let kind: Kind
  /// One line for `--help` and the man page.
  package let help: String
  /// Whether giving it more than once accumulates values (else the last one wins).
  package let isRepeatable: Bool
  /// Not shown in help (test hooks).
  package let isHidden: Bool

  package init(_ key: OptionName, short: Character? = nil, kind: Kind, help: String,
              repeatable: Bool = false, hidden: Bool = false) {
    self.key = key
    self.short = short
    self.kind = kind
    self.help = help
    self.isRepeatable = repeatable
    self.isHidden = hidden
  }

  package static func flag(_ key: OptionName, short: Character? = nil, negatable: Bool = false, help: String, hidden: Bool = false) -> OptionSpec {
    OptionSpec(key, short: short, kind: .flag(negatable: negatable), help: help, hidden: hidden)
  }

  package static func value(_ key: OptionName, short: Character? = nil, metavar: String, choices: [String]? = nil,
                           help: String, repeatable: Bool = false, hidden: Bool = false) -> OptionSpec {
    OptionSpec(key, short: short, kind: .value(metavar: metavar, choices: choices), help: help,
               repeatable: repeatable, hidden: hidden)
  }

  /// `--help`, on every command.
  package static let help = OptionSpec.flag(.help, short: "h", help: "Show this help and exit.")

  package var takesValue: Bool {
    if case .value = kind { return true }
    return false
  }

  package var metavar: String? {
    if case .value(let metavar, _) = kind { return metavar }
    return nil
  }

  package var choices: [String]? {
    if case .value(_, let choices) = kind { return choices }
    return nil
  }

  package var isNegatable: Bool {
    if case .flag(let negatable) = kind { return negatable }
    return false
  }

  /// `-j, --jobs N` as help shows it.
  package var synopsis: String {
    var text = short.map { "-\($0), " } ?? "    "
    text += "--" + (isNegatable ? "[no-]" : "") + name
    if let metavar { text += " " + metavar }
    return text
  }
}

/// Options of one command that cannot be given together, or one that needs another: the
/// parser refuses the command line, naming both, rather than drop one without a word (an
/// explicit `--config FILE` beside `--no-config` was ignored before; issue 32).
package struct OptionRule: Sendable {
  package enum Kind: Sendable {
    /// At most one of these.
    case exclusive([OptionName])
    /// `option` only with one of `needs`.
    case requires(OptionName, needs: [OptionName])
  }

  package let kind: Kind
  /// Why, after the options are named: `--no-config ignores every policy file`.
  package let reason: String

  package static func exclusive(_ names: OptionName..., because reason: String) -> OptionRule {
    OptionRule(kind: .exclusive(names), reason: reason)
  }

  package static func requires(_ name: OptionName, _ needs: OptionName..., because reason: String) -> OptionRule {
    OptionRule(kind: .requires(name, needs: needs), reason: reason)
  }

  /// One line for help and the man page: `--config or --no-config, not both (why)`.
  package var summary: String {
    switch kind {
    case .exclusive(let names): return names.map { "--" + $0.rawValue }.joined(separator: " or ") + ", not both (\(reason))"
    case .requires(let name, let needs): return "--\(name.rawValue) only with " + needs.map { "--" + $0.rawValue }.joined(separator: " or ") + " (\(reason))"
    }
  }

  /// The usage error for these arguments, if they break the rule.
  func violation(in parsed: ParsedArguments) -> UsageError? {
    switch kind {
    case .exclusive(let names):
      let given = parsed.order.reduce(into: [String]()) { seen, name in
        if names.contains(name) && !seen.contains(name.rawValue) { seen.append(name.rawValue) }
      }
      guard given.count > 1 else { return nil }
      return UsageError("'--\(given[0])' and '--\(given[1])' cannot be given together: \(reason)")
    case .requires(let name, let needs):
      guard parsed.contains(name), !needs.contains(where: parsed.contains) else { return nil }
      return UsageError("'--\(name.rawValue)' needs " + needs.map { "'--\($0.rawValue)'" }.joined(separator: " or ") + ": \(reason)")
    }
  }
}

/// A command: its name, what it does, its options and its operands.
package struct CommandSpec: Sendable {
  package let name: String
  /// One line, for `appdata --help`.
  package let summary: String
  /// The operands after the options, as help shows them (`PATH`, `PATH...`).
  package let operands: String
  package let minimumOperands: Int
  package let maximumOperands: Int?
  /// Paragraphs after the usage line.
  package let discussion: [String]
  package let options: [OptionSpec]
  /// Lines describing exit statuses.
  package let exitStatus: [String]
  /// Options that exclude each other, or need another (checked by the parser, listed in help).
  package let rules: [OptionRule]

  package init(name: String, summary: String, operands: String, minimumOperands: Int, maximumOperands: Int?,
              discussion: [String], options: [OptionSpec], exitStatus: [String], rules: [OptionRule] = []) {
    self.rules = rules
    self.name = name
    self.summary = summary
    self.operands = operands
    self.minimumOperands = minimumOperands
    self.maximumOperands = maximumOperands
    self.discussion = discussion
    self.options = options + [.help]
    self.exitStatus = exitStatus
  }

  /// `appdata audit [OPTIONS] PATH`.
  package var usage: String {
    "\(AppDataVersion.name) \(name) [OPTIONS]" + (operands.isEmpty ? "" : " " + operands)
  }
}
