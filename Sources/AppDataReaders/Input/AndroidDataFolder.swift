import AppDataSystem
import AppDataCore

/// An Android app's data folder: its credential-encrypted storage (`/data/user/0/PKG`), as
/// `adb exec-out run-as PKG tar c .` gives it, extracted. Recognised by its shape: the folders
/// Android makes (`shared_prefs`, `databases`, `no_backup`, `code_cache`, or `files` beside
/// `cache`), and none of an iOS container's. `--platform android` takes any folder as one.
enum AndroidDataFolder: FolderInputKind {
  /// Folders only Android makes in an app's data.
  static let androidFolders = ["shared_prefs", "databases", "no_backup", "code_cache"]

  static func source(for folder: ProbedFolder, base: String, limits: InputLimits) throws(Refusal) -> (any ContainerSource)? {
    guard isDataFolder(folder) else { return nil }
    return source(folder, base: base, limits: limits)
  }

  static func isDataFolder(_ folder: ProbedFolder) -> Bool {
    if folder.isFile(ContainerLayout.metadataFileName) || ContainerPlaces.rootFolderNames.contains(where: folder.isFolder) { return false }
    return androidFolders.contains(where: folder.isFolder) || (folder.isFolder("files") && folder.isFolder("cache"))
  }

  static func source(_ folder: ProbedFolder, base: String, limits: InputLimits) -> any ContainerSource {
    AndroidSource(source: Syscalls.absolutePath(folder.path), path: folder.path, maximumNameBytes: limits.maximumNameBytes)
  }
}

/// With `--platform android`: any folder is an Android app's data folder.
enum AnyAndroidDataFolder: FolderInputKind {
  static func source(for folder: ProbedFolder, base: String, limits: InputLimits) throws(Refusal) -> (any ContainerSource)? {
    AndroidDataFolder.source(folder, base: base, limits: limits)
  }
}

/// An Android app's data, a folder or an archive of one: one input, read whole, which
/// `--backup` compares with an Android backup.
protocol AndroidInput: ContainerSource {
  /// The folder or archive as typed.
  var path: String { get }
  /// What it is, and why `appdata migrate` does not take it (after `PATH: `).
  static var notMigrated: String { get }
}

extension AndroidInput {
  var isCollection: Bool { false }

  func folders() throws(Refusal) -> [ContainerRef] {
    throw Refusal(.notAnInput, path: path, message: "\(TerminalText.escaped(path)): \(Self.notMigrated)")
  }
  var identities: [FileIdentity?] { [Syscalls.identity(ofPath: path)] }
  func excluding(_ seen: Set<FileIdentity>) -> (any ContainerSource)? { wholeExcluding(seen) }

  /// `--backup` is an Android backup to compare with (`AndroidSettings.backupPath`).
  func ownBackup(atPath path: String) -> OwnBackup? { OwnBackup(needsPassword: AndroidBackupStream.isEncrypted(atPath: path)) }
}

/// An Android data folder, audited as Android's backup would walk it (`AndroidAnalysis`).
struct AndroidSource: AndroidInput {
  let source: String
  /// The folder as typed.
  let path: String
  /// `--max-name-bytes`: what an archive (the storages given as archives) or the Android backup
  /// (`--backup`) read beside the folder may keep of their names.
  let maximumNameBytes: UInt64

  static let notMigrated = "an Android app's data folder; appdata migrate moves an iOS container's Library/Caches, which Android has no need of"

  /// The package name: as given, else the folder's name where it looks like one
  /// (`/data/data/com.example.app`), else `app`.
  static func packageName(_ settings: AndroidSettings, folder: String) -> String {
    if let package = settings.package { return package }
    let name = Syscalls.absolutePath(folder).split(separator: "/").last.map(String.init) ?? ""
    let isPackage = name.contains(".") && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_") }
    return isPackage ? name : "app"
  }

  func audit(_ request: AuditRequest) throws(Refusal) -> AuditOutcome {
    try FolderSource.refuseBackupOptions(request, path: path)
    let package = Self.packageName(request.android, folder: path)
    var tree = AndroidTree()
    var findings: [Finding] = []
    var directories: UInt64 = 0
    try Self.walkFolder(path, storage: .credential, jobs: Self.walkJobs(request), into: &tree, directories: &directories, findings: &findings)
    try Self.addStorages(request.android, jobs: Self.walkJobs(request), maximumNameBytes: maximumNameBytes, into: &tree,
                         directories: &directories, findings: &findings)
    return try Self.outcome(tree: tree, directories: directories, findings: findings, package: package, container: source, request: request,
                            maximumNameBytes: maximumNameBytes)
  }

