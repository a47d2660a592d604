@testable import AppDataSystem
@testable import AppDataCore
import Foundation
import Testing

/// Issue 39's write-path matrix: each command that writes, against each way a write fails.
/// Every cell asserts the exit status, that nothing outside the named output changed, and that
/// no partial output is left where a user would take it for a result.
@Suite("write paths")
struct WritePathTests {
  /// A container with enough files that a JSON listing passes any pipe's buffer (64 KiB).
  static let container: String = {
    let folder = AppData.fixtureRoot + "/writepaths-\(UUID().uuidString)"
    let result = try! AppData.shell("""
      mkdir -p '\(folder)/Documents' '\(folder)/Library/Caches' '\(folder)/tmp' && cd '\(folder)/Documents' && \
      for i in $(seq 1 1500); do printf x > "file-$i.txt"; done
      """)
    precondition(result.status == 0, result.error)
    return folder
  }()

  /// The commands that write to standard output, each with what it needs.
  static func stdoutCommands(_ scratch: String) -> [(name: String, arguments: [String])] {
    [
      ("audit json", ["audit", "--json", "--list", "all", container]),
      ("audit ndjson streamed", ["audit", "--format", "ndjson", "--list", "all", container]),
      ("audit table", ["audit", "--list", "all", container]),
      ("extract json", ["extract", "--json", "--app", ExtractTests.app, "-o", scratch + "/out", "\(ExtractTests.fixtures)/plain"]),
      ("status", ["status", container + "/Documents"]),
      ("help", ["audit", "--help"]),
      ("migrate", ["migrate", scratch + "/migrated"]),
      ("init-config", ["init-config", "--output", scratch + "/appdata.json", container]),
    ]
  }

  /// Runs the binary with standard output `how`: `full` (/dev/full), `closed` (no descriptor 1),
  /// `epipe` (a pipe whose reader is gone before the run starts, SIGPIPE ignored), `sigpipe`
  /// (the same with SIGPIPE as it comes): the exit status (or 128 + the signal) and stderr.
  static func runWithStdout(_ how: String, _ arguments: [String]) throws -> (status: Int32, error: String) {
    let script = """
      import os, signal, subprocess, sys, json
      how, args = sys.argv[1], json.loads(sys.argv[2])
      if how == "full":
          out = open("/dev/full", "wb")
      elif how == "closed":
          out = None
      else:
          r, w = os.pipe()
          os.close(r)
          out = os.fdopen(w, "wb")
      def child():
          if how == "closed":
              os.close(1)
          if how == "epipe":
              signal.signal(signal.SIGPIPE, signal.SIG_IGN)
      p = subprocess.run(args, stdout=out if out else subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=child, restore_signals=True)
      code = p.returncode if p.returncode >= 0 else 128 - p.returncode
      sys.stdout.write(json.dumps([code, p.stderr.decode("utf-8", "replace")]))
      """
    let encoded = String(decoding: try JSONSerialization.data(withJSONObject: [AppData.binary] + arguments), as: UTF8.self)
    let result = try AppData.shell("python3 -c '\(script.replacingOccurrences(of: "'", with: "'\\''"))' \(how) '\(encoded.replacingOccurrences(of: "'", with: "'\\''"))'")
    let parsed = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as! [Any]
    return (Int32(parsed[0] as! Int), parsed[1] as! String)
  }

