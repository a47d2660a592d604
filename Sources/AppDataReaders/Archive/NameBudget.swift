import AppDataSystem
import AppDataCore

/// The bytes of names a reader of an archive or of an Android backup stream keeps while it
/// reads (`--max-name-bytes`): the entries' paths it holds, the folders they imply, the findings
/// that name them. An archive's names cost it a few bytes each once compressed (a 35 MB `.ab`
/// of 3,000 entries, each with a 1 MB pax name, is 3 GB of names), so without a bound on what
/// is kept a small file is a memory bomb; past the bound the input is refused in one line.
/// What is read and dropped (a file's name once it is counted) costs nothing.
package struct NameBudget: Sendable {
  /// 64 MiB: about 700,000 entries of 90-byte paths held at once.
  package static let defaultMaximum: UInt64 = 64 << 20

  package let maximum: UInt64
  /// The bytes kept now.
  package private(set) var kept: UInt64 = 0

  package init(maximum: UInt64 = NameBudget.defaultMaximum) {
    self.maximum = maximum
  }

  /// Counts `count` more bytes kept; false once the total passes `maximum` (the caller refuses).
  package mutating func keep(_ count: Int) -> Bool {
    kept = kept.saturatingSum(UInt64(count))
    return kept <= maximum
  }

  /// `count` bytes kept earlier are no longer held.
  package mutating func release(_ count: Int) {
    kept -= min(kept, UInt64(count))
  }

  /// The refusal's words, after the input's name: what passed, and the option that raises it.
  package var exceeded: String {
    "the names of its entries that appdata keeps pass \(ByteSize.human(maximum)) (--max-name-bytes raises it); refusing a possible name bomb"
  }
}