  /// The device-encrypted storage and the external files folder, when given (a folder or an
  /// archive each), read into their storages.
  static func addStorages(_ settings: AndroidSettings, jobs: Int, maximumNameBytes: UInt64, into tree: inout AndroidTree,
                          directories: inout UInt64, findings: inout [Finding]) throws(Refusal) {
    for (path, storage) in [(settings.deviceDataPath, AndroidStorage.device), (settings.externalPath, .external)] {
      guard let path else { continue }
      try read(path, storage: storage, jobs: jobs, maximumNameBytes: maximumNameBytes, into: &tree, directories: &directories, findings: &findings)
    }
  }

  /// The app's data at `path` (a folder, or an archive of one) as a tree, for the rules
  /// migration's check.
  static func readTree(_ path: String, maximumNameBytes: UInt64) throws(Refusal) -> AndroidTree {
    var tree = AndroidTree()
    var findings: [Finding] = []
    var directories: UInt64 = 0
    try read(path, storage: .credential, jobs: AuditOptions.startingJobs, maximumNameBytes: maximumNameBytes, into: &tree,
             directories: &directories, findings: &findings)
    return tree
  }

  /// `path`, a folder or an archive of one, read into `tree` under `storage`.
  static func read(_ path: String, storage: AndroidStorage, jobs: Int, maximumNameBytes: UInt64, into tree: inout AndroidTree,
                   directories: inout UInt64, findings: inout [Finding]) throws(Refusal) {
    let status: FileStatus
    do { status = try Syscalls.status(ofPath: path) } catch {
      throw Refusal(.notFound, path: path, message: TerminalText.escaped(error.description))
    }
    guard status.kind != .regular else {
      let archive = AndroidArchiveSource(source: Syscalls.absolutePath(path), path: path, maximumNameBytes: maximumNameBytes)
      let read = try archive.readTree(into: &tree, storage: storage)
      directories += read.directories
      findings += read.findings
      return
    }
    try walkFolder(path, storage: storage, jobs: jobs, into: &tree, directories: &directories, findings: &findings)
  }

  /// The folder at `path` walked into `tree` under `storage` (`AndroidWalk`).
  static func walkFolder(_ path: String, storage: AndroidStorage, jobs: Int, into tree: inout AndroidTree, directories: inout UInt64,
                         findings: inout [Finding]) throws(Refusal) {
    do {
      try AndroidWalk.walk(path, storage: storage, jobs: jobs, into: &tree, directories: &directories, findings: &findings)
    } catch {
      throw Refusal(.unreadable, path: path, message: TerminalText.escaped(error.description))
    }
  }

  /// The report of an app's data read into `tree` (from a folder or an archive).
  static func outcome(tree: AndroidTree, directories: UInt64, findings: [Finding], package: String, container: String,
                      request: AuditRequest, maximumNameBytes: UInt64) throws(Refusal) -> AuditOutcome {
    let settings = request.android
    let options = request.options(package)
    var backup: (name: String, entries: [(token: String, path: [UInt8], size: UInt64, isDirectory: Bool)])?
    if let path = settings.backupPath {
      do {
        let entries = try AndroidBackupStream.entries(atPath: path, password: request.password, maximumRounds: request.maximumKeyRounds,
                                                      maximumNameBytes: maximumNameBytes)
        backup = (TerminalText.escaped(path), entries.map { ($0.token, $0.path, $0.size, $0.isDirectory) })
      } catch {
        throw Refusal(.damaged, path: path, message: "\(TerminalText.escaped(path)): \(error.message)")
      }
    }
    // Android's quota is Android's: no option or policy key moves it. maxBackupSize,
    // maxFileSize and budgets are the app's own limits, on what each destination carries.
    let analysis = AndroidAnalysis(app: settings.app(package: package), tree: tree, rulesFiles: settings.rules,
                                   cloudQuota: AndroidFacts.cloudQuota, transferQuota: nil, warnAt: options.warnAt, limits: options,
                                   listed: options.listedCategories, top: options.top, backup: backup)
    var report = AuditReport(container: container, id: package, kind: .app, name: package, categories: analysis.categories,
                             directories: directories, maxFileSize: options.maxFileSize, maxBackupSize: options.maxBackupSize,
                             findings: Finding.sortedForReport(Auditor.applyPolicy(to: findings + analysis.findings, options: options)),
                             largest: analysis.largest,
                             entries: options.listedCategories.isEmpty ? nil : ListedEntries(analysis.listed))
    var platform = analysis.platform
    platform.targetSdkAssumed = settings.targetSdk == nil
    platform.deviceAPIAssumed = settings.deviceAPI == nil
    report.platform = platform
    report.budgets = analysis.budgets
    return AuditOutcome(reports: [report], available: [package], isCollection: false)
  }

