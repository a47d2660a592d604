import AppDataSystem
import AppDataCore
import Synchronization

/// Walks a container below an open root folder, in parallel over folders, without
/// following symlinks: every folder is opened with `openat(parent, name, O_NOFOLLOW |
/// O_DIRECTORY)` (one handed from a busy worker to an idle one is reopened from the root,
/// a component at a time, the same way) and every entry is examined with
/// `fstatat(AT_SYMLINK_NOFOLLOW)` and `listxattrat` relative to its folder's descriptor, so
/// depth is not limited by PATH_MAX and a folder swapped for a symlink is refused rather
/// than followed.
package enum Walker {

  /// What a walk reads of each entry beside its status: its platform's (`Platform.walkReading`).
  package typealias Reading = WalkReading

  /// One container root of a walk over several.
  package struct Root: Sendable {
    package var path: String
    package var layout: ContainerLayout
    /// The folder the user named, when the root was found below it: the root is then reached
    /// from it one component at a time, following no symlink.
    package var below: String?
    package var reading: Reading
    package init(path: String, layout: ContainerLayout, below: String? = nil, reading: Reading = IOSPlatform.walkReading) {
      self.path = path
      self.layout = layout
      self.below = below
      self.reading = reading
    }
  }

  /// Walks several container roots in one walk: their folders share one work queue, so `jobs`
  /// threads stay busy across them (twenty small containers walked one after another would
  /// each start and end with threads idle). Each worker has a visitor per root, from
  /// `makeVisitor(rootIndex)`. Returns, per root, its visitors, or why it could not be opened.
  ///
  /// With `startingWith`, the walk starts that many workers and adds one, up to `jobs`, for
  /// every `WalkGrowth.blockedFoldersPerWorker` folders whose reading waited on the disk
  /// (`WalkGrowth`): warm, a walk stays at one worker per CPU, all a cached tree can use;
  /// cold, it grows to the thread count that keeps the disk busy.
  package static func walk<V: WalkVisitor>(
    roots: [Root], jobs: Int, startingWith: Int? = nil, progress: WalkProgress? = nil, makeVisitor: (Int) -> V
  ) -> [Result<[V], SystemError>] {
    Syscalls.raiseOpenFileLimit()
    let jobs = max(1, jobs)
    let starting = min(jobs, max(1, startingWith ?? jobs))
    let queue = WorkQueue<PendingFolder>(lastInFirstOut: true, endsWhenIdle: true)
    let (streams, failures, starts) = openRoots(roots)
    queue.push(contentsOf: starts)
    let descriptors = streams.map { $0?.descriptor ?? FileDescriptor(rawValue: -1) }
    let layouts = roots.map(\.layout)
    let readings = roots.map(\.reading)

    var perWorker: [[V]]
    if jobs == 1 {
      var visitors = roots.indices.map { makeVisitor($0) }
      var worker = Worker(progress: progress, roots: descriptors, layouts: layouts, readings: readings)
      worker.run(queue: queue, visitors: &visitors, shares: false)
      perWorker = [visitors]
    } else {
      let box = VisitorBox((0..<jobs).map { _ in roots.indices.map { makeVisitor($0) } })
      let threads = ThreadGroup()
      let growth = starting < jobs ? WalkGrowth(started: starting, maximum: jobs) : nil
      // Called from the walking thread and from workers that ask for help.
      let spawn = Locked<(@Sendable (Int) -> Void)?>(nil)
      let start: @Sendable (Int) -> Void = { index in
        let work: @Sendable () -> Void = {
          // Each worker works in its own copy of the descriptor table (it still holds the roots,
          // opened above): folders it opens are its own, and folders it hands to another worker
          // travel as paths (`Worker.share`). If unshare fails, the walk is the same, slower.
          _ = Syscalls.unshareDescriptorTable()
          // The visitors live in this thread's own copy while it works: visitors side by side
          // in one array would share cache lines, and every counter update would bounce them.
          var visitors = box.values[index]
          visitors.reserveCapacity(visitors.count + 1)  // a unique copy, allocated by this thread
          var worker = Worker(progress: progress, roots: descriptors, layouts: layouts, readings: readings)
          if let growth {
            worker.onBlockedFolder = {
              let (index, canGrow) = growth.blockedFolder()
              if let index, let start = spawn.withLock({ $0 }) { start(index) }
              return canGrow
            }
          }
          worker.run(queue: queue, visitors: &visitors, shares: true)
          box.values[index] = visitors
        }
        // No thread to be had: a worker started by the walk itself runs here (the walk needs
        // one at least); one the walk would have added is done without.
        if !threads.start(stackSize: 1 << 20, work) && index == 0 { work() }
      }
      spawn.withLock { $0 = start }
      for index in 0..<starting { start(index) }
      threads.join()
      spawn.withLock { $0 = nil }
      perWorker = box.values
    }
    withExtendedLifetime(streams) {}
    return roots.indices.map { index in
      if let failure = failures[index] { return .failure(failure) }
      return .success(perWorker.map { $0[index] })
    }
  }

  /// Each root opened (nil, and why in `failures`, for one that cannot be), and the walk's first
  /// folders: the roots, each with the markers on it where the walk reads them.
  private static func openRoots(_ roots: [Root]) -> (streams: [DirectoryStream?], failures: [Int: SystemError], starts: [PendingFolder]) {
    var streams: [DirectoryStream?] = []
    var failures: [Int: SystemError] = [:]
    var starts: [PendingFolder] = []
    var scratch = [UInt8](repeating: 0, count: 1024)
    for (index, root) in roots.enumerated() {
      let stream: DirectoryStream
      do {
        stream = try DirectoryStream(taking: try Syscalls.openDirectory(atPath: root.path, below: root.below), displayPath: root.path)
      } catch {
        failures[index] = error
        streams.append(nil)
        continue
      }
      streams.append(stream)
      // A marker on the root excludes everything below it.
      var rootExclusion: Exclusion?
      if root.reading == .markers, case .success(let attributes) = ".".withCString({ cName in
        EntryAttributes.read(cName: cName, in: stream.descriptor, scratch: &scratch)
      }), attributes.markers.isExcluding {
        rootExclusion = Exclusion(path: Array(".".utf8), markers: attributes.markers)
      }
      starts.append(PendingFolder(
        root: index, parent: nil, opened: stream, name: [], path: [], depth: 0, topLevelName: nil,
        placement: .root, exclusion: rootExclusion))
    }
    return (streams, failures, starts)
  }
}

