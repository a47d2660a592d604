import AppDataSystem
import AppDataCore
/// AppleDouble files (`._NAME`, and `__MACOSX/…/._NAME` in zips): where a Mac puts a file's
/// extended attributes when the destination cannot hold them. Big-endian: magic 0x00051607,
/// version 2, an entry table; the Finder Info entry (id 9) is followed by an `ATTR` header
/// (copyfile's layout) listing each attribute's name, offset and length.
enum AppleDouble {
  static let magic: UInt32 = 0x0005_1607
  static let finderInfoID: UInt32 = 9
  static let finderInfoSize = 32

  /// Whether `bytes` start like an AppleDouble file.
  static func isAppleDouble(_ bytes: [UInt8]) -> Bool { bytes.count >= 26 && readUInt32(bytes, 0) == magic }

  /// The extended attributes an AppleDouble file carries, or nil when it is not one (or is damaged).
  static func attributes(_ bytes: [UInt8]) -> [(name: String, value: [UInt8])]? {
    guard isAppleDouble(bytes) else { return nil }
    let entryCount = Int(readUInt16(bytes, 24))
    var finderInfo: (offset: Int, length: Int)?
    for index in 0..<entryCount {
      let base = 26 + index * 12
      guard base + 12 <= bytes.count else { return nil }
      if readUInt32(bytes, base) == finderInfoID {
        finderInfo = (Int(readUInt32(bytes, base + 4)), Int(readUInt32(bytes, base + 8)))
      }
    }
    // No Finder Info entry, or one without room for attributes: no extended attributes.
    guard let finderInfo, finderInfo.length > finderInfoSize else { return [] }
    // The ATTR header follows the 32 bytes of Finder Info, after 2 bytes of padding in copyfile's
    // struct (and none in some writers): look at both places.
    var header = -1
    for candidate in [finderInfo.offset + finderInfoSize + 2, finderInfo.offset + finderInfoSize]
    where candidate + 36 <= bytes.count && Array(bytes[candidate..<candidate + 4]) == Array("ATTR".utf8) {
      header = candidate
      break
    }
    guard header >= 0 else { return [] }
    let attributeCount = Int(readUInt16(bytes, header + 34))
    var cursor = header + 36
    var result: [(String, [UInt8])] = []
    for _ in 0..<attributeCount {
      guard cursor + 11 <= bytes.count else { return nil }
      let offset = Int(readUInt32(bytes, cursor))
      let length = Int(readUInt32(bytes, cursor + 4))
      let nameLength = Int(bytes[cursor + 10])
      guard cursor + 11 + nameLength <= bytes.count, offset >= 0, length >= 0, offset + length <= bytes.count else { return nil }
      var name = Array(bytes[(cursor + 11)..<(cursor + 11 + nameLength)])
      while name.last == 0 { name.removeLast() }
      result.append((String(decoding: name, as: UTF8.self), Array(bytes[offset..<offset + length])))
      // Entries are aligned to 4 bytes.
      cursor = (cursor + 11 + nameLength + 3) & ~3
    }
    return result
  }

  private static func readUInt32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
    guard offset + 4 <= bytes.count else { return 0 }
    return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
  }

  private static func readUInt16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
    guard offset + 2 <= bytes.count else { return 0 }
    return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
  }
}
