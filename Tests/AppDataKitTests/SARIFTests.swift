@testable import AppDataCore
import Foundation
import Testing

/// SARIF that GitHub's code scanning ingests (issue 51): it rejects the whole file when one
/// result has no location ("locationFromSarifResult: expected at least one location"), so
/// every result, container-level ones included, has one; and results inside the checkout are
/// relative to it (`%SRCROOT%`), so GitHub links them to files.
@Suite("SARIF")
struct SARIFTests {
  /// GitHub's ingestion rules, then the official schema: at least one location per result, a
  /// URI on each, the ruleId among the run's rules, a level. Prints one line per result:
  /// `ruleId level uriBaseId uri`, sorted.
  static func checked(_ file: String) throws -> [String] {
    let check = try AppData.shell("""
      python3 - '\(AppData.packageRoot)/Tests/Schemas/sarif-schema-2.1.0.json' '\(file)' <<'PY'
      import json, sys, jsonschema
      schema = json.load(open(sys.argv[1])); log = json.load(open(sys.argv[2]))
      jsonschema.Draft4Validator(schema).validate(log)
      lines = []
      for run in log['runs']:
          rules = {rule['id'] for rule in run['tool']['driver']['rules']}
          for result in run['results']:
              assert result.get('ruleId') in rules, ('ruleId not among the rules', result)
              assert result.get('level') in ('error', 'warning', 'note', 'none'), ('no level', result)
              locations = result.get('locations') or []
              assert len(locations) >= 1, ('no location', result)
              for location in locations:
                  artifact = location['physicalLocation']['artifactLocation']
                  assert isinstance(artifact.get('uri'), str) and artifact['uri'], ('no uri', result)
                  base = artifact.get('uriBaseId')
                  assert base is None or base in run.get('originalUriBaseIds', {}) or base == '%SRCROOT%', ('unknown base', result)
                  lines.append(f"{result['ruleId']} {result['level']} {base or '-'} {artifact['uri']}")
      print('\\n'.join(sorted(lines)))
      PY
      """)
    guard check.status == 0 else { throw TestFailure("SARIF check failed: \(check.error)") }
    return check.output.split(separator: "\n").map(String.init)
  }

  /// A checkout holding a policy file and a container with a finding of every kind a folder
  /// container can have: file and container limits, a budget, growth, markers, layout, metadata,
  /// an interrupted migration.
  static func checkout() throws -> (tree: TestTree, container: String) {
    let tree = try TestTree("sarif")
    try tree.file("appdata.json", contents: Array("""
      {"maxBackupSize": "6K", "maxFileSize": "2K", "warnAt": 0.9, "budgets": [{"path": "Documents", "maxBytes": "3K"}]}
      """.utf8))
    let app = "apps/MyApp"
    try tree.file(app + "/Documents/big.bin", size: 3000)                        // backup-file-too-large
    try tree.file(app + "/Documents/near.bin", size: 1900)                       // backup-file-near-limit
    try tree.file(app + "/Library/Preferences/p.plist", size: 10)
    try tree.setModernMarker(app + "/Library/Preferences")                       // excluded-system-folder
    try tree.file(app + "/Library/Old/o.bin", size: 10)
    try tree.setLegacyMarker(app + "/Library/Old/o.bin")                         // legacy-marker
    try tree.file(app + "/Library/Caches/c.bin", size: 10)
    try tree.setModernMarker(app + "/Library/Caches/c.bin")                      // redundant-marker
    try tree.file(app + "/Library/Tiles/CACHEDIR.TAG", contents: Array("Signature: 8a477f597d28d172789f06886806bc55\n".utf8))  // cache-in-backup
    try tree.file(app + "/Junk/x", size: 1)                                      // unknown-location
    try tree.file(app + "/.com.apple.mobile_container_manager.metadata.plist", contents: Array("not a plist".utf8))  // metadata-unreadable
    try tree.file(app + "/.appdata-migration.journal", contents: Array("x".utf8))  // unfinished-migration
    try tree.file(app + "/Documents/more.bin", size: 1500)                       // backup-too-large, budget-exceeded
    return (tree, tree.path(app))
  }

