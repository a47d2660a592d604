import AppDataCommandLine
import AppDataSystem

let status = CLI.run(CommandLine.arguments, io: .standard())
// The statistics line asked for and not written fails a run that would have passed (exit 2).
let reported = WorkCounters.reportIfAsked()
Syscalls.exit(reported || status.rawValue >= 2 ? status.rawValue : 2)
