@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Testing

/// The hand-written parser, in process: GNU conventions, errors and suggestions.
@Suite("argument parser")
struct ArgumentParserTests {
  let parser = ArgumentParser(command: Commands.audit)

  /// Issue 52: every option is looked up by its `OptionName`, never by a string, and every
  /// name is an option of some command (a name no table holds would always read "not given").
  @Test func everyOptionNameIsAnOption() throws {
    let declared = Set((Commands.all.flatMap(\.options) + Commands.global).map(\.key))
    #expect(Set(OptionName.allCases).subtracting(declared).isEmpty, "\(Set(OptionName.allCases).subtracting(declared))")
    var found: [String] = []
    for (path, text) in try PortabilityTests.sources() where path.hasPrefix("AppDataCommandLine") {
      for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
      where line.range(of: #"\b(parsed|result)\.(value|flag|allValues|contains|size|integer)\(""#, options: .regularExpression) != nil {
        found.append("\(path):\(number + 1): \(line)")
      }
    }
    #expect(found.isEmpty, "options looked up by a string:\n\(found.joined(separator: "\n"))")
  }

  /// Every rule of every command's table: the options together (or one without what it needs)
  /// are a usage error naming both; alone (or with what they need), they parse.
  @Test func everyOptionRuleIsEnforcedAndNamesBothOptions() throws {
    func arguments(_ names: [OptionName], in command: CommandSpec) -> [String] {
      names.flatMap { key -> [String] in
        let option = command.options.first { $0.key == key }!
        let name = key.rawValue
        guard option.takesValue else { return ["--" + name] }
        return ["--" + name, option.choices?.first ?? (name.hasPrefix("max") ? "1" : "x")]
      }
    }
    var walked = 0
    for command in Commands.all {
      let parser = ArgumentParser(command: command)
      let operands = Array(repeating: "PATH", count: max(command.minimumOperands, 1))
      for rule in command.rules {
        walked += 1
        switch rule.kind {
        case .exclusive(let names):
          #expect(throws: UsageError("'--\(names[0])' and '--\(names[1])' cannot be given together: \(rule.reason)")) {
            try parser.parse(arguments(names, in: command) + operands)
          }
          for name in names { #expect(throws: Never.self) { try parser.parse(arguments([name], in: command) + operands) } }
        case .requires(let name, let needs):
          #expect(throws: UsageError("'--\(name)' needs " + needs.map { "'--\($0)'" }.joined(separator: " or ") + ": \(rule.reason)")) {
            try parser.parse(arguments([name], in: command) + operands)
          }
          #expect(throws: Never.self) { try parser.parse(arguments([name, needs[0]], in: command) + operands) }
        }
      }
    }
    #expect(walked >= 5)
    // The case of issue 32: an explicit policy file beside --no-config is no longer dropped.
    #expect(throws: UsageError.self) { try parser.parse(["--no-config", "--config", "policy.json", "PATH"]) }
  }

  /// An option whose help says it is repeatable keeps every value (`--android-rules` once said
  /// so and kept only the last).
  @Test func optionsSaidRepeatableAreRepeatable() {
    for command in Commands.all {
      for option in command.options where option.help.contains("repeatable") {
        #expect(option.isRepeatable, "appdata \(command.name) --\(option.name)")
      }
    }
  }

  @Test func longOptionsTakeValuesWithEqualsOrSeparately() throws {
    let parsed = try parser.parse(["--max-file-size=5M", "--top", "3", "PATH"])
    #expect(parsed.value(.maxFileSize) == "5M")
    #expect(parsed.value(.top) == "3")
    #expect(parsed.operands == ["PATH"])
  }

  @Test func shortOptionsAttachedSeparateAndBundled() throws {
    #expect(try parser.parse(["-j4", "P"]).value(.jobs) == "4")
    #expect(try parser.parse(["-j", "4", "P"]).value(.jobs) == "4")
    let bundled = try parser.parse(["-bqj2", "P"])
    #expect(bundled.flag(.bytes) && bundled.flag(.quiet))
    #expect(bundled.value(.jobs) == "2")
    #expect(try parser.parse(["-fjson", "P"]).value(.format) == "json")
  }

  @Test func optionsAfterOperandsAndDoubleDash() throws {
    let parsed = try parser.parse(["PATH", "--json"])
    #expect(parsed.flag(.json))
    let ended = try parser.parse(["--", "--json"])
    #expect(ended.operands == ["--json"])
    #expect(!ended.flag(.json))
  }

  @Test func uniquePrefixesAreAcceptedAndAmbiguousOnesRejected() throws {
    #expect(try parser.parse(["--max-f", "1", "P"]).value(.maxFileSize) == "1")
    #expect(throws: UsageError.self) { try parser.parse(["--max", "1", "P"]) }
    do {
      _ = try parser.parse(["--max", "1", "P"])
    } catch {
      #expect(error.message.contains("ambiguous"))
      #expect(error.message.contains("'--max-file-size'") && error.message.contains("'--max-backup-size'"))
    }
  }

  @Test func lastOfRepeatedValueWinsAndRepeatableAccumulates() throws {
    let parsed = try parser.parse(["--top", "1", "--top", "2", "--list", "cached", "--list", "tmp,offline".replacingOccurrences(of: "tmp", with: "temporary"), "P"])
    #expect(parsed.value(.top) == "2")
    #expect(parsed.allValues(.list) == ["cached", "temporary,offline"])
  }

  @Test func negatableFlagsLastOneWins() throws {
    let spec = CommandSpec(name: "t", summary: "", operands: "", minimumOperands: 0, maximumOperands: 0, discussion: [],
                           options: [.flag(.color, negatable: true, help: "")], exitStatus: [])
    let test = ArgumentParser(command: spec)
    #expect(try test.parse(["--color", "--no-color"]).flag(.color) == false)
    #expect(try test.parse(["--no-color", "--color"]).flag(.color) == true)
  }

  @Test func unknownOptionSuggestsTheNearest() {
    #expect(throws: UsageError("unknown option '--max-file-sise' for 'appdata audit'; did you mean '--max-file-size'?", argumentIndex: 0)) {
      try parser.parse(["--max-file-sise", "1", "P"])
    }
    #expect(throws: UsageError("unknown option '--zzzzzz' for 'appdata audit'", argumentIndex: 1)) {
      try parser.parse(["P", "--zzzzzz"])
    }
  }

  @Test func aTieSuggestsNothing() {
    #expect(Suggestion.nearest(to: "cat", among: ["bat", "hat"]) == nil)
    #expect(Suggestion.nearest(to: "cat", among: ["bat", "dog"]) == "bat")
    #expect(Suggestion.nearest(to: "fromat", among: ["format", "from"]) == "format")
  }

  @Test func valuesAreCheckedAgainstChoices() {
    #expect(throws: UsageError("invalid value 'jsn' for '--format': expected table, json, ndjson, github, junit, sarif or html; did you mean 'json'?", argumentIndex: 1)) {
      try parser.parse(["--format", "jsn", "P"])
    }
    #expect(throws: UsageError.self) { try parser.parse(["--list", "cached,bogus", "P"]) }
  }

  @Test func missingValuesAndOperands() throws {
    #expect(throws: UsageError("option '--top' needs a value (N)", argumentIndex: 1)) { try parser.parse(["P", "--top"]) }
    #expect(throws: UsageError.self) { try parser.parse([]) }
    // audit takes several PATHs; migrate one.
    #expect(try parser.parse(["A", "B"]).operands == ["A", "B"])
    #expect(throws: UsageError("unexpected argument 'B': 'appdata migrate' takes PATH", argumentIndex: nil)) {
      try ArgumentParser(command: Commands.migrate).parse(["A", "B"])
    }
    #expect(throws: UsageError("option '--json' takes no value", argumentIndex: 0)) { try parser.parse(["--json=yes", "P"]) }
  }

  @Test func sizesParseAsCoreutilsDoes() {
    #expect(ByteSize.parse("0") == 0)
    #expect(ByteSize.parse("1048576") == 1_048_576)
    #expect(ByteSize.parse("10K") == 10_240)
    #expect(ByteSize.parse("10k") == 10_240)
    #expect(ByteSize.parse("10kB") == 10_000)
    #expect(ByteSize.parse("10KiB") == 10_240)
    #expect(ByteSize.parse("5M") == 5 << 20)
    #expect(ByteSize.parse("5MB") == 5_000_000)
    #expect(ByteSize.parse("5MiB") == 5 << 20)
    #expect(ByteSize.parse("1.5G") == 1_610_612_736)
    #expect(ByteSize.parse("2GB") == 2_000_000_000)
    #expect(ByteSize.parse("1T") == 1 << 40)
    #expect(ByteSize.parse("100B") == 100)
    // One space between the number and its unit, as people write sizes (and init-config does).
    #expect(ByteSize.parse("5 MiB") == 5 << 20)
    #expect(ByteSize.parse("1.5 G") == 1_610_612_736)
    for bad in ["", "M", "-1", "1.2.3", "5X", "5  M", "5 ", " 5", "5\tM", "1e6", "99999999999999999999", "20E", "."] {
      #expect(ByteSize.parse(bad) == nil, "\(bad)")
    }
  }

  @Test func humanSizes() {
    #expect(ByteSize.human(0) == "0 B")
    #expect(ByteSize.human(1023) == "1023 B")
    #expect(ByteSize.human(1536) == "1.5 KiB")
    #expect(ByteSize.human(5 << 20) == "5.0 MiB")
  }

  @Test func terminalEscaping() {
    #expect(TerminalText.escaped(Array("a\nb\tc\u{1B}]0;x\u{07}".utf8)) == "a\\nb\\tc\\e]0;x\\x07")
    #expect(TerminalText.escaped([0x61, 0xFF, 0x62]) == "a\\xffb")
    #expect(TerminalText.escaped(Array("café".utf8)) == "café")
  }
}

