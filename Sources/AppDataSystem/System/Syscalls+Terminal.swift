#if canImport(Glibc)
import Glibc
import CLibattr
#elseif canImport(Darwin)
import Darwin
#endif

// The terminal: whether standard output and error are one (a password prompt is in SecretMemory.swift).
extension Syscalls {
  /// isatty(3) on standard error.
  public static var isStandardErrorATerminal: Bool { isatty(2) == 1 }
  /// isatty(3) on standard output.
  public static var isStandardOutputATerminal: Bool { isatty(1) == 1 }
}
