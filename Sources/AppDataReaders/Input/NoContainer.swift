import AppDataSystem
import AppDataCore
/// What to tell someone whose PATH holds no app data container: what was looked for, what the
/// folder looks like instead, and how to name the container.
enum NoContainer {
  static func refusal(_ folder: ProbedFolder) -> Refusal {
    let rawPath = folder.path
    let path = TerminalText.escaped(rawPath)
    if isHomeFolder(folder) {
      let found = ContainerPlaces.homeFolderNames.filter(folder.isFolder).joined(separator: ", ")
      return Refusal(.notAnInput, path: rawPath, message: "\(path): a home folder (\(found)), not an app data container; name a Mac app's ~/Library/Containers/BUNDLE-ID/Data, all of ~/Library/Containers, or a Simulator device")
    }
    let looked = "looked for Documents, Library or tmp, a container metadata plist, an .xcappdata package, a Simulator device (data/Containers) and a folder of containers"
    if isSourceCheckout(folder) {
      let packages = packagesBelow(folder)
      if !packages.isEmpty {
        let list = packages.prefix(3).map { TerminalText.escaped($0) }.joined(separator: ", ")
        return Refusal(.notAnInput, path: rawPath, message: "\(path): a source checkout, not an app data container; it holds \(list): audit that")
      }
      return Refusal(.notAnInput, path: rawPath, message: "\(path): a source checkout holding no app data container (\(looked)); name the container's folder, or use --root PATH")
    }
    let devices = folder.folderNames.filter { name in folder.folder(name)?.folder("data")?.isFolder("Containers") ?? false }
    if !devices.isEmpty {
      let list = devices.prefix(3).map { TerminalText.escaped($0) }.joined(separator: ", ") + (devices.count > 3 ? ", …" : "")
      return Refusal(.notAnInput, path: rawPath, message: "\(path): holds \(devices.count) Simulator \(devices.count == 1 ? "device" : "devices") (\(list)); audit one at a time: \(path)/UDID")
    }
    if folder.entries.isEmpty {
      return Refusal(.notAnInput, path: rawPath, message: "\(path): an empty folder, not an app data container (\(looked))")
    }
    return Refusal(.notAnInput, path: rawPath, message: "\(path): holds no app data container (\(looked)); name the container's folder, or use --root PATH")
  }

  /// Two or more of Desktop, Downloads, Music, … as real folders: a home folder (a Mac app's
  /// `Data` holds them as symlinks).
  static func isHomeFolder(_ folder: ProbedFolder) -> Bool {
    !folder.isFile(ContainerLayout.metadataFileName)
      && ContainerPlaces.homeFolderNames.filter(folder.isFolder).count >= 2
  }

  /// Names a version-control or Xcode project folder holds.
  static let sourceMarkers = [".git", ".hg", ".svn", "Package.swift", "Podfile", "Cartfile"]

  static func isSourceCheckout(_ folder: ProbedFolder) -> Bool {
    !folder.isFile(ContainerLayout.metadataFileName)
      && (sourceMarkers.contains { folder.entries[$0] != nil }
          || folder.entries.keys.contains { $0.string.hasSuffix(".xcodeproj") || $0.string.hasSuffix(".xcworkspace") })
  }

  /// `.xcappdata` packages up to four folders down (a checkout's UI-test data), at most a
  /// thousand folders looked at, build and dependency folders skipped.
  static func packagesBelow(_ folder: ProbedFolder) -> [String] {
    let skipped: Set<String> = [".git", ".build", "build", "DerivedData", "Pods", "Carthage", "node_modules"]
    var found: [String] = []
    var queue: [(ProbedFolder, String, Int)] = [(folder, "", 0)]
    var visited = 0
    while !queue.isEmpty && visited < 1000 {
      let (current, relative, depth) = queue.removeFirst()
      visited += 1
      for name in current.entries.filter({ $0.value == .directory }).map(\.key).sorted().map(\.string) where !skipped.contains(name) {
        let path = relative.isEmpty ? name : relative + "/" + name
        if name.hasSuffix(ContainerPlaces.packageExtension) {
          found.append(path)
        } else if depth < 4, let child = current.folder(name) {
          queue.append((child, path, depth + 1))
        }
      }
    }
    return found
  }
}
