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
// manifest path, an extension id and a symlink target, on the same bytes, the target resolved
// through a container of links the input also makes (each of its lines a link's path, the
// next its target), byte for byte and with names folded as APFS folds them.
func fuzz_mbfile(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let raw = UnsafeRawBufferPointer(start: data, count: size)
  if let file = MBFile.decode(raw) { _ = file.size.saturatingSum(file.size) }
  let bytes = Array(raw)
  if let record = MBFileRecord.decode(bytes) {
    _ = record.size.saturatingSum(UInt64(record.extendedAttributes.count))
    if let target = record.target {
      let check = SymlinkCheck(links: [(Array("Documents/a/b".utf8), target)])
      _ = check.verdict(Array("Documents/a/b".utf8), target: target)
    }
  }
  _ = BackupExtraction.Plan.unsafePath(bytes)
  _ = BackupExtraction.Plan.unsafeName(bytes)
  _ = BackupExtraction.Plan.unsafeTarget(bytes)
  let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).prefix(64).map(Array.init)
  var links: [(path: [UInt8], target: [UInt8])] = []
  for pair in stride(from: 0, to: lines.count - 1, by: 2) where BackupExtraction.Plan.unsafePath(lines[pair]) == nil {
    links.append((lines[pair], lines[pair + 1]))
  }
  // Judged as each filesystem compares names: byte for byte, and as APFS does (case and
  // normalization folded, the keys of names that are not UTF-8 their bytes).
  for comparison in [NameComparison.bytes, .ignoringCaseAndNormalization] {
    let check = SymlinkCheck(links: links, comparison: comparison)
    for link in links {
      _ = check.verdict(link.path, target: link.target)
      _ = check.folderBlocked(link.target)
    }
  }
  return 0
}
