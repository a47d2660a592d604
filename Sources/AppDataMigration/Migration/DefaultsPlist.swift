import AppDataSystem
import AppDataCore
import Foundation  // PropertyListSerialization reads and writes binary and XML plists on Linux too

/// The app's user-defaults plist and the seed helper's legacy-storage flag
/// (`PSLegacyStoragePathUsed`): migrate only when the flag is true, remove it afterwards.
enum DefaultsPlist {
  /// Whether `key` is true in the plist; false when the plist or the key is absent.
  static func isTrue(_ key: String, at path: [[UInt8]], in container: ContainerAccess) throws(MigrationError) -> Bool {
    guard let (dictionary, _) = try read(path, in: container) else { return false }
    switch dictionary[key] {
    case let value as Bool: return value
    case let value as NSNumber: return value.boolValue
    case let value as String: return ["yes", "true", "1"].contains(value.lowercased())
    default: return false
    }
  }

  /// Removes `key`, rewriting the plist atomically in its original format and mode.
  /// Returns false when there was nothing to remove.
  @discardableResult
  static func removeKey(_ key: String, at path: [[UInt8]], in container: ContainerAccess) throws(MigrationError) -> Bool {
    guard let (dictionary, format) = try read(path, in: container), dictionary[key] != nil else { return false }
    var updated = dictionary
    updated.removeValue(forKey: key)
    let data: Data
    do {
      data = try PropertyListSerialization.data(fromPropertyList: updated, format: format, options: 0)
    } catch {
      throw MigrationError("\(container.display(path)): cannot encode the updated plist: \(error.localizedDescription)")
    }
    do {
      let folder = try container.openFolder(Array(path.dropLast()))
      try folder.closeAfter { () throws(SystemError) in
        let name = path.last!
        let original = try Syscalls.status(of: name, in: folder, displayPath: container.display(path))
        let temporary = Array(".".utf8) + name + Array(".appdata-tmp".utf8)
        try? Syscalls.remove(temporary, in: folder, isDirectory: false, displayPath: "")
        let file = try Syscalls.open(temporary, in: folder, options: .createNewFile, mode: 0o600, displayPath: container.display(path))
        try file.closeAfter { () throws(SystemError) in
          try Syscalls.writeAll(file, Array(data), displayPath: container.display(path))
          try Syscalls.setMode(file, original.permissions, displayPath: container.display(path))
          try Syscalls.sync(file, displayPath: container.display(path))
        }
        try Syscalls.renameReplacing(temporary, in: folder, to: name, in: folder, displayPath: container.display(path))
        try Syscalls.sync(folder, displayPath: container.display(Array(path.dropLast())))
      }
    } catch {
      throw MigrationError("\(container.display(path)): cannot rewrite the plist: \(error.reason)")
    }
    return true
  }

  private static func read(_ path: [[UInt8]], in container: ContainerAccess) throws(MigrationError) -> ([String: Any], PropertyListSerialization.PropertyListFormat)? {
    let bytes: [UInt8]
    do {
      bytes = try container.readFile(path)
    } catch where error.isNotFound {
      return nil
    } catch {
      throw MigrationError("\(container.display(path)): cannot read the defaults plist: \(error.reason)")
    }
    // The bounded reader first: Foundation expands a binary plist's shared references into
    // copies without limit, so it only ever sees a plist that reader has built within its budget.
    let checked: PropertyList
    do {
      checked = try PropertyList.parse(bytes)
    } catch {
      throw MigrationError("\(container.display(path)): not a property list appdata reads: \(error.reason)")
    }
    guard checked.dictionaryValue != nil else {
      throw MigrationError("\(container.display(path)): not a property list holding a dictionary")
    }
    var format = PropertyListSerialization.PropertyListFormat.binary
    guard let object = try? PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: &format),
          let dictionary = object as? [String: Any] else {
      throw MigrationError("\(container.display(path)): not a property list holding a dictionary")
    }
    return (dictionary, format)
  }
}
