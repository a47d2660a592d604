import AppDataCommandLine
import AppDataSystem

Syscalls.exit(CLI.run(CommandLine.arguments, io: .standard()).rawValue)
