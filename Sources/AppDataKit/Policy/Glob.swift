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
    run(path, stopAtAncestor: false)
  }

  /// Whether `path` or one of the folders above it matches (`Documents/Maps` covers
  /// `Documents/Maps/a/b.tile`).
  public func matchesPathOrAncestor(_ path: [UInt8]) -> Bool {
    run(path, stopAtAncestor: true)
  }

  /// Runs the pattern as a nondeterministic automaton over the path's bytes, one pass, no
  /// recursion: the states are token positions (a star's position stays live while it consumes
  /// bytes), so time is O(tokens × bytes) and memory O(tokens) whatever the pattern holds; a
  /// pattern of 60,000 `**` costs time, never the stack. With `stopAtAncestor`, reaching the
  /// end of the pattern just before a `/` of the path is a match too (a folder above it).
  private func run(_ path: [UInt8], stopAtAncestor: Bool) -> Bool {
    let end = tokens.count
    // Two generations of live states. Per generation a state is listed once (`listed`) and
    // expanded at most twice, once as entered afresh and once as a star that consumed a byte
    // (`expandedFresh`, `expandedLooping`): linear in the tokens whatever reaches what.
    var current: [Int] = []
    var next: [Int] = []
    var listed = [Int](repeating: -1, count: end + 1)
    var expandedFresh = listed
    var expandedLooping = listed
    var generation = 0
    // Adds `state` and what it reaches without consuming a byte. `fresh`: entered from the
    // token before (a `**` entered afresh may also skip the `/` after it, so `a/**/b` matches
    // `a/b`); a star that has consumed bytes stays live but skips nothing.
    func add(_ state: Int, fresh: Bool, to list: inout [Int]) {
      var pending = [(state, fresh)]
      while let (state, fresh) = pending.popLast() {
        if fresh {
          if expandedFresh[state] == generation { continue }
          expandedFresh[state] = generation
        } else {
          if expandedFresh[state] == generation || expandedLooping[state] == generation { continue }
          expandedLooping[state] = generation
        }
        if listed[state] != generation {
          listed[state] = generation
          list.append(state)
        }
        guard state < end else { continue }
        switch tokens[state] {
        case .anyInComponent:
          pending.append((state + 1, true))
        case .anyAcross:
          pending.append((state + 1, true))
          if fresh && state + 1 < end && tokens[state + 1] == .literal(0x2F) { pending.append((state + 2, true)) }
        default:
          break
        }
      }
    }
    add(0, fresh: true, to: &current)
    for byte in path {
      if stopAtAncestor && byte == 0x2F && listed[end] == generation { return true }
      generation += 1
      next.removeAll(keepingCapacity: true)
      for state in current where state < end {
        switch tokens[state] {
        case .literal(let expected):
          if byte == expected { add(state + 1, fresh: true, to: &next) }
        case .one:
          if byte != 0x2F { add(state + 1, fresh: true, to: &next) }
        case .set(let ranges, let negated):
          if byte != 0x2F && ranges.contains(where: { $0.contains(byte) }) != negated { add(state + 1, fresh: true, to: &next) }
        case .anyInComponent:
          if byte != 0x2F { add(state, fresh: false, to: &next) }
        case .anyAcross:
          add(state, fresh: false, to: &next)
        }
      }
      if next.isEmpty { return false }
      swap(&current, &next)
    }
    return listed[end] == generation
  }
}
