#if canImport(AppDataCore)
@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
#endif

// Fuzz target `androidbackup` (Scripts/fuzz.sh): what `--backup` reads for an Android app, from
// memory: an adb backup's text header (version, compression, encryption and its hex lines),
// zlib's inflate with the bomb guard, and the tar headers (ustar, pax records, sizes in octal and
// base-256) of an .ab or of LocalTransport's stream. With a password, so that an encrypted
// header's lines are parsed too (the fuzz build's stand-in for swift-crypto refuses the key); and
// with few key rounds allowed, so that no input makes the run derive for long.
func fuzz_androidbackup(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let password = "fuzz".utf8CString.withUnsafeBytes { SecretBuffer(copying: UnsafeRawBufferPointer(rebasing: $0.dropLast())) }
  if let entries = try? AndroidBackupStream.entries(bytes: bytes, password: password, maximumRounds: 16) {
    for entry in entries { _ = RelativePath.components(entry.path) }
  }
  return 0
}
