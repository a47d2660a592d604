import Foundation
import Testing

/// The GitHub actions appdata's CI and its documents use run on a runtime GitHub still has
/// (issue 51: `actions/checkout@v4` runs on node20, which GitHub removed from its runners on
/// 2026-09-23, and the workflow stopped running).
@Suite("workflows")
struct WorkflowTests {
  /// Each action (and major) used, with the `runs.using` its action.yml declares at that tag
  /// (read from each repository's tag, 2026-11-26). An action used that is not here fails the
  /// test until its runtime is added.
  static let runtimes: [String: String] = [
    "actions/checkout@v7": "node24",
    "actions/upload-artifact@v7": "node24",
    "actions/download-artifact@v8": "node24",
    "github/codeql-action/upload-sarif@v4": "node24",
    // The runtimes of the majors before them, so the test below proves it rejects them.
    "actions/checkout@v4": "node20",
    "actions/checkout@v3": "node16",
    "actions/checkout@v2": "node12",
    "actions/upload-artifact@v4": "node20",
    "actions/upload-artifact@v5": "node20",
    "actions/download-artifact@v4": "node20",
    "actions/download-artifact@v6": "node20",
    "github/codeql-action/upload-sarif@v3": "node20",
  ]

  /// The runtimes GitHub has removed from its hosted runners (node12 in 2023, node16 in 2024,
  /// node20 on 2026-09-23).
  static let removed: Set<String> = ["node12", "node16", "node20"]

  /// Every `uses:` value in `text` (a workflow, action.yml, or a document's YAML examples).
  static func uses(in text: String) -> [String] {
    text.split(separator: "\n").compactMap { line -> String? in
      guard let range = line.range(of: "uses:") else { return nil }
      let before = line[..<range.lowerBound].trimmingCharacters(in: .whitespaces)
      guard before.isEmpty || before == "-" else { return nil }
      let rest = line[range.upperBound...].trimmingCharacters(in: .whitespaces)
      return rest.split(separator: " ").first.map(String.init)
    }
  }

  /// Why `action` cannot run on GitHub's runners today, or nil. `./` and this repository at a
  /// tag (`OWNER/appdata@…`) are action.yml, whose own runtime is checked.
  static func problem(_ action: String, localRuntime: String) -> String? {
    if action == "./" || action.hasPrefix("OWNER/appdata@") {
      return removed.contains(localRuntime) || localRuntime.hasPrefix("node1") ? "action.yml runs on \(localRuntime)" : nil
    }
    guard let runtime = runtimes[action] else {
      return "\(action): runtime unknown; add it to WorkflowTests.runtimes from its action.yml at that tag"
    }
    return removed.contains(runtime) ? "\(action) runs on \(runtime), which GitHub removed" : nil
  }

  @Test func noActionUsedRunsOnARemovedRuntime() throws {
    let root = AppData.packageRoot
    let fileManager = FileManager.default
    var files = [".github/workflows/" , "Docs/"].flatMap { folder in
      ((try? fileManager.contentsOfDirectory(atPath: root + "/" + folder)) ?? [])
        .filter { $0.hasSuffix(".yml") || $0.hasSuffix(".yaml") || $0.hasSuffix(".md") }.map { folder + $0 }
    }
    files += ["action.yml", "README.md"]
    let action = try String(contentsOfFile: root + "/action.yml", encoding: .utf8)
    let using = action.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("using:") }
    let localRuntime = using.map { $0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces) } ?? "?"
    #expect(localRuntime == "composite")
    var used: [String: [String]] = [:]
    for file in files.sorted() {
      for action in Self.uses(in: try String(contentsOfFile: root + "/" + file, encoding: .utf8)) {
        used[action, default: []].append(file)
      }
    }
    // The workflow's checkout and the documents' examples are all found.
    #expect(used["actions/checkout@v7"]?.contains(".github/workflows/ci.yml") == true)
    #expect(used["./"] == [".github/workflows/ci.yml"])
    #expect(Set(used.keys).isSuperset(of: ["actions/upload-artifact@v7", "actions/download-artifact@v8", "github/codeql-action/upload-sarif@v4"]))
    for (action, places) in used.sorted(by: { $0.key < $1.key }) {
      let problem = Self.problem(action, localRuntime: localRuntime)
      #expect(problem == nil, "\(problem ?? "") (in \(places.joined(separator: ", ")))")
    }
  }

  /// The check itself refuses what broke the workflow, and an action it does not know.
  @Test func theCheckRefusesRemovedRuntimesAndUnknownActions() {
    #expect(Self.uses(in: "    steps:\n      - uses: actions/checkout@v4   # old\n        uses: ./\n") == ["actions/checkout@v4", "./"])
    #expect(Self.problem("actions/checkout@v4", localRuntime: "composite") == "actions/checkout@v4 runs on node20, which GitHub removed")
    #expect(Self.problem("actions/checkout@v2", localRuntime: "composite") != nil)
    #expect(Self.problem("actions/upload-artifact@v5", localRuntime: "composite") != nil)
    #expect(Self.problem("actions/download-artifact@v6", localRuntime: "composite") != nil)
    #expect(Self.problem("github/codeql-action/upload-sarif@v3", localRuntime: "composite") != nil)
    #expect(Self.problem("actions/setup-node@v4", localRuntime: "composite")?.contains("runtime unknown") == true)
    #expect(Self.problem("./", localRuntime: "node20") != nil)
    #expect(Self.problem("./", localRuntime: "composite") == nil)
  }
}
