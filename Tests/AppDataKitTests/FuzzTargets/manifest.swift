#if canImport(AppDataCore)
@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
#endif

// Fuzz target `manifest` (Scripts/fuzz.sh): a backup's Manifest.db given to SQLite from memory (sqlite3_deserialize, as
// a decrypted one is) on a connection with the limits every manifest gets, the schema check,
// and the row loop: each row's path checked and its MBFile blob decoded.
func fuzz_manifest(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  guard size >= 100, let buffer = SecretBuffer(capacity: size) else { return 0 }
  buffer.storage.baseAddress!.copyMemory(from: data, byteCount: size)
  buffer.setCount(size)
  guard let database = try? SQLiteDatabase(deserializing: buffer),
        (try? database.hasTable("Files")) == true,
        (try? database.unusualColumns(of: "Files", expecting: ["domain", "relativePath", "flags", "file", "fileID"])) == .some(nil),
        let statement = try? database.prepare("SELECT domain, relativePath, flags, file, fileID FROM Files") else { return 0 }
  var rows = 0
  while rows < 10_000, (try? statement.step()) == true {
    rows += 1
    let path = statement.bytes(1)
    if path.count > RelativePath.maximumLength { continue }
    _ = statement.bytes(0).count &+ statement.bytes(4).count
    if statement.integer(2) == 1, let file = MBFile.decode(statement.bytes(3)) { _ = file.size }
  }
  return 0
}
