@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Testing

/// GitHub, JUnit and SARIF reports, --output, colour, --quiet and shell completion.
@Suite("report formats")
struct ReportFormatTests {
  /// 12 oversized backed-up files (12 errors) and one stray folder (a warning).
  private func container() throws -> TestTree {
    let tree = try TestTree("formats")
    for index in 0..<12 { try tree.file(String(format: "Documents/f%02d.bin", index), size: 2000 + index) }
    try tree.file("Documents/a, b:%.bin", size: 5000)
    try tree.file("Junk/x", size: 1)
    return tree
  }

  @Test func githubAnnotationsAreCappedAndTheSummaryHasEveryFinding() throws {
    let tree = try container()
    let summary = tree.scratch + "/summary.md"
    try "previous step\n".write(toFile: summary, atomically: true, encoding: .utf8)
    let result = try AppData.run(["audit", "--no-config", "--format", "github", "--max-file-size", "1K", tree.root],
                                 environment: ["GITHUB_STEP_SUMMARY": summary])
    #expect(result.status == 1)
    let lines = result.output.split(separator: "\n").map(String.init)
    #expect(lines.count == 12)
    #expect(lines[0] == "::error file=Documents/a%2C b%3A%25.bin,title=appdata backup-file-too-large::Documents/a, b:%25.bin: backed-up file of 4.9 KiB (5,000 bytes), over the 1.0 KiB limit")
    #expect(lines[1] == "::error file=Documents/f00.bin,title=appdata backup-file-too-large::Documents/f00.bin: backed-up file of 2.0 KiB (2,000 bytes), over the 1.0 KiB limit")
    #expect(lines[9] == "::error file=Documents/f08.bin,title=appdata backup-file-too-large::Documents/f08.bin: backed-up file of 2.0 KiB (2,008 bytes), over the 1.0 KiB limit")
    #expect(lines.prefix(10).allSatisfy { $0.hasPrefix("::error ") })
    #expect(lines[10] == "appdata: 4 more findings not annotated (GitHub shows 10 per step); every finding is in the job summary")
    #expect(lines[11] == "appdata: backup 13 files, 29066 bytes; 14 findings")

    let markdown = try String(contentsOfFile: summary, encoding: .utf8)
    #expect(markdown.hasPrefix("previous step\n## appdata audit failed\n"))
    #expect(markdown.contains("| critical | 13 | 29066 (28.4 KiB) |"))
    #expect(markdown.contains("### Findings (14)"))
    for index in 0..<12 { #expect(markdown.contains(String(format: "`Documents/f%02d.bin`", index))) }
    #expect(markdown.contains("| warning | `unknown-location` | `Junk` |"))

    // Without GITHUB_STEP_SUMMARY the last lines say where to look instead.
    let plain = try AppData.run(["audit", "--no-config", "--format", "github", "--max-file-size", "1K", tree.root])
    #expect(plain.output.contains("set GITHUB_STEP_SUMMARY or use --format json for all of them"))
  }

  @Test func junitHasOneCasePerRuleAndFailuresCarryFindings() throws {
    let tree = try container()
    let file = tree.scratch + "/report.xml"
    let result = try AppData.run(["audit", "--no-config", "--format", "junit", "--output", file, "--max-file-size", "1K", tree.root])
    #expect(result.status == 1)
    #expect(result.output.contains("Result: FAIL"))  // the table still goes to the terminal
    let check = try AppData.shell("""
      python3 - '\(file)' <<'PY'
      import sys, xml.etree.ElementTree as ET
      root = ET.parse(sys.argv[1]).getroot()
      suite = root.find('testsuite')
      cases = suite.findall('testcase')
      failures = [c for c in cases if c.find('failure') is not None]
      print(root.tag, suite.get('tests'), suite.get('failures'), len(cases), len(failures))
      print(failures[0].get('name'), failures[0].find('failure').get('message'), len(failures[0].find('failure').text.splitlines()))
      warn = [c for c in cases if c.get('name') == 'unknown-location'][0]
      print(warn.find('failure') is None, warn.find('system-out').text)
      PY
      """)
    #expect(check.status == 0, "\(check.error)")
    #expect(check.output == """
      testsuites \(AuditRule.all.count) 1 \(AuditRule.all.count) 1
      backup-file-too-large 13 findings 13
      True warning: Junk: top-level entry outside the standard layout (Documents, Library, tmp); not backed up

      """)
  }

  @Test func sarifValidatesAgainstTheOfficialSchema() throws {
    let tree = try container()
    let file = tree.scratch + "/report.sarif"
    let result = try AppData.run(["audit", "--no-config", "--format", "sarif", "--output", file, "--max-file-size", "1K", tree.root])
    #expect(result.status == 1)
    let check = try AppData.shell("""
      python3 - '\(AppData.packageRoot)/Tests/Schemas/sarif-schema-2.1.0.json' '\(file)' <<'PY'
      import json, sys, jsonschema
      schema = json.load(open(sys.argv[1])); log = json.load(open(sys.argv[2]))
      jsonschema.Draft4Validator(schema).validate(log)
      run = log['runs'][0]
      print(log['version'], len(run['tool']['driver']['rules']), len(run['results']))
      print(run['results'][0]['locations'][0]['physicalLocation']['artifactLocation']['uri'])
      print(sorted({r['level'] for r in run['results']}))
      PY
      """)
    #expect(check.status == 0, "\(check.error)")
    #expect(check.output == "2.1.0 \(AuditRule.all.count) 14\nDocuments/a%2C%20b%3A%25.bin\n['error', 'warning']\n")
  }

  @Test func outputsPairWithTheirFormats() throws {
    let tree = try container()
    let json = tree.scratch + "/a.json"
    let sarif = tree.scratch + "/b.sarif"
    let result = try AppData.run(["audit", "--no-config", "--format", "json", "--output", json, "--format", "sarif", "-o", sarif, tree.root])
    #expect(result.output.hasPrefix("Container: "))
    #expect((try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])?["schemaVersion"] as? Int == 1)
    #expect((try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sarif))) as? [String: Any])?["version"] as? String == "2.1.0")
    let two = try AppData.run(["audit", "--format", "json", "--format", "sarif", tree.root])
    #expect(two.status == 2)
    #expect(two.error == "appdata: error: only one format can go to standard output; give --output FILE after the others\n")
    let orphan = try AppData.run(["audit", "--output", json, tree.root])
    #expect(orphan.status == 2)
  }

  @Test(.enabled(if: AppData.has("script"), "needs script(1) for a pseudo-terminal"))
  func colourOnlyWhenAskedOrOnATerminal() throws {
    let tree = try container()
    let arguments = ["audit", "--no-config", "--max-file-size", "1K", tree.root]
    #expect(!(try AppData.run(arguments).output.contains("\u{1B}[")))
    #expect(try AppData.run(["audit", "--color", "always"] + arguments.dropFirst()).output.contains("\u{1B}[31merror  \u{1B}[0m"))
    let terminal = try AppData.shell("unset NO_COLOR; TERM=xterm script -qec \"$APPDATA \(arguments.joined(separator: " ")) --quiet\" /dev/null")
    #expect(terminal.output.contains("\u{1B}[31m"))
    let noColor = try AppData.shell("TERM=xterm NO_COLOR=1 script -qec \"$APPDATA \(arguments.joined(separator: " "))\" /dev/null")
    #expect(!noColor.output.contains("\u{1B}[3"))
    let dumb = try AppData.shell("TERM=dumb script -qec \"$APPDATA \(arguments.joined(separator: " "))\" /dev/null")
    #expect(!dumb.output.contains("\u{1B}[3"))
  }

  /// Issue 51's example as it reads now: the container by its name, the size rounded and exact,
  /// the limit rounded (exact in JSON's `limit`), then what to do; one growth, one backup-grew.
  @Test func aContainersOwnFindingsNameItAndSayWhatToDo() throws {
    let base = try TestTree("issue-51")
    let app = base.path("MyApp")
    try base.sparseFile("MyApp/Documents/video.mov", size: 381_717_522)
    try base.file("MyApp/Library/Preferences/p.plist", size: 10)
    let baseline = base.scratch + "/baseline.json"
    try FileManager.default.moveItem(atPath: app + "/Documents/video.mov", toPath: base.scratch + "/video.mov")
    _ = try AppData.run(["audit", "--no-config", "--format", "json", "--output", baseline, app])
    try FileManager.default.moveItem(atPath: base.scratch + "/video.mov", toPath: app + "/Documents/video.mov")
    let arguments = ["audit", "--no-config", "--quiet", "--max-backup-size", "100000000", "--baseline", baseline,
                     "--max-growth", "1M", "--max-growth-percent", "10", app]
    let table = try AppData.run(arguments)
    #expect(table.status == 1)
    #expect(table.output.contains("  error   MyApp: the backup would carry 364.0 MiB (381,717,532 bytes), over the 95.4 MiB limit [backup-too-large]"
                                  + " What to do: \(AuditRule.backupTooLarge.remedy)\n"), "\(table.output)")
    #expect(table.output.components(separatedBy: "[backup-grew]").count == 2, "\(table.output)")
    let json = try AppData.run(["audit", "--json"] + arguments.dropFirst().filter { $0 != "--quiet" }).json()
    let tooLarge = try #require(findings(json, rule: "backup-too-large").first)
    #expect(tooLarge["bytes"] as? Int == 381_717_532 && tooLarge["limit"] as? Int == 100_000_000)
    #expect(tooLarge["remedy"] as? String == AuditRule.backupTooLarge.remedy)
    let grew = findings(json, rule: "backup-grew")
    #expect(grew.count == 1)
    #expect(grew.first?["bytes"] as? Int == 381_717_522 && grew.first?["limit"] as? Int == 1_048_576)
    #expect((grew.first?["message"] as? String)?.hasSuffix("more than --max-growth 1.0 MiB (1,048,576 bytes) and --max-growth-percent 10%") == true)
  }

  @Test func quietPrintsOnlyFindings() throws {
    let tree = try container()
    let result = try AppData.run(["audit", "--no-config", "--quiet", "--max-file-size", "4K", tree.root])
    #expect(result.output == "  error   Documents/a, b:%.bin: backed-up file of 4.9 KiB (5,000 bytes), over the 4.0 KiB limit [backup-file-too-large]"
                           + " What to do: \(AuditRule.backupFileTooLarge.remedy)\n"
                           + "  warning Junk: top-level entry outside the standard layout (Documents, Library, tmp); not backed up [unknown-location]"
                           + " What to do: \(AuditRule.unknownLocation.remedy)\n")
  }

  /// The HTML page's template (AuditSet+HTMLTemplate.swift) is filled at its three places once:
  /// a name that reads like one of them stays as it is, and the page holds the template's text
  /// around them.
  @Test func theHTMLTemplatesPlacesAreFilledOnce() throws {
    let tree = try TestTree("html-template")
    let root = try tree.folder("{{data}} {{body}} {{title}}")
    _ = try tree.file("{{data}} {{body}} {{title}}/Documents/{{data}}", size: 10)
    let result = try AppData.run(["audit", "--no-config", "--format", "html", "--list", "all", root])
    #expect(result.status == 0)
    let page = result.output
    #expect(page.hasPrefix("<!DOCTYPE html>\n") && page.hasSuffix("</body></html>\n"))
    #expect(page.components(separatedBy: "<title>appdata audit</title>").count == 2)
    #expect(page.components(separatedBy: "<script type=\"application/json\" id=\"data\">").count == 2)
    #expect(page.contains("<h1>appdata audit: \(root)</h1>"))
    #expect(page.contains("\"n\":\"{{data}}\"") && page.contains("\"name\":\"{{data}} {{body}} {{title}}\""))
  }

  @Test func completionScriptsLoad() throws {
    // eval, as README shows: macOS's bash 3.2 reads nothing from `source <(...)`.
    let bash = try AppData.shell("eval \"$(\"$APPDATA\" completion bash)\" && complete -p appdata")
    #expect(bash.status == 0, "\(bash.error)")
    #expect(bash.output == "complete -o filenames -F _appdata appdata\n")
    // The generated function completes commands, options and choices.
    let words = try AppData.shell("""
      eval "$("$APPDATA" completion bash)"
      COMP_WORDS=(appdata au); COMP_CWORD=1; _appdata; echo "${COMPREPLY[*]}"
      COMP_WORDS=(appdata audit --max-f); COMP_CWORD=2; _appdata; echo "${COMPREPLY[*]}"
      COMP_WORDS=(appdata audit --format s); COMP_CWORD=3; _appdata; echo "${COMPREPLY[*]}"
      COMP_WORDS=(appdata audit --format = j); COMP_CWORD=4; _appdata; echo "${COMPREPLY[*]}"
      COMP_WORDS=(appdata audit --format =); COMP_CWORD=3; _appdata; echo "${COMPREPLY[*]}"
      COMP_WORDS=(appdata audit --color=n); COMP_CWORD=2; _appdata; echo "${COMPREPLY[*]}"
      """)
    // Issue 41: --format=<Tab>, with '=' a word break (bash's default) or not.
    #expect(words.output == "audit\n--max-file-size\nsarif\njson junit\ntable json ndjson github junit sarif html\n--color=never\n", "\(words.output)")
    // File names with spaces are one word; --backup and --root complete paths too.
    let tree = try TestTree("completion")
    try tree.file("My Backups/a b.zip")
    try tree.folder("My Backups/00008030 X")
    let files = try AppData.shell("""
      eval "$("$APPDATA" completion bash)"
      cd '\(tree.root)'
      COMP_WORDS=(appdata audit 'My Backups/'); COMP_CWORD=2; _appdata; printf '[%s]' "${COMPREPLY[@]}"; echo
      COMP_WORDS=(appdata audit --backup My); COMP_CWORD=3; _appdata; printf '[%s]' "${COMPREPLY[@]}"; echo
      COMP_WORDS=(appdata audit --root 'My Backups/0'); COMP_CWORD=3; _appdata; printf '[%s]' "${COMPREPLY[@]}"; echo
      """)
    #expect(files.output == "[My Backups/00008030 X][My Backups/a b.zip]\n[My Backups]\n[My Backups/00008030 X]\n", "\(files.error)")
    let script = try AppData.run(["completion", "bash"]).output
    for option in Commands.audit.options where !option.isHidden {
      #expect(script.contains("--" + option.name))
    }
    // Nothing bash 3.2 (macOS's /bin/bash) lacks: mapfile and readarray, associative arrays,
    // compopt, case conversion, the ;& and ;;& case ends, |&, &>>, coproc, [[ -v ]].
    for construct in ["mapfile", "readarray", "declare -A", "local -A", "compopt", ",,}", "^^}", ";&", "|&", "&>>", "coproc", "[[ -v"] {
      #expect(!script.contains(construct), "bash 4 only: \(construct)")
    }
    #expect(try AppData.run(["completion", "zsh"]).output.hasPrefix("#compdef appdata\n"))
    #expect(try AppData.run(["completion", "fish"]).output.contains("complete -c appdata -n '__fish_seen_subcommand_from audit' -l max-file-size -x"))
    let unknown = try AppData.run(["completion", "bassh"])
    #expect(unknown.status == 2)
    #expect(unknown.error == "appdata: error: unknown shell 'bassh': expected bash, zsh or fish; did you mean 'bash'?\n")
  }
}

/// Lines a person reads stay one line: long lists are cut with a count, missing facts are said.
@Suite("one-line lists")
struct OneLineListTests {
  static func emptyReport(_ name: String) -> AuditReport {
    var report = AuditReport(container: "/b//AppDomain-" + name, categories: [:], directories: 0, maxFileSize: nil,
                             maxBackupSize: nil, findings: [], largest: [], entries: nil)
    report.id = name
    report.name = name
    return report
  }

  @Test func manyEmptyContainersShowTheFirstFewAndACount() {
    let names = (1...20).map { String(format: "com.example.app%02d", $0) }
    let set = AuditSet(source: "/b", reports: names.map(Self.emptyReport), isCollection: true)
    let line = set.table(exactBytes: true, failOn: nil).split(separator: "\n").first { $0.contains("with no app files") }
    #expect(line == "20 containers with no app files: com.example.app01, com.example.app02, com.example.app03, com.example.app04, com.example.app05, com.example.app06, com.example.app07, com.example.app08, … and 12 more")
    // Eight or fewer: all of them.
    #expect(Plural.listed(["a", "b"], limit: 8) == "a, b")
  }

  @Test func anAppWithNoMatchListsAtMostTenIdsAndNeverTheSystemDomains() {
    let ids = (1...14).map { "com.example.app\($0)" }
    let refusal = AppFilter.noMatch(["com.example.nope"], source: "/b", available: ids)
    // Issue 41: the near spellings first (app1 … app9 are three edits away), then the rest.
    let nearFirst = (1...9).map { "com.example.app\($0)" } + ["com.example.app10"]
    #expect(refusal.message == "/b: no container matches --app 'com.example.nope'; the ids found: "
      + nearFirst.joined(separator: ", ") + ", … and 4 more")
  }

  @Test func aBackupLineWithoutDeviceFieldsSaysSo() {
    var set = AuditSet(source: "/b", reports: [], isCollection: true)
    set.backupInfo = BackupInfo(path: "/b", snapshotState: "finished")
    #expect(set.table(exactBytes: true, failOn: nil).contains("\nBackup: Info.plist names no device, iOS version or date, snapshot finished\n"))
    set.backupInfo = BackupInfo(path: "/b", deviceName: "", productVersion: "17.1")
    #expect(set.table(exactBytes: true, failOn: nil).contains("\nBackup: iOS 17.1\n"))
  }
}
