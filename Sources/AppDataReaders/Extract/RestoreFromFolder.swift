import AppDataSystem
import AppDataCore

/// `appdata restore` from a container folder or an `.xcappdata` package (its `AppData`): the
/// tree copied into restore's partial folder as extract writes one (every file, folder and
/// symlink made relative to its folder's descriptor with `O_NOFOLLOW | O_EXCL`; modes, times and
/// extended attributes kept), read without following a symlink. The source's metadata plist is
/// not copied (the container keeps its own), nor a name reserved for appdata's own files, nor
/// anything but files, folders and symlinks: each is reported.
///
/// The symlinks are written last, judged (`SymlinkCheck`) on the tree as it was written: the
/// links copied, with the targets read when each was copied, and every other name a folder or
/// a file. A link is written as a file holding its target when it resolves out. So a link the
/// copy did not write (a reserved name, one another user turned into a folder while the copy
/// ran) is no way out for the links through it (the hostile rounds of issues 53 and 52). The
/// folders get their modes and times after the links are in.
struct RestoreFromFolder {
  let sourcePath: String
  let destination: FileDescriptor
  /// The links read, written by `finish()`.
  var links: [(path: [UInt8], target: [UInt8], access: FileTime, modification: FileTime)] = []
  /// The folders made, children before their parent, given their mode and times by `finish()`.
  var folders: [(path: [UInt8], mode: UInt32, access: FileTime, modification: FileTime)] = []
  var container: RestoreReport.Container
  var problems: [ExtractReport.Problem] = []
  let isInterrupted: @Sendable () -> Bool
  var steps: Restore.Checkpoints
  /// `--dry-run`: the source read and judged as the copy reads it, its figures and its
  /// problems reported, nothing written (`destination` is not used).
  var dryRun = false
  /// How the device's filesystem tells names apart, which the links are judged by (a dry run's
  /// too).
  var comparison = NameComparison.bytes
  let context = CopyContext()
  static let maximumDepth = 1024

  /// The container root a folder SOURCE names: `NAME.xcappdata/AppData`, or the folder itself
  /// when it looks like a container (Documents, Library, tmp or a metadata plist at its top).
  /// nil when it is neither (then it is read as a backup).
  static func containerRoot(of source: String) -> (root: String, folder: FileDescriptor)? {
    guard (try? Syscalls.status(ofPath: source))?.isDirectory == true, let opened = try? Syscalls.openDirectory(atPath: source) else { return nil }
    // Closed on every way out but the last, which hands it to the caller.
    let folder = OwnedDescriptor(owning: opened)
    if ExtractionOutput.normalized(source).hasSuffix(ContainerPlaces.packageExtension) {
      guard let inner = try? Syscalls.open(Array(ContainerPlaces.packageContainerName.utf8), in: folder.descriptor, options: .directory, displayPath: source) else { return nil }
      return (ExtractionOutput.normalized(source) + "/" + ContainerPlaces.packageContainerName, inner)
    }
    let names = Set(Syscalls.entryNames(of: folder.descriptor))
    if names.contains(Array("Manifest.db".utf8)) { return nil }
    let marks = ["Documents", "Library", "tmp"] + ContainerPlaces.metadataFileNames
    guard marks.contains(where: { names.contains(Array($0.utf8)) }) else { return nil }
    return (source, folder.release())
  }

  func display(_ path: [UInt8]) -> String { sourcePath + "/" + RelativePath.display(path) }

  mutating func problem(_ path: [UInt8], _ message: String, isError: Bool = true) {
    problems.append(ExtractReport.Problem(domain: container.id, path: path, message: message, isError: isError))
  }