/// The command line as a user meets it: the built binary, its help, errors and exit statuses.
@Suite("command line")
struct CommandLineTests {
  /// init-config's output refusals say what the output is (the hostile round of issue 52: a FIFO
  /// was "Invalid argument", `-o ''` "Is a directory"); nothing is written.
  @Test func initConfigSaysWhatItsOutputIs() throws {
    let tree = try TestTree("init-config-output")
    try tree.file("Documents/a", size: 10)
    #expect(mkfifo(tree.path("fifo"), 0o600) == 0)
    let fifo = try AppData.run(["init-config", tree.root, "--output", tree.path("fifo"), "--force"])
    #expect(fifo.status == 2 && fifo.error == "appdata: error: \(tree.path("fifo")): is a FIFO, socket or device, not a file; give the policy file a file's name\n", "\(fifo.error)")
    let folder = try AppData.run(["init-config", tree.root, "--output", tree.path("Documents"), "--force"])
    #expect(folder.status == 2 && folder.error == "appdata: error: \(tree.path("Documents")): is a folder; give the policy file a file's name\n", "\(folder.error)")
    let empty = try AppData.run(["init-config", tree.root, "--output", ""])
    #expect(empty.status == 2 && empty.error.contains("'--output' needs a name"), "\(empty.error)")
  }

