#if canImport(AppDataCore)
@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
#endif

// Fuzz target `xmlplist` (Scripts/fuzz.sh): the bounded property-list reader on XML plists (XMLPropertyList, through
// PropertyList.parse): entities, CDATA, DOCTYPE, nesting, base64 data and dates;
// and PropertyListEdit on what it reads.
func fuzz_xmlplist(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  guard !bytes.starts(with: Array("bplist".utf8)) else { return 0 }
  if let value = try? PropertyList.parse(bytes) {
    _ = value.dictionaryValue?.keys.count
    _ = value.dateText
    removeAKeyOrTrap(from: value, bytes: bytes)
  }
  return 0
}
