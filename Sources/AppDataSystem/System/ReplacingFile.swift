#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A file a user named for output (`audit -o`, `init-config --output`), written completely or
/// not at all: the bytes go to a hidden file beside it, `.NAME.appdata-TOKEN.tmp`, an
/// `OwnedArtifact` (made with `O_EXCL`, its owner record locked from birth), which is flushed
/// (`fsync`) and renamed over NAME only once every write went through. A failed write is kept
/// (the first) and the rest are skipped; `commit` then throws it and removes the hidden file, so
/// a full disk leaves the old NAME as it was, or nothing, never half a report. Hidden files of
/// killed runs are removed by the next run that writes NAME, when their owner records prove them
/// (a name alone never does).
///
/// NAME is found by one walk of its path through descriptors (`locate`), as the kernel would
/// walk it, and written where that walk arrived: nothing is opened again by path. NAME that is a
/// symlink: its target is written the same way (the hidden file beside the target, renamed over
/// it), so the link stays and points at a complete report; a link whose target does not exist is
/// refused, as is a loop (more than 40 links). A link another user made in a shared folder
/// (sticky and world-writable, as /tmp) anywhere on the way, a folder's or NAME's, is never
/// followed (Linux's fs.protected_symlinks rule, applied to every link and on macOS too). NAME
/// that is a FIFO, a socket, a device or a folder is refused (`notAFile`), found by its status
/// (fstatat), which opens nothing, so nothing waits.
package final class ReplacingFile: Sendable {
  package let path: String
  private let folder: FileDescriptor
  private let name: [UInt8]
  private let hidden: OwnedArtifact
  private var descriptor: FileDescriptor { hidden.descriptor }
  private struct State {
    /// The first write that failed.
    var failure: SystemError?
    var isDone = false
  }
  /// Held while writing, so that each write's bytes go out whole.
  private let state = Mutex(State())

  /// The first write that failed.
  package var failure: SystemError? { state.withLock { $0.failure } }

  /// The errno a NAME that is not a regular file (a FIFO, socket, device or folder) is refused
  /// with, under operation `.writeReport`.
  package static let notAFile = Errno.invalidArgument
  /// The errno of a NAME that leads through another user's link in a shared folder (`locate`).
  static let foreignLinkErrno = Errno.permissionDenied

  package init(path: String) throws(SystemError) {
    self.path = path
    // `/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`, and a link to one: names of descriptors, not
    // files. Followed, they would name the file behind a shell's `>>`, replaced rather than
    // appended to; they are refused, whatever they lead to.
    if Self.isAStandardStream(path) { throw SystemError(errno: .noSuchDevice, operation: .writeReport, path: path) }
    let located = try Self.locate(path)
    TestHooks.pause(at: "output-located")
    // The folder arrived at, opened again through its descriptor (not its path) to be listed
    // and written in.
    let passed = OwnedDescriptor(owning: located.folder)
    let folder = OwnedDescriptor(owning: try Syscalls.reopen(passed.descriptor, displayPath: path))
    _ = consume passed
    let existing = located.status
    if let kind = existing?.kind, kind != .regular {
      // Known from its status alone (fstatat never opens it, so a FIFO with no reader is not
      // waited on).
      throw SystemError(errno: kind == .directory ? Errno.isDirectory : Self.notAFile, operation: .writeReport, path: path)
    }
    name = located.name
    OwnedArtifact.sweep(prefix: Self.prefix(of: name), suffix: Self.suffix, in: folder.descriptor)
    hidden = try OwnedArtifact.make(.file, prefix: Self.prefix(of: name), suffix: Self.suffix, in: folder.descriptor, mode: 0o644, displayPath: path)
    // Kept open until the commit or the discard closes it.
    self.folder = folder.release()
    // The report it replaces keeps its permission bits (a 0600 report stays private).
    if let existing { try? Syscalls.setMode(hidden.descriptor, existing.permissions, displayPath: path) }
  }

  deinit { discard() }

  /// Why NAME cannot take a report (or `what` else: `init-config`'s policy file), for a
  /// `.writeReport` error; else the system's reason. `notAFile` ends the line for a NAME that
  /// is no file (a report's: where else it may go).
  /// `shown` escapes a path for the terminal (the link a shared folder's refusal names).
  package static func problem(_ error: SystemError, writing what: String = "the report",
                              notAFile: String = "appdata writes reports only to files (leave -o out for standard output)",
                              shown: (String) -> String) -> String {
    guard error.operation == .writeReport else { return "cannot write \(what): \(error.reason)" }
    let onlyFiles = "; " + notAFile
    switch error.errno {
    case .isDirectory: return "is a folder; give \(what) a file's name"
    case .noSuchFileOrDirectory: return "is a symlink to a file that does not exist; give \(what) a file's name"
    case .noSuchDevice: return "names a descriptor, a device or a standard stream's file (/dev, /proc, what > or >> opened), not a file of its own" + onlyFiles
    case foreignLinkErrno:
      return "leads through a symlink another user made in a shared folder (sticky and world-writable, as /tmp), \(shown(error.path)); "
        + "appdata does not follow it, as Linux does not with fs.protected_symlinks; give \(what) a name of your own"
    default: return "is a FIFO, socket or device, not a file" + onlyFiles
    }
  }

  /// Where `locate`'s walk starts: the root folder, or the working folder.
  private static func walkStart(root: Bool, path: String) throws(SystemError) -> OwnedDescriptor {
    switch Syscalls.openPassingThrough(root: root) {
    case .success(let opened): return OwnedDescriptor(owning: opened)
    case .failure(let error): throw SystemError(errno: error, operation: .openFolder, path: path)
    }
  }

  /// Where NAME is: its folder, open, and its name there, with its status (nil: not there yet, to
  /// be made). `path` is walked once, component by component by their bytes, from `/` or the
  /// working folder, each folder passed through by a descriptor (`openPassingThrough`: search
  /// permission is enough), a link's target put in its place, `..` taken from the folder reached,
  /// at most 40 links; the last name followed while it is a link. Nothing is opened again by
  /// path, so what is written is where this walk arrived. A link that another user made in a
  /// folder that is sticky and world-writable (as /tmp), owned by neither this user nor the
  /// folder's owner, is not followed (Linux's fs.protected_symlinks rule, applied to every link,
  /// as a folder's too, and on macOS, which has none). A last link whose target is not there is
  /// refused; a folder on the way that is not there, or cannot be passed, is the kernel's error.
  /// A walk that comes to `/dev` or `/proc` (`/dev/stdout`, `/proc/self/fd/1`, a link to one)
  /// ends refused: their names are descriptors', not files, and followed would name the file
  /// behind a shell's `>>`, replaced rather than appended to.
  static func locate(_ path: String) throws(SystemError) -> (folder: FileDescriptor, name: [UInt8], status: FileStatus?) {
    let slash: UInt8 = 0x2F
    let bytes = Array(path.utf8)
    let absolute = bytes.first == slash
    var folder = try walkStart(root: absolute, path: path)
    // The folders passed, for a message (the working folder's first, for a relative path).
    var reached: [[UInt8]] = absolute ? [] : Array(Syscalls.absolutePath(".").utf8).split(separator: slash).map(Array.init)
    var pending: [[UInt8]] = bytes.split(separator: slash).map(Array.init).reversed()
    if pending.isEmpty || bytes.last == slash { throw SystemError(errno: .isDirectory, operation: .writeReport, path: path) }
    var links = 0
    var lastWasLink = false
    let me = Syscalls.effectiveUserID
    func shown(_ components: [[UInt8]]) -> String { String(decoding: [slash] + components.joined(separator: [slash]), as: UTF8.self) }
    // Whether the walk, at `component` in the folder reached, is in /dev or /proc: asked where
    // it would follow a link or arrive (a path that only passes through and climbs out is not).
    let system: Set<[UInt8]> = [Array("dev".utf8), Array("proc".utf8)]
    func inSystem(_ component: [UInt8]) throws(SystemError) {
      if system.contains(reached.first ?? component) { throw SystemError(errno: .noSuchDevice, operation: .writeReport, path: path) }
    }
    while let component = pending.popLast() {
      let isLast = pending.isEmpty
      if component == [0x2E] || component == [0x2E, 0x2E] {
        if isLast { throw SystemError(errno: .isDirectory, operation: .writeReport, path: path) }
        if component == [0x2E] { continue }
        switch Syscalls.openPassingThrough(component, in: folder.descriptor) {
        case .success(let up): folder = OwnedDescriptor(owning: up)
        case .failure(let error): throw SystemError(errno: error, operation: .openFolder, path: path)
        }
        _ = reached.popLast()
        continue
      }
      let status: FileStatus
      do { status = try Syscalls.status(of: component, in: folder.descriptor, displayPath: path) } catch {
        guard isLast, error.errno == .noSuchFileOrDirectory else { throw error }
        try inSystem(component)
        // Not there: made, unless a link named it.
        if lastWasLink { throw SystemError(errno: .noSuchFileOrDirectory, operation: .writeReport, path: path) }
        return (folder.release(), component, nil)
      }
      if status.kind == .symbolicLink {
        try inSystem(component)
        links += 1
        if links > 40 { throw SystemError(errno: .tooManySymbolicLinkLevels, operation: .readStatus, path: path) }
        let holder = try Syscalls.status(of: folder.descriptor, displayPath: path)
        if holder.permissions & 0o1002 == 0o1002 && status.owner != me && status.owner != holder.owner {
          throw SystemError(errno: Self.foreignLinkErrno, operation: .writeReport, path: shown(reached + [component]))
        }
        let target = try Syscalls.readLink(component, in: folder.descriptor, displayPath: path)
        if target.isEmpty { throw SystemError(errno: .noSuchFileOrDirectory, operation: .writeReport, path: path) }
        if target.first == slash {
          folder = try walkStart(root: true, path: path)
          reached = []
        }
        let parts = target.split(separator: slash).map(Array.init)
        if parts.isEmpty || target.last == slash {
          // A link to a folder (`/`, `d/`): NAME is a folder.
          if isLast { throw SystemError(errno: .isDirectory, operation: .writeReport, path: path) }
        }
        pending += parts.reversed()
        lastWasLink = lastWasLink || isLast  // NAME was a link: its target must be there
        continue
      }
      if isLast {
        try inSystem(component)
        return (folder.release(), component, status)
      }
      guard status.kind == .directory else { throw SystemError(errno: .notDirectory, operation: .openFolder, path: path) }
      switch Syscalls.openPassingThrough(component, in: folder.descriptor) {
      case .success(let next): folder = OwnedDescriptor(owning: next)
      case .failure(let error): throw SystemError(errno: error, operation: .openFolder, path: path)
      }
      reached.append(component)
    }
    throw SystemError(errno: .isDirectory, operation: .writeReport, path: path)
  }

  /// Whether `path`, followed, is the file standard input, output or error is (a shell's `>>`
  /// behind `/dev/stdout` however it is spelt).
  private static func isAStandardStream(_ path: String) -> Bool {
    guard let identity = Syscalls.identity(ofPath: path) else { return false }
    return [FileDescriptor(rawValue: 0), .standardOutput, .standardError].contains { stream in
      (try? Syscalls.status(of: stream, displayPath: ""))?.identity == identity
    }
  }

  /// `.NAME.appdata-`: what this run's hidden file, and any a killed run left, start with.
  private static func prefix(of name: [UInt8]) -> [UInt8] { OwnedArtifact.hiddenPrefix(of: name) }
  private static let suffix = OwnedArtifact.hiddenSuffix

  /// Writes all of `bytes`, unless a write failed already.
  /// Safe from several threads (the walk's workers stream NDJSON lines): each call's bytes go
  /// out whole.
  package func write(_ bytes: UnsafeRawBufferPointer) {
    state.withLock { state in
      guard state.failure == nil, !state.isDone else { return }
      do throws(SystemError) { try Syscalls.writeAll(descriptor, bytes, displayPath: path) } catch { state.failure = error }
    }
  }

  package func write(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { write($0) }
  }

  /// Flushes the file and puts it in place; throws the first failed write (or the flush's, or
  /// the rename's), having removed the hidden file: NAME is then as it was.
  package func commit() throws(SystemError) {
    enum Step { case alreadyDone, failed(SystemError), rename }
    let step: Step = state.withLock { state in
      guard !state.isDone else { return .alreadyDone }
      if state.failure == nil {
        do throws(SystemError) { try Syscalls.sync(descriptor, displayPath: path) } catch { state.failure = error }
      }
      if let failure = state.failure { return .failed(failure) }
      state.isDone = true
      return .rename
    }
    switch step {
    case .alreadyDone: return
    case .failed(let failure):
      discard()
      throw failure
    case .rename: break
    }
    defer { folder.close() }
    do {
      try Syscalls.renameReplacing(hidden.name, in: folder, to: name, in: folder, displayPath: path)
    } catch {
      hidden.discard()
      throw error
    }
    hidden.relinquish()
  }

  /// Unlinks the hidden file by its name, touching nothing else: what a signal handler does
  /// (from its own thread) just before the process ends.
  package func removeHiddenFile() { hidden.unlinkFileForExit() }

  /// Removes the hidden file (a failed run); NAME is left as it was.
  package func discard() {
    guard state.withLock({ state in
      defer { state.isDone = true }
      return !state.isDone
    }) else { return }
    hidden.discard()
    folder.close()
  }
}
