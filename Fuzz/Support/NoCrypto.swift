// Fuzz builds compile the library's files with swiftc alone, without the swift-crypto package:
// this stands in for Backup/BackupDecryption.swift (the only file that imports it). No fuzz
// target decrypts: the keybag and ManifestKey parsers that feed the key unwrap are the keybag
// target's, and the unwrap and AES themselves are swift-crypto's (BoringSSL, fuzzed upstream).
enum BackupDecryption {
  enum Failure: Error {
    case wrongPassword
    case noClassKey(UInt32)
    case damaged(String)
  }

  final class Unlocked: @unchecked Sendable {
    var unwrappedClasses: [UInt32] { [] }
    func wipe() {}
    func payload(encryptionKey: [UInt8]) throws(Failure) -> PayloadDecryptor { throw .damaged("decryption is not part of fuzz builds") }
  }

  struct PayloadDecryptor {
    mutating func update(_ cipher: UnsafeRawBufferPointer, write: (UnsafeRawBufferPointer) -> Void) throws(Failure) {}
    mutating func finish(write: (UnsafeRawBufferPointer) -> Void) throws(Failure) {}
    mutating func wipe() {}
  }

  static func decryptDatabase(path: String, memory: SecretBuffer?, password: SecretBuffer, keybag: BackupKeybag, manifestKey: ManifestKey,
                              unlocked: ((Unlocked) -> Void)? = nil) throws(Failure) -> SecretBuffer {
    throw .damaged("decryption is not part of fuzz builds")
  }

  static func paddingLength(_ bytes: UnsafeRawBufferPointer) -> Int { 0 }

  static func androidPayload(password: SecretBuffer, userSalt: [UInt8], checksumSalt: [UInt8], rounds: Int, userIV: [UInt8],
                             blob: [UInt8]) throws(Failure) -> PayloadDecryptor {
    throw .damaged("decryption is not part of fuzz builds")
  }
}