/// When a walk adds workers: a folder whose reading waited on the disk, and every
/// `blockedFoldersPerWorker` such folders add one worker, up to the maximum. A folder waited when
/// its reads took blocks from the disk (`getrusage`'s `ru_inblock`: the page cache did not hold
/// them, however fast the disk answers: on a fast one, a folder's few reads wait well under a
/// millisecond each), or when it took `blockedNanoseconds` more wall-clock time than CPU time (a
/// filesystem that reads no block device, such as NFS; getrusage's CPU time lags by up to a
/// scheduler tick at each end, so the margin is several ticks).
final class WalkGrowth: Sendable {
  static let blockedNanoseconds: UInt64 = 25_000_000
  static let blockedFoldersPerWorker = 2

  static func waited(blocksRead: UInt64, wallNanoseconds: UInt64, cpuNanoseconds: UInt64) -> Bool {
    blocksRead > 0 || (wallNanoseconds > cpuNanoseconds && wallNanoseconds - cpuNanoseconds > blockedNanoseconds)
  }

  private let maximum: Int
  /// Workers started, and folders that waited since the last one was.
  private let state: Mutex<(started: Int, blocked: Int)>

  init(started: Int, maximum: Int) {
    self.maximum = maximum
    state = Mutex((started, 0))
  }

  /// A worker waited on the disk: the index of a worker to start now, if one is due, and
  /// whether the walk can still grow after it (once it cannot, waiting need not be measured).
  func blockedFolder() -> (start: Int?, canGrow: Bool) {
    state.withLock { state in
      guard state.started < maximum else { return (nil, false) }
      state.blocked += 1
      guard state.blocked >= Self.blockedFoldersPerWorker else { return (nil, true) }
      state.blocked = 0
      state.started += 1
      return (state.started - 1, state.started < maximum)
    }
  }
}

/// Holds the per-worker visitors; each thread touches only its own slot.
// Unchecked Sendable: slot i is read and written only by worker i, and the walking thread reads
// them all only after `ThreadGroup.join()`, which orders every worker's writes before it (a
// visitor is not Sendable: it is an accumulator of the reader's, moved, never shared).
private final class VisitorBox<V>: @unchecked Sendable {
  var values: [V]
  init(_ values: [V]) { self.values = values }
}

