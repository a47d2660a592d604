@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Testing

/// `appdata audit ARCHIVE`: every way a Mac (or Linux) stores markers in an archive gives the
/// same report as the same container on disk; broken and hostile archives are refused clearly.
@Suite("archives", .serialized, .enabled(if: AppData.has("zstd"), "needs zstd to make the .tar.zst fixture"))
struct ArchiveTests {
  /// The fixtures of Scripts/make-test-archives.py, built once per run.
  static let fixtures: String = {
    let folder = AppData.generatedFixtures("make-test-archives.py", label: "archives")
    // zstd is installed by the Makefile; the xz and gzip forms need nothing extra.
    _ = try! AppData.shell("zstd -q -f '\(folder)/pax-schily.tar' -o '\(folder)/pax-schily.tar.zst'")
    return folder
  }()

  /// The report without what legitimately differs: where it came from, and allocation (an archive
  /// carries none; appdata estimates 4 KiB blocks, while a filesystem may allocate more).
  static func comparable(_ json: [String: Any]) -> NSDictionary {
    func strip(_ value: Any) -> Any {
      if let object = value as? [String: Any] {
        var copy: [String: Any] = [:]
        for (key, item) in object where key != "allocatedBytes" && key != "container" { copy[key] = strip(item) }
        return copy
      }
      if let array = value as? [Any] { return array.map(strip) }
      return value
    }
    return NSDictionary(dictionary: strip(json) as! [String: Any])
  }

