import AppDataSystem
/// A binary property list (`bplist00`) read in place: objects are decoded only when asked for,
/// and nothing is copied or allocated, so an NSKeyedArchiver blob per manifest row costs
/// microseconds. Every offset is checked against the buffer: a damaged blob gives nil, never a
/// crash, and every number read from the file is converted with a check (an offset, reference or
/// UID of 2^63 or more is out of range, not a trap). Foundation's `PropertyListSerialization` on
/// Linux cannot follow UIDs, and expands an object referenced twice into two copies, so a few
/// hundred bytes can ask it for 2^40 objects; `PropertyList.parse` builds values from this reader
/// with a budget instead.
package struct BinaryPropertyList {
  /// What an object is.
  package enum Object: Equatable {
    case integer(Int64)
    /// A 16-byte integer, signed as CoreFoundation and plistlib read it: what writers use for
    /// values from 2^63 to 2^64 - 1.
    case wideInteger(Int128)
    /// An integer wider than 16 bytes, which no plist reader represents.
    case unrepresentableInteger(bytes: Int)
    case uid(UInt64)
    case bool(Bool)
    case real(Double)
    /// Seconds since 2001-01-01 00:00:00 UTC.
    case date(Double)
    /// An ASCII (1 byte a character) or UTF-16 big-endian (2) string: its bytes.
    case string(Range<Int>, bytesPerCharacter: Int)
    case data(Range<Int>)
    /// Element references start at the first, `count` of them.
    case array(references: Int, count: Int)
    /// `count` key references, then `count` value references.
    case dictionary(references: Int, count: Int)
    case other
  }

  package let bytes: UnsafeRawBufferPointer
  /// The width of one entry of the offset table, and of one object reference.
  package let offsetSize: Int
  private let referenceSize: Int
  package let objectCount: Int
  /// Where the offset table starts: every object lies before it.
  package let offsetTable: Int
  /// The top object's index.
  package let top: Int

  package init?(_ bytes: UnsafeRawBufferPointer) {
    // "bplist00", read as one little-endian word (a generic `starts(with:)` was a tenth of a
    // manifest row's decoding).
    guard bytes.count >= 40, bytes.loadUnaligned(as: UInt64.self) == UInt64(littleEndian: 0x3030_7473_696c_7062) else { return nil }
    self.bytes = bytes
    let trailer = bytes.count - 32
    offsetSize = Int(bytes[trailer + 6])
    referenceSize = Int(bytes[trailer + 7])
    guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else { return nil }
    let count = Self.unsigned(bytes, at: trailer + 8, size: 8)
    let top = Self.unsigned(bytes, at: trailer + 16, size: 8)
    let table = Self.unsigned(bytes, at: trailer + 24, size: 8)
    guard count < UInt64(bytes.count), top < count, table < UInt64(trailer),
          UInt64(table) + count * UInt64(offsetSize) <= UInt64(trailer) else { return nil }
    objectCount = Int(count)
    self.top = Int(top)
    offsetTable = Int(table)
  }

  /// An unsigned integer from the file as an index or offset: values past `Int.max` become
  /// `Int.max`, which every range check then refuses.
  private static func index(_ value: UInt64) -> Int { Int(clamping: value) }

  package static func unsigned(_ bytes: UnsafeRawBufferPointer, at offset: Int, size: Int) -> UInt64 {
    var value: UInt64 = 0
    for index in offset..<(offset + size) { value = value << 8 | UInt64(bytes[index]) }
    return value
  }

  /// The object with index `index`, or nil when the index or its bytes are out of range.
  package func object(_ index: Int) -> Object? {
    guard index >= 0, index < objectCount else { return nil }
    let start = Self.index(Self.unsigned(bytes, at: offsetTable + index * offsetSize, size: offsetSize))
    guard start < offsetTable else { return nil }
    let marker = bytes[start]
    let low = Int(marker & 0x0F)
    switch marker >> 4 {
    case 0x1:
      guard low <= 4 else { return .unrepresentableInteger(bytes: low <= 10 ? 1 << low : Int.max) }
      let size = 1 << low
      guard start + 1 + size <= offsetTable else { return nil }
      if size == 16 {
        let high = Self.unsigned(bytes, at: start + 1, size: 8)
        let low = Self.unsigned(bytes, at: start + 9, size: 8)
        return .wideInteger(Int128(Int64(bitPattern: high)) << 64 | Int128(low))
      }
      let value = Self.unsigned(bytes, at: start + 1, size: size)
      // 1, 2 and 4-byte integers are unsigned; 8-byte ones are signed.
      return .integer(size == 8 ? Int64(bitPattern: value) : Int64(value))
    case 0x0:
      switch low {
      case 0x8: return .bool(false)
      case 0x9: return .bool(true)
      default: return .other
      }
    case 0x2, 0x3:
      // Reals of 4 or 8 bytes; a date is an 8-byte real.
      let size = 1 << low
      guard size == 4 || size == 8, start + 1 + size <= offsetTable else { return nil }
      let pattern = Self.unsigned(bytes, at: start + 1, size: size)
      let value = size == 8 ? Double(bitPattern: pattern) : Double(Float(bitPattern: UInt32(truncatingIfNeeded: pattern)))
      return marker >> 4 == 0x2 ? .real(value) : .date(value)
    case 0x8:
      let size = low + 1
      guard size <= 8, start + 1 + size <= offsetTable else { return nil }
      return .uid(Self.unsigned(bytes, at: start + 1, size: size))
    case 0x4, 0x5, 0x6, 0xA, 0xD:
      guard let (count, body) = length(low, after: start) else { return nil }
      let unit: Int
      switch marker >> 4 {
      case 0x6: unit = 2
      case 0xA: unit = referenceSize
      case 0xD: unit = referenceSize * 2
      default: unit = 1
      }
      guard count <= offsetTable, body + count * unit <= offsetTable else { return nil }
      switch marker >> 4 {
      case 0x4: return .data(body..<(body + count))
      case 0x5: return .string(body..<(body + count), bytesPerCharacter: 1)
      case 0x6: return .string(body..<(body + count * 2), bytesPerCharacter: 2)
      case 0xA: return .array(references: body, count: count)
      default: return .dictionary(references: body, count: count)
      }
    default:
      return .other
    }
  }

  /// A collection's length: in the marker's low nibble, or (nibble 15) in an integer after it.
  private func length(_ low: Int, after start: Int) -> (count: Int, body: Int)? {
    if low != 0xF { return (low, start + 1) }
    guard start + 2 <= offsetTable, bytes[start + 1] >> 4 == 0x1 else { return nil }
    let size = 1 << Int(bytes[start + 1] & 0x0F)
    guard size <= 8, start + 2 + size <= offsetTable else { return nil }
    let count = Self.unsigned(bytes, at: start + 2, size: size)
    guard count < UInt64(bytes.count) else { return nil }
    return (Int(count), start + 2 + size)
  }

  /// The object index stored at reference slot `position` (`Int.max`, never valid, when the file
  /// stores a larger number).
  package func reference(at position: Int) -> Int {
    Self.index(Self.unsigned(bytes, at: position, size: referenceSize))
  }

  /// The size of one reference slot, for walking an array's or dictionary's references.
  package var referenceWidth: Int { referenceSize }

  /// The value of `key` in the dictionary `index` (its object index), if present.
  package func value(in index: Int, forKey key: StaticString) -> Int? {
    guard case .dictionary(let references, let count)? = object(index) else { return nil }
    for slot in 0..<count where isString(reference(at: references + slot * referenceSize), key) {
      return reference(at: references + (count + slot) * referenceSize)
    }
    return nil
  }

  /// `value(in:forKey:)` trying the key slot `hint` first (the slot where the same key sat in
  /// the last blob of the same shape), then every slot; `hint` becomes the slot it was found at.
  /// Every blob is still checked in full: a hint only saves the search.
  package func value(in index: Int, forKey key: StaticString, hint: inout Int) -> Int? {
    guard case .dictionary(let references, let count)? = object(index) else { return nil }
    if hint < count && isString(reference(at: references + hint * referenceSize), key) {
      return reference(at: references + (count + hint) * referenceSize)
    }
    for slot in 0..<count where isString(reference(at: references + slot * referenceSize), key) {
      hint = slot
      return reference(at: references + (count + slot) * referenceSize)
    }
    return nil
  }

  /// The `position`th element of the array `index`.
  package func element(_ position: Int, ofArray index: Int) -> Int? {
    guard case .array(let references, let count)? = object(index), position >= 0, position < count else { return nil }
    return reference(at: references + position * referenceSize)
  }

  /// Whether object `index` is the ASCII string `text` (keys are ASCII).
  package func isString(_ index: Int, _ text: StaticString) -> Bool {
    guard case .string(let range, let unit)? = object(index) else { return false }
    let expected = UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
    guard range.count == expected.count * unit else { return false }
    for (offset, byte) in expected.enumerated() {
      if unit == 1 {
        if bytes[range.lowerBound + offset] != byte { return false }
      } else if bytes[range.lowerBound + offset * 2] != 0 || bytes[range.lowerBound + offset * 2 + 1] != byte {
        return false
      }
    }
    return true
  }

  package func integer(_ index: Int) -> Int64? {
    if case .integer(let value)? = object(index) { return value }
    return nil
  }
}