// MARK: - Pending folders and the shared stack

/// A folder waiting to be read: its parent's open stream (kept alive by this reference)
/// and its name, plus what it passes down to its entries.
/// A folder handed to another worker drops its streams (`handedOver()`), so no descriptor
/// crosses into another thread's descriptor table.
struct PendingFolder: Sendable {
  /// Which root of the walk the folder is under.
  let root: Int
  let parent: DirectoryStream?
  /// Set only for the root, which is opened before the walk starts.
  let opened: DirectoryStream?
  let name: [UInt8]
  let path: [UInt8]
  let depth: Int
  /// The first path component (for location rules of depth 2).
  let topLevelName: [UInt8]?
  /// The folder's own placement, inherited by entries below depth 2 (`Placement.root` at the root).
  let placement: Placement
  let exclusion: Exclusion?
  /// What the visitor that found it numbered it (`WalkVisitor.folderTag()`; 0 for a root, and
  /// in a walk whose visitors number none).
  var tag = 0

  /// The folder as another worker receives it: without its parent's descriptor, which belongs
  /// to the sending worker's descriptor table (and must be closed by that worker); the
  /// receiver reopens it from the root by its path.
  func handedOver() -> PendingFolder {
    PendingFolder(
      root: root, parent: nil, opened: nil, name: name, path: path, depth: depth, topLevelName: topLevelName,
      placement: placement, exclusion: exclusion, tag: tag)
  }
}

// MARK: - One worker

/// Reads folders from the queue until the walk is done.
struct Worker {
  let progress: WalkProgress?
  private var scratch = [UInt8](repeating: 0, count: 1024)
  private let directoryBuffer = DirectoryBuffer()
  private let pathFallback = ExtendedAttributes.usesPathFallback
  private let handOverAll = TestHooks.handOverAll
  /// The container roots, open in every worker's descriptor table.
  private let roots: [FileDescriptor]
  private let layouts: [ContainerLayout]
  private let readings: [Walker.Reading]
  private var children: [PendingFolder] = []
  private var localEntries = 0
  private var localBytes: UInt64 = 0
  /// Called when a folder's reading waited on the disk (a walk that may add workers); false
  /// once the walk has all its workers, after which this worker stops measuring its folders.
  var onBlockedFolder: (() -> Bool)?
  /// This thread's usage when it last finished a measured folder.
  private var usage: Syscalls.ThreadUsage?

  init(progress: WalkProgress?, roots: [FileDescriptor], layouts: [ContainerLayout], readings: [Walker.Reading]) {
    self.progress = progress
    self.roots = roots
    self.layouts = layouts
    self.readings = readings
  }

  /// Gives the older half of this worker's stack (the larger subtrees) to idle workers, as
  /// paths (`PendingFolder.handedOver`), when one waits and the queue is empty: each worker
  /// keeps its own LIFO stack (depth-first, so few folders are open at once however wide the
  /// tree is), so the queue's lock is taken rarely rather than once per folder. Called by the
  /// giving worker, so the parent folders it stops referring to close in its own table.
  private func share(from local: inout [PendingFolder], to queue: WorkQueue<PendingFolder>) {
    guard local.count > 1, queue.wantsWork else { return }
    let half = local.count / 2
    let handed = local[..<half].map { $0.handedOver() }
    local.removeFirst(half)
    // Reversed: the queue gives last-in first, so the last handed comes out first.
    queue.push(contentsOf: Array(handed.reversed()))
  }

  mutating func run<V: WalkVisitor>(queue: WorkQueue<PendingFolder>, visitors: inout [V], shares: Bool) {
    var finished = false
    var local: [PendingFolder] = []
    var sinceShareCheck = 0
    while let claimed = queue.pop(finishedPrevious: finished) {
      local.append(claimed)
      while let folder = local.popLast() {
        read(folder, visitor: &visitors[folder.root])
        if folder.depth <= 1 { TestHooks.pause(at: folder.depth == 0 ? "walk" : "folder") }
        if folder.depth == 0 { TestHooks.waitForProgress() }
        // Children in reverse, so the first one listed is read first; moved, not copied.
        while let child = children.popLast() { local.append(child) }
        sinceShareCheck += 1
        if shares && sinceShareCheck >= 8 {
          sinceShareCheck = 0
          share(from: &local, to: queue)
        }
        if let progress, localEntries >= 4096 {
          progress.add(entries: localEntries, bytes: localBytes)
          localEntries = 0
          localBytes = 0
        }
      }
      finished = true
    }
    if let progress, localEntries > 0 { progress.add(entries: localEntries, bytes: localBytes) }
  }

