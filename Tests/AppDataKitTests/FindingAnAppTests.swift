@testable import AppDataSystem
import Foundation
import Testing

/// Issue 41, 3: finding an app's id. The plain backup holds com.example.my-app (5,000,000,730
/// bytes backed up), com.example.notes and its widget, com.example.empty, com.example.ghost and
/// group.com.example.my-app.
@Suite("finding an app")
struct FindingAnAppTests {
  static var backup: String { BackupTests.plain }

  /// A unique last component or substring, in any case, is the id it plainly means, and the
  /// run says which.
  @Test(arguments: ["MY-APP", "my-app", "note", "com.example.note"])
  func aUniquePartOfAnIdChoosesItAndSaysSo(typed: String) throws {
    let expected = typed.lowercased().contains("app") ? "com.example.my-app" : "com.example.notes"
    let result = try AppData.run(["audit", "--no-config", "--fail-on", "never", "--json", "--app", typed, Self.backup])
    #expect(result.status == 0, "\(result.error)")
    #expect(result.error == "appdata: warning: --app '\(typed)' is \(expected), the one id that fits it\n")
    let ids = (try result.json()["containers"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    #expect(ids.contains(expected))
  }

  /// Several ids fit: they are the candidates, best first, and nothing is chosen.
  @Test func anAmbiguousAppListsTheIdsThatFitIt() throws {
    let result = try AppData.run(["audit", "--no-config", "--app", "example", Self.backup])
    #expect(result.status == 2)
    #expect(result.error.contains("no container matches --app 'example'; it fits com.example.empty, com.example.ghost, com.example.my-app, com.example.notes, com.example.notes.widget, group.com.example.my-app: give one of them"),
            "\(result.error)")
  }

  /// Nothing fits: the apps with the most backed-up bytes, largest first (never alphabetical).
  @Test func anUnknownAppListsTheLargestApps() throws {
    let result = try AppData.run(["audit", "--no-config", "--app", "zzzz", Self.backup])
    #expect(result.status == 2)
    #expect(result.error.contains("the apps with the most backed-up bytes: com.example.my-app (4.7 GiB), com.example.notes (1.2 KiB)"), "\(result.error)")
  }

  @Test func extractChoosesTheSameWayAndListsCandidates() throws {
    let folder = ExtractTests.scratch("choose")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let chosen = try AppData.run(["extract", "--app", "MY-APP", "-o", folder + "/out", "-q", "--fail-on", "never", Self.backup])
    #expect(chosen.status == 0, "\(chosen.error)")
    #expect(chosen.error.hasPrefix("appdata: warning: --app 'MY-APP' is com.example.my-app, the one id that fits it\n"), "\(chosen.error)")
    let ambiguous = try AppData.run(["extract", "--app", "notes", "-o", folder + "/other", "--with-extensions", "--fail-on", "never", Self.backup])
    #expect(ambiguous.status == 0, "notes is com.example.notes (its widget is its plugin): \(ambiguous.error)")
    let unknown = try AppData.run(["extract", "--app", "example", "-o", folder + "/none", Self.backup])
    #expect(unknown.status == 2)
    #expect(unknown.error.contains("it fits com.example.empty, com.example.my-app, com.example.notes, com.example.notes.widget, group.com.example.my-app: give one of them"),
            "\(unknown.error)")
  }

  /// `--list-apps`: one `ID<TAB>BYTES` line per container with an id, largest first.
  @Test func listAppsPrintsIdsAndSizesForScripts() throws {
    let result = try AppData.run(["audit", "--no-config", "--list-apps", Self.backup])
    #expect(result.status == 0)
    let lines = result.output.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
    #expect(lines.first == ["com.example.my-app", "5000000730"])
    let sizes = lines.compactMap { $0.count == 2 ? UInt64($0[1]) : nil }
    #expect(sizes.count == lines.count && sizes == sizes.sorted(by: >))
  }
}
