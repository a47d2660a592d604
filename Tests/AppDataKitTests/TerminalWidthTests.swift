import Foundation
import Testing

/// Help and migrate's table fit the terminal, as the audit tables do (issue 51: under 80 columns
/// `audit --help` had 48 lines wider than 80, `migrate --help` 21, and migrate's table cut ENTRY
/// in the middle, losing the `->` and the reason a row was skipped).
@Suite("terminal width", .enabled(if: AppData.has("script"), "needs script (util-linux) for a pseudo-terminal"))
struct TerminalWidthTests {
  /// What `appdata ARGUMENTS` prints to a pseudo-terminal of `columns` columns (stderr left out).
  static func onTerminal(_ arguments: String, columns: Int) throws -> [String] {
    let result = try AppData.shell("TERM=xterm COLUMNS=\(columns) script -qec \"$APPDATA \(arguments) 2>/dev/null\" /dev/null < /dev/null")
    return result.output.replacingOccurrences(of: "\r", with: "").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
  }

  @Test(arguments: [60, 80])
  func helpFitsTheTerminal(columns: Int) throws {
    for arguments in ["audit --help", "migrate --help", "--help", "help extract"] {
      let lines = try Self.onTerminal(arguments, columns: columns)
      #expect(lines.count > 20, "\(arguments)")
      let wide = lines.filter { $0.count > columns }
      #expect(wide.isEmpty, "\(arguments) at \(columns) columns: \(wide)")
    }
    // Nothing is lost: every option is still there, its help wrapped in its column.
    let audit = try Self.onTerminal("audit --help", columns: columns).joined(separator: "\n")
    #expect(audit.contains("      --sarif-root DIR"))
    #expect(audit.contains("--max-backup-size SIZE"))
    #expect(audit.contains("Exit status:"))
    // Piped, help is as before: paragraphs at 78, one line per option.
    let piped = try AppData.run(["audit", "--help"])
    #expect(piped.output.split(separator: "\n").contains { $0.count > 100 })
  }

  @Test(arguments: [60, 80])
  func migratesTableWrapsEntryRatherThanCuttingIt(columns: Int) throws {
    let tree = try TestTree("migrate-width")
    let long = "a-rather-long-folder-name-for-offline-maps-of-the-whole-world"
    try tree.file("Library/Caches/\(long)/tile.bin", size: 10)
    try tree.file("Documents/\(long)/other.bin", size: 20)
    try tree.file("Library/Caches/small/f.bin", size: 5)
    let lines = try Self.onTerminal("migrate --dry-run --on-conflict skip --bundle-id com.example.app '\(tree.root)'", columns: columns)
    let wide = lines.filter { $0.count > columns }
    #expect(wide.isEmpty, "at \(columns) columns: \(wide)")
    // The skipped row keeps its whole entry (both paths, the arrow, why), over lines indented
    // under ENTRY: wrapped where it has spaces, broken where a name is longer than the column.
    let header = try #require(lines.first { $0.hasPrefix("ACTION") })
    let column = header.distance(from: header.startIndex, to: try #require(header.range(of: "ENTRY")).lowerBound)
    let start = try #require(lines.firstIndex { $0.hasPrefix("skipped") })
    var pieces = [String(lines[start].dropFirst(column))]
    for line in lines[(start + 1)...] {
      guard line.hasPrefix(String(repeating: " ", count: column + 4)) else { break }
      pieces.append(String(line.dropFirst(column + 4)))
    }
    #expect(pieces.count > 1, "\(lines)")
    #expect(pieces.joined().replacingOccurrences(of: " ", with: "")
            == "Library/Caches/\(long)->Documents/\(long)(destinationexists)", "\(lines)")
    #expect(!lines.joined().contains("…"))
  }
}
