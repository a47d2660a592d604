import AppDataSystem
import AppDataCore
import Synchronization

/// What appdata takes CoreSimulator's device folders to be that Apple documents nowhere
/// (Docs/restore.md, "Unconfirmed facts", says where each comes from): change them here, in one
/// place. The state values are a third party's reading (avito-tech/Emcee's CoreSimulatorState,
/// read from `device.plist`'s `state`), not Apple's.
package enum SimulatorFacts {
  /// The folder below the home folder that holds one folder per Simulator device (its UDID).
  package static let devicesFolder = ["Library", "Developer", "CoreSimulator", "Devices"]
  /// The device's own plist, in its folder, and the key holding its state.
  package static let devicePlist = "device.plist"
  package static let stateKey = "state"
  /// `state` values as simctl names them (*unconfirmed*: CoreSimulator's SimDeviceState).
  package static let states: [Int64: String] = [0: "Creating", 1: "Shutdown", 2: "Booting", 3: "Booted", 4: "Shutting Down"]
  /// The one state in which a device's data may be replaced.
  package static let shutdown: Int64 = 1
}

/// Hands the partial folder extract's writer builds (`ExtractionWriter`, `ExtractionOutput`)
/// to the restore, complete, instead of renaming it into place.
package final class RestoreHandoff: Sendable {
  /// The folder holding the container (`Data/Application`, …), kept open by the restore.
  package let folder: FileDescriptor
  /// The container's folder name (its UUID).
  package let name: [UInt8]
  package let displayPath: String
  private let taken = Mutex<(artifact: OwnedArtifact, checkpoints: Int)?>(nil)

  /// `.NAME.appdata-restore-`: the name of every restore's folder beside the container NAME:
  /// the new contents being built, then (after the exchange) the previous contents, kept.
  package static func prefix(of name: [UInt8]) -> [UInt8] { [0x2E] + name.prefix(180) + Array(".appdata-restore-".utf8) }

  init(folder: FileDescriptor, name: [UInt8], displayPath: String) {
    self.folder = folder
    self.name = name
    self.displayPath = displayPath
  }

  func take(_ artifact: OwnedArtifact, checkpoints: Int) { taken.withLock { $0 = (artifact, checkpoints) } }
  var result: (artifact: OwnedArtifact, checkpoints: Int)? { taken.withLock { $0 } }
}

/// How `restore(source:simulator:app:options:password:)` and `undoRestore` run.
public struct RestoreOptions: Sendable {
  /// Also the app's groups and plugins installed on the device.
  public var withExtensions = false
  /// Plan and report, change nothing.
  public var dryRun = false
  /// The backup's folder inside SOURCE, by components, when SOURCE holds several (`--root`).
  public var root: [[UInt8]]?
  public var maximumKeyRounds = BackupKeybag.defaultMaximumRounds
  public var maximumNameBytes = NameBudget.defaultMaximum
  /// Checked between files: true stops the restore before its exchange; nothing is changed.
  public var isInterrupted: @Sendable () -> Bool = { false }
  /// Told the bytes written so far and the bytes to write.
  public var progress: (@Sendable (UInt64, UInt64) -> Void)?
  /// Where a bare UDID is looked for (default `$HOME/Library/Developer/CoreSimulator/Devices`).
  public var devicesFolder: String?
  /// Testing only (`--test-stop-after N`): SIGKILL at the Nth checkpoint.
  package var stopAfter: Int?

  public init() {}
}

/// What a restore (or an undo) did, or with `dryRun` would do, per container.
public struct RestoreReport: Sendable {
  public struct Container: Sendable {
    public var id: String
    public var kind: ContainerKind
    /// The container's folder on the device (its UUID is its name).
    public var path: String
    /// What it holds now (after), from the backup (restore) or the kept copy (undo).
    public var contents = TreeCounts()
    /// What it held before, which the restore replaces (the metadata plist is not counted).
    public var replacedFiles: UInt64 = 0
    public var replacedBytes: UInt64 = 0
    /// Where the previous contents are kept (restore), and the bytes they take.
    public var keptCopy: String?
    public var keptBytes: UInt64 = 0
  }

  public var source: String
  public var device: String
  public var udid: String
  public var isUndo = false
  public var dryRun = false
  public var containers: [Container] = []
  /// Rows of the backup not written, with why (as `extract` reports them), and extensions the
  /// backup holds that are not installed on the device.
  public var problems: [ExtractReport.Problem] = []
  /// The id `--app` was taken to mean when it is not one installed (a unique match).
  public var chosenID: String?
}

/// Why a restore (or an undo) did not run. Nothing on the device was changed.
public enum RestoreFailure: JobFailure {
  case refused(Refusal)
  case password(Refusal)
  case interrupted(device: String)

  /// The failure as a `Refusal` (exit status 2); `message` is its line.
  public var refusal: Refusal {
    switch self {
    case .refused(let refusal), .password(let refusal): return refusal
    case .interrupted(let device):
      return Refusal(.interrupted, path: device, message: "\(TerminalText.escaped(device)): interrupted; the device was left as it was")
    }
  }
}

/// A Simulator device folder: its plist read, its places' containers listed by id. Not
/// copyable: the folder is closed when its one owner (a restore, an undo) ends.
struct SimulatorDeviceFolder: ~Copyable {
  let path: String
  private let owner: OwnedDescriptor
  var folder: FileDescriptor { owner.descriptor }
  let udid: String
  struct Installed {
    var place: ContainerPlace
    var name: [UInt8]
    var id: String?
    /// Why its metadata plist names no id (missing, not a plist, no identifier).
    var problem: String?
  }

