@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataKit
import Foundation
import Testing

/// `SymlinkCheck` in-process: links judged by where they resolve through the others.
@Suite("symlink check")
struct SymlinkCheckTests {
  static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

  static func check(_ links: [(String, String)], isComplete: Bool = true) -> [String: String?] {
    let check = SymlinkCheck(links: links.map { (bytes($0.0), bytes($0.1)) }, isComplete: isComplete)
    return Dictionary(uniqueKeysWithValues: links.map { ($0.0, check.verdict(bytes($0.0), target: bytes($0.1))) })
  }

  @Test func linksResolveThroughTheOthersAndAChainToAFileStaysALink() {
    let verdicts = Self.check([
      ("Documents/y", ".."), ("x", "Documents/y/Documents/y/../../.."), ("z", "Documents/y/z2"),
      ("l1", "l2"), ("l2", "../.."), ("a/b", "../c/d"), ("loop1", "loop2"), ("loop2", "loop1"), ("abs", "/etc"),
    ])
    #expect(verdicts["Documents/y"] == .some(nil))
    #expect(verdicts["x"] == .some("resolves out of the container through another symlink"))
    #expect(verdicts["z"] == .some(nil))
    #expect(verdicts["l2"] == .some("climbs out of the container"))
    #expect(verdicts["l1"] == .some(nil))  // to the file l2
    #expect(verdicts["a/b"] == .some(nil))
    #expect(verdicts["loop1"] == .some("resolves through more than 40 symlinks"))
    #expect(verdicts["abs"] == .some("is absolute"))
  }

  /// Where the filesystem written to ignores case (macOS's APFS) or normalization, a target's
  /// `K` names the link `k`, and `é` decomposed the link `é` precomposed: links that stay inside
  /// byte for byte resolve out through them (the hostile round of issue 53 found them written as
  /// links). Byte for byte (Linux), the same rows stay links.
  @Test func namesCompareAsTheFilesystemWrittenToComparesThem() {
    let deep = String(repeating: "Documents/K/", count: 15) + String(repeating: "../", count: 30) + "etc"
    let links = [("Documents/k", ".."), ("Documents/z", "K/../.."), ("w", deep), ("Documents/\u{E9}", ".."),
                 ("Documents/n", "e\u{301}/../.."), ("Documents/inside", "K")]
    func verdicts(_ comparison: NameComparison) -> [String: String?] {
      let check = SymlinkCheck(links: links.map { (Self.bytes($0.0), Self.bytes($0.1)) }, comparison: comparison)
      return Dictionary(uniqueKeysWithValues: links.map { ($0.0, check.verdict(Self.bytes($0.0), target: Self.bytes($0.1))) })
    }
    let bytes = verdicts(.bytes)
    #expect(links.allSatisfy { bytes[$0.0] == .some(nil) }, "\(bytes)")
    let folding = verdicts(.ignoringCaseAndNormalization)
    #expect(folding["Documents/z"] == .some("resolves out of the container through another symlink"))
    #expect(folding["w"] == .some("resolves out of the container through another symlink"))
    // Names that are not ASCII: no judgement rests on how they fold (see below).
    #expect(folding["Documents/n"] == .some(SymlinkCheck.notASCII) && folding["Documents/\u{E9}"] == .some(SymlinkCheck.notASCII))
    #expect(folding["Documents/k"] == .some(nil) && folding["Documents/inside"] == .some(nil))
    // Normalization alone folds too (U+212A is K): no judgement rests on a name that is not ASCII.
    let normalizing = verdicts(.ignoringNormalization)
    #expect(normalizing["Documents/n"] == .some(SymlinkCheck.notASCII))
    #expect(normalizing["Documents/z"] == .some(nil) && normalizing["w"] == .some(nil))
  }