  /// The walk's threads: `--jobs` when given, else one per online CPU (a warm cache's best; the
  /// Android walk does not grow on a cold one as `Walker` does).
  static func walkJobs(_ request: AuditRequest) -> Int {
    let options = request.options(nil)
    return options.jobsAreFixed ? options.jobs : AuditOptions.startingJobs
  }
}

/// An Android app's data folder in an archive (`adb exec-out run-as PKG tar c . > app.tar`, or
/// a tgz or zip of one), read with libarchive without extracting it: the names, kinds and
/// sizes are all the model needs. Taken for one by its shape (`AndroidDataFolder`'s, on the
/// top-level names of its first headers: `ArchiveKind`) or with `--platform android`.
struct AndroidArchiveSource: AndroidInput {
  let source: String
  let path: String
  /// `--max-name-bytes`: the most bytes of names its tree (and the Android backup, `--backup`)
  /// may keep.
  let maximumNameBytes: UInt64

  static let notMigrated = "an archive of an Android app's data; appdata migrate changes only folders"

  /// An entry's path as `tar x` would extract it in the data folder: `./` and empty components
  /// gone, `a/../` resolved (`files/./a/../b` is `files/b`); nil for one that climbs above the
  /// folder (`..` past its top), or an absolute name (`/abs/file` is not in the folder `tar c .`
  /// was run in), neither of which is counted.
  static func normalized(_ path: [UInt8]) -> [UInt8]? {
    if path.first == 0x2F { return nil }
    var components: [ArraySlice<UInt8>] = []
    for component in path.split(separator: 0x2F, omittingEmptySubsequences: true) {
      if component.elementsEqual([0x2E]) { continue }
      if component.elementsEqual([0x2E, 0x2E]) {
        guard !components.isEmpty else { return nil }
        components.removeLast()
        continue
      }
      components.append(component)
    }
    return Array(components.joined(separator: [0x2F]))
  }

  /// The package: as given, else the archive's name without its extensions where it looks
  /// like one (`com.example.app.tar.gz`), else `app`.
  static func packageName(_ settings: AndroidSettings, archive: String) -> String {
    if let package = settings.package { return package }
    var name = Syscalls.absolutePath(archive).split(separator: "/").last.map(String.init) ?? ""
    for suffix in [".gz", ".tgz", ".xz", ".zst", ".bz2", ".tar", ".zip"] where name.hasSuffix(suffix) { name.removeLast(suffix.count) }
    return AndroidSource.packageName(settings, folder: "/" + name)
  }

  func audit(_ request: AuditRequest) throws(Refusal) -> AuditOutcome {
    try FolderSource.refuseBackupOptions(request, path: path)
    var (tree, directories, findings) = try readTree()
    try AndroidSource.addStorages(request.android, jobs: AndroidSource.walkJobs(request), maximumNameBytes: maximumNameBytes, into: &tree,
                                  directories: &directories, findings: &findings)
    var outcome = try AndroidSource.outcome(tree: tree, directories: directories, findings: findings,
                                            package: Self.packageName(request.android, archive: path), container: source, request: request,
                                            maximumNameBytes: maximumNameBytes)
    // Its paths are not files on disk: SARIF locates its findings at the archive.
    for index in outcome.reports.indices { outcome.reports[index].archive = source }
    return outcome
  }