  /// Standard output that cannot be written: /dev/full and a closed stdout exit 2 with one line;
  /// a reader gone exits 141 quietly, with SIGPIPE ignored (EPIPE) or not (the signal).
  @Test(arguments: ["full", "closed", "epipe", "sigpipe"])
  func standardOutputThatCannotBeWrittenFailsTheRun(how: String) throws {
    let scratch = ExtractTests.scratch("stdout-\(how)")
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    for (name, arguments) in Self.stdoutCommands(scratch) {
      try? FileManager.default.removeItem(atPath: scratch + "/out")
      try? FileManager.default.removeItem(atPath: scratch + "/appdata.json")
      // migrate: a container of its own each time, with a cache to move.
      #expect(try AppData.shell("rm -rf '\(scratch)/migrated' && mkdir -p '\(scratch)/migrated/Documents' '\(scratch)/migrated/Library/Caches/x' "
                                + "'\(scratch)/migrated/tmp' && printf x > '\(scratch)/migrated/Library/Caches/x/a'").status == 0)
      let (status, error) = try Self.runWithStdout(how, arguments)
      switch how {
      case "full", "closed":
        #expect(status == 2, "\(name): \(status) \(error)")
        let reason = how == "full" ? "No space left on device" : "Bad file descriptor"
        #expect(error.hasSuffix("appdata: error: standard output: cannot write: \(reason); the output is incomplete\n"), "\(name): \(error)")
        #expect(error.split(separator: "\n").count == 1, "\(name): \(error)")
      default:
        #expect(status == 141, "\(name): \(status) \(error)")
        #expect(error.isEmpty, "\(name): \(error)")
      }
    }
  }

  /// A report file on a full filesystem (a small tmpfs, as root): exit 2 with one line, the
  /// report that was there before is left as it was, and nothing else is left beside it; the
  /// same where there was none (nothing is left). audit -o (JSON, and NDJSON streamed as the walk
  /// goes) and init-config --output.
  @Test(.enabled(if: AppData.isRoot, "mounting a tmpfs needs root"))
  func aReportFileOnAFullDiskIsLeftAsItWas() throws {
    let folder = ExtractTests.scratch("full-report")
    defer {
      _ = try? AppData.shell("umount '\(folder)'")
      try? FileManager.default.removeItem(atPath: folder)
    }
    #expect(try AppData.shell("mount -t tmpfs -o size=24k tmpfs '\(folder)'").status == 0)
    let cases: [(name: String, file: String, arguments: [String])] = [
      ("json", "r.json", ["audit", "--json", "--list", "all", "-o", folder + "/r.json", Self.container]),
      ("ndjson", "r.ndjson", ["audit", "--format", "ndjson", "--list", "all", "-o", folder + "/r.ndjson", Self.container]),
      ("init-config", "appdata.json", ["init-config", "--force", "--output", folder + "/appdata.json", Self.container]),
    ]
    for (name, file, arguments) in cases {
      for before in ["old report\n", nil] {
        if let before { try before.write(toFile: folder + "/" + file, atomically: false, encoding: .utf8) }
        // The rest of the tmpfs filled, so the report cannot fit.
        _ = try AppData.shell("cat /dev/zero > '\(folder)/filler' 2>/dev/null")
        let result = try AppData.run(arguments)
        #expect(result.status == 2, "\(name): \(result.status) \(result.error)")
        #expect(result.error.split(separator: "\n").count == 1 && result.error.contains("No space left on device"), "\(name): \(result.error)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(names == (before == nil ? ["filler"] : [file, "filler"].sorted()), "\(name): \(names)")
        if let before { #expect(try String(contentsOfFile: folder + "/" + file, encoding: .utf8) == before, "\(name)") }
        try FileManager.default.removeItem(atPath: folder + "/filler")
        try? FileManager.default.removeItem(atPath: folder + "/" + file)
      }
    }
    // With room, the report replaces the old one whole.
    try "old report\n".write(toFile: folder + "/r.json", atomically: false, encoding: .utf8)
    let fits = try AppData.run(["audit", "--json", "-o", folder + "/r.json", Self.container])
    #expect(fits.status == 0, "\(fits.error)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["r.json"])
    #expect(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/r.json"))) is [String: Any])
  }

  /// audit -o killed (SIGKILL) or interrupted (SIGINT, SIGTERM) during its walk: the old report
  /// is left as it was and nothing is beside it; the next run replaces the report whole, and
  /// removes the hidden file a run killed while writing it left (one is planted, named with the
  /// pid of a process that has ended).
  @Test(arguments: ["SIGKILL", "SIGINT", "SIGTERM"])
  func aReportFileInterruptedIsLeftAsItWasAndTheNextRunFinishes(signal: String) throws {
    let folder = ExtractTests.scratch("killed-report")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let report = folder + "/r.ndjson"
    try "old report\n".write(toFile: report, atomically: false, encoding: .utf8)
    let arguments = ["audit", "--format", "ndjson", "--list", "critical", "-o", report, Self.container]
    let killed = try AppData.runPaused(arguments, at: "walk", withProcess: { process in
      kill(process.processIdentifier, signal == "SIGKILL" ? SIGKILL : signal == "SIGINT" ? SIGINT : SIGTERM)
      process.waitUntilExit()
    })
    #expect(killed.status == (signal == "SIGKILL" ? 9 : signal == "SIGINT" ? 130 : 143), "\(killed.status)")
    #expect(try String(contentsOfFile: report, encoding: .utf8) == "old report\n")
    let left = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0 != "r.ndjson" }
    #expect(left.isEmpty, "\(left)")
    // A file named as a dead run's hidden report, without the owner record that would prove it
    // one (issue 48): a name proves nothing, so the next run leaves it.
    let ended = try AppData.shell("sh -c 'echo $$'").output.trimmingCharacters(in: .whitespacesAndNewlines)
    try "half a report".write(toFile: folder + "/.r.ndjson.appdata-\(ended)-1a2b3c.tmp", atomically: false, encoding: .utf8)
    let rerun = try AppData.run(arguments)
    #expect(rerun.status == 0, "\(rerun.error)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == [".r.ndjson.appdata-\(ended)-1a2b3c.tmp", "r.ndjson"])
    #expect(try String(contentsOfFile: report, encoding: .utf8).split(separator: "\n").count > 1500)
  }

  /// A warning that cannot be written to standard error (/dev/full, or a closed stderr) fails a
  /// run that would have passed: exit 2, not 0 with the warning lost. The warning here: a job
  /// summary that cannot be appended.
  @Test func aWarningThatCannotBeWrittenFailsARunThatWouldPass() throws {
    let folder = ExtractTests.scratch("stderr")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try NamedInputTests.container(folder + "/C")
    let command = "GITHUB_STEP_SUMMARY='\(folder)/missing/summary.md' '\(AppData.binary)' audit --format github '\(folder)/C' > /dev/null"
    let shown = try AppData.shell(command)
    #expect(shown.status == 0 && shown.error.contains("cannot append the job summary"), "\(shown.status) \(shown.error)")
    #expect(try AppData.shell(command + " 2> /dev/full").status == 2)
    #expect(try AppData.shell(command + " 2>&-").status == 2)
  }
}
