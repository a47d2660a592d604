@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataKit
import Foundation
import Testing

/// Issue 48: what the readers of archives and of Android backups keep of their entries' names
/// is bounded (`--max-name-bytes`, 64 MiB by default): a 35 MB `.ab` of 3,000 entries, each
/// with a 1 MB pax name, grew to 3.8 GB and aborted. Each reader keeps exactly the bound (what
/// it holds, counted here byte by byte) and refuses one byte less, in one line naming the option.
/// The bombs themselves run through the binary in `HostileInputTests.nameBombsAreRefusedInOneLine`.
@Suite("name bytes")
struct NameBudgetTests {
  /// A tar (or, with `compress`, a tgz) at `path` of `entries` (name, "f" for a file or "d" for a
  /// folder), written by Python's tarfile in pax format.
  static func tar(_ path: String, _ entries: [(String, String)], compress: Bool = false) throws {
    let list = entries.map { "(\"\($0.0)\", \"\($0.1)\")" }.joined(separator: ", ")
    let result = try AppData.shell("""
      python3 - '\(path)' <<'EOF'
      import sys, tarfile
      with tarfile.open(sys.argv[1], "w:gz" if \(compress ? "True" : "False") else "w", format=tarfile.PAX_FORMAT) as t:
          for name, kind in [\(list)]:
              info = tarfile.TarInfo(name)
              info.type = tarfile.DIRTYPE if kind == "d" else tarfile.REGTYPE
              t.addfile(info)
      EOF
      """)
    #expect(result.status == 0, "\(result.error)")
  }

  static func refusal(_ path: String, _ bound: UInt64) -> String {
    "\(path): the names of its entries that appdata keeps pass \(ByteSize.human(bound)) (--max-name-bytes raises it); refusing a possible name bomb"
  }

