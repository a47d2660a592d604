@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
import Foundation
import Testing

/// The in-process audit the figure tests use gives byte for byte what the binary prints, for
/// every kind of input: a folder of containers, an archive, a device backup.
@Suite("library in-process")
struct LibraryTests {
  @Test(.enabled(if: AppData.has("zip") && AppData.has("zstd"), "needs zip and zstd for the fixtures"),
        arguments: ["device", "archive", "backup"])
  func theLibraryGivesTheBinarysJSON(input: String) throws {
    let path: String
    switch input {
    case "device": path = InputTests.device
    case "archive": path = ArchiveTests.fixtures + "/pax-schily.tar"
    default: path = BackupTests.plain
    }
    let binary = try AppData.run(["audit", "--format", "json", "--no-config", "--fail-on", "never", "--list", "all", path])
    #expect(binary.status == 0, "\(binary.error)")
    let set = try Library.audit(path, list: Set(AppDataCore.Category.allCases))
    let inProcess = set.jsonDocument().serialized(pretty: true) + "\n"
    #expect(inProcess == binary.output)
  }
}
