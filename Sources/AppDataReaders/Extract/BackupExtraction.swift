import AppDataSystem
import AppDataCore
import Synchronization
/// `appdata extract`: one app's domains out of a device backup, written as a container (or an
/// Xcode `.xcappdata` package, or a folder of containers with its groups and plugins).
///
/// The manifest is untrusted: every path is checked before anything is made from it, every
/// file and folder is created relative to its folder's descriptor with `O_NOFOLLOW | O_EXCL`
/// (a symlink the extraction made is never followed by a later row), payloads are opened
/// without following a symlink and only when they are regular files. The output is built in a
/// hidden sibling folder (`.OUT.appdata-extract-partial`) and renamed into place once complete;
/// on any failure, or an interrupt, the partial folder is removed. The backup is only read.
public enum BackupExtraction {
  /// What to extract, and where.
  package struct Request: Sendable {
    /// The app, group or plugin id (`AppDomain-ID`, `AppDomainGroup-ID`, `AppDomainPlugin-ID`).
    package var id: String
    /// Also the app's groups (`group.ID…`) and plugins (`ID.…`): OUT is a folder of containers.
    package var withExtensions = false
    /// OUT as typed.
    package var output: String
    package var force = false
    package var dryRun = false
    package var password: SecretBuffer?
    package var maximumKeyRounds = BackupKeybag.defaultMaximumRounds
    /// Checked between files and between chunks: true stops the extraction, which then
    /// removes what it wrote (Ctrl-C, SIGTERM).
    package var isInterrupted: @Sendable () -> Bool = { false }
    /// Testing only (`--test-stop-after N`): SIGKILL itself at the Nth checkpoint (after each
    /// entry written, and before the rename into place), as a crash there would.
    package var stopAfter: Int?
    /// Told the bytes written so far (the progress line).
    package var progress: (@Sendable (UInt64, UInt64) -> Void)?
    /// `appdata restore`: the tree is built beside the container it replaces and handed over
    /// complete, never renamed into place (`Restore`); no metadata plist is written.
    package var restore: RestoreHandoff?
    /// The id as it is, never a near one chosen for it (restore has chosen it on the device).
    package var exactID = false

    package init(id: String, output: String) {
      self.id = id
      self.output = output
    }
  }

  /// What was extracted, per container, and what was not, with why.
  public struct Report: Sendable {
    public struct Container: Sendable {
      public var id: String
      public var kind: ContainerKind
      public var domain: String
      /// Where its root is, relative to OUT (`.`, `AppData`, or its id).
      public var root: String
      /// What was written (with `dryRun`, what would be).
      public var written = TreeCounts()
      /// Files whose decrypted length differs from the manifest's `Size` (a live database).
      public var sizeDifferences: [(path: [UInt8], manifestSize: UInt64, written: UInt64)] = []
    }

    /// An entry not written, or written otherwise than the manifest says.
    public struct Problem: Sendable {
      public var domain: String
      public var path: [UInt8]
      public var message: String
      /// Not written (exit 1); a warning is written, with a difference (a symlink as data).
      public var isError: Bool
    }

    public var backup: String
    public var output: String
    public var isPackage = false
    public var dryRun = false
    public var containers: [Container] = []
    public var problems: [Problem] = []
    /// The id `--app` was taken to mean when it is not one the backup holds (a unique last
    /// component or substring); nil when it is.
    public var chosenID: String?
    /// The protection classes whose keys were unwrapped (an encrypted backup): only those the
    /// extracted files use. Not in the report's JSON; what the tests check.
    package var unwrappedClasses: [UInt32] = []
  }

  /// Every app, group and plugin domain the backup holds, in the manifest's order (read once per
  /// opened manifest: `Opened.appDomains`).
  static func appDomains(in database: SQLiteDatabase, backup: String) throws(Refusal) -> [(domain: String, kind: ContainerKind, id: String)] {
    var all: [(domain: String, kind: ContainerKind, id: String)] = []
    do {
      let statement = try database.prepare("SELECT DISTINCT domain FROM Files")
      while try statement.step() {
        let domain = String(decoding: statement.bytes(0), as: UTF8.self)
        guard let (kind, id) = BackupReader.appDomain(domain) else { continue }
        all.append((domain, kind, id))
      }
    } catch {
      throw Refusal(.damaged, path: backup, "cannot read the backup manifest: \(error.message)")
    }
    return all
  }

