#if canImport(AppDataCore)
@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
#endif

// Fuzz target `mbfile` (Scripts/fuzz.sh): the MBFile decoder (a manifest row's `file` blob, an NSKeyedArchiver binary
// plist read in place), as BackupReader calls it for every row.
func fuzz_mbfile(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let raw = UnsafeRawBufferPointer(start: data, count: size)
  if let file = MBFile.decode(raw) { _ = file.size.saturatingSum(file.size) }
  return 0
}