  /// DEVICE as typed: a folder, or a UDID under `devices` (or the default Devices folder).
  init(_ typed: String, devices: String?) throws(Refusal) {
    let escaped = TerminalText.escaped(typed)
    var opened: FileDescriptor?
    var shown = typed
    if (try? Syscalls.status(ofPath: typed))?.isDirectory == true || typed.contains("/") {
      do { opened = try Syscalls.openDirectory(atPath: typed) } catch {
        throw Refusal(.notFound, path: typed, message: "\(escaped): cannot open the Simulator device folder: \(error.reason)")
      }
    } else {
      let base: String
      if let devices { base = devices } else {
        guard let home = Syscalls.environment("HOME"), !home.isEmpty else {
          throw Refusal(.notFound, path: typed, message: "\(escaped): not a folder, and HOME is not set to find it among the Simulator's devices; give the device's folder")
        }
        base = home + "/" + SimulatorFacts.devicesFolder.joined(separator: "/")
      }
      shown = base + "/" + typed
      guard Beneath.isPlainName(Array(typed.utf8)), let devicesDescriptor = try? Syscalls.openDirectory(atPath: base) else {
        throw Refusal(.notFound, path: typed, message: "\(escaped): no such Simulator device (not a folder, nor a device in \(TerminalText.escaped(base)))")
      }
      let devicesFolder = OwnedDescriptor(owning: devicesDescriptor)
      do { opened = try Syscalls.open(Array(typed.utf8), in: devicesFolder.descriptor, options: .directory, displayPath: shown) } catch {
        throw Refusal(.notFound, path: typed, message: "\(escaped): no such Simulator device in \(TerminalText.escaped(base)) (\(error.reason))")
      }
    }
    // Closed when a check below refuses; once they pass, this value owns it.
    let device = OwnedDescriptor(owning: opened!)
    // The device's plist: its UDID and state.
    let plist: PropertyList
    do {
      // Without blocking: a FIFO in its place is refused as not a file, never waited on.
      let bytes = OwnedDescriptor(owning: try Beneath.open([Array(SimulatorFacts.devicePlist.utf8)], below: device.descriptor, options: .readMaybeFile, displayPath: shown))
      let data = try Syscalls.status(of: bytes.descriptor, displayPath: shown).kind == .regular
        ? Syscalls.readUpTo(bytes.descriptor, PropertyList.Limits.maximumFileSize, displayPath: shown) : []
      plist = try PropertyList.parse(data)
    } catch let error as SystemError {
      throw Refusal(.notAnInput, path: shown, message: "\(TerminalText.escaped(shown)): not a Simulator device (its \(SimulatorFacts.devicePlist) cannot be read: \(error.reason))")
    } catch {
      throw Refusal(.damaged, path: shown, message: "\(TerminalText.escaped(shown)): its \(SimulatorFacts.devicePlist) is not a property list appdata reads")
    }
    let lastComponent = RelativePath.components(Array(Syscalls.absolutePath(shown).utf8)).last.map { String(decoding: $0, as: UTF8.self) } ?? typed
    let udid = plist["UDID"]?.stringValue ?? lastComponent
    guard let state = plist[SimulatorFacts.stateKey]?.integerValue else {
      throw Refusal(.damaged, path: shown, message: "\(TerminalText.escaped(shown)): its \(SimulatorFacts.devicePlist) has no integer '\(SimulatorFacts.stateKey)', so whether the device is shut down cannot be told; appdata changes only a device that is")
    }
    if state != SimulatorFacts.shutdown {
      let name = SimulatorFacts.states[state].map { "\($0), state \(state)" } ?? "state \(state)"
      throw Refusal(.conflict, path: shown, message: "\(TerminalText.escaped(shown)): the device is not shut down (\(name)); run 'xcrun simctl shutdown \(TerminalText.escaped(udid))' first")
    }
    // Every check passed: the value is made whole at once (a noncopyable one cannot be left
    // half made by a refusal).
    path = shown
    self.udid = udid
    owner = device
  }

  /// The components of a place's folder below the device folder.
  static func components(of place: ContainerPlace) -> [[UInt8]] {
    (["data", "Containers"] + place.pattern).map { Array($0.utf8) }
  }

  /// The place's folder, open, or nil when the device has none.
  func open(_ place: ContainerPlace) -> FileDescriptor? {
    try? Beneath.open(Self.components(of: place), below: folder, options: .directory, displayPath: path)
  }

  /// Every container of `place`, with the id its metadata plist names (hidden names are appdata's
  /// or a user's, never a container).
  func installed(_ place: ContainerPlace) -> [Installed] {
    guard let opened = open(place) else { return [] }
    let owner = OwnedDescriptor(owning: opened)
    let placeFolder = owner.descriptor
    var result: [Installed] = []
    for name in Syscalls.entryNames(of: placeFolder).sorted(by: RelativePath.precedes) where name.first != 0x2E {
      guard (try? Syscalls.status(of: name, in: placeFolder, displayPath: ""))?.isDirectory == true else { continue }
      var item = Installed(place: place, name: name)
      switch Self.metadataID(name, in: placeFolder) {
      case .success(let id): item.id = id
      case .failure(let why): item.problem = why.message
      }
      result.append(item)
    }
    return result
  }

