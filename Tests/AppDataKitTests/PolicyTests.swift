@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Testing

/// The policy file (appdata.json), its precedence, warnAt, budgets, ignore, and baselines.
@Suite("policy and baseline")
struct PolicyTests {
  /// 3,000 + 100 backed-up bytes, a 50-byte offline file, and one stray top-level folder.
  private func container() throws -> TestTree {
    let tree = try TestTree("policy")
    try tree.file("Documents/big.bin", size: 3000)
    try tree.file("Documents/Notes/a.txt", size: 100)
    try tree.file("Documents/Offline/map.bin", size: 50)
    try tree.setModernMarker("Documents/Offline")
    try tree.file("Junk/x", size: 1)
    return tree
  }

  private func write(_ text: String, to path: String) throws {
    try text.write(toFile: path, atomically: true, encoding: .utf8)
  }

  private func audit(_ tree: TestTree, config: String, _ arguments: [String] = []) throws -> RunResult {
    let file = tree.scratch + "/appdata.json"
    try write(config, to: file)
    return try AppData.run(["audit", "--json", "--config", file] + arguments + [tree.root])
  }

  private func rules(_ result: RunResult) throws -> [String] {
    try findings(result.json()).map { "\($0["rule"]!):\($0["severity"]!):\($0["path"]!)" }
  }

