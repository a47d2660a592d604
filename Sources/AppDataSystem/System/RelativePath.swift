/// Relative paths as bytes: names on disk need not be UTF-8.
@usableFromInline package enum RelativePath {
  /// The longest path appdata takes from an archive entry or a backup manifest row, as Linux's
  /// PATH_MAX: longer or deeper ones are `unreadable` findings, not counted, so no reader or
  /// report does work that grows with a depth the input chooses. (On disk the walk goes as deep
  /// as the filesystem does, one folder descriptor at a time, and reports cope with that.)
  package static let maximumLength = 4096
  /// The most components such a path may have.
  package static let maximumComponents = 1024

  /// Bytewise three-way comparison (negative, zero, positive), with memcmp: reports sort
  /// thousands of deep paths that share long prefixes, where the generic
  /// `lexicographicallyPrecedes` was most of the sorting time.
  package static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
    let common = min(a.count, b.count)
    if common > 0 {
      let order = a.withUnsafeBufferPointer { pa in
        b.withUnsafeBufferPointer { pb in Syscalls.compareBytes(pa.baseAddress!, pb.baseAddress!, count: common) }
      }
      if order != 0 { return order < 0 ? -1 : 1 }
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
  }

  /// `a` sorts before `b`, bytewise.
  package static func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool { compare(a, b) < 0 }

  /// `parent/name`, or `name` at the top level.
  package static func join(_ parent: [UInt8], _ name: [UInt8]) -> [UInt8] {
    if parent.isEmpty { return name }
    var path = parent
    path.reserveCapacity(parent.count + 1 + name.count)
    path.append(0x2F)
    path.append(contentsOf: name)
    return path
  }

  /// The components of a relative path (empty ones dropped).
  package static func components(_ path: [UInt8]) -> [[UInt8]] {
    var result: [[UInt8]] = []
    var start = 0
    for index in path.indices where path[index] == 0x2F {
      if index > start { result.append(Array(path[start..<index])) }
      start = index + 1
    }
    if start < path.count { result.append(Array(path[start...])) }
    return result
  }

  /// A display string: invalid UTF-8 becomes U+FFFD (JSON's `path`; `pathBase64` keeps the bytes).
  package static func display(_ path: [UInt8]) -> String { String(decoding: path, as: UTF8.self) }

  /// True when the bytes are valid UTF-8, so `display` loses nothing.
  package static func isValidUTF8(_ path: [UInt8]) -> Bool {
    var iterator = path.makeIterator()
    var decoder = UTF8()
    while true {
      switch decoder.decode(&iterator) {
      case .scalarValue: continue
      case .emptyInput: return true
      case .error: return false
      }
    }
  }

  /// Joins components with `/`.
  package static func join(_ components: [[UInt8]]) -> [UInt8] {
    var path: [UInt8] = []
    for component in components {
      if !path.isEmpty { path.append(0x2F) }
      path.append(contentsOf: component)
    }
    return path
  }
}
