#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AppDataKit

exit(CLI.run(CommandLine.arguments, io: .standard()).rawValue)
