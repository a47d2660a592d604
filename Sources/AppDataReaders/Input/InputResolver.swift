import AppDataSystem
import AppDataCore
/// The one place PATH (for `audit` and `migrate`) becomes containers: a folder is matched
/// against each folder input kind in turn; a regular file is an archive.
package enum InputResolver {
  /// The folder input kinds, most specific first: a package and a device are recognised by
  /// their own files before a folder that merely holds `Library`.
  static var folderKinds: [any FolderInputKind.Type] { [
    DeviceBackup.self, XcodePackage.self, SimulatorDevice.self, ContainerFolder.self, AndroidDataFolder.self, FolderOfBackups.self,
    FolderOfContainers.self,
  ] }

  /// What `path` holds. `root` (`--root`) names the container's folder inside PATH, a folder
  /// or an archive; `maximumArchiveBytes` and `maximumManifestBytes` apply to archives only.
  package static func resolve(_ path: String, root: [[UInt8]]? = nil, maximumArchiveBytes: UInt64? = nil,
                             maximumManifestBytes: UInt64? = nil, limits: InputLimits = InputLimits()) throws(Refusal) -> any ContainerSource {
    if path.isEmpty { throw Refusal(.notFound, "the container path is empty") }
    let status: FileStatus
    do {
      status = try Syscalls.status(ofPath: path)
    } catch {
      if error.errno == .noSuchFileOrDirectory { throw Refusal(.notFound, path: path, "no such file or folder") }
      throw Refusal(.unreadable, path: path, message: TerminalText.escaped(error.description))
    }
    if status.kind == .regular {
      // An archive's kind is decided here, once, from its first headers (`ArchiveKind`); it is
      // then read as that kind only, and what that reading refuses is final.
      if limits.platform.archiveKind(path, root: root) == .androidData {
        return AndroidArchiveSource(source: Syscalls.absolutePath(path), path: path, maximumNameBytes: limits.maximumNameBytes)
      }
      return ArchiveSource(source: Syscalls.absolutePath(path), path: path, root: root, maximumBytes: maximumArchiveBytes,
                           maximumManifestBytes: maximumManifestBytes, limits: limits)
    }
    try ContainerPath.checkFolder(path)
    if maximumArchiveBytes != nil || maximumManifestBytes != nil {
      let option = maximumArchiveBytes != nil ? "--max-archive-bytes" : "--max-manifest-bytes"
      throw Refusal(.conflict, path: path, "is a folder; \(option) applies to archives")
    }
    if let root {
      return try named(root, in: path, limits: limits)
    }
    guard let folder = ProbedFolder(path: path) else {
      throw Refusal(.unreadable, path: path, "cannot read the folder: \(ProbedFolder.whyUnreadable(path))")
    }
    return try source(of: folder, base: path, limits: limits)
  }

  /// The first of the platform's folder kinds that `folder` is (`InputPlatform.folderKinds`).
  private static func source(of folder: ProbedFolder, base: String, limits: InputLimits) throws(Refusal) -> any ContainerSource {
    for kind in limits.platform.folderKinds {
      if let source = try kind.source(for: folder, base: base, limits: limits) { return source }
    }
    throw NoContainer.refusal(folder)
  }

  /// Several PATH operands: one report of many, each operand's containers named by it (a
  /// backup by its folder). Every operand is resolved before any is read. What is read is read
  /// once: an operand named twice, or a container, backup or archive that an earlier operand
  /// already holds (`Backup Backup/A`, or `Backup/A Backup`), is left out where it comes again,
  /// with one notice saying so; its figures are never counted twice.
  package static func resolve(_ paths: [String], root: [[UInt8]]? = nil, maximumArchiveBytes: UInt64? = nil,
                             maximumManifestBytes: UInt64? = nil, limits: InputLimits = InputLimits()) throws(Refusal) -> any ContainerSource {
    if paths.count == 1 {
      return try resolve(paths[0], root: root, maximumArchiveBytes: maximumArchiveBytes, maximumManifestBytes: maximumManifestBytes,
                         limits: limits)
    }
    var parts: [SourceGroup.Part] = []
    var seen: [FileIdentity: String] = [:]
    var notes: [String] = []
    for path in paths {
      let whole = try resolve(path, root: root, maximumArchiveBytes: maximumArchiveBytes, maximumManifestBytes: maximumManifestBytes,
                              limits: limits)
      let found = whole.identities
      let again = found.compactMap { identity in identity.flatMap { seen[$0] } }
      let source = again.isEmpty ? whole : whole.excluding(Set(seen.keys))
      if !again.isEmpty {
        let earlier = Array(Set(again)).sorted()
        let names = Plural.listed(earlier.map { "'\(TerminalText.escaped($0))'" }, limit: 3)
        if source != nil {
          notes.append("'\(TerminalText.escaped(path))': \(again.count) of what it holds is already named by \(names); read once")
        } else if earlier == [path] {
          notes.append("'\(TerminalText.escaped(path))': named twice; read once")
        } else {
          notes.append("'\(TerminalText.escaped(path))': already named by \(names); read once")
        }
      }
      for identity in found.compactMap({ $0 }) where seen[identity] == nil { seen[identity] = path }
      if let source { parts.append(.source(source, label: path)) }
    }
    var group = SourceGroup(source: Syscalls.absolutePath("."), parts: parts)
    group.notes = notes
    return group
  }

  /// `--root ROOT` on a folder: PATH/ROOT goes through the same folder kinds as PATH (a backup
  /// there is audited as a backup, a folder of containers as one), and a folder of none of them
  /// is refused as PATH would be. Containers found are still opened below PATH, one component at
  /// a time, following no symlink.
  private static func named(_ root: [[UInt8]], in path: String, limits: InputLimits) throws(Refusal) -> any ContainerSource {
    let relative = RelativePath.display(RelativePath.join(root))
    let full = root.isEmpty ? path : (path.hasSuffix("/") ? path : path + "/") + relative
    guard let folder = ProbedFolder(path: full) else {
      throw Refusal(.notMatched, path: full, "--root names no folder inside \(TerminalText.escaped(path))")
    }
    return try source(of: folder, base: path, limits: limits)
  }
}