  /// Where case is ignored, a folder whose name folds onto a link row's is never made (the
  /// writer would otherwise make `Documents/K` first and the check take `K` for the link `k`,
  /// which then is not written: a cold review of issue 53's change); and no judgement rests on a
  /// name that is not ASCII, whose folding appdata cannot know (`ſ` is `s` on such a filesystem,
  /// the Kelvin sign `k`): such a link is a file, a resolution through such a name ends outside,
  /// and such a folder is not made beside a link. Byte for byte, none of this applies.
  @Test func whereCaseIsIgnoredNoJudgementRestsOnAFoldThatCannotBeKnown() {
    let links = [("Documents/k", "a/b/c"), ("Documents/z", "K/../../.."), ("Documents/s", ".."), ("Documents/y", "\u{17F}/../.."),
                 ("Documents/\u{17F}x", "k")]
    let folding = SymlinkCheck(links: links.map { (Self.bytes($0.0), Self.bytes($0.1)) }, comparison: .ignoringCaseAndNormalization)
    let notASCII = SymlinkCheck.notASCII
    #expect(folding.folderBlocked(Self.bytes("Documents/K")) == "a symlink row has the same path")
    let notASCIIFolder = "a name of its path is not ASCII where a symlink row lies in or below that name's folder"
    #expect(folding.folderBlocked(Self.bytes("Documents/\u{212A}"))?.hasPrefix(notASCIIFolder) == true)
    // At the top, a folder on a link row's way (A/ſdir where a/sdir/x is a link: a hostile round
    // of issue 53 had A/ſdir/x taken for the link, which was not written).
    #expect(folding.folderBlocked(Self.bytes("\u{17F}"))?.hasPrefix(notASCIIFolder) == true)
    // Entered, not only made: A/ſ would enter A/s where a/s/new is a link's way (a cold review).
    #expect(folding.folderBlocked(Self.bytes("Documents/\u{E9}/deeper"))?.hasPrefix(notASCIIFolder) == true)
    #expect(folding.folderBlocked(Self.bytes("Library/\u{E9}/deeper")) == nil)  // no link's way there
    #expect(folding.folderBlocked(Self.bytes("Library/\u{212A}")) == nil)
    #expect(folding.verdict(Self.bytes("Documents/z"), target: Self.bytes("K/../../..")) == nil)  // through the link k, which is written
    #expect(folding.verdict(Self.bytes("Documents/y"), target: Self.bytes("\u{17F}/../..")) == notASCII)
    #expect(folding.verdict(Self.bytes("Documents/\u{17F}x"), target: Self.bytes("k")) == notASCII)
    let bytes = SymlinkCheck(links: links.map { (Self.bytes($0.0), Self.bytes($0.1)) })
    #expect(bytes.folderBlocked(Self.bytes("Documents/K")) == nil && bytes.folderBlocked(Self.bytes("Documents/\u{212A}")) == nil)
    #expect(bytes.folderBlocked(Self.bytes("Documents/k")) == "a symlink row has the same path")
    #expect(bytes.verdict(Self.bytes("Documents/y"), target: Self.bytes("\u{17F}/../..")) == nil)
    #expect(bytes.verdict(Self.bytes("Documents/z"), target: Self.bytes("K/../../..")) == "climbs out of the container")
  }

  /// Issue 48: the work is counted in components visited (a link's folders, then each component
  /// of the targets it goes through), whatever their depth, and one budget is spent by every
  /// container of a run: past it, the links not yet judged are files, with that reason.
  @Test func theWorkIsComponentsVisitedAndOneBudgetServesTheRun() {
    var budget = SymlinkCheck.Budget(limit: 2_000)
    // 3 folders, then '..', 'c': 5 steps; inside.
    let first = SymlinkCheck(links: [(Self.bytes("a/b/c/l"), Self.bytes("../c"))], budget: &budget)
    #expect(first.verdict(Self.bytes("a/b/c/l"), target: Self.bytes("../c")) == nil)
    #expect(budget.spent == 5)
    // 999 folders 3 bytes each, then 'x', '..' 400 times and 'end': 999 + 801 steps, as many as
    // at the root: a step's cost does not grow with the depth.
    let deep = Array(repeating: "ddd", count: 999).joined(separator: "/")
    let target = String(repeating: "x/../", count: 400) + "end"
    let second = SymlinkCheck(links: [(Self.bytes(deep + "/l"), Self.bytes(target))], budget: &budget)
    #expect(second.verdict(Self.bytes(deep + "/l"), target: Self.bytes(target)) == nil)
    #expect(budget.spent == 5 + 999 + 801)
    // The next container's links resolve until the budget is spent (195 steps left: the first
    // link takes its 801, past it), then every link not yet judged is a file; one judged
    // inside stays a link.
    let third = SymlinkCheck(links: [(Self.bytes("m1"), Self.bytes(target)), (Self.bytes("m2"), Self.bytes("n"))], budget: &budget)
    #expect(budget.spent == 5 + 999 + 801 + 801)
    #expect(budget.isExhausted)
    let past = "is one of more symlinks than appdata resolves in one extraction (2000 steps)"
    #expect(third.verdict(Self.bytes("m2"), target: Self.bytes("n")) == past)
    #expect(third.verdict(Self.bytes("m1"), target: Self.bytes(target)) == nil)
  }

