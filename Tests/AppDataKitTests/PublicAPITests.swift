import Foundation
import Testing

/// The AppDataKit product's public declarations are the ones Docs/public-api.txt lists, read from
/// the modules this build made (Scripts/public-api.py: swift-symbolgraph-extract at access level
/// public, what another package sees). Everything else is `package`: a declaration made public
/// by accident fails here; a deliberate one is written with `python3 Scripts/public-api.py
/// --write` and named in Docs/library.md.
@Suite("public API")
struct PublicAPITests {
  /// The Modules folder of the build the tests run from (beside the `appdata` binary).
  static var modules: String { URL(fileURLWithPath: AppData.binary).deletingLastPathComponent().appendingPathComponent("Modules").path }

  /// The lines only one side has: `+` the build's, `-` the file's.
  static func differences(built: [Substring], file: [Substring]) -> [String] {
    let builtSet = Set(built), fileSet = Set(file)
    return built.filter { !fileSet.contains($0) }.map { "+ " + $0 } + file.filter { !builtSet.contains($0) }.map { "- " + $0 }
  }

  /// The top-level names of a listing (`Module  kind  Name.member  declaration`).
  static func topLevelNames(_ lines: [Substring]) -> Set<String> {
    Set(lines.compactMap { line in
      let fields = line.components(separatedBy: "  ")
      guard fields.count >= 3 else { return nil }
      return String(fields[2].prefix { $0 != "." && $0 != "(" })
    })
  }

  @Test(.enabled(if: AppData.has("python3") && AppData.isLinux, "needs python3; Docs/public-api.txt is read from a Linux build"))
  func theBuiltModulesDeclareWhatTheAPIFileLists() throws {
    let result = try AppData.shell("python3 '\(AppData.packageRoot)/Scripts/public-api.py' '\(Self.modules)'")
    #expect(result.status == 0, "\(result.error)")
    let built = result.output.split(separator: "\n")
    let file = try String(contentsOfFile: AppData.packageRoot + "/Docs/public-api.txt", encoding: .utf8).split(separator: "\n")
    // Every module of the product answered (an empty listing would match nothing).
    #expect(Set(built.map { $0.prefix { $0 != " " } }) == ["AppDataKit", "AppDataCore", "AppDataReaders", "AppDataReports", "AppDataMigration", "AppDataSystem"])
    let differences = Self.differences(built: built, file: file)
    #expect(differences.isEmpty, "public declarations differ from Docs/public-api.txt (+ built, - listed); if meant, run python3 Scripts/public-api.py --write and name new types in Docs/library.md:\n\(differences.prefix(40).joined(separator: "\n"))")
  }

  @Test func everyPublicTypeIsNamedInTheLibraryGuide() throws {
    let file = try String(contentsOfFile: AppData.packageRoot + "/Docs/public-api.txt", encoding: .utf8).split(separator: "\n")
    let guide = try String(contentsOfFile: AppData.packageRoot + "/Docs/library.md", encoding: .utf8)
    let names = Self.topLevelNames(file)
    #expect(names.count >= 40)
    // Named as itself: "`AuditSet" does not name `Audit`.
    let unnamed = names.filter { name in
      !["`", "(", ".", "<", " ", ":"].contains { guide.contains("`\(name)\($0)") }
    }.sorted()
    #expect(unnamed.isEmpty, "public in Docs/public-api.txt but not named in Docs/library.md: \(unnamed)")
  }

