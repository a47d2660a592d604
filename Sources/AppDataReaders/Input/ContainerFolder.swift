import AppDataSystem
import AppDataCore
/// A container root: a folder holding a container metadata plist, or `Documents`, `Library` or
/// `tmp` (and not a home folder or a source checkout, which hold such folders too); or a Mac
/// sandboxed app's `~/Library/Containers/<id>` folder, whose `Data` is the container.
enum ContainerFolder: ContainerFolderKind {
  static func recognize(_ folder: ProbedFolder) throws(Refusal) -> FolderMatch? {
    single(folder, parent: nil).map { FolderMatch(containers: [$0], isCollection: false) }
  }

  /// `folder` as one container (a root, a package, a Mac app's folder), or nil.
  static func single(_ folder: ProbedFolder, parent: ProbedFolder?, kind: ContainerKind? = nil) -> ContainerRef? {
    if let package = XcodePackage.container(folder, kind: kind) { return package }
    if isRoot(folder) { return reference(folder, parent: parent, kind: kind) }
    if let data = folder.folder("Data"), isRoot(data) { return reference(data, parent: folder, kind: kind) }
    return nil
  }

  /// Whether a folder looks like a container root.
  static func isRoot(_ folder: ProbedFolder) -> Bool {
    if folder.isFile(ContainerLayout.metadataFileName) { return true }
    guard ContainerPlaces.rootFolderNames.contains(where: folder.isFolder) else { return false }
    return !NoContainer.isHomeFolder(folder) && !NoContainer.isSourceCheckout(folder)
  }

  /// A container at `folder`, identified by the plists in and around it (`identity`, when the
  /// caller read them already); `kind` as its place says, or its metadata's content class, or an app.
  static func reference(_ folder: ProbedFolder, parent: ProbedFolder?, kind: ContainerKind?,
                        identity known: ContainerIdentity? = nil) -> ContainerRef {
    let identity = known ?? folder.identity(parent: parent)
    var folderName = folder.name
    if let parent, folderName == "Data" || folderName == ContainerPlaces.packageContainerName { folderName = parent.name }
    var reference = ContainerRef(id: identity.id, kind: kind ?? identity.kind ?? .app, root: folder.path, folderName: folderName)
    reference.identityFindings = identity.findings
    return reference
  }
}

/// A folder whose children are containers or `.xcappdata` packages: a Mac's
/// `~/Library/Containers` (each `<id>/Data`), `~/Library/Group Containers` (each a group), or
/// any folder of them. Children that are neither are passed over.
enum FolderOfContainers: ContainerFolderKind {
  /// The Mac folder whose children are all app group containers, whatever they hold.
  static let groupContainersName = "Group Containers"

  static func recognize(_ folder: ProbedFolder) throws(Refusal) -> FolderMatch? {
    var containers: [ContainerRef] = []
    let isGroups = folder.name == groupContainersName
    for name in folder.folderNames {
      guard let child = folder.folder(name) else { continue }
      if isGroups {
        containers.append(ContainerFolder.reference(child, parent: folder, kind: .group))
      } else if let container = ContainerFolder.single(child, parent: folder) {
        containers.append(container)
      }
    }
    return containers.isEmpty ? nil : FolderMatch(containers: containers, isCollection: true)
  }
}
