#if canImport(AppDataCore)
@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
#endif

// Fuzz target `glob` (Scripts/fuzz.sh): the policy glob (Glob): the first line is the pattern, the rest a path it is
// matched against, whole and by its folders.
func fuzz_glob(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let newline = bytes.firstIndex(of: 0x0A) ?? bytes.count
  let pattern = String(decoding: bytes[..<newline], as: UTF8.self)
  let path = newline < bytes.count ? Array(bytes[(newline + 1)...]) : []
  guard let glob = try? Glob(pattern) else { return 0 }
  _ = glob.matches(path)
  _ = glob.matchesPathOrAncestor(path)
  return 0
}
