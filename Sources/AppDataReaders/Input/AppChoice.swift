import AppDataSystem
import AppDataCore

/// `--app NAME` when NAME is not an id PATH holds: the id it means, if one is plainly meant (a
/// unique last component, `WhatsApp`, or a unique substring, `whatsapp`, either case), or the
/// candidates to offer, best first: the ids holding NAME, then the near spellings.
package enum AppChoice: Equatable {
  /// The one id NAME means.
  case chosen(String)
  /// NAME fits several ids (or none); the best candidates, best first (at most `limit`).
  case candidates([String])

  package static let limit = 10

  /// Chooses among `ids` (apps first: a group or plugin is chosen only when no app fits). An
  /// app is an id that is neither a group (`group.…`) nor a plugin of another id held (`ID.…`).
  package static func choose(_ name: String, among ids: [String]) -> AppChoice {
    let wanted = name.lowercased()
    let unique = Array(Set(ids)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    let all = Set(unique)
    let appIDs = Set(unique.filter { id in
      !id.hasPrefix("group.") && !id.indices.contains { id[$0] == "." && all.contains(String(id[..<$0])) }
    })
    func lastComponent(_ id: String) -> String { String(id.split(separator: ".").last ?? Substring(id)).lowercased() }
    // Whole last component, then whole id ignoring case, then a substring: each tried on the
    // apps, then on everything.
    let tiers: [(String) -> Bool] = [
      { $0.lowercased() == wanted },
      { lastComponent($0) == wanted },
      { $0.lowercased().contains(wanted) },
    ]
    var holding: [String] = []
    for matches in tiers {
      let apps = unique.filter { appIDs.contains($0) && matches($0) }
      if apps.count == 1 { return .chosen(apps[0]) }
      let all = unique.filter(matches)
      if apps.isEmpty && all.count == 1 { return .chosen(all[0]) }
      if holding.isEmpty && !all.isEmpty { holding = apps + all.filter { !appIDs.contains($0) } }
    }
    // Near spellings, nearest first (of the whole id, and of its last component).
    let typed = Array(wanted.unicodeScalars)
    let allowed = max(1, min(3, typed.count / 3))
    var near: [(id: String, distance: Int)] = []
    for id in unique where !holding.contains(id) {
      let whole = Suggestion.editDistance(typed, Array(id.lowercased().unicodeScalars))
      let last = Suggestion.editDistance(typed, Array(lastComponent(id).unicodeScalars))
      let distance = min(whole, last)
      if distance <= allowed { near.append((id, distance)) }
    }
    near.sort { a, b in a.distance != b.distance ? a.distance < b.distance : a.id.utf8.lexicographicallyPrecedes(b.id.utf8) }
    return .candidates(Array((holding + near.map(\.id)).prefix(limit)))
  }
}
