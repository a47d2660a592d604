import AppDataSystem
import AppDataCore
import AppDataReaders
import AppDataReports
import AppDataMigration
/// Help text and the man page, generated from the option tables.
public enum HelpFormatter {
  /// `appdata --help`; with a `width` (a terminal's), no line is wider.
  public static func overview(width: Int? = nil) -> String {
    let terminal = width
    var lines = [
      "\(AppDataVersion.name) \(AppDataVersion.current): audit and migrate iOS app data containers for backup (QA1719).",
      "",
      "Usage: \(AppDataVersion.name) COMMAND [OPTIONS] [ARGUMENTS]",
      "",
      "Commands:",
    ]
    let width = Commands.all.map(\.name.count).max()! + 2
    let column = Commands.all.map(\.name.count).max()! + 2
    for command in Commands.all { lines += columned("  " + command.name.padding(column), command.summary, width: terminal) }
    lines += columned("  " + "help".padding(column), "Show help for a command.", width: terminal)
    lines.append("")
    lines.append("Options:")
    lines.append(contentsOf: optionLines(Commands.global, width: terminal))
    lines.append("")
    lines.append("Run '\(AppDataVersion.name) help COMMAND' or '\(AppDataVersion.name) COMMAND --help' for a command's options.")
    return fitted(lines, width: terminal)
  }

  /// What every command's exit status also means: its output did not all go out.
  static let outputStatus = [
    "2  also: standard output could not be written in full (a full disk, a closed stdout); one line on stderr says so",
    "141  standard output's reader went away (| head): the run ended quietly, as SIGPIPE ends a process",
  ]

  /// `appdata COMMAND --help`. With a `width` (a terminal's, as the tables are fitted to it),
  /// no line is wider: paragraphs are wrapped to it (78 at most), each option's help in its
  /// column (under the option when the column leaves too little), and any other line with a
  /// hanging indent. Without one (a pipe, a file), paragraphs at 78 and one line per option.
  public static func help(for command: CommandSpec, width: Int? = nil) -> String {
    var lines = ["Usage: \(command.usage)", "", command.summary]
    let paragraphWidth = min(78, width ?? 78)
    for paragraph in command.discussion { lines += ["", wrap(paragraph, width: paragraphWidth)] }
    lines += ["", "Options:"]
    lines += optionLines(command.options, width: width)
    if !command.rules.isEmpty {
      lines += ["", "Options that exclude each other, or need another:"]
      lines += command.rules.map { "  " + $0.summary }
    }
    lines += ["", "Exit status:"]
    lines += (command.exitStatus + outputStatus).map { "  " + $0 }
    return fitted(lines, width: width)
  }

  /// Every line no wider than `width` (a hanging indent of four where one is wrapped).
  static func fitted(_ lines: [String], width: Int?) -> String {
    let text = lines.joined(separator: "\n") + "\n"
    guard let width else { return text }
    return TextTable.wrapped(text, width: width)
  }

  /// `head` then `text`, the text wrapped in the column `head` ends at (to `width`); under it,
  /// indented by six, when that column leaves fewer than 24 characters.
  static func columned(_ head: String, _ text: String, width: Int?) -> [String] {
    guard let width, head.count + text.count > width else { return [head + text] }
    let column = head.count
    if width - column >= 24 {
      let wrapped = wrap(text, width: width - column).split(separator: "\n", omittingEmptySubsequences: false)
      return wrapped.enumerated().map { ($0.offset == 0 ? head : String(repeating: " ", count: column)) + $0.element }
    }
    let trimmed = String(head.reversed().drop { $0 == " " }.reversed())
    return [trimmed] + wrap(text, width: max(12, width - 6)).split(separator: "\n").map { "      " + $0 }
  }

  private static func optionLines(_ options: [OptionSpec], width terminal: Int? = nil) -> [String] {
    let visible = options.filter { !$0.isHidden }
    let width = min(30, (visible.map(\.synopsis.count).max() ?? 0) + 2)
    return visible.flatMap { option -> [String] in
      let synopsis = option.synopsis
      if synopsis.count + 2 > width {
        return ["  " + synopsis] + columned(String(repeating: " ", count: width + 2), option.help, width: terminal)
      }
      return columned("  " + synopsis.padding(width), option.help, width: terminal)
    }
  }

