import AppDataSystem
import AppDataKit
extension Commands {
  package static let initConfig = CommandSpec(
    name: "init-config",
    summary: "Write a starting appdata.json from a container's current figures.",
    operands: "PATH",
    minimumOperands: 1, maximumOperands: 1,
    discussion: [
      "Audits the container at PATH and writes a policy file holding every key: maxFileSize and maxBackupSize set to the container's largest backed-up file and backed-up total plus --headroom, warnAt 0.9, every rule at its default severity, and empty ignore and budgets lists. Commit it next to the app and let 'appdata audit' read it.",
      "On an Android app's data: maxBackupSize is the most a destination (cloud backup, device-to-device transfer) carries, maxFileSize the largest file the cloud backup's walk sends, each plus --headroom: the app's own limits, never Android's 25 MiB cloud quota, which no key moves; the rules are those an Android audit raises, and an android object holds the package.",
    ],
    options: [
      .value(.output, short: "o", metavar: "FILE", help: "Write to FILE instead of ./appdata.json."),
      .value(.headroom, metavar: "PERCENT", help: "Headroom over the current figures, in percent (default 20)."),
      .flag(.force, help: "Replace an existing file."),
      .flag(.quiet, short: "q", help: "Print nothing when the file is written; errors still go to stderr."),
    ],
    exitStatus: [
      "0  the file was written",
      "2  usage error, PATH unusable, or the file exists (without --force)",
    ])

  package static let completion = CommandSpec(
    name: "completion",
    summary: "Print a shell completion script (bash, zsh or fish).",
    operands: "SHELL",
    minimumOperands: 1, maximumOperands: 1,
    discussion: [
      "The script is generated from the same option tables as the parser and the help. Load it with: eval \"$(appdata completion bash)\" (also in macOS's bash 3.2); for zsh: appdata completion zsh > \"${fpath[1]}/_appdata\"; for fish: appdata completion fish > ~/.config/fish/completions/appdata.fish.",
    ],
    options: [],
    exitStatus: [
      "0  the script was printed",
      "2  usage error (an unknown shell)",
    ])
}
