import AppDataSystem
import AppDataCore
/// Receives what the walk finds. The walk gives each worker thread its own visitor,
/// so a visitor needs no locking; the caller merges them when the walk is over.
package protocol WalkVisitor: SendableMetatype {
  /// One entry under the root (never the root itself).
  mutating func visit(_ entry: WalkedEntry)
  /// An entry that could not be read: `path` relative to the root, and why.
  mutating func failed(path: [UInt8], error: SystemError)
  /// A folder's reading begins (`path` relative to the root, borrowed for the call; `tag`, what
  /// `folderTag()` gave it when it was found, 0 for the root) and ends: the entries and failures
  /// in between are that folder's, its own (it cannot be opened, or listed) included. A visitor
  /// that keeps entries by folder (Android's tree, `AndroidWalkVisitor`) groups them; the others
  /// need not.
  mutating func beginFolder(_ path: UnsafeBufferPointer<UInt8>, tag: Int)
  mutating func endFolder()
  /// In a walk that reads no marker (`Walker.Reading.linkTargets`): the tag of the folder just
  /// visited, which its `beginFolder` receives.
  mutating func folderTag() -> Int
}

extension WalkVisitor {
  package mutating func beginFolder(_ path: UnsafeBufferPointer<UInt8>, tag: Int) {}
  package mutating func endFolder() {}
  package mutating func folderTag() -> Int { 0 }
}

/// What every reader feeds, the walk on disk and the readers of an archive and of a backup's
/// manifest alike: the walk's entries and failures, and the findings a reader makes about its
/// input itself (a manifest row that cannot be decoded, a file a backup should not hold). The
/// readers know nothing of what a visitor does with them; `Input` pairs each reader with the
/// accumulator (`AuditAccumulator`) and makes the reports.
package protocol EntryVisitor: WalkVisitor {
  mutating func note(_ finding: Finding)
}
