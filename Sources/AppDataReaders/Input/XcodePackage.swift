import AppDataSystem
import AppDataCore
/// An Xcode app data package, `NAME.xcappdata` (Xcode's "Download Container…", or test data a
/// scheme loads): a folder holding `AppDataInfo.plist` and/or `AppData/`, which is the container.
/// Packages trimmed by hand (no info plist, no metadata plist, no `Documents` or `tmp`) still work.
enum XcodePackage: ContainerFolderKind {
  static func recognize(_ folder: ProbedFolder) throws(Refusal) -> FolderMatch? {
    if let container = container(folder, kind: nil) { return FolderMatch(containers: [container], isCollection: false) }
    if folder.name.hasSuffix(ContainerPlaces.packageExtension) || folder.isFile(ContainerPlaces.packageInfoFileName) {
      throw Refusal(.damaged, path: folder.path, "an Xcode app data package without its \(ContainerPlaces.packageContainerName) folder; download the container again from Xcode (Devices and Simulators, Download Container…)")
    }
    return nil
  }

  /// The package's `AppData` as a container, when `folder` is a package.
  static func container(_ folder: ProbedFolder, kind: ContainerKind?) -> ContainerRef? {
    guard let appData = folder.folder(ContainerPlaces.packageContainerName) else { return nil }
    let isPackage = folder.name.hasSuffix(ContainerPlaces.packageExtension)
      || folder.isFile(ContainerPlaces.packageInfoFileName)
      || ContainerFolder.isRoot(appData)
    guard isPackage else { return nil }
    return ContainerFolder.reference(appData, parent: folder, kind: kind)
  }
}
