import AppDataSystem
/// A container's backed-up bytes by folder, compact and bounded: every top-level folder and the
/// largest folders two levels down, at most `maximumFolders` (50) in all, whatever the container
/// holds. Every JSON report carries it (`folders`), so that a baseline made without `--list`
/// still says which folders grew.
package struct FolderSummary: Sendable, Equatable {
  /// Folder path (`Documents`, `Library/Application Support`) to backed-up bytes, sorted by path.
  package var folders: [(path: [UInt8], bytes: UInt64)] = []
  /// Whether every folder with backed-up bytes is here (none was left out to keep it bounded):
  /// a folder missing from a complete summary held nothing backed up.
  package var isComplete = true

  package static let maximumFolders = 50
  /// The levels of folders summed (1: `Documents`, 2: `Documents/Photos`).
  package static let depth = 2

  package init() {}

  package static func == (a: FolderSummary, b: FolderSummary) -> Bool {
    a.isComplete == b.isComplete && a.folders.count == b.folders.count
      && zip(a.folders, b.folders).allSatisfy { $0.path == $1.path && $0.bytes == $1.bytes }
  }

  /// The summary of `bytes` by folder, keeping the top level and then the largest deeper ones.
  package init(_ bytes: [[UInt8]: UInt64]) {
    let all = bytes.filter { $0.value > 0 }.map { (path: $0.key, bytes: $0.value) }
    var kept = all.filter { !$0.path.contains(0x2F) }
    let deeper = all.filter { $0.path.contains(0x2F) }
      .sorted { a, b in a.bytes != b.bytes ? a.bytes > b.bytes : RelativePath.precedes(a.path, b.path) }
    let room = max(0, Self.maximumFolders - kept.count)
    kept += deeper.prefix(room)
    isComplete = deeper.count <= room && kept.count <= Self.maximumFolders
    folders = Array(kept.sorted { RelativePath.precedes($0.path, $1.path) }.prefix(Self.maximumFolders))
  }

  /// The bytes of `path`, if the summary has it (as a report writes it: a name that is not
  /// UTF-8 with U+FFFD).
  package func bytes(of path: [UInt8]) -> UInt64? {
    let written = Array(String(decoding: path, as: UTF8.self).utf8)
    return folders.first { $0.path == written || $0.path == path }?.bytes
  }
}
