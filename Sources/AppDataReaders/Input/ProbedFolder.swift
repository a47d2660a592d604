import AppDataSystem
import AppDataCore
/// A folder PATH names, or one of its children, as the resolver looks at it: its entries'
/// names and kinds (symlinks are never followed), and small files read on demand.
struct ProbedFolder {
  /// The path as the user typed it, extended by child names.
  let path: String
  /// Children with UTF-8 names (ids and UUIDs are), by name's bytes (`café` in NFC and in NFD
  /// are two children); kinds from lstat.
  let entries: [JSONKey: FileStatus.Kind]

  /// Lists `path`; nil when it is not a folder that can be read.
  init?(path: String) {
    guard let descriptor = try? Syscalls.openDirectory(atPath: path),
          let stream = try? DirectoryStream(taking: descriptor, displayPath: path) else { return nil }
    var entries: [JSONKey: FileStatus.Kind] = [:]
    _ = stream.forEachEntry { cName, length, type in
      let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(cName).assumingMemoryBound(to: UInt8.self), count: length)
      guard RelativePath.isValidUTF8(Array(bytes)) else { return }
      let kind: FileStatus.Kind
      switch type {
      case .directory: kind = .directory
      case .regular: kind = .regular
      case .symbolicLink: kind = .symbolicLink
      case .other: kind = .other
      case .unknown:
        guard case .success(let status) = Syscalls.status(cName: cName, in: stream.descriptor) else { return }
        kind = status.kind
      }
      entries[JSONKey(String(decoding: bytes, as: UTF8.self))] = kind
    }
    self.path = path
    self.entries = entries
  }

  /// Why `path` cannot be listed: the error opening or reading it, as the system words it.
  static func whyUnreadable(_ path: String) -> String {
    do {
      let descriptor = try Syscalls.openDirectory(atPath: path)
      _ = try DirectoryStream(taking: descriptor, displayPath: path)
      return "it changed while read"
    } catch {
      return error.reason
    }
  }

  /// The last path component.
  var name: String {
    let trimmed = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
    if let slash = trimmed.lastIndex(of: "/") { return String(trimmed[trimmed.index(after: slash)...]) }
    return trimmed == "." ? String(Syscalls.absolutePath(path).split(separator: "/").last ?? "") : trimmed
  }

  func childPath(_ name: String) -> String { path.hasSuffix("/") ? path + name : path + "/" + name }

  func isFolder(_ name: String) -> Bool { entries[name] == .directory }
  func isFile(_ name: String) -> Bool { entries[name] == .regular }

  /// A child folder, listed (never through a symlink).
  func folder(_ name: String) -> ProbedFolder? {
    isFolder(name) ? ProbedFolder(path: childPath(name)) : nil
  }

  /// The child folders' names, sorted, without hidden ones.
  var folderNames: [String] {
    entries.filter { $0.value == .directory && !$0.key.string.hasPrefix(".") }.map(\.key).sorted().map(\.string)
  }

  /// A plist's bytes (up to `PropertyList.Limits.maximumFileSize`), or nil.
  func read(_ name: String) -> [UInt8]? {
    try? readPlist(name)
  }

  /// A plist's bytes: nil when there is no such file, the reason when it cannot be read or is
  /// larger than `PropertyList.Limits.maximumFileSize`.
  func readPlist(_ name: String) throws(FileReading.Failure) -> [UInt8]? {
    guard let kind = entries[name] else { return nil }
    switch kind {
    case .regular: break
    case .directory: throw FileReading.Failure(message: "is a folder, not a file")
    case .symbolicLink: throw FileReading.Failure(message: "is a symlink, which appdata does not follow inside a backup")
    case .other: throw FileReading.Failure(message: "is not a regular file (a FIFO, socket or device), which appdata does not read")
    }
    return try FileReading.read(path: childPath(name), limit: PropertyList.Limits.maximumFileSize)
  }

  /// The identity plists around this folder as a container root.
  func identity(parent: ProbedFolder? = nil) -> ContainerIdentity {
    ContainerIdentity.find(root: [Array(name.utf8)]) { components in
      if components.count == 2 { return read(String(decoding: components[1], as: UTF8.self)) }
      return parent?.read(String(decoding: components[0], as: UTF8.self))
    }
  }
}
