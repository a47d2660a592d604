#if canImport(AppDataCore)
@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
#endif

// Fuzz target `bplist` (Scripts/fuzz.sh): the bounded property-list reader on binary plists (PropertyList.parse, over
// BinaryPropertyList), the reader every backup, container and package plist goes through,
// and PropertyListEdit on what it reads.
func fuzz_bplist(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  var bytes = Array(UnsafeBufferPointer(start: data, count: size))
  if !bytes.starts(with: Array("bplist00".utf8)) { bytes = Array("bplist00".utf8) + bytes }
  if let value = try? PropertyList.parse(bytes) {
    _ = value["Lockdown"]?.dictionaryValue
    _ = value.dateText
    removeAKeyOrTrap(from: value, bytes: bytes)
  }
  return 0
}

/// What migrate --defaults-key does to a plist that reads (both plist targets): removing a key
/// from its top-level dictionary always works, and the result reads back as the rest
/// (PropertyListEdit checks that itself; a refusal here is a bug).
func removeAKeyOrTrap(from value: PropertyList, bytes: [UInt8]) {
  guard let key = value.dictionaryValue?.keys.map(\.string).min(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) else { return }
  do {
    let edited = try PropertyListEdit.removingTopLevelKey(key, from: bytes)
    precondition(edited != nil)
  } catch {
    preconditionFailure("PropertyListEdit: \(error.reason)")
  }
}
