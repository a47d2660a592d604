import AppDataCommandLine
import AppDataSystem

let status = CLI.run(CommandLine.arguments, io: .standard())
WorkCounters.reportIfAsked()
Syscalls.exit(status.rawValue)
