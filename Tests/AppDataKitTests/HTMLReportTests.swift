import AppDataKit
import Foundation
import Testing

/// `--format html` rendered in a real browser (headless Chromium, installed by `make test`): the
/// script runs and draws cells, hostile names stay text, nothing is loaded from the network, and
/// the file stays small whatever the tree.
@Suite("html report", .serialized)
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

  @Test func aReportOfManyShowsTheContainersThenEachOne() throws {
    let file = NSTemporaryDirectory() + "appdata-html-\(UUID().uuidString).html"
    defer { try? FileManager.default.removeItem(atPath: file) }
    let result = try AppData.run(["audit", "--no-config", "--format", "html", "--output", file, "--fail-on", "never",
                                  InputTests.device])
    #expect(result.status == 0, "\(result.error)")
    let (dom, log) = try Self.render(file)
    #expect(Self.cells(dom) >= 4)
    #expect(dom.components(separatedBy: "<section>").count - 1 == 5)
    #expect(dom.contains("group.com.example.notes"))
    #expect(!log.contains("Uncaught"), "\(log.suffix(2000))")
    // A device backup too.
    let backup = try AppData.run(["audit", "--no-config", "--format", "html", "--output", file, "--fail-on", "never", BackupTests.plain])
    #expect(backup.status == 0, "\(backup.error)")
    let (backupDOM, backupLog) = try Self.render(file)
    #expect(Self.cells(backupDOM) >= 3)
    #expect(!backupLog.contains("Uncaught"))
  }

  @Test func aReportOf200000EntriesStaysUnder2MiB() throws {
    let tree = try TestTree("html-large")
    let made = try AppData.shell("python3 '\(AppData.packageRoot)/Scripts/generate-container.py' --entries 200000 --seed 3 '\(tree.root)/c'")
    #expect(made.status == 0, "\(made.error)")
    let file = tree.scratch + "/large.html"
    let result = try AppData.run(["audit", "--no-config", "--format", "html", "--output", file, "--fail-on", "never", tree.root + "/c"])
    #expect(result.status == 0, "\(result.error)")
    let size = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? 0
    print("html report of 200,000 entries: \(size) bytes")
    #expect(size > 0 && size < 2 << 20)
    let (dom, log) = try Self.render(file)
    #expect(Self.cells(dom) > 10)
    #expect(!log.contains("Uncaught"))
  }
}