  /// The domains of `id` (and its extensions) in `source`, each with its kind and id.
  static func domains(in opened: Opened, request: Request, backup: String) throws(Refusal) -> [(domain: String, kind: ContainerKind, id: String)] {
    let all = try opened.appDomains(backup: backup)
    func matching(_ wanted: String) -> [(domain: String, kind: ContainerKind, id: String)] {
      all.filter { request.withExtensions ? AppFilter(ids: [wanted]).matches($0.id) : $0.id.utf8.elementsEqual(wanted.utf8) }
    }
    var wanted = request.id
    var found = matching(wanted)
    if found.isEmpty && request.exactID {
      throw Refusal(.notMatched, path: backup, message: "\(TerminalText.escaped(backup)): the backup holds no app, group or plugin '\(TerminalText.escaped(request.id))'")
    }
    if found.isEmpty {
      // Not an id it holds: the one id it plainly means (`whatsapp`, `WhatsApp`), or the
      // best candidates (the ids holding it, then near spellings), never an alphabetical list.
      switch AppChoice.choose(request.id, among: all.map(\.id)) {
      case .chosen(let id):
        wanted = id
        found = matching(id)
      case .candidates(let candidates):
        var message = "\(TerminalText.escaped(backup)): the backup holds no app, group or plugin '\(TerminalText.escaped(request.id))'"
        if candidates.count == 1 {
          message += " (did you mean '\(TerminalText.escaped(candidates[0]))'?)"
        } else if !candidates.isEmpty {
          message += "; it fits \(Plural.listed(candidates.map(TerminalText.escaped), limit: AppChoice.limit)): give one of them"
        } else {
          message += all.isEmpty ? "; it holds no app" : "; 'appdata audit --list-apps BACKUP' lists the \(Plural.counted(Set(all.map(\.id)).count, "id")) it holds, largest first"
        }
        throw Refusal(.notMatched, path: backup, message: message)
      }
    }
    // The app first, then its groups and plugins, each by its id's bytes.
    func rank(_ item: (domain: String, kind: ContainerKind, id: String)) -> Int {
      item.kind == .app && item.id.utf8.elementsEqual(wanted.utf8) ? 0 : 1
    }
    // Ties (one id in two domains) by the domain's bytes, so which one is written never varies.
    return found.sorted { a, b in
      if rank(a) != rank(b) { return rank(a) < rank(b) }
      if !a.id.utf8.elementsEqual(b.id.utf8) { return a.id.utf8.lexicographicallyPrecedes(b.id.utf8) }
      return a.domain.utf8.lexicographicallyPrecedes(b.domain.utf8)
    }
  }

  /// A backup's manifest, open (decrypted, for an encrypted one: its keys derived once), for
  /// several runs (restore's containers); the caller wipes `keys` when the last is done.
  final class Opened {
    let database: SQLiteDatabase
    let keys: UnlockedKeys
    /// The manifest's app, group and plugin domains, once read (restore asks for them before it
    /// builds, then each container's run).
    private var domainsRead: [(domain: String, kind: ContainerKind, id: String)]?
    init(database: SQLiteDatabase, keys: UnlockedKeys) {
      self.database = database
      self.keys = keys
    }

    /// `BackupExtraction.appDomains` of this manifest, read at the first call.
    func appDomains(backup: String) throws(Refusal) -> [(domain: String, kind: ContainerKind, id: String)] {
      if let domainsRead { return domainsRead }
      let read = try BackupExtraction.appDomains(in: database, backup: backup)
      domainsRead = read
      return read
    }
  }

