#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
import CLibattr
#elseif canImport(Darwin)
import Darwin
#endif

// The terminal: whether standard output and error are one (a password prompt is in SecretMemory.swift).
extension Syscalls {
  /// isatty(3) on standard error.
  package static var isStandardErrorATerminal: Bool { isatty(2) == 1 }
  /// isatty(3) on standard output.
  package static var isStandardOutputATerminal: Bool { isatty(1) == 1 }

  /// The width of the terminal on standard output: `COLUMNS` when set to a number, else the
  /// terminal's own (TIOCGWINSZ), else 80; nil when standard output is not a terminal (a pipe or
  /// a file is written full width, whatever the window).
  package static func outputTerminalWidth() -> Int? {
    guard isStandardOutputATerminal else { return nil }
    if let text = environment("COLUMNS"), let columns = Int(text), columns > 0 { return min(columns, 10_000) }
    var size = winsize()
    if ioctl(1, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 { return Int(size.ws_col) }
    return 80
  }
}

extension Syscalls {
  /// Which of descriptors 0, 1 and 2 were closed when the process started; each is opened on
  /// /dev/null, so that no file appdata opens takes its number (a report written to a closed
  /// stdout would land in the first file opened). Call once, first.
  package static func reserveStandardDescriptors() -> [Bool] {
    (Int32(0)...2).map { fd -> Bool in
      guard fcntl(fd, F_GETFD) == -1 else { return false }
      let opened = Glibc_or_Darwin_open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY)
      if opened >= 0 && opened != fd {
        _ = dup2(opened, fd)
        _ = Glibc_or_Darwin_close(opened)
      }
      return true
    }
  }
}