  /// An Android backup stream (LocalTransport's: a tar) keeps the paths of its `apps/PKG/TOKEN/`
  /// entries: 100 + 200 + 300 bytes here; the APK's entry (token `a`) is not kept, so not counted.
  @Test func anAndroidBackupKeepsItsEntriesPathsUpToTheBound() throws {
    let tree = try TestTree("names-stream")
    let stream = tree.scratch + "/app.stream"
    try Self.tar(stream, [("apps/com.example.app/a/" + String(repeating: "k", count: 5000), "f"),
                          ("apps/com.example.app/f/" + String(repeating: "a", count: 100), "f"),
                          ("apps/com.example.app/db/" + String(repeating: "b", count: 200), "f"),
                          ("apps/com.example.app/r/" + String(repeating: "c", count: 300), "d")])
    let entries = try AndroidBackupStream.entries(atPath: stream, maximumNameBytes: 600)
    #expect(entries.map(\.path.count) == [100, 200, 300])
    #expect(entries.map(\.token) == ["f", "db", "r"])
    #expect(throws: AndroidBackupStream.Failure.self) { try AndroidBackupStream.entries(atPath: stream, maximumNameBytes: 599) }
    do {
      _ = try AndroidBackupStream.entries(atPath: stream, maximumNameBytes: 599)
    } catch {
      #expect(error.message == "the names of its entries that appdata keeps pass 599 B (--max-name-bytes raises it); refusing a possible name bomb")
    }
    // Through the library's audit, as --backup beside the app's data.
    try tree.file("files/a.txt", size: 10)
    try tree.folder("databases")
    func audit(_ bound: UInt64) throws(AuditFailure) -> AuditSet {
      var configuration = AuditConfiguration()
      configuration.backup = stream
      configuration.limits.maximumNameBytes = bound
      return try AppDataKit.audit(paths: [tree.root], configuration: configuration)
    }
    #expect(try audit(600).reports.count == 1)
    #expect(throws: AuditFailure.self) { try audit(599) }
    do { _ = try audit(599) } catch { #expect(error.message == Self.refusal(stream, 599)) }
  }

  /// A container in an archive: the reader keeps each folder's path (relative to the container's
  /// root), listed or implied: `Documents` (9 bytes) and `Documents/` + each name (10 + 40 and
  /// 10 + 50); its files' names are handed on, not kept.
  @Test func anArchivedContainerKeepsItsFoldersPathsUpToTheBound() throws {
    let tree = try TestTree("names-archive")
    let archive = tree.scratch + "/c.tgz"
    let one = String(repeating: "o", count: 40)
    let two = String(repeating: "t", count: 50)
    try Self.tar(archive, [("c/Documents", "d"), ("c/Documents/\(one)/x", "f"), ("c/Documents/\(two)/" + String(repeating: "y", count: 900), "f")],
                 compress: true)
    func audit(_ bound: UInt64?) throws(AuditFailure) -> AuditSet {
      var configuration = AuditConfiguration()
      configuration.limits.maximumNameBytes = bound
      return try AppDataKit.audit(paths: [archive], configuration: configuration)
    }
    let kept: UInt64 = 9 + 50 + 60
    #expect(try audit(kept).reports.first?.categories.values.reduce(0) { $0 + $1.files } == 2)
    #expect(throws: AuditFailure.self) { try audit(kept - 1) }
    do { _ = try audit(kept - 1) } catch { #expect(error.message == Self.refusal(archive, kept - 1)) }
    #expect(try audit(nil).reports.count == 1)
  }

  /// An Android app's data in an archive: its tree keeps every name and every folder's path:
  /// `files` (5, and 5 as a folder), `abc` (3), `files/d` (1, and 7 as a folder), `e` (1): 22.
  @Test func anArchivedAndroidDataFolderKeepsItsTreeUpToTheBound() throws {
    let tree = try TestTree("names-android")
    let archive = tree.scratch + "/data.tar"
    try Self.tar(archive, [("files/abc", "f"), ("files/d/e", "f")])
    #expect(try AndroidData.tree(atPath: archive, maximumNameBytes: 22).count == 5)
    #expect(throws: Refusal.self) { try AndroidData.tree(atPath: archive, maximumNameBytes: 21) }
    do { _ = try AndroidData.tree(atPath: archive, maximumNameBytes: 21) } catch {
      #expect(error.message == Self.refusal(archive, 21))
      #expect(error.cause == .tooLarge)
    }
  }

  /// The option, on each command that reads such a file: `--max-name-bytes SIZE` sets the bound
  /// (the figures of the tests above), and a refusal is one line.
  @Test func eachCommandTakesTheBound() throws {
    let tree = try TestTree("names-cli")
    let data = tree.scratch + "/data.tar"
    try Self.tar(data, [("files/abc", "f"), ("files/d/e", "f"), ("databases/app.db", "f")])
    // databases (9 + 9) and app.db (6): 22 + 24 = 46.
    let refused = try AppData.run(["audit", "--no-config", "--platform", "android", "--max-name-bytes", "45", data])
    #expect(refused.status == 2)
    #expect(refused.error == "appdata: error: \(Self.refusal(data, 45))\n")
    #expect(try AppData.run(["audit", "--no-config", "--platform", "android", "--max-name-bytes", "46", data]).status == 0)
    let bad = try AppData.run(["audit", "--max-name-bytes", "lots", data])
    #expect(bad.status == 2)
    #expect(bad.error == "appdata: error: invalid size 'lots' for '--max-name-bytes': expected bytes or a number with a unit such as 500K, 10MB, 1.5G or 2GiB\n")
    // migrate --android-rules on the same archive.
    let legacy = tree.scratch + "/legacy.xml"
    try Array("<full-backup-content><include domain=\"file\" path=\"abc\"/></full-backup-content>".utf8)
      .withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: legacy)) }
    let migrate = try AppData.run(["migrate", "--android-rules", legacy, "-o", tree.scratch + "/new.xml", "--max-name-bytes", "45", data])
    #expect(migrate.status == 2)
    #expect(migrate.error == "appdata: error: \(Self.refusal(data, 45))\n")
    #expect(!FileManager.default.fileExists(atPath: tree.scratch + "/new.xml"))
    #expect(try AppData.run(["migrate", "--android-rules", legacy, "-o", tree.scratch + "/new.xml", "--max-name-bytes", "46", data]).status == 0)
    let usage = try AppData.run(["migrate", "--max-name-bytes", "1M", tree.root])
    #expect(usage.status == 2)
    #expect(usage.error.contains("'--max-name-bytes' applies to '--android-rules'"), "\(usage.error)")
    // extract from a backup inside an archive.
    let folder = ExtractTests.scratch("names")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    #expect(try AppData.shell("cd '\(ExtractTests.fixtures)' && tar czf '\(folder)/backup.tgz' plain").status == 0)
    let tight = try AppData.run(["extract", "-q", "--app", ExtractTests.app, "--max-name-bytes", "100", "-o", folder + "/out", folder + "/backup.tgz"])
    #expect(tight.status == 2)
    #expect(tight.error == "appdata: error: \(Self.refusal(folder + "/backup.tgz", 100))\n")
    #expect(!FileManager.default.fileExists(atPath: folder + "/out"))
    let roomy = try AppData.run(["extract", "-q", "--app", ExtractTests.app, "--max-name-bytes", "1MiB", "-o", folder + "/out", folder + "/backup.tgz"])
    #expect(roomy.status == 0, "\(roomy.error)")
  }
}