  static func open(_ source: BackupSource, request: Request) throws(Refusal) -> Opened {
    // The writer keeps each of the backup's 256 shard folders open once it has read from it: a
    // Mac's default soft limit of 256 descriptors would refuse the copy of any real backup
    // (the hostile round of issue 52), so it goes up to the hard limit, as the audit's walk does.
    Syscalls.raiseOpenFileLimit()
    var reader = BackupReader(manifest: source.manifest, folderPath: source.folderPath)
    reader.password = request.password
    reader.maximumKeyRounds = request.maximumKeyRounds
    let keys = UnlockedKeys()
    reader.unlockedKeys = keys
    return Opened(database: try reader.open(), keys: keys)
  }

  /// Extracts (or, with `dryRun`, plans) the request from the backup (`opened`, when given,
  /// instead of opening it again).
  package static func run(_ source: BackupSource, request: Request) throws(Refusal) -> Report {
    try run(source, request: request, opened: nil)
  }

  static func run(_ source: BackupSource, request: Request, opened given: Opened?) throws(Refusal) -> Report {
    let opened: Opened
    if let given { opened = given } else { opened = try open(source, request: request) }
    let database = opened.database
    let keys = opened.keys
    // The class keys are unwrapped as files ask for them, and all released when this ends (or,
    // opened by the caller, when the caller's last run ends).
    defer { if given == nil { keys.value?.wipe() } }
    let domains = try domains(in: opened, request: request, backup: source.source)
    // `--app whatsapp` chose `net.whatsapp.WhatsApp`: the report says so.
    let chosen = domains.first.map(\.id).flatMap { first in
      domains.contains { $0.id.utf8.elementsEqual(request.id.utf8) } ? nil : first
    }
    let isPackage = !request.withExtensions && ExtractionOutput.normalized(request.output).hasSuffix(".xcappdata")
    var report = Report(backup: source.source, output: Syscalls.absolutePath(ExtractionOutput.normalized(request.output)), isPackage: isPackage,
                        dryRun: request.dryRun)
    report.chosenID = chosen
    let containers = plans(of: domains, request: request, isPackage: isPackage, backup: source.source, problems: &report.problems)
    let shared = try Plan.sharedFileIDs(database, backup: source.source)
    if request.dryRun {
      report.containers = try counted(containers, in: database, sharedFileIDs: shared, problems: &report.problems)
      return report
    }
    var archived: ArchivedBackup?
    if case .archive(let backup) = source.manifest.store { archived = backup }
    var total: UInt64 = 0
    if request.progress != nil {
      for plan in containers { total = total.saturatingSum(try plan.totalBytes(database)) }
    }
    var writer = try ExtractionWriter(request: request, backupPath: archived?.archivePath ?? source.folderPath,
                                      backupFolder: archived == nil ? source.folderPath : nil, isEncrypted: source.manifest.needsPassword,
                                      keys: keys.value, totalBytes: total)
    do {
      if isPackage, let app = containers.first {
        try writer.writePackageInfo(id: app.id, manifest: source.manifest)
      }
      for (index, plan) in containers.enumerated() {
        var container = plan.summary
        try writer.write(plan, from: database, sharedFileIDs: shared, into: &container, problems: &report.problems,
                         withMetadata: !isPackage && request.restore == nil,
                         containerIndex: index)
        report.containers.append(container)
      }
      if let archived, let archive = archived.archivePath {
        try writer.writePayloads(from: archived, archivePath: archive, containers: &report.containers, problems: &report.problems)
      }
    } catch {
      writer.abandon()
      throw error
    }
    // It puts OUT in place, or removes what it wrote, itself.
    try writer.finish()
    if let aside = writer.output.leftAside {
      // OUT is the new extraction; the one --force replaced could not be removed (its owner
      // record stays beside it, so the next run's sweep removes it).
      report.problems.append(Report.Problem(
        domain: "", path: [],
        message: "the extraction --force replaced could not be removed (something in it is not this user's to remove): it is left as \(TerminalText.escaped(RelativePath.display(aside))) beside OUT with its owner record; a later appdata extract to OUT removes it once it can, or remove it yourself",
        isError: false))
    }
    report.unwrappedClasses = keys.value?.unwrappedClasses ?? []
    return report
  }

