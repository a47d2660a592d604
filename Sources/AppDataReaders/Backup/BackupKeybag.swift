import AppDataSystem
import AppDataCore
/// An encrypted backup's keybag (`Manifest.plist`'s `BackupKeyBag`, as iphone-dataprotection reads it): records
/// of a 4-byte ASCII tag, a 4-byte big-endian length and the value. The header's records come
/// first (`VERS`, `TYPE`, `UUID`, `HMCK`, `WRAP`, `SALT`, `ITER`, and on iOS 10.2 and later `DPWT`,
/// `DPIC`, `DPSL`); each later `UUID` starts a class key's record (`CLAS`, `WRAP`, `KTYP`, `WPKY`).
/// Only parsing: the keys are unwrapped by `BackupDecryption`.
package struct BackupKeybag: Sendable {
  /// One protection class's wrapped key.
  struct ClassKey: Sendable {
    var protectionClass: UInt32
    var wrap: UInt32
    /// The RFC 3394-wrapped key (40 bytes for a 256-bit key).
    var wrappedKey: [UInt8]
    /// `WRAP & 2`: wrapped with the key derived from the password (bit 1 would need the
    /// device's UID key, which a backup's keybag never uses).
    var isWrappedByPassword: Bool { wrap & 2 != 0 }
  }

  /// The salt and rounds of the SHA-1 step (`SALT`, `ITER`).
  var salt: [UInt8]
  var iterations: UInt32
  /// The salt and rounds of the SHA-256 step before it (`DPSL`, `DPIC`), when the keybag has
  /// them (iOS 10.2 and later); nil in older keybags.
  var passwordSalt: [UInt8]?
  var passwordIterations: UInt32?
  var classKeys: [ClassKey]

  struct Malformed: Error { var reason: String }

  /// The most rounds (the two steps together) appdata derives a key with unless told more
  /// (`--max-key-rounds`): a keybag chooses its own counts, and 2^32 − 1 rounds would take
  /// 14 minutes. iOS writes DPIC 10,000,000 and ITER 10,000 (or 1).
  public static let defaultMaximumRounds: UInt64 = 100_000_000

  /// All the rounds the password costs.
  var totalRounds: UInt64 { UInt64(iterations) + UInt64(passwordIterations ?? 0) }

  /// Parses the records; throws when a record runs past the end or the header lacks its salt.
  init(_ data: [UInt8]) throws(Malformed) {
    var header: [String: [UInt8]] = [:]
    var classes: [[String: [UInt8]]] = []
    var offset = 0
    var sawUUID = false
    while offset < data.count {
      guard data.count - offset >= 8 else { throw Malformed(reason: "a record is cut short at byte \(offset)") }
      let tag = String(decoding: data[offset..<(offset + 4)], as: UTF8.self)
      let length = Int(Self.bigEndian(data[(offset + 4)..<(offset + 8)]))
      guard length <= data.count - offset - 8 else {
        throw Malformed(reason: "record \(TerminalText.escaped(tag)) at byte \(offset) runs past the end")
      }
      let value = Array(data[(offset + 8)..<(offset + 8 + length)])
      offset += 8 + length
      if tag == "UUID" {
        // The header's own UUID, then one per class key.
        if sawUUID { classes.append([:]) }
        sawUUID = true
      }
      if classes.isEmpty {
        header[tag] = value
      } else {
        classes[classes.count - 1][tag] = value
      }
    }
    guard let salt = header["SALT"], let iterations = header["ITER"] else {
      throw Malformed(reason: "no SALT or ITER record")
    }
    self.salt = salt
    self.iterations = Self.bigEndian(iterations[...])
    guard self.iterations > 0 else { throw Malformed(reason: "its ITER record asks for 0 key-derivation rounds") }
    if let passwordSalt = header["DPSL"], let passwordIterations = header["DPIC"] {
      let rounds = Self.bigEndian(passwordIterations[...])
      guard rounds > 0 else { throw Malformed(reason: "its DPIC record asks for 0 key-derivation rounds") }
      self.passwordSalt = passwordSalt
      self.passwordIterations = rounds
    }
    classKeys = classes.compactMap { record in
      guard let number = record["CLAS"], let key = record["WPKY"] else { return nil }
      return ClassKey(protectionClass: Self.bigEndian(number[...]), wrap: record["WRAP"].map { Self.bigEndian($0[...]) } ?? 0,
                      wrappedKey: key)
    }
  }

  /// A big-endian unsigned integer of up to 4 bytes (longer values keep their last 4).
  static func bigEndian(_ bytes: ArraySlice<UInt8>) -> UInt32 {
    bytes.suffix(4).reduce(0) { $0 << 8 | UInt32($1) }
  }
}

/// `Manifest.plist`'s `ManifestKey`: a little-endian 32-bit protection class, then the wrapped
/// key of Manifest.db.
struct ManifestKey: Sendable {
  var protectionClass: UInt32
  var wrappedKey: [UInt8]

  init?(_ data: [UInt8]) {
    guard data.count > 4 else { return nil }
    protectionClass = data[0..<4].reversed().reduce(0) { $0 << 8 | UInt32($1) }
    wrappedKey = Array(data[4...])
  }
}
