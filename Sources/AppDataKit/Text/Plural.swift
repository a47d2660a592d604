/// Counts with their nouns, for text people read: `1 file`, `2 files`, `1 entry`, `3 entries`.
enum Plural {
  /// `count` and `singular`, or `plural` (default: `singular` + "s") when count is not 1.
  static func counted<Count: BinaryInteger>(_ count: Count, _ singular: String, _ plural: String? = nil) -> String {
    "\(count) " + (count == 1 ? singular : (plural ?? singular + "s"))
  }

  /// A percentage with one decimal and its sign (`+61.6`), for text; JSON keeps full precision.
  static func percent(_ value: Double) -> String {
    guard value.isFinite else { return value > 0 ? "+inf" : "-inf" }
    // Past what an Int holds in tenths (sizes from someone else's file can be anything).
    guard value.magnitude < 1e15 else { return (value < 0 ? "-" : "+") + "\(value.magnitude)" }
    let tenths = Int((value.magnitude * 10).rounded())
    return (value < 0 && tenths > 0 ? "-" : "+") + "\(tenths / 10).\(tenths % 10)"
  }
}
