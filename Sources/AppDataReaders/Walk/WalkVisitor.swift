import AppDataSystem
import AppDataCore
/// Receives what the walk finds. The walk gives each worker thread its own visitor,
/// so a visitor needs no locking; the caller merges them when the walk is over.
public protocol WalkVisitor: SendableMetatype {
  /// One entry under the root (never the root itself).
  mutating func visit(_ entry: WalkedEntry)
  /// An entry that could not be read: `path` relative to the root, and why.
  mutating func failed(path: [UInt8], error: SystemError)
}
