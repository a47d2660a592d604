import AppDataSystem
import AppDataCore
/// A device's containers: a Simulator device (`Devices/<UDID>`, its `data`, `data/Containers`),
/// the same shape on a device's own file system (`/private/var/mobile`, its `Containers`), or
/// one folder of containers inside it (`Containers/Data`, `Data/Application`, `Shared/AppGroup`,
/// `Data/PluginKitPlugin`). Each child of a place is a container of the place's kind;
/// `Bundle/Application` holds `.app` bundles, never app data.
enum SimulatorDevice: ContainerFolderKind {
  static func recognize(_ folder: ProbedFolder) throws(Refusal) -> FolderMatch? {
    guard let places = self.places(in: folder) else { return nil }
    var containers: [ContainerRef] = []
    var sawBundles = false
    for (place, placeFolder) in places {
      guard let kind = place.kind else {
        sawBundles = true
        continue
      }
      for name in placeFolder.folderNames {
        guard let child = placeFolder.folder(name) else { continue }
        let identity = child.identity(parent: placeFolder)
        if identity.isBundle { continue }
        var reference = ContainerFolder.reference(child, parent: placeFolder, kind: kind, identity: identity)
        reference.identityFindings += restoreLeftovers(of: name, in: placeFolder)
        containers.append(reference)
      }
    }
    if containers.isEmpty && sawBundles && !places.contains(where: { $0.place.kind != nil }) {
      throw Refusal(.notAnInput, path: folder.path, "holds .app bundles (Bundle/Application), never app data; name the device's Containers folder, or its Data/Application")
    }
    return FolderMatch(containers: containers, isCollection: true)
  }

  /// The folders `appdata restore` left beside the container NAME (`.NAME.appdata-restore-TOKEN`:
  /// its previous contents, kept for `--undo`, or a killed run's partial tree), each a
  /// `restore-kept-copy` finding of the container, by its path from the container's root.
  static func restoreLeftovers(of name: String, in place: ProbedFolder) -> [Finding] {
    let prefix = "." + name + ".appdata-restore-"
    return place.entries.compactMap { key, kind -> Finding? in
      let entry = key.string
      guard kind == .directory, entry.hasPrefix(prefix), entry.utf8.count == prefix.utf8.count + 32,
            entry.utf8.suffix(32).allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
      return Finding(rule: .restoreKeptCopy, path: Array(("../" + entry).utf8),
                     message: "a folder appdata restore left beside this container: its previous contents, kept for 'appdata restore --undo', or a killed run's partial tree; not backed up", bytes: nil)
    }.sorted { $0.path.lexicographicallyPrecedes($1.path) }
  }

  /// The places `folder` holds or is, each with its folder; nil when it has none.
  static func places(in folder: ProbedFolder) -> [(place: ContainerPlace, folder: ProbedFolder)]? {
    // Devices/<UDID> → data; data or /private/var/mobile → Containers.
    if let data = folder.folder("data"), let containers = data.folder("Containers"), let found = placesBelow(containers) {
      return found
    }
    if let containers = folder.folder("Containers"), let found = placesBelow(containers) { return found }
    if let found = placesBelow(folder) { return found }
    // Containers/Data, Containers/Shared, Containers/Bundle: the places whose first part it is.
    let partial = ContainerPlaces.places.compactMap { place -> (ContainerPlace, ProbedFolder)? in
      guard place.pattern[0] == folder.name, let inner = folder.folder(place.pattern[1]) else { return nil }
      return (place, inner)
    }
    if !partial.isEmpty { return partial }
    // A place itself: its path ends with the place's two names.
    let components = Syscalls.absolutePath(folder.path).split(separator: "/").map(String.init)
    if let place = ContainerPlaces.place(endingWith: components) {
      return [(place, folder)]
    }
    return nil
  }

  /// The places below a `Containers` folder, or nil when it holds none.
  private static func placesBelow(_ containers: ProbedFolder) -> [(place: ContainerPlace, folder: ProbedFolder)]? {
    var found: [(ContainerPlace, ProbedFolder)] = []
    for place in ContainerPlaces.places {
      if let inner = containers.folder(place.pattern[0])?.folder(place.pattern[1]) { found.append((place, inner)) }
    }
    return found.isEmpty ? nil : found
  }
}
