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
    let unnamed = names.filter { !guide.contains("`\($0)") }.sorted()
    #expect(unnamed.isEmpty, "public in Docs/public-api.txt but not named in Docs/library.md: \(unnamed)")
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
