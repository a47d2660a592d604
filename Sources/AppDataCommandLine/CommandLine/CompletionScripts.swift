import AppDataSystem
import AppDataKit
/// Shell completion scripts, generated from the option tables (`appdata completion SHELL`).
package enum CompletionScripts {
  package static let shells = ["bash", "zsh", "fish"]

  package static func script(for shell: String) -> String? {
    switch shell {
    case "bash": return bash()
    case "zsh": return zsh()
    case "fish": return fish()
    default: return nil
    }
  }

  /// Option values that name files or folders get file completion.
  static func takesPath(_ option: OptionSpec) -> Bool {
    ["FILE", "DIR", "PATH", "BACKUP", "PATH-IN"].contains(option.metavar ?? "")
  }

  static var commandNames: [String] { Commands.all.map(\.name) + ["help"] }

  // MARK: - bash

  static func bash() -> String {
    var lines = [
      "# bash completion for appdata \(AppDataVersion.current), generated from its option tables.",
      "# Load it with: eval \"$(appdata completion bash)\" (macOS's bash 3.2 reads nothing from source <(...)).",
      "# Written for bash 3.2 and later (macOS's /bin/bash): nothing bash 4 added.",
      "# File names are split on newlines only, so names with spaces complete as one word.",
      "_appdata_files() {",
      "  local IFS=$'\\n'",
      "  COMPREPLY=($(compgen -f -- \"$1\"))",
      "}",
      "# With bash's default COMP_WORDBREAKS, --format=js is three words (--format, =, js); without",
      "# '=' there, one: then the value is completed after its --option= prefix.",
      "_appdata_prefix() { [ -n \"$prefix\" ] && COMPREPLY=(\"${COMPREPLY[@]/#/$prefix}\"); return 0; }",
      "_appdata() {",
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" prefix=\"\"",
      "  if [ \"$cur\" = \"=\" ]; then cur=\"\"; elif [ \"$prev\" = \"=\" ]; then prev=\"${COMP_WORDS[COMP_CWORD-2]}\";",
      "  elif [[ \"$cur\" == --*=* ]]; then prev=\"${cur%%=*}\"; prefix=\"${cur%%=*}=\"; cur=\"${cur#*=}\"; fi",
      "  if [ \"$COMP_CWORD\" -eq 1 ]; then",
      "    COMPREPLY=($(compgen -W \"\(commandNames.joined(separator: " ")) --help --version\" -- \"$cur\"))",
      "    return",
      "  fi",
      "  case \"${COMP_WORDS[1]}\" in",
    ]
    for command in Commands.all {
      let visible = command.options.filter { !$0.isHidden }
      lines.append("    \(command.name))")
      lines.append("      case \"$prev\" in")
      for option in visible where option.takesValue {
        let spellings = (["--" + option.name] + (option.short.map { ["-\($0)"] } ?? [])).joined(separator: "|")
        if let choices = option.choices {
          lines.append("        \(spellings)) COMPREPLY=($(compgen -W \"\(choices.joined(separator: " "))\" -- \"$cur\")); _appdata_prefix; return ;;")
        } else if takesPath(option) {
          lines.append("        \(spellings)) _appdata_files \"$cur\"; _appdata_prefix; return ;;")
        } else {
          lines.append("        \(spellings)) return ;;")
        }
      }
      lines.append("      esac")
      var words: [String] = []
      for option in visible {
        words.append("--" + option.name)
        if option.isNegatable { words.append("--no-" + option.name) }
      }
      let operands = command.name == "completion" ? "COMPREPLY=($(compgen -W \"\(shells.joined(separator: " "))\" -- \"$cur\"))" : "_appdata_files \"$cur\""
      lines.append("      if [[ \"$cur\" == -* ]]; then COMPREPLY=($(compgen -W \"\(words.joined(separator: " "))\" -- \"$cur\")); else \(operands); fi")
      lines.append("      ;;")
    }
    lines += [
      "    help) COMPREPLY=($(compgen -W \"\(Commands.all.map(\.name).joined(separator: " "))\" -- \"$cur\")) ;;",
      "  esac",
      "}",
      "complete -o filenames -F _appdata appdata",
    ]
    return lines.joined(separator: "\n") + "\n"
  }

  // MARK: - zsh

  static func zsh() -> String {
    var lines = [
      "#compdef appdata",
      "# zsh completion for appdata \(AppDataVersion.current), generated from its option tables.",
      "_appdata() {",
      "  local -a commands",
      "  commands=(",
    ]
    for command in Commands.all { lines.append("    '\(command.name):\(zshEscape(command.summary))'") }
    lines += ["    'help:Show help for a command.'", "  )", "  if (( CURRENT == 2 )); then", "    _describe 'command' commands", "    return", "  fi",
              "  case $words[2] in"]
    for command in Commands.all {
      lines.append("    \(command.name))")
      var specs: [String] = []
      for option in command.options where !option.isHidden {
        var action = ""
        if option.takesValue {
          if let choices = option.choices { action = ":\(option.metavar!):(\(choices.joined(separator: " ")))" }
          else if takesPath(option) { action = ":\(option.metavar!):_files" }
          else { action = ":\(option.metavar!): " }
        }
        let repeatable = option.isRepeatable ? "*" : ""
        // `--name=`: the value may follow in the same word (`--format=json`) or the next one.
        specs.append("'\(repeatable)--\(option.name)\(option.takesValue ? "=" : "")[\(zshEscape(option.help))]\(action)'")
        if let short = option.short { specs.append("'\(repeatable)-\(short)[\(zshEscape(option.help))]\(action)'") }
      }
      let operand = command.name == "completion" ? "'1:shell:(\(shells.joined(separator: " ")))'" : "'*:path:_files'"
      lines.append("      _arguments -s \(specs.joined(separator: " ")) \(operand)")
      lines.append("      ;;")
    }
    lines += ["    help) _describe 'command' commands ;;", "  esac", "}", "_appdata \"$@\""]
    return lines.joined(separator: "\n") + "\n"
  }

  static func zshEscape(_ text: String) -> String {
    text.replacingAll("'", with: "'\\''").replacingAll("[", with: "\\[").replacingAll("]", with: "\\]").replacingAll(":", with: "\\:")
  }

  // MARK: - fish

  static func fish() -> String {
    var lines = [
      "# fish completion for appdata \(AppDataVersion.current), generated from its option tables.",
      "complete -c appdata -f",
    ]
    let names = commandNames.joined(separator: " ")
    for command in Commands.all {
      lines.append("complete -c appdata -n 'not __fish_seen_subcommand_from \(names)' -a \(command.name) -d '\(fishEscape(command.summary))'")
    }
    lines.append("complete -c appdata -n 'not __fish_seen_subcommand_from \(names)' -a help -d 'Show help for a command.'")
    for command in Commands.all {
      for option in command.options where !option.isHidden {
        var line = "complete -c appdata -n '__fish_seen_subcommand_from \(command.name)' -l \(option.name)"
        if let short = option.short { line += " -s \(short)" }
        if option.takesValue {
          if let choices = option.choices { line += " -x -a '\(choices.joined(separator: " "))'" }
          else if takesPath(option) { line += " -r -F" }
          else { line += " -x" }
        }
        lines.append(line + " -d '\(fishEscape(option.help))'")
      }
      if command.name == "completion" {
        lines.append("complete -c appdata -n '__fish_seen_subcommand_from completion' -a '\(shells.joined(separator: " "))'")
      } else {
        lines.append("complete -c appdata -n '__fish_seen_subcommand_from \(command.name)' -F")
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }

  static func fishEscape(_ text: String) -> String { text.replacingAll("\\", with: "\\\\").replacingAll("'", with: "\\'") }
}