extension InputPlatform {
  /// What a folder may be with `--platform`: any of the folder kinds (`auto`), any but an
  /// Android app's data folder (`ios`), or an Android app's data folder, whatever its shape
  /// (`android`).
  var folderKinds: [any FolderInputKind.Type] {
    switch self {
    case .auto: InputResolver.folderKinds
    case .ios: InputResolver.folderKinds.filter { $0 != AndroidDataFolder.self }
    case .android: [AnyAndroidDataFolder.self]
    }
  }

  /// What an archive is with `--platform`: decided from its first headers (`auto`, and no
  /// `--root`, which names a folder in an Apple archive), or as the platform says.
  func archiveKind(_ path: String, root: [[UInt8]]?) -> ArchiveKind {
    switch self {
    case .auto: root == nil ? ArchiveKind.of(path) : .apple
    case .ios: .apple
    case .android: .androidData
    }
  }
}

/// Bounds on what one PATH may hold that are not bytes.
package struct InputLimits: Sendable {
  /// `--max-backups`: the most device backups a folder of backups (or an archive of one) may
  /// hold. A report of many is linear in them, but its memory grows with each (about 11 KB a
  /// backup as JSON), so a folder of 10,000 backups stays near 120 MiB.
  package var maximumBackups = InputLimits.defaultMaximumBackups
  package static let defaultMaximumBackups = 10_000
  /// `--platform`: what a folder is taken to be, where its shape would say otherwise or
  /// nothing (an Android data folder holding only `files/`).
  package var platform: InputPlatform = .auto
  /// `--max-name-bytes`: the most bytes of names a reader of an archive, or of an Android
  /// backup, keeps while it reads (`NameBudget`); past it the input is refused.
  package var maximumNameBytes = NameBudget.defaultMaximum

  package init(maximumBackups: Int? = nil) {
    if let maximumBackups { self.maximumBackups = maximumBackups }
  }

  /// The refusal for `count` backups in `path`, over the bound.
  package func checkBackups(_ count: Int, in path: String) throws(Refusal) {
    guard count > maximumBackups else { return }
    throw Refusal(.tooLarge, path: path, "holds \(count) device backups, more than the \(maximumBackups) appdata reads from one folder (--max-backups raises it)")
  }
}

/// One kind of folder PATH can be.
protocol FolderInputKind {
  /// The source `folder` is when it is of this kind; nil when it is not. Throws (exit 2) when it
  /// is of this kind but cannot be audited (a folder of `.app` bundles, an encrypted backup).
  /// `base` is PATH as typed.
  static func source(for folder: ProbedFolder, base: String, limits: InputLimits) throws(Refusal) -> (any ContainerSource)?
}

/// A folder kind whose containers are folders on disk (walked by `FolderSource`).
protocol ContainerFolderKind: FolderInputKind {
  /// The containers `folder` holds when it is of this kind; nil when it is not.
  static func recognize(_ folder: ProbedFolder) throws(Refusal) -> FolderMatch?
}

extension ContainerFolderKind {
  static func source(for folder: ProbedFolder, base: String, limits: InputLimits) throws(Refusal) -> (any ContainerSource)? {
    guard let match = try recognize(folder) else { return nil }
    return FolderSource(source: Syscalls.absolutePath(base), base: base, isCollection: match.isCollection,
                        containers: match.containers.sorted { $0.root.utf8.lexicographicallyPrecedes($1.root.utf8) })
  }
}

/// What a folder input kind found.
struct FolderMatch {
  var containers: [ContainerRef]
  /// A folder of containers (a report of many), rather than one container.
  var isCollection: Bool
}