  static func wrap(_ text: String, width: Int) -> String {
    var lines: [String] = []
    var current = ""
    for word in text.split(separator: " ") {
      if !current.isEmpty && current.count + 1 + word.count > width {
        lines.append(current)
        current = ""
      }
      current += (current.isEmpty ? "" : " ") + word
    }
    if !current.isEmpty { lines.append(current) }
    return lines.joined(separator: "\n")
  }

  // MARK: - The man page (Docs/appdata.1)

  /// The whole man page in roff, generated from the same tables as `--help`.
  public static func manPage() -> String {
    var roff = [
      ".\\\" Generated by 'make docs' from the option tables in Sources/AppDataCommandLine/CommandLine. Do not edit.",
      ".TH APPDATA 1 \"\" \"appdata \(AppDataVersion.current)\" \"User Commands\"",
      // No hyphenation: names (APPDATA_BACKUP_PASSWORD, com.apple.metadata, ~/Library) are never split.
      ".nh",
      ".SH NAME",
      "appdata \\- audit and migrate iOS app data containers for backup",
      ".SH SYNOPSIS",
    ]
    for command in Commands.all {
      roff.append(".B appdata \(command.name)")
      roff.append("[\\fIOPTIONS\\fR] \(escape(command.operands))")
      roff.append(".br")
    }
    roff += [
      ".B appdata",
      "[\\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR]",
      ".SH DESCRIPTION",
      "appdata checks an app data container (Documents, Library, tmp) against Apple's backup rules (Technical Q&A QA1719):",
      "what the iCloud/iTunes backup would carry, which backed-up files are too large, and which markers are misused.",
      "It reads and writes the exclusion markers com.apple.metadata:com_apple_backup_excludeItem and com.apple.MobileBackup,",
      "with the user. prefix on Linux.",
      ".SH GLOBAL OPTIONS",
    ]
    for option in Commands.global { roff += manOption(option) }
    for command in Commands.all {
      roff.append(".SH COMMAND: \(command.name.uppercased())")
      roff.append(".B appdata \(command.name)")
      roff.append("[\\fIOPTIONS\\fR] \(escape(command.operands))")
      roff.append(".PP")
      roff.append(escape(command.summary))
      for paragraph in command.discussion {
        roff.append(".PP")
        roff.append(escape(paragraph))
      }
      roff.append(".SS Options")
      for option in command.options where !option.isHidden { roff += manOption(option) }
      if !command.rules.isEmpty {
        roff.append(".PP")
        roff.append("Options that exclude each other, or need another:")
        for rule in command.rules { roff += [".IP \\(bu 2", escape(rule.summary)] }
      }
      roff.append(".SS Exit status")
      for line in command.exitStatus + outputStatus {
        let parts = line.split(separator: " ", maxSplits: 1)
        roff += [".TP", ".B \(parts[0])", escape(parts.count > 1 ? parts[1].trimmingLeadingSpaces : "")]
      }
    }
    roff.append(".SH ENVIRONMENT")
    for (name, help) in Commands.environment { roff += [".TP", ".B \(name)", escape(help)] }
    roff += [
      ".SH EXAMPLES",
      "Fail a CI build whose backup is over 50 MB or holds a file over 5 MB:",
      ".PP",
      ".nf",
      "appdata audit \\-\\-max-backup-size 50MB \\-\\-max-file-size 5MB \"$CONTAINER\"",
      ".fi",
      ".PP",
      "The backed-up byte count, with jq:",
      ".PP",
      ".nf",
      "appdata audit \\-\\-json \"$CONTAINER\" | jq .summary.backup.bytes",
      ".fi",
      ".SH SEE ALSO",
      "tmutil(8), setfattr(1), getfattr(1); Docs/rules.md and Docs/audit.schema.json in the appdata sources.",
    ]
    return roff.joined(separator: "\n") + "\n"
  }

  private static func manOption(_ option: OptionSpec) -> [String] {
    var synopsis = option.short.map { "\\fB\\-\($0)\\fR, " } ?? ""
    synopsis += "\\fB\\-\\-" + (option.isNegatable ? "[no\\-]" : "") + escape(option.name) + "\\fR"
    if let metavar = option.metavar { synopsis += " \\fI\(metavar)\\fR" }
    return [".TP", synopsis, escape(option.help)]
  }

  private static func escape(_ text: String) -> String {
    var escaped = text.replacingAll("\\", with: "\\e").replacingAll("-", with: "\\-")
    if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
    return escaped
  }
}

extension StringProtocol {
  var trimmingLeadingSpaces: String { String(drop { $0 == " " }) }
}

