#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A C library loaded when it is first needed (dlopen), not when appdata starts. libarchive
/// (with libxml2, ICU's 30 MB of data, nettle, acl and five compressors behind it) and SQLite
/// are needed only for archives and device backups, yet linked they were mapped and relocated
/// by every run, `--version` included: with a cold page cache, an audit of a small folder took
/// 102 ms and now takes 80, `--version` 94 ms and now 66 (medians of 12 alternated rounds).
/// systemd loads its optional libraries the same way. The wrapper files
/// (Archive/LibArchive.swift, Backup/SQLite.swift) bind their functions with `lookup` into a
/// table their shim header declares with each function's own type, so the C compiler checks
/// every call against the library's header as if it were linked.
package struct SharedLibrary: Sendable {
  /// The dynamic loader's handle, kept as its address (a pointer is not Sendable; the handle is
  /// only ever read); never closed: a library loaded stays for the rest of the run.
  private let address: UInt
  package var handle: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: address)! }
  /// The file name it was loaded by.
  package let name: String

  /// dlsym(3) as a C function taking the library's `handle` as its context: what a shim's bind
  /// function calls for every name in its table (nil when the library has no such symbol).
  package typealias Lookup = @convention(c) (UnsafeMutableRawPointer, UnsafePointer<CChar>) -> UnsafeMutableRawPointer?
  package static let lookup: Lookup = { handle, name in dlsym(handle, name) }

  /// Loads the first of `names` and fills a shim's table of its functions with `bind` (the shim's
  /// `appdata_…_bind`, which returns 0 when a function is missing): the table, or why not.
  package static func table<Table>(
    _ names: [String], bind: (UnsafeMutablePointer<Table>, Lookup, UnsafeMutableRawPointer) -> Int32
  ) -> Result<Table, LoadFailure> {
    let library: SharedLibrary
    switch load(names) {
    case .success(let loaded): library = loaded
    case .failure(let failure): return .failure(failure)
    }
    let table = UnsafeMutablePointer<Table>.allocate(capacity: 1)
    defer { table.deallocate() }
    guard bind(table, lookup, library.handle) != 0 else {
      return .failure(LoadFailure(names: names, reason: "\(library.name) lacks a function appdata calls"))
    }
    return .success(table.move())
  }

  /// Loads the first of `names` (sonames, tried in order) that the dynamic loader finds, with
  /// its symbols local to it; or says why none loaded (dlerror(3) of the first, which names
  /// the file and the cause).
  package static func load(_ names: [String]) -> Result<SharedLibrary, LoadFailure> {
    var first: String?
    for name in names {
      if let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) {
        return .success(SharedLibrary(address: UInt(bitPattern: handle), name: name))
      }
      if first == nil { first = dlerror().map { String(cString: $0) } }
    }
    return .failure(LoadFailure(names: names, reason: first ?? "not found"))
  }

  /// Why a library could not be loaded.
  package struct LoadFailure: Error, Sendable, CustomStringConvertible {
    /// The names tried.
    package var names: [String]
    /// The dynamic loader's words for the first.
    package var reason: String
    package var description: String { reason }
  }
}
