#if canImport(AppDataCore)
@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
#endif

// Fuzz target `mbfile` (Scripts/fuzz.sh): the MBFile decoder (a manifest row's `file` blob, an NSKeyedArchiver binary
// plist read in place), as BackupReader calls it for every row; the full record appdata extract
// reads (mode, time, target, encryption key, extended attributes); and extract's checks of a
// manifest path and a symlink target, on the same bytes.
func fuzz_mbfile(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let raw = UnsafeRawBufferPointer(start: data, count: size)
  if let file = MBFile.decode(raw) { _ = file.size.saturatingSum(file.size) }
  let bytes = Array(raw)
  if let record = MBFileRecord.decode(bytes) {
    _ = record.size.saturatingSum(UInt64(record.extendedAttributes.count))
    if let target = record.target { _ = ExtractionWriter.escapingTarget(target, depth: 3) }
  }
  _ = BackupExtraction.Plan.unsafePath(bytes)
  _ = ExtractionWriter.escapingTarget(bytes, depth: 2)
  return 0
}