  /// Which policy file applied is said: in JSON's policy.source and in the table's header.
  @Test func thePolicyThatAppliedIsNamed() throws {
    let tree = try container()
    let given = try audit(tree, config: #"{"maxFileSize": 2000}"#)
    #expect(value(try given.json(), "policy", "source") as? String == tree.scratch + "/appdata.json")
    // Found in the working folder.
    let found = try AppData.run(["audit", tree.root], in: tree.scratch)
    #expect(found.output.split(separator: "\n").prefix(2) == ["Container: \(tree.root)", "Policy: appdata.json"])
    // None: null, and the table says what applies.
    let none = try AppData.run(["audit", "--json", "--no-config", tree.root])
    #expect(value(try none.json(), "policy", "source") is NSNull)
    let table = try AppData.run(["audit", "--no-config", tree.root])
    #expect(table.output.split(separator: "\n").prefix(2) == ["Container: \(tree.root)", "Policy: none (no limits but those given on the command line)"])
  }

  @Test func limitsAsNumbersOrSizeStrings() throws {
    let tree = try container()
    let numbers = try audit(tree, config: #"{"maxFileSize": 2000, "maxBackupSize": 3099}"#)
    #expect(numbers.status == 1)
    #expect(try rules(numbers) == ["backup-file-too-large:error:Documents/big.bin", "backup-too-large:error:.",
                                   "unknown-location:warning:Junk"])
    let strings = try audit(tree, config: #"{"maxFileSize": "2K", "maxBackupSize": "1.5K"}"#)
    #expect(integer(try strings.json(), "limits", "maxFileSize") == 2048)
    #expect(integer(try strings.json(), "limits", "maxBackupSize") == 1536)
    let none = try audit(tree, config: #"{"maxFileSize": null}"#)
    #expect(value(try none.json(), "limits", "maxFileSize") is NSNull)
  }

  @Test func commandLineOverridesTheFileAndNoConfigIgnoresIt() throws {
    let tree = try container()
    let overridden = try audit(tree, config: #"{"maxFileSize": 10}"#, ["--max-file-size", "1M"])
    #expect(overridden.status == 0)
    #expect(integer(try overridden.json(), "limits", "maxFileSize") == 1 << 20)
    // ./appdata.json is read from the current folder; --no-config ignores it.
    let folder = try TestTree("policy-cwd")
    try write(#"{"maxFileSize": 10}"#, to: folder.path("appdata.json"))
    let found = try AppData.run(["audit", "--json", tree.root], in: folder.root)
    #expect(found.status == 1)
    #expect(integer(try found.json(), "limits", "maxFileSize") == 10)
    let ignored = try AppData.run(["audit", "--json", "--no-config", tree.root], in: folder.root)
    #expect(ignored.status == 0)
    #expect(value(try ignored.json(), "limits", "maxFileSize") is NSNull)
  }

  @Test func warnAtReportsBeforeTheLimit() throws {
    let tree = try container()
    // big.bin is 3000 of 3200 (93%): a warning, not an error; the backup 3100 of 3400 (91%).
    let result = try audit(tree, config: #"{"maxFileSize": 3200, "maxBackupSize": 3400, "warnAt": 0.9}"#)
    #expect(result.status == 0)
    #expect(try rules(result) == ["backup-file-near-limit:warning:Documents/big.bin", "backup-near-limit:warning:.",
                                  "unknown-location:warning:Junk"])
    let below = try audit(tree, config: #"{"maxFileSize": 3200, "warnAt": 0.95}"#)
    #expect(try rules(below) == ["unknown-location:warning:Junk"])
    let flag = try audit(tree, config: #"{"maxFileSize": 3200}"#, ["--warn-at", "0.5"])
    #expect(try rules(flag).contains("backup-file-near-limit:warning:Documents/big.bin"))
  }

  @Test func ruleSeveritiesAndOff() throws {
    let tree = try container()
    let result = try audit(tree, config: #"{"rules": {"unknown-location": "error"}}"#)
    #expect(result.status == 1)
    #expect(try rules(result) == ["unknown-location:error:Junk"])
    let off = try audit(tree, config: #"{"rules": {"unknown-location": "off"}}"#, ["--fail-on", "warning"])
    #expect(off.status == 0)
    #expect(try rules(off).isEmpty)
  }

  @Test func ignoreDropsFindingsButKeepsTheFigures() throws {
    let tree = try container()
    let result = try audit(tree, config: #"{"maxFileSize": 10, "ignore": ["Documents/big.*", "Junk"]}"#)
    #expect(try rules(result) == ["backup-file-too-large:error:Documents/Notes/a.txt"])
    #expect(integer(try result.json(), "summary", "backup", "bytes") == 3100)
    let flag = try audit(tree, config: #"{"maxFileSize": 10, "ignore": ["Junk"]}"#, ["--ignore", "Documents/**"])
    #expect(try rules(flag) == ["unknown-location:warning:Junk"])
  }

  @Test func budgetsPerPath() throws {
    let tree = try container()
    let result = try audit(tree, config: """
      {"warnAt": 0.9, "budgets": [{"path": "Documents/Notes", "maxBytes": 105}, {"path": "Documents/*.bin", "maxBytes": "2K"},
                                  {"path": "Documents/Offline", "maxBytes": 0}]}
      """)
    #expect(result.status == 1)
    let json = try result.json()
    let budgets = (json["budgets"] as? [[String: Any]] ?? []).map { "\($0["path"]!)=\($0["bytes"]!)/\($0["maxBytes"]!)" }
    // Offline bytes are not backed up, so they do not count against a budget.
    #expect(budgets == ["Documents/Notes=100/105", "Documents/*.bin=3000/2048", "Documents/Offline=0/0"])
    #expect(try rules(result) == ["budget-exceeded:error:Documents/*.bin", "budget-near-limit:warning:Documents/Notes",
                                  "unknown-location:warning:Junk"])
  }

  @Test(arguments: [
    (#"{"maxFileSise": 1}"#, "unknown key 'maxFileSise'; did you mean 'maxFileSize'?"),
    (#"{"maxFileSize": "12Q"}"#, "key 'maxFileSize': invalid size \"12Q\" (expected bytes or a number with a unit such as 500K, 10MB, 1.5G)"),
    (#"{"maxFileSize": -1}"#, "key 'maxFileSize': expected a byte count or a size string, found -1"),
    (#"{"maxBackupSize": true}"#, "key 'maxBackupSize': expected a byte count or a size string, found true"),
    (#"{"warnAt": 1.5}"#, "key 'warnAt': expected a number between 0 and 1 (for example 0.9), found 1.5"),
    (#"{"warnAt": "90%"}"#, "key 'warnAt': expected a number between 0 and 1 (for example 0.9), found \"90%\""),
    (#"{"rules": {"legacy-markers": "off"}}"#, "key 'rules': unknown rule 'legacy-markers'; did you mean 'legacy-marker'?"),
    (#"{"rules": {"legacy-marker": "fatal"}}"#, "key 'rules.legacy-marker': expected \"error\", \"warning\", \"info\" or \"off\", found \"fatal\""),
    (#"{"rules": []}"#, "key 'rules': expected an object of rule id to severity, found an array"),
    (#"{"ignore": "Documents"}"#, "key 'ignore': expected an array of globs, found a string"),
    (#"{"ignore": ["Documents/[ab"]}"#, "key 'ignore[0]': invalid glob \"Documents/[ab\": unterminated '[' at byte 11"),
    (#"{"budgets": [{"path": "Documents"}]}"#, "key 'budgets[0].maxBytes': missing"),
    (#"{"budgets": [{"path": 1, "maxBytes": 1}]}"#, "key 'budgets[0].path': expected a glob string, found a number"),
    (#"{"budgets": [{"path": "x", "maxBytes": 1, "max": 2}]}"#, "key 'budgets[0]': unknown key 'max' (a budget holds \"path\" and \"maxBytes\")"),
    (#"[1]"#, "expected an object at the top level, found an array"),
    (#"{"maxFileSize": 1,}"#, "not valid JSON: line 1: expected a key in quotes"),
  ])
  func invalidPolicyFilesNameTheKeyAndTheFile(config: String, message: String) throws {
    let tree = try container()
    let file = tree.scratch + "/appdata.json"
    let result = try audit(tree, config: config)
    #expect(result.status == 2)
    #expect(result.error == "appdata: error: \(file): \(message)\n")
    #expect(result.output.isEmpty)
  }

  @Test(.enabled(if: AppData.has("jq"), "needs jq"))
  func baselineGrowthInBytesAndPercent() throws {
    let tree = try container()
    let baseline = tree.scratch + "/baseline.json"
    let before = try AppData.run(["audit", "--json", "--no-config", "--output", baseline, "--format", "json", tree.root])
    #expect(before.status == 0, "\(before.error)")
    try tree.file("Documents/big.bin", size: 4000)
    try tree.file("Documents/Notes/b.txt", size: 60)
    let json = try AppData.run(["audit", "--json", "--no-config", "--baseline", baseline, tree.root]).json()
    #expect(integer(json, "baseline", "backup", "before") == 3100)
    #expect(integer(json, "baseline", "backup", "after") == 4160)
    #expect(integer(json, "baseline", "backup", "delta") == 1060)
    #expect((value(json, "baseline", "backup", "percent") as? NSNumber)?.doubleValue == 34.1935)
    #expect(integer(json, "baseline", "categories", "critical", "delta") == 1060)
    #expect(integer(json, "baseline", "categories", "offline", "delta") == 0)
    let growing = value(json, "baseline", "growingPaths") as? [[String: Any]] ?? []
    // The folders that grew (the new Notes folder too: the baseline's folder summary is complete),
    // then the files that grew and the new one (the baseline's largest files are all it backed up).
    #expect(growing.map { "\($0["kind"]!):\($0["path"]!)+\($0["delta"]!)" }
            == ["folder:Documents+1060", "folder:Documents/Notes+60", "file:Documents/big.bin+1000", "file:Documents/Notes/b.txt+60"])
    #expect(growing.map { $0["new"] as? Bool } == [nil, nil, false, true])

    let bytes = try AppData.run(["audit", "--json", "--no-config", "--baseline", baseline, "--max-growth", "1K", tree.root])
    #expect(bytes.status == 1)
    #expect(try rules(bytes).first == "backup-grew:error:.")
    #expect(try AppData.run(["audit", "--no-config", "--baseline", baseline, "--max-growth", "2K", tree.root]).status == 0)
    let percent = try AppData.run(["audit", "--json", "--no-config", "--baseline", baseline, "--max-growth-percent", "30", tree.root])
    #expect(percent.status == 1)
    #expect((findings(try percent.json(), rule: "backup-grew").first?["message"] as? String)?.contains("grew by 1.0 KiB (1,060 bytes), or 34.2%, from ") == true)
    // Text shows one decimal; JSON's percent keeps full precision (above).
    let table = try AppData.run(["audit", "--no-config", "--bytes", "--baseline", baseline, tree.root])
    #expect(table.output.contains(": backup 3100 -> 4160 (+1060, +34.2%)\n"), "\(table.output)")
    #expect(try AppData.run(["audit", "--no-config", "--baseline", baseline, "--max-growth-percent", "35", tree.root]).status == 0)
    // jq reads the growth straight from the report.
    let jq = try AppData.shell("\"$APPDATA\" audit --json --no-config --baseline '\(baseline)' '\(tree.root)' | jq -e '.baseline.backup.delta'")
    #expect(jq.output == "1060\n")
  }

  @Test func aBaselineOfAnotherSchemaOrToolIsRejected() throws {
    let tree = try container()
    let cases = [
      (#"{"schemaVersion": 2, "tool": {"name": "appdata"}}"#, "schemaVersion 2, but this appdata reads schemaVersion 1; make a new baseline with this version"),
      (#"{"schemaVersion": 1, "tool": {"name": "size-limit"}}"#, "not an appdata audit report (no \"tool\": {\"name\": \"appdata\"}); make the baseline with 'appdata audit --format json'"),
      (#"{"name": "x""#, "not valid JSON: line 1: unexpected end of input in an object"),
    ]
    for (text, message) in cases {
      let file = tree.scratch + "/old.json"
      try write(text, to: file)
      let result = try AppData.run(["audit", "--no-config", "--baseline", file, tree.root])
      #expect(result.status == 2)
      #expect(result.error == "appdata: error: \(file): \(message)\n")
    }
    let missing = try AppData.run(["audit", "--no-config", "--max-growth", "1", tree.root])
    #expect(missing.error == "appdata: error: '--max-growth' needs '--baseline': growth is measured against a baseline\n")
  }

  @Test func initConfigWritesEveryKeyAndValidates() throws {
    let tree = try container()
    let output = tree.scratch + "/new.json"
    let result = try AppData.run(["init-config", "--output", output, tree.root])
    #expect(result.status == 0, "\(result.error)")
    let written = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output))) as! [String: Any]
    #expect(Set(written.keys) == ["maxFileSize", "maxBackupSize", "warnAt", "rules", "ignore", "budgets"])
    // Written as people write sizes: 3100 + 20%, rounded up to a KiB; 3000 + 20%.
    #expect(written["maxBackupSize"] as? String == "4 KiB")
    #expect(written["maxFileSize"] as? String == "4 KiB")
    #expect((written["rules"] as? [String: String])?.count == AuditRule.all.count)
    #expect(try AppData.run(["init-config", "--output", output, tree.root]).status == 2)
    let check = try AppData.shell("""
      python3 -c 'import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1]))); print("valid")' \
        '\(AppData.packageRoot)/Docs/config.schema.json' '\(output)'
      """)
    #expect(check.output == "valid\n", "\(check.error)")
    // The file it writes is one audit accepts, and the container passes it.
    #expect(try AppData.run(["audit", "--config", output, tree.root]).status == 0)
  }

  /// Docs/ci.md's recipe, as written: a baseline made without --list names the folders that grew.
  @Test(.enabled(if: AppData.has("jq"), "needs jq"))
  func aBaselineWithoutListNamesTheFoldersThatGrew() throws {
    let tree = try TestTree("grew")
    try tree.file("Documents/Photos/a.jpg", size: 10_000)
    try tree.file("Documents/notes.txt", size: 500)
    try tree.file("Library/Application Support/db.sqlite", size: 20_000)
    try tree.file("Library/Caches/c", size: 99_999)
    let baseline = tree.scratch + "/baseline.json"
    let made = try AppData.shell("cd '\(tree.scratch)' && \"$APPDATA\" audit --no-config --format json --output baseline.json '\(tree.root)'")
    #expect(made.status == 0, "\(made.error)")
    let summary = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: baseline))) as? [String: Any])
    #expect(summary["folders"] as? NSDictionary == ["complete": true, "bytes": [
      "Documents": 10_500, "Documents/Photos": 10_000, "Library": 20_000, "Library/Application Support": 20_000]] as NSDictionary)
    try tree.file("Documents/Photos/b.jpg", size: 7_000)
    try tree.file("Documents/Inbox/new.pdf", size: 3_000)
    let grew = try AppData.shell("""
      "$APPDATA" audit --no-config --json --baseline '\(baseline)' '\(tree.root)' \
        | jq -r '.baseline.growingPaths[] | "+\\(.delta)\\t\\(.kind)\\t\\(.path)"'
      """)
    #expect(grew.status == 0, "\(grew.error)")
    // Folders first (new Inbox: the complete baseline summary had none), then the new files: the
    // baseline's largest files were every file it backed up (issue 51: they were left out).
    #expect(grew.output == "+10000\tfolder\tDocuments\n+7000\tfolder\tDocuments/Photos\n+3000\tfolder\tDocuments/Inbox\n"
                         + "+7000\tfile\tDocuments/Photos/b.jpg\n+3000\tfile\tDocuments/Inbox/new.pdf\n")
  }

  @Test func aBaselineOfManyIsMatchedByIDOrRefused() throws {
    let tree = try TestTree("baseline-many")
    for id in ["a", "b", "c"] {
      try tree.file("\(id).xcappdata/AppDataInfo.plist", contents: Array("""
        <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>CFBundleIdentifier</key><string>com.example.\(id)</string></dict></plist>
        """.utf8))
      try tree.file("\(id).xcappdata/AppData/Documents/data", size: 1_000)
    }
    try FileManager.default.moveItem(atPath: tree.path("c.xcappdata"), toPath: tree.scratch + "/c.xcappdata")
    let baseline = tree.scratch + "/baseline.json"
    #expect(try AppData.run(["audit", "--no-config", "--format", "json", "--output", baseline, tree.root]).status == 0)
    try tree.file("a.xcappdata/AppData/Documents/more", size: 5_000)
    // One container of the baseline: compared with its own report.
    let matched = try AppData.auditJSON(tree.path("a.xcappdata"), ["--no-config", "--baseline", baseline])
    #expect(integer(matched, "baseline", "backup", "before") == 1_000)
    #expect(integer(matched, "baseline", "backup", "after") == 6_000)
    // A container the baseline does not hold: refused, not compared with nothing.
    let other = try AppData.run(["audit", "--no-config", "--baseline", baseline, tree.scratch + "/c.xcappdata"])
    #expect(other.status == 2)
    #expect(other.output.isEmpty)
    #expect(other.error == "appdata: error: \(baseline): a baseline of 2 containers, none with this container's id 'com.example.c'; give --baseline a report of this container, or audit the folder it was made from\n")
  }

  @Test func initConfigGivesNoLimitsToAnEmptyContainer() throws {
    let tree = try TestTree("init-many")
    try tree.file("A.xcappdata/AppDataInfo.plist", contents: Array("""
      <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>CFBundleIdentifier</key><string>com.example.a</string></dict></plist>
      """.utf8))
    try tree.file("A.xcappdata/AppData/Documents/big", size: 5_000_000)
    try tree.file("B.xcappdata/AppDataInfo.plist", contents: Array("""
      <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>CFBundleIdentifier</key><string>com.example.b</string></dict></plist>
      """.utf8))
    try tree.folder("B.xcappdata/AppData/Documents")
    let output = tree.scratch + "/many.json"
    let result = try AppData.run(["init-config", "--output", output, tree.root])
    #expect(result.status == 0, "\(result.error)")
    #expect(result.output == "Wrote \(output): maxBackupSize 5.8 MiB, maxFileSize 5.8 MiB (current figures + 20%)\n")
    // Issue 41: written where every audit will read it, it says so; the report names it.
    let here = try AppData.shell("cd '\(tree.scratch)' && \"$APPDATA\" init-config '\(tree.root)' && \"$APPDATA\" audit --fail-on never '\(tree.root)'")
    #expect(here.output.contains("Every 'appdata audit' run in this folder now applies it"), "\(here.output)")
    #expect(here.output.contains("\nPolicy: appdata.json\n"), "\(here.output)")
    let written = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output))) as! [String: Any]
    #expect(written["containers"] as? NSDictionary == ["com.example.a": ["maxFileSize": "5.8 MiB", "maxBackupSize": "5.8 MiB"]] as NSDictionary)
    // B gains a file: the top level's limits apply to it, and it passes.
    try tree.file("B.xcappdata/AppData/Documents/small", size: 10_000)
    #expect(try AppData.run(["audit", "--config", output, tree.root]).status == 0)
    #expect(ByteSize.parse("5.8 MiB")! >= 6_000_000)
    for bytes: UInt64 in [1, 1023, 1024, 1025, 10 * 1024 - 1, 10 * 1024, 999_999_999, 1 << 40, UInt64.max / 3] {
      #expect(ByteSize.parse(ByteSize.written(bytes))! >= bytes, "\(bytes): \(ByteSize.written(bytes))")
    }
  }

  @Test func globs() throws {
    let cases: [(String, String, Bool)] = [
      ("Documents/*.bin", "Documents/a.bin", true), ("Documents/*.bin", "Documents/x/a.bin", false),
      ("Documents/**/a.bin", "Documents/a.bin", true), ("Documents/**/a.bin", "Documents/x/y/a.bin", true),
      ("**", "anything/at/all", true), ("Docu?ents", "Documents", true), ("[DL]*", "Library", true),
      ("[!DL]*", "Library", false), ("a\\*b", "a*b", true), ("a\\*b", "axb", false),
    ]
    for (pattern, path, expected) in cases {
      #expect(try Glob(pattern).matches(Array(path.utf8)) == expected, "\(pattern) ~ \(path)")
    }
    #expect(try Glob("Documents/Maps").matchesPathOrAncestor(Array("Documents/Maps/a/b".utf8)))
    #expect(throws: Glob.SyntaxError.self) { try Glob("[z-a]") }
  }
}

/// `--baseline PATH` (issue 34): anything audit reads, audited first with the same options.
@Suite("baseline as any PATH")
struct BaselinePathTests {
  /// A folder, and its archive, as the baseline of a grown copy: the same comparison as a
  /// saved `--list critical` report of it gives, and --max-growth applies.
  @Test func aFolderOrArchiveBaselineEqualsASavedReportOfIt() throws {
    let folder = NSTemporaryDirectory() + "appdata-baseline-path-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: folder) }
    #expect(try AppData.shell("""
      mkdir -p '\(folder)/old/Documents' && printf 'abc' > '\(folder)/old/Documents/a.txt' \
      && cp -r '\(folder)/old' '\(folder)/new' && head -c 5000 /dev/zero > '\(folder)/new/Documents/new.bin' \
      && printf 'more' >> '\(folder)/new/Documents/a.txt' && cd '\(folder)' && tar czf old.tgz old
      """).status == 0)
    let saved = try AppData.run(["audit", "--format", "json", "--list", "critical", "--output", folder + "/old.json", folder + "/old"])
    #expect(saved.status == 0)
    func comparison(_ baseline: String) throws -> String {
      let report = try AppData.auditJSON(folder + "/new", ["--list", "critical", "--baseline", baseline])
      var compared = report["baseline"] as? [String: Any] ?? [:]
      compared["file"] = nil
      return String(decoding: try JSONSerialization.data(withJSONObject: compared, options: [.sortedKeys]), as: UTF8.self)
    }
    let expected = try comparison(folder + "/old.json")
    #expect(expected.contains("new.bin"))
    #expect(try comparison(folder + "/old") == expected)
    #expect(try comparison(folder + "/old.tgz") == expected)
    let limited = try AppData.run(["audit", "--baseline", folder + "/old.tgz", "--max-growth", "1K", folder + "/new"])
    #expect(limited.status == 1)
    // Issue 41: sizes a person reads, then the exact bytes.
    #expect(limited.output.contains("new: the backup grew by 4.9 KiB (5,004 bytes), or 166800.0%, from "), "\(limited.output)")
    #expect(limited.output.contains(", since \(folder)/old.tgz; more than --max-growth 1.0 KiB (1,024 bytes) [backup-grew]"), "\(limited.output)")
  }

  /// A backup against an older one, containers matched by id; two encrypted backups open
  /// with the one password given once.
  @Test func aBackupAgainstAnOlderBackup() throws {
    let folder = NSTemporaryDirectory() + "appdata-baseline-backup-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let script = """
      import os, sys, random, importlib.util
      spec = importlib.util.spec_from_file_location("x", sys.argv[2] + "/Scripts/make-extract-backup.py")
      x = importlib.util.module_from_spec(spec); spec.loader.exec_module(x)
      b = x.backup
      for name, extra in (("old", 0), ("new", 1)):
          for encrypted in (False, True):
              folder = os.path.join(sys.argv[1], name + ("-encrypted" if encrypted else ""))
              os.makedirs(folder)
              b.write_plists(folder, ["com.example.extract"])
              rows = x.rows(random.Random(33))
              if extra:
                  rows.append(("AppDomain-com.example.extract", "Documents/added.bin", "file", 0o644, 1, bytes(7000), None, {}, 3))
              bag, keys = b.keybag_and_keys(b.PASSWORD, 10, random.Random(15)) if encrypted else (None, None)
              x.write(folder, rows, class_keys=keys)
              if encrypted:
                  b.encrypt(folder, dpic=10)
      """
    #expect(try AppData.shell("python3 - '\(folder)' '\(AppData.packageRoot)' <<'EOF'\n\(script)\nEOF").status == 0)
    for suffix in ["", "-encrypted"] {
      let result = try AppData.run(["audit", "--format", "json", "--baseline", folder + "/old" + suffix, folder + "/new" + suffix],
                                   environment: EncryptedBackupTests.withPassword)
      #expect(result.status == 0, "\(suffix): \(result.error)")
      let containers = try result.json()["containers"] as? [[String: Any]] ?? []
      let app = try #require(containers.first { $0["id"] as? String == "com.example.extract" }, "\(containers)")
      #expect(integer(app, "baseline", "backup", "delta") == 7000, "\(suffix): \(app["baseline"] ?? "none")")
      let group = try #require(containers.first { $0["id"] as? String == "group.com.example.extract" })
      #expect(integer(group, "baseline", "backup", "delta") == 0)
    }
  }
}

extension BaselinePathTests {
  /// Each kind of PATH (a package, a Simulator-like folder of containers, a backup, a folder of
  /// backups) as --baseline gives the comparison a JSON report saved from it gives.
  @Test(arguments: ["package", "folder of containers", "archive", "backup", "backups"])
  func eachKindOfPathComparesAsItsSavedReport(kind: String) throws {
    let fixtures = AppData.generatedFixtures("make-test-inputs.py", label: "baseline-kinds")
    defer { try? FileManager.default.removeItem(atPath: fixtures) }
    let history = BackupHistoryTests.folder + "/Backup"
    let (old, new): (String, String) = switch kind {
    case "package": ("\(fixtures)/WeightTracker.xcappdata", "\(fixtures)/WeightTracker.xcappdata")
    case "folder of containers": ("\(fixtures)/packages", "\(fixtures)/packages")
    case "archive": ("\(fixtures)/Containers.tar.gz", "\(fixtures)/Containers.tar.gz")
    case "backup": ("\(history)/00008030-001234567890802E-20261022-093000", "\(history)/00008030-001234567890802E")
    default: (history, history)
    }
    let saved = NSTemporaryDirectory() + "appdata-saved-\(UUID().uuidString).json"
    defer { try? FileManager.default.removeItem(atPath: saved) }
    let made = try AppData.run(["audit", "--format", "json", "--fail-on", "never", "--output", saved, old], environment: EncryptedBackupTests.withPassword)
    #expect(made.status == 0, "\(made.error)")
    func comparisons(_ baseline: String) throws -> [String] {
      let result = try AppData.run(["audit", "--format", "json", "--fail-on", "never", "--baseline", baseline, new],
                                   environment: EncryptedBackupTests.withPassword)
      #expect(result.status == 0, "\(kind) \(baseline): \(result.error)")
      let report = try JSONParser.parse(Array(result.output.utf8))
      var all: [JSONValue] = []
      func collect(_ value: JSONValue) {
        guard let object = value.objectValue else { return }
        if let compared = object["baseline"], case .object(var members) = compared {
          members["file"] = nil
          all.append(.object(members))
        }
        for key in ["containers", "backups"] { for item in object[key]?.arrayValue ?? [] { collect(item) } }
      }
      collect(report)
      return all.map { $0.serialized(pretty: false) }.sorted()
    }
    let expected = try comparisons(saved)
    #expect(!expected.isEmpty)
    #expect(try comparisons(old) == expected, "\(kind)")
  }

  /// A baseline PATH that cannot be read is refused in one line, exit 2, nothing on stdout.
  @Test func anUnreadableBaselinePathIsRefusedBeforeAnythingIsPrinted() throws {
    let folder = NSTemporaryDirectory() + "appdata-bad-baseline-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try FileManager.default.createDirectory(atPath: folder + "/empty", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: folder + "/c/Documents", withIntermediateDirectories: true)
    try Data("not an archive".utf8).write(to: URL(fileURLWithPath: folder + "/junk.bin"))
    for baseline in [folder + "/empty", folder + "/junk.bin", folder + "/missing"] {
      let result = try AppData.run(["audit", "--baseline", baseline, folder + "/c"])
      #expect(result.status == 2, "\(baseline)")
      #expect(result.output.isEmpty, "\(baseline): \(result.output)")
      #expect(result.error.split(separator: "\n").count == 1 && result.error.contains(baseline), "\(baseline): \(result.error)")
    }
  }

  /// Containers new since the baseline, and those gone, are named (table and JSON).
  @Test func newAndRemovedContainersAreNamed() throws {
    let backups = BackupHistoryTests.folder + "/Backup/"
    let newest = backups + "00008030-001234567890802E"
    let result = try AppData.run(["audit", "--format", "json", "--baseline", backups + "00008030-001234567890802E-20261008-093000", newest])
    #expect(result.status == 0, "\(result.error)")
    let changes = try result.json()["baselineContainers"] as? [String: Any]
    #expect(changes?["new"] as? [String] == ["group.com.example.notes"])
    #expect(changes?["removed"] as? [String] == ["com.example.game"])
    let table = try AppData.run(["audit", "--baseline", backups + "00008030-001234567890802E-20261008-093000", newest])
    // Issue 41: what grew, then and now, largest change first; new and gone marked.
    #expect(table.output.contains("-20261008-093000: 1 grew, 1 new, 1 gone\n"), "\(table.output)")
    let rows = table.output.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
    let growth = Array(rows.drop { !$0.hasPrefix("CONTAINER THEN NOW CHANGE") }.prefix(4))
    #expect(growth == ["CONTAINER THEN NOW CHANGE", "group.com.example.notes - 48.8 KiB new",
                       "com.example.notes 2.9 KiB 20.5 KiB +17.6 KiB (+600.0%)", "com.example.game 4.9 KiB - gone"], "\(table.output)")
    let html = try AppData.run(["audit", "--format", "html", "--baseline", backups + "00008030-001234567890802E-20261008-093000", newest])
    #expect(html.output.contains("<tr class=\"gone\"><td>com.example.game</td><td>4.9 KiB</td><td>-</td><td>gone</td></tr>"))
    #expect(html.output.contains("<tr class=\"grew\"><td>com.example.notes</td><td>2.9 KiB</td><td>20.5 KiB</td><td>+17.6 KiB (+600.0%)</td></tr>"))
  }
}
