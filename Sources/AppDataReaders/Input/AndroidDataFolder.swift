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
    return source(folder, base: base)
  }

  static func isDataFolder(_ folder: ProbedFolder) -> Bool {
    if folder.isFile(ContainerLayout.metadataFileName) || ContainerPlaces.rootFolderNames.contains(where: folder.isFolder) { return false }
    return androidFolders.contains(where: folder.isFolder) || (folder.isFolder("files") && folder.isFolder("cache"))
  }

  static func source(_ folder: ProbedFolder, base: String) -> any ContainerSource {
    AndroidSource(source: Syscalls.absolutePath(folder.path), path: folder.path)
  }
}

/// An Android data folder, audited as Android's backup would walk it (`AndroidAnalysis`).
struct AndroidSource: ContainerSource {
  let source: String
  /// The folder as typed.
  let path: String

  var isCollection: Bool { false }
  var identities: [FileIdentity?] { [Syscalls.identity(ofPath: path)] }
  func excluding(_ seen: Set<FileIdentity>) -> (any ContainerSource)? { wholeExcluding(seen) }

  func folders() throws(Refusal) -> [ContainerRef] {
    throw Refusal(.notAnInput, path: path, message: "\(TerminalText.escaped(path)): an Android app's data folder; appdata migrate moves an iOS container's Library/Caches, which Android has no need of")
  }

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
    let settings = request.android
    let package = Self.packageName(settings, folder: path)
    let options = request.options(package)
    var tree = AndroidTree()
    var findings: [Finding] = []
    var directories: UInt64 = 0
    do {
      let root = try Syscalls.openDirectory(atPath: path)
      tree.add(AndroidPath(.credential, []), .directory)
      try Self.walk(root, storage: .credential, into: &tree, directories: &directories, findings: &findings)
    } catch {
      throw Refusal(.unreadable, path: path, message: TerminalText.escaped(error.description))
    }
    let analysis = AndroidAnalysis(app: settings.app(package: package), tree: tree, rulesFiles: settings.rules,
                                   cloudQuota: options.maxBackupSize ?? AndroidFacts.cloudQuota, transferQuota: nil, warnAt: options.warnAt)
    var categories: [Category: CategoryTotals] = [:]
    var largest: [LargeFile] = []
    var listed: [ListedEntry] = []
    for file in analysis.categories {
      categories[file.category, default: CategoryTotals()].add(CategoryTotals(files: 1, bytes: file.bytes, allocatedBytes: file.bytes))
      if file.category == .critical { largest.append(LargeFile(path: file.path, bytes: file.bytes, category: .critical)) }
      if options.listedCategories.contains(file.category) {
        listed.append(ListedEntry(path: file.path, category: file.category, bytes: file.bytes, allocatedBytes: file.bytes, marker: []))
      }
    }
    largest.sort(by: LargeFile.isLarger)
    var report = AuditReport(container: source, id: package, kind: .app, name: package, categories: categories, directories: directories,
                             maxFileSize: options.maxFileSize, maxBackupSize: analysis.summary.cloud.quota,
                             findings: Finding.sortedForReport(Auditor.applyPolicy(to: findings + analysis.findings, options: options)),
                             largest: Array(largest.prefix(options.top)),
                             entries: options.listedCategories.isEmpty ? nil : ListedEntries(listed))
    report.android = analysis.summary
    return AuditOutcome(reports: [report], available: [package], isCollection: false)
  }

  /// Every entry below `folder`, depth first, through descriptors (no symlink is followed).
  static func walk(_ root: FileDescriptor, storage: AndroidStorage, into tree: inout AndroidTree, directories: inout UInt64,
                   findings: inout [Finding]) throws(SystemError) {
    var stack: [(FileDescriptor, [UInt8])] = [(root, [])]
    while let (folder, path) = stack.popLast() {
      let stream: DirectoryStream
      do { stream = try DirectoryStream(taking: folder, displayPath: RelativePath.display(path)) } catch {
        if path.isEmpty { throw error }
        findings.append(Finding(rule: .unreadable, path: path, message: "cannot read the folder: \(error.reason)", bytes: nil))
        continue
      }
      var names: [([UInt8], DirectoryEntryType)] = []
      let failure = stream.forEachEntry { cName, length, type in
        names.append((cName.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }, type))
      }
      if let failure {
        findings.append(Finding(rule: .unreadable, path: path.isEmpty ? [0x2E] : path, message: "cannot read the folder: \(SystemError(code: failure, operation: .readFolder, path: "").reason)", bytes: nil))
      }
      for (name, _) in names.sorted(by: { $0.0.lexicographicallyPrecedes($1.0) }) {
        let child = path.isEmpty ? name : path + [0x2F] + name
        guard child.count <= RelativePath.maximumLength, child.count(where: { $0 == 0x2F }) < RelativePath.maximumComponents else {
          findings.append(RelativePath.tooDeep(child, components: child.count(where: { $0 == 0x2F }) + 1, source: "a path"))
          continue
        }
        let status: FileStatus
        switch withCName(name, { Syscalls.status(cName: $0, in: stream.descriptor) }) {
        case .success(let found): status = found
        case .failure(let error):
          findings.append(Finding(rule: .unreadable, path: child, message: "cannot read the status: \(SystemError(code: error.code, operation: .readStatus, path: "").reason)", bytes: nil))
          continue
        }
        let place = AndroidPath(storage, child)
        switch status.kind {
        case .directory:
          tree.add(place, .directory)
          directories += 1
          switch withCName(name, { Syscalls.open(cName: $0, in: stream.descriptor, options: .directory) }) {
          case .success(let opened): stack.append((opened, child))
          case .failure(let error):
            findings.append(Finding(rule: .unreadable, path: child, message: "cannot open the folder: \(SystemError(code: error.code, operation: .openFolder, path: "").reason)", bytes: nil))
          }
        case .regular: tree.add(place, .file(size: status.size))
        default: tree.add(place, .other)
        }
      }
    }
  }
}
