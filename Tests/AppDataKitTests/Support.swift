@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
@testable import AppDataKit
import Foundation
import Testing

/// A real folder tree in a temporary directory, with real extended attributes.
final class TestTree {
  let root: String
  /// A folder beside the tree for files that must not be inside it (policy files, reports).
  var scratch: String { root + ".scratch" }

  /// A new tree under `base` (default: the temporary directory).
  init(_ label: String = "tree", base: String? = nil) throws {
    let base = base ?? FileManager.default.temporaryDirectory.path
    root = base + "/appdata-test-\(label)-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: root + ".scratch", withIntermediateDirectories: true)
    chmod(root, 0o755)
  }

  deinit {
    // Folders a test made unreadable must be opened up again before removal.
    // rm handles trees deeper than PATH_MAX, which FileManager does not.
    _ = try? Process.run(URL(fileURLWithPath: "/bin/chmod"), arguments: ["-R", "u+rwx", root]).waitUntilExit()
    _ = try? Process.run(URL(fileURLWithPath: "/bin/rm"), arguments: ["-rf", root, scratch]).waitUntilExit()
  }

  func path(_ relative: String) -> String { relative.isEmpty ? root : root + "/" + relative }

  @discardableResult
  func folder(_ relative: String) throws -> String {
    try FileManager.default.createDirectory(atPath: path(relative), withIntermediateDirectories: true)
    return path(relative)
  }

  /// A file of `size` bytes (a repeating pattern), creating its folders.
  @discardableResult
  func file(_ relative: String, size: Int = 0, contents: [UInt8]? = nil) throws -> String {
    let full = path(relative)
    try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    let bytes = contents ?? (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    guard FileManager.default.createFile(atPath: full, contents: Data(bytes)) else {
      throw TestFailure("cannot create \(full)")
    }
    return full
  }

  /// A sparse file: `size` bytes apparent, (almost) nothing allocated.
  func sparseFile(_ relative: String, size: Int) throws {
    let full = try file(relative)
    guard truncate(full, off_t(size)) == 0 else { throw TestFailure("truncate \(full)") }
  }

  func symlink(_ relative: String, to target: String) throws {
    try FileManager.default.createSymbolicLink(atPath: path(relative), withDestinationPath: target)
  }

  func hardLink(_ relative: String, to existing: String) throws {
    try FileManager.default.createDirectory(atPath: (path(relative) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try FileManager.default.linkItem(atPath: path(existing), toPath: path(relative))
  }

  /// `levels` nested folders named `name` below the existing folder `relative`, with a file
  /// `leaf.bin` holding `contents` at the bottom. Built with mkdirat/openat, because the path is
  /// meant to be longer than PATH_MAX.
  func deepChain(under relative: String, levels: Int, name: String, contents: String) throws {
    var fd = open(path(relative), O_RDONLY | O_DIRECTORY)
    guard fd >= 0 else { throw TestFailure("cannot open \(relative)") }
    for _ in 0..<levels {
      guard mkdirat(fd, name, 0o755) == 0 else { throw TestFailure("mkdirat failed: errno \(errno)") }
      let next = openat(fd, name, O_RDONLY | O_DIRECTORY)
      close(fd)
      fd = next
    }
    let file = openat(fd, "leaf.bin", O_CREAT | O_WRONLY, 0o644)
    _ = write(file, contents, contents.utf8.count)
    close(file)
    close(fd)
  }

  /// Sets an extended attribute by its full name (`user.…` on Linux).
  func setAttribute(_ relative: String, _ name: String, _ value: [UInt8]) throws {
    try ExtendedAttributes.setValue(value, of: name, atPath: path(relative))
  }

  func setModernMarker(_ relative: String) throws {
    try setAttribute(relative, MarkerTable.platformName(of: .modern), Marker.modernValue)
  }

  func setLegacyMarker(_ relative: String, value: UInt8 = 1) throws {
    try setAttribute(relative, MarkerTable.platformName(of: .legacy), [value])
  }
}

struct TestFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// What a run of the built `appdata` binary produced.
struct RunResult {
  let status: Int32
  let output: String
  let error: String

  /// stdout parsed as a JSON object.
  func json() throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any] else {
      throw TestFailure("not a JSON object: \(output.prefix(200))")
    }
    return object
  }
}

/// Runs the built binary the way a user or a CI script does.
enum AppData {
  /// The `appdata` built next to the test bundle (`swift build --build-tests` builds both),
  /// or `APPDATA_BINARY`.
  static let binary: String = {
    if let path = ProcessInfo.processInfo.environment["APPDATA_BINARY"] { return path }
    var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
      let candidate = folder.appendingPathComponent("appdata").path
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
      folder = folder.deletingLastPathComponent()
    }
    let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return packageRoot.appendingPathComponent(".build/debug/appdata").path
  }()