  private mutating func read<V: WalkVisitor>(_ folder: PendingFolder, visitor: inout V) {
    guard let onBlockedFolder else { return readFolder(folder, visitor: &visitor) }
    // One getrusage a folder: the usage at the end of a folder is the next one's start (what
    // the worker does in between reads nothing from the disk and adds only a little CPU time,
    // which can hide a wait, never invent one).
    let before = usage ?? Syscalls.threadUsage()
    let wall = Syscalls.monotonicNanoseconds()
    readFolder(folder, visitor: &visitor)
    let after = Syscalls.threadUsage()
    usage = after
    if WalkGrowth.waited(
      blocksRead: after.blocksRead &- before.blocksRead, wallNanoseconds: Syscalls.monotonicNanoseconds() &- wall,
      cpuNanoseconds: after.cpuNanoseconds &- before.cpuNanoseconds), !onBlockedFolder() {
      self.onBlockedFolder = nil
    }
  }

  private mutating func readFolder<V: WalkVisitor>(_ folder: PendingFolder, visitor: inout V) {
    folder.path.withUnsafeBufferPointer { visitor.beginFolder($0, tag: folder.tag) }
    defer { visitor.endFolder() }
    let stream: DirectoryStream
    if let opened = folder.opened {
      stream = opened
    } else {
      let opened: Result<FileDescriptor, Errno>
      if let parent = folder.parent {
        opened = withCName(folder.name) { Syscalls.open(cName: $0, in: parent.descriptor, options: .directory) }
      } else {
        // Handed over by another worker: reopened from the root, following no symlink.
        opened = Syscalls.openFolder(relativePath: folder.path, below: roots[folder.root])
      }
      switch opened {
      case .failure(let error):
        visitor.failed(path: folder.path, error: SystemError(errno: error, operation: .openFolder, path: ""))
        return
      case .success(let descriptor):
        do {
          stream = try DirectoryStream(taking: descriptor, displayPath: "")
        } catch {
          visitor.failed(path: folder.path, error: error)
          return
        }
      }
    }

    // The folder's path and its inherited marker's path are lent to every entry of the folder;
    // its layout is taken once per folder (a copy per entry retains every table it holds).
    let layout = layouts[folder.root]
    let readsMarkers = readings[folder.root] == .markers
    folder.path.withUnsafeBufferPointer { parentPath in
      let failure = BorrowedExclusion.with(folder.exclusion) { exclusion in
        stream.forEachEntry(using: directoryBuffer) { cName, length, type in
          if readsMarkers {
            examine(cName, length: length, type: type, in: stream, folder: folder, layout: layout, parentPath: parentPath,
                    exclusion: exclusion, visitor: &visitor)
          } else {
            examineStatusOnly(cName, length: length, type: type, in: stream, folder: folder, parentPath: parentPath, visitor: &visitor)
          }
        }
      }
      if let failure {
        visitor.failed(path: folder.path, error: SystemError(errno: failure, operation: .readFolder, path: ""))
      }
    }
  }

  /// An entry's status: none read for a folder the listing identified, else one fstatat; nil,
  /// and the visitor told, when it cannot be read.
  @inline(__always)
  private static func status<V: WalkVisitor>(
    _ cName: UnsafePointer<CChar>, name: UnsafeBufferPointer<UInt8>, type: DirectoryEntryType, in stream: DirectoryStream,
    folder: PendingFolder, visitor: inout V
  ) -> FileStatus? {
    if type == .directory { return .listedDirectory }
    switch Syscalls.status(cName: cName, in: stream.descriptor) {
    case .success(let value): return value
    case .failure(let error):
      visitor.failed(path: RelativePath.join(folder.path, Array(name)), error: SystemError(errno: error, operation: .readStatus, path: ""))
      return nil
    }
  }

