@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataKit
import Foundation
import Synchronization
import Testing

/// The in-process audit the figure tests use gives byte for byte what the binary prints, for
/// every kind of input: a folder of containers, an archive, a device backup.
@Suite("library in-process")
struct LibraryTests {
  @Test(.enabled(if: AppData.has("zip") && AppData.has("zstd"), "needs zip and zstd for the fixtures"),
        arguments: ["device", "archive", "backup"])
  func theLibraryGivesTheBinarysJSON(input: String) throws {
    let path: String
    switch input {
    case "device": path = InputTests.device
    case "archive": path = ArchiveTests.fixtures + "/pax-schily.tar"
    default: path = BackupTests.plain
    }
    let binary = try AppData.run(["audit", "--format", "json", "--no-config", "--fail-on", "never", "--list", "all", path])
    #expect(binary.status == 0, "\(binary.error)")
    let set = try Library.audit(path, list: Set(AppDataCore.Category.allCases))
    let inProcess = set.jsonDocument().serialized(pretty: true) + "\n"
    #expect(inProcess == binary.output)
  }

  /// The backups a password closure was asked for.
  final class Asked: Sendable {
    let calls = Mutex<[String]>([])
    var backups: [String] { calls.withLock { $0 } }
  }

  /// A password closure that counts its calls.
  static func counting(_ password: String?, _ asked: Asked) -> PasswordSource {
    { (backup: String) throws(Refusal) -> SecretBuffer in
      asked.calls.withLock { $0.append(backup) }
      guard let password else { throw Refusal(.locked, path: backup, "no password here") }
      // The public initializer from bytes a library caller has (issue 52).
      guard let secret = SecretBuffer(copying: Array(password.utf8)) else { throw Refusal(.unreadable, "cannot map memory") }
      return secret
    }
  }

  /// The password is asked for only when an encrypted backup needs it, once per call, and a
  /// baseline PATH and PATH share it.
  /// Issue 52: the policy file's `android` object reaches a library caller as it reaches the
  /// command (it was read only by AuditCommand): its paths from the policy file's folder, the
  /// command line's Android values over it.
  @Test func thePolicyFilesAndroidObjectIsReadByTheLibrary() throws {
    let tree = try TestTree("library-policy-android")
    try tree.file("config/rules.xml", contents: Array("<full-backup-content><exclude domain=\"file\" path=\"cache.bin\"/></full-backup-content>".utf8))
    try tree.file("config/appdata.json", contents: Array(#"{"android": {"package": "com.example.notes", "targetSdk": 30, "rules": ["rules.xml"]}}"#.utf8))
    var files = AuditConfiguration.NamedFiles()
    files.policyFile = tree.root + "/config/appdata.json"
    var configuration = try AuditConfiguration().loadingFiles(files)
    #expect(configuration.policySource == files.policyFile)
    #expect(configuration.android.package == "com.example.notes")
    #expect(configuration.android.targetSdk == 30)
    #expect(configuration.android.rulesPaths == [tree.root + "/config/rules.xml"])
    files.android.targetSdk = 34
    files.android.package = "com.example.other"
    configuration = try AuditConfiguration().loadingFiles(files)
    #expect(configuration.android.targetSdk == 34 && configuration.android.package == "com.example.other")
  }

  @Test func thePasswordIsAskedForOnlyWhenNeededAndOnce() throws {
    let asked = Asked()
    var configuration = AuditConfiguration()
    _ = try audit(paths: [BackupTests.plain], configuration: configuration, password: Self.counting(nil, asked))
    #expect(asked.backups.isEmpty)
    configuration.baseline = .audit(path: EncryptedBackupTests.encrypted)
    let set = try audit(paths: [EncryptedBackupTests.encrypted], configuration: configuration,
                        password: Self.counting(EncryptedBackupTests.password, asked))
    #expect(asked.backups.count == 1)
    // The same backup as its own baseline: every container with an id is compared with it.
    let compared = set.reports.filter { $0.id != nil }
    #expect(!compared.isEmpty && compared.allSatisfy { $0.comparison != nil })
  }

  /// Failures are causes a caller can switch on, with the paths as given.
  @Test func auditFailuresAreCausesWithTheirPaths() throws {
    var configuration = AuditConfiguration()
    configuration.apps = ["com.example.none"]
    #expect {
      try audit(paths: [BackupTests.plain], configuration: configuration)
    } throws: { error in
      guard case AuditFailure.noMatchingApp(let ids, let source, let candidates, let largest) = error else { return false }
      return ids == ["com.example.none"] && source == BackupTests.plain && candidates.first == "com.example.notes"
        && largest.first?.id == "com.example.my-app" && largest.first?.bytes == 5_000_000_730
    }
    let missing = BackupTests.plain + "/no such\nfolder"
    #expect {
      try audit(paths: [missing], configuration: AuditConfiguration())
    } throws: { error in
      guard case AuditFailure.input(let refusal) = error else { return false }
      return !refusal.message.contains("\n")
    }
    configuration = AuditConfiguration()
    configuration.backup = InputTests.device
    #expect {
      try audit(paths: [BackupTests.plain], configuration: configuration)
    } throws: { error in
      guard case AuditFailure.notABackup(let path) = error else { return false }
      return path == InputTests.device
    }
    // Locked, and the closure's own refusal is passed on.
    let asked = Asked()
    #expect {
      try audit(paths: [EncryptedBackupTests.encrypted], configuration: AuditConfiguration(), password: Self.counting(nil, asked))
    } throws: { error in
      guard case AuditFailure.password(let refusal) = error else { return false }
      return refusal.cause == .locked && refusal.path == EncryptedBackupTests.encrypted
    }
  }

  @Test func extractFailuresAreCausesWithTheirPaths() throws {
    let folder = ExtractTests.scratch("library")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    #expect {
      try extract(backup: InputTests.device, app: "x", output: folder + "/out")
    } throws: { error in
      guard case ExtractFailure.notABackup(let path) = error else { return false }
      return path == InputTests.device
    }
    #expect {
      try extract(backup: ExtractTests.fixtures + "/plain", app: "com.example.none", output: folder + "/out")
    } throws: { error in
      guard case ExtractFailure.refused(let refusal) = error else { return false }
      return refusal.message.contains("com.example.none")
    }
    #expect {
      try extract(backup: ExtractTests.fixtures + "/encrypted", app: ExtractTests.app, output: folder + "/out")
    } throws: { error in
      guard case ExtractFailure.password(let refusal) = error else { return false }
      return refusal.cause == .locked
    }
    #expect(!FileManager.default.fileExists(atPath: folder + "/out"))
  }

  /// A headroom outside what a draft takes is refused, before PATH is read (a negative one made
  /// the limit's conversion trap).
  @Test func aPolicyDraftRefusesAHeadroomOutsideItsRange() throws {
    let tree = try TestTree("draft")
    try tree.file("Documents/a.db", contents: Array(repeating: 1, count: 4096))
    for headroom in [-101, -1, 10_001, Int.max] {
      #expect(throws: Refusal.self) { _ = try PolicyDraft(path: tree.root, headroom: headroom) }
      do { _ = try PolicyDraft(path: tree.root, headroom: headroom) } catch { #expect(error.cause == .tooLarge) }
    }
    let draft = try PolicyDraft(path: tree.root, headroom: 0)
    #expect(draft.maxBackupSize == 4096 && draft.maxFileSize == 4096)
  }
}
