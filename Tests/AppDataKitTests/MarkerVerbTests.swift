@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Testing

/// `appdata exclude`, `include` and `status` on real files.
@Suite("marker verbs")
struct MarkerVerbTests {
  @Test func excludeIncludeAndStatus() throws {
    let tree = try TestTree("verbs")
    try tree.file("Documents/Maps/a.tile", size: 1)
    try tree.file("Documents/b.txt", size: 1)
    let maps = tree.path("Documents/Maps")
    let tile = tree.path("Documents/Maps/a.tile")
    let text = tree.path("Documents/b.txt")

    #expect(try AppData.run(["exclude", maps]).status == 0)
    #expect(try AppData.run(["exclude", "--both", text]).status == 0)
    let status = try AppData.run(["status", maps, tile, text])
    #expect(status.status == 0)
    #expect(status.output == """
      [Excluded]    \(maps)  (modern marker)
      [Excluded]    \(tile)  (modern marker, inherited from \(maps))
      [Excluded]    \(text)  (both markers)

      """)
    let json = try AppData.run(["status", "--json", tile]).json()
    let item = (json["paths"] as? [[String: Any]])?.first
    #expect(item?["excluded"] as? Bool == true)
    #expect(item?["marker"] as? String == "modern")
    #expect(item?["excludedBy"] as? String == maps)

    // Removing the marker from an item inside a marked folder leaves it excluded, and says so.
    let include = try AppData.run(["include", tile])
    #expect(include.status == 0)
    #expect(include.error == "appdata: warning: \(tile): still excluded by the modern marker on \(maps)\n")
    #expect(try AppData.run(["include", maps, text]).status == 0)
    #expect(try AppData.run(["status", maps, tile, text]).output.split(separator: "\n").allSatisfy { $0.hasPrefix("[Included]") })
    #expect(try ExtendedAttributes.names(atPath: text).isEmpty)
  }

  @Test func legacyExcludeWritesOneByte() throws {
    let tree = try TestTree("legacy")
    let file = try tree.file("Documents/old.db", size: 1)
    #expect(try AppData.run(["exclude", "--legacy", file]).status == 0)
    #expect(try ExtendedAttributes.value(of: "user.com.apple.MobileBackup", atPath: file) == [1])
    #expect(try ExtendedAttributes.value(of: "user.com.apple.metadata:com_apple_backup_excludeItem", atPath: file) == nil)
  }

  @Test func errorsNameThePathAndTheOthersStillRun() throws {
    let tree = try TestTree("verb-errors")
    let good = try tree.file("Documents/ok", size: 1)
    try tree.symlink("Documents/link", to: good)
    let missing = tree.path("Documents/missing")
    let result = try AppData.run(["exclude", missing, good])
    #expect(result.status == 1)
    #expect(result.error == "appdata: error: \(missing): no such file or folder\n")
    #expect(try AppData.run(["status", good]).output.hasPrefix("[Excluded]"))
    // Linux refuses user attributes on symlinks: a clear error, not a crash.
    let link = try AppData.run(["exclude", tree.path("Documents/link")])
    #expect(link.status == 1)
    #expect(link.error.hasPrefix("appdata: error: \(tree.path("Documents/link")): cannot set the extended attribute"))
    #expect(link.error.split(separator: "\n").count == 1)
  }

  @Test func filesystemWithoutUserAttributesGivesAClearError() throws {
    // /proc refuses user.* attributes.
    let result = try AppData.run(["exclude", "/proc/self/status"])
    #expect(result.status == 1)
    #expect(result.error.hasPrefix("appdata: error: /proc/self/status: cannot set the extended attribute"))
    #expect(result.error.split(separator: "\n").count == 1)
  }
}
