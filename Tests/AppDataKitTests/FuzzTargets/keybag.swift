#if canImport(AppDataCore)
@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
#endif

// Fuzz target `keybag` (Scripts/fuzz.sh): an encrypted backup's BackupKeyBag (tag, big-endian length, value records)
// and ManifestKey (little-endian class, wrapped key), the inputs of the key unwrap. The first
// byte picks which.
func fuzz_keybag(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  guard size > 0 else { return 0 }
  let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
  if data[0] & 1 == 0 {
    if let keybag = try? BackupKeybag(bytes) {
      _ = keybag.totalRounds <= BackupKeybag.defaultMaximumRounds
      _ = keybag.classKeys.filter(\.isWrappedByPassword).map(\.wrappedKey.count)
    }
  } else if let key = ManifestKey(bytes) {
    _ = key.wrappedKey.count
  }
  return 0
}