  static let packageRoot: String =
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

  static var isRoot: Bool { getuid() == 0 }

  #if os(Linux)
  static let isLinux = true
  #else
  static let isLinux = false
  #endif

  /// Whether an external program is on PATH. Tests that need one say so with
  /// `.enabled(if: AppData.has("jq"), "...")`: a test without its tool is reported skipped, with
  /// the reason, never passed silently. `make test` installs them all.
  static func has(_ tool: String) -> Bool {
    let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
    return directories.contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
  }

  /// Root, and `setpriv` to drop to another user.
  static var canRunAsAnotherUser: Bool { isRoot && has("setpriv") }

  /// Runs `appdata ARGS`; with `asUser`, through `setpriv` as that unprivileged uid.
  static func run(_ arguments: [String], environment: [String: String] = [:], asUser uid: Int? = nil,
                  in directory: String? = nil, input: String? = nil) throws -> RunResult {
    let process = Process()
    if let uid {
      process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
      process.arguments = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", binary] + arguments
    } else {
      process.executableURL = URL(fileURLWithPath: binary)
      process.arguments = arguments
    }
    var env = ProcessInfo.processInfo.environment
    env["GITHUB_STEP_SUMMARY"] = nil  // CI may set it; tests set it themselves
    for (key, value) in environment { env[key] = value }
    process.environment = env
    // Not the package root: a stray ./appdata.json there must not change what tests see.
    process.currentDirectoryURL = URL(fileURLWithPath: directory ?? NSTemporaryDirectory())
    return try capture(process, input: input)
  }

