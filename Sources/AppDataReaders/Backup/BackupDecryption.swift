import AppDataSystem
import AppDataCore
import Synchronization
import Crypto
import CryptoExtras
// DataProtocol and Data: swift-crypto's argument and result types, from FoundationEssentials
// (which swift-crypto itself uses on Linux), not Foundation, which would cost every run's start.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Opens an encrypted backup's Manifest.db with its password (iOS 10.2 and later, the format
/// iphone-dataprotection and libimobiledevice describe): the only code that calls swift-crypto.
///
/// `k1 = PBKDF2-HMAC-SHA256(password, DPSL, DPIC)` (when the keybag has DPSL and DPIC), then
/// `kek = PBKDF2-HMAC-SHA1(k1 or the password, SALT, ITER)`; `kek` unwraps (RFC 3394) the key
/// of ManifestKey's protection class, which unwraps ManifestKey's own key; Manifest.db is
/// AES-256-CBC with a zero IV. Keys live in swift-crypto's `SymmetricKey`, which wipes them when
/// released (at the end of `decryptDatabase`); the database is decrypted into a `SecretBuffer`.
enum BackupDecryption {
  enum Failure: Error {
    /// The class key's unwrap failed its integrity check.
    case wrongPassword
    /// The keybag holds no password-wrapped key for ManifestKey's class.
    case noClassKey(UInt32)
    /// The backup's files are not what the scheme says (the reason, for the one-line refusal).
    case damaged(String)
  }

  /// The ciphertext read and decrypted at a time: what decryption adds to the database's size.
  static let chunkSize = 1 << 20

  /// What `appdata extract` needs to decrypt payloads: each file's key is wrapped with its
  /// protection class's key, which the key-encryption key unwraps. A class key is unwrapped the
  /// first time a file of that class asks (so only the classes the chosen app's files use are
  /// ever unwrapped), and `wipe` releases every key, the key-encryption key too, when the
  /// extraction ends. Keys are swift-crypto `SymmetricKey`s, which zero their bytes when
  /// released. Used by the one thread that makes the tree.
  final class Unlocked: Sendable {
    private let wrapped: [UInt32: [UInt8]]
    /// The key-encryption key (nil once wiped) and the class keys unwrapped so far.
    private let keys: Mutex<(kek: SymmetricKey?, classes: [UInt32: SymmetricKey])>
    fileprivate init(kek: SymmetricKey, wrapped: [UInt32: [UInt8]]) {
      self.wrapped = wrapped
      keys = Mutex((kek, [:]))
    }

    /// The protection classes whose keys are unwrapped now.
    var unwrappedClasses: [UInt32] { keys.withLock { $0.classes.keys.sorted() } }

    /// Releases every key (zeroed by `SymmetricKey`): nothing more can be decrypted.
    func wipe() {
      keys.withLock { $0 = (nil, [:]) }
    }

    private func classKey(_ protectionClass: UInt32) throws(Failure) -> SymmetricKey {
      try keys.withLock { (keys: inout (kek: SymmetricKey?, classes: [UInt32: SymmetricKey])) throws(Failure) -> SymmetricKey in
        if let known = keys.classes[protectionClass] { return known }
        guard let kek = keys.kek, let wrappedKey = wrapped[protectionClass] else { throw .noClassKey(protectionClass) }
        guard let key = try? AES.KeyWrap.unwrap(wrappedKey, using: kek) else {
          throw .damaged("the key of protection class \(protectionClass) does not unwrap with the password")
        }
        keys.classes[protectionClass] = key
        return key
      }
    }

    /// The decryptor of one payload, from its MBFile's `EncryptionKey` (a 4-byte little-endian
    /// protection class, then the 40-byte wrapped file key).
    func payload(encryptionKey: [UInt8]) throws(Failure) -> PayloadDecryptor {
      guard encryptionKey.count == 44 else {
        throw .damaged("its EncryptionKey is \(Plural.counted(UInt64(encryptionKey.count), "byte")), not 4 and a 40-byte wrapped key")
      }
      let protectionClass = UInt32(encryptionKey[0]) | UInt32(encryptionKey[1]) << 8 | UInt32(encryptionKey[2]) << 16 | UInt32(encryptionKey[3]) << 24
      let classKey = try self.classKey(protectionClass)
      let fileKey: SymmetricKey
      do {
        fileKey = try AES.KeyWrap.unwrap(encryptionKey[4...], using: classKey)
      } catch {
        throw .damaged("its file key does not unwrap with the key of protection class \(protectionClass)")
      }
      guard fileKey.bitCount == 256 else { throw .damaged("its file key is not a 256-bit key") }
      return PayloadDecryptor(key: fileKey)
    }
  }

