@testable import AppDataSystem
import Foundation
import Testing

/// Issue 41: a report of many backups answers the user's question at a glance: backups in date
/// order, and totals that count each device's latest backup, not a device's history summed.
@Suite("reports of many backups")
struct ReportsOfManyTests {
  static var backups: String { BackupHistoryTests.folder + "/Backup" }

  /// The folder names sort `…802E`, `…802E-20261001…`, …, `00008110…` (Bob's, dated 2026-10-04);
  /// the dates say otherwise: the table, the JSON and the HTML follow the dates.
  @Test func backupsAreListedInDateOrder() throws {
    let json = try AppData.auditJSON(Self.backups, environment: EncryptedBackupTests.withPassword)
    let dates = (json["backups"] as? [[String: Any]] ?? []).map { $0["date"] as? String ?? "" }
    #expect(dates.count == 7)
    #expect(dates == dates.sorted(), "\(dates)")
    #expect((json["backups"] as? [[String: Any]])?.last?["path"] as? String == Self.backups + "/00008030-001234567890802E")
    let table = try AppData.run(["audit", "--no-config", "--fail-on", "never", Self.backups], environment: EncryptedBackupTests.withPassword)
    let rows = table.output.split(separator: "\n", omittingEmptySubsequences: false).drop { !$0.hasPrefix("BACKUP ") }.dropFirst().prefix { !$0.isEmpty }
    let tableDates = rows.map { row in row.split(separator: " ").first { $0.hasPrefix("2026-") }.map(String.init) ?? "" }
    #expect(tableDates == dates, "\(table.output)")
    let html = try AppData.run(["audit", "--no-config", "--fail-on", "never", "--format", "html", Self.backups],
                               environment: EncryptedBackupTests.withPassword)
    let htmlDates = html.output.components(separatedBy: "<table class=\"backups\">").dropFirst().first?
      .components(separatedBy: "</table>").first?.components(separatedBy: "<td>2026-").dropFirst().map { "2026-" + $0.prefix(while: { $0 != "<" }) }
    #expect(htmlDates == dates, "\(htmlDates ?? [])")
  }

  /// Ann's latest backup (69.3 KiB) and Bob's one (777 B): not the sum of Ann's six copies (the
  /// encrypted one opens with the password).
  @Test func totalsCountTheLatestBackupOfEachDevice() throws {
    let environment = EncryptedBackupTests.withPassword
    let latest = try AppData.auditJSON(Self.backups + "/00008030-001234567890802E", environment: environment)
    let bob = try AppData.auditJSON(Self.backups + "/00008110-00AA11BB22CC33DD", environment: environment)
    let expected = (integer(latest, "summary", "backup", "bytes") ?? -1) + (integer(bob, "summary", "backup", "bytes") ?? -1)
    let table = try AppData.run(["audit", "--no-config", "--fail-on", "never", "--bytes", Self.backups], environment: environment)
    let total = try #require(table.output.split(separator: "\n").first { $0.hasPrefix("Total: ") })
    #expect(total.hasSuffix("backup 8 files, \(expected) (the latest backup of each device; 5 older copies not added)"), "\(total)")
    let html = try AppData.run(["audit", "--no-config", "--fail-on", "never", "--format", "html", Self.backups], environment: environment)
    #expect(html.output.contains("OK: 8 files, 70.1 KiB backed up (the latest backup of each device; 5 older copies not added)"))
  }

  /// On a terminal, no line is wider than it (at 60, 80 and 200 columns): names are cut in the
  /// middle, the least useful columns dropped, long lines wrapped. Piped, the table is the same
  /// whatever COLUMNS says.
  @Test(.enabled(if: AppData.has("script"), "needs script(1) for a pseudo-terminal"),
        arguments: ["history", "plain", "device"])
  func tablesFitTheTerminalAndPipesStayFullWidth(input: String) throws {
    let path = input == "history" ? Self.backups : input == "plain" ? BackupTests.plain : InputTests.device
    let password = EncryptedBackupTests.password.replacingOccurrences(of: "'", with: "'\\''")
    var piped: [String] = []
    for width in [60, 80, 200] {
      let result = try AppData.shell("APPDATA_BACKUP_PASSWORD='\(password)' TERM=xterm COLUMNS=\(width) script -qec \"$APPDATA audit --no-config --fail-on never --color never --list all '\(path)'\" /dev/null < /dev/null")
      let lines = result.output.replacingOccurrences(of: "\r", with: "").split(separator: "\n")
      #expect(lines.count > 10, "\(result.output)")
      let over = lines.filter { $0.count > width }
      #expect(over.isEmpty, "at \(width) columns: \(over.prefix(3))")
      let pipe = try AppData.run(["audit", "--no-config", "--fail-on", "never", "--list", "all", path],
                                 environment: ["COLUMNS": String(width), "APPDATA_BACKUP_PASSWORD": EncryptedBackupTests.password])
      piped.append(pipe.output)
    }
    #expect(Set(piped).count == 1, "piped output changed with COLUMNS")
    #expect(piped[0].split(separator: "\n").contains { $0.count > 80 }, "piped output is full width")
  }
}