  /// Each container's plan, its folder in OUT (`.`, a package's `AppData`, or with
  /// --with-extensions its id, which must be one name); a domain that cannot have one of its own
  /// is a problem, never written.
  private static func plans(of domains: [(domain: String, kind: ContainerKind, id: String)], request: Request, isPackage: Bool, backup: String,
                            problems: inout [Report.Problem]) -> [Plan] {
    var containers: [Plan] = []
    for (domain, kind, id) in domains {
      let root = request.withExtensions ? id : isPackage ? ExtractionWriter.packageContainerName : "."
      if request.withExtensions, let why = Plan.unsafeName(Array(id.utf8)) {
        problems.append(Report.Problem(domain: domain, path: [], message: "not written: its id \(why), so it cannot name a folder", isError: true))
        continue
      }
      // Two domains with one id (`AppDomain-X` and `AppDomainGroup-X`) would be one folder: the
      // first (the app) is written, the other is named, never written into it.
      if let first = containers.first(where: { $0.root.utf8.elementsEqual(root.utf8) }) {
        let place = root == "." ? "OUT" : isPackage ? "OUT's \(root)" : "OUT's folder \(root)"
        problems.append(Report.Problem(domain: domain, path: [],
                                       message: "not written: \(place) holds \(first.domain), which has the same id, and a folder holds one container",
                                       isError: true))
        continue
      }
      var plan = Plan(domain: domain, kind: kind, id: id, root: root, backup: backup)
      // A restore keeps the device's own metadata plist (it is linked in, the same file).
      plan.keepsMetadataPlist = request.restore != nil
      containers.append(plan)
    }
    return containers
  }

  /// `--dry-run`: each container's folders, files, symlinks and bytes as the manifest records
  /// them, and the rows that would not be written; nothing is made.
  private static func counted(_ containers: [Plan], in database: SQLiteDatabase, sharedFileIDs shared: Set<String>,
                              problems: inout [Report.Problem]) throws(Refusal) -> [Report.Container] {
    var counted: [Report.Container] = []
    for plan in containers {
      var container = plan.summary
      try plan.each(database, sharedFileIDs: shared) { entry throws(Refusal) in
        switch entry.kind {
        case .folder: container.written.folders += 1
        case .file: container.written.addFile(bytes: entry.record?.size ?? 0)
        case .symlink: container.written.symlinks += 1
        }
      } problem: { problems.append($0) }
      counted.append(container)
    }
    return counted
  }
}

/// The class keys an encrypted backup's password unwraps, kept from opening its manifest.
final class UnlockedKeys: Sendable {
  private let unlocked = Mutex<BackupDecryption.Unlocked?>(nil)
  var value: BackupDecryption.Unlocked? {
    get { unlocked.withLock { $0 } }
    set { unlocked.withLock { $0 = newValue } }
  }
}

extension BackupExtraction {
  /// One domain's rows, read from the manifest as they are needed, never all held: checked, in
  /// path order component by component (a folder, then everything it holds, then what follows
  /// it), which SQLite sorts (through a temporary file, or memory for a decrypted manifest) so a
  /// manifest of any size costs the same memory. The rows that will not be written are told
  /// with why.
  struct Plan {
    struct Entry {
      enum Kind { case folder, file, symlink }
      var path: [UInt8]
      var kind: Kind
      var fileID: String
      var record: MBFileRecord?
    }

    var domain: String
    var kind: ContainerKind
    var id: String
    /// The container's folder relative to OUT.
    var root: String
    var backup: String
    /// A row for the container's metadata plist is not written (restore: the container keeps
    /// its own, which the new tree is given; a row of it would collide with it).
    var keepsMetadataPlist = false

    /// The container with nothing counted yet.
    var summary: Report.Container { Report.Container(id: id, kind: kind, domain: domain, root: root) }

