@testable import AppDataSystem
@testable import AppDataCore
import Foundation
import Testing

/// JSONTestSuite's `test_parsing` cases (Tests/JSONTestSuite, MIT, see its README): every `n_`
/// case refused, every `y_` case accepted with the value Python's `json` reads, but the two
/// duplicate-key cases, refused on purpose (a policy file naming a key twice is a mistake).
@Suite("JSON conformance")
struct JSONConformanceTests {
  /// The C1 controls are written escaped, as C0 and DEL are (a terminal acts on U+009B, CSI, as
  /// on ESC; the restore attack round found them raw in --json), and read back as the same string.
  @Test func c1ControlsAreWrittenEscaped() throws {
    let text = "a\u{9B}31mb\u{85}\u{80}\u{9F}\u{A0}é\u{1B}"
    var output: [UInt8] = []
    JSONValue.writeString(text, to: &output)
    #expect(String(decoding: output, as: UTF8.self) == #""a\u009b31mb\u0085\u0080\u009f"# + "\u{A0}é" + #"\u001b""#)
    #expect(try JSONParser.parse(output) == .string(text))
  }

  static let folder = AppData.packageRoot + "/Tests/JSONTestSuite/test_parsing"
  static let refusedOnPurpose: Set<String> = ["y_object_duplicated_key.json", "y_object_duplicated_key_and_value.json"]

  /// The canonical form `python3` prints below: numbers as the bits of a double, strings and
  /// keys as UTF-8 in hex, keys sorted by their bytes.
  static func canonical(_ value: JSONValue) -> String {
    func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }
    func number(_ double: Double) -> String {
      let bits = String(double.bitPattern, radix: 16)
      return "n:" + String(repeating: "0", count: 16 - bits.count) + bits
    }
    switch value {
    case .null: return "null"
    case .bool(let flag): return flag ? "true" : "false"
    case .integer(let integer): return number(Double(integer))
    case .unsigned(let integer): return number(Double(integer))
    case .double(let double): return number(double)
    case .string(let text): return "s:" + hex(text.utf8)
    case .array(let items): return "[" + items.map(canonical).joined(separator: ",") + "]"
    case .object(let members):
      return "{" + members.keys.sorted().map { hex($0.string.utf8) + "=" + canonical(members[$0]!) }.joined(separator: ",") + "}"
    case .written: return "written"
    }
  }

  static let python = #"""
    import json, os, struct, sys
    def c(v):
        if v is None: return "null"
        if v is True: return "true"
        if v is False: return "false"
        if isinstance(v, (int, float)): return "n:" + struct.pack(">d", float(v)).hex()
        if isinstance(v, str): return "s:" + v.encode("utf-8", "surrogatepass").hex()
        if isinstance(v, list): return "[" + ",".join(c(i) for i in v) + "]"
        keys = sorted(v, key=lambda k: k.encode("utf-8", "surrogatepass"))
        return "{" + ",".join(k.encode("utf-8", "surrogatepass").hex() + "=" + c(v[k]) for k in keys) + "}"
    folder = sys.argv[1]
    for name in sorted(os.listdir(folder)):
        if name.startswith("y_"):
            print(name + "\t" + c(json.loads(open(os.path.join(folder, name), "rb").read())))
    """#

  @Test func everyMustRejectCaseIsRefused() throws {
    let names = try FileManager.default.contentsOfDirectory(atPath: Self.folder).filter { $0.hasPrefix("n_") }
    #expect(names.count == 188)
    var accepted: [String] = []
    for name in names.sorted() {
      let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: Self.folder + "/" + name)))
      if (try? JSONParser.parse(bytes)) != nil { accepted.append(name) }
    }
    #expect(accepted.isEmpty, "accepted: \(accepted)")
  }

  @Test func everyMustAcceptCaseReadsAsPythonReadsIt() throws {
    let result = try AppData.shell("python3 - '\(Self.folder)' <<'EOF'\n\(Self.python)\nEOF")
    #expect(result.status == 0, "\(result.error)")
    let lines = result.output.split(separator: "\n")
    #expect(lines.count == 95)
    var differing: [String] = []
    for line in lines {
      let parts = line.split(separator: "\t", maxSplits: 1).map(String.init)
      let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: Self.folder + "/" + parts[0])))
      let read: String
      do { read = Self.canonical(try JSONParser.parse(bytes)) } catch { read = "refused: \(error.description)" }
      if Self.refusedOnPurpose.contains(parts[0]) {
        #expect(read.hasPrefix("refused: line 1: duplicate key"), "\(parts[0]): \(read)")
      } else if read != parts[1] {
        differing.append("\(parts[0]): \(read) != \(parts[1])")
      }
    }
    #expect(differing.isEmpty, "\(differing)")
  }

  /// The implementation-defined cases appdata accepts, as Docs/SECURITY.md lists them.
  @Test func theImplementationDefinedCasesAcceptedAreTheDocumentedOnes() throws {
    let names = try FileManager.default.contentsOfDirectory(atPath: Self.folder).filter { $0.hasPrefix("i_") }.sorted()
    var accepted: [String] = []
    for name in names {
      let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: Self.folder + "/" + name)))
      if (try? JSONParser.parse(bytes)) != nil { accepted.append(name) }
    }
    let documented = try String(contentsOfFile: AppData.packageRoot + "/Docs/SECURITY.md", encoding: .utf8)
    for name in names {
      #expect(documented.contains("`\(name)`"), "Docs/SECURITY.md does not list \(name)")
    }
    let line = documented.split(separator: "\n").first { $0.contains("JSONTestSuite `i_` cases accepted:") }.map(String.init) ?? ""
    #expect(accepted.allSatisfy { line.contains("`\($0)`") }, "accepted: \(accepted)")
  }
}
