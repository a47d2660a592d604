@testable import AppDataSystem
@testable import AppDataCore
import Foundation
import Testing

/// Issue 39, 3: an interrupted migration leaves nothing that is backed up by accident, says how
/// to finish, and `audit` names it until a rerun does.
@Suite("migrate, interrupted", .serialized)
struct MigrateInterruptTests {
  /// Killed in the middle of a copy across filesystems (checkpoint 6: inside the first folder's
  /// copy): the partial copy carries the do-not-back-up marker, so audit counts none of it as
  /// backed up, and warns of the unfinished migration (its journal and the partial copy) with
  /// exit 0 under --fail-on error but 1 under --fail-on warning; a rerun finishes, and audit is
  /// then clean of it.
  @Test func aPartialCopyIsMarkedAndAuditSaysTheMigrationIsUnfinished() throws {
    let tree = try MigrateCrashTests.smallContainer("interrupted-copy")
    let before = try AppData.auditJSON(tree.root)
    let killed = try MigrateCrashTests.migrate(tree.root, stopAfter: 6, forceCopy: true)
    #expect(killed.killed, "\(killed.status)")
    let partials = try FileManager.default.contentsOfDirectory(atPath: tree.path("Documents")).filter { $0.hasPrefix(".appdata-partial-") && !$0.hasSuffix(".owner") }
    #expect(partials.count == 1, "\(partials)")
    let partial = tree.path("Documents/" + (partials.first ?? "-"))
    #expect(ExtractTests.attributes(partial)["user.com.apple.metadata:com_apple_backup_excludeItem"] != nil, "\(ExtractTests.attributes(partial))")
    let report = try AppData.auditJSON(tree.root)
    // Nothing of the partial copy is backed up: the backup is what it was before the migration.
    #expect(integer(report, "summary", "backup", "bytes") == integer(before, "summary", "backup", "bytes"))
    let unfinished = findings(report, rule: "unfinished-migration").map { $0["path"] as? String ?? "" }.sorted()
    #expect(unfinished == [".appdata-migration.journal", "Documents/" + (partials.first ?? "-")], "\(unfinished)")
    #expect(try AppData.run(["audit", "-q", tree.root]).status == 0)
    #expect(try AppData.run(["audit", "-q", "--fail-on", "warning", tree.root]).status == 1)
    let rerun = try MigrateCrashTests.migrate(tree.root, forceCopy: true)
    #expect(rerun.status == 0 && !rerun.killed)
    #expect(findings(try AppData.auditJSON(tree.root), rule: "unfinished-migration").isEmpty)
  }

  /// SIGINT (and SIGTERM) while a migration runs (paused before its first move): the run ends
  /// with 128 + the signal and one line that says how far it got and how to finish; the journal
  /// is there, and a rerun finishes.
  @Test(arguments: ["SIGINT", "SIGTERM"])
  func anInterruptSaysWhatRemainsAndHowToFinish(signal: String) throws {
    let tree = try MigrateCrashTests.smallContainer("interrupted-\(signal)")
    let result = try AppData.runPaused(["migrate", tree.root], at: "migrate", withProcess: { process in
      kill(process.processIdentifier, signal == "SIGINT" ? SIGINT : SIGTERM)
      process.waitUntilExit()
    })
    #expect(result.status == (signal == "SIGINT" ? 130 : 143), "\(result.status) \(result.error)")
    #expect(result.error == "appdata: error: \(tree.root): interrupted after 0 of 3 entries; the rest are where they were, and .appdata-migration.journal "
            + "records where it stopped: run 'appdata migrate' on it again to finish\n", "\(result.error)")
    #expect(FileManager.default.fileExists(atPath: tree.path(".appdata-migration.journal")))
    #expect(try MigrateCrashTests.migrate(tree.root, forceCopy: false).status == 0)
    #expect(!FileManager.default.fileExists(atPath: tree.path(".appdata-migration.journal")))
  }
}
