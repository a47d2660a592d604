import AppDataSystem
/// The two "do not back up" markers iOS and macOS honour (Apple's Technical Q&A QA1719).
@usableFromInline package enum Marker: String, CaseIterable, Sendable, Comparable {
  /// `com.apple.metadata:com_apple_backup_excludeItem`, what `NSURLIsExcludedFromBackupKey`
  /// and `tmutil addexclusion` write (iOS 5.1+).
  case modern
  /// `com.apple.MobileBackup` = 0x01, the deprecated iOS 5.0.1 attribute.
  case legacy

  /// The attribute name as macOS and iOS store it.
  package var attributeName: String {
    switch self {
    case .modern: return "com.apple.metadata:com_apple_backup_excludeItem"
    case .legacy: return "com.apple.MobileBackup"
    }
  }

  /// The value appdata writes: what Apple's own APIs write.
  package var valueToWrite: [UInt8] {
    switch self {
    case .modern: return Marker.modernValue
    case .legacy: return [0x01]
    }
  }

  /// Whether an attribute value read back counts as excluding the item.
  /// Legacy: the first byte is non-zero (`u_int8_t attrValue = 1`). Modern: present at all,
  /// as borg does; Duplicacy's stricter "contains com.apple.backupd" is not required because
  /// iOS itself does not check the value (*unconfirmed*: see MarkerTable).
  @usableFromInline package func isExcluding(value: [UInt8]) -> Bool {
    switch self {
    case .modern: return true
    case .legacy: return value.first.map { $0 != 0 } ?? false
    }
  }

  /// `bplist00` holding the string `com.apple.backupd`: 61 bytes, byte for byte what
  /// `plistlib.dumps('com.apple.backupd', fmt=plistlib.FMT_BINARY)` produces.
  package static let modernValue: [UInt8] = hexBytes(
    "62706c69737430305f1011636f6d2e6170706c652e6261636b75706408000000000000010100000000000000010000000000000000000000000000001c"
  )

  @usableFromInline package static func < (lhs: Marker, rhs: Marker) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Which markers an item carries (or is excluded by): none, one, or both.
@usableFromInline package struct MarkerSet: OptionSet, Hashable, Sendable {
  @usableFromInline package let rawValue: UInt8
  @usableFromInline package init(rawValue: UInt8) { self.rawValue = rawValue }

  package static let modern = MarkerSet(rawValue: 1)
  package static let legacy = MarkerSet(rawValue: 2)
  package static let both: MarkerSet = [.modern, .legacy]

  @usableFromInline package init(_ marker: Marker) { self = marker == .modern ? .modern : .legacy }

  /// The JSON spelling: `modern`, `legacy`, `both`, or nil for none.
  package var name: String? {
    switch self {
    case .modern: return "modern"
    case .legacy: return "legacy"
    case .both: return "both"
    default: return nil
    }
  }

  /// True when at least one marker excludes the item.
  @inlinable package var isExcluding: Bool { !isEmpty }
}

package func hexBytes(_ hex: String) -> [UInt8] {
  var bytes: [UInt8] = []
  var iterator = hex.utf8.makeIterator()
  while let high = iterator.next(), let low = iterator.next() {
    func nibble(_ c: UInt8) -> UInt8 { c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10 }
    bytes.append(nibble(high) << 4 | nibble(low))
  }
  return bytes
}
