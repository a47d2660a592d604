@testable import AppDataSystem
@testable import AppDataCore
import Foundation
import Testing

/// The reports of a generated container and a generated device backup, byte for byte against
/// the ones stored in Tests/Expected (written by appdata before the backup reader, the listings
/// and the HTML size tree were rewritten for speed): a faster path must give the same bytes.
/// The generators are seeded, so the inputs are the same on every machine; the one substitution
/// is the temporary folder's path, written `ROOT` in the stored files (`ROOT/container`,
/// `ROOT/backup`).
///
/// To write the stored reports anew (after a deliberate change of the output), run
/// `APPDATA_WRITE_EXPECTED=1 swift test --filter StoredReportTests` and review the diff.
@Suite("stored expected reports")
struct StoredReportTests {
  static let expected = AppData.packageRoot + "/Tests/Expected"

  /// Allocated sizes are the filesystem's: the stored figures are those of a filesystem that
  /// allocates 4 KiB blocks and leaves holes unallocated (ext4, overlayfs on ext4, tmpfs, xfs).
  static let allocatesFourKiBBlocks: Bool = {
    let probe = NSTemporaryDirectory() + "appdata-blocks-\(UUID().uuidString)"
    defer { unlink(probe); unlink(probe + ".sparse") }
    guard FileManager.default.createFile(atPath: probe, contents: Data([1])),
          FileManager.default.createFile(atPath: probe + ".sparse", contents: nil),
          truncate(probe + ".sparse", 1 << 20) == 0 else { return false }
    var small = stat()
    var sparse = stat()
    guard stat(probe, &small) == 0, stat(probe + ".sparse", &sparse) == 0 else { return false }
    return small.st_blocks * 512 == 4096 && sparse.st_blocks == 0
  }()

  /// `appdata ARGS ROOT` with the temporary folder ROOT is in written as `ROOT`, compared with (or, with
  /// APPDATA_WRITE_EXPECTED, written to) Tests/Expected/NAME.
  func check(_ name: String, _ arguments: [String], root: String, base: String) throws {
    let result = try AppData.run(arguments + ["--fail-on", "never", "--no-config", root])
    #expect(result.status == 0, "\(name): \(result.error)")
    let output = result.output.replacingOccurrences(of: base, with: "ROOT")
    let file = Self.expected + "/" + name
    if ProcessInfo.processInfo.environment["APPDATA_WRITE_EXPECTED"] != nil {
      try output.write(toFile: file, atomically: true, encoding: .utf8)
      Issue.record("wrote \(file); unset APPDATA_WRITE_EXPECTED and review the diff")
      return
    }
    let stored = try String(contentsOfFile: file, encoding: .utf8)
    if output != stored {
      let got = NSTemporaryDirectory() + "appdata-got-" + name
      try output.write(toFile: got, atomically: true, encoding: .utf8)
      Issue.record("\(name): the report differs from \(file) (this run's is in \(got); diff them)")
    }
  }

  @Test("a generated backup of 800 rows: JSON with every file listed, and without; one thread and two",
        .enabled(if: AppData.has("python3")))
  func backupReport() throws {
    // A fixed last name: the HTML report names the container by it.
    let base = NSTemporaryDirectory() + "appdata-stored-\(UUID().uuidString)"
    let folder = base + "/backup"
    defer { try? FileManager.default.removeItem(atPath: base) }
    let made = try AppData.shell("python3 '\(AppData.packageRoot)/Scripts/make-test-backup.py' --rows 800 --apps 12 '\(folder)'")
    try #require(made.status == 0, Comment(rawValue: made.error))
    try check("backup-800.json", ["audit", "--format", "json"], root: folder, base: base)
    try check("backup-800-list-all.json", ["audit", "--format", "json", "--list", "all"], root: folder, base: base)
    // SQLite on the reader's thread (--jobs 1) and on its own: the same bytes.
    try check("backup-800-list-all.json", ["audit", "--format", "json", "--list", "all", "--jobs", "1"], root: folder, base: base)
  }

