import AppDataSystem
/// Writes the small binary plists `appdata extract` makes (a package's `AppDataInfo.plist`, a
/// container's metadata plist): one dictionary of strings and integers, as `bplist00` with
/// the layout CoreFoundation writes (ASCII strings as ASCII, others as UTF-16 big-endian,
/// integers in 8 bytes). The reader reads them back (a test checks it, and plistlib does too).
package enum PropertyListWriter {
  package enum Value: Equatable, Sendable {
    case string(String)
    case integer(Int64)
  }

  /// `members` in the order given (keys first, then values, as CoreFoundation lays them out).
  package static func dictionary(_ members: [(key: String, value: Value)]) -> [UInt8] {
    var objects: [[UInt8]] = []
    let count = members.count
    // Object 0 is the dictionary; keys are 1...count, values count+1...2*count.
    let total = 1 + 2 * count
    let referenceSize = total < 256 ? 1 : 2
    func reference(_ index: Int) -> [UInt8] {
      referenceSize == 1 ? [UInt8(index)] : [UInt8(index >> 8), UInt8(index & 0xFF)]
    }
    var dictionary = header(0xD, count)
    for index in 0..<count { dictionary += reference(1 + index) }
    for index in 0..<count { dictionary += reference(1 + count + index) }
    objects.append(dictionary)
    for member in members { objects.append(string(member.key)) }
    for member in members {
      switch member.value {
      case .string(let text): objects.append(string(text))
      case .integer(let number): objects.append([0x13] + bigEndian(UInt64(bitPattern: number), size: 8))
      }
    }
    var output = Array("bplist00".utf8)
    var offsets: [Int] = []
    for object in objects {
      offsets.append(output.count)
      output += object
    }
    let tableOffset = output.count
    let offsetSize = tableOffset < 256 ? 1 : tableOffset < 65_536 ? 2 : 4
    for offset in offsets { output += bigEndian(UInt64(offset), size: offsetSize) }
    output += [UInt8](repeating: 0, count: 6) + [UInt8(offsetSize), UInt8(referenceSize)]
    output += bigEndian(UInt64(objects.count), size: 8) + bigEndian(0, size: 8) + bigEndian(UInt64(tableOffset), size: 8)
    return output
  }

  private static func string(_ text: String) -> [UInt8] {
    if text.utf8.allSatisfy({ $0 < 0x80 }) { return header(0x5, text.utf8.count) + Array(text.utf8) }
    let units = Array(text.utf16)
    return header(0x6, units.count) + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
  }

  /// A marker with its count: in the low nibble below 15, else 0xF and an integer object.
  private static func header(_ kind: UInt8, _ count: Int) -> [UInt8] {
    if count < 15 { return [kind << 4 | UInt8(count)] }
    return [kind << 4 | 0xF, 0x13] + bigEndian(UInt64(count), size: 8)
  }

  private static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
    (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(size - 1 - $0))) }
  }
}