  /// One entry of a walk that reads no marker (`Walker.Reading.linkTargets`): its status (none
  /// for a folder the listing identified), and a symlink's target.
  private mutating func examineStatusOnly<V: WalkVisitor>(
    _ cName: UnsafePointer<CChar>, length: Int, type: DirectoryEntryType, in stream: DirectoryStream,
    folder: PendingFolder, parentPath: UnsafeBufferPointer<UInt8>, visitor: inout V
  ) {
    let name = UnsafeBufferPointer(start: UnsafeRawPointer(cName).assumingMemoryBound(to: UInt8.self), count: length)
    guard let status = Self.status(cName, name: name, type: type, in: stream, folder: folder, visitor: &visitor) else { return }
    var entry = WalkedEntry(
      parentPath: parentPath, name: name, depth: folder.depth + 1, status: status, placement: .root, ownMarkers: [],
      inheritedExclusion: nil, declinesBackup: false, isCacheDirectoryTag: false, parentCategory: .other)
    if status.kind == .symbolicLink { entry.linkTarget = try? Syscalls.readLink(Array(name), in: stream.descriptor, displayPath: "") }
    visitor.visit(entry)
    localEntries += 1
    if status.kind == .regular { localBytes &+= status.size }
    if status.kind == .directory {
      let child = PendingFolder(
        root: folder.root, parent: stream, opened: nil, name: Array(name), path: entry.path, depth: folder.depth + 1,
        topLevelName: nil, placement: .root, exclusion: nil, tag: visitor.folderTag())
      children.append(handOverAll && folder.depth > 0 ? child.handedOver() : child)
    }
  }

  /// One entry: at most one fstatat (none for a folder the listing already identified),
  /// one listxattrat, and a getxattrat only for a recognised attribute name.
  private mutating func examine<V: WalkVisitor>(
    _ cName: UnsafePointer<CChar>, length: Int, type: DirectoryEntryType, in stream: DirectoryStream,
    folder: PendingFolder, layout: borrowing ContainerLayout, parentPath: UnsafeBufferPointer<UInt8>,
    exclusion: BorrowedExclusion?, visitor: inout V
  ) {
    let name = UnsafeBufferPointer(start: UnsafeRawPointer(cName).assumingMemoryBound(to: UInt8.self), count: length)
    let depth = folder.depth + 1
    guard let status = Self.status(cName, name: name, type: type, in: stream, folder: folder, visitor: &visitor) else { return }

    var attributes = EntryAttributes()
    switch EntryAttributes.read(cName: cName, in: stream.descriptor, scratch: &scratch, pathFallback: pathFallback) {
    case .success(let value): attributes = value
    case .failure(let error):
      visitor.failed(path: RelativePath.join(folder.path, Array(name)), error: SystemError(errno: error, operation: .readExtendedAttributes, path: ""))
    }

    let placement = layout.place(
      depth: depth,
      leadingComponents: depth == 1 ? [Array(name)][...] : [folder.topLevelName ?? [], Array(name)][...],
      parent: folder.placement, isExcluded: attributes.markers.isExcluding || exclusion != nil)

    var isCacheTag = false
    if status.kind == .regular && length == 12 && Syscalls.compareBytes(cName, "CACHEDIR.TAG", count: 12) == 0 {  // CacheDirectoryTag.fileName
      isCacheTag = CacheDirectoryTag.hasSignature(cName, in: stream.descriptor)
    }

    let entry = WalkedEntry(
      parentPath: parentPath, name: name, depth: depth, status: status, placement: placement,
      ownMarkers: attributes.markers, inheritedExclusion: exclusion,
      declinesBackup: attributes.declinesBackup, isCacheDirectoryTag: isCacheTag, parentCategory: folder.placement.category)
    visitor.visit(entry)
    localEntries += 1
    if status.kind == .regular { localBytes &+= status.size }

    if status.kind == .directory {
      let path = entry.path
      let child = PendingFolder(
        root: folder.root, parent: stream, opened: nil, name: Array(name), path: path, depth: depth,
        topLevelName: depth == 1 ? Array(name) : folder.topLevelName, placement: placement,
        exclusion: attributes.markers.isExcluding ? Exclusion(path: path, markers: attributes.markers) : folder.exclusion)
      children.append(handOverAll && depth > 1 ? child.handedOver() : child)
    }
  }
}

// MARK: - Attributes and cache tags
