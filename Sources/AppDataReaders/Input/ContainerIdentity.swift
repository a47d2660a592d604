import AppDataSystem
import AppDataCore
/// Which app a container belongs to, from the plists iOS, macOS and Xcode leave around it:
/// the container metadata plist (`MCMMetadataIdentifier`, `MCMMetadataContentClass`) and an
/// `.xcappdata` package's `AppDataInfo.plist` (`CFBundleIdentifier`).
package struct ContainerIdentity: Sendable {
  /// The bundle id or app group id; nil when no plist names one.
  package var id: String?
  /// The kind the metadata's content class names, if it names one appdata knows.
  package var kind: ContainerKind?
  /// The content class says this is an `.app` bundle's container: never app data.
  package var isBundle = false
  /// The identity plists that are there but cannot be read: each as a path relative to the
  /// root (`../AppDataInfo.plist` for a package's), and why. A `metadata-unreadable` finding
  /// each, never a silent `id: null`.
  package var unreadable: [(path: [UInt8], reason: String)] = []

  /// Looks around a container root (path components, in a folder or an archive) with `read`,
  /// which returns a small file's bytes or nil: the root's metadata plist, then, for a
  /// package's `AppData`, the package's info plist, then, for a Mac app's `Data`, the metadata
  /// beside it.
  static func find(root: [[UInt8]], read: ([[UInt8]]) -> [UInt8]?) -> ContainerIdentity {
    var identity = ContainerIdentity()
    var places: [[[UInt8]]] = ContainerPlaces.metadataFileNames.map { root + [Array($0.utf8)] }
    if let last = root.last, root.count >= 1 {
      let parent = Array(root.dropLast())
      if last == Array(ContainerPlaces.packageContainerName.utf8) {
        places.append(parent + [Array(ContainerPlaces.packageInfoFileName.utf8)])
      }
      if last == Array("Data".utf8) {
        places += ContainerPlaces.metadataFileNames.map { parent + [Array($0.utf8)] }
      }
    }
    for path in places {
      guard let bytes = read(path), !bytes.isEmpty else { continue }
      let dictionary: [PlistKey: PropertyList]
      let relative = path.starts(with: root) ? RelativePath.join(Array(path.dropFirst(root.count)))
        : Array("../".utf8) + (path.last ?? [])
      do {
        guard let members = try PropertyList.parse(bytes).dictionaryValue else {
          identity.unreadable.append((relative, "not a property list holding a dictionary"))
          continue
        }
        dictionary = members
      } catch {
        identity.unreadable.append((relative, "not a property list appdata reads: \(error.reason)"))
        continue
      }
      if identity.id == nil {
        let key = path.last == Array(ContainerPlaces.packageInfoFileName.utf8)
          ? ContainerPlaces.packageIdentifierKey : ContainerPlaces.identifierKey
        if let id = dictionary[key]?.stringValue, !id.isEmpty { identity.id = id }
      }
      if identity.kind == nil && !identity.isBundle, let value = dictionary[ContainerPlaces.contentClassKey]?.integerValue,
         let number = Int(exactly: value),
         let known = ContainerPlaces.contentClasses[number] {
        if let kind = known { identity.kind = kind } else { identity.isBundle = true }
      }
    }
    return identity
  }
}


extension ContainerIdentity {
  /// The findings for the identity plists that cannot be read.
  var findings: [Finding] {
    unreadable.map { item in
      Finding(rule: .metadataUnreadable, path: item.path, message: "\(item.reason); the container's id is unknown", bytes: nil)
    }
  }
}