  /// The id a container's metadata plist names; a refusal saying why not.
  static func metadataID(_ name: [UInt8], in placeFolder: FileDescriptor) -> Result<String, Refusal> {
    let file = ContainerLayout.metadataFileName
    let bytes: [UInt8]
    do {
      let opened = OwnedDescriptor(owning: try Beneath.open([name, Array(file.utf8)], below: placeFolder, options: .readMaybeFile, displayPath: file))
      guard try Syscalls.status(of: opened.descriptor, displayPath: file).kind == .regular else { return .failure(Refusal(.damaged, "\(file) is not a file")) }
      bytes = try Syscalls.readUpTo(opened.descriptor, PropertyList.Limits.maximumFileSize, displayPath: file)
    } catch {
      return .failure(error.errno == .noSuchFileOrDirectory ? Refusal(.damaged, "its \(file) is missing") : Refusal(.unreadable, "its \(file) cannot be read (\(error.reason))"))
    }
    guard let plist = try? PropertyList.parse(bytes) else { return .failure(Refusal(.damaged, "its \(file) is damaged (not a property list appdata reads)")) }
    guard let id = plist[ContainerPlaces.identifierKey]?.stringValue, !id.isEmpty else {
      return .failure(Refusal(.damaged, "its \(file) is damaged (no \(ContainerPlaces.identifierKey))"))
    }
    return .success(id)
  }
}

/// One container a restore replaces, or an undo puts back.
struct RestoreTarget {
  var place: ContainerPlace
  var kind: ContainerKind
  var name: [UInt8]
  var id: String
  var path: String
}

extension Restore {
  /// The containers to act on: the app's, found by id (a unique match chosen as `--app` is
  /// elsewhere), and with `withExtensions` its groups and plugins. Refuses, naming the ids that
  /// are installed, best match first, and the containers whose metadata plist names none.
  static func targets(_ device: borrowing SimulatorDeviceFolder, app: String, withExtensions: Bool) throws(Refusal) -> (targets: [RestoreTarget], chosen: String?) {
    let appPlace = ContainerPlaces.places.first { $0.kind == .app }!
    let apps = device.installed(appPlace)
    let ids = apps.compactMap(\.id)
    var wanted = app
    var chosen: String?
    if !ids.contains(where: { $0.utf8.elementsEqual(app.utf8) }) {
      let shown = TerminalText.escaped(device.path)
      let unreadable = apps.filter { $0.id == nil }
      let damaged = unreadable.isEmpty ? "" : "; " + Plural.listed(unreadable.map {
        "\(TerminalText.escaped(RelativePath.display($0.name))): \($0.problem ?? "")"
      }, limit: 5) + (unreadable.count == 1 ? " (a container whose id cannot be told)" : " (containers whose id cannot be told)")
      switch AppChoice.choose(app, among: ids) {
      case .chosen(let id) where unreadable.isEmpty:
        wanted = id
        chosen = id
      case .chosen(let id):
        throw Refusal(.notMatched, path: device.path, message: "\(shown): no app '\(TerminalText.escaped(app))' is installed (did you mean '\(TerminalText.escaped(id))'?)\(damaged)")
      case .candidates(let candidates):
        // Every installed id, those that fit first (holding it, then near spellings).
        let listed = candidates + Set(ids).subtracting(candidates).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let installed = ids.isEmpty ? "no app is installed" : "installed: \(Plural.listed(listed.map(TerminalText.escaped), limit: AppChoice.limit))"
        throw Refusal(.notMatched, path: device.path, message: "\(shown): no app '\(TerminalText.escaped(app))' is installed; \(installed)\(damaged)")
      }
    }
    let claiming = apps.filter { $0.id.map { $0.utf8.elementsEqual(wanted.utf8) } ?? false }
    guard let container = claiming.first else {
      throw Refusal(.notMatched, path: device.path, message: "\(TerminalText.escaped(device.path)): no app '\(TerminalText.escaped(wanted))' is installed")
    }
    // Which one the Simulator runs cannot be told from the folders: neither is replaced.
    guard claiming.count == 1 else {
      throw Refusal(.conflict, path: device.path, message: "\(TerminalText.escaped(device.path)): \(claiming.count) containers claim '\(TerminalText.escaped(wanted))' ("
                    + Plural.listed(claiming.map { TerminalText.escaped(RelativePath.display($0.name)) }, limit: 5) + "); appdata restores into one container only when one claims the id")
    }
    func target(_ item: SimulatorDeviceFolder.Installed, kind: ContainerKind) -> RestoreTarget {
      let place = SimulatorDeviceFolder.components(of: item.place).map { String(decoding: $0, as: UTF8.self) }.joined(separator: "/")
      return RestoreTarget(place: item.place, kind: kind, name: item.name, id: item.id ?? "",
                           path: device.path + "/" + place + "/" + RelativePath.display(item.name))
    }
    var targets = [target(container, kind: .app)]
    if withExtensions {
      let filter = AppFilter(ids: [wanted])
      for place in ContainerPlaces.places where place.kind == .group || place.kind == .plugin {
        for item in device.installed(place) where filter.matches(item.id) {
          targets.append(target(item, kind: place.kind!))
        }
      }
    }
    // What appdata writes is the running user's: into another user's container it would make
    // files the Simulator (run as that user) cannot change.
    for target in targets {
      guard let opened = device.open(target.place) else { continue }
      let place = OwnedDescriptor(owning: opened)
      if let owner = (try? Syscalls.status(of: target.name, in: place.descriptor, displayPath: ""))?.owner, owner != Syscalls.effectiveUserID {
        throw Refusal(.cannotWrite, path: target.path, message: "\(TerminalText.escaped(target.path)): the container is user \(owner)'s, not this user's (\(Syscalls.effectiveUserID)); run appdata restore as the user the Simulator runs as")
      }
    }
    return (targets, chosen)
  }
}