/// The fields appdata reads from a manifest row's `file` blob: an NSKeyedArchiver archive of an
/// `MBFile`, whose `$top.root` is a UID into `$objects` (the iOS 10+ backup manifest's format).
package struct MBFile {
  /// `Size`: the file's length in bytes (0 for folders and symlinks).
  package var size: UInt64

  /// Decodes a blob; nil when it is not an `MBFile` archive appdata can read.
  package static func decode(_ blob: UnsafeRawBufferPointer) -> MBFile? {
    var decoder = Decoder()
    return decoder.decode(blob)
  }

  /// Decodes the blobs of one manifest, one after another. Every row's archive has the same
  /// keys in the same order, so the decoder remembers the key slots it found `$top`, `root`,
  /// `$objects` and `Size` at and checks those first: a row costs a dozen object reads instead
  /// of a search through each dictionary's keys. A blob of another shape is searched in full;
  /// the answer never depends on the hints.
  package struct Decoder {
    private var top = 0
    private var root = 0
    private var objects = 0
    private var size = 0

    package init() {}

    package mutating func decode(_ blob: UnsafeRawBufferPointer) -> MBFile? {
      guard let plist = BinaryPropertyList(blob),
            let topDictionary = plist.value(in: plist.top, forKey: "$top", hint: &top),
            let rootReference = plist.value(in: topDictionary, forKey: "root", hint: &root),
            case .uid(let uid)? = plist.object(rootReference), let rootIndex = Int(exactly: uid),
            let objectList = plist.value(in: plist.top, forKey: "$objects", hint: &objects),
            let file = plist.element(rootIndex, ofArray: objectList),
            let sizeReference = plist.value(in: file, forKey: "Size", hint: &size),
            let value = plist.integer(sizeReference), value >= 0 else { return nil }
      return MBFile(size: UInt64(value))
    }
  }
}
