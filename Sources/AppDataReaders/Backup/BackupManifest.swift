import AppDataSystem
import AppDataCore
/// What a device backup folder says about itself before its database is read: the plists
/// (device, iOS version, date, snapshot state, encryption, installed apps), and whether its
/// `Manifest.db` is one appdata can read. Every refusal is one line naming the cause.
package struct BackupManifest: Sendable {
  /// What the report says the backup is.
  package typealias Info = BackupInfo

  /// How the backup is encrypted.
  enum Encryption: Sendable {
    case none
    /// `IsEncrypted`, with a plaintext Manifest.db (iOS 10 to 10.1): only the stored files are
    /// encrypted, so the manifest is read without a password.
    case storedFiles
    /// iOS 10.2 and later: Manifest.db is encrypted with the key ManifestKey wraps.
    case database(BackupKeybag, ManifestKey)

    var isEncrypted: Bool {
      if case .none = self { return false }
      return true
    }
  }

  /// Where Manifest.db is read from.
  package enum Store: Sendable {
    /// The backup folder on disk: Manifest.db is opened read-only and immutable.
    case folder
    /// An archive's entries, read into memory.
    case archive(ArchivedBackup)
  }

  package var info: Info
  /// `Manifest.plist`'s `Applications`: the apps the backup was made with.
  package var applications: [String]
  /// Each application's `CFBundleVersion`, where Manifest.plist gives it (for the
  /// `AppDataInfo.plist` of an extracted package).
  package var applicationVersions: [String: String] = [:]
  /// The database's path (in an archive: `ARCHIVE//FOLDER/Manifest.db`, for messages).
  package var database: String
  var encryption: Encryption
  var store: Store = .folder

  /// Whether reading the manifest needs the backup's password.
  var needsPassword: Bool {
    if case .database = encryption { return true }
    return false
  }

  /// The first 16 bytes of every SQLite 3 database.
  static let sqliteHeader = Array("SQLite format 3\0".utf8)
  static let databaseName = "Manifest.db"
  /// A backup from before iOS 10 has this instead of Manifest.db.
  static let oldDatabaseName = "Manifest.mbdb"
  static let plistNames = ["Manifest.plist", "Info.plist", "Status.plist"]

  /// Whether a folder is a device backup: Manifest.db (or the pre-iOS 10 Manifest.mbdb) beside
  /// one of its plists, or the plists themselves with a `Manifest.plist`.
  static func isBackup(_ folder: some BackupContents) -> Bool {
    let hasPlist = plistNames.contains(where: folder.isFile)
    return hasPlist && (folder.isFile(databaseName) || folder.isFile(oldDatabaseName) || folder.isFile("Manifest.plist"))
  }

  /// Reads and checks the backup at `folder`; throws the refusal (exit 2) when it cannot be audited.
  static func load(_ folder: some BackupContents) throws(Refusal) -> BackupManifest {
    let path = TerminalText.escaped(folder.path)
    // Why a plist that is there could not be read, by name: said when the audit needs it.
    var unreadable: [String: String] = [:]
    let manifest = plist("Manifest.plist", in: folder, unreadable: &unreadable)
    let status = plist("Status.plist", in: folder, unreadable: &unreadable)
    let info = plist("Info.plist", in: folder, unreadable: &unreadable)
    let lockdown = manifest["Lockdown"]?.dictionaryValue ?? [:]

    if !folder.isFile(databaseName) {
      if folder.isFile(oldDatabaseName) {
        throw Refusal(.notAnInput, "\(path): a backup from before iOS 10 (Manifest.mbdb, no Manifest.db); appdata reads backups made by iOS 10 and later")
      }
      throw Refusal(.damaged, "\(path): a device backup without its Manifest.db (the list of what it holds); the backup is incomplete or was copied without it")
    }
    func flag(_ value: PropertyList?) -> Bool? { value?.boolValue }
    let encryptedFlag = flag(manifest["IsEncrypted"]) ?? false
    let databasePath = folder.childPath(databaseName)
    let head = try folder.databaseHead()
    let encryption = try Self.encryption(head: head, manifest: manifest, isEncrypted: encryptedFlag, unreadable: unreadable, folder: folder)

    func text(_ value: PropertyList?) -> String? { value?.stringValue ?? value?.dateText }
    // A date is a plist date, or text that reads as ISO 8601 (`2024-05-01T09:30:00Z`, written
    // back in that form): anything else would sort as text among real dates, so the backup is
    // undated, and its report says why.
    var dateProblems: [String] = []
    func date(_ value: PropertyList?, key: String, in file: String) -> String? {
      guard let value else { return nil }
      if let text = value.dateText { return text }
      if let string = value.stringValue, let seconds = PlistDate.seconds(fromText: Array(string.utf8)),
         let text = PlistDate.text(secondsSince2001: seconds) { return text }
      let shown = value.stringValue.map { "'\(TerminalText.escaped(String($0.prefix(40))))'" } ?? "not a date"
      dateProblems.append("\(file): its \(key) \(value.stringValue == nil ? "is not a date" : shown + " is not a date"); the backup is taken as undated")
      return nil
    }
    let backupDate = date(status["Date"], key: "Date", in: "Status.plist") ?? date(manifest["Date"], key: "Date", in: "Manifest.plist")
      ?? date(info["Last Backup Date"], key: "Last Backup Date", in: "Info.plist")
    let fullBackup = flag(status["IsFullBackup"])
    var loaded = BackupManifest(
      info: Info(
        path: folder.absolutePath,
        deviceName: text(lockdown["DeviceName"]) ?? text(info["Device Name"]),
        productVersion: text(lockdown["ProductVersion"]) ?? text(info["Product Version"]),
        date: backupDate,
        snapshotState: text(status["SnapshotState"]),
        isFullBackup: fullBackup,
        isEncrypted: encryption.isEncrypted),
      applications: (manifest["Applications"]?.dictionaryValue ?? [:]).keys.map(\.string).sorted(),
      database: databasePath,
      encryption: encryption,
      store: folder.store)
    for (id, app) in manifest["Applications"]?.dictionaryValue ?? [:] {
      if let version = app["CFBundleVersion"]?.stringValue { loaded.applicationVersions[id.string] = version }
    }
    loaded.info.deviceIdentifier = text(info["Unique Identifier"]) ?? text(info["Target Identifier"]) ?? text(lockdown["UniqueDeviceID"])
    loaded.info.unreadablePlists = plistNames.compactMap { name in unreadable[name].map { name + ": " + $0 } }
    if backupDate == nil { loaded.info.unreadablePlists += dateProblems }
    return loaded
  }

  /// A dictionary plist of the backup's, or an empty one: missing, or (said in `unreadable`, by
  /// name) unreadable or not a dictionary.
  private static func plist(_ name: String, in folder: some BackupContents, unreadable: inout [String: String]) -> [PlistKey: PropertyList] {
    let bytes: [UInt8]?
    do {
      bytes = try folder.readPlist(name)
    } catch {
      unreadable[name] = error.message
      return [:]
    }
    guard let bytes else { return [:] }
    do {
      guard let members = try PropertyList.parse(bytes).dictionaryValue else {
        unreadable[name] = "not a property list holding a dictionary"
        return [:]
      }
      return members
    } catch {
      unreadable[name] = "not a property list appdata reads: \(error.reason)"
      return [:]
    }
  }

  /// How the backup is encrypted, from Manifest.db's first bytes (`head`) and Manifest.plist
  /// (`manifest`, its `IsEncrypted`: `isEncrypted`); the refusal when Manifest.db is neither
  /// SQLite nor something it holds the key to.
  private static func encryption(head: [UInt8], manifest: [PlistKey: PropertyList], isEncrypted encryptedFlag: Bool,
                                 unreadable: [String: String], folder: some BackupContents) throws(Refusal) -> Encryption {
    let path = TerminalText.escaped(folder.path)
    let databasePath = folder.childPath(databaseName)
    // The database's first bytes decide: SQLite is read as it is (also in an encrypted backup
    // from before iOS 10.2, whose stored files alone are encrypted); anything else is decrypted
    // when Manifest.plist holds the key to it.
    if head == sqliteHeader {
      return encryptedFlag ? .storedFiles : .none
    } else if head.isEmpty {
      throw Refusal(.damaged, path: databasePath, "empty; the backup's list of files is missing, so the backup is incomplete")
    } else if let problem = unreadable["Manifest.plist"] {
      // The plist holding the key (if the database is encrypted) is what is wrong: say that.
      throw Refusal(.damaged, "\(TerminalText.escaped(folder.childPath("Manifest.plist"))): \(problem); Manifest.db is not a plain SQLite database, and the key to it would be there")
    } else if let keyData = manifest["ManifestKey"]?.dataValue {
      guard let key = ManifestKey(keyData) else {
        throw Refusal(.damaged, "\(path): an encrypted backup whose Manifest.plist has a ManifestKey of \(Plural.counted(UInt64(keyData.count), "byte")), too short to hold a key; it is damaged")
      }
      guard let keybagData = manifest["BackupKeyBag"]?.dataValue else {
        throw Refusal(.damaged, "\(path): an encrypted backup whose Manifest.plist has no BackupKeyBag (the keys the password unlocks); it is damaged")
      }
      do throws(BackupKeybag.Malformed) {
        return .database(try BackupKeybag(keybagData), key)
      } catch {
        throw Refusal(.damaged, "\(path): an encrypted backup whose Manifest.plist's BackupKeyBag is damaged: \(error.reason)")
      }
    } else if encryptedFlag {
      throw Refusal(.damaged, path: databasePath, "not a SQLite database, and Manifest.plist has no ManifestKey to decrypt it with; the encrypted backup is damaged")
    } else {
      throw Refusal(.damaged, path: databasePath, "not a SQLite database (it does not start with \"SQLite format 3\"); it is damaged, or not from an iOS backup")
    }
  }
}
