import AppDataSystem
/// Counts with their nouns, for text people read: `1 file`, `2 files`, `1 entry`, `3 entries`.
package enum Plural {
  /// `count` and `singular`, or `plural` (default: `singular` + "s") when count is not 1.
  package static func counted<Count: BinaryInteger>(_ count: Count, _ singular: String, _ plural: String? = nil) -> String {
    "\(count) " + (count == 1 ? singular : (plural ?? singular + "s"))
  }

  /// Names for one line of text: all of them when there are at most `limit`, else the first
  /// `limit` and `… and N more` (a full list belongs in JSON, not on one line of a table).
  package static func listed(_ names: [String], limit: Int) -> String {
    guard names.count > limit else { return names.joined(separator: ", ") }
    return names.prefix(limit).joined(separator: ", ") + ", … and \(names.count - limit) more"
  }

  /// A percentage with one decimal and its sign (`+61.6`), for text; JSON keeps full precision.
  package static func percent(_ value: Double) -> String {
    guard value.isFinite else { return value > 0 ? "+inf" : "-inf" }
    // Past what an Int holds in tenths (sizes from someone else's file can be anything).
    guard value.magnitude < 1e15 else { return (value < 0 ? "-" : "+") + "\(value.magnitude)" }
    let tenths = Int((value.magnitude * 10).rounded())
    return (value < 0 && tenths > 0 ? "-" : "+") + "\(tenths / 10).\(tenths % 10)"
  }
}

/// `93%`: how much of a limit a figure uses, rounded down.
package func percentText(_ value: UInt64, of limit: UInt64) -> String {
  guard limit > 0 else { return "100%" }
  let percent = Double(value) / Double(limit) * 100
  // Integers only where an Int holds them: a limit of 1 byte and a total of 2^64 is 1.8e21 %.
  return percent < 1e15 ? "\(Int(percent))%" : "\(percent)%"
}
