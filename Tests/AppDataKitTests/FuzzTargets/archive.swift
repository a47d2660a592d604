#if canImport(AppDataCore)
@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
#endif

// Fuzz target `archive` (Scripts/fuzz.sh): an archive read from memory through the libarchive wrapper (any format and
// filter libarchive detects), each entry's header, path components and depth check, its data
// up to the metadata limit, and AppleDouble attributes and markers as the archive audit reads them.
func fuzz_archive(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  guard let reader = try? LibArchive(bytes: bytes, path: "fuzz") else { return 0 }
  var entries = 0
  while entries < 1000, let header = try? reader.next() {
    entries += 1
    let components = RelativePath.components(header.path)
    if header.path.count > RelativePath.maximumLength || components.count > RelativePath.maximumComponents { continue }
    _ = EntryAttributes(attributes: header.attributes).markers.isExcluding
    if header.kind == .regular, let data = try? reader.readData(limit: 1 << 16), let attributes = AppleDouble.attributes(data) {
      _ = EntryAttributes(attributes: attributes).declinesBackup
    }
    if reader.uncompressedBytes > 64 << 20 { break }
  }
  return 0
}
