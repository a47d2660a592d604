import AppDataSystem
import AppDataCore
/// Whole-tree operations on an entry, relative to its folder's descriptor, never following
/// symlinks: measuring, copying across filesystems (mode, times and every extended
/// attribute kept) and removing.
enum TreeOperations {
  /// Files (non-folders) and bytes (regular files' apparent sizes) of the tree at `name`.
  static func measure(_ name: [UInt8], in folder: FileDescriptor, display: String) throws(SystemError) -> (files: UInt64, bytes: UInt64) {
    let status = try Syscalls.status(of: name, in: folder, displayPath: display)
    switch status.kind {
    case .directory:
      let descriptor = try Syscalls.open(name, in: folder, options: .directory, displayPath: display)
      let stream = try DirectoryStream(taking: descriptor, displayPath: display)
      var total: (files: UInt64, bytes: UInt64) = (0, 0)
      for child in try stream.names() {
        let part = try measure(child, in: stream.descriptor, display: display + "/" + TerminalText.escaped(child))
        total.files += part.files
        total.bytes += part.bytes
      }
      return total
    case .regular: return (1, status.size)
    default: return (1, 0)
    }
  }

  /// Copies the tree at `name` in `source` to `newName` in `destination`, keeping sparse files'
  /// holes. Data is fsynced before the folder that holds it; `checkpoint` is called after each
  /// file. Returns the bytes of data copied.
  @discardableResult
  /// `markTop`: called on the copy's top entry (a file or a folder) the moment it is made,
  /// before anything is written in it: a partial copy carries the do-not-back-up marker for as
  /// long as it exists, so one an interrupt leaves is never backed up.
  static func copy(
    _ name: [UInt8], in source: FileDescriptor, to newName: [UInt8], in destination: FileDescriptor,
    display: String, checkpoint: () -> Void, copied copiedBytes: ((UInt64) -> Void)? = nil,
    markTop: ((FileDescriptor) throws(SystemError) -> Void)? = nil
  ) throws(SystemError) -> UInt64 {
    var copied: UInt64 = 0
    let status = try Syscalls.status(of: name, in: source, displayPath: display)
    switch status.kind {
    case .regular:
      // Both closed when this case ends. The copy's durability is its fsync (`sync`), before
      // that: a close error there would say nothing more (close(2) on Linux does not flush).
      let input = OwnedDescriptor(owning: try Syscalls.open(name, in: source, options: .readFile, displayPath: display))
      let output = OwnedDescriptor(owning: try Syscalls.open(newName, in: destination, options: .createNewFile, mode: 0o600, displayPath: display))
      try markTop?(output.descriptor)
      // With a progress line, told as it goes (a step at a time), else in one call.
      if let copiedBytes {
        copied = try Syscalls.copyData(from: input.descriptor, to: output.descriptor, displayPath: display, step: { count in
          copiedBytes(count)
          return true
        })
      } else {
        copied = try Syscalls.copyData(from: input.descriptor, to: output.descriptor, displayPath: display)
      }
      try ExtendedAttributes.copyAll(from: input.descriptor, to: output.descriptor, displayPath: display)
      try Syscalls.setMode(output.descriptor, status.permissions, displayPath: display)
      try Syscalls.sync(output.descriptor, displayPath: display)
    case .directory:
      try Syscalls.makeDirectory(newName, in: destination, mode: 0o700, displayPath: display)
      let input = try Syscalls.open(name, in: source, options: .directory, displayPath: display)
      let inputStream = try DirectoryStream(taking: input, displayPath: display)
      let output = OwnedDescriptor(owning: try Syscalls.open(newName, in: destination, options: .directory, displayPath: display))
      try markTop?(output.descriptor)
      for child in try inputStream.names() {
        copied += try copy(child, in: inputStream.descriptor, to: child, in: output.descriptor,
                           display: display + "/" + TerminalText.escaped(child), checkpoint: checkpoint, copied: copiedBytes)
      }
      try ExtendedAttributes.copyAll(from: inputStream.descriptor, to: output.descriptor, displayPath: display)
      try Syscalls.setMode(output.descriptor, status.permissions, displayPath: display)
      try Syscalls.sync(output.descriptor, displayPath: display)
    case .symbolicLink:
      let target = try Syscalls.readLink(name, in: source, displayPath: display)
      try Syscalls.makeSymbolicLink(newName, in: destination, target: target, displayPath: display)
    case .other:
      throw SystemError(errno: .notSupported, operation: .copySpecialFile, path: display)
    }
    // Times last: adding a folder's children changed its modification time.
    try Syscalls.setTimes(newName, in: destination, access: status.accessTime, modification: status.modificationTime, displayPath: display)
    checkpoint()
    return copied
  }

  /// Removes the tree at `name`; absent is fine (a resumed removal).
  static func remove(_ name: [UInt8], in folder: FileDescriptor, display: String) throws(SystemError) {
    let status: FileStatus
    do {
      status = try Syscalls.status(of: name, in: folder, displayPath: display)
    } catch Errno.noSuchFileOrDirectory {
      return
    }
    if status.kind == .directory {
      let descriptor = try Syscalls.open(name, in: folder, options: .directory, displayPath: display)
      let stream = try DirectoryStream(taking: descriptor, displayPath: display)
      for child in try stream.names() {
        try remove(child, in: stream.descriptor, display: display + "/" + TerminalText.escaped(child))
      }
    }
    do {
      try Syscalls.remove(name, in: folder, isDirectory: status.kind == .directory, displayPath: display)
    } catch Errno.noSuchFileOrDirectory {
    }
  }
}
