@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Testing

/// Docs/ stays true to the code: generated documents match, every option and rule is documented,
/// and real output validates against the JSON Schema.
@Suite("documentation")
struct DocumentationTests {
  private func read(_ relative: String) throws -> String {
    try String(contentsOfFile: AppData.packageRoot + "/" + relative, encoding: .utf8)
  }

  /// Every file of this package's Sources the docs name by its path is there (a file moved
  /// or renamed takes its docs with it; Docs/development.md's table of where things happen among them).
  @Test func everySourcePathTheDocsNameExists() throws {
    let docs = try FileManager.default.contentsOfDirectory(atPath: AppData.packageRoot + "/Docs").filter { $0.hasSuffix(".md") }.map { "Docs/" + $0 } + ["README.md"]
    let path = try NSRegularExpression(pattern: #"(?<![A-Za-z/])Sources/AppData[A-Za-z]*/[A-Za-z0-9_+./-]+\.swift"#)
    var named = 0
    var missing: [String] = []
    for doc in docs {
      let text = try String(contentsOfFile: AppData.packageRoot + "/" + doc, encoding: .utf8)
      for match in path.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
        guard let range = Range(match.range, in: text) else { continue }
        named += 1
        if !FileManager.default.fileExists(atPath: AppData.packageRoot + "/" + text[range]) { missing.append("\(doc): \(text[range])") }
      }
    }
    #expect(named >= 10)
    #expect(missing.isEmpty, "\(missing)")
  }

  @Test func manPageAndRulesAreUpToDate() throws {
    #expect(try read("Docs/appdata.1") == HelpFormatter.manPage(), "run 'make docs'")
    #expect(try read("Docs/rules.md") == RulesDocument.markdown(), "run 'make docs'")
  }

