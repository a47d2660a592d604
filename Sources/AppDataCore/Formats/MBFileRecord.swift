import AppDataSystem
/// Everything `appdata extract` needs from a manifest row's `file` blob (an NSKeyedArchiver
/// archive of an `MBFile`, Docs/backups.md), read through the bounded plist reader: what the
/// audit's fast `MBFile.decode` leaves out. Every field is checked; a blob that is not an
/// `MBFile` archive gives nil.
package struct MBFileRecord: Equatable, Sendable {
  /// `Size`: the length the manifest records (the decrypted payload may differ).
  package var size: UInt64
  /// `Mode`: type and permission bits, as stat(2) gives them.
  package var mode: UInt32?
  /// `LastModified`: seconds since 1970.
  package var lastModified: Int64?
  /// `Target` of a symlink, its bytes.
  package var target: [UInt8]?
  /// `ProtectionClass`.
  package var protectionClass: UInt32?
  /// `EncryptionKey`'s bytes (`NS.data`): a 4-byte little-endian class, then the wrapped key.
  package var encryptionKey: [UInt8]?
  /// `ExtendedAttributes`: name and value of each, from the binary plist it holds.
  package var extendedAttributes: [(name: String, value: [UInt8])] = []

  package static func == (left: MBFileRecord, right: MBFileRecord) -> Bool {
    left.size == right.size && left.mode == right.mode && left.lastModified == right.lastModified && left.target == right.target
      && left.protectionClass == right.protectionClass && left.encryptionKey == right.encryptionKey
      && left.extendedAttributes.map(\.name) == right.extendedAttributes.map(\.name)
      && left.extendedAttributes.map(\.value) == right.extendedAttributes.map(\.value)
  }

  /// The record of a blob; nil when it is not an `MBFile` archive appdata can read.
  package static func decode(_ blob: [UInt8]) -> MBFileRecord? {
    guard let archive = try? PropertyList.parse(blob),
          case .uid(let rootUID)? = archive["$top"]?["root"],
          case .array(let objects)? = archive["$objects"],
          let rootIndex = Int(exactly: rootUID), rootIndex < objects.count,
          case .dictionary(let file) = objects[rootIndex] else { return nil }
    /// A value, following a UID into `$objects` once.
    func resolved(_ key: String) -> PropertyList? {
      guard let value = file[key] else { return nil }
      if case .uid(let uid) = value {
        guard let index = Int(exactly: uid), index < objects.count else { return nil }
        return objects[index]
      }
      return value
    }
    /// Bytes stored as data, or as an `NSData` object (`{NS.data: …}`).
    func bytes(_ key: String) -> [UInt8]? {
      switch resolved(key) {
      case .data(let data)?: return data
      case .dictionary(let members)?: return members["NS.data"]?.dataValue
      default: return nil
      }
    }
    guard let size = resolved("Size")?.integerValue, size >= 0 else { return nil }
    var record = MBFileRecord(size: UInt64(size))
    record.mode = resolved("Mode")?.integerValue.flatMap { UInt32(exactly: $0) }
    record.lastModified = resolved("LastModified")?.integerValue
    record.protectionClass = resolved("ProtectionClass")?.integerValue.flatMap { UInt32(exactly: $0) }
    if case .string(let target)? = resolved("Target") { record.target = Array(target.utf8) }
    record.encryptionKey = bytes("EncryptionKey")
    if let attributes = bytes("ExtendedAttributes"), let members = (try? PropertyList.parse(attributes))?.dictionaryValue {
      for (name, value) in members.sorted(by: { $0.key.string.utf8.lexicographicallyPrecedes($1.key.string.utf8) }) {
        if case .data(let data) = value { record.extendedAttributes.append((name.string, data)) }
        if case .string(let text) = value { record.extendedAttributes.append((name.string, Array(text.utf8))) }
      }
    }
    return record
  }
}
