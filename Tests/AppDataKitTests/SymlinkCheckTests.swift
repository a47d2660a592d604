@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
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

  /// Past the memory bound the rows not handed over are files: a path the table does not hold
  /// is never a link.
  @Test func aLinkTheTableDoesNotHoldIsNeverWrittenAsOne() {
    let check = SymlinkCheck(links: [(Self.bytes("a"), Self.bytes("b"))], isComplete: false)
    #expect(check.verdict(Self.bytes("a"), target: Self.bytes("b")) == nil)
    #expect(check.verdict(Self.bytes("c"), target: Self.bytes("d"))?.hasPrefix("is one of more symlinks than appdata holds") == true)
    #expect(check.isLink(Self.bytes("a")) && !check.isLink(Self.bytes("c")))
  }
}
