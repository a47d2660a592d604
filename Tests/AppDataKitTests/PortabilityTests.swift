import Foundation
import Testing
@testable import AppDataSystem
@testable import AppDataCore

/// Issue 42: what differs between Linux and Darwin is named in one place, never written as a
/// Linux number (40 is ELOOP on Linux and EMSGSIZE on Darwin; 95 is EOPNOTSUPP and EMULTIHOP).
@Suite("portability")
struct PortabilityTests {
  /// Every Swift file under Sources, with its text.
  static func sources() throws -> [(path: String, text: String)] {
    let root = AppData.packageRoot + "/Sources"
    let files = FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
    return try files.map { ($0, try String(contentsOfFile: root + "/" + $0, encoding: .utf8)) }
  }

  /// An `@inlinable` member of a type another module cannot see at the binary level (`package`
  /// without `@usableFromInline`) compiles, but is never inlined: the compiler drops the body
  /// without a word. The walk's hot path lost 6% of its CPU so when the package conversion
  /// (issue 52) turned its public types `package`. So each type that holds an `@inlinable`
  /// member (in its body or an extension) is `public` or `@usableFromInline`; the compiler then
  /// checks what the bodies use.
  @Test func everyInlinableMembersTypeIsVisibleToInlining() throws {
    let declaration = try NSRegularExpression(pattern: #"^(\s*)(.*)\b(struct|enum|class|extension|protocol|actor)\s+([A-Za-z_][A-Za-z0-9_.]*)"#)
    var visible: [String: Bool] = [:]
    var holders: [(type: String, site: String)] = []
    for (path, text) in try Self.sources() {
      var stack: [(indent: Int, name: String)] = []
      var attributes = ""  // the attribute lines just above (`@usableFromInline` alone on a line)
      for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let line = String(line)
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        defer { attributes = trimmed.hasPrefix("@") ? attributes + line : "" }
        let indent = line.prefix { $0 == " " }.count
        if trimmed.isEmpty || trimmed.hasPrefix("//") { continue }
        stack.removeAll { $0.indent >= indent }
        let range = NSRange(line.startIndex..., in: line)
        if let match = declaration.firstMatch(in: line, range: range), !line.contains("//"),
           let kind = Range(match.range(at: 3), in: line), let name = Range(match.range(at: 4), in: line),
           let prefix = Range(match.range(at: 2), in: line), !line[prefix].contains("\"") {
          let qualified = (stack.last.map { $0.name + "." } ?? "") + line[name]
          if line[kind] != "extension" {
            let declared = attributes + line[prefix]
            visible[qualified] = declared.contains("public") || declared.contains("@usableFromInline") || declared.contains("open")
            stack.append((indent, qualified))
          } else {
            stack.append((indent, String(line[name])))
          }
          continue
        }
        if line.contains("@inlinable"), let holder = stack.last { holders.append((holder.name, "\(path):\(number + 1)")) }
      }
    }
    #expect(holders.count >= 20, "the scan finds the @inlinable members (\(holders.count))")
    let hidden = holders.filter { visible[$0.type] == false }.map { "\($0.site): \($0.type)" }
    #expect(hidden.isEmpty, "@inlinable members of types neither public nor @usableFromInline (never inlined):\n\(hidden.joined(separator: "\n"))")
  }