    /// Rows sorted by path, `/` before every other byte: a folder's rows follow it, together.
    /// Ties (two rows with one path) in fileID order, so which one is written never varies.
    static let pathOrder = "ORDER BY replace(CAST(relativePath AS BLOB), '/', char(0)), CAST(fileID AS BLOB)"
    static let orderedRows = "SELECT fileID, relativePath, flags, file FROM Files WHERE domain = ?1 " + pathOrder

    private func failed(_ error: SQLiteDatabase.Failure) -> Refusal {
      Refusal(.damaged, path: backup, "cannot read the backup manifest: \(error.message)")
    }

    /// The fileIDs more than one file row claims: each such row is reported, never written (which
    /// row the payload is the content of cannot be told), from a folder as from an archive.
    static func sharedFileIDs(_ database: SQLiteDatabase, backup: String) throws(Refusal) -> Set<String> {
      var shared = Set<String>()
      do {
        let statement = try database.prepare("SELECT fileID FROM Files WHERE flags = 1 GROUP BY fileID HAVING count(*) > 1")
        while try statement.step() { shared.insert(String(decoding: statement.bytes(0), as: UTF8.self)) }
      } catch {
        throw Refusal(.damaged, path: backup, "cannot read the backup manifest: \(error.message)")
      }
      return shared
    }

    /// The bytes the manifest records for the domain's files (the progress line's total).
    func totalBytes(_ database: SQLiteDatabase) throws(Refusal) -> UInt64 {
      var total: UInt64 = 0
      do {
        let statement = try database.prepare("SELECT file FROM Files WHERE domain = ?1 AND flags = 1")
        statement.bind(1, domain)
        while try statement.step() { total = total.saturatingSum(MBFileRecord.decode(Array(statement.bytes(0)))?.size ?? 0) }
      } catch {
        throw failed(error)
      }
      return total
    }

    /// What `symlinks` holds in memory at most, paths and targets together.
    static let maximumSymlinkBytes = 64 << 20

    /// The domain's symlink rows that pass `each`'s checks, path and target, in its order, and
    /// whether that is all of them (false past `maximumSymlinkBytes`: the rest are files).
    func symlinks(_ database: SQLiteDatabase) throws(Refusal) -> (links: [(path: [UInt8], target: [UInt8])], isComplete: Bool) {
      var links: [(path: [UInt8], target: [UInt8])] = []
      var bytes = 0
      do {
        let statement = try database.prepare("SELECT relativePath, file FROM Files WHERE domain = ?1 AND flags = 4 " + Self.pathOrder)
        statement.bind(1, domain)
        while try statement.step() {
          let path = Array(statement.bytes(0))
          guard !path.isEmpty, Self.unsafePath(path) == nil, let target = MBFileRecord.decode(Array(statement.bytes(1)))?.target,
                Self.unsafeTarget(target) == nil else { continue }
          bytes += path.count + target.count
          if bytes > Self.maximumSymlinkBytes { return (links, false) }
          links.append((path, target))
        }
      } catch {
        throw failed(error)
      }
      return (links, true)
    }

