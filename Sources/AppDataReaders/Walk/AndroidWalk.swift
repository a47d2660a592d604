import AppDataSystem
import AppDataCore
import Synchronization

/// The walk of an Android app's data folder (or its device-encrypted storage, or its external
/// files folder), in parallel over folders. Workers read folders: each folder is opened with
/// `openat(parent, name, O_NOFOLLOW | O_DIRECTORY)` from its parent's descriptor (kept open by
/// the folders still waiting on it) and each entry examined with
/// `fstatat(AT_SYMLINK_NOFOLLOW)`, so no symlink is followed and depth is not limited by
/// PATH_MAX. The tree and the findings are then put together on one thread, depth first in byte
/// order, the order a walk on one thread reads them in: the same tree and the same findings
/// whatever the threads did.
///
/// It reads no extended attribute (Android's backup looks at none), which is what lets it keep
/// up with the iOS walk (`Walker`) on the same tree.
enum AndroidWalk {

  /// One entry of a folder, as a worker found it.
  enum Entry: Sendable {
    case file(size: UInt64)
    case other
    /// A symlink, and its target (nil when it could not be read).
    case link([UInt8]?)
    /// A folder, read as folder number `Int`.
    case directory(Int)
    /// fstatat failed with this errno.
    case statusFailed(Errno)
    /// Its path is past `RelativePath`'s bounds: not examined.
    case tooLong
  }

  /// One folder as a worker read it: its entries in byte order of their names.
  struct Folder: Sendable {
    var arena: [UInt8] = []
    /// Each entry's name in `arena` (start, count), in byte order of the names.
    var spans: [(start: Int32, count: Int32)] = []
    var entries: [Entry] = []
    /// Opening it from its parent failed with this errno (it was then not read).
    var openFailure: Errno?
    /// Reading its descriptor as a folder failed.
    var streamFailure: SystemError?
    /// Reading its names failed part-way with this errno (the names before were kept).
    var readFailure: Errno?

    func name(_ index: Int) -> ArraySlice<UInt8> {
      let span = spans[index]
      return arena[Int(span.start)..<Int(span.start + span.count)]
    }
  }

  /// A folder waiting to be read.
  struct Task: Sendable {
    var number: Int
    /// The folder it is opened from (nil for the walk's root, which is `opened`).
    var parent: DirectoryStream?
    var opened: DirectoryStream?
    var name: [UInt8]
    /// Components in its path (0 for the root), and its path's length in bytes.
    var depth: Int
    var pathLength: Int
  }

  /// Folder numbers, handed out as folders are found.
  final class Numbers: Sendable {
    let next = Atomic<Int>(1)
    func take() -> Int { next.add(1, ordering: .relaxed).oldValue }
  }

  /// Reads every folder below `root` (taken; closed when the walk is done) with up to `jobs`
  /// threads, and adds what it finds to `tree` under `storage`'s root. A root that cannot be
  /// read throws; anything below it that cannot be read is a finding.
  static func walk(_ root: FileDescriptor, storage: AndroidStorage, jobs: Int, into tree: inout AndroidTree,
                   directories: inout UInt64, findings: inout [Finding]) throws(SystemError) {
    let rootStream = try DirectoryStream(taking: root, displayPath: ".")
    Syscalls.raiseOpenFileLimit()
    let folders = read(root: rootStream, jobs: max(1, jobs))
    try assemble(folders, storage: storage, into: &tree, directories: &directories, findings: &findings)
  }

  /// Every folder read, indexed by folder number (the root is 0).
  static func read(root: DirectoryStream, jobs: Int) -> [Folder?] {
    let queue = WorkQueue<Task>(lastInFirstOut: true, endsWhenIdle: true)
    queue.push(contentsOf: [Task(number: 0, parent: nil, opened: root, name: [], depth: 0, pathLength: 0)])
    let numbers = Numbers()
    let results = Locked<[[(Int, Folder)]]>([])
    let work: @Sendable () -> Void = {
      let scratch = DirectoryBuffer()
      var read: [(Int, Folder)] = []
      var finished = false
      while let task = queue.pop(finishedPrevious: finished) {
        let (folder, found) = Self.read(task, numbers: numbers, scratch: scratch)
        read.append((task.number, folder))
        queue.push(contentsOf: found)
        finished = true
      }
      let done = read
      results.withLock { $0.append(done) }
    }
    if jobs == 1 {
      work()
    } else {
      let threads = ThreadGroup()
      var started = 0
      for _ in 0..<jobs where threads.start(stackSize: 1 << 20, work) { started += 1 }
      // No thread to be had: the walk runs here.
      if started == 0 { work() }
      threads.join()
    }
    var folders = [Folder?](repeating: nil, count: numbers.next.load(ordering: .relaxed))
    results.withLock { parts in
      for part in parts { for (number, folder) in part { folders[number] = folder } }
    }
    return folders
  }