  /// Copies what `source` holds into `target` (made by this copy), then gives each copied
  /// folder its mode and times. Only a failure of the destination (a full disk) or an
  /// interrupt throws.
  mutating func copy(_ source: FileDescriptor, into target: FileDescriptor, path: [UInt8], depth: Int) throws(Refusal) {
    let top = path.isEmpty
    for name in Syscalls.entryNames(of: source).sorted(by: RelativePath.precedes) {
      if isInterrupted() { throw Refusal(.interrupted, path: sourcePath, message: "\(TerminalText.escaped(sourcePath)): interrupted") }
      steps.pass("restore")
      let entry = RelativePath.join(path, name)
      if top && ContainerPlaces.metadataFileNames.contains(where: { Array($0.utf8) == name }) { continue }
      if name.first == 0x2E && OwnedArtifact.isReserved(name) {
        problem(entry, "not written: named as appdata's own files are (.appdata-*, .NAME.appdata-*)")
        continue
      }
      guard let status = try? Syscalls.status(of: name, in: source, displayPath: display(entry)) else {
        problem(entry, "not written: it cannot be read")
        continue
      }
      let item = Item(name: name, entry: entry, status: status, source: source, target: target)
      switch status.kind {
      case .directory: try copyFolder(item, depth: depth)
      case .symbolicLink: try copyLink(item)
      case .regular: try copyFile(item)
      case .other: problem(entry, "not written: not a file, folder or symlink (a FIFO, socket or device)")
      }
    }
  }

  /// One entry of a folder being copied: its name, its path in the container, its status, and
  /// the folders it is copied from and into.
  private struct Item {
    let name: [UInt8]
    let entry: [UInt8]
    let status: FileStatus
    let source: FileDescriptor
    let target: FileDescriptor
  }

  /// The refusal for a write that failed at the destination.
  private func failed(_ error: SystemError, _ entry: [UInt8]) -> Refusal {
    Refusal(.cannotWrite, path: container.path, message: "\(TerminalText.escaped(container.path)): cannot write \(TerminalText.escaped(RelativePath.display(entry))): \(error.reason); nothing was changed")
  }

  private mutating func copyFolder(_ item: Item, depth: Int) throws(Refusal) {
    guard depth < Self.maximumDepth else {
      problem(item.entry, "not written: deeper than \(Self.maximumDepth) folders")
      return
    }
    let opened: FileDescriptor
    do { opened = try Syscalls.open(item.name, in: item.source, options: .directory, displayPath: display(item.entry)) } catch {
      // ELOOP or ENOTDIR: it was turned into a symlink or a file since it was listed.
      let changed = error.errno == .tooManySymbolicLinkLevels || error.errno == .notDirectory
      problem(item.entry, changed ? "not written: the folder cannot be opened without following a symlink" : "not written: the folder cannot be opened: \(error.reason)")
      return
    }
    let innerOwner = OwnedDescriptor(owning: opened)
    let inner = innerOwner.descriptor
    if dryRun {
      try copy(inner, into: item.target, path: item.entry, depth: depth + 1)
      container.contents.folders += 1
      return
    }
    let madeOwner: OwnedDescriptor
    do {
      try Syscalls.makeDirectory(item.name, in: item.target, mode: 0o700, displayPath: container.path)
      madeOwner = OwnedDescriptor(owning: try Syscalls.open(item.name, in: item.target, options: .directory, displayPath: container.path))
    } catch {
      throw failed(error, item.entry)
    }
    let made = madeOwner.descriptor
    try copy(inner, into: made, path: item.entry, depth: depth + 1)
    try? ExtendedAttributes.copyAll(from: inner, to: made, displayPath: container.path)
    folders.append((item.entry, item.status.permissions, item.status.accessTime, item.status.modificationTime))
    container.contents.folders += 1
  }

  /// A symlink: its target read now, the link written by `finish()`.
  private mutating func copyLink(_ item: Item) throws(Refusal) {
    guard let text = try? Syscalls.readLink(item.name, in: item.source, displayPath: display(item.entry)) else {
      problem(item.entry, "not written: the link cannot be read")
      return
    }
    links.append((item.entry, text, item.status.accessTime, item.status.modificationTime))
  }