    /// Each row to write, in path order, handed to `body`; each row that will not be, to
    /// `problem`. The container's own row (an empty path) to `root`.
    func each(_ database: SQLiteDatabase, sharedFileIDs: Set<String>, root: (MBFileRecord?) -> Void = { _ in },
              _ body: (Entry) throws(Refusal) -> Void, problem report: (Report.Problem) -> Void) throws(Refusal) {
      let statement: SQLiteDatabase.Statement
      do {
        statement = try database.prepare(Self.orderedRows)
      } catch {
        throw failed(error)
      }
      statement.bind(1, domain)
      var previous: [UInt8]?
      while true {
        do {
          guard try statement.step() else { break }
        } catch {
          throw failed(error)
        }
        let fileID = String(decoding: statement.bytes(0), as: UTF8.self)
        let path = Array(statement.bytes(1))
        let flags = statement.integer(2)
        let record = MBFileRecord.decode(Array(statement.bytes(3)))
        func problem(_ message: String) {
          report(Report.Problem(domain: domain, path: path, message: message, isError: true))
        }
        if path.isEmpty {
          if previous == nil { root(record) }
          previous = path
          continue
        }
        if let why = Self.unsafePath(path) {
          problem("not written: its path \(why)")
          continue
        }
        if keepsMetadataPlist && path.elementsEqual(ContainerLayout.metadataFileName.utf8) {
          report(Report.Problem(domain: domain, path: path, message: "not written: the container keeps the device's own metadata plist", isError: false))
          previous = path
          continue
        }
        // Rows come in path order: a second row with a path is the one right after the first.
        guard previous != path else {
          problem("not written: a second row with the same path")
          continue
        }
        previous = path
        let entryKind: Entry.Kind
        switch flags {
        case 1: entryKind = .file
        case 2: entryKind = .folder
        case 4: entryKind = .symlink
        default:
          problem("not written: flags \(flags) name no kind appdata knows (1 file, 2 folder, 4 symlink)")
          continue
        }
        if entryKind == .file {
          if fileID.utf8.count != 40 || !fileID.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) {
            problem("not written: its fileID is not 40 hexadecimal digits")
            continue
          }
          if sharedFileIDs.contains(fileID) {
            problem("not written: another file row has the same fileID, so whose payload it is cannot be told")
            continue
          }
        }
        if entryKind == .symlink {
          guard let target = record?.target else {
            problem("not written: a symlink whose record names no target")
            continue
          }
          if let why = Self.unsafeTarget(target) {
            problem("not written: a symlink whose target \(why)")
            continue
          }
        }
        try body(Entry(path: path, kind: entryKind, fileID: fileID, record: record))
      }
    }

    /// Why a manifest path may not be written, or nil: `..`, `.` or empty components, a
    /// leading `/`, a NUL, beyond Linux's path limits, or a component named as appdata's own
    /// files are (`OwnedArtifact.isReserved`: a journal, a partial copy, an owner record), which
    /// a later run must never take for its own.
    static func unsafePath(_ path: [UInt8]) -> String? {
      if path.first == 0x2F { return "starts with '/'" }
      if path.count > 4096 { return "is longer than 4096 bytes" }
      // One pass over the bytes: each component's start, and what ends it.
      return path.withUnsafeBufferPointer { bytes -> String? in
        var components = 1
        var start = 0
        for index in 0...bytes.count {
          let byte: UInt8 = index < bytes.count ? bytes[index] : 0x2F
          if byte == 0 { return "holds a NUL byte" }
          guard byte == 0x2F else { continue }
          let length = index - start
          if length == 0 { return "has an empty component" }
          if length == 1 && bytes[start] == 0x2E { return "has a '.' component" }
          if length == 2 && bytes[start] == 0x2E && bytes[start + 1] == 0x2E { return "has a '..' component" }
          if length > 255 { return "has a component longer than 255 bytes" }
          if bytes[start] == 0x2E && OwnedArtifact.isReserved(Array(bytes[start..<index])) {
            return "has a component named as appdata's own files are (.appdata-*, .NAME.appdata-*)"
          }
          if index < bytes.count {
            components += 1
            if components > 1024 { return "has more than 1024 components" }
          }
          start = index + 1
        }
        return nil
      }
    }

    /// Why a name (an extension's id used as its folder's name) is not one folder name, or nil.
    static func unsafeName(_ name: [UInt8]) -> String? {
      if name.isEmpty { return "is empty" }
      if name.contains(0x2F) { return "holds a '/'" }
      if name.contains(0) { return "holds a NUL byte" }
      if name.elementsEqual([0x2E]) || name.elementsEqual([0x2E, 0x2E]) { return "is '\(RelativePath.display(name))'" }
      if name.count > 255 { return "is longer than 255 bytes" }
      return nil
    }

    /// Why a symlink's target cannot be written as one, or nil: a NUL would cut it short, and
    /// Linux takes at most 4095 bytes.
    static func unsafeTarget(_ target: [UInt8]) -> String? {
      if target.contains(0) { return "holds a NUL byte" }
      if target.count > 4095 { return "is longer than 4095 bytes" }
      return nil
    }
  }
}
