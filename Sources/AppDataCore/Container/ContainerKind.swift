import AppDataSystem
/// What a container holds, which decides its layout table (`ContainerLayout.forKind`).
public enum ContainerKind: String, CaseIterable, Sendable, Comparable {
  /// An app's data container (`Data/Application/<UUID>`, an `.xcappdata`'s `AppData`).
  case app
  /// An app group container (`Shared/AppGroup/<UUID>`, `~/Library/Group Containers/<id>`).
  case group
  /// An app extension's data container (`Data/PluginKitPlugin/<UUID>`).
  case plugin
  /// A device backup's system domains (`HomeDomain`, `CameraRollDomain`, …): not app data.
  case system

  public static func < (lhs: ContainerKind, rhs: ContainerKind) -> Bool {
    allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
  }
}

/// A folder of a device's `Containers` folder (a Simulator's `data/Containers`, a device's
/// `/private/var/mobile/Containers`) whose children are containers of one kind, or bundles.
package struct ContainerPlace: Sendable {
  /// Path components below `Containers`.
  package let pattern: [String]
  /// The kind of the containers there; nil for `.app` bundles, which are never app data.
  package let kind: ContainerKind?
  package let isConfirmed: Bool
}

/// The facts about where containers live and what their metadata says, in one table each, so
/// that a fact marked *unconfirmed* (not seen in a real container) changes in one place.
package enum ContainerPlaces {
  /// The folders below `Containers` on a device or a Simulator device (`simctl get_app_container`).
  package static let places: [ContainerPlace] = [
    ContainerPlace(pattern: ["Data", "Application"], kind: .app, isConfirmed: true),
    ContainerPlace(pattern: ["Shared", "AppGroup"], kind: .group, isConfirmed: true),
    ContainerPlace(pattern: ["Data", "PluginKitPlugin"], kind: .plugin, isConfirmed: true),
    ContainerPlace(pattern: ["Bundle", "Application"], kind: nil, isConfirmed: true),
  ]

  /// The place whose two names end `names` (a folder's path components), if any.
  package static func place(endingWith names: [String]) -> ContainerPlace? {
    guard names.count >= 2 else { return nil }
    let last = Array(names.suffix(2))
    return places.first { $0.pattern == last }
  }

  /// `MCMMetadataContentClass` values: 2 was seen on an app data container; the others are
  /// *unconfirmed* (MobileContainerManager's container classes). nil: a bundle, never app data.
  package static let contentClasses: [Int: ContainerKind?] = [
    1: nil,  // app bundle (unconfirmed)
    2: .app,
    3: nil,  // extension bundle (unconfirmed)
    4: .plugin,  // extension data (unconfirmed)
    7: .group,  // app group (unconfirmed)
  ]

  /// The metadata plists that name a container's id, in the order they are looked for: iOS and
  /// the Simulator write the first at the container root; macOS's containermanagerd writes the
  /// second (*unconfirmed*) beside a sandboxed app's `Data` folder and at a group container's root.
  package static let metadataFileNames = [
    ContainerLayout.metadataFileName,
    ".com.apple.containermanagerd.metadata.plist",
  ]

  /// The key holding the bundle id or group id in a metadata plist.
  package static let identifierKey = "MCMMetadataIdentifier"
  package static let contentClassKey = "MCMMetadataContentClass"

  /// An Xcode app data package (`NAME.xcappdata`, from "Download Container…"): its info plist,
  /// its container folder, and the key naming the app.
  package static let packageExtension = ".xcappdata"
  package static let packageInfoFileName = "AppDataInfo.plist"
  package static let packageContainerName = "AppData"
  package static let packageIdentifierKey = "CFBundleIdentifier"

  /// A device backup's app domains: `PREFIX-ID`, split at the first dash only (ids hold dashes).
  package static let backupDomains: [(prefix: String, kind: ContainerKind)] = [
    ("AppDomain", .app), ("AppDomainGroup", .group), ("AppDomainPlugin", .plugin),
  ]

  /// The top-level folders that make a folder look like a container root.
  package static let rootFolderNames = ["Documents", "Library", "tmp"]

  /// Folders of a home folder (macOS or Linux) that a container never holds as real folders
  /// (a Mac app's `Data` holds them as symlinks): two or more, and the folder is a home folder.
  package static let homeFolderNames = ["Desktop", "Downloads", "Movies", "Music", "Pictures", "Public", "Videos"]
}