  @Test func everyResultHasALocationRelativeToTheCheckout() throws {
    let (tree, container) = try Self.checkout()
    // The baseline: the container before more.bin (backup-grew, a limit the command line set).
    let baseline = tree.scratch + "/baseline.json"
    try FileManager.default.moveItem(atPath: container + "/Documents/more.bin", toPath: tree.scratch + "/more.bin")
    _ = try AppData.run(["audit", "--no-config", "--format", "json", "--output", baseline, container])
    try FileManager.default.moveItem(atPath: tree.scratch + "/more.bin", toPath: container + "/Documents/more.bin")

    let sarif = tree.scratch + "/report.sarif"
    let run = try AppData.shell("""
      cd '\(tree.root)' && '\(AppData.binary)' audit --format sarif --output '\(sarif)' --baseline '\(baseline)' --max-growth 1K \
        --sarif-root '\(tree.root)' apps/MyApp
      """)
    #expect(run.status == 1, "\(run.error)")
    #expect(try Self.checked(sarif) == [
      "backup-file-near-limit warning %SRCROOT% apps/MyApp/Documents/near.bin",
      "backup-file-too-large error %SRCROOT% apps/MyApp/Documents/big.bin",
      "backup-grew error %SRCROOT% apps/MyApp/",                 // the command line's limit: the container's root
      "backup-too-large error %SRCROOT% appdata.json",           // the policy's limit: the policy file
      "budget-exceeded error %SRCROOT% appdata.json",
      "cache-in-backup warning %SRCROOT% apps/MyApp/Library/Tiles",
      "excluded-system-folder warning %SRCROOT% apps/MyApp/Library/Preferences",
      "legacy-marker warning %SRCROOT% apps/MyApp/Library/Old/o.bin",
      "metadata-unreadable warning %SRCROOT% apps/MyApp/.com.apple.mobile_container_manager.metadata.plist",
      "redundant-marker note %SRCROOT% apps/MyApp/Library/Caches/c.bin",
      "unfinished-migration warning %SRCROOT% apps/MyApp/.appdata-migration.journal",
      "unknown-location warning %SRCROOT% apps/MyApp/Junk",
    ])
    // GITHUB_WORKSPACE does the same without the option; the base's URI is the checkout's.
    let workspace = try AppData.run(["audit", "--config", tree.path("appdata.json"), "--format", "sarif", container],
                                    environment: ["GITHUB_WORKSPACE": tree.root])
    let log = try workspace.json()
    let bases = (log["runs"] as? [[String: Any]])?.first?["originalUriBaseIds"] as? [String: Any]
    #expect(value(bases, "%SRCROOT%", "uri") as? String == "file://" + tree.root + "/")
    let results = (log["runs"] as? [[String: Any]])?.first?["results"] as? [[String: Any]] ?? []
    #expect(results.count == 11)
    #expect(results.allSatisfy { ($0["locations"] as? [[String: Any]])?.count == 1 })
  }

  @Test func outsideTheCheckoutEveryResultStillHasALocation() throws {
    let (tree, container) = try Self.checkout()
    let sarif = tree.scratch + "/report.sarif"
    // No checkout: relative to the container (CONTAINER), the container's own findings at its
    // root ("./"); the policy file's, at the policy file, absolute.
    let run = try AppData.run(["audit", "--config", tree.path("appdata.json"), "--format", "sarif", "--output", sarif, container],
                              environment: ["GITHUB_WORKSPACE": ""])
    #expect(run.status == 1, "\(run.error)")
    let lines = try Self.checked(sarif)
    #expect(lines.count == 11)
    #expect(lines.contains("backup-too-large error - file://\(tree.root)/appdata.json"))
    #expect(lines.contains("backup-file-too-large error CONTAINER Documents/big.bin"))
    // The command line's limit: the container's root.
    let cli = try AppData.run(["audit", "--no-config", "--max-backup-size", "1K", "--format", "sarif", "--output", sarif, container])
    #expect(cli.status == 1)
    #expect(try Self.checked(sarif).contains("backup-too-large error CONTAINER ./"))
  }

  /// An archive (its unreadable '..' entry, a container-level finding) and a report of many:
  /// a container in an archive is located at the archive.
  @Test func archivesAndReportsOfManyHaveLocationsToo() throws {
    let (tree, container) = try Self.checkout()
    let archive = tree.path("apps/MyApp.tar")
    let made = try AppData.shell("""
      python3 - '\(container)' '\(archive)' <<'PY'
      import sys, tarfile, io
      with tarfile.open(sys.argv[2], 'w', format=tarfile.PAX_FORMAT) as tar:
          tar.add(sys.argv[1] + '/Documents', arcname='Documents')
          info = tarfile.TarInfo('../evil'); info.size = 1
          tar.addfile(info, io.BytesIO(b'x'))
      PY
      """)
    #expect(made.status == 0, "\(made.error)")
    let sarif = tree.scratch + "/archive.sarif"
    _ = try AppData.run(["audit", "--no-config", "--max-backup-size", "1K", "--format", "sarif", "--output", sarif,
                         "--sarif-root", tree.root, archive])
    let lines = try Self.checked(sarif)
    #expect(lines.contains("unreadable error %SRCROOT% apps/MyApp.tar"))
    #expect(lines.contains("backup-too-large error %SRCROOT% apps/MyApp.tar"))
    #expect(lines.contains("backup-file-too-large error %SRCROOT% apps/MyApp.tar") == false)  // no --max-file-size
    // Two PATHs: a report of many, every result located.
    let many = try AppData.run(["audit", "--no-config", "--max-backup-size", "1K", "--max-file-size", "2K", "--format", "sarif",
                                "--output", sarif, "--sarif-root", tree.root, container, archive])
    #expect(many.status == 1)
    let all = try Self.checked(sarif)
    #expect(all.contains("backup-too-large error %SRCROOT% apps/MyApp/"))
    #expect(all.contains("backup-file-too-large error %SRCROOT% apps/MyApp/Documents/big.bin"))
    #expect(all.filter { $0.hasPrefix("backup-file-too-large error %SRCROOT% apps/MyApp.tar") }.count == 1)  // big.bin
  }

  /// Device backups' findings: the stored files checked (--verify), a location the layout says
  /// is never backed up, an unfinished snapshot, a backup not read, and a container against a
  /// backup. A backup's paths are not files: each result is located at the backup's folder.
  @Test func deviceBackupFindingsHaveLocations() throws {
    let sarif = NSTemporaryDirectory() + "appdata-sarif-\(UUID().uuidString).sarif"
    defer { try? FileManager.default.removeItem(atPath: sarif) }
    let plain = BackupTests.plain
    _ = try AppData.run(["audit", "--no-config", "--verify", "--fail-on", "never", "--format", "sarif", "--output", sarif, plain])
    let verified = try Self.checked(sarif)
    for rule in ["backup-file-missing", "backup-file-size-mismatch", "backup-holds-excluded", "unreadable"] {
      #expect(verified.contains { $0.hasPrefix(rule + " ") }, "\(rule): \(verified)")
    }
    #expect(verified.allSatisfy { $0.hasSuffix(" - file://" + plain) }, "\(verified)")
    // Inside the checkout: relative to it.
    _ = try AppData.run(["audit", "--no-config", "--verify", "--fail-on", "never", "--format", "sarif", "--output", sarif,
                         "--sarif-root", BackupTests.fixtures, plain])
    #expect(try Self.checked(sarif).allSatisfy { $0.hasSuffix(" %SRCROOT% plain") })
    _ = try AppData.run(["audit", "--no-config", "--fail-on", "never", "--format", "sarif", "--output", sarif, BackupTests.fixtures + "/incomplete"])
    #expect(try Self.checked(sarif).contains { $0.hasPrefix("backup-incomplete warning") })
    // Two backups, one locked: its backup-unreadable, at its folder.
    _ = try AppData.run(["audit", "--no-config", "--fail-on", "never", "--format", "sarif", "--output", sarif, plain,
                         BackupTests.fixtures + "/encrypted"], environment: ["APPDATA_BACKUP_PASSWORD": "not it"])
    #expect(try Self.checked(sarif).contains { $0.hasPrefix("backup-unreadable warning CONTAINER") && $0.hasSuffix(" ./") })
    let log = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sarif))) as? [String: Any]
    let texts = ((log?["runs"] as? [[String: Any]])?.first?["results"] as? [[String: Any]] ?? []).compactMap { value($0, "message", "text") as? String }
    #expect(texts.contains("backup encrypted: locked: wrong password for this encrypted backup (the keybag's class key does not unwrap with it)"), "\(texts)")
    // A container against the backup.
    let tree = try TestTree("sarif-against")
    try tree.file("Documents/note.txt", size: 1000)
    try tree.setModernMarker("Documents/note.txt")
    try tree.file("Documents/new.txt", size: 55)
    let plist = #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>MCMMetadataIdentifier</key><string>com.example.notes</string></dict></plist>"#
    try tree.file(ContainerLayout.metadataFileName, contents: Array(plist.utf8))
    _ = try AppData.run(["audit", "--no-config", "--fail-on", "never", "--backup", plain, "--format", "sarif", "--output", sarif, tree.root])
    let against = try Self.checked(sarif)
    #expect(against.contains("backup-missing-file warning CONTAINER Documents/new.txt"), "\(against)")
    #expect(against.contains("backup-unexpected-file warning CONTAINER Documents/note.txt"), "\(against)")
  }

  /// Android's findings: over the quota and the rules' own (about the data folder: its root),
  /// and those about a path.
  @Test func androidFindingsHaveLocations() throws {
    let tree = try TestTree("sarif-android")
    try tree.file("files/a.txt", size: 100)
    try tree.file("files/tiles/t.bin", size: 10)                  // android-cache-in-backup
    try tree.file("databases/app.db", size: 8192)
    try tree.file("databases/app.db-shm", size: 100)              // android-shm-carried
    try tree.file("shared_prefs/s.xml", size: 7)
    try tree.sparseFile("files/big.bin", size: 30_000_000)        // android-over-quota
    let rules = try tree.file("../" + URL(fileURLWithPath: tree.scratch).lastPathComponent + "/rules.xml", contents: Array("""
      <full-backup-content>
        <exclude domain="database" path="app.db"/>
        <exclude domain="file" path="../escape"/>
        <exclude domain="sharedpref" path="missing.xml"/>
      </full-backup-content>
      """.utf8))
    let sarif = tree.scratch + "/android.sarif"
    _ = try AppData.run(["audit", "--no-config", "--fail-on", "never", "--android-rules", rules, "--format", "sarif", "--output", sarif, tree.root])
    #expect(try Self.checked(sarif) == [
      "android-cache-in-backup warning CONTAINER files/tiles",
      "android-over-quota error CONTAINER ./",
      "android-rule-dropped warning CONTAINER ./",
      "android-rule-unmatched note CONTAINER shared_prefs/missing.xml",
      "android-shm-carried warning CONTAINER databases/app.db-shm",
      "android-transfer-carries-excluded warning CONTAINER ./",
    ])
    // The same data as a tar (adb exec-out run-as PKG tar c .): located at the archive.
    let tar = tree.scratch + "/com.example.app.tar"
    try #require(try AppData.shell("tar -cSf '\(tar)' -C '\(tree.root)' .").status == 0)
    _ = try AppData.run(["audit", "--no-config", "--fail-on", "never", "--android-rules", rules, "--format", "sarif", "--output", sarif, tar])
    let archived = try Self.checked(sarif)
    #expect(archived.count == 6 && archived.allSatisfy { $0.hasSuffix(" - file://" + tar) }, "\(archived)")
  }
}