  /// Runs a shell pipeline (for `| jq`), with `$APPDATA` set to the binary.
  static func shell(_ script: String) throws -> RunResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = ["-o", "pipefail", "-c", script]
    var env = ProcessInfo.processInfo.environment
    env["APPDATA"] = binary
    process.environment = env
    return try capture(process)
  }

  /// Starts `process`, drains stdout and stderr on their own threads (a large output cannot
  /// block it), runs `whileRunning` meanwhile, and waits for it.
  /// `input` is standard input's whole content (else /dev/null).
  private static func capture(_ process: Process, input: String? = nil, standardInput: Pipe? = nil,
                              whileRunning: () throws -> Void = {}) throws -> RunResult {
    // @unchecked Sendable: each box is written by its one reader thread and read only after
    // `done.wait()`, which orders that write before the read.
    final class Box: @unchecked Sendable { var data = Data() }
    let output = Box()
    let error = Box()
    let done = DispatchGroup()
    var readers: [Thread] = []
    for (box, pipe) in [(output, Pipe()), (error, Pipe())] {
      if box === output { process.standardOutput = pipe } else { process.standardError = pipe }
      done.enter()
      readers.append(Thread {
        box.data = pipe.fileHandleForReading.readDataToEndOfFile()
        done.leave()
      })
    }
    let inputPipe = input.map { _ in Pipe() }
    process.standardInput = standardInput ?? inputPipe ?? FileHandle.nullDevice
    try process.run()
    if let inputPipe, let input {
      inputPipe.fileHandleForWriting.write(Data(input.utf8))
      try inputPipe.fileHandleForWriting.close()
    }
    readers.forEach { $0.start() }
    do {
      try whileRunning()
    } catch {
      done.wait()
      process.waitUntilExit()
      throw error
    }
    done.wait()
    process.waitUntilExit()
    return RunResult(
      status: process.terminationStatus,
      output: String(decoding: output.data, as: UTF8.self),
      error: String(decoding: error.data, as: UTF8.self))
  }

  /// Runs appdata with a test pause point (APPDATA_TEST_PAUSE_AT): once it waits there, runs
  /// `change` (a race: the tree changes between planning and acting), then lets it finish.
  static func runPaused(_ arguments: [String], at point: String, environment extra: [String: String] = [:],
                        change: () throws -> Void) throws -> RunResult {
    try runPaused(arguments, at: point, environment: extra, withProcess: { _ in try change() })
  }

  /// `runPaused`, handing `change` the paused process: to signal it by its pid, and wait for
  /// it to end before the pause is released.
  static func runPaused(_ arguments: [String], at point: String, environment extra: [String: String] = [:],
                        ignoringHangUp: Bool = false, standardInput: Pipe? = nil,
                        withProcess change: (Process) throws -> Void) throws -> RunResult {
    let pause = NSTemporaryDirectory() + "appdata-pause-\(UUID().uuidString)"
    // A FIFO the test holds open for reading and writing (so a read waits for data, never sees
    // an end): appdata writes a byte when it reaches the point, and the process's end writes
    // one too, so the wait is on an event, never on a clock.
    guard mkfifo(pause + ".ready", 0o600) == 0 else { throw TestFailure("mkfifo \(pause).ready") }
    let ready = ReadyPipe(descriptor: open(pause + ".ready", O_RDWR | O_CLOEXEC))
    guard ready.descriptor >= 0 else { throw TestFailure("open \(pause).ready") }
    defer {
      ready.close()
      try? FileManager.default.removeItem(atPath: pause)
      try? FileManager.default.removeItem(atPath: pause + ".ready")
    }
    let process = Process()
    if ignoringHangUp {
      // As `nohup` starts it: SIGHUP ignored, which exec keeps (the shell's pid becomes appdata's).
      process.executableURL = URL(fileURLWithPath: "/bin/sh")
      process.arguments = ["-c", "trap '' HUP; exec \"$0\" \"$@\"", AppData.binary] + arguments
    } else {
      process.executableURL = URL(fileURLWithPath: AppData.binary)
      process.arguments = arguments
    }
    var environment = ProcessInfo.processInfo.environment
    environment["APPDATA_TEST_PAUSE_FILE"] = pause
    environment["APPDATA_TEST_PAUSE_AT"] = point
    for (key, value) in extra { environment[key] = value }
    process.environment = environment
    process.currentDirectoryURL = URL(fileURLWithPath: NSTemporaryDirectory())
    process.terminationHandler = { _ in ready.say(0x78) }
    return try capture(process, standardInput: standardInput) {
      var byte: UInt8 = 0
      guard read(ready.descriptor, &byte, 1) == 1, byte == 0x72 else {
        throw TestFailure("appdata ended before it reached the pause point \(point)")
      }
      defer { _ = FileManager.default.createFile(atPath: pause, contents: nil) }
      try change(process)
    }
  }

  /// `appdata audit --format json ARGS PATH`, parsed.
  static func auditJSON(_ path: String, _ arguments: [String] = [], environment: [String: String] = [:]) throws -> [String: Any] {
    let result = try run(["audit", "--format", "json", "--fail-on", "never"] + arguments + [path], environment: environment)
    guard result.status == 0 else { throw TestFailure("audit exited \(result.status): \(result.error)") }
    return try result.json()
  }
}

extension AppData {
  /// A fresh temporary folder filled by `Scripts/SCRIPT` (a fixture generator), which must succeed.
  /// Where the suites' shared fixtures go: one folder per test process, removed when it exits;
  /// a folder whose process is gone (killed, crashed) is removed by the next run.
  static let fixtureRoot: String = {
    let temporary = NSTemporaryDirectory()
    for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? [] where name.hasPrefix("appdata-tests-") {
      guard let pid = Int32(name.dropFirst("appdata-tests-".count)), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
      try? FileManager.default.removeItem(atPath: temporary + name)
    }
    let root = temporary + "appdata-tests-\(getpid())"
    try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "appdata-tests-\(getpid())") }
    return root
  }()

  static func generatedFixtures(_ script: String, label: String) -> String {
    let folder = fixtureRoot + "/\(label)-\(UUID().uuidString)"
    let result = try! shell("python3 '\(packageRoot)/Scripts/\(script)' '\(folder)'")
    precondition(result.status == 0, result.error)
    return folder
  }

  /// Validates a JSON file against Docs/audit.schema.json with Python's jsonschema: "valid", or the error.
  static func validateAgainstAuditSchema(_ file: String) throws -> String {
    let check = try shell("""
      python3 -c 'import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1]))); print("valid")' \
        '\(packageRoot)/Docs/audit.schema.json' '\(file)'
      """)
    return check.status == 0 ? check.output.trimmingCharacters(in: .whitespacesAndNewlines) : check.error
  }
}

