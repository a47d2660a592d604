import AppDataSystem
import AppDataCore
/// Where a device backup's files are read from: its folder on disk (`ProbedFolder`), or an
/// archive's entries held in memory (`ArchivedBackup`). `BackupManifest.load` reads either.
protocol BackupContents {
  /// The backup as reports name it: the folder's path, or `ARCHIVE//FOLDER`.
  var path: String { get }
  /// The path reports give it (absolute).
  var absolutePath: String { get }
  func isFile(_ name: String) -> Bool
  /// A plist's bytes: nil when there is none, the reason when it cannot be read.
  func readPlist(_ name: String) throws(FileReading.Failure) -> [UInt8]?
  func childPath(_ name: String) -> String
  /// Where Manifest.db is read from.
  var store: BackupManifest.Store { get }
  /// Manifest.db's first 16 bytes (fewer when it is shorter).
  func databaseHead() throws(Refusal) -> [UInt8]
}

extension ProbedFolder: BackupContents {
  var absolutePath: String { Syscalls.absolutePath(path) }
  var store: BackupManifest.Store { .folder }

  func databaseHead() throws(Refusal) -> [UInt8] {
    let databasePath = childPath(BackupManifest.databaseName)
    do {
      let file = OwnedDescriptor(owning: try Syscalls.openFile(atPath: databasePath))
      return try Syscalls.readUpTo(file.descriptor, 16, displayPath: databasePath)
    } catch {
      throw Refusal(.unreadable, path: databasePath, "cannot read: \(error.reason)")
    }
  }
}

/// A device backup found in an archive (a zipped or tarred backup folder, or folder of backups):
/// its plists and Manifest.db read into memory while the archive is read once (never extracted
/// to disk; the archive's size limit bounds them), and, for `--verify`, the length of each
/// stored file (`xx/<fileID>`).
// Unchecked Sendable: its vars are filled by the one thread that reads the archive, and only
// read once that read is over, by the threads the audit then starts (which the thread start
// orders after every write).
package final class ArchivedBackup: BackupContents, @unchecked Sendable {
  /// `ARCHIVE//FOLDER`, with the archive's absolute path.
  package let path: String
  /// The backup folder inside the archive.
  package let components: [[UInt8]]
  /// The plists and the pre-iOS 10 Manifest.mbdb marker, by name.
  package var plists: [String: [UInt8]] = [:]
  /// The plists there that were not read into memory, by name: why (too large).
  package var unreadPlists: [String: String] = [:]
  package var hasOldDatabase = false
  /// Manifest.db's bytes, as stored (encrypted or not).
  package var database: SecretBuffer?
  /// `xx/<fileID>` to the stored file's length; filled only when stored files are checked.
  package var storedSizes: [[UInt8]: UInt64] = [:]

  /// The archive's path, as given (`appdata extract` reads it again for the payloads).
  package let archivePath: String?

  package init(archive: String, components: [[UInt8]], archivePath: String? = nil) {
    self.components = components
    self.archivePath = archivePath
    path = components.isEmpty ? archive : archive + "//" + RelativePath.display(RelativePath.join(components))
  }

  var absolutePath: String { path }
  var store: BackupManifest.Store { .archive(self) }
  /// The folder's last name (the device's UDID in a Finder backup folder), or the archive's.
  package var name: String {
    components.last.map { String(decoding: $0, as: UTF8.self) } ?? String(path.split(separator: "/").last ?? "")
  }

  func isFile(_ name: String) -> Bool {
    if name == BackupManifest.databaseName { return database != nil }
    if name == BackupManifest.oldDatabaseName { return hasOldDatabase }
    return plists[name] != nil || unreadPlists[name] != nil
  }

  func readPlist(_ name: String) throws(FileReading.Failure) -> [UInt8]? {
    if let why = unreadPlists[name] { throw FileReading.Failure(message: why) }
    return plists[name]
  }

  func childPath(_ name: String) -> String { path + "/" + name }

  func databaseHead() throws(Refusal) -> [UInt8] {
    guard let database else { return [] }
    return Array(database.bytes.prefix(16))
  }

  /// The names of the files a backup folder holds at its top that the reader needs in memory.
  static let capturedNames: Set<[UInt8]> = Set((BackupManifest.plistNames + [BackupManifest.databaseName, BackupManifest.oldDatabaseName]).map { Array($0.utf8) })

  /// A cheap first test for `capturedNames` (10 to 14 bytes, starting with M, I or S), so that
  /// most entries are never hashed.
  @inline(__always)
  static func mayBeCaptured(_ name: [UInt8]) -> Bool {
    (10...14).contains(name.count) && (name[0] == 0x4D || name[0] == 0x49 || name[0] == 0x53)
  }

  /// Whether `components` ends in `xx/<40 hex digits>` starting with `xx`: a backup's stored file.
  static func isStoredFile(_ components: [[UInt8]]) -> Bool {
    guard components.count >= 2 else { return false }
    let name = components[components.count - 1]
    let folder = components[components.count - 2]
    let isHex = { (byte: UInt8) in (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) }
    return name.count == 40 && folder.count == 2 && name.starts(with: folder) && name.allSatisfy(isHex)
  }
}
