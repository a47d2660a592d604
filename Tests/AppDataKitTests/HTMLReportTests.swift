@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Testing

/// `--format html` rendered in a real browser (headless Chromium, installed by `make test`): the
/// script runs and draws cells, hostile names stay text, nothing is loaded from the network, and
/// the file stays small whatever the tree.
@Suite("html report", .serialized, .enabled(if: AppData.has("chromium"), "needs chromium (headless) to render the page"))
struct HTMLReportTests {
  /// Chromium's DOM after the scripts ran, and its log.
  static func render(_ file: String) throws -> (dom: String, log: String) {
    let result = try AppData.shell("""
      timeout 120 chromium --headless --no-sandbox --disable-gpu --window-size=1200,900 --enable-logging=stderr --v=0 \
        --virtual-time-budget=5000 --dump-dom 'file://\(file)'
      """)
    #expect(result.status == 0, "\(result.error.suffix(2000))")
    return (result.output, result.error)
  }

  static func cells(_ dom: String) -> Int {
    guard let range = dom.range(of: #"data-cells="(\d+)""#, options: .regularExpression) else { return -1 }
    return Int(dom[range].dropFirst(12).dropLast()) ?? -1
  }

  @Test func hostileNamesRenderAsTextInARealBrowser() throws {
    let tree = try TestTree("html-hostile")
    let names = ["<script>alert(1)<\u{2F}script>.bin", "\"><img src=x onerror=alert(2)>.bin", "evil\nname\u{1B}[31m.bin", "</script><b>x</b>"]
    for (index, name) in names.enumerated() { try tree.file("Documents/" + name, size: 1000 * (index + 1)) }
    try tree.file("Library/Caches/c.bin", size: 500)
    let file = tree.scratch + "/report.html"
    let result = try AppData.run(["audit", "--no-config", "--format", "html", "--output", file, tree.root])
    #expect(result.status == 0, "\(result.error)")
    let html = try String(contentsOfFile: file, encoding: .utf8)
    #expect(!html.contains("<script>alert"))
    #expect(!html.contains("<img src=x"))
    #expect(!html.contains("</script><b>"))
    #expect(!html.contains("http://") || html.components(separatedBy: "http://").count == 2)  // only the SVG namespace
    #expect(!html.contains("https://"))
    #expect(html.contains("Content-Security-Policy"))
    let (dom, log) = try Self.render(file)
    #expect(Self.cells(dom) >= 2, "the script did not draw")
    #expect(!dom.contains("<img"))
    #expect(!dom.contains("<b>x</b>"))
    #expect(dom.contains("&lt;img src=x onerror=alert(2)&gt;"))
    #expect(!log.contains("Uncaught"), "\(log.suffix(2000))")
    // And a picture of it, as a person would see it.
    let png = tree.scratch + "/report.png"
    let shot = try AppData.shell("timeout 120 chromium --headless --no-sandbox --disable-gpu --window-size=1200,900 --screenshot='\(png)' 'file://\(file)'")
    #expect(shot.status == 0)
    let image = try Data(contentsOf: URL(fileURLWithPath: png))
    #expect(image.count > 5000 && image.starts(with: [0x89, 0x50, 0x4E, 0x47]))
  }

  @Test func aCellOfSeveralCategoriesShowsEachShare() throws {
    let tree = try TestTree("html-shares")
    try tree.file("Documents/Mixed/kept.db", size: 50_000)
    try tree.file("Documents/Mixed/offline.bin", size: 150_000)
    try tree.setModernMarker("Documents/Mixed/offline.bin")
    try tree.file("Documents/other.bin", size: 100_000)
    let file = tree.scratch + "/report.html"
    #expect(try AppData.run(["audit", "--no-config", "--format", "html", "--output", file, tree.root]).status == 0)
    let (dom, log) = try Self.render(file)
    #expect(!log.contains("Uncaught"), "\(log.suffix(2000))")
    // Documents holds two cells; Mixed is drawn as a quarter critical, three quarters offline,
    // so its backed-up bytes show although most of it is excluded; sizes are written in it.
    let shares = dom.components(separatedBy: "class=\"share\"").count - 1
    #expect(shares == 3, "\(dom.suffix(3000))")
    #expect(dom.contains("data-category=\"offline\""))
    #expect(dom.contains("data-name=\"Mixed\" data-depth=\"1\" data-bytes=\"200000\" data-backed-up=\"50000\""))
    #expect(dom.contains("195.3 KiB"))
  }

  /// A folder of one device's backups over time: its history chart, in a real browser. Hovering
  /// the game's point on 2026-10-15 shows its tooltip, leaving hides it, and a click goes to the
  /// game's section.
  @Test(.enabled(if: AppData.has("chromedriver") && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/selenium/__init__.py"),
                 "needs chromium-driver and python3-selenium (make test installs them)"))
  func theHistoryChartShowsATooltipAndLinksToTheContainer() throws {
    let file = AppData.fixtureRoot + "/history-\(UUID().uuidString).html"
    defer { try? FileManager.default.removeItem(atPath: file) }
    let audit = try AppData.run(["audit", "--no-config", "--format", "html", "--output", file, "--fail-on", "never", "\(BackupHistoryTests.folder)/Backup"],
                                environment: EncryptedBackupTests.withPassword)
    #expect(audit.status == 0, "\(audit.error)")
    let html = try String(contentsOfFile: file, encoding: .utf8)
    #expect(html.contains("<h2>History of Ann&apos;s iPhone <small>00008030-001234567890802E · 6 backups</small></h2>"))
    #expect(!html.contains("History of Bob"))
    let seen = try AppData.shell("timeout 180 /usr/bin/python3 '\(AppData.packageRoot)/Scripts/html-history-test.py' '\(file)' com.example.game 2026-10-15T09:30:00Z")
    #expect(seen.status == 0, "\(seen.error.suffix(3000))")
    let lines = seen.output.split(separator: "\n").map(String.init)
    #expect(lines.prefix(5) == ["charts: 1", "lines: 4", "tooltip shown: True", "tooltip: com.example.game · 2026-10-15T09:30:00Z · 87.9 KiB",
                                "tooltip after leaving: False"], "\(seen.output)")
    #expect(lines.last == "section: com.example.game", "\(seen.output)")
  }

  /// Chromium driven through chromedriver (Selenium): real clicks on a device backup of 503
  /// domains, zooming into the largest container and its largest folder, then back by the trail.
  @Test(.enabled(if: AppData.has("chromedriver") && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/selenium/__init__.py"),
                 "needs chromium-driver and python3-selenium (make test installs them)"))
  func clickToZoomGoesInTwiceAndBackOnABackupOf500Domains() throws {
    let tree = try TestTree("html-clicks")
    let backup = tree.path("backup")
    let made = try AppData.shell("python3 '\(AppData.packageRoot)/Scripts/make-test-backup.py' --rows 2000 --apps 332 '\(backup)'")
    #expect(made.status == 0, "\(made.error)")
    let file = tree.scratch + "/report.html"
    let audit = try AppData.run(["audit", "--no-config", "--format", "html", "--output", file, "--fail-on", "never", backup])
    #expect(audit.status == 0, "\(audit.error)")
    let html = try String(contentsOfFile: file, encoding: .utf8)
    #expect(html.contains("484 more containers with app files"))
    #expect(html.contains("4 containers with no app files: com.example.empty, com.example.ghost, com.example.my-app, com.example.notes"))
    let clicks = try AppData.shell("timeout 180 /usr/bin/python3 '\(AppData.packageRoot)/Scripts/html-click-test.py' '\(file)'")
    #expect(clicks.status == 0, "\(clicks.error.suffix(3000))")
    #expect(clicks.output == """
      top trail: all containers
      top first cells: com.example.app00, com.example.app01, com.example.app02
      top cells: 499; sizes written: yes; category shares: yes; trail links: 0
      zoom 1 trail: all containers / com.example.app00
      zoom 1 first cells: Library, Documents
      zoom 1 cells: 2; sizes written: yes; category shares: yes; trail links: 1
      zoom 2 trail: all containers / com.example.app00 / Library
      zoom 2 first cells: WebKit, Preferences, Application Support
      zoom 2 cells: 3; sizes written: yes; category shares: yes; trail links: 2
      back trail: all containers
      back first cells: com.example.app00, com.example.app01, com.example.app02
      back cells: 499; sizes written: yes; category shares: yes; trail links: 0

      """)
  }

  @Test(.enabled(if: AppData.has("zip"), "needs zip for the inputs fixture"))
  func aReportOfManyShowsTheContainersThenEachOne() throws {
    let file = NSTemporaryDirectory() + "appdata-html-\(UUID().uuidString).html"
    defer { try? FileManager.default.removeItem(atPath: file) }
    let result = try AppData.run(["audit", "--no-config", "--format", "html", "--output", file, "--fail-on", "never",
                                  InputTests.device])
    #expect(result.status == 0, "\(result.error)")
    let (dom, log) = try Self.render(file)
    #expect(Self.cells(dom) >= 4)
    // The overview first, then a section per container holding app files.
    #expect(dom.contains("<section id=\"overview\">"))
    #expect(dom.components(separatedBy: "<section id=\"c").count - 1 == 4)
    #expect(dom.contains("group.com.example.notes"))
    #expect(!log.contains("Uncaught"), "\(log.suffix(2000))")
    // A device backup too.
    let backup = try AppData.run(["audit", "--no-config", "--format", "html", "--output", file, "--fail-on", "never", BackupTests.plain])
    #expect(backup.status == 0, "\(backup.error)")
    let (backupDOM, backupLog) = try Self.render(file)
    #expect(Self.cells(backupDOM) >= 3)
    #expect(!backupLog.contains("Uncaught"))
  }
}

/// The page's size is bounded by the treemap's cell cap, whatever the tree: checked on a report
/// built in memory (no browser, no 200,000 files on disk).
@Suite("html size")
struct HTMLSizeTests {
  /// `count` listed files in five top-level folders, three levels of 30 folders below them (far
  /// more folders than cells), sizes of 1 to 100 KB so that no few files dominate, every category.
  static func entries(count: Int) -> [ListedEntry] {
    var random = SplitMix64(state: 3)
    let tops = ["Documents", "Library/Application Support", "Library/Caches", "tmp", "Library/Preferences"]
    let categories: [AppDataCore.Category] = [.critical, .critical, .cached, .temporary, .critical]
    return (0..<count).map { index in
      let top = Int(random.next() % 5)
      let path = "\(tops[top])/a\(random.next() % 30)/b\(random.next() % 30)/c\(random.next() % 30)/f\(index).bin"
      let bytes = 1000 + random.next() % 100_000
      let category = top == 0 && index % 7 == 0 ? AppDataCore.Category.offline : categories[top]
      return ListedEntry(path: Array(path.utf8), category: category, bytes: bytes, allocatedBytes: bytes, marker: [], excludedBy: nil)
    }
  }

  @Test func aReportOf100000EntriesStaysUnder2MiB() throws {
    let report = AuditReport(container: "/c", categories: [:], directories: 0, maxFileSize: nil, maxBackupSize: nil,
                             findings: [], largest: [], entries: ListedEntries(Self.entries(count: 100_000)))
    let html = AuditSet(source: "/c", reports: [report], isCollection: false).html(failOn: nil)
    print("html report of 100,000 entries: \(html.utf8.count) bytes")
    #expect(html.utf8.count < 2 << 20)
    // The treemap's data holds at most the cap's cells (one "n" key each).
    let cells = html.components(separatedBy: "\"n\":").count - 1
    #expect((100...SizeTree.maximumCells).contains(cells), "\(cells) cells")
  }
}