  /// The archive's entries as a tree, its folders counted, and what could not be counted.
  func readTree() throws(Refusal) -> (tree: AndroidTree, directories: UInt64, findings: [Finding]) {
    var tree = AndroidTree()
    let read = try readTree(into: &tree, storage: .credential)
    return (tree, read.directories, read.findings)
  }

  /// The archive's entries, read into `storage` of `tree`. What the tree and the findings keep
  /// of their names is at most `maximumNameBytes` more than the tree held before.
  func readTree(into tree: inout AndroidTree, storage: AndroidStorage) throws(Refusal) -> (directories: UInt64, findings: [Finding]) {
    let reader: LibArchive
    do { reader = try LibArchive(path: path) } catch {
      throw Refusal(.damaged, path: path, message: "\(TerminalText.escaped(path)): \(error.message)")
    }
    _ = tree.root(storage)
    var findings: [Finding] = []
    var directories: UInt64 = 0
    var names = NameBudget(maximum: maximumNameBytes)
    struct EntryKey: Hashable {
      var parent: AndroidTree.Node
      var hash: Int
    }
    var entries: [EntryKey: [AndroidTree.Node]] = [:]
    func keep(_ count: Int) throws(Refusal) {
      guard names.keep(count) else { throw Refusal(.tooLarge, path: path, message: "\(TerminalText.escaped(path)): \(names.exceeded)") }
    }
    while true {
      let header: ArchiveHeader
      do {
        guard let next = try reader.next() else { break }
        header = next
      } catch {
        throw Refusal(.damaged, path: path, message: "\(TerminalText.escaped(path)): \(error.message)")
      }
      guard let name = Self.normalized(header.path) else {
        try keep(header.path.count)
        let why = header.path.first == 0x2F ? "an absolute name, outside the folder the archive was made in" : "a name that climbs out of the archive ('..')"
        findings.append(Finding(rule: .unreadable, path: header.path, message: "\(why); not counted", bytes: nil))
        continue
      }
      if name.isEmpty { continue }
      guard name.count <= RelativePath.maximumLength, name.count(where: { $0 == 0x2F }) < RelativePath.maximumComponents else {
        let finding = RelativePath.tooDeep(name, components: name.count(where: { $0 == 0x2F }) + 1, source: "an archived name")
        try keep(finding.path.count)
        findings.append(finding)
        continue
      }
      let place = AndroidPath(storage, name)
      let held = tree.nameBytes
      let kind: AndroidTree.Kind = switch header.kind {
      case .directory: .directory
      case .regular: .file(size: header.size)
      default: .other
      }
      // A name given twice is one entry, the last one's (as `tar x` leaves it): files are
      // found by (folder, name) here, a folder by its place.
      let slash = name.lastIndex(of: 0x2F)
      let leaf = name[(slash.map { $0 + 1 } ?? 0)...]
      let parent = tree.folder(AndroidPath(storage, slash.map { Array(name[..<$0]) } ?? []))
      let key = parent.map { EntryKey(parent: $0, hash: leaf.hashValue) }
      let node: AndroidTree.Node
      if let existing = tree.isDirectory(place) ? tree.node(place) : key.flatMap({ entries[$0]?.first { tree.name(of: $0).elementsEqual(leaf) } }) {
        if kind == .directory && tree.kind(at: existing) != .directory { directories += 1 }
        tree.replace(existing, with: kind)
        node = existing
      } else {
        if kind == .directory { directories += 1 }
        node = tree.add(place, kind)
        if kind != .directory {
          let parent = parent ?? tree.node(AndroidPath(storage, slash.map { Array(name[..<$0]) } ?? []))!
          entries[EntryKey(parent: parent, hash: leaf.hashValue), default: []].append(node)
        }
      }
      if let target = header.linkTarget, header.kind == .symbolicLink { tree.setLinkTarget(node, target) }
      try keep(tree.nameBytes - held)
    }
    return (directories, findings)
  }
}

/// An app's data read into a tree, for callers outside the readers (the rules migration).
package enum AndroidData {
  /// The app's data at `path`: a folder, or a tar, tgz or zip of one.
  package static func tree(atPath path: String, maximumNameBytes: UInt64 = NameBudget.defaultMaximum) throws(Refusal) -> AndroidTree {
    try AndroidSource.readTree(path, maximumNameBytes: maximumNameBytes)
  }
}