  /// A container of one file, and beside it a shared folder (sticky and world-writable, as /tmp).
  static func sharedFolder(_ label: String) throws -> (TestTree, String) {
    let tree = try TestTree(label)
    try tree.file("Documents/a", size: 10)
    let shared = tree.scratch + "/shared"
    try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
    #expect(chmod(shared, 0o1777) == 0)
    return (tree, shared)
  }

  /// A link another user made in a shared folder (sticky and world-writable, as /tmp) is not
  /// followed by `init-config --output` nor `audit -o`, as Linux's fs.protected_symlinks does not
  /// follow it, whatever that is set to (a hostile round of issue 53: appdata resolved the link
  /// itself and replaced the file it named, the kernel's rule bypassed); one of this user's is,
  /// and a loop is the kernel's ELOOP in words.
  @Test(.enabled(if: AppData.isRoot, "needs root to make another user's link"))
  func anotherUsersLinkInASharedFolderIsNotFollowed() throws {
    let (tree, shared) = try Self.sharedFolder("shared-links")
    let precious = tree.scratch + "/precious.txt"
    try "precious".write(toFile: precious, atomically: false, encoding: .utf8)
    for name in ["policy.json", "report.json", "mine.json"] {
      try FileManager.default.createSymbolicLink(atPath: shared + "/" + name, withDestinationPath: precious)
    }
    #expect(lchown(shared + "/policy.json", 1234, 1234) == 0 && lchown(shared + "/report.json", 1234, 1234) == 0)
    func why(_ link: String) -> String {
      "leads through a symlink another user made in a shared folder (sticky and world-writable, as /tmp), \(link); appdata does not follow it, as Linux does not with fs.protected_symlinks"
    }
    let policy = try AppData.run(["init-config", tree.root, "--output", shared + "/policy.json", "--force"])
    #expect(policy.status == 2 && policy.error == "appdata: error: \(shared)/policy.json: \(why(shared + "/policy.json")); give the policy file a name of your own\n", "\(policy.error)")
    let report = try AppData.run(["audit", "--no-config", tree.root, "--format", "json", "-o", shared + "/report.json"])
    #expect(report.status == 2 && report.error.hasPrefix("appdata: error: \(shared)/report.json: \(why(shared + "/report.json"))"), "\(report.error)")
    // Another user's link to a folder of this user's, on the way to the file (a folder of the
    // path, then one reached through this user's own link, with a '..' after it).
    let mineFolder = tree.scratch + "/mine"
    try FileManager.default.createDirectory(atPath: mineFolder + "/sub", withIntermediateDirectories: true)
    try "precious".write(toFile: mineFolder + "/report.json", atomically: false, encoding: .utf8)
    try FileManager.default.createSymbolicLink(atPath: shared + "/build", withDestinationPath: mineFolder)
    #expect(lchown(shared + "/build", 1234, 1234) == 0)
    try FileManager.default.createSymbolicLink(atPath: tree.scratch + "/via", withDestinationPath: "shared/build/sub")
    for output in [shared + "/build/report.json", tree.scratch + "/via/../report.json"] {
      let through = try AppData.run(["audit", "--no-config", tree.root, "--format", "json", "-o", output])
      #expect(through.status == 2 && through.error.hasPrefix("appdata: error: \(output): \(why(shared + "/build"))"), "\(through.error)")
    }
    // The walk goes by bytes: a link name that is not UTF-8 on the way, and a combining mark
    // after a '/' (which a walk by characters took for part of the slash), are met as the
    // kernel meets them (a hostile round of issue 53).
    _ = try AppData.shell("""
      cd '\(tree.scratch)' && mkdir -p 'mine/\u{338}sub' && echo precious > mine/v11 && echo precious > 'mine/\u{338}sub/out' && \
      python3 -c "import os; os.symlink(b'../shared/\\xe9d/v11', b'mine/n11'); os.symlink(b'../mine', b'shared/\\xe9d'); \
      os.lchown(b'shared/\\xe9d', 1234, 1234); os.symlink('../mine', 'shared/dl'); os.lchown('shared/dl', 1234, 1234)"
      """)
    for (output, link) in [(mineFolder + "/n11", shared + "/\u{FFFD}d"), (shared + "/dl/\u{338}sub/out", shared + "/dl")] {
      let through = try AppData.run(["audit", "--no-config", tree.root, "--format", "json", "-o", output])
      #expect(through.status == 2 && through.error.contains("leads through a symlink another user made in a shared folder"), "\(through.error)")
      #expect(link.hasSuffix("/dl") ? through.error.contains(link) : true, "\(through.error)")
    }
    #expect(try String(contentsOfFile: mineFolder + "/v11", encoding: .utf8) == "precious\n")
    #expect(try String(contentsOfFile: mineFolder + "/\u{338}sub/out", encoding: .utf8) == "precious\n")
    #expect(try String(contentsOfFile: mineFolder + "/report.json", encoding: .utf8) == "precious")
    #expect(try String(contentsOfFile: precious, encoding: .utf8) == "precious")
    // This user's own link is followed: the file it names is replaced, the link stays.
    let mine = try AppData.run(["init-config", tree.root, "--output", shared + "/mine.json", "--force"])
    #expect(mine.status == 0, "\(mine.error)")
    #expect(try String(contentsOfFile: precious, encoding: .utf8).hasPrefix("{"))
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: shared + "/mine.json") == precious)
    try FileManager.default.createSymbolicLink(atPath: tree.scratch + "/loop", withDestinationPath: "loop")
    let loop = try AppData.run(["init-config", tree.root, "--output", tree.scratch + "/loop", "--force"])
    #expect(loop.status == 2 && loop.error == "appdata: error: \(tree.scratch)/loop: cannot write: Too many levels of symbolic links; it was left as it was\n", "\(loop.error)")
  }

  /// The output file is written where the walk of its path arrived: a folder another user
  /// swaps for a link to a folder of this user's after the walk (paused at `output-located`)
  /// does not redirect the write (a cold review: the path was resolved again, by path).
  @Test(.enabled(if: AppData.isRoot, "needs root to act as another user"))
  func aFolderSwappedForALinkAfterTheWalkIsNotFollowed() throws {
    let (tree, shared) = try Self.sharedFolder("swapped-output-folder")
    let mine = tree.scratch + "/mine"
    try FileManager.default.createDirectory(atPath: shared + "/d", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: mine, withIntermediateDirectories: true)
    #expect(chown(shared + "/d", 1234, 1234) == 0)
    try "precious".write(toFile: mine + "/report.json", atomically: false, encoding: .utf8)
    let result = try AppData.runPaused(["audit", "--no-config", tree.root, "--format", "json", "-o", shared + "/d/report.json"], at: "output-located") {
      try FileManager.default.moveItem(atPath: shared + "/d", toPath: shared + "/d.old")
      try FileManager.default.createSymbolicLink(atPath: shared + "/d", withDestinationPath: mine)
      #expect(lchown(shared + "/d", 1234, 1234) == 0)
    }
    #expect(result.status == 0, "\(result.error)")
    #expect(try String(contentsOfFile: mine + "/report.json", encoding: .utf8) == "precious")
    #expect(try String(contentsOfFile: shared + "/d.old/report.json", encoding: .utf8).hasPrefix("{"))
  }

  @Test func helpAndVersion() throws {
    let overview = try AppData.run(["--help"])
    #expect(overview.status == 0)
    for command in Commands.all { #expect(overview.output.contains("  \(command.name) ")) }
    let auditHelp = try AppData.run(["help", "audit"])
    #expect(auditHelp.status == 0)
    #expect(auditHelp.output == (try AppData.run(["audit", "--help"])).output)
    #expect(auditHelp.output.hasPrefix("Usage: appdata audit [OPTIONS] PATH...\n"))
    for option in Commands.audit.options where !option.isHidden { #expect(auditHelp.output.contains("--" + option.name)) }
    let version = try AppData.run(["--version"])
    #expect(version.output == "appdata \(AppDataVersion.current)\n")
  }

  /// libarchive and SQLite are loaded when an archive or a backup is read, not when appdata starts
  /// (`SharedLibrary`): the dynamic loader's own log (`LD_DEBUG=files`) names every library it maps.
  @Test func libarchiveAndSQLiteAreLoadedOnlyWhenAnArchiveOrABackupIsRead() throws {
    let tree = try TestTree("loading")
    try tree.file("Documents/a", size: 10)
    let archive = tree.scratch + "/container.tar"
    #expect(try AppData.shell("tar -cf '\(archive)' -C '\(tree.root)' Documents").status == 0)
    func loads(_ path: String) throws -> (libarchive: Bool, sqlite: Bool) {
      let result = try AppData.run(["audit", "--no-config", "--fail-on", "never", "--format", "json", path], environment: ["LD_DEBUG": "files"])
      #expect(result.status == 0, "\(path): \(result.error.suffix(300))")
      return (result.error.contains("file=libarchive.so"), result.error.contains("file=libsqlite3.so"))
    }
    #expect(try loads(tree.root) == (false, false))
    #expect(try loads(archive) == (true, false))
    #expect(try loads(BackupTests.plain) == (false, true))
    // A library that is not there is a failure in words, naming it.
    guard case .failure(let failure) = SharedLibrary.load(["libappdata-no-such-library.so.1"]) else {
      Issue.record("a missing library loaded")
      return
    }
    #expect(failure.reason.contains("libappdata-no-such-library.so.1"))
  }

  /// Foundation is not linked (Docs/development.md, "No Foundation"): linking it costs every run
  /// about 20 ms of start with a cold page cache. A dynamic build would need libFoundation.so, a
  /// static one would hold its symbols (`$s10Foundation…`); FoundationEssentials, which
  /// swift-crypto uses, is neither.
  @Test func theBinaryDoesNotLinkFoundation() throws {
    let result = try AppData.shell("grep -c -a -e 'libFoundation\\.so' -e '\\$s10Foundation' '\(AppData.binary)'")
    #expect(result.output == "0\n", "\(AppData.binary) links Foundation")
  }

  @Test func aReportThatCannotBeWrittenIsRefusedBeforeAnythingIsRead() throws {
    let tree = try TestTree("unwritable")
    try tree.file("Documents/a", size: 10)
    let before = try BackupTests.snapshot(tree.root)
    // Checked before PATH is even resolved: the report's error comes first.
    for (file, reason) in [(tree.scratch + "/no/such/folder/r.json", "No such file or directory"), (tree.scratch, "Is a directory")] {
      let result = try AppData.run(["audit", "--no-config", "--format", "json", "--output", file, tree.path("missing")])
      #expect(result.status == 2)
      #expect(result.output.isEmpty)
      #expect(result.error == "appdata: error: \(file): cannot write the report: \(reason)\n")
    }
    #expect(try BackupTests.snapshot(tree.root) == before)
    #expect(try AppData.run(["audit", "--no-config", "--format", "json", "--output", tree.scratch + "/r.json", tree.root]).status == 0)
  }

  @Test func usageErrorsAreOneLineAndExitTwo() throws {
    // A file no archive format claims (a machine's /etc/hostname may read as an mtree listing).
    let file = AppData.fixtureRoot + "/not-an-archive-\(UUID().uuidString).bin"
    try Data([0x00, 0x01, 0x02, 0xFF, 0xFE, 0x7F, 0x10, 0x20]).write(to: URL(fileURLWithPath: file))
    defer { try? FileManager.default.removeItem(atPath: file) }
    let cases: [([String], String)] = [
      (["audt", "x"], "appdata: error: unknown command 'audt' (did you mean 'audit'?); see 'appdata --help'\n"),
      (["audit", "--max-file-sise", "1", "x"], "appdata: error: unknown option '--max-file-sise' for 'appdata audit'; did you mean '--max-file-size'?\n"),
      (["audit", "--max-file-size", "12Q", "x"], "appdata: error: invalid size '12Q' for '--max-file-size': expected bytes or a number with a unit such as 500K, 10MB, 1.5G or 2GiB\n"),
      (["audit", "--jobs", "0", "x"], "appdata: error: invalid value '0' for '--jobs': expected an integer from 1 to 256\n"),
      (["audit", "/nonexistent/container"], "appdata: error: /nonexistent/container: no such file or folder\n"),
      (["audit", file], "appdata: error: \(file): is neither a container folder nor an archive appdata can read (Unrecognized archive format); give a container's folder, an .xcappdata package, a Simulator device, a device backup's folder, or a tar or zip of one\n"),
      (["audit", "/dev/null"], "appdata: error: /dev/null: not a folder; give the container root, the folder holding Documents, Library and tmp\n"),
    ]
    for (arguments, expected) in cases {
      let result = try AppData.run(arguments)
      #expect(result.status == 2, "\(arguments)")
      #expect(result.error == expected)
      #expect(result.output.isEmpty)
    }
    #expect(try AppData.run([]).status == 2)
  }

  @Test func exitStatusFollowsFailOn() throws {
    let tree = try TestTree("exit")
    try tree.file("Documents/big.bin", size: 2000)
    try tree.file("Junk/x", size: 1)
    // No limit: only a warning (unknown-location), below the default --fail-on error.
    #expect(try AppData.run(["audit", tree.root]).status == 0)
    #expect(try AppData.run(["audit", "--fail-on", "warning", tree.root]).status == 1)
    #expect(try AppData.run(["audit", "--max-file-size", "1K", tree.root]).status == 1)
    #expect(try AppData.run(["audit", "--max-file-size", "1K", "--fail-on", "never", tree.root]).status == 0)
    #expect(try AppData.run(["audit", "--max-backup-size", "2000", tree.root]).status == 0)
    let over = try AppData.run(["audit", "--json", "--max-backup-size", "1999", tree.root])
    #expect(over.status == 1)
    let finding = findings(try over.json(), rule: "backup-too-large").first
    #expect(finding?["bytes"] as? Int == 2000)
    #expect(finding?["path"] as? String == ".")
    #expect(integer(try over.json(), "limits", "maxBackupSize") == 1999)
  }

  @Test(.enabled(if: AppData.has("jq"), "needs jq"))
  func jsonPipesIntoJq() throws {
    let tree = try TestTree("jq")
    try tree.file("Documents/a", size: 1234)
    try tree.file("Library/Caches/b", size: 99)
    let result = try AppData.shell("\"$APPDATA\" audit --json '\(tree.root)' | jq -e '.summary.backup.bytes == 1234 and .summary.categories.cached.files == 1'")
    #expect(result.status == 0, "\(result.error)")
    #expect(result.output == "true\n")
  }

  @Test func ndjsonStreamsEntriesThenFindingsThenOneSummary() throws {
    let tree = try TestTree("ndjson")
    try tree.file("Documents/a", size: 10)
    try tree.file("Documents/b", size: 20)
    try tree.file("Stray/c", size: 1)
    try tree.setModernMarker("Documents/b")
    let result = try AppData.run(["audit", "--format", "ndjson", "--list", "all", tree.root])
    let lines = result.output.split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
    #expect(lines.map { $0["type"] as! String } == ["entry", "entry", "entry", "finding", "summary"])
    #expect(Set(lines.prefix(3).map { $0["path"] as! String }) == ["Documents/a", "Documents/b", "Stray/c"])
    #expect(integer(lines.last, "summary", "backup", "bytes") == 10)
    let json = try Library.auditJSON(tree.root, list: Set(AppDataCore.Category.allCases))
    #expect(NSDictionary(dictionary: lines.last!["summary"] as! [String: Any]).isEqual(to: json["summary"] as! [String: Any]))
    // Each entry line is the JSON document's entry, plus its type and its container.
    let streamed = lines.prefix(3).sorted { ($0["path"] as! String) < ($1["path"] as! String) }
    for (line, entry) in zip(streamed, json["entries"] as! [[String: Any]]) {
      var expected = entry
      expected["type"] = "entry"
      expected["container"] = json["container"]
      expected["id"] = NSNull()
      #expect(NSDictionary(dictionary: line).isEqual(to: expected))
    }
  }

  @Test func quietIsAcceptedByEveryCommandThatPrintsATableOrProgress() throws {
    for command in [Commands.audit, Commands.migrate, Commands.initConfig] {
      #expect(command.options.contains { $0.name == "quiet" }, "\(command.name)")
    }
    let tree = try TestTree("quiet")
    try tree.file("Library/Caches/x/a.bin", size: 10)
    try tree.folder("Documents")
    let migrated = try AppData.run(["migrate", "-q", tree.root])
    #expect(migrated.status == 0, "\(migrated.error)")
    #expect(migrated.output.isEmpty && migrated.error.isEmpty)
    #expect(FileManager.default.fileExists(atPath: tree.path("Documents/x/a.bin")))
    let written = try AppData.run(["init-config", "--quiet", "--output", tree.scratch + "/p.json", tree.root])
    #expect(written.status == 0 && written.output.isEmpty)
    #expect(FileManager.default.fileExists(atPath: tree.scratch + "/p.json"))
    // Quiet is not silent about failures.
    let refused = try AppData.run(["init-config", "-q", "--output", tree.scratch + "/p.json", tree.root])
    #expect(refused.status == 2 && refused.error.contains("already exists"))
  }

  @Test func outputDoesNotDependOnJobs() throws {
    let tree = try TestTree("jobs")
    for folder in 0..<12 {
      for file in 0..<25 { try tree.file("Documents/f\(folder)/sub\(file % 3)/file\(file)", size: folder * 100 + file) }
      try tree.file("Library/Caches/c\(folder)/x", size: folder)
    }
    try tree.setModernMarker("Documents/f3")
    try tree.setLegacyMarker("Documents/f5/sub1")
    try tree.file("Junk\(1)/a", size: 1)
    try tree.file("Junk\(2)/a", size: 1)
    try tree.hardLink("Documents/f0/link", to: "Documents/f7/sub0/file0")
    let runs = try [1, 2, 8].map { jobs in
      try AppData.run(["audit", "--json", "--list", "all", "--top", "5", "--fail-on", "never", "--jobs", String(jobs), tree.root]).output
    }
    #expect(runs[0].count > 1000)
    #expect(runs[0] == runs[1])
    #expect(runs[0] == runs[2])
    // Every folder below the top level reopened from the root by its path, as when one worker
    // hands folders to another (a tree this small rarely makes them share).
    for jobs in [1, 2] {
      let handedOver = try AppData.run(
        ["audit", "--json", "--list", "all", "--top", "5", "--fail-on", "never", "--jobs", String(jobs), tree.root],
        environment: ["APPDATA_TEST_HAND_OVER_ALL": "1"])
      #expect(handedOver.output == runs[0], "--jobs \(jobs): \(handedOver.error)")
    }
  }

  @Test func pathFallbackGivesTheSameAnswer() throws {
    let tree = try TestTree("fallback")
    try tree.file("Documents/Offline/a", size: 5)
    try tree.file("Documents/b", size: 6)
    try tree.setModernMarker("Documents/Offline")
    try tree.setLegacyMarker("Documents/b")
    try tree.file("Documents/Offline/deeper/c", size: 7)
    try tree.setLegacyMarker("Documents/Offline/deeper/c")
    let fast = try AppData.run(["audit", "--json", "--list", "all", "--fail-on", "never", "--jobs", "1", tree.root])
    #expect(figures(try fast.json(), "offline")[0...1] == [3, 18])
    // On one thread and on several, where each worker has its own descriptor table (the
    // /proc path must name the calling thread's), with folders handed between workers.
    for jobs in ["1", "2", "8"] {
      let fallback = try AppData.run(["audit", "--json", "--list", "all", "--fail-on", "never", "--jobs", jobs, tree.root],
                                     environment: ["APPDATA_FORCE_XATTR_FALLBACK": "1", "APPDATA_TEST_HAND_OVER_ALL": "1"])
      #expect(fallback.status == 0, "--jobs \(jobs): \(fallback.error)")
      #expect(fast.output == fallback.output, "--jobs \(jobs)")
    }
  }

  @Test func tableShowsCategoriesLimitAndFindings() throws {
    let tree = try TestTree("table")
    try tree.file("Documents/big.bin", size: 3000)
    try tree.file("tmp/t", size: 5)
    let result = try AppData.run(["audit", "--bytes", "--max-file-size", "1K", "--max-backup-size", "10K", tree.root])
    #expect(result.status == 1)
    let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(lines.contains("critical       1  3000       4096  yes"))
    #expect(lines.contains("temporary      1     5       4096  no"))
    #expect(lines.contains("Backup: 1 file, 3000 of 10240 allowed"))  // singular
    // Rounded for a person, exact beside it, then what to do (issue 51).
    #expect(lines.contains("  error   Documents/big.bin: backed-up file of 2.9 KiB (3,000 bytes), over the 1.0 KiB limit [backup-file-too-large] What to do: \(AuditRule.backupFileTooLarge.remedy)"))
    #expect(lines.contains("Result: FAIL (findings at or above --fail-on error)"))
  }
}

/// The progress line: on a terminal only, erased at the end, never with --quiet.
@Suite("progress", .enabled(if: AppData.has("script"), "needs script(1) for a pseudo-terminal"))
struct ProgressTests {
  /// Runs appdata under `script`, which gives it a pseudo-terminal for stdout and stderr.
  private func onTerminal(_ arguments: String) throws -> RunResult {
    // The walk waits for the line's first drawing: no race between the timer and the walk.
    try AppData.shell("TERM=xterm APPDATA_PROGRESS_DELAY_MS=0 APPDATA_TEST_WAIT_FOR_PROGRESS=1 script -qec \"$APPDATA \(arguments)\" /dev/null")
  }

  /// Issue 41, 5: migrate shows files and bytes of the total, as extract does, and erases it.
  @Test func migrateShowsFilesAndBytesOfTheTotal() throws {
    let tree = try TestTree("migrate-progress")
    for index in 0..<20 { try tree.file("Library/Caches/c\(index % 3)/f\(index)", size: 1000) }
    try tree.file("Documents/keep", size: 1)
    let shown = try onTerminal("migrate '\(tree.root)'")
    #expect(shown.status == 0, "\(shown.output)")
    #expect(shown.output.contains("Migrating: 0 of 20 files, 0 B of 19.5 KiB"), "\(shown.output)")
    let lastErase = shown.output.range(of: "\r\u{1B}[2K", options: .backwards)
    let report = shown.output.range(of: "Container:")
    #expect(lastErase != nil && report != nil && lastErase!.upperBound <= report!.lowerBound, "\(shown.output)")
  }

  @Test func shownOnATerminalAndErased() throws {
    let tree = try TestTree("progress")
    for index in 0..<2000 { try tree.file("Documents/f\(index / 100)/x\(index)", size: 1) }
    let shown = try onTerminal("audit --jobs 1 '\(tree.root)'")
    #expect(shown.output.contains("Scanning: "))
    // The line is erased before the report starts.
    let lastErase = shown.output.range(of: "\r\u{1B}[2K", options: .backwards)
    let report = shown.output.range(of: "Container:")
    #expect(lastErase != nil && report != nil && lastErase!.upperBound <= report!.lowerBound)
    #expect(!shown.output[report!.lowerBound...].contains("Scanning"))
    let quiet = try onTerminal("audit --quiet --jobs 1 '\(tree.root)'")
    #expect(!quiet.output.contains("Scanning"))
    // Not a terminal: nothing on stderr but errors.
    let piped = try AppData.run(["audit", tree.root], environment: ["APPDATA_PROGRESS_DELAY_MS": "0"])
    #expect(piped.error.isEmpty)
  }
}

@Suite("ndjson encoding")
struct NDJSONEncodingTests {
  @Test func fastLinesEqualTheGeneralEncoder() {
    let cases: [ListedEntry] = [
      ListedEntry(path: Array("Documents/a b.txt".utf8), category: .critical, bytes: 12, allocatedBytes: 4096, marker: [], excludedBy: nil),
      ListedEntry(path: Array("Documents/M/x".utf8), category: .offline, bytes: 0, allocatedBytes: 0, marker: .both, excludedBy: Array("Documents/M".utf8)),
      ListedEntry(path: Array("Documents/q\"uote\\".utf8), category: .critical, bytes: 1, allocatedBytes: 1, marker: [], excludedBy: nil),
      ListedEntry(path: Array("Documents/".utf8) + [0xFF, 0x0A], category: .other, bytes: 1, allocatedBytes: 1, marker: .legacy, excludedBy: Array(".".utf8)),
      ListedEntry(path: Array("Documents/é".utf8), category: .cached, bytes: 1, allocatedBytes: 1, marker: [], excludedBy: nil),
    ]
    for entry in cases {
      var line: [UInt8] = []
      entry.appendNDJSONLine(to: &line)
      #expect(String(decoding: line, as: UTF8.self) == entry.json(type: "entry").serialized(pretty: false) + "\n")
    }
  }
}
