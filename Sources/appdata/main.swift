import AppDataKit

Syscalls.exit(CLI.run(CommandLine.arguments, io: .standard()).rawValue)