  /// The interrupt flag is read inside the loop, every 1,024 steps: an interrupt set before the
  /// check stops it at the first reading (one link's 950 folders, then 1,024 steps of its target).
  @Test func anInterruptStopsTheCheckWithinOneThousandAndTwentyFourSteps() {
    let deep = Array(repeating: "ddd", count: 950).joined(separator: "/")
    let links = (0..<250).map { index in
      (Self.bytes(deep + "/l\(index)"), Self.bytes(String(repeating: "x/../", count: 816) + "l\((index + 1) % 250)"))
    }
    var budget = SymlinkCheck.Budget()
    var readings = 0
    let check = SymlinkCheck(links: links, budget: &budget, isInterrupted: {
      readings += 1
      return true
    })
    #expect(check.interrupted)
    #expect(readings == 1)
    #expect(budget.spent == 950 + 1024)
    // Not interrupted, the same links cost 250 × (950 + 8,193) steps: each gives up past 8,192.
    var whole = SymlinkCheck.Budget()
    let done = SymlinkCheck(links: links, budget: &whole)
    #expect(!done.interrupted)
    #expect(whole.spent == 250 * (950 + 8193))
    #expect(done.verdict(links[0].0, target: links[0].1) == "takes more than 8192 steps to resolve")
  }

  /// The manifest (250 links 3.8 KB deep, each target 4 KB of 'x/..' and the next
  /// link): SIGTERM while the check runs ends the run (143, one line, OUT never made) within
  /// 1,024 steps of it, by appdata's own count; it ran the whole check first (2,285,750 steps).
  @Test func theBinaryActsOnSIGTERMDuringTheSymlinkCheck() throws {
    let folder = ExtractTests.scratch("symlink-sigterm")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try ExtractHostileTests.backup(in: folder, rows: """
      folder_row(""), *[link_row("/".join(["ddd"] * 950) + f"/l{i:04d}", "x/../" * 816 + f"l{(i + 1) % 250:04d}") for i in range(250)]
      """)
    let result = try AppData.runPaused(["extract", "--app", "com.example.x", "-o", folder + "/out", folder + "/backup"], at: "symlinks",
                                       environment: ["APPDATA_DEBUG_STATS": "1"], withProcess: { process in
      kill(process.processIdentifier, SIGTERM)
      process.waitUntilExit()
    })
    #expect(result.status == 143)
    let lines = result.error.split(separator: "\n").map(String.init)
    #expect(lines.count == 2, "\(result.error)")
    #expect(lines.first == "appdata: error: \(folder)/out: interrupted; nothing was written", "\(result.error)")
    #expect(lines.last?.hasSuffix(" symlink-steps=\(950 + 1024)") == true, "\(result.error)")
    #expect(!FileManager.default.fileExists(atPath: folder + "/out"))
    let whole = try AppData.run(["extract", "--app", "com.example.x", "-o", folder + "/out", folder + "/backup"], environment: ["APPDATA_DEBUG_STATS": "1"])
    #expect(whole.status == 0, "\(whole.error)")
    #expect(whole.error.hasSuffix(" symlink-steps=\(250 * (950 + 8193))\n"), "\(whole.error.suffix(200))")
  }

  /// Past the memory bound the rows not handed over are files: a path the table does not hold
  /// is never a link.
  @Test func aLinkTheTableDoesNotHoldIsNeverWrittenAsOne() {
    let check = SymlinkCheck(links: [(Self.bytes("a"), Self.bytes("b"))], isComplete: false)
    #expect(check.verdict(Self.bytes("a"), target: Self.bytes("b")) == nil)
    #expect(check.verdict(Self.bytes("c"), target: Self.bytes("d"))?.hasPrefix("is one of more symlinks than appdata holds") == true)
    #expect(check.folderBlocked(Self.bytes("a")) != nil && check.folderBlocked(Self.bytes("c")) == nil)
  }
}