  @Test func noErrnoIsANumericLiteral() throws {
    // An errno compared, passed or switched on as a number (0, "no error", aside), or a number
    // with an errno's name beside it in a comment.
    let patterns = [
      #"\b(code|errno|errnum)\s*(==|!=|:)\s*[1-9][0-9]*\b"#,
      #"\bcase\s+[1-9][0-9]*\s*(/\*\s*E[A-Z]+)"#,
      #"\b[1-9][0-9]*\s*/\*\s*E[A-Z]{2,}\s*\*/"#,
      #"\bErrno\(rawValue:\s*[1-9][0-9]*\b"#,
    ].map { try! NSRegularExpression(pattern: $0) }
    var found: [String] = []
    for (path, text) in try Self.sources() {
      for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let line = String(line)
        let range = NSRange(line.startIndex..., in: line)
        if patterns.contains(where: { $0.firstMatch(in: line, range: range) != nil }) { found.append("\(path):\(number + 1): \(line)") }
      }
    }
    #expect(found.isEmpty, "errno literals (name them as Errno members, Sources/AppDataSystem/System/SystemError.swift):\n\(found.joined(separator: "\n"))")
  }

  /// Issue 52: one errno design. Only `Errno` (SystemError.swift) names an errno by its C
  /// constant, with the platform's number; everywhere else names its member (`.fileExists`,
  /// `catch Errno.noSuchFileOrDirectory`), and the designs it replaced (the `ErrnoValue`
  /// namespace, `SystemError.code` and its `is*` flags) do not come back.
  @Test func errnoIsNamedOnlyByErrno() throws {
    let definitions = try String(contentsOfFile: AppData.packageRoot + "/Sources/AppDataSystem/System/SystemError.swift", encoding: .utf8)
    let member = try NSRegularExpression(pattern: #"Errno\(rawValue: (E[A-Z]+)\)"#)
    let names = Set(member.matches(in: definitions, range: NSRange(definitions.startIndex..., in: definitions)).compactMap {
      Range($0.range(at: 1), in: definitions).map { String(definitions[$0]) }
    })
    #expect(names.count >= 25 && names.isSuperset(of: ["ENOENT", "EEXIST", "ELOOP", "ENOATTR", "ENODATA", "EFTYPE"]), "\(names.sorted())")
    let forbidden = try NSRegularExpression(pattern: #"\b(ErrnoValue|SystemError\(code:|\.(isNotFound|isExists|isUnsupported|isPermissionDenied|isCrossDevice)\b|"#
      + names.sorted().joined(separator: "|") + #")\b"#)
    var found: [String] = []
    for (path, text) in try Self.sources() where path != "AppDataSystem/System/SystemError.swift" {
      for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let code = String(line.components(separatedBy: "//").first ?? "")
        if forbidden.firstMatch(in: code, range: NSRange(code.startIndex..., in: code)) != nil { found.append("\(path):\(number + 1): \(line)") }
      }
    }
    #expect(found.isEmpty, "errnos named outside Errno (use its members, Sources/AppDataSystem/System/SystemError.swift):\n\(found.joined(separator: "\n"))")
  }

  /// Issue 52: every `Refusal` is built with a specific cause. `Refusal.Cause` has no `.other`
  /// (it was the cause of 70 refusals, bounds among them, built from a bare message), and no
  /// site in Sources builds one from a message alone or passes a message where the cause goes.
  @Test func everyRefusalHasASpecificCause() throws {
    #expect(!Refusal.Cause.allCases.map(\.rawValue).contains("other"))
    let bare = try NSRegularExpression(pattern: #"\bRefusal\(\s*("|String\(|TerminalText\.|[a-z]\w*\.message\s*\)|message\s*\)|\.other\b)"#)
    let other = try NSRegularExpression(pattern: #"(Cause|cause)\s*(=|==|:)\s*\.other\b|case\s+other\b"#)
    var found: [String] = []
    for (path, text) in try Self.sources() {
      for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let code = String(line.components(separatedBy: "//").first ?? "")
        let range = NSRange(code.startIndex..., in: code)
        if bare.firstMatch(in: code, range: range) != nil { found.append("\(path):\(number + 1): a refusal without its cause: \(line)") }
        if path.hasSuffix("Refusal.swift") && other.firstMatch(in: code, range: range) != nil { found.append("\(path):\(number + 1): \(line)") }
      }
    }
    #expect(found.isEmpty, "give each refusal its cause (Sources/AppDataCore/Failures/Refusal.swift, Refusal.Cause):\n\(found.joined(separator: "\n"))")
  }

  /// Issue 52: one thread design (ThreadGroup, Mutex and Atomic) and one signal catcher. No
  /// Dispatch in Sources, and `signal(` called only in SignalCatcher.swift.
  @Test func threadsAndSignalsHaveOneDesign() throws {
    var found: [String] = []
    for (path, text) in try Self.sources() {
      for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        if code.contains("import Dispatch") || code.contains("DispatchQueue") || code.contains("DispatchSource") {
          found.append("\(path):\(number + 1): Dispatch: \(line)")
        }
        if !path.hasSuffix("System/SignalCatcher.swift"), code.range(of: #"\bsignal\("#, options: .regularExpression) != nil
          || code.contains("sigaction(") {
          found.append("\(path):\(number + 1): a signal's action set outside SignalCatcher: \(line)")
        }
      }
    }
    #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
  }

  /// Issue 52, 4: a descriptor a function opens and closes is an `OwnedDescriptor` (closed
  /// once, when its one owner ends; `release()` hands it on), not a `close()` written on each
  /// way out, where a missed path leaks it and a doubled one closes a number another thread may
  /// have been given since. Outside AppDataSystem a `.close()` (or the raw close) is allowed
  /// only in the files below, each with why: a type that owns descriptors for its lifetime and
  /// closes them in its own close path, or a call that closes something else. A new one fails.
  @Test func descriptorsAreClosedByTheirOwners() throws {
    let allowed: [String: (count: Int, why: String)] = [
      "AppDataMigration/Migration/MigrationJournal.swift": (2, "the journal owns its descriptor for appending: its deinit, and finish(), which closes it before the journal is removed"),
      "AppDataReaders/Extract/FolderStack.swift": (3, "the stack of open folders owns the deepest: its deinit, and enter() replacing it; CloseOnce closes the backup folder the writer's threads share, once"),
      "AppDataReaders/Extract/PayloadWriters.swift": (3, "a PayloadJob crosses threads through a WorkQueue (so it is copyable): closeDescriptors() is its one close, on the thread that writes it or cancels it; queue.close() is the WorkQueue's"),
      "AppDataReaders/Extract/ExtractionOutput.swift": (1, "closeParent(): OUT's folder, which the ExtractionOutput owns for the run (not restore's, which the restore owns)"),
      "AppDataReaders/Extract/Restore.swift": (2, "a Built (an array's element, so copyable) holds its place from its build to its exchange: closed after the exchange, or by abandon()"),
      "AppDataReaders/Extract/ExtractionWriter.swift": (3, "the shard folders' table's deinit; writers.close() twice (PayloadWriters, no descriptor)"),
      "AppDataReaders/Backup/BackupReader.swift": (2, "the reader's table of open folders, closed in its deinit"),
      "AppDataReaders/Backup/ManifestRows.swift": (2, "full.close(): a WorkQueue's, no descriptor"),
    ]
    let close = try NSRegularExpression(pattern: #"\.close\(\)|\bGlibc_or_Darwin_close\("#)
    var counts: [String: Int] = [:]
    var sites: [String: [String]] = [:]
    for (path, text) in try Self.sources() where !path.hasPrefix("AppDataSystem/") {
      for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let code = String(line.components(separatedBy: "//").first ?? "")
        let calls = close.numberOfMatches(in: code, range: NSRange(code.startIndex..., in: code))
        guard calls > 0 else { continue }
        counts[path, default: 0] += calls
        sites[path, default: []].append("  \(path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
      }
    }
    var found: [String] = []
    for (path, count) in counts.sorted(by: { $0.key < $1.key }) where count > (allowed[path]?.count ?? 0) {
      let listed = allowed[path].map { "\($0.count) allowed (\($0.why))" } ?? "none allowed"
      found.append("\(path): \(count) close() calls, \(listed):\n" + (sites[path] ?? []).joined(separator: "\n"))
    }
    // A file with fewer than it is allowed: its allowance is lowered with it, so that a close
    // written later in its place does not pass unseen.
    for (path, allowance) in allowed.sorted(by: { $0.key < $1.key }) where (counts[path] ?? 0) < allowance.count {
      found.append("\(path): \(counts[path] ?? 0) close() calls, fewer than the \(allowance.count) allowed: lower its allowance")
    }
    let modules = Dictionary(grouping: counts) { String($0.key.prefix { $0 != "/" }) }.mapValues { $0.reduce(0) { $0 + $1.value } }
    let perModule = modules.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    #expect(found.isEmpty, "descriptors closed by hand (own them: OwnedDescriptor, Sources/AppDataSystem/System/FileDescriptor.swift; close() calls per module: \(perModule)):\n\(found.joined(separator: "\n"))")
    // The scan sees the calls it allows (a pattern that matched nothing would pass anything).
    #expect(!counts.isEmpty, "no close() found at all: the scan is broken")
  }

  /// Issue 48: no path built from text reaches the kernel but through the containment type.
  /// (1) The syscalls that take a path or a name are called only in the AppDataSystem files that
  /// wrap them. (2) Every wrapper there that takes a name and a folder checks the name is one
  /// plain component (`checkName`) before its syscall, so `a/b`, `..` or `.` from a journal, a
  /// manifest or an archive is EINVAL (`ContainmentTests.aNameThatIsAPathIsRefusedByEveryWrapper`
  /// holds them to it at run time). (3) Outside AppDataSystem no name handed to one of them is a
  /// literal holding `/`, or a `RelativePath.join`.
  @Test func noPathIsBuiltOutsideBeneath() throws {
    let wrappers: Set<String> = [
      "AppDataSystem/System/Beneath.swift", "AppDataSystem/System/OwnedArtifact.swift",
      "AppDataSystem/System/Syscalls.swift", "AppDataSystem/System/Syscalls+Files.swift",
      "AppDataSystem/System/Syscalls+Terminal.swift", "AppDataSystem/System/ExtendedAttributes.swift",
      "AppDataSystem/System/TreeRemoval.swift",
    ]
    let raw = try NSRegularExpression(pattern: #"\b(openat2?|mkdirat|unlinkat|renameat2?|renameatx_np|symlinkat|linkat|fstatat|readlinkat|utimensat|fchmodat|faccessat|appdata_openat2_beneath|appdata_link_tmpfile|appdata_open_tmpfile|appdata_rename_[a-z]+|Glibc_or_Darwin_open|lsetxattr|lgetxattr|llistxattr|lremovexattr)\s*\("#)
    let joined = try NSRegularExpression(pattern: #"Syscalls\.(open|status|makeDirectory|remove|renameWithoutReplacing|renameReplacing|exchange|readLink|makeSymbolicLink|setTimes)\((Array\()?("[^"]*/|RelativePath\.join)"#)
    var found: [String] = []
    for (path, text) in try Self.sources() {
      for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let line = String(line)
        if line.trimmingCharacters(in: .whitespaces).hasPrefix("//") { continue }
        let range = NSRange(line.startIndex..., in: line)
        if !wrappers.contains(path) && raw.firstMatch(in: line, range: range) != nil { found.append("\(path):\(number + 1): raw syscall: \(line)") }
        if !path.hasPrefix("AppDataSystem/") && joined.firstMatch(in: line, range: range) != nil { found.append("\(path):\(number + 1): a path as a name: \(line)") }
      }
    }
    // (2): each name-taking wrapper checks its names.
    var nameTaking = 0
    for file in ["AppDataSystem/System/Syscalls+Files.swift", "AppDataSystem/System/ExtendedAttributes.swift"] {
      let text = try String(contentsOfFile: AppData.packageRoot + "/Sources/" + file, encoding: .utf8)
      // The wrappers other modules call: `package` (or, for what the library shows, `public`).
      let functions = text.replacingOccurrences(of: "\n  public static func ", with: "\n  package static func ")
        .components(separatedBy: "\n  package static func ").dropFirst()
      for function in functions {
        let body = function.components(separatedBy: "\n  }\n").first ?? function
        let signature = body.components(separatedBy: "{").first ?? ""
        guard ["_ name: [UInt8]", "of name: [UInt8]", "newName: [UInt8]", "otherName: [UInt8]", "onEntry name: [UInt8]"].contains(where: signature.contains) else { continue }
        nameTaking += 1
        if !body.contains("checkName(") { found.append("\(file): \(signature.prefix(60)): takes a name and does not check it") }
      }
    }
    // The scan finds the wrappers (a declaration spelt another way would make it find none and pass).
    #expect(nameTaking >= 14, "only \(nameTaking) name-taking wrappers found in Syscalls+Files.swift and ExtendedAttributes.swift: the scan no longer sees them")
    #expect(found.isEmpty, "paths built outside Beneath (Sources/AppDataSystem/System/Beneath.swift):\n\(found.joined(separator: "\n"))")
  }

  /// Finder's files at a container's root (a folder opened on a Mac: .DS_Store, .localized,
  /// a custom icon's `Icon\r`) are system data, not `unknown-location` findings.
  @Test func findersDSStoreAtTheRootIsNotAFinding() throws {
    let tree = try TestTree("ds-store")
    try tree.file(".DS_Store", size: 6148)
    try tree.file(".localized", size: 0)
    try tree.file("Icon\r", size: 0)
    try tree.file("Documents/a", size: 10)
    let json = try AppData.auditJSON(tree.root, ["--no-config", "--list", "all"])
    #expect((json["findings"] as? [[String: Any]] ?? []).isEmpty, "\(json["findings"] ?? [])")
    for name in [".DS_Store", ".localized", "Icon\r"] {
      let entry = (json["entries"] as? [[String: Any]] ?? []).first { $0["path"] as? String == name }
      #expect(entry?["category"] as? String == "system", "\(name)")
    }
  }

  /// On macOS the optional libraries are loaded by absolute path (a bare name is searched in
  /// the working folder first); on Linux by soname, which ld.so looks up only in the system's
  /// folders for a binary without RPATH.
  @Test func darwinLoadsItsLibrariesByAbsolutePath() throws {
    for (file, name) in [("AppDataReaders/Archive/LibArchive.swift", "libarchive.2.dylib"), ("AppDataReaders/Backup/SQLite.swift", "libsqlite3.dylib")] {
      let text = try String(contentsOfFile: AppData.packageRoot + "/Sources/" + file, encoding: .utf8)
      #expect(text.contains("[\"/usr/lib/\(name)\"]"), "\(file)")
    }
  }

  /// The Makefile's macOS branch, run on Linux as far as `make -n` goes: with UNAME=Darwin it
  /// asks apt for nothing, builds without --static-swift-stdlib (Linux only), installs under
  /// Homebrew's prefix where Homebrew is (a stand-in `brew` here answers /opt/homebrew), and
  /// installs the tests' tools with Homebrew.
  @Test(.enabled(if: AppData.has("make"), "needs make"))
  func makefileDarwinBranch() throws {
    let tree = try TestTree("fake-brew")
    try tree.file("bin/brew", contents: Array("#!/bin/sh\n[ \"$1\" = --prefix ] && echo /opt/homebrew\nexit 0\n".utf8))
    #expect(chmod(tree.root + "/bin/brew", 0o755) == 0)
    let root = AppData.packageRoot
    let darwin = try AppData.shell("cd '\(root)' && PATH='\(tree.root)/bin':$PATH UNAME=Darwin make -n release install test 2>&1")
    #expect(darwin.status == 0, "\(darwin.output)")
    let mac = darwin.output
    #expect(!mac.contains("apt-get"), "\(mac)")
    #expect(!mac.contains("--static-swift-stdlib"), "\(mac)")
    #expect(mac.contains("install -m 755 .build/release/appdata /opt/homebrew/bin/appdata"), "\(mac)")
    #expect(mac.contains("/opt/homebrew/share/bash-completion/completions/appdata"), "\(mac)")
    #expect(mac.contains("brew install -q jq"), "\(mac)")
    #expect(mac.contains("xcode-select --install"), "\(mac)")
    // The same Makefile on Linux, for contrast: apt and the static runtime, /usr/local.
    let linux = try AppData.shell("cd '\(root)' && PATH='\(tree.root)/bin':$PATH UNAME=Linux make -n release install 2>&1")
    #expect(linux.output.contains("--static-swift-stdlib"), "\(linux.output)")
    #expect(linux.output.contains("apt-get"), "\(linux.output)")
    #expect(linux.output.contains("/usr/local/bin/appdata"), "\(linux.output)")
  }

  /// On a Mac, EPERM under the folders macOS keeps private says where to grant Full Disk
  /// Access; nothing else does, and nothing on Linux (where EPERM there means what it says).
  @Test func fullDiskAccessIsNamedForMacOSPrivateFolders() {
    let backups = "/Users/me/Library/Application Support/MobileSync/Backup"
    let hint = SystemError.privacyHint(errno: .notPermitted, path: backups, onMac: true)
    #expect(hint?.contains("Full Disk Access in System Settings > Privacy & Security > Full Disk Access") == true)
    for path in [backups + "/00008030-001A", "/Users/me/Library/Containers", "/Users/me/Library/Containers/com.example/Data",
                 "/Users/me/Library/Group Containers/group.example"] {
      #expect(SystemError.privacyHint(errno: .notPermitted, path: path, onMac: true) != nil, "\(path)")
    }
    #expect(SystemError.privacyHint(errno: .permissionDenied, path: backups, onMac: true) == nil)
    #expect(SystemError.privacyHint(errno: .notPermitted, path: backups, onMac: false) == nil)
    #expect(SystemError.privacyHint(errno: .notPermitted, path: "/Users/me/Documents", onMac: true) == nil)
    // A relative PATH is resolved against the working folder.
    #expect(SystemError.privacyHint(errno: .notPermitted, path: "Backup", onMac: true) == nil)
    // The message as a user reads it on Linux: strerror's words alone.
    #expect(SystemError(errno: .notPermitted, operation: .readFolder, path: backups).reason == String(cString: strerror(EPERM)))
    #expect(Errno.notPermitted.rawValue == EPERM && Errno.tooManySymbolicLinkLevels.rawValue == ELOOP)
  }
}
