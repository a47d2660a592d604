/// A path glob for the policy file: `*` matches within one path component, `**` across
/// components, `?` one byte but `/`, `[abc]`, `[a-z]` and `[!abc]` one byte from a set.
/// Matched against paths relative to the container, bytewise.
public struct Glob: Sendable, Equatable {
  public struct SyntaxError: Error, Equatable {
    public var message: String
  }

  enum Token: Sendable, Equatable {
    case literal(UInt8)
    case anyInComponent  // *
    case anyAcross  // **
    case one  // ?
    case set([ClosedRange<UInt8>], negated: Bool)
  }

  public let pattern: String
  let tokens: [Token]

  public init(_ pattern: String) throws(SyntaxError) {
    self.pattern = pattern
    guard !pattern.isEmpty else { throw SyntaxError(message: "empty pattern") }
    let bytes = Array(pattern.utf8)
    var tokens: [Token] = []
    var index = 0
    while index < bytes.count {
      let byte = bytes[index]
      switch byte {
      case 0x2A:  // *
        if index + 1 < bytes.count && bytes[index + 1] == 0x2A {
          tokens.append(.anyAcross)
          index += 2
          // The `/` after `**` stays a literal; matching lets `**/` stand for no folder at all,
          // so `a/**/b` matches `a/b`.
        } else {
          tokens.append(.anyInComponent)
          index += 1
        }
      case 0x3F:
        tokens.append(.one)
        index += 1
      case 0x5B:  // [
        var cursor = index + 1
        var negated = false
        if cursor < bytes.count && (bytes[cursor] == 0x21 || bytes[cursor] == 0x5E) { negated = true; cursor += 1 }
        var ranges: [ClosedRange<UInt8>] = []
        var first = true
        while cursor < bytes.count && (bytes[cursor] != 0x5D || first) {
          let low = bytes[cursor]
          if cursor + 2 < bytes.count && bytes[cursor + 1] == 0x2D && bytes[cursor + 2] != 0x5D {
            let high = bytes[cursor + 2]
            guard low <= high else { throw SyntaxError(message: "reversed range in [\(Character(Unicode.Scalar(low)))-\(Character(Unicode.Scalar(high)))]") }
            ranges.append(low...high)
            cursor += 3
          } else {
            ranges.append(low...low)
            cursor += 1
          }
          first = false
        }
        guard cursor < bytes.count else { throw SyntaxError(message: "unterminated '[' at byte \(index + 1)") }
        tokens.append(.set(ranges, negated: negated))
        index = cursor + 1
      case 0x5C:  // \ escapes the next byte
        guard index + 1 < bytes.count else { throw SyntaxError(message: "trailing '\\'") }
        tokens.append(.literal(bytes[index + 1]))
        index += 2
      default:
        tokens.append(.literal(byte))
        index += 1
      }
    }
    self.tokens = tokens
  }

  /// Whether the whole of `path` matches.
  public func matches(_ path: [UInt8]) -> Bool {
    var memo = Set<Int>()
    return match(tokenIndex: 0, pathIndex: 0, path: path, failed: &memo)
  }

  /// Whether `path` or one of the folders above it matches (`Documents/Maps` covers
  /// `Documents/Maps/a/b.tile`).
  public func matchesPathOrAncestor(_ path: [UInt8]) -> Bool {
    if matches(path) { return true }
    for (index, byte) in path.enumerated() where byte == 0x2F {
      if matches(Array(path[..<index])) { return true }
    }
    return false
  }

  private func match(tokenIndex: Int, pathIndex: Int, path: [UInt8], failed: inout Set<Int>) -> Bool {
    let key = tokenIndex * (path.count + 1) + pathIndex
    if failed.contains(key) { return false }
    var t = tokenIndex
    var p = pathIndex
    while t < tokens.count {
      switch tokens[t] {
      case .literal(let byte):
        guard p < path.count, path[p] == byte else { failed.insert(key); return false }
        t += 1; p += 1
      case .one:
        guard p < path.count, path[p] != 0x2F else { failed.insert(key); return false }
        t += 1; p += 1
      case .set(let ranges, let negated):
        guard p < path.count, path[p] != 0x2F, ranges.contains(where: { $0.contains(path[p]) }) != negated else {
          failed.insert(key); return false
        }
        t += 1; p += 1
      case .anyInComponent, .anyAcross:
        let crossesFolders = tokens[t] == .anyAcross
        var end = p
        while true {
          if match(tokenIndex: t + 1, pathIndex: end, path: path, failed: &failed) { return true }
          // `**/` may also match nothing at all, folder separator included.
          if crossesFolders && end == p && t + 1 < tokens.count && tokens[t + 1] == .literal(0x2F)
            && match(tokenIndex: t + 2, pathIndex: end, path: path, failed: &failed) { return true }
          guard end < path.count, crossesFolders || path[end] != 0x2F else { break }
          end += 1
        }
        failed.insert(key)
        return false
      }
    }
    if p == path.count { return true }
    failed.insert(key)
    return false
  }
}
