import AppDataSystem
/// Removes one key from a plist's top-level dictionary and leaves every other byte as it was:
/// what `appdata migrate --defaults-key` does to the app's defaults plist after the move.
///
/// Nothing is decoded and encoded again, so nothing another program wrote can be lost on the way
/// (a UTF-16 string with an unpaired surrogate, a 128-bit integer or a set deep inside stay the
/// bytes they were, and an XML plist keeps its order, comments and layout):
/// - XML: the key's `<key>…</key>` and its value element are cut out, with the blank space
///   before them.
/// - Binary (`bplist00`): a new top-level dictionary without the key is written after the last
///   object, under the old one's index, and the offset table and trailer after it; the old
///   dictionary stays in the file, unreferenced (a few bytes).
///
/// The result is read back with the bounded reader and must equal the original dictionary
/// without the key, or nothing is returned.
package enum PropertyListEdit {
  package typealias Malformed = PropertyList.Malformed

  /// The plist without `key` in its top-level dictionary; nil when the key is not there.
  /// Throws when the bytes are not a plist holding a dictionary, or when the edited plist would
  /// not read back as the same dictionary without the key.
  package static func removingTopLevelKey(_ key: String, from bytes: [UInt8]) throws(Malformed) -> [UInt8]? {
    let isBinary = bytes.starts(with: Array("bplist".utf8))
    var members: [XMLPropertyList.Member]? = []
    let original = isBinary ? try PropertyList.parse(bytes) : try XMLPropertyList.parse(bytes, topLevelMembers: &members)
    guard var expected = original.dictionaryValue else {
      throw Malformed(reason: "not a property list holding a dictionary")
    }
    guard expected.removeValue(forKey: PlistKey(key)) != nil else { return nil }
    let edited = isBinary ? binary(removing: key, from: bytes)
      : xml(removing: (members ?? []).filter { $0.key.utf8.elementsEqual(key.utf8) }, from: bytes)
    guard let edited, let readBack = try? PropertyList.parse(edited), identical(readBack, .dictionary(expected)) else {
      throw Malformed(reason: "the plist cannot be rewritten without \(key) and nothing else changed")
    }
    return edited
  }

  /// Equal, reals and dates compared by their bits (a NaN is itself here). Recursion is bounded:
  /// both values were built by the reader, which stops at `PropertyList.Limits.maximumDepth`.
  private static func identical(_ left: PropertyList, _ right: PropertyList) -> Bool {
    switch (left, right) {
    case (.real(let a), .real(let b)), (.date(let a), .date(let b)):
      return a.bitPattern == b.bitPattern
    case (.array(let a), .array(let b)):
      return a.count == b.count && zip(a, b).allSatisfy { identical($0, $1) }
    case (.dictionary(let a), .dictionary(let b)):
      return a.count == b.count && a.allSatisfy { key, value in b[key].map { identical(value, $0) } ?? false }
    default:
      return left == right
    }
  }

  /// Cuts the members' bytes out, each with the spaces, tabs and line breaks before it.
  private static func xml(removing members: [XMLPropertyList.Member], from bytes: [UInt8]) -> [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(bytes.count)
    var copied = 0
    for member in members.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) {
      var start = member.range.lowerBound
      while start > copied, XMLPropertyList.isSpace(bytes[start - 1]) { start -= 1 }
      output.append(contentsOf: bytes[copied..<start])
      copied = member.range.upperBound
    }
    output.append(contentsOf: bytes[copied...])
    return output
  }

  /// The binary plist with a new top-level dictionary; nil when it cannot be written that way.
  private static func binary(removing key: String, from bytes: [UInt8]) -> [UInt8]? {
    bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> [UInt8]? in
      guard let plist = BinaryPropertyList(raw),
            case .dictionary(let references, let count)? = plist.object(plist.top) else { return nil }
      let width = plist.referenceWidth
      // The slots to keep, each a key reference and a value reference as the file stores them.
      var kept: [(key: Range<Int>, value: Range<Int>)] = []
      for slot in 0..<count {
        let keySlot = references + slot * width
        guard case .string(let range, let unit)? = plist.object(plist.reference(at: keySlot)) else { return nil }
        if PropertyList.Budget.text(raw[range], bytesPerCharacter: unit)?.utf8.elementsEqual(key.utf8) ?? false { continue }
        let valueSlot = references + (count + slot) * width
        kept.append((keySlot..<(keySlot + width), valueSlot..<(valueSlot + width)))
      }
      // The new dictionary: its marker, its count (in the marker up to 14, else an integer
      // object after it), its key references, its value references.
      var dictionary: [UInt8] = []
      if kept.count < 15 {
        dictionary.append(0xD0 | UInt8(kept.count))
      } else {
        let size = byteCount(UInt64(kept.count))
        dictionary.append(0xDF)
        dictionary.append(0x10 | UInt8(size.trailingZeroBitCount))
        dictionary.append(contentsOf: bigEndian(UInt64(kept.count), size: size))
      }
      for slot in kept { dictionary.append(contentsOf: raw[slot.key]) }
      for slot in kept { dictionary.append(contentsOf: raw[slot.value]) }

      let newOffset = plist.offsetTable
      let tableStart = newOffset + dictionary.count
      let offsetSize = max(plist.offsetSize, byteCount(UInt64(newOffset)))
      var output = Array(raw[0..<plist.offsetTable])
      output.reserveCapacity(tableStart + plist.objectCount * offsetSize + 32)
      output.append(contentsOf: dictionary)
      for index in 0..<plist.objectCount {
        let offset = index == plist.top
          ? UInt64(newOffset)
          : BinaryPropertyList.unsigned(raw, at: plist.offsetTable + index * plist.offsetSize, size: plist.offsetSize)
        output.append(contentsOf: bigEndian(offset, size: offsetSize))
      }
      // The trailer: five unused bytes and the sort version as they were, then the sizes, the
      // object count, the top object and where the offset table starts.
      let trailer = raw.count - 32
      output.append(contentsOf: raw[trailer..<(trailer + 6)])
      output.append(UInt8(offsetSize))
      output.append(UInt8(width))
      output.append(contentsOf: bigEndian(UInt64(plist.objectCount), size: 8))
      output.append(contentsOf: bigEndian(UInt64(plist.top), size: 8))
      output.append(contentsOf: bigEndian(UInt64(tableStart), size: 8))
      return output
    }
  }

  /// The fewest bytes of 1, 2, 4 or 8 that hold `value`.
  private static func byteCount(_ value: UInt64) -> Int {
    switch value {
    case ..<0x100: return 1
    case ..<0x1_0000: return 2
    case ..<0x1_0000_0000: return 4
    default: return 8
    }
  }

  private static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
    (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> UInt64($0 * 8)) }
  }
}
