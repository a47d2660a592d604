#if canImport(AppDataCore)
@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
#endif

// Fuzz target `json` (Scripts/fuzz.sh): the strict JSON parser and what reads its values: the policy file
// (AuditPolicy, with its sizes, fractions and globs) and a baseline report (Baseline).
func fuzz_json(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  guard let value = try? JSONParser.parse(bytes) else { return 0 }
  _ = value.serializedBytes(pretty: true)
  _ = try? AuditPolicy.parse(value)
  _ = try? Baseline.parse(value, file: "fuzz.json")
  return 0
}