  /// Opens and reads one folder: its entries and the folders below it, numbered.
  static func read(_ task: Task, numbers: Numbers, scratch: DirectoryBuffer) -> (Folder, [Task]) {
    var folder = Folder()
    let stream: DirectoryStream
    if let opened = task.opened {
      stream = opened
    } else {
      switch withCName(task.name, { Syscalls.open(cName: $0, in: task.parent!.descriptor, options: .directory) }) {
      case .failure(let error):
        folder.openFailure = error
        return (folder, [])
      case .success(let descriptor):
        do { stream = try DirectoryStream(taking: descriptor, displayPath: "") } catch {
          folder.streamFailure = error
          return (folder, [])
        }
      }
    }
    var unsorted: [(start: Int32, count: Int32)] = []
    var kinds: [Entry] = []
    let fits = task.depth + 1 < RelativePath.maximumComponents
    let room = RelativePath.maximumLength - task.pathLength - (task.depth == 0 ? 0 : 1)
    folder.readFailure = stream.forEachEntry(using: scratch) { cName, length, _ in
      unsorted.append((Int32(folder.arena.count), Int32(length)))
      cName.withMemoryRebound(to: UInt8.self, capacity: length) { folder.arena.append(contentsOf: UnsafeBufferPointer(start: $0, count: length)) }
      guard fits, length <= room else {
        kinds.append(.tooLong)
        return
      }
      switch Syscalls.status(cName: cName, in: stream.descriptor) {
      case .failure(let error): kinds.append(.statusFailed(error))
      case .success(let status):
        switch status.kind {
        case .directory: kinds.append(.directory(-1))
        case .regular: kinds.append(.file(size: status.size))
        case .symbolicLink:
          let name = Array(UnsafeRawBufferPointer(start: cName, count: length))
          kinds.append(.link(try? Syscalls.readLink(name, in: stream.descriptor, displayPath: "")))
        default: kinds.append(.other)
        }
      }
    }
    // In byte order, so that the tree (and whatever follows its order) is the same on every
    // filesystem.
    let order = folder.arena.withUnsafeBufferPointer { arena in
      unsorted.indices.sorted { left, right in
        let a = unsorted[left], b = unsorted[right]
        return UnsafeBufferPointer(rebasing: arena[Int(a.start)..<Int(a.start + a.count)])
          .lexicographicallyPrecedes(UnsafeBufferPointer(rebasing: arena[Int(b.start)..<Int(b.start + b.count)]))
      }
    }
    folder.spans.reserveCapacity(order.count)
    folder.entries.reserveCapacity(order.count)
    var found: [Task] = []
    for index in order {
      let span = unsorted[index]
      folder.spans.append(span)
      guard case .directory = kinds[index] else {
        folder.entries.append(kinds[index])
        continue
      }
      let number = numbers.take()
      folder.entries.append(.directory(number))
      found.append(Task(number: number, parent: stream, opened: nil,
                        name: Array(folder.arena[Int(span.start)..<Int(span.start + span.count)]), depth: task.depth + 1,
                        pathLength: task.pathLength + (task.depth == 0 ? 0 : 1) + Int(span.count)))
    }
    return (folder, found)
  }

  /// The tree and the findings from the folders read, depth first in byte order.
  static func assemble(_ folders: [Folder?], storage: AndroidStorage, into tree: inout AndroidTree,
                       directories: inout UInt64, findings: inout [Finding]) throws(SystemError) {
    var stack: [(number: Int, path: [UInt8], node: AndroidTree.Node)] = [(0, [], tree.root(storage))]
    while let (number, path, node) = stack.popLast() {
      guard let folder = folders[number] else { continue }
      if let error = folder.streamFailure {
        if path.isEmpty { throw error }
        findings.append(Finding(rule: .unreadable, path: path, message: "cannot read the folder: \(error.reason)", bytes: nil))
        continue
      }
      if let failure = folder.readFailure {
        findings.append(Finding(rule: .unreadable, path: path.isEmpty ? [0x2E] : path,
                                message: "cannot read the folder: \(SystemError(errno: failure, operation: .readFolder, path: "").reason)", bytes: nil))
      }
      func child(_ index: Int) -> [UInt8] { path.isEmpty ? Array(folder.name(index)) : path + [0x2F] + folder.name(index) }
      for index in folder.entries.indices {
        switch folder.entries[index] {
        case .tooLong:
          let child = child(index)
          findings.append(RelativePath.tooDeep(child, components: child.count(where: { $0 == 0x2F }) + 1, source: "a path"))
        case .statusFailed(let code):
          findings.append(Finding(rule: .unreadable, path: child(index),
                                  message: "cannot read the status: \(SystemError(errno: code, operation: .readStatus, path: "").reason)", bytes: nil))
        case .directory(let below):
          let added = tree.add(name: folder.name(index), under: node, .directory)
          directories += 1
          if let code = folders[below]?.openFailure {
            findings.append(Finding(rule: .unreadable, path: child(index),
                                    message: "cannot open the folder: \(SystemError(errno: code, operation: .openFolder, path: "").reason)", bytes: nil))
          } else {
            stack.append((below, child(index), added))
          }
        case .file(let size): tree.add(name: folder.name(index), under: node, .file(size: size))
        case .other: tree.add(name: folder.name(index), under: node, .other)
        case .link(let target):
          let added = tree.add(name: folder.name(index), under: node, .other)
          if let target { tree.setLinkTarget(added, target) }
        }
      }
    }
  }
}
