@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Testing

/// Every shape PATH can take (Scripts/make-test-inputs.py builds them): a Simulator device with
/// apps, a group, an extension and a bundle; complete, trimmed, zipped Xcode packages; a tarred
/// Containers folder; a Mac's containers; and folders that hold no container at all.
@Suite("inputs", .serialized, .enabled(if: AppData.has("zip"), "needs zip to make the zipped Xcode package fixture"))
struct InputTests {
  static let fixtures = AppData.generatedFixtures("make-test-inputs.py", label: "inputs")

  static let udid = "5C3E8A1B-9D2F-4E6A-8B7C-1234567890AB"
  static var device: String { fixtures + "/device/" + udid }
  static var containers: String { device + "/data/Containers" }

  /// The elements of a report of many, by id (or folder name).
  static func byID(_ json: [String: Any]) -> [String: [String: Any]] {
    var result: [String: [String: Any]] = [:]
    for item in json["containers"] as? [[String: Any]] ?? [] {
      let key = (item["id"] as? String) ?? ((item["container"] as? String)?.split(separator: "/").last.map(String.init) ?? "?")
      result[key] = item
    }
    return result
  }

  @Test func aSimulatorDeviceIsOneReportWithARowPerContainer() throws {
    let json = try Library.auditJSON(Self.device)
    #expect(json["source"] as? String == Self.device)
    let items = json["containers"] as? [[String: Any]] ?? []
    // Sorted by path: Data/Application (three apps), Data/PluginKitPlugin, Shared/AppGroup; no bundle.
    #expect(items.map { $0["id"] as? String } == [
      "com.example.notes", "com.example.photos", "com.example.empty", "com.example.notes.widget", "group.com.example.notes",
    ])
    #expect(items.map { $0["kind"] as? String } == ["app", "app", "app", "plugin", "group"])
    #expect(items[0]["container"] as? String == Self.containers + "/Data/Application/0A1B2C3D-0000-4000-8000-00000000000A")
    let containers = Self.byID(json)
    let notes = try #require(containers["com.example.notes"])
    #expect(figures(notes, "critical")[0...1] == [2, 1200])
    #expect(figures(notes, "offline")[0...1] == [1, 3000])
    #expect(figures(notes, "cached")[0...1] == [1, 5000])
    #expect(figures(notes, "temporary")[0...1] == [1, 100])
    #expect(figures(notes, "system")[0] == 1)
    let photos = try #require(containers["com.example.photos"])
    #expect(figures(photos, "critical")[0...1] == [2, 2_004_096])
    let empty = try #require(containers["com.example.empty"])
    #expect(figures(empty, "critical")[0...1] == [0, 0])
    // The group's layout (MobileBackup, iOS 18): its whole root is backed up, tmp too; its
    // Caches, SplashBoard and SystemData/com.apple.chrono are not.
    let group = try #require(containers["group.com.example.notes"])
    #expect(figures(group, "critical")[0...1] == [4, 5650])
    #expect(figures(group, "cached")[0...1] == [1, 700])
    #expect(figures(group, "temporary")[0...1] == [0, 0])
    let groupMetadata = Self.containers + "/Shared/AppGroup/0A1B2C3D-0000-4000-8000-0000000000A1/" + ContainerLayout.metadataFileName
    let groupMetadataBytes = try #require(FileManager.default.attributesOfItem(atPath: groupMetadata)[.size] as? Int)
    #expect(figures(group, "system")[0...1] == [3, 230 + groupMetadataBytes])
    #expect(findings(group).isEmpty)
    // An extension uses the app layout: Stray is outside it.
    let widget = try #require(containers["com.example.notes.widget"])
    #expect(figures(widget, "critical")[0...1] == [1, 250])
    #expect(figures(widget, "cached")[0...1] == [1, 300])
    #expect(figures(widget, "other")[0...1] == [1, 10])
    #expect(findings(widget).map { $0["path"] as? String } == ["Stray"])
    // The summary adds them up.
    #expect(integer(json, "summary", "backup", "bytes") == 1200 + 2_004_096 + 5650 + 250)
    #expect(integer(json, "summary", "backup", "files") == 9)
    #expect(integer(json, "summary", "categories", "cached", "bytes") == 5000 + 700 + 300)
  }

  /// The device folder itself is the reference; each folder below it that is an entry point
  /// gives the same report (the device itself is not compared with itself).
  @Test(arguments: ["/data", "/data/Containers"])
  func everyEntryPointOfADeviceGivesTheSameReport(suffix: String) throws {
    var json = try Library.auditJSON(Self.device + suffix)
    var reference = try Library.auditJSON(Self.device)
    json["source"] = nil
    reference["source"] = nil
    #expect(NSDictionary(dictionary: json).isEqual(to: reference))
  }

  @Test func oneFolderOfADeviceHoldsThoseContainersOnly() throws {
    let groups = try Library.auditJSON(Self.containers + "/Shared/AppGroup")
    #expect((groups["containers"] as? [[String: Any]])?.map { $0["kind"] as? String } == ["group"])
    let data = try Library.auditJSON(Self.containers + "/Data")
    #expect(Set(Self.byID(data).keys) == ["com.example.notes", "com.example.photos", "com.example.empty", "com.example.notes.widget"])
    // One app's own container is a single report with its id and kind.
    let single = try Library.auditJSON(Self.containers + "/Data/Application/0A1B2C3D-0000-4000-8000-00000000000B")
    #expect(single["id"] as? String == "com.example.photos")
    #expect(single["kind"] as? String == "app")
    #expect(single["containers"] == nil)
  }

  @Test func theTableHasARowPerContainerLargestFirstAndFoldsEmptyOnes() throws {
    let result = try AppData.run(["audit", "--no-config", "--bytes", "--max-file-size", "1M", Self.device])
    #expect(result.status == 1)
    #expect(result.output == """
      Source: \(Self.device)
      Policy: none (no limits but those given on the command line)

      CONTAINER                 KIND    FILES  BACKED UP  ERRORS  WARNINGS
      com.example.photos        app         3    2004096       1         0
      group.com.example.notes   group       8       5650       0         0
      com.example.notes         app         6       1200       0         0
      com.example.notes.widget  plugin      4        250       0         1
      1 container with no app files: com.example.empty

      Findings: 1 error, 1 warning
        error   com.example.photos: Documents/photo.jpg: backed-up file of 1.9 MiB (2,000,000 bytes), over the 1.0 MiB limit [backup-file-too-large] What to do: \(AuditRule.backupFileTooLarge.remedy)
        warning com.example.notes.widget: Stray: top-level entry outside the standard layout (Documents, Library, tmp); not backed up [unknown-location] What to do: \(AuditRule.unknownLocation.remedy)

      Total: 5 containers, 22 files, \(2_004_096 + 5600 + 1200 + 250 + 3000 + 5000 + 100 + 700 + 50 + 200 + 30 + 300 + 10 + Self.metadataBytes); backup 9 files, 2011196
      Result: FAIL (findings at or above --fail-on error)

      """)
  }

  /// The five metadata plists' sizes (system files), as the generator wrote them.
  static var metadataBytes: Int {
    let names = ["Data/Application/0A1B2C3D-0000-4000-8000-00000000000A", "Data/Application/0A1B2C3D-0000-4000-8000-00000000000B",
                 "Data/Application/0A1B2C3D-0000-4000-8000-00000000000D", "Shared/AppGroup/0A1B2C3D-0000-4000-8000-0000000000A1",
                 "Data/PluginKitPlugin/0A1B2C3D-0000-4000-8000-0000000000B1"]
    return names.reduce(0) { sum, name in
      let path = containers + "/" + name + "/.com.apple.mobile_container_manager.metadata.plist"
      return sum + ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
    }
  }

  @Test func xcodePackagesCompleteAndTrimmed() throws {
    let complete = try Library.auditJSON(Self.fixtures + "/WeightTracker.xcappdata")
    #expect(complete["container"] as? String == Self.fixtures + "/WeightTracker.xcappdata/AppData")
    #expect(complete["id"] as? String == "com.example.WeightTracker")
    #expect(figures(complete, "critical")[0...1] == [2, 950])
    #expect(figures(complete, "cached")[0...1] == [1, 90])
    let trimmed = try Library.auditJSON(Self.fixtures + "/Trimmed.xcappdata")
    #expect(trimmed["id"] is NSNull)
    #expect(figures(trimmed, "critical")[0...1] == [1, 1200])
    #expect(findings(trimmed).isEmpty)
    let table = try AppData.run(["audit", "--no-config", Self.fixtures + "/packages"])
    #expect(table.output.contains("\nTrimmed.xcappdata          app       1    1.2 KiB       0         0\n"))
    #expect(table.output.contains("\ncom.example.WeightTracker  app       4      950 B       0         0\n"))
  }

  @Test func zippedPackagesAndTarredDevicesAuditLikeTheFolders() throws {
    let zipped = try Library.auditJSON(Self.fixtures + "/WeightTracker.xcappdata.zip")
    let folder = try Library.auditJSON(Self.fixtures + "/WeightTracker.xcappdata")
    #expect(zipped["container"] as? String == Self.fixtures + "/WeightTracker.xcappdata.zip//WeightTracker.xcappdata/AppData")
    #expect(zipped["id"] as? String == "com.example.WeightTracker")
    #expect(ArchiveTests.comparable(value(zipped, "summary") as! [String: Any]) == ArchiveTests.comparable(value(folder, "summary") as! [String: Any]))

    let tarred = try Library.auditJSON(Self.fixtures + "/Containers.tar.gz")
    let device = try Library.auditJSON(Self.device)
    let packed = Self.byID(tarred)
    let onDisk = Self.byID(device)
    #expect(Set(packed.keys) == Set(onDisk.keys))
    for (id, report) in onDisk {
      #expect(packed[id]?["kind"] as? String == report["kind"] as? String, "\(id)")
      #expect(ArchiveTests.comparable(packed[id]?["summary"] as? [String: Any] ?? [:])
              == ArchiveTests.comparable(report["summary"] as! [String: Any]), "\(id)")
    }
    #expect(integer(tarred, "summary", "backup", "bytes") == 2_011_196)
  }

  @Test func macContainersAndGroupContainers() throws {
    let containers = try Library.auditJSON(Self.fixtures + "/mac/Library/Containers")
    let app = try #require(Self.byID(containers)["com.example.mac"])
    #expect(app["container"] as? String == Self.fixtures + "/mac/Library/Containers/com.example.mac/Data")
    #expect(figures(app, "critical")[0...1] == [2, 150])
    #expect(figures(app, "other")[0...1] == [1, 0])  // the Desktop symlink, never followed
    #expect(findings(app).isEmpty)  // the sandbox's symlinks to Desktop, … are its layout
    let groups = try Library.auditJSON(Self.fixtures + "/mac/Library/Group Containers")
    let group = try #require((groups["containers"] as? [[String: Any]])?.first)
    #expect(group["kind"] as? String == "group")
    #expect(figures(group, "critical")[0...1] == [1, 640])
    #expect(figures(group, "cached")[0...1] == [1, 64])
  }

  @Test func foldersHoldingNoContainerAreRefused() throws {
    let looked = "looked for Documents, Library or tmp, a container metadata plist, an .xcappdata package, a Simulator device (data/Containers) and a folder of containers"
    let cases: [(String, String)] = [
      ("empty", "an empty folder, not an app data container (\(looked))"),
      ("checkout", "a source checkout holding no app data container (\(looked)); name the container's folder, or use --root PATH"),
      ("checkout-with-data", "a source checkout, not an app data container; it holds UITests/SampleData.xcappdata: audit that"),
      ("home", "a home folder (Desktop, Downloads, Music, Pictures), not an app data container; name a Mac app's ~/Library/Containers/BUNDLE-ID/Data, all of ~/Library/Containers, or a Simulator device"),
      ("device", "holds 1 Simulator device (\(Self.udid)); audit one at a time: \(Self.fixtures)/device/UDID"),
      ("device/\(Self.udid)/data/Containers/Bundle/Application", "holds .app bundles (Bundle/Application), never app data; name the device's Containers folder, or its Data/Application"),
    ]
    for (name, message) in cases {
      let path = Self.fixtures + "/" + name
      for command in [["audit"], ["migrate"]] {
        let result = try AppData.run(command + [path])
        #expect(result.status == 2, "\(command) \(name)")
        #expect(result.error == "appdata: error: \(path): \(message)\n", "\(command) \(name)")
        #expect(result.output.isEmpty)
      }
    }
  }

  @Test func appKeepsAnAppItsExtensionsAndItsGroups() throws {
    let json = try Library.auditJSON(Self.device, apps: ["com.example.notes"])
    #expect(Set(Self.byID(json).keys) == ["com.example.notes", "com.example.notes.widget", "group.com.example.notes"])
    #expect(integer(json, "summary", "backup", "bytes") == 1200 + 250 + 5650)
    let two = try Library.auditJSON(Self.device, apps: ["com.example.photos", "com.example.empty"])
    #expect(Set(Self.byID(two).keys) == ["com.example.photos", "com.example.empty"])
    let none = try AppData.run(["audit", "--app", "com.example.nope", Self.device])
    #expect(none.status == 2)
    #expect(none.error == "appdata: error: \(Self.device): no container matches --app 'com.example.nope' (did you mean 'com.example.notes'?); the apps with the most backed-up bytes: com.example.photos (1.9 MiB), com.example.empty (0 B) (appdata audit --list-apps PATH lists them all)\n")
  }

  @Test(.enabled(if: AppData.has("jq"), "needs jq"))
  func theReportOfManyValidatesAgainstTheSchemaAndJqReadsIt() throws {
    let output = Self.fixtures + "/../inputs-many-\(UUID().uuidString).json"
    defer { try? FileManager.default.removeItem(atPath: output) }
    let run = try AppData.shell("\"$APPDATA\" audit --json --no-config --fail-on never --list all --max-file-size 1M '\(Self.device)' > '\(output)'")
    #expect(run.status == 0)
    #expect(try AppData.validateAgainstAuditSchema(output) == "valid")
    let jq = try AppData.shell("jq '.containers[] | select(.id==\"com.example.notes\") | .summary.backup.bytes' '\(output)'")
    #expect(jq.output == "1200\n")
  }

  @Test func ndjsonLinesNameTheirContainerAndATotalEndsIt() throws {
    let result = try AppData.run(["audit", "--no-config", "--format", "ndjson", "--list", "critical", "--fail-on", "never", Self.device])
    let lines = result.output.split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
    #expect(lines.filter { $0["type"] as? String == "entry" }.count == 9)
    for line in lines where line["type"] as? String == "entry" || line["type"] as? String == "finding" {
      #expect((line["container"] as? String)?.hasPrefix(Self.containers + "/") == true)
      #expect(line["id"] is String)
    }
    #expect(lines.filter { $0["type"] as? String == "summary" }.count == 5)
    #expect(lines.last?["type"] as? String == "total")
    #expect(integer(lines.last, "summary", "backup", "bytes") == 2_011_196)
    #expect(integer(lines.last, "containers") == 5)
  }

  @Test func ciFormatsNameTheirContainer() throws {
    let github = try AppData.run(["audit", "--no-config", "--format", "github", "--max-file-size", "1M", Self.device])
    #expect(github.output.hasPrefix("::error title=appdata backup-file-too-large (com.example.photos)::com.example.photos: Documents/photo.jpg: backed-up file"))
    let junit = try AppData.run(["audit", "--no-config", "--format", "junit", "--max-file-size", "1M", Self.device])
    #expect(junit.output.components(separatedBy: "<testsuite name=").count - 1 == 5)
    #expect(junit.output.contains("<testsuite name=\"appdata audit com.example.photos\""))
    #expect(junit.output.contains("<property name=\"id\" value=\"group.com.example.notes\"/>"))
    let sarif = try AppData.run(["audit", "--no-config", "--format", "sarif", "--max-file-size", "1M", Self.device])
    let log = try sarif.json()
    let run = (log["runs"] as? [[String: Any]])?.first
    let results = run?["results"] as? [[String: Any]] ?? []
    #expect(results.count == 2)
    #expect(results.compactMap { value($0, "properties", "container") as? String }.sorted() == ["com.example.notes.widget", "com.example.photos"])
    #expect((run?["originalUriBaseIds"] as? [String: Any])?.count == 5)
  }

  @Test func policyOverridesAndBaselinesApplyPerContainer() throws {
    let scratch = try TestTree("inputs-policy")
    let policy = try scratch.file("appdata.json", contents: Array("""
      {"maxFileSize": "1M", "containers": {"com.example.photos": {"maxFileSize": "3M", "maxBackupSize": "1M"}}}
      """.utf8))
    let json = try AppData.auditJSON(Self.device, ["--config", policy])
    let photos = try #require(Self.byID(json)["com.example.photos"])
    #expect(findings(photos).map { $0["rule"] as? String } == ["backup-too-large"])
    #expect(integer(photos, "limits", "maxFileSize") == 3 << 20)
    #expect(integer(Self.byID(json)["com.example.notes"], "limits", "maxFileSize") == 1 << 20)
    // The same through an archive: ids are found first, then each is counted with its limits.
    let tarred = try AppData.auditJSON(Self.fixtures + "/Containers.tar.gz", ["--config", policy])
    #expect(findings(try #require(Self.byID(tarred)["com.example.photos"])).map { $0["rule"] as? String } == ["backup-too-large"])
    let bad = try scratch.file("bad.json", contents: Array(#"{"containers": {"x": {"maxFileSize": "lots"}}}"#.utf8))
    let refused = try AppData.run(["audit", "--config", bad, Self.device])
    #expect(refused.status == 2)
    #expect(refused.error.contains("key 'containers.x.maxFileSize': invalid size \"lots\""))

    // A baseline of many is matched by id: only the container that grew reports it.
    let baseline = scratch.path("baseline.json")
    #expect(try AppData.shell("\"$APPDATA\" audit --json --no-config --fail-on never '\(Self.device)' > '\(baseline)'").status == 0)
    let copy = scratch.path("device")
    #expect(try AppData.shell("cp -a '\(Self.device)' '\(copy)' && head -c 5000 /dev/zero >> '\(copy)/data/Containers/Data/Application/0A1B2C3D-0000-4000-8000-00000000000A/Documents/note.txt'").status == 0)
    let grown = try AppData.auditJSON(copy, ["--no-config", "--baseline", baseline, "--max-growth", "100"])
    let grew = (grown["containers"] as? [[String: Any]] ?? []).filter { !findings($0, rule: "backup-grew").isEmpty }
    #expect(grew.map { $0["id"] as? String } == ["com.example.notes"])
    #expect(integer(Self.byID(grown)["com.example.notes"], "baseline", "backup", "delta") == 5000)
  }

  @Test func migrateTakesAPackageOrOneAppOfADevice() throws {
    let scratch = try TestTree("inputs-migrate")
    #expect(try AppData.shell("cp -a '\(Self.fixtures)/WeightTracker.xcappdata' '\(Self.device)' '\(scratch.root)/'").status == 0)
    let package = try AppData.run(["migrate", scratch.path("WeightTracker.xcappdata")])
    #expect(package.status == 0, "\(package.error)")
    #expect(FileManager.default.fileExists(atPath: scratch.path("WeightTracker.xcappdata/AppData/Documents/k.bin")))
    let device = scratch.path(Self.udid)
    let unnamed = try AppData.run(["migrate", device])
    #expect(unnamed.status == 2)
    #expect(unnamed.error == "appdata: error: \(device): holds 5 containers; name the app to migrate with --app ID (app containers: com.example.empty, com.example.notes, com.example.photos)\n")
    let named = try AppData.run(["migrate", "--app", "com.example.notes", device])
    #expect(named.status == 0, "\(named.error)")
    let notes = device + "/data/Containers/Data/Application/0A1B2C3D-0000-4000-8000-00000000000A"
    #expect(FileManager.default.fileExists(atPath: notes + "/Documents/c.bin"))
    let after = try Library.auditJSON(notes)
    #expect(figures(after, "offline")[0...1] == [2, 8000])
    let archive = try AppData.run(["migrate", Self.fixtures + "/Containers.tar.gz"])
    #expect(archive.status == 2)
    #expect(archive.error.contains("is an archive; appdata changes containers only in folders"))
  }
}
