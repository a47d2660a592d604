import AppDataSystem
import AppDataCore
/// The one place PATH (for `audit` and `migrate`) becomes containers: a folder is matched
/// against each folder input kind in turn; a regular file is an archive.
public enum InputResolver {
  /// The folder input kinds, most specific first: a package and a device are recognised by
  /// their own files before a folder that merely holds `Library`.
  static var folderKinds: [any FolderInputKind.Type] { [
    DeviceBackup.self, XcodePackage.self, SimulatorDevice.self, ContainerFolder.self, FolderOfBackups.self, FolderOfContainers.self,
  ] }

  /// What `path` holds. `root` (`--root`) names the container's folder inside PATH, a folder
  /// or an archive; `maximumArchiveBytes` applies to archives only.
  public static func resolve(_ path: String, root: [[UInt8]]? = nil, maximumArchiveBytes: UInt64? = nil) throws(Refusal) -> any ContainerSource {
    if path.isEmpty { throw Refusal("the container path is empty") }
    let status: FileStatus
    do {
      status = try Syscalls.status(ofPath: path)
    } catch {
      if error.isNotFound { throw Refusal("\(TerminalText.escaped(path)): no such file or folder") }
      throw Refusal(TerminalText.escaped(error.description))
    }
    if status.kind == .regular {
      return ArchiveSource(source: Syscalls.absolutePath(path), path: path, root: root, maximumBytes: maximumArchiveBytes)
    }
    try ContainerPath.checkFolder(path)
    if maximumArchiveBytes != nil {
      throw Refusal("\(TerminalText.escaped(path)): is a folder; --max-archive-bytes applies to archives")
    }
    if let root {
      return try named(root, in: path)
    }
    guard let folder = ProbedFolder(path: path) else {
      throw Refusal("\(TerminalText.escaped(path)): cannot read the folder: \(ProbedFolder.whyUnreadable(path))")
    }
    for kind in folderKinds {
      if let source = try kind.source(for: folder, base: path) { return source }
    }
    throw NoContainer.refusal(folder)
  }

  /// Several PATH operands: one report of many, each operand's containers named by it (a
  /// backup by its folder). Every operand is resolved before any is read.
  public static func resolve(_ paths: [String], root: [[UInt8]]? = nil, maximumArchiveBytes: UInt64? = nil) throws(Refusal) -> any ContainerSource {
    if paths.count == 1 { return try resolve(paths[0], root: root, maximumArchiveBytes: maximumArchiveBytes) }
    var parts: [SourceGroup.Part] = []
    for path in paths {
      parts.append(.source(try resolve(path, root: root, maximumArchiveBytes: maximumArchiveBytes), label: path))
    }
    return SourceGroup(source: Syscalls.absolutePath("."), parts: parts)
  }

  /// `--root ROOT` on a folder: PATH/ROOT goes through the same folder kinds as PATH (a backup
  /// there is audited as a backup, a folder of containers as one), and a folder of none of them
  /// is refused as PATH would be. Containers found are still opened below PATH, one component at
  /// a time, following no symlink.
  private static func named(_ root: [[UInt8]], in path: String) throws(Refusal) -> any ContainerSource {
    let relative = RelativePath.display(RelativePath.join(root))
    let full = root.isEmpty ? path : (path.hasSuffix("/") ? path : path + "/") + relative
    guard let folder = ProbedFolder(path: full) else {
      throw Refusal("\(TerminalText.escaped(full)): --root names no folder inside \(TerminalText.escaped(path))")
    }
    for kind in folderKinds {
      if let source = try kind.source(for: folder, base: path) { return source }
    }
    throw NoContainer.refusal(folder)
  }
}

/// One kind of folder PATH can be.
protocol FolderInputKind {
  /// The source `folder` is when it is of this kind; nil when it is not. Throws (exit 2) when it
  /// is of this kind but cannot be audited (a folder of `.app` bundles, an encrypted backup).
  /// `base` is PATH as typed.
  static func source(for folder: ProbedFolder, base: String) throws(Refusal) -> (any ContainerSource)?
}

/// A folder kind whose containers are folders on disk (walked by `FolderSource`).
protocol ContainerFolderKind: FolderInputKind {
  /// The containers `folder` holds when it is of this kind; nil when it is not.
  static func recognize(_ folder: ProbedFolder) throws(Refusal) -> FolderMatch?
}

extension ContainerFolderKind {
  static func source(for folder: ProbedFolder, base: String) throws(Refusal) -> (any ContainerSource)? {
    guard let match = try recognize(folder) else { return nil }
    return FolderSource(source: Syscalls.absolutePath(base), base: base, isCollection: match.isCollection,
                        containers: match.containers.sorted { $0.root < $1.root })
  }
}

/// What a folder input kind found.
struct FolderMatch {
  var containers: [ContainerRef]
  /// A folder of containers (a report of many), rather than one container.
  var isCollection: Bool
}