  /// AES-256-CBC with a zero IV and PKCS#7 padding, a chunk at a time, in memory bounded by the
  /// chunk: the last block is held back until `finish` checks and removes the padding.
  struct PayloadDecryptor: Sendable {
    fileprivate let key: SymmetricKey
    fileprivate var iv = [UInt8](repeating: 0, count: 16)
    private var held: [UInt8] = []

    fileprivate init(key: SymmetricKey) { self.key = key }

    /// Decrypts `cipher` (a whole number of 16-byte blocks) and hands the plaintext that is
    /// certainly not padding to `write`, in place (the block held back from before, then this
    /// chunk but its last block): no copy of the chunk is made.
    mutating func update(_ cipher: UnsafeRawBufferPointer, write: (UnsafeRawBufferPointer) -> Void) throws(Failure) {
      guard !cipher.isEmpty else { return }
      guard cipher.count % 16 == 0 else { throw .damaged("not a whole number of 16-byte AES blocks") }
      var plain: Data
      do {
        plain = try AES._CBC.decrypt(cipher, using: key, iv: AES._CBC.IV(ivBytes: iv), noPadding: true)
      } catch {
        throw .damaged("cannot decrypt: \(error)")
      }
      iv = Array(cipher[(cipher.count - 16)...])
      if !held.isEmpty { held.withUnsafeBytes(write) }
      plain.withUnsafeBytes { bytes in write(UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count - 16)])) }
      // The block held back is plaintext: written over in place, never left in freed memory.
      if held.count != 16 { held = [UInt8](repeating: 0, count: 16) }
      plain.withUnsafeBytes { bytes in
        held.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - 16)...])) }
      }
      plain.resetBytes(in: 0..<plain.count)
    }

    /// Zeroes the block held back (after `finish`, or when the payload is given up).
    mutating func wipe() {
      _ = held.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
    }

    /// Checks the padding of the last block and hands what precedes it to `write`.
    mutating func finish(write: (UnsafeRawBufferPointer) -> Void) throws(Failure) {
      guard let last = held.last, held.count == 16 else { throw .damaged("no AES block to unpad (an empty encrypted payload)") }
      guard (1...16).contains(last), held.suffix(Int(last)).allSatisfy({ $0 == last }) else {
        wipe()
        throw .damaged("its PKCS#7 padding is invalid (a wrong key, or a damaged payload)")
      }
      held.withUnsafeBytes { bytes in write(UnsafeRawBufferPointer(rebasing: bytes[0..<(16 - Int(last))])) }
      wipe()
      held = []
    }
  }

  /// Decrypts the database at `path` (or, from an archive, in `memory`; `path` then names it)
  /// into memory, its PKCS#7 padding stripped when it has some. With `unlocked`, the class keys
  /// the password unwraps are kept there too (for `appdata extract`).
  static func decryptDatabase(
    path: String, memory: SecretBuffer? = nil, password: SecretBuffer, keybag: BackupKeybag, manifestKey: ManifestKey,
    unlocked: ((Unlocked) -> Void)? = nil
  ) throws(Failure) -> SecretBuffer {
    guard let wrapped = keybag.classKeys.first(where: { $0.protectionClass == manifestKey.protectionClass && $0.isWrappedByPassword })
    else { throw .noClassKey(manifestKey.protectionClass) }
    let kek: SymmetricKey
    do {
      kek = try keyEncryptionKey(password: password, keybag: keybag)
    } catch {
      throw .damaged("the keybag's salts or rounds are not usable (\(error))")
    }
    let classKey: SymmetricKey
    do {
      classKey = try AES.KeyWrap.unwrap(wrapped.wrappedKey, using: kek)
    } catch {
      throw .wrongPassword
    }
    let databaseKey: SymmetricKey
    do {
      databaseKey = try AES.KeyWrap.unwrap(manifestKey.wrappedKey, using: classKey)
    } catch {
      throw .damaged("Manifest.plist's ManifestKey does not unwrap with the key of its protection class \(manifestKey.protectionClass)")
    }
    guard databaseKey.bitCount == 256 else { throw .damaged("Manifest.plist's ManifestKey is not a 256-bit key") }
    if let unlocked {
      var wrappedKeys: [UInt32: [UInt8]] = [:]
      for wrapped in keybag.classKeys where wrapped.isWrappedByPassword && wrappedKeys[wrapped.protectionClass] == nil {
        wrappedKeys[wrapped.protectionClass] = Array(wrapped.wrappedKey)
      }
      unlocked(Unlocked(kek: kek, wrapped: wrappedKeys))
    }
    if let memory { return try decrypt(memory.bytes, displayPath: path, key: databaseKey) }
    return try decrypt(path: path, key: databaseKey)
  }

  /// The key-encryption key: the SHA-256 step when the keybag has DPSL and DPIC, then SHA-1.
  private static func keyEncryptionKey(password: SecretBuffer, keybag: BackupKeybag) throws -> SymmetricKey {
    func sha1(_ input: UnsafeRawBufferPointer) throws -> SymmetricKey {
      WorkCounters.addKeyRounds(UInt64(keybag.iterations))
      return try KDF.Insecure.PBKDF2.deriveKey(from: input, salt: keybag.salt, using: .insecureSHA1, outputByteCount: 32,
                                        unsafeUncheckedRounds: Int(keybag.iterations))
    }
    guard let salt = keybag.passwordSalt, let rounds = keybag.passwordIterations else { return try sha1(password.bytes) }
    WorkCounters.addKeyRounds(UInt64(rounds))
    let k1 = try KDF.Insecure.PBKDF2.deriveKey(from: password.bytes, salt: salt, using: .sha256, outputByteCount: 32,
                                               unsafeUncheckedRounds: Int(rounds))
    return try k1.withUnsafeBytes { try sha1($0) }
  }

  /// AES-256-CBC decryption of the file, chunk by chunk (each chunk's IV is the ciphertext block
  /// before it), into one buffer: memory is the database's size plus one chunk.
  private static func decrypt(path: String, key: SymmetricKey) throws(Failure) -> SecretBuffer {
    let owner: OwnedDescriptor
    let size: Int
    do {
      // Closed here when its status cannot be had, else on return.
      let opened = OwnedDescriptor(owning: try Syscalls.openFile(atPath: path))
      size = Int(try Syscalls.status(of: opened.descriptor, displayPath: path).size)
      owner = opened
    } catch {
      throw .damaged("cannot read \(TerminalText.escaped(path)): \(error.reason)")
    }
    let file = owner.descriptor
    return try decrypt(size: size, displayPath: path, key: key) { buffer, offset in
      Syscalls.readAt(file, into: buffer, offset: UInt64(offset))
    }
  }

  /// The same from bytes in memory (a Manifest.db read from an archive).
  private static func decrypt(_ bytes: UnsafeRawBufferPointer, displayPath: String, key: SymmetricKey) throws(Failure) -> SecretBuffer {
    try decrypt(size: bytes.count, displayPath: displayPath, key: key) { buffer, offset in
      let count = min(buffer.count, bytes.count - offset)
      buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
      return count
    }
  }

  /// Decrypts `size` bytes that `read(buffer, offset)` hands over a chunk at a time.
  private static func decrypt(size: Int, displayPath path: String, key: SymmetricKey,
                              read: (UnsafeMutableRawBufferPointer, Int) -> Int) throws(Failure) -> SecretBuffer {
    guard size > 0, size % 16 == 0 else {
      throw .damaged("\(TerminalText.escaped(path)) is \(Plural.counted(UInt64(size), "byte")), not a whole number of 16-byte AES blocks")
    }
    guard let plain = SecretBuffer(capacity: size) else {
      throw .damaged("cannot map \(Plural.counted(UInt64(size), "byte")) of memory to decrypt \(TerminalText.escaped(path)) into")
    }
    var cipher = [UInt8](repeating: 0, count: min(chunkSize, size))
    var iv = [UInt8](repeating: 0, count: 16)
    var offset = 0
    while offset < size {
      let length = min(chunkSize, size - offset)
      let count = cipher.withUnsafeMutableBytes { buffer in
        read(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<length]), offset)
      }
      guard count == length else { throw .damaged("cannot read \(TerminalText.escaped(path)) to its end (it changed while read?)") }
      do {
        var decrypted = try AES._CBC.decrypt(cipher[0..<length], using: key, iv: AES._CBC.IV(ivBytes: iv), noPadding: true)
        decrypted.withUnsafeBytes { bytes in
          plain.storage.baseAddress!.advanced(by: offset).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        }
        decrypted.resetBytes(in: 0..<decrypted.count)
      } catch {
        throw .damaged("cannot decrypt \(TerminalText.escaped(path)): \(error)")
      }
      iv = Array(cipher[(length - 16)..<length])
      offset += length
    }
    plain.setCount(size)
    plain.setCount(size - paddingLength(plain.bytes))
    return plain
  }

  /// PKCS#7 padding, stripped leniently: n when the last byte n is 1 to 16 and the last n bytes
  /// all equal n, else 0 (some writers leave other bytes at the end, which SQLite ignores).
  static func paddingLength(_ bytes: UnsafeRawBufferPointer) -> Int {
    guard let last = bytes.last, (1...16).contains(last), bytes.count >= Int(last) else { return 0 }
    return bytes[(bytes.count - Int(last))...].allSatisfy { $0 == last } ? Int(last) : 0
  }
}

