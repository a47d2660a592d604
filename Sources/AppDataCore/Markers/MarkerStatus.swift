import AppDataSystem
/// Whether a path is excluded from backup, and by what: `appdata status`.
package struct MarkerStatus: Sendable {
  /// The path as given.
  package var path: String
  /// Excluding markers on the path itself.
  package var ownMarkers: MarkerSet
  /// The nearest marked folder above the path (absolute), and its markers.
  package var inheritedFrom: (path: String, markers: MarkerSet)?

  package var isExcluded: Bool { ownMarkers.isExcluding || inheritedFrom != nil }

  /// The markers that decide: the path's own, else the inherited ones.
  package var effectiveMarkers: MarkerSet { ownMarkers.isExcluding ? ownMarkers : (inheritedFrom?.markers ?? []) }

  /// Reads the markers on `path` and on every folder above it up to `/`.
  package static func read(_ path: String) throws(SystemError) -> MarkerStatus {
    _ = try Syscalls.status(ofPath: path)  // exists? (lstat: a symlink is examined as itself)
    let own = try markers(atPath: path)
    var inherited: (String, MarkerSet)?
    var folder = parent(of: absolute(path))
    while let current = folder {
      let found = (try? markers(atPath: current)) ?? []
      if found.isExcluding {
        inherited = (current, found)
        break
      }
      folder = parent(of: current)
    }
    return MarkerStatus(path: path, ownMarkers: own, inheritedFrom: inherited)
  }

  /// The excluding markers on one path, in any recognised spelling.
  package static func markers(atPath path: String) throws(SystemError) -> MarkerSet {
    let names: [String]
    do {
      names = try ExtendedAttributes.names(atPath: path)
    } catch Errno.notSupported, Errno.notSupportedOnSocket {
      return []
    }
    // Read only the recognised names, then interpret them as the walk and the archive reader do.
    var attributes: [(name: String, value: [UInt8])] = []
    for (name, _) in MarkerTable.recognised where names.contains(name) {
      if let value = try ExtendedAttributes.value(of: name, atPath: path) { attributes.append((name, value)) }
    }
    return EntryAttributes(attributes: attributes).markers
  }

  /// An absolute path whose folders are resolved but whose last component is kept,
  /// so a symlink is examined as itself.
  package static func absolute(_ path: String) -> String {
    var trimmed = path
    while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
    guard let slash = trimmed.lastIndex(of: "/") else {
      return Syscalls.absolutePath(".") + "/" + trimmed
    }
    let folder = slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    let name = String(trimmed[trimmed.index(after: slash)...])
    if name.isEmpty || name == "." || name == ".." { return Syscalls.absolutePath(trimmed) }
    let resolved = Syscalls.absolutePath(folder)
    return (resolved == "/" ? "" : resolved) + "/" + name
  }

  package static func parent(of absolutePath: String) -> String? {
    guard absolutePath != "/", let slash = absolutePath.lastIndex(of: "/") else { return nil }
    return slash == absolutePath.startIndex ? "/" : String(absolutePath[..<slash])
  }

  package init(path: String, ownMarkers: MarkerSet, inheritedFrom: (path: String, markers: MarkerSet)? = nil) {
    self.path = path
    self.ownMarkers = ownMarkers
    self.inheritedFrom = inheritedFrom
  }
}
