@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Testing

/// A small, seeded generator: the same argument vectors on every run.
struct SplitMix64: RandomNumberGenerator {
  var state: UInt64
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// Argument vectors built from the real option tables, typos of them, and hostile strings.
struct ArgumentFuzzer {
  var random = SplitMix64(state: 0x5EED)

  static let commands = Commands.all.map(\.name) + ["help", "audt", "", "-", "--", "--help", "-V", "_docs", "AUDIT", "migrat"]
  static let options: [String] = {
    var spellings: [String] = []
    for command in Commands.all {
      for option in command.options where option.name != "test-stop-after" {
        spellings.append("--" + option.name)
        spellings.append("--" + option.name.prefix(3))
        if option.isNegatable { spellings.append("--no-" + option.name) }
        if let short = option.short { spellings.append("-\(short)") }
      }
    }
    return spellings + ["--", "-", "-x", "--x", "---", "-qbj", "--format=", "--no-", "--=", "-j", "-j0", "-j999", "--jobs=-1"]
  }()
  static let values: [String] = [
    "", " ", "-", "--", "0", "1", "-1", "10", "1.5G", "5MB", "2GiB", "12Q", "1e9", "99999999999999999999999", ".", "..",
    "json", "table", "ndjson", "github", "junit", "sarif", "jsn", "all", "critical", "offline,cached", "bogus,", "error",
    "never", "keep-both", "merge", "legacy", "both", "bash", "zsh", "0.9", "1.5", "nan", "inf",
    "/nonexistent/appdata-fuzz", "Documents/**", "[ab", "é", "\u{1B}[2J", "\u{1B}]0;title\u{07}", "line\nbreak", "tab\tbed",
    "\u{FFFD}", "日本語", "\u{202E}evil", String(repeating: "x", count: 300), "--json", "-q",
  ]

  mutating func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }

  mutating func argumentVector() -> [String] {
    var argv = ["appdata"]
    if random.next() % 20 != 0 { argv.append(pick(Self.commands)) }
    let count = Int(random.next() % 7)
    for _ in 0..<count {
      switch random.next() % 6 {
      case 0, 1: argv.append(pick(Self.options))
      case 2: argv.append(pick(Self.options) + "=" + pick(Self.values))
      case 3: argv.append(pick(Self.values))
      case 4:
        let scalars = (0..<Int(random.next() % 8)).compactMap { _ in Unicode.Scalar(UInt32(random.next() % 0x3000)) }
        argv.append(String(String.UnicodeScalarView(scalars)))
      default: argv.append("/nonexistent/appdata-fuzz")
      }
    }
    return argv
  }
}

@Suite("command-line fuzzing")
struct FuzzTests {
  @Test func oneHundredThousandArgumentVectorsNeverCrashAndRejectInOneLine() {
    var fuzzer = ArgumentFuzzer()
    var rejected = 0
    var accepted = 0
    for _ in 0..<100_000 {
      let argv = fuzzer.argumentVector()
      switch CLI.prepare(argv) {
      case .usage(let message):
        rejected += 1
        if message.isEmpty || message.contains("\n") || message.contains("\r") {
          Issue.record("not a one-line error for \(argv): \(message.debugDescription)")
          return
        }
      case .text(let text, _):
        #expect(!text.isEmpty)
        accepted += 1
      case .help(let text):
        #expect(!text(nil).isEmpty)
        accepted += 1
      case .command:
        accepted += 1
      }
    }
    // The generator reaches both sides; most random command lines are wrong.
    #expect(rejected > 50_000)
    #expect(accepted > 1_000)
  }

  @Test func theBinaryRejectsWithOneErrorLineAndStatusTwo() throws {
    var fuzzer = ArgumentFuzzer()
    fuzzer.random = SplitMix64(state: 0xB1A5)
    var checked = 0
    while checked < 150 {
      let argv = fuzzer.argumentVector()
      guard case .usage = CLI.prepare(argv) else { continue }
      checked += 1
      let result = try AppData.run(Array(argv.dropFirst()))
      #expect(result.status == 2, "\(argv)")
      #expect(result.output.isEmpty, "\(argv)")
      let lines = result.error.split(separator: "\n", omittingEmptySubsequences: false)
      #expect(lines.count == 2 && lines[0].hasPrefix("appdata: error: ") && lines[1].isEmpty, "\(argv): \(result.error.debugDescription)")
      // Control characters from the command line never reach the terminal raw.
      #expect(!result.error.dropLast().contains { $0.asciiValue.map { $0 < 0x20 } ?? false }, "\(argv)")
    }
  }

  @Test func hostilePolicyAndBaselineFilesAreRejectedClearly() throws {
    let tree = try TestTree("fuzz-files")
    try tree.file("Documents/a", size: 1)
    let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
    let cases: [(String, String)] = [
      ("truncated", #"{"maxFileSize": 10, "rul"#),
      ("not-json", "maxFileSize = 10\n"),
      ("deep", deep),
      ("deep-object", String(repeating: #"{"a":"#, count: 10_000) + "1" + String(repeating: "}", count: 10_000)),
      ("binary", String(decoding: [0x00, 0xFF, 0xFE, 0x7B], as: UTF8.self)),
      ("empty", ""),
    ]
    for (name, text) in cases {
      let file = tree.scratch + "/\(name).json"
      try text.write(toFile: file, atomically: true, encoding: .utf8)
      for option in ["--config", "--baseline"] {
        let result = try AppData.run(["audit", "--no-config", option, file, tree.root].filter { !(option == "--config" && $0 == "--no-config") })
        #expect(result.status == 2, "\(name) \(option)")
        #expect(result.error.hasPrefix("appdata: error: \(file): "), "\(name) \(option): \(result.error)")
        #expect(result.error.split(separator: "\n").count == 1, "\(name) \(option)")
      }
    }
    // 100 MB: refused by its size, before it is read.
    let huge = tree.scratch + "/huge.json"
    #expect(FileManager.default.createFile(atPath: huge, contents: nil))
    #expect(truncate(huge, 100 << 20) == 0)
    let config = try AppData.run(["audit", "--config", huge, tree.root])
    #expect(config.error == "appdata: error: \(huge): 104857600 bytes, larger than the 1.0 MiB appdata reads from such a file\n")
    let baseline = try AppData.run(["audit", "--no-config", "--baseline", huge, tree.root])
    #expect(baseline.error == "appdata: error: \(huge): 104857600 bytes, larger than the 64.0 MiB appdata reads from such a file\n")
    let deepResult = try AppData.run(["audit", "--config", tree.scratch + "/deep.json", tree.root])
    #expect(deepResult.error == "appdata: error: \(tree.scratch)/deep.json: not valid JSON: line 1: nested more than 256 levels deep\n")
  }
}