/// Reads nested JSON values: `value(json, "summary", "categories", "critical", "files")`.
func value(_ json: Any?, _ keys: String...) -> Any? {
  var current = json
  for key in keys { current = (current as? [String: Any])?[key] }
  return current
}

func integer(_ json: Any?, _ keys: String...) -> Int? {
  var current = json
  for key in keys { current = (current as? [String: Any])?[key] }
  return (current as? NSNumber)?.intValue
}

/// `[files, bytes, allocatedBytes]` of a category in an audit document.
func figures(_ json: [String: Any], _ category: String) -> [Int] {
  ["files", "bytes", "allocatedBytes"].map { integer(json, "summary", "categories", category, $0) ?? -1 }
}

/// Leaves out the messages of the stored-copy findings (`backup-file-*`) of a report of many's
/// containers: they say how and where a copy was checked (an encrypted copy, an archive entry),
/// which differs between reports that must otherwise be equal.
func dropStoredCopyMessages(_ json: inout [String: Any]) {
  guard var containers = json["containers"] as? [[String: Any]] else { return }
  for index in containers.indices {
    containers[index]["findings"] = findings(containers[index]).map { finding in
      var finding = finding
      if (finding["rule"] as? String)?.hasPrefix("backup-file-") == true { finding["message"] = nil }
      return finding
    }
  }
  json["containers"] = containers
}

func findings(_ json: [String: Any], rule: String? = nil) -> [[String: Any]] {
  let all = json["findings"] as? [[String: Any]] ?? []
  return rule.map { id in all.filter { $0["rule"] as? String == id } } ?? all
}

func entries(_ json: [String: Any]) -> [String: [String: Any]] {
  var byPath: [String: [String: Any]] = [:]
  for entry in json["entries"] as? [[String: Any]] ?? [] { byPath[entry["path"] as! String] = entry }
  return byPath
}

/// The library, in-process: for tests that need a report, not the command line. PATH goes
/// through the same resolver and reader as `appdata audit`, and the report is rendered as
/// `appdata audit --format json --no-config` prints it (`LibraryTests` holds the two equal).
enum Library {
  /// The JSON document of an audit of `path`, parsed. `list` is `--list`; `apps` is `--app`.
  static func auditJSON(_ path: String, list: Set<AppDataCore.Category> = [], apps: [String] = [],
                        allDomains: Bool = false, verify: Bool = false,
                        configure: (inout AuditConfiguration.Overrides) -> Void = { _ in }) throws -> [String: Any] {
    let set = try audit(path, list: list, apps: apps, allDomains: allDomains, verify: verify, configure: configure)
    let text = set.jsonDocument().serialized(pretty: true)
    guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
      throw TestFailure("not a JSON object: \(text.prefix(200))")
    }
    return object
  }

  /// The audit of `path` through the library's entry point, as a Swift program would make it.
  static func audit(_ path: String, list: Set<AppDataCore.Category> = [], apps: [String] = [],
                    allDomains: Bool = false, verify: Bool = false,
                    configure: (inout AuditConfiguration.Overrides) -> Void = { _ in }) throws -> AuditSet {
    var configuration = AuditConfiguration()
    configuration.overrides.listedCategories = list
    configuration.apps = apps
    configuration.allDomains = allDomains
    configuration.verify = verify
    configure(&configuration.overrides)
    return try AppDataKit.audit(paths: [path], configuration: configuration)
  }
}

/// The pause FIFO of `runPaused`: the process's end writes to it from another thread, perhaps
/// after the test is done with it, so writing and closing go under one lock.
final class ReadyPipe: @unchecked Sendable {  // @unchecked: `lock` guards `isClosed` and the writes
  let descriptor: Int32
  private let lock = NSLock()
  private var isClosed = false

  init(descriptor: Int32) { self.descriptor = descriptor }

  func say(_ byte: UInt8) {
    lock.lock()
    defer { lock.unlock() }
    guard !isClosed else { return }
    var value = byte
    _ = write(descriptor, &value, 1)
  }

  func close() {
    lock.lock()
    defer { lock.unlock() }
    guard !isClosed else { return }
    isClosed = true
    _ = Glibc.close(descriptor)
  }
}
