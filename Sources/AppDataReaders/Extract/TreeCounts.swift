import AppDataSystem
/// What a container's tree holds, as `extract` and `restore` count it: its folders, files and
/// symlinks, and the files' bytes (the root not counted).
public struct TreeCounts: Sendable, Equatable {
  public var folders: UInt64 = 0
  public var files: UInt64 = 0
  public var symlinks: UInt64 = 0
  /// The files' bytes. What a run wrote counts a symlink it wrote as a file holding its target as
  /// a file, not its bytes; what is measured on disk (an undo's kept copy) counts them.
  public var bytes: UInt64 = 0

  package init() {}

  /// Counts a file of `bytes` bytes.
  package mutating func addFile(bytes: UInt64) {
    files += 1
    self.bytes = self.bytes.saturatingSum(bytes)
  }

  /// Counts an entry as stat(2) describes it: a folder, a symlink, or else a file of its size.
  package mutating func add(_ status: FileStatus) {
    switch status.kind {
    case .directory: folders += 1
    case .symbolicLink: symlinks += 1
    case .regular, .other: addFile(bytes: status.size)
    }
  }
}