  @Test func everyOptionIsInTheManPageAndEveryRuleInRulesMd() throws {
    let man = try read("Docs/appdata.1")
    for command in Commands.all {
      #expect(man.contains(".SH COMMAND: \(command.name.uppercased())"))
      for option in command.options where !option.isHidden {
        #expect(man.contains("\\-\\-" + option.name.replacingOccurrences(of: "-", with: "\\-")), "\(command.name) --\(option.name)")
      }
    }
    let rules = try read("Docs/rules.md")
    for rule in AuditRule.all { #expect(rules.contains("| `\(rule.id)` | \(rule.severity.rawValue) |")) }
    let schema = try read("Docs/audit.schema.json")
    for rule in AuditRule.all { #expect(schema.contains("\"\(rule.id)\"")) }
  }

  @Test func makeInstallPutsExactlyFiveFilesAndUninstallRemovesThem() throws {
    let root = try TestTree("install")
    // `-o release` skips the release build; the debug binary stands in for it.
    let make = "make -C '\(AppData.packageRoot)' -o release RELEASE='\(AppData.binary)' DESTDIR='\(root.root)' PREFIX=/usr/local"
    let install = try AppData.shell("\(make) install")
    #expect(install.status == 0, "\(install.error)")
    let files = try AppData.shell("cd '\(root.root)' && find . -type f | sort")
    #expect(files.output == """
      ./usr/local/bin/appdata
      ./usr/local/share/bash-completion/completions/appdata
      ./usr/local/share/fish/vendor_completions.d/appdata.fish
      ./usr/local/share/man/man1/appdata.1
      ./usr/local/share/zsh/site-functions/_appdata

      """)
    let version = try AppData.shell("'\(root.root)/usr/local/bin/appdata' --version")
    #expect(version.output == "appdata \(AppDataVersion.current)\n")
    #expect(try AppData.shell("grep -q '_appdata' '\(root.root)/usr/local/share/bash-completion/completions/appdata'").status == 0)
    let uninstall = try AppData.shell("\(make) uninstall")
    #expect(uninstall.status == 0, "\(uninstall.error)")
    #expect(try AppData.shell("cd '\(root.root)' && find . -type f").output.isEmpty)
    // Issue 41: the folders it made, now empty, go too (up to PREFIX, which stays).
    #expect(try AppData.shell("cd '\(root.root)' && find . -mindepth 1 -type d | sort").output == "./usr\n./usr/local\n")
  }

  /// Issue 41, 7: the man page has an ENVIRONMENT section from the one table, and no name is
  /// hyphenated at a line's end.
  @Test(.enabled(if: AppData.has("nroff"), "needs nroff (groff) to format the man page"))
  func theManPageNamesTheEnvironmentAndHyphenatesNothing() throws {
    let page = try read("Docs/appdata.1")
    let environment = page.components(separatedBy: ".SH ENVIRONMENT\n").last?.components(separatedBy: ".SH ").first ?? ""
    for name in ["APPDATA_BACKUP_PASSWORD", "NO_COLOR", "TERM", "COLUMNS", "LC_ALL, LC_CTYPE, LANG", "GITHUB_STEP_SUMMARY"] {
      #expect(environment.contains(".B \(name)\n"), "\(name)")
    }
    let formatted = try AppData.shell("MANWIDTH=80 nroff -man '\(AppData.packageRoot)/Docs/appdata.1'")
    #expect(formatted.status == 0)
    let hyphenated = formatted.output.split(separator: "\n").filter { $0.hasSuffix("\u{2010}") || ($0.hasSuffix("-") && !$0.hasSuffix(" -") && !$0.hasSuffix("--")) }
    #expect(hyphenated.isEmpty, "\(hyphenated.prefix(5))")
  }

  @Test func theManPageHasNoFormattingWarnings() throws {
    let lint = try AppData.shell("groff -man -ww -z '\(AppData.packageRoot)/Docs/appdata.1'")
    #expect(lint.status == 0)
    #expect(lint.error.isEmpty, "\(lint.error)")
  }

  @Test func readmeMentionsEveryCommandAndRule() throws {
    let readme = try read("README.md")
    #expect(readme.contains("make demo") && readme.contains("make test"))
    for command in Commands.all { #expect(readme.contains("appdata \(command.name)")) }
    for rule in AuditRule.all { #expect(readme.contains(rule.id)) }
  }

  /// Issue 51: README is the quick start, one example per job and links; the reference is in
  /// Docs/. At most 300 lines, and every file it links to is there.
  @Test func readmeIsShortAndItsLinksResolve() throws {
    let readme = try read("README.md")
    let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count - 1
    #expect(lines <= 300, "README.md has \(lines) lines")
    var targets: [String] = []
    var rest = readme[...]
    while let open = rest.range(of: "](") {
      rest = rest[open.upperBound...]
      guard let close = rest.firstIndex(of: ")") else { break }
      targets.append(String(rest[..<close]))
    }
    let local = targets.filter { !$0.hasPrefix("http") && !$0.hasPrefix("#") }.map { String($0.split(separator: "#").first ?? "") }
    #expect(local.count > 10)
    for target in local { #expect(FileManager.default.fileExists(atPath: AppData.packageRoot + "/" + target), "\(target)") }
  }

  @Test func jsonOutputValidatesAgainstTheSchema() throws {
    let tree = try TestTree("schema")
    try tree.file("Documents/a", size: 10)
    try tree.file("Documents/Offline/b", size: 20)
    try tree.setModernMarker("Documents/Offline")
    try tree.file("Library/Caches/c", size: 1)
    try tree.file("Junk/d", size: 1)
    let bad = Array(tree.root.utf8) + Array("/Documents/".utf8) + [0xFF, 0]  // a name that is not UTF-8
    let fd = bad.withUnsafeBufferPointer { $0.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bad.count) { open($0, O_CREAT | O_WRONLY, 0o644) } }
    close(fd)
    for extra in [[], ["--list", "all", "--max-file-size", "5", "--max-backup-size", "1"]] {
      let output = tree.path("out.json")
      let run = try AppData.shell("\"$APPDATA\" audit --json --fail-on never \(extra.joined(separator: " ")) '\(tree.root)' > '\(output)'")
      #expect(run.status == 0)
      #expect(try AppData.validateAgainstAuditSchema(output) == "valid")
      // An iOS container's one destination: the iCloud and computer backup, what the backup holds.
      let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output))) as? [String: Any]
      let destinations = json?["destinations"] as? [String: [String: Any]]
      #expect(destinations?.keys.sorted() == ["backup"])
      let backup = destinations?["backup"]
      #expect(backup?["carried"] as? Bool == true && backup?["reason"] is NSNull && backup?["quota"] is NSNull)
      let held = (json?["summary"] as? [String: Any])?["backup"] as? [String: Any]
      #expect(backup?["files"] as? Int == 2 && held?["files"] as? Int == 2)  // Documents/a and the empty file not named in UTF-8
      #expect(backup?["bytes"] as? Int == 10 && held?["bytes"] as? Int == 10 && backup?["measured"] as? Int == 10)
      try FileManager.default.removeItem(atPath: output)
    }
  }

  /// Issue 41, 7: help, the man page and Docs agree on exit statuses. The man page is generated
  /// from the help's table; every status a command's help names is in Docs/options.md's "Exit
  /// status" section, and an interrupt is 128 + the signal everywhere it is told.
  @Test func helpManPageAndDocsAgreeOnExitStatuses() throws {
    let options = try read("Docs/options.md")
    let exitSection = options.components(separatedBy: "## Exit status").last?.components(separatedBy: "\n## ").first ?? ""
    let page = try read("Docs/appdata.1")
    for command in ["audit", "migrate", "extract"] {
      let help = try AppData.run([command, "--help"]).output
      let section = help.components(separatedBy: "Exit status:\n").last ?? ""
      let statuses = Set(section.split(separator: "\n").compactMap { Int($0.split(separator: " ").first ?? "") })
      #expect(statuses.isSuperset(of: [0, 1, 2, 141]), "\(command): \(statuses)")
      for status in statuses {
        #expect(exitSection.contains("\(status)"), "\(command): exit \(status) is not in Docs/options.md's Exit status")
        let manSection = page.components(separatedBy: ".SH COMMAND: \(command.uppercased())").last?.components(separatedBy: ".SH ").first ?? ""
        #expect(manSection.contains(".B \(status)\n"), "\(command): exit \(status) is not in the man page")
      }
      if command != "audit" {
        #expect(statuses.contains(130), "\(command): an interrupt's status")
        #expect(try read("Docs/\(command).md").contains("128 + the signal"), "\(command).md tells the interrupt's status")
      }
    }
  }
}

/// The CI recipe of Docs/ci.md, run as written (issue 34): its commands between the markers,
/// with `xcrun` standing in for the Simulator's and appdata on PATH.
@Suite("documented recipes")
struct DocumentedRecipeTests {
  static func recipe(_ name: String) throws -> String {
    let text = try String(contentsOfFile: AppData.packageRoot + "/Docs/ci.md", encoding: .utf8)
    guard let start = text.range(of: "<!-- recipe: \(name) -->\n```sh\n"),
          let end = text.range(of: "```\n<!-- end recipe -->", range: start.upperBound..<text.endIndex) else {
      throw TestFailure("Docs/ci.md has no recipe \(name)")
    }
    return String(text[start.upperBound..<end.lowerBound])
  }

  @Test func theContainerGrowthRecipeFailsOnGrowthAgainstTheLastArchive() throws {
    let folder = NSTemporaryDirectory() + "appdata-recipe-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let script = try Self.recipe("container-growth")
    #expect(script.contains("appdata audit --baseline previous/container.tar.gz"))
    try FileManager.default.createDirectory(atPath: folder + "/bin", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: folder + "/data/Documents", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: folder + "/job", withIntermediateDirectories: true)
    try "#!/bin/sh\necho '\(folder)/data'\n".write(toFile: folder + "/bin/xcrun", atomically: true, encoding: .utf8)
    try FileManager.default.createSymbolicLink(atPath: folder + "/bin/appdata", withDestinationPath: AppData.binary)
    try script.write(toFile: folder + "/recipe.sh", atomically: true, encoding: .utf8)
    #expect(chmod(folder + "/bin/xcrun", 0o755) == 0)
    try Data(count: 100_000).write(to: URL(fileURLWithPath: folder + "/data/Documents/notes.db"))
    let run = { () throws -> RunResult in
      try AppData.shell("cd '\(folder)/job' && PATH='\(folder)/bin':\"$PATH\" APP_ID=com.example.notes bash -e '\(folder)/recipe.sh'")
    }
    // The first build: no previous archive.
    let first = try run()
    #expect(first.status == 0, "\(first.output)\(first.error)")
    #expect(FileManager.default.fileExists(atPath: folder + "/job/container.tar.gz"))
    // The next build, grown by 5%: within the limits.
    try FileManager.default.createDirectory(atPath: folder + "/job/previous", withIntermediateDirectories: true)
    try FileManager.default.moveItem(atPath: folder + "/job/container.tar.gz", toPath: folder + "/job/previous/container.tar.gz")
    try Data(count: 5_000).write(to: URL(fileURLWithPath: folder + "/data/Documents/more.db"))
    let second = try run()
    #expect(second.status == 0, "\(second.output)\(second.error)")
    #expect(second.output.contains("Since previous/container.tar.gz"), "\(second.output)")
    // The one after, grown by 2 MB: it fails, naming the growth.
    try FileManager.default.removeItem(atPath: folder + "/job/previous/container.tar.gz")
    try FileManager.default.moveItem(atPath: folder + "/job/container.tar.gz", toPath: folder + "/job/previous/container.tar.gz")
    try Data(count: 2_000_000).write(to: URL(fileURLWithPath: folder + "/data/Documents/big.db"))
    let third = try run()
    #expect(third.status == 1, "\(third.output)\(third.error)")
    #expect(third.output.contains("[backup-grew]"), "\(third.output)")
  }

}