  @Test(arguments: ["pax-schily.tar", "pax-libarchive.tar", "appledouble.tar", "finder.zip", "gnu.tar.gz",
                    "pax-schily.tar.xz", "pax-schily.tar.zst"])
  func anArchiveAuditsLikeTheSameTreeOnDisk(archive: String) throws {
    let onDisk = try Library.auditJSON(Self.fixtures + "/tree/Data", list: Set(AppDataCore.Category.allCases))
    let packed = try Library.auditJSON(Self.fixtures + "/" + archive, list: Set(AppDataCore.Category.allCases))
    #expect(Self.comparable(packed) == Self.comparable(onDisk), "\(archive)")
    #expect(packed["container"] as? String == Self.fixtures + "/" + archive + "//Data")
    // The figures the markers decide, spelled out.
    #expect(figures(packed, "offline")[0...1] == [4, 1090])
    #expect(figures(packed, "critical")[0...1] == [3, 9156])
    #expect(findings(packed, rule: "legacy-marker").map { $0["path"] as? String } == ["Documents/legacy.bin"])
    // AppleDouble and __MACOSX entries are metadata: never counted or listed.
    let listed = (packed["entries"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
    #expect(!listed.contains { $0.contains("._") || $0.contains("__MACOSX") })
  }

  /// GNU `tar czf` keeps no extended attribute: the markers are lost without a word, and the
  /// backup reads larger than on disk (issue 51). One warning says so, and how to keep them.
  @Test(.enabled(if: AppData.has("tar"), "needs GNU tar"))
  func anArchiveWithNoAttributesAtAllIsWarnedAboutOnce() throws {
    let tree = try TestTree("no-xattrs")
    for app in ["A", "B"] {
      try tree.file(app + "/Documents/keep.bin", size: 3000)
      try tree.file(app + "/Documents/Offline/movie.bin", size: 5000)
      try tree.setModernMarker(app + "/Documents/Offline")
    }
    let plain = tree.scratch + "/plain.tgz"
    let kept = tree.scratch + "/kept.tgz"
    let made = try AppData.shell("tar czf '\(plain)' -C '\(tree.root)' A B && tar --xattrs -czf '\(kept)' -C '\(tree.root)' A B")
    try #require(made.status == 0, Comment(rawValue: made.error))
    let warning = "appdata: warning: \(plain): the archive holds no extended attributes at all, so its backup-exclusion markers"
      + " cannot be known (every file in a backed-up location is counted as backed up): either no file had any, or the tool that made it"
      + " dropped them. To keep them, make it with 'tar --xattrs' (GNU tar), or on a Mac with its tar (bsdtar) or 'ditto -c -k --sequesterRsrc'\n"
    // Two containers in the archive, one warning; the marker lost: 8000 backed-up bytes each.
    let lost = try AppData.run(["audit", "--no-config", "--format", "json", plain])
    #expect(lost.status == 0)
    #expect(lost.error == warning)
    let containers = (try lost.json())["containers"] as? [[String: Any]] ?? []
    #expect(containers.map { integer($0, "summary", "backup", "bytes") } == [8000, 8000])
    // With --xattrs: no warning, and the folder is offline as on disk (3000 backed up each).
    let keptRun = try AppData.run(["audit", "--no-config", "--format", "json", kept])
    #expect(keptRun.status == 0)
    #expect(keptRun.error == "")
    let keptContainers = (try keptRun.json())["containers"] as? [[String: Any]] ?? []
    #expect(keptContainers.map { integer($0, "summary", "backup", "bytes") } == [3000, 3000])
    #expect(keptContainers.map { integer($0, "summary", "categories", "offline", "bytes") } == [5000, 5000])
  }

  @Test func aFileNamedLikeAppleDoubleButNotOneIsCounted() throws {
    let folder = Self.fixtures + "/not-appledouble"
    let made = try AppData.shell("""
      mkdir -p '\(folder)/c/Documents' && printf 'plain text' > '\(folder)/c/Documents/._notes' \
        && printf 'x' > '\(folder)/c/Documents/café ☕.bin' && tar --format=pax -cf '\(folder)/x.tar' -C '\(folder)' c
      """)
    #expect(made.status == 0)
    let json = try Library.auditJSON(folder + "/x.tar", list: Set(AppDataCore.Category.allCases))
    #expect((json["entries"] as? [[String: Any]])?.map { $0["path"] as? String } == ["Documents/._notes", "Documents/café ☕.bin"])
  }

  @Test func severalContainersAreAReportOfManyAndRootChoosesOne() throws {
    let folder = Self.fixtures + "/two"
    let made = try AppData.shell("""
      mkdir -p '\(folder)/A/Documents' '\(folder)/B/Library/Caches' && printf 1234 > '\(folder)/A/Documents/a' && printf 12 > '\(folder)/B/Library/Caches/b' \
        && tar -cf '\(folder)/two.tar' -C '\(folder)' A B
      """)
    #expect(made.status == 0)
    let both = try Library.auditJSON(folder + "/two.tar")
    let containers = both["containers"] as? [[String: Any]] ?? []
    #expect(containers.map { $0["container"] as? String } == [folder + "/two.tar//A", folder + "/two.tar//B"])
    #expect(containers.map { $0["id"] is NSNull } == [true, true])
    #expect(integer(both, "summary", "categories", "critical", "bytes") == 4)
    #expect(integer(both, "summary", "categories", "cached", "bytes") == 2)
    let chosen = try AppData.auditJSON(folder + "/two.tar", ["--root", "B", "--no-config"])
    #expect(figures(chosen, "cached")[0...1] == [1, 2])
    #expect(figures(chosen, "critical")[0] == 0)
    // --root never makes a container of what is none: a missing folder, or one with no layout.
    let none = try AppData.run(["audit", "--no-config", "--root", "nothing-here", folder + "/two.tar"])
    #expect(none.status == 2)
    #expect(none.output.isEmpty)
    #expect(none.error == "appdata: error: \(folder)/two.tar: --root nothing-here names no app data container and no device backup in the archive (no Documents, Library or tmp folder, no container metadata plist, no Manifest.db beside Manifest.plist under it)\n")
    let notOne = try AppData.run(["audit", "--no-config", "--root", "A/Documents", folder + "/two.tar"])
    #expect(notOne.status == 2)
    // --root names a folder inside a folder too.
    let folderWithRoot = try AppData.run(["audit", "--root", "x", folder])
    #expect(folderWithRoot.status == 2)
    #expect(folderWithRoot.error == "appdata: error: \(folder)/x: --root names no folder inside \(folder)\n")
    let chosenFolder = try AppData.auditJSON(folder, ["--root", "B", "--no-config"])
    #expect(chosenFolder["container"] as? String == folder + "/B")
    #expect(figures(chosenFolder, "cached")[0...1] == [1, 2])
    let archiveLimit = try AppData.run(["audit", "--max-archive-bytes", "1M", folder])
    #expect(archiveLimit.error == "appdata: error: \(folder): is a folder; --max-archive-bytes applies to archives\n")
  }

  @Test func brokenAndHostileArchivesAreRefused() throws {
    let folder = Self.fixtures + "/broken"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let tar = try Data(contentsOf: URL(fileURLWithPath: Self.fixtures + "/pax-schily.tar"))
    let gzip = try Data(contentsOf: URL(fileURLWithPath: Self.fixtures + "/gnu.tar.gz"))
    try tar.prefix(tar.count / 3).write(to: URL(fileURLWithPath: folder + "/truncated.tar"))
    try gzip.prefix(gzip.count / 2).write(to: URL(fileURLWithPath: folder + "/truncated.tar.gz"))
    try Data().write(to: URL(fileURLWithPath: folder + "/empty.tar"))
    var corrupt = tar
    for index in stride(from: 0, to: 2048, by: 7) { corrupt[index] ^= 0x5A }
    try corrupt.write(to: URL(fileURLWithPath: folder + "/corrupt.tar"))
    // An encrypted zip: the same zip with the "encrypted" bit set in every header (as zip -e does).
    let encrypted = try AppData.shell("""
      python3 - '\(Self.fixtures)/finder.zip' '\(folder)/encrypted.zip' <<'PY'
      import sys
      data = bytearray(open(sys.argv[1], 'rb').read())
      for signature, flag in ((b'PK\\x03\\x04', 6), (b'PK\\x01\\x02', 8)):
          start = 0
          while (start := data.find(signature, start)) >= 0:
              data[start + flag] |= 1
              start += 4
      open(sys.argv[2], 'wb').write(data)
      PY
      """)
    #expect(encrypted.status == 0, "\(encrypted.error)")
    // A zip bomb in miniature: 64 MiB of zeros in a few dozen kilobytes.
    let bomb = try AppData.shell("""
      python3 -c 'import zipfile,sys; z=zipfile.ZipFile(sys.argv[1],"w",zipfile.ZIP_DEFLATED); z.writestr("c/Documents/zeros.bin", bytes(64<<20)); z.close()' '\(folder)/bomb.zip'
      """)
    #expect(bomb.status == 0)
    let bombSize = try FileManager.default.attributesOfItem(atPath: folder + "/bomb.zip")[.size] as! Int
    #expect(bombSize < 200_000)

    let cases: [(String, [String], String)] = [
      ("truncated.tar", [], "cannot read the archive (truncated or damaged?): "),
      ("truncated.tar.gz", [], "cannot read the archive (truncated or damaged?): "),
      ("empty.tar", [], "cannot read the archive: it holds no entries"),
      ("corrupt.tar", [], "is neither a container folder nor an archive appdata can read"),
      ("encrypted.zip", [], "is encrypted ("),
      ("bomb.zip", ["--max-archive-bytes", "10M"], "expands to more than 10485760 bytes (--max-archive-bytes); refusing a possible archive bomb"),
    ]
    for (name, extra, message) in cases {
      let result = try AppData.run(["audit", "--no-config"] + extra + [folder + "/" + name])
      #expect(result.status == 2, "\(name): \(result.error)")
      #expect(result.error.hasPrefix("appdata: error: \(folder)/\(name): \(message)"), "\(name): \(result.error)")
      #expect(result.error.split(separator: "\n").count == 1, "\(name)")
      #expect(result.output.isEmpty, "\(name)")
    }
    // Below the default limit the same zip is audited (its one file is 64 MiB).
    let allowed = try Library.auditJSON(folder + "/bomb.zip")
    #expect(figures(allowed, "critical")[0...1] == [1, 64 << 20])
  }

  @Test(arguments: ["pax-schily.tar", "pax-libarchive.tar", "appledouble.tar", "finder.zip", "gnu.tar.gz"])
  func statusReadsAnEntryInsideAnArchive(archive: String) throws {
    let file = Self.fixtures + "/" + archive
    let result = try AppData.run(["status", file + "//Data/Documents/Offline/deep/n.bin", file + "//Data/Documents/both.bin",
                                  file + "//Data/Documents/zero.bin"])
    #expect(result.status == 0, "\(result.error)")
    #expect(result.output == """
      [Excluded]    \(file)//Data/Documents/Offline/deep/n.bin  (modern marker, inherited from \(file)//Data/Documents/Offline)
      [Excluded]    \(file)//Data/Documents/both.bin  (both markers)
      [Included]    \(file)//Data/Documents/zero.bin

      """)
    let missing = try AppData.run(["status", file + "//Data/nope"])
    #expect(missing.status == 1)
    #expect(missing.error == "appdata: error: \(file): no entry Data/nope in the archive\n")
  }
}