// MARK: - adb backup files (Android)

extension BackupDecryption {
  /// An encrypted `adb backup` file's key, as AOSP's backup service makes it
  /// (PerformAdbBackupTask, and PasswordUtils.makeKeyChecksum): the user key is
  /// PBKDF2-HMAC-SHA1 of the password (UTF-8) with the user salt, 256 bits; it decrypts the
  /// master key blob (AES-256-CBC with the user IV), which holds the master IV, the master key
  /// and a checksum: PBKDF2-HMAC-SHA1, with the checksum salt, of the master key's bytes each
  /// widened to a Java `char` as a signed byte is (0x80 becomes U+FF80) and encoded in UTF-8.
  /// A checksum that differs is a wrong password. Returns a decryptor of the payload.
  static func androidPayload(password: SecretBuffer, userSalt: [UInt8], checksumSalt: [UInt8], rounds: Int, userIV: [UInt8],
                             blob: [UInt8]) throws(Failure) -> PayloadDecryptor {
    guard userIV.count == 16, !blob.isEmpty, blob.count % 16 == 0 else { throw .damaged("its master key blob is not AES blocks") }
    let plain: [UInt8]
    do {
      // The rounds an .ab asks for (10,000 by default) are bounded by the caller (--max-key-rounds).
      WorkCounters.addKeyRounds(UInt64(clamping: rounds))
      let userKey = try KDF.Insecure.PBKDF2.deriveKey(from: password.bytes, salt: userSalt, using: .insecureSHA1, outputByteCount: 32,
                                                      unsafeUncheckedRounds: rounds)
      let decrypted = try AES._CBC.decrypt(blob, using: userKey, iv: AES._CBC.IV(ivBytes: userIV), noPadding: true)
      plain = Array(decrypted)
    } catch {
      throw .wrongPassword
    }
    var bytes = plain
    defer { for index in bytes.indices { bytes[index] = 0 } }
    guard let pad = bytes.last, (1...16).contains(pad), bytes.suffix(Int(pad)).allSatisfy({ $0 == pad }) else { throw .wrongPassword }
    bytes.removeLast(Int(pad))
    // [length][IV][length][key][length][checksum]
    var index = 0
    func field() throws(Failure) -> [UInt8] {
      guard index < bytes.count else { throw .wrongPassword }
      let length = Int(bytes[index])
      index += 1
      guard index + length <= bytes.count else { throw .wrongPassword }
      defer { index += length }
      return Array(bytes[index..<(index + length)])
    }
    let masterIV = try field()
    var masterKey = try field()
    let checksum = try field()
    defer { for index in masterKey.indices { masterKey[index] = 0 } }
    guard masterIV.count == 16, masterKey.count == 32 else { throw .wrongPassword }
    var widened: [UInt8] = []
    for byte in masterKey {
      if byte < 0x80 {
        widened.append(byte)
      } else {
        // U+FF00 | byte, in UTF-8: EF, then 0xBE or 0xBF, then 0x80 | the low six bits.
        widened += [0xEF, 0x80 | UInt8((0xFF00 | UInt32(byte)) >> 6 & 0x3F), 0x80 | (byte & 0x3F)]
      }
    }
    defer { for index in widened.indices { widened[index] = 0 } }
    do {
      WorkCounters.addKeyRounds(UInt64(clamping: rounds))
      let computed = try KDF.Insecure.PBKDF2.deriveKey(from: widened, salt: checksumSalt, using: .insecureSHA1, outputByteCount: 32,
                                                       unsafeUncheckedRounds: rounds)
      guard computed.withUnsafeBytes({ Array($0) }) == checksum else { throw Failure.wrongPassword }
    } catch {
      throw .wrongPassword
    }
    var decryptor = PayloadDecryptor(key: SymmetricKey(data: masterKey))
    decryptor.setIV(masterIV)
    return decryptor
  }
}

extension BackupDecryption.PayloadDecryptor {
  /// Starts from `iv` rather than zeros (an adb backup's master IV).
  fileprivate mutating func setIV(_ value: [UInt8]) { iv = value }
}
