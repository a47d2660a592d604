import AppDataSystem
/// A path glob for the policy file: `*` matches within one path component, `**` across
/// components, `?` one byte but `/`, `[abc]`, `[a-z]` and `[!abc]` one byte from a set.
/// Matched against paths relative to the container, bytewise.
public struct Glob: Sendable, Equatable {
  public struct SyntaxError: Error, Equatable {
    public var message: String
  }

  package enum Token: Sendable, Equatable {
    case literal(UInt8)
    case anyInComponent  // *
    case anyAcross  // **
    case one  // ?
    case set([ClosedRange<UInt8>], negated: Bool)
  }

  /// What the matcher's loop reads of a token, without an enum payload to copy per step.
  package enum Kind: UInt8, Sendable {
    case literal, one, set, star, doubleStar
  }

  /// The longest pattern accepted: Linux's PATH_MAX, as for paths. Matching costs time in
  /// proportion to the pattern's length times the path's.
  public static let maximumLength = 4096

  public let pattern: String
  package let tokens: [Token]
  /// Per token: its kind, its byte (literals), and whether a literal `/` follows it.
  private let kinds: [Kind]
  private let literals: [UInt8]
  private let slashFollows: [Bool]

  public init(_ pattern: String) throws(SyntaxError) {
    self.pattern = pattern
    guard !pattern.isEmpty else { throw SyntaxError(message: "empty pattern") }
    let bytes = Array(pattern.utf8)
    guard bytes.count <= Self.maximumLength else {
      throw SyntaxError(message: "\(bytes.count) bytes long, longer than the \(Self.maximumLength) a glob may be")
    }
    var tokens: [Token] = []
    var index = 0
    while index < bytes.count {
      let byte = bytes[index]
      switch byte {
      case 0x2A:  // *
        if index + 1 < bytes.count && bytes[index + 1] == 0x2A {
          // Three `**` in a row match what two do (only the last can skip a `/` after it).
          if !(tokens.count >= 2 && tokens[tokens.count - 1] == .anyAcross && tokens[tokens.count - 2] == .anyAcross) {
            tokens.append(.anyAcross)
          }
          index += 2
          // The `/` after `**` stays a literal; matching lets `**/` stand for no folder at all,
          // so `a/**/b` matches `a/b`.
        } else {
          // `**` is read first, so this is a single star: two in a row match what one does.
          if tokens.last != .anyInComponent { tokens.append(.anyInComponent) }
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
    kinds = tokens.map { token in
      switch token {
      case .literal: return .literal
      case .one: return .one
      case .set: return .set
      case .anyInComponent: return .star
      case .anyAcross: return .doubleStar
      }
    }
    literals = tokens.map { token in
      if case .literal(let byte) = token { return byte }
      return 0
    }
    slashFollows = tokens.indices.map { $0 + 1 < tokens.count && tokens[$0 + 1] == .literal(0x2F) }
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

  /// Whether the pattern has a star: without one it matches paths of exactly its length.
  private var hasStar: Bool { kinds.contains { $0 == .star || $0 == .doubleStar } }

  /// Whether token `index` (not a star) takes byte `byte`.
  @inline(__always)
  private func takes(_ index: Int, _ byte: UInt8) -> Bool {
    switch kinds[index] {
    case .literal: return byte == literals[index]
    case .one: return byte != 0x2F
    case .set:
      guard byte != 0x2F, case .set(let ranges, let negated) = tokens[index] else { return false }
      return ranges.contains(where: { $0.contains(byte) }) != negated
    case .star, .doubleStar: return false
    }
  }

  /// A pattern without stars against `path` (whole, or a folder above it when `stopAtAncestor`).
  private func runWithoutStars(_ path: [UInt8], stopAtAncestor: Bool) -> Bool {
    let length = tokens.count
    guard path.count == length || (stopAtAncestor && path.count > length && path[length] == 0x2F) else { return false }
    for index in 0..<length where !takes(index, path[index]) { return false }
    return true
  }

  /// Runs the pattern as a nondeterministic automaton over the path's bytes, one pass, no
  /// recursion and no allocation per byte: the states are token positions (a star's position
  /// stays live while it consumes bytes), so time is O(tokens × bytes) and memory O(tokens)
  /// whatever the pattern holds; a pattern of 60,000 `**` costs time, never the stack. With
  /// `stopAtAncestor`, reaching the end of the pattern just before a `/` of the path is a match
  /// too (a folder above it).
  private func run(_ path: [UInt8], stopAtAncestor: Bool) -> Bool {
    guard hasStar else { return runWithoutStars(path, stopAtAncestor: stopAtAncestor) }
    let end = tokens.count
    let size = end + 1
    // Per generation a state is listed once (`listed`) and expanded at most twice, once as
    // entered afresh and once as a star that consumed a byte (`fresh`, `looping`): linear in
    // the tokens whatever reaches what. `pending` holds at most two pushes per expansion.
    return withUnsafeTemporaryAllocation(of: Int.self, capacity: 9 * size + 1) { buffer -> Bool in
      let base = buffer.baseAddress!
      var states = Generations(listed: base, fresh: base + size, looping: base + 2 * size, pending: base + 5 * size,
                               end: end, kinds: kinds, slashFollows: slashFollows)
      var current = base + 3 * size, next = base + 4 * size
      (base).initialize(repeating: -1, count: 3 * size)
      var currentCount = 0
      var nextCount = 0
      states.add(0, afresh: true, to: current, count: &currentCount)
      for byte in path {
        if stopAtAncestor && byte == 0x2F && states.listed[end] == states.generation { return true }
        states.generation += 1
        nextCount = 0
        for index in 0..<currentCount {
          let state = current[index]
          guard state < end else { continue }
          switch kinds[state] {
          case .star:
            if byte != 0x2F { states.add(state, afresh: false, to: next, count: &nextCount) }
          case .doubleStar:
            states.add(state, afresh: false, to: next, count: &nextCount)
          default:
            if takes(state, byte) { states.add(state + 1, afresh: true, to: next, count: &nextCount) }
          }
        }
        if nextCount == 0 { return false }
        swap(&current, &next)
        currentCount = nextCount
      }
      return states.listed[end] == states.generation
    }
  }

  /// The automaton's bookkeeping for `run`, in one buffer it does not own: per state, the
  /// generation it was last listed, entered afresh and looped in; and the stack of `add`.
  private struct Generations {
    let listed: UnsafeMutablePointer<Int>
    let fresh: UnsafeMutablePointer<Int>
    let looping: UnsafeMutablePointer<Int>
    let pending: UnsafeMutablePointer<Int>
    let end: Int
    let kinds: [Kind]
    let slashFollows: [Bool]
    var generation = 0

    /// Adds `state` and what it reaches without consuming a byte. A `**` entered afresh may
    /// also skip the `/` after it (so `a/**/b` matches `a/b`); a star that has consumed bytes
    /// stays live but skips nothing. Pending entries are `state * 2 + (afresh ? 1 : 0)`.
    func add(_ start: Int, afresh: Bool, to list: UnsafeMutablePointer<Int>, count: inout Int) {
      var top = 0
      pending[top] = start * 2 + (afresh ? 1 : 0)
      top += 1
      while top > 0 {
        top -= 1
        let state = pending[top] >> 1
        let isFresh = pending[top] & 1 == 1
        if isFresh {
          if fresh[state] == generation { continue }
          fresh[state] = generation
        } else {
          if fresh[state] == generation || looping[state] == generation { continue }
          looping[state] = generation
        }
        if listed[state] != generation {
          listed[state] = generation
          list[count] = state
          count += 1
        }
        guard state < end else { continue }
        switch kinds[state] {
        case .star:
          pending[top] = (state + 1) * 2 + 1
          top += 1
        case .doubleStar:
          pending[top] = (state + 1) * 2 + 1
          top += 1
          if isFresh && slashFollows[state] {
            pending[top] = (state + 2) * 2 + 1
            top += 1
          }
        default:
          break
        }
      }
    }
  }
}