  @Test("a generated container of 800 entries: JSON with every file listed, and the HTML report",
        .enabled(if: AppData.has("python3") && allocatesFourKiBBlocks,
                 "needs python3, and a temporary folder whose filesystem allocates 4 KiB blocks and leaves holes"))
  func containerReport() throws {
    // A fixed last name: the HTML report names the container by it.
    let base = NSTemporaryDirectory() + "appdata-stored-\(UUID().uuidString)"
    let folder = base + "/container"
    defer { try? FileManager.default.removeItem(atPath: base) }
    let made = try AppData.shell("python3 '\(AppData.packageRoot)/Scripts/generate-container.py' --entries 800 --seed 3 '\(folder)'")
    try #require(made.status == 0, Comment(rawValue: made.error))
    try check("container-800-list-all.json", ["audit", "--format", "json", "--list", "all"], root: folder, base: base)
    try check("container-800.html", ["audit", "--format", "html"], root: folder, base: base)
  }

  /// The findings as a person reads them and acts on them (issue 51): sizes rounded and exact,
  /// the container's own findings named by it, each with what to do; one backup-grew for one
  /// growth, and the grown and new files listed under "Since", cut to --top. Table and JSON.
  @Test("a container over its limits and grown since a baseline: the table and the JSON",
        .enabled(if: allocatesFourKiBBlocks, "needs a temporary folder whose filesystem allocates 4 KiB blocks"))
  func findingsReport() throws {
    let base = NSTemporaryDirectory() + "appdata-stored-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: base) }
    // A fixed name: the container's own findings are named by its folder.
    let container = base + "/MyApp"
    func file(_ relative: String, _ size: Int) throws {
      let path = container + "/" + relative
      try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      try Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }).write(to: URL(fileURLWithPath: path))
    }
    try file("Documents/a.bin", 600_000)
    try file("Library/Application Support/db.sqlite", 250_000)
    for index in 1...12 { try file(String(format: "Documents/Notes/n%02d.txt", index), 1000 * index) }
    let baseline = try AppData.run(["audit", "--no-config", "--format", "json", "--output", base + "/baseline.json", container])
    #expect(baseline.status == 0, "\(baseline.error)")
    try file("Documents/new.mov", 1_500_000)
    try file("Documents/a.bin", 900_000)
    try file("Library/Caches/c.bin", 50_000)
    try ExtendedAttributes.setValue(Marker.modernValue, of: MarkerTable.platformName(of: .modern), atPath: container + "/Library/Caches/c.bin")
    let options = ["--max-backup-size", "2M", "--max-file-size", "1M", "--warn-at", "0.8", "--baseline", base + "/baseline.json",
                   "--max-growth", "500K", "--max-growth-percent", "10", "--top", "4"]
    for (name, format) in [("findings.txt", "table"), ("findings.json", "json")] {
      let result = try AppData.run(["audit", "--format", format, "--fail-on", "never", "--no-config"] + options + [container])
      #expect(result.status == 0, "\(name): \(result.error)")
      let output = result.output.replacingOccurrences(of: base, with: "ROOT")
      if format == "json" {
        // remedy, limit and growingPaths' new, as Docs/audit.schema.json describes them.
        try result.output.write(toFile: base + "/report.json", atomically: true, encoding: .utf8)
        #expect(try AppData.validateAgainstAuditSchema(base + "/report.json") == "valid")
      }
      let stored = Self.expected + "/" + name
      if ProcessInfo.processInfo.environment["APPDATA_WRITE_EXPECTED"] != nil {
        try output.write(toFile: stored, atomically: true, encoding: .utf8)
        Issue.record("wrote \(stored); unset APPDATA_WRITE_EXPECTED and review the diff")
        continue
      }
      #expect(output == (try String(contentsOfFile: stored, encoding: .utf8)), "\(name)")
    }
  }
}
