import AppDataSystem
/// "Did you mean": the candidate nearest to what was typed, by edit distance, or nil
/// when none is close or two are equally close (a tie suggests nothing, as SwiftFormat does).
package enum Suggestion {
  package static func nearest(to typed: String, among candidates: [String]) -> String? {
    let typedScalars = Array(typed.unicodeScalars)
    guard !typedScalars.isEmpty else { return nil }
    var best: (candidate: String, distance: Int)?
    var tie = false
    for candidate in candidates {
      let distance = editDistance(typedScalars, Array(candidate.unicodeScalars))
      if best == nil || distance < best!.distance {
        best = (candidate, distance)
        tie = false
      } else if distance == best!.distance && candidate != best!.candidate {
        tie = true
      }
    }
    guard let best, !tie else { return nil }
    // Close enough to be a typo: at most a third of the word, and never more than 3 edits.
    let allowed = min(3, max(1, max(typedScalars.count, best.candidate.unicodeScalars.count) / 3))
    return best.distance <= allowed ? best.candidate : nil
  }

  /// Optimal string alignment distance: insertions, deletions, substitutions, transpositions.
  package static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    // Long inputs (fuzzed argv) cannot be typos of short option names; bound the work.
    if abs(a.count - b.count) > 3 { return abs(a.count - b.count) }
    var previousPrevious = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
      current[0] = i
      for j in 1...b.count {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
          current[j] = min(current[j], previousPrevious[j - 2] + 1)
        }
      }
      (previousPrevious, previous, current) = (previous, current, previousPrevious)
    }
    return previous[b.count]
  }
}