/// `appdata restore`: one app's data from a device backup into the app's data container on a
/// shut-down Simulator device (Docs/restore.md).
///
/// The new contents are made by extract's own writer (`BackupExtraction` with a
/// `RestoreHandoff`) into `.UUID.appdata-restore-TOKEN` beside the container `UUID`, an owner
/// record of the run's beside it (`OwnedArtifact`). The container's metadata plist is linked
/// into it (the same file, untouched), the container folder's mode, times and extended
/// attributes copied onto it; then one `renameat2(RENAME_EXCHANGE)` (`renamex_np(RENAME_SWAP)`
/// on macOS) swaps the two names: the container `UUID` is wholly new, and the hidden name holds
/// its previous contents, kept for `--undo`. The record says, before the swap, that its name may
/// name either folder (the new first, the previous second), so whichever side of the swap a run
/// is killed on, the next run tells a partial folder (removed) from a kept copy (kept).
package enum Restore {
  static func display(_ target: RestoreTarget) -> String { TerminalText.escaped(target.path) }

  /// Files and bytes in a folder's tree (`skipping` names at its top), symlinks not followed.
  static func measure(_ folder: FileDescriptor, skipping: Set<[UInt8]> = []) -> TreeCounts {
    var totals = TreeCounts()
    func walk(_ folder: FileDescriptor, depth: Int, top: Bool) {
      for name in Syscalls.entryNames(of: folder) where !(top && skipping.contains(name)) {
        guard let status = try? Syscalls.status(of: name, in: folder, displayPath: "") else { continue }
        totals.add(status)
        guard status.kind == .directory, depth < 4096,
              let opened = try? Syscalls.open(name, in: folder, options: .directory, displayPath: "") else { continue }
        let inner = OwnedDescriptor(owning: opened)
        walk(inner.descriptor, depth: depth + 1, top: false)
      }
    }
    walk(folder, depth: 0, top: true)
    return totals
  }

  /// The attribute restore sets on the kept copy beside the do-not-back-up marker when it adds
  /// that marker, so `--undo` removes exactly what it added.
  static let markedAttribute = MarkerTable.platformAttributeName("appdata.restore")
  static var markerAttribute: String { MarkerTable.platformName(of: .modern) }

  /// Marks the previous contents `folder` holds as restore's kept copy: do-not-back-up, and
  /// that restore put it there.
  static func mark(_ folder: FileDescriptor) {
    try? ExtendedAttributes.setValue([0x31], of: markedAttribute, on: folder, displayPath: "")
    try? ExtendedAttributes.setValue(Marker.modern.valueToWrite, of: markerAttribute, on: folder, displayPath: "")
  }

  /// Takes off what `mark` put on `folder`.
  static func unmark(_ folder: FileDescriptor) {
    _ = try? ExtendedAttributes.removeValue(of: markerAttribute, on: folder, displayPath: "")
    _ = try? ExtendedAttributes.removeValue(of: markedAttribute, on: folder, displayPath: "")
  }

  /// Settles what dead runs left beside a container: a folder whose name names the first
  /// identity its record holds was never swapped in (or was swapped back by an undo) and is
  /// removed; one naming the second is a kept copy and stays, with its record. A live run's,
  /// or anything a record does not prove, is left alone. Returns the kept copies, claimed (the
  /// caller `keep`s or uses each). With `removing` false (a dry run, or an undo looking for its
  /// copy), nothing is removed: what would be is left as it was. `except` names a folder the
  /// run holds itself (an undo's copy), never claimed, whatever the filesystem's locks do.
  static func settle(_ target: RestoreTarget, in placeFolder: FileDescriptor, removing: Bool, except: [UInt8]? = nil) -> [OwnedArtifact] {
    let prefix = RestoreHandoff.prefix(of: target.name)
    let tail = Array(".owner".utf8)
    var kept: [OwnedArtifact] = []
    for entry in Syscalls.entryNames(of: placeFolder)
    where entry.count == prefix.count + 32 + tail.count && entry.starts(with: prefix) && entry.suffix(tail.count).elementsEqual(tail) {
      let token = Array(entry[prefix.count..<(prefix.count + 32)])
      if let except, except.elementsEqual(entry.dropLast(tail.count)) { continue }
      guard let claimed = OwnedArtifact.claim(prefix: prefix, token: token, in: placeFolder) else { continue }
      if isKeptCopy(claimed) { kept.append(claimed) } else if removing { claimed.discard() } else { claimed.keep() }
    }
    return kept
  }

  /// What killed runs left beside `target` removed (`settle`), once this run's checks have
  /// passed: a dry run, or a run refused by its checks (a backup without the app, nothing to
  /// undo), changes nothing, their leftovers included. Kept copies stay.
  static func removeLeftovers(_ target: RestoreTarget, in placeFolder: FileDescriptor, except: [UInt8]? = nil) {
    for kept in settle(target, in: placeFolder, removing: true, except: except) { kept.keep() }
  }

  /// Whether a claimed restore folder holds a container's previous contents: its record names
  /// two folders and its name names the second.
  static func isKeptCopy(_ artifact: OwnedArtifact) -> Bool {
    let recorded = artifact.recordedIdentities
    return artifact.isInPlace && recorded.count == 2 && recorded[0] != recorded[1] && artifact.identity == recorded[1]
  }

  /// A checkpoint of restore's own (after extract's): where a crash test kills the run.
  struct Checkpoints {
    var passed: Int
    let stopAfter: Int?
    mutating func pass(_ point: String) {
      passed += 1
      if let stopAfter, passed >= stopAfter { Syscalls.killSelf() }
      TestHooks.pause(at: point)
    }
  }

  /// Restores `app` (with `withExtensions`, its groups and plugins installed on the device) from
  /// the device backup at `source` into the Simulator device `device` (its folder, or a UDID).
  package static func run(source: String, simulator device: String, app: String, options: RestoreOptions = RestoreOptions(),
                         password: PasswordSource? = nil) throws(RestoreFailure) -> RestoreReport {
    let simulator: SimulatorDeviceFolder
    do { simulator = try SimulatorDeviceFolder(device, devices: options.devicesFolder) } catch { throw .refused(error) }
    let (targets, chosen): ([RestoreTarget], String?)
    do { (targets, chosen) = try Self.targets(simulator, app: app, withExtensions: options.withExtensions) } catch { throw .refused(error) }
    // A container folder or an .xcappdata package: copied, not extracted.
    if let (root, opened) = RestoreFromFolder.containerRoot(of: source) {
      let folder = OwnedDescriptor(owning: opened)
      return try fromFolder(root, folder: folder.descriptor, simulator: simulator, target: targets[0], chosen: chosen,
                            extensions: targets.count - 1, options: options)
    }
    let backup = try Self.backup(at: source, options: options)
    let secret: SecretBuffer?
    do { secret = try backup.secret(from: password) } catch { throw .password(error) }
    var report = RestoreReport(source: backup.source, device: simulator.path, udid: simulator.udid, dryRun: options.dryRun)
    report.chosenID = chosen
    // Opened (an encrypted one decrypted, its keys derived) once for every container.
    var opening = BackupExtraction.Request(id: app, output: "")
    opening.password = secret
    opening.maximumKeyRounds = options.maximumKeyRounds
    let opened: BackupExtraction.Opened
    do { opened = try BackupExtraction.open(backup, request: opening) } catch { throw .refused(error) }
    defer { opened.keys.value?.wipe() }
    let built = try build(targets, from: backup, opened: opened, secret: secret, simulator: simulator, options: options, report: &report)
    if options.dryRun { return report }
    try swapIn(built, simulator: simulator, options: options, report: &report)
    return report
  }

  /// The one device backup `source` names (`--root` picks one in a folder of backups).
  private static func backup(at source: String, options: RestoreOptions) throws(RestoreFailure) -> BackupSource {
    do throws(OneDeviceBackup.Problem) {
      return try OneDeviceBackup.at(source, root: options.root, maximumNameBytes: options.maximumNameBytes)
    } catch {
      switch error {
      case .input(let refusal): throw .refused(refusal)
      case .none: throw .refused(OneDeviceBackup.notABackup(source, "appdata restore reads device backups"))
      case .several(let names): throw .refused(OneDeviceBackup.several(source, names: names, toWhat: "restore from"))
      }
    }
  }

  /// A container's new tree, complete in its partial folder, waiting for its exchange.
  private struct Built {
    var target: RestoreTarget
    var place: FileDescriptor
    var handoff: RestoreHandoff
    var container: RestoreReport.Container
  }

  /// Each container's partial folder given up, and its place closed (a refusal or an interrupt).
  private static func abandon(_ built: ArraySlice<Built>) {
    for item in built {
      item.handoff.result?.artifact.discard()
      item.place.close()
    }
  }

  /// Every target's new tree, written by extract's writer into its partial folder (none with
  /// `dryRun`, which only counts); the leftovers of killed runs beside each target the backup
  /// holds removed first (`removeLeftovers`). An extension the backup does not hold is left as
  /// it is, its leftovers too; the app must be there.
  private static func build(_ targets: [RestoreTarget], from backup: BackupSource, opened: BackupExtraction.Opened, secret: SecretBuffer?,
                            simulator: borrowing SimulatorDeviceFolder, options: RestoreOptions, report: inout RestoreReport) throws(RestoreFailure) -> [Built] {
    var built: [Built] = []
    var checkpoints = 0
    // The ids the backup holds, by their bytes (none when its manifest cannot be read: the
    // extraction then says why).
    let held = Set(((try? opened.appDomains(backup: backup.source)) ?? []).map { Array($0.id.utf8) })
    for target in targets {
      guard let placeFolder = simulator.open(target.place) else {
        abandon(built[...])
        throw .refused(Refusal(.unreadable, "\(display(target)): its folder cannot be opened"))
      }
      // Closed at the end of this turn (a refusal, a container the backup lacks, a dry run),
      // unless handed to its `Built`.
      let placeOwner = OwnedDescriptor(owning: placeFolder)
      let place = placeOwner.descriptor
      // The room a killed run's tree takes is given back before this one is built.
      if !options.dryRun && held.contains(Array(target.id.utf8)) { removeLeftovers(target, in: place) }
      var summary = RestoreReport.Container(id: target.id, kind: target.kind, path: target.path)
      guard let currentFolder = try? Syscalls.open(target.name, in: place, options: .directory, displayPath: target.path) else {
        abandon(built[...])
        throw .refused(Refusal(.unreadable, "\(display(target)): the container cannot be opened"))
      }
      let current = OwnedDescriptor(owning: currentFolder)
      let before = measure(current.descriptor, skipping: [Array(ContainerLayout.metadataFileName.utf8)])
      _ = consume current  // closed before the extraction, as it is not read again
      summary.replacedFiles = before.files + before.symlinks
      summary.replacedBytes = before.bytes
      let handoff = RestoreHandoff(folder: place, name: target.name, displayPath: target.path)
      var request = BackupExtraction.Request(id: target.id, output: target.path, options: options)
      request.exactID = true
      request.password = secret
      request.restore = handoff
      request.stopAfter = options.stopAfter.map { max(1, $0 - checkpoints) }
      let extracted: ExtractReport
      do {
        extracted = try BackupExtraction.run(backup, request: request, opened: opened)
      } catch {
        if target.kind != .app && error.cause == .notMatched && !options.isInterrupted() {
          report.problems.append(ExtractReport.Problem(domain: target.id, path: [], message: "not restored: the backup holds no container '\(TerminalText.escaped(target.id))'; it was left as it is", isError: false))
          continue
        }
        abandon(built[...])
        if options.isInterrupted() { throw .interrupted(device: simulator.path) }
        throw .refused(error)
      }
      report.problems += extracted.problems
      if let written = extracted.containers.first?.written { summary.contents = written }
      if !options.dryRun {
        checkpoints += handoff.result?.checkpoints ?? 0
        built.append(Built(target: target, place: placeOwner.release(), handoff: handoff, container: summary))
      }
      report.containers.append(summary)
    }
    return built
  }

  /// Every new tree is complete: each is completed and swapped in, one container at a time.
  private static func swapIn(_ built: [Built], simulator: borrowing SimulatorDeviceFolder, options: RestoreOptions,
                             report: inout RestoreReport) throws(RestoreFailure) {
    var steps = Checkpoints(passed: built.reduce(0) { $0 + ($1.handoff.result?.checkpoints ?? 0) }, stopAfter: options.stopAfter)
    for (index, item) in built.enumerated() {
      if options.isInterrupted() {
        abandon(built[index...])
        if index == 0 { throw .interrupted(device: simulator.path) }
        // Those swapped in stay; the rest were left as they were, and the report says so (the
        // command then ends with the signal's status).
        for rest in built[index...] {
          report.containers.removeAll { $0.path == rest.container.path }
          report.problems.append(ExtractReport.Problem(domain: rest.target.id, path: [], message: "not restored: interrupted before its exchange; it was left as it is", isError: true))
        }
        break
      }
      let container: RestoreReport.Container
      do {
        container = try swapIn(item.target, place: item.place, handoff: item.handoff, summary: item.container, steps: &steps)
      } catch {
        abandon(built[index...])
        throw .refused(error)
      }
      item.place.close()
      report.containers[report.containers.firstIndex { $0.path == container.path } ?? index] = container
    }
  }

  /// Restores from a container folder (or a package's `AppData`) at `root`, open at `folder`.
  static func fromFolder(_ root: String, folder: FileDescriptor, simulator: borrowing SimulatorDeviceFolder, target: RestoreTarget, chosen: String?,
                         extensions: Int, options: RestoreOptions) throws(RestoreFailure) -> RestoreReport {
    if options.withExtensions {
      throw .refused(Refusal(.notMatched, path: root, message: "\(TerminalText.escaped(root)): a folder holds one container; --with-extensions restores an app's groups and plugins from a device backup"))
    }
    var report = RestoreReport(source: Syscalls.absolutePath(root), device: simulator.path, udid: simulator.udid, dryRun: options.dryRun)
    report.chosenID = chosen
    guard let opened = simulator.open(target.place) else { throw .refused(Refusal(.unreadable, "\(display(target)): its folder cannot be opened")) }
    let placeOwner = OwnedDescriptor(owning: opened)
    let place = placeOwner.descriptor
    if !options.dryRun { removeLeftovers(target, in: place) }
    var summary = RestoreReport.Container(id: target.id, kind: target.kind, path: target.path)
    let metadata = Set(ContainerPlaces.metadataFileNames.map { Array($0.utf8) })
    if let currentFolder = try? Syscalls.open(target.name, in: place, options: .directory, displayPath: target.path) {
      let current = OwnedDescriptor(owning: currentFolder)
      let before = measure(current.descriptor, skipping: metadata)
      summary.replacedFiles = before.files + before.symlinks
      summary.replacedBytes = before.bytes
    }
    // A dry run reads the source as the copy reads it, writing nothing, so that its plan names
    // what the run would not write.
    var artifact: OwnedArtifact?
    if !options.dryRun {
      do {
        artifact = try OwnedArtifact.make(.folder, prefix: RestoreHandoff.prefix(of: target.name), in: place, mode: 0o700, displayPath: target.path)
      } catch {
        throw .refused(Refusal(.cannotWrite, path: target.path, message: "\(display(target)): cannot create the new contents beside it: \(error.reason)"))
      }
    }
    let destination = artifact?.descriptor ?? folder
    var copier = RestoreFromFolder(sourcePath: root, destination: destination, container: summary, isInterrupted: options.isInterrupted,
                                   steps: Checkpoints(passed: 0, stopAfter: options.dryRun ? nil : options.stopAfter), dryRun: options.dryRun,
                                   comparison: NameComparison.of(place))
    do {
      try copier.copy(folder, into: destination, path: [], depth: 0)
      try copier.finish()
    } catch {
      artifact?.discard()
      if options.isInterrupted() { throw .interrupted(device: simulator.path) }
      throw .refused(error)
    }
    report.problems = copier.problems
    guard let artifact else {
      report.containers = [copier.container]
      return report
    }
    let handoff = RestoreHandoff(folder: place, name: target.name, displayPath: target.path)
    handoff.take(artifact, checkpoints: copier.steps.passed)
    var steps = copier.steps
    do {
      report.containers = [try swapIn(target, place: place, handoff: handoff, summary: copier.container, steps: &steps)]
    } catch {
      throw .refused(error)
    }
    return report
  }

  /// Completes the new tree (the metadata plist linked in, the container folder's own mode,
  /// times and attributes) and exchanges it with the container; the previous contents stay at
  /// the hidden name, marked, with their record.
  static func swapIn(_ target: RestoreTarget, place: FileDescriptor, handoff: RestoreHandoff, summary: RestoreReport.Container,
                     steps: inout Checkpoints) throws(Refusal) -> RestoreReport.Container {
    guard let artifact = handoff.result?.artifact else { throw Refusal(.cannotWrite, "\(display(target)): the new contents were not built") }
    var summary = summary
    let shown = display(target)
    let currentOwner: OwnedDescriptor
    let currentStatus: FileStatus
    do {
      // Closed here when its status cannot be had, else on return.
      let opened = OwnedDescriptor(owning: try Syscalls.open(target.name, in: place, options: .directory, displayPath: target.path))
      currentStatus = try Syscalls.status(of: opened.descriptor, displayPath: target.path)
      currentOwner = opened
    } catch {
      artifact.discard()
      throw Refusal(.unreadable, "\(shown): the container cannot be opened: \(error.reason); nothing was changed")
    }
    let current = currentOwner.descriptor
    let metadata = Array(ContainerLayout.metadataFileName.utf8)
    do {
      // The same file: the metadata plist is never rewritten.
      try Syscalls.link(metadata, in: current, to: metadata, in: artifact.descriptor, displayPath: target.path + "/" + ContainerLayout.metadataFileName)
      try ExtendedAttributes.copyAll(from: current, to: artifact.descriptor, displayPath: target.path)
      // Never what restore itself put on a kept copy (a container an older undo, killed, left
      // marked).
      if (try? ExtendedAttributes.value(of: markedAttribute, on: artifact.descriptor, displayPath: "")) != nil { unmark(artifact.descriptor) }
      try Syscalls.setMode(artifact.descriptor, currentStatus.permissions, displayPath: target.path)
      try Syscalls.setTimes(artifact.descriptor, access: currentStatus.accessTime, modification: currentStatus.modificationTime, displayPath: target.path)
    } catch {
      artifact.discard()
      throw Refusal(.cannotWrite, "\(shown): cannot complete the new contents: \(error.reason); nothing was changed")
    }
    steps.pass("restore-built")
    let newIdentity = artifact.identity
    artifact.mayAlsoName(currentStatus.identity)
    steps.pass("restore-exchange")
    do {
      try Syscalls.exchange(artifact.name, with: target.name, in: place, displayPath: target.path)
    } catch {
      artifact.discard()
      throw Refusal(.cannotWrite, "\(shown): cannot exchange the new contents with the old: \(error.reason); nothing was changed")
    }
    // The swap exchanged what the names named at that instant: they must be the two folders.
    let now = (try? Syscalls.status(of: target.name, in: place, displayPath: ""))?.identity
    let aside = (try? Syscalls.status(of: artifact.name, in: place, displayPath: ""))?.identity
    guard now == newIdentity && aside == currentStatus.identity else {
      let back = swapBack(artifact.name, expecting: newIdentity, target: target, in: place)
      artifact.discard()
      throw Refusal(.conflict, "\(shown): changed while it was being replaced; \(back ? "it was left as it is" : Self.notPutBack)")
    }
    steps.pass("restore-exchanged")
    // The previous contents, kept: marked not to be backed up (unless they were), then left
    // with their record, which `--undo` proves them by.
    if (try? ExtendedAttributes.value(of: markerAttribute, on: current, displayPath: "")) == nil { mark(current) }
    // What it held, measured before it was replaced (nothing writes it meanwhile).
    artifact.keep()
    summary.keptCopy = target.path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/") + "/"
      + RelativePath.display(artifact.name)
    summary.keptBytes = summary.replacedBytes
    return summary
  }

  /// Puts back the previous contents the last restore kept of `app`'s container (and, with
  /// `withExtensions`, of its groups' and plugins'), in one exchange each; the restored tree
  /// is then removed.
  package static func undo(simulator device: String, app: String, options: RestoreOptions = RestoreOptions()) throws(RestoreFailure) -> RestoreReport {
    let simulator: SimulatorDeviceFolder
    do { simulator = try SimulatorDeviceFolder(device, devices: options.devicesFolder) } catch { throw .refused(error) }
    let (targets, chosen): ([RestoreTarget], String?)
    do { (targets, chosen) = try Self.targets(simulator, app: app, withExtensions: options.withExtensions) } catch { throw .refused(error) }
    var report = RestoreReport(source: "", device: simulator.path, udid: simulator.udid, isUndo: true, dryRun: options.dryRun)
    report.chosenID = chosen
    var steps = Checkpoints(passed: 0, stopAfter: options.stopAfter)
    var found = 0
    for target in targets {
      guard let opened = simulator.open(target.place) else { continue }
      let placeOwner = OwnedDescriptor(owning: opened)
      let place = placeOwner.descriptor
      // Found, not removed: what killed runs left goes once the copy is back (`removeLeftovers`).
      let kept = settle(target, in: place, removing: false)
      guard let current = try? Syscalls.status(of: target.name, in: place, displayPath: "") else {
        for copy in kept { copy.keep() }
        continue
      }
      // The copy the last restore kept: its record's first folder is the container now.
      let last = kept.first { $0.recordedIdentities[0] == current.identity }
      for copy in kept where copy !== last { copy.keep() }
      guard let last else {
        if target.kind == .app {
          throw .refused(Refusal(.notFound, path: target.path, message: "\(display(target)): no earlier appdata restore of this container is kept beside it; nothing to undo"))
        }
        continue
      }
      found += 1
      var summary = RestoreReport.Container(id: target.id, kind: target.kind, path: target.path)
      if let containerFolder = try? Syscalls.open(target.name, in: place, options: .directory, displayPath: "") {
        let container = OwnedDescriptor(owning: containerFolder)
        let now = measure(container.descriptor, skipping: [Array(ContainerLayout.metadataFileName.utf8)])
        summary.replacedFiles = now.files + now.symlinks
        summary.replacedBytes = now.bytes
      }
      let back = measure(last.descriptor, skipping: [Array(ContainerLayout.metadataFileName.utf8)])
      summary.contents = back
      if options.dryRun {
        last.keep()
        report.containers.append(summary)
        continue
      }
      do { try putBack(last, over: current, of: target, in: place, steps: &steps) } catch { throw .refused(error) }
      report.containers.append(summary)
    }
    if found == 0 && targets.isEmpty {
      throw .refused(Refusal(.notFound, path: simulator.path, message: "\(TerminalText.escaped(simulator.path)): nothing to undo"))
    }
    return report
  }

  /// The exchange of `name` and the container's, made again after a check found that it took
  /// another folder than expected; true when `name` then names `expected` again (the names are
  /// as they were before the first exchange).
  private static func swapBack(_ name: [UInt8], expecting expected: FileIdentity, target: RestoreTarget, in place: FileDescriptor) -> Bool {
    try? Syscalls.exchange(name, with: target.name, in: place, displayPath: target.path)
    return (try? Syscalls.status(of: name, in: place, displayPath: ""))?.identity == expected
  }

  /// The end of the line when a swap back did not put the names as they were.
  static let notPutBack = "the names could not be put back as they were; see what the container and the folders beside it hold"

  /// Puts `last`, the kept copy of `target`'s previous contents, back in one exchange with the
  /// container (`current`, the restored tree), then removes the restored tree through its record.
  private static func putBack(_ last: OwnedArtifact, over current: FileStatus, of target: RestoreTarget, in place: FileDescriptor,
                              steps: inout Checkpoints) throws(Refusal) {
    // What restore added to the previous contents goes before they are the container again,
    // through the kept copy's own descriptor (a kill after the exchange would otherwise leave
    // the container marked do-not-back-up); it is put back if they stay the kept copy.
    let marked = (try? ExtendedAttributes.value(of: markedAttribute, on: last.descriptor, displayPath: "")) != nil
    if marked { unmark(last.descriptor) }
    steps.pass("undo-exchange")
    do {
      try Syscalls.exchange(last.name, with: target.name, in: place, displayPath: target.path)
    } catch {
      if marked { mark(last.descriptor) }
      last.keep()
      throw Refusal(.cannotWrite, "\(display(target)): cannot put the kept copy back: \(error.reason); nothing was changed")
    }
    // The exchange swapped what the names named at that instant: they must be the kept copy
    // and the container measured (a restore that ran meanwhile swapped in a tree of its own).
    let now = (try? Syscalls.status(of: target.name, in: place, displayPath: ""))?.identity
    let aside = (try? Syscalls.status(of: last.name, in: place, displayPath: ""))?.identity
    guard now == last.identity && aside == current.identity else {
      let back = swapBack(last.name, expecting: last.identity, target: target, in: place)
      // The marks go back on the kept copy only where it is the kept copy again.
      if marked && back { mark(last.descriptor) }
      last.keep()
      throw Refusal(.conflict, "\(display(target)): changed while it was being undone; \(back ? "it was left as it is" : Self.notPutBack)")
    }
    steps.pass("undo-exchanged")
    removeLeftovers(target, in: place, except: last.name)
    // The restored tree now has the hidden name: the record says so (and owns its
    // descriptor), then it goes. One that is not the tree checked is closed here.
    if let restoredFolder = try? Syscalls.open(last.name, in: place, options: .directory, displayPath: "") {
      let restored = OwnedDescriptor(owning: restoredFolder)
      if let identity = try? Syscalls.status(of: restored.descriptor, displayPath: "").identity, identity == current.identity {
        last.nowNames(identity, descriptor: restored.release())
        last.discard()
      } else {
        last.keep()
      }
    } else {
      last.keep()
    }
  }
}
