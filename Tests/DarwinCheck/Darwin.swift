// The module `make check-darwin` compiles the Darwin branches against: CDarwin (darwin.h, C
// declarations with Darwin's types) and what Swift's own Darwin overlay adds to it, as
// swiftlang/swift's stdlib/public/Platform/Platform.swift declares it for macOS. Never linked
// or run: Scripts/check-darwin.sh says what it proves.
@_exported import CDarwin

// sys/errno.h: errno is `(*__error())`.
public var errno: Int32 {
  get { __error().pointee }
  set { __error().pointee = newValue }
}

// fcntl.h: open, openat and fcntl are variadic in C, which Swift does not import.
public func open(_ path: UnsafePointer<CChar>, _ oflag: Int32) -> Int32 {
  darwin_check_open(path, oflag, 0)
}
public func open(_ path: UnsafePointer<CChar>, _ oflag: Int32, _ mode: mode_t) -> Int32 {
  darwin_check_open(path, oflag, mode)
}
public func openat(_ fd: Int32, _ path: UnsafePointer<CChar>, _ oflag: Int32) -> Int32 {
  darwin_check_openat(fd, path, oflag, 0)
}
public func openat(_ fd: Int32, _ path: UnsafePointer<CChar>, _ oflag: Int32, _ mode: mode_t) -> Int32 {
  darwin_check_openat(fd, path, oflag, mode)
}
public func fcntl(_ fd: Int32, _ cmd: Int32) -> Int32 {
  darwin_check_fcntl(fd, cmd, 0)
}
public func fcntl(_ fd: Int32, _ cmd: Int32, _ value: Int32) -> Int32 {
  darwin_check_fcntl(fd, cmd, value)
}
public func fcntl(_ fd: Int32, _ cmd: Int32, _ ptr: UnsafeMutableRawPointer) -> Int32 {
  darwin_check_fcntl_pointer(fd, cmd, ptr)
}

// sys/stat.h: the file-type and permission bits as mode_t (16 bits on Darwin).
public var S_IFMT: mode_t { mode_t(0o170000) }
public var S_IFIFO: mode_t { mode_t(0o010000) }
public var S_IFCHR: mode_t { mode_t(0o020000) }
public var S_IFDIR: mode_t { mode_t(0o040000) }
public var S_IFBLK: mode_t { mode_t(0o060000) }
public var S_IFREG: mode_t { mode_t(0o100000) }
public var S_IFLNK: mode_t { mode_t(0o120000) }
public var S_IFSOCK: mode_t { mode_t(0o140000) }
public var S_IFWHT: mode_t { mode_t(0o160000) }

// sys/ioctl.h: variadic in C.
public func ioctl(_ fd: CInt, _ request: UInt, _ value: CInt) -> CInt {
  darwin_check_ioctl(fd, request, value)
}
public func ioctl(_ fd: CInt, _ request: UInt, _ ptr: UnsafeMutableRawPointer) -> CInt {
  darwin_check_ioctl_pointer(fd, request, ptr)
}
public func ioctl(_ fd: CInt, _ request: UInt) -> CInt {
  darwin_check_ioctl(fd, request, 0)
}

// signal.h
public var SIG_DFL: sig_t? { nil }
public var SIG_IGN: sig_t { unsafeBitCast(1, to: sig_t.self) }
public var SIG_ERR: sig_t { unsafeBitCast(-1, to: sig_t.self) }

// The struct tags darwin.h renames (see there).
public typealias dirent = darwin_check_dirent
public typealias stat = darwin_check_stat
public typealias timespec = darwin_check_timespec
public typealias timeval = darwin_check_timeval
public typealias rlimit = darwin_check_rlimit
public typealias rusage = darwin_check_rusage
public typealias termios = darwin_check_termios
public typealias winsize = darwin_check_winsize

// time.h: macros naming an enumerator, imported with the enum's type.
public var CLOCK_REALTIME: clockid_t { _CLOCK_REALTIME }
public var CLOCK_MONOTONIC: clockid_t { _CLOCK_MONOTONIC }