  /// The links, each as it is or, when it resolves out of the container as written, as a file
  /// holding its target; then the folders' modes and times.
  mutating func finish() throws(Refusal) {
    var budget = SymlinkCheck.Budget()
    // Judged as the device's filesystem compares names.
    let check = SymlinkCheck(links: links.map { ($0.path, $0.target) }, comparison: comparison, budget: &budget,
                             isInterrupted: isInterrupted)
    for link in links {
      if isInterrupted() || check.interrupted { throw Refusal(.interrupted, path: sourcePath, message: "\(TerminalText.escaped(sourcePath)): interrupted") }
      let components = RelativePath.components(link.path)
      guard let name = components.last else { continue }
      if dryRun {
        if let why = check.verdict(link.path, target: link.target) {
          problem(link.path, "a symlink to '\(TerminalText.escaped(link.target))', which \(why): written as a file holding its target", isError: false)
          container.contents.files += 1
        } else {
          container.contents.symlinks += 1
        }
        continue
      }
      do {
        let folder = OwnedDescriptor(owning: try Beneath.open(Array(components.dropLast()), below: destination, options: .directory, displayPath: container.path))
        if let why = check.verdict(link.path, target: link.target) {
          let file = OwnedDescriptor(owning: try Syscalls.open(name, in: folder.descriptor, options: .createNewFile, mode: 0o644, displayPath: container.path))
          try Syscalls.writeAll(file.descriptor, link.target, displayPath: container.path)
          problem(link.path, "a symlink to '\(TerminalText.escaped(link.target))', which \(why): written as a file holding its target", isError: false)
          container.contents.files += 1
          continue
        }
        try Syscalls.makeSymbolicLink(name, in: folder.descriptor, target: link.target, displayPath: container.path)
        try? Syscalls.setTimes(name, in: folder.descriptor, access: link.access, modification: link.modification, displayPath: container.path)
        container.contents.symlinks += 1
      } catch {
        throw failed(error, link.path)
      }
    }
    for folder in folders where !dryRun {
      guard let opened = try? Beneath.open(RelativePath.components(folder.path), below: destination, options: .directory, displayPath: container.path) else { continue }
      let made = OwnedDescriptor(owning: opened)
      try? Syscalls.setMode(made.descriptor, folder.mode, displayPath: container.path)
      try? Syscalls.setTimes(made.descriptor, access: folder.access, modification: folder.modification, displayPath: container.path)
    }
  }

  /// A regular file (opened without following a symlink, and checked to be one once open),
  /// with its attributes, mode and times.
  private mutating func copyFile(_ item: Item) throws(Refusal) {
    guard let descriptor = try? Syscalls.open(item.name, in: item.source, options: .readMaybeFile, displayPath: display(item.entry)) else {
      problem(item.entry, "not written: it cannot be opened")
      return
    }
    // Closed on every way out, its status not had among them.
    let owner = OwnedDescriptor(owning: descriptor)
    let file = owner.descriptor
    guard let opened = try? Syscalls.status(of: file, displayPath: display(item.entry)) else {
      problem(item.entry, "not written: it cannot be opened")
      return
    }
    guard opened.kind == .regular else {
      problem(item.entry, "not written: not a regular file")
      return
    }
    if dryRun {
      container.contents.addFile(bytes: opened.size)
      return
    }
    do {
      let copyOwner = OwnedDescriptor(owning: try Syscalls.open(item.name, in: item.target, options: .createNewReadWrite, mode: 0o600, displayPath: container.path))
      let copy = copyOwner.descriptor
      let bytes = try Syscalls.copyData(from: file, to: copy, displayPath: container.path, sourceSize: opened.size, context: context)
      try? ExtendedAttributes.copyAll(from: file, to: copy, displayPath: container.path)
      try Syscalls.setMode(copy, opened.permissions, displayPath: container.path)
      try Syscalls.setTimes(copy, access: opened.accessTime, modification: opened.modificationTime, displayPath: container.path)
      container.contents.addFile(bytes: bytes)
    } catch {
      throw failed(error, item.entry)
    }
  }
}