  /// The other way: every call the guide's table of entry points names is public, by the name
  /// the symbol graph gives it (`BaselineSet(of:file:)` is `BaselineSet.init(of:file:)`,
  /// `.jsonDocument()` after `ExtractReport.table()` is `ExtractReport.jsonDocument()`).
  @Test func everyEntryPointTheGuideNamesIsPublic() throws {
    let file = try String(contentsOfFile: AppData.packageRoot + "/Docs/public-api.txt", encoding: .utf8).split(separator: "\n")
    let declared = Set(file.compactMap { line -> String? in
      let fields = line.components(separatedBy: "  ")
      return fields.count >= 3 ? fields[2] : nil
    })
    let calls = try Self.entryPointCalls(in: String(contentsOfFile: AppData.packageRoot + "/Docs/library.md", encoding: .utf8))
    #expect(calls.count >= 20, "\(calls)")
    let missing = calls.filter { !declared.contains($0) }
    #expect(missing.isEmpty, "named in Docs/library.md's entry points but not public: \(missing)")
  }

  /// The calls of the first column of the guide's "Entry points" table, as the symbol graph names them.
  static func entryPointCalls(in guide: String) throws -> [String] {
    let aliases = ["ExtractReport": "BackupExtraction.Report"]
    guard let start = guide.range(of: "## Entry points") else { return [] }
    let table = guide[start.upperBound...].split(separator: "\n").drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }.dropFirst(2)
    let token = try NSRegularExpression(pattern: "`([^`]+)`")
    var calls: [String] = []
    for row in table {
      let cell = String(row.split(separator: "|", omittingEmptySubsequences: false)[1])
      var type: String?
      for match in token.matches(in: cell, range: NSRange(cell.startIndex..., in: cell)) {
        guard let range = Range(match.range(at: 1), in: cell) else { continue }
        var text = String(cell[range].split(separator: " ").first ?? "")
        if text.hasPrefix("."), let type { text = type + text }
        // `Type(args).method()`: the initializer, then the method.
        let pieces = text.components(separatedBy: ").")
        for (index, piece) in pieces.enumerated() {
          var call = index < pieces.count - 1 ? piece + ")" : piece
          if index > 0, let type { call = type + "." + call }
          let name = call.prefix { $0 != "(" }
          if let first = name.first, first.isUppercase, !name.contains(".") { call = name + ".init" + call.dropFirst(name.count) }
          for (alias, real) in aliases where call.hasPrefix(alias + ".") { call = real + call.dropFirst(alias.count) }
          if call.contains(".") { type = String(call.prefix { $0 != "(" }.split(separator: ".").dropLast().joined(separator: ".")) }
          calls.append(call)
        }
      }
    }
    return calls
  }

  @Test func theGuidesCallsAreReadAsTheSymbolGraphNamesThem() throws {
    let guide = "## Entry points\n\n| call | x |\n| --- | --- |\n| `BaselineSet(of:file:)`, `Baseline.load(path:)` | y |\n| `ExtractReport.table()`, `.fails(at:)` | z |\n| `Migration(rootPath:options:).run() -> Migration.Outcome` | w |\n| `audit(paths:) -> AuditSet` | v |\n\nafter"
    #expect(try Self.entryPointCalls(in: guide) == ["BaselineSet.init(of:file:)", "Baseline.load(path:)", "BackupExtraction.Report.table()",
                                                     "BackupExtraction.Report.fails(at:)", "Migration.init(rootPath:options:)", "Migration.run()", "audit(paths:)"])
  }

  /// The comparison finds a declaration added and one taken away (it can fail).
  @Test func aDeclarationAddedOrRemovedIsADifference() {
    let listed: [Substring] = ["AppDataCore  struct  Refusal  struct Refusal", "AppDataKit  func  audit(paths:)  func audit()"]
    #expect(Self.differences(built: listed, file: listed).isEmpty)
    let added = listed + ["AppDataSystem  enum  Syscalls  enum Syscalls"]
    #expect(Self.differences(built: added, file: listed) == ["+ AppDataSystem  enum  Syscalls  enum Syscalls"])
    #expect(Self.differences(built: Array(listed.prefix(1)), file: listed) == ["- AppDataKit  func  audit(paths:)  func audit()"])
    #expect(Self.topLevelNames(added) == ["Refusal", "audit", "Syscalls"])
  }
}
