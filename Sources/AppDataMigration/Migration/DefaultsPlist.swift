import AppDataSystem
import AppDataCore

/// The app's user-defaults plist and the seed helper's legacy-storage flag
/// (`PSLegacyStoragePathUsed`): migrate only when the flag is true, remove it afterwards.
enum DefaultsPlist {
  /// Whether `key` is true in the plist: a true boolean, a non-zero number, or the string
  /// "yes", "true" or "1" in any case; false when the plist or the key is absent.
  static func isTrue(_ key: String, at path: [[UInt8]], in container: ContainerAccess) throws(MigrationError) -> Bool {
    guard let bytes = try read(path, in: container) else { return false }
    let plist: PropertyList
    do {
      plist = try PropertyList.parse(bytes)
    } catch {
      throw .defaultsPlistNotAPropertyList(path: container.display(path), reason: error.reason)
    }
    guard let dictionary = plist.dictionaryValue else {
      throw .defaultsPlistNotADictionary(path: container.display(path))
    }
    switch dictionary[key] {
    case .bool(let value)?: return value
    case .integer(let value)?: return value != 0
    case .real(let value)?: return value != 0
    case .string(let value)?: return ["yes", "true", "1"].contains(value.lowercased())
    default: return false
    }
  }

  /// Removes `key`, rewriting the plist atomically in its original format and mode.
  /// Returns false when there was nothing to remove.
  @discardableResult
  static func removeKey(_ key: String, at path: [[UInt8]], in container: ContainerAccess) throws(MigrationError) -> Bool {
    guard let bytes = try read(path, in: container) else { return false }
    // The key's bytes cut out and nothing else touched (PropertyListEdit), in the plist's own
    // format; the result is read back and compared before anything is written.
    let data: [UInt8]
    do {
      guard let edited = try PropertyListEdit.removingTopLevelKey(key, from: bytes) else { return false }
      data = edited
    } catch {
      throw .cannotRemoveDefaultsKey(path: container.display(path), key: key, reason: error.reason)
    }
    do {
      let folder = try container.openFolder(Array(path.dropLast()))
      try folder.closeAfter { () throws(SystemError) in
        let name = path.last!
        let display = container.display(path)
        let original = try Syscalls.status(of: name, in: folder, displayPath: display)
        // The new plist is written into a hidden file of this run's own, `.NAME.appdata-TOKEN.tmp`
        // (an `OwnedArtifact`), renamed over the plist once complete. One a killed run left goes
        // when its owner record proves it; a user's file of a like name is never touched.
        let prefix = OwnedArtifact.hiddenPrefix(of: name)
        OwnedArtifact.sweep(prefix: prefix, suffix: OwnedArtifact.hiddenSuffix, in: folder)
        let hidden = try OwnedArtifact.make(.file, prefix: prefix, suffix: OwnedArtifact.hiddenSuffix, in: folder, mode: 0o600, displayPath: display)
        do throws(SystemError) {
          try Syscalls.writeAll(hidden.descriptor, data, displayPath: display)
          try Syscalls.setMode(hidden.descriptor, original.permissions, displayPath: display)
          try Syscalls.sync(hidden.descriptor, displayPath: display)
          try Syscalls.renameReplacing(hidden.name, in: folder, to: name, in: folder, displayPath: display)
        } catch {
          hidden.discard()
          throw error
        }
        hidden.relinquish()
        try Syscalls.sync(folder, displayPath: container.display(Array(path.dropLast())))
      }
    } catch {
      throw .cannotRewriteDefaultsPlist(path: container.display(path), error)
    }
    return true
  }

  /// The plist's bytes; nil when there is no such file.
  private static func read(_ path: [[UInt8]], in container: ContainerAccess) throws(MigrationError) -> [UInt8]? {
    do {
      return try container.readFile(path)
    } catch Errno.noSuchFileOrDirectory {
      return nil
    } catch {
      throw .cannotReadDefaultsPlist(path: container.display(path), error)
    }
  }
}
