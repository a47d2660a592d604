import AppDataSystem
import AppDataCore
/// What `appdata migrate` was asked to do.
public struct MigrationOptions: Sendable {
  public enum ConflictPolicy: String, Sendable, CaseIterable {
    /// Change nothing and list every conflict (exit 2).
    case fail
    /// Leave the colliding entry where it is.
    case skip
    /// Move it under a free name (`name 2.ext`).
    case keepBoth = "keep-both"
    /// Merge folders recursively; a colliding file is kept both ways.
    case merge
  }

  public var source: [[UInt8]] = [Array("Library".utf8), Array("Caches".utf8)]
  public var destination: [[UInt8]] = [Array("Documents".utf8)]
  /// `--into`: one new subfolder of the destination, marked instead of each entry.
  public var into: [UInt8]?
  public var bundleID: String?
  /// `--only` and `--skip`: globs of the policy file's syntax, matched against top-level names.
  public var only: [Glob] = []
  public var skip: [Glob] = []
  public var onConflict: ConflictPolicy = .fail
  package var markers: [Marker] = [.modern]
  public var defaultsKey: String?
  public var defaultsPlist: [[UInt8]]?
  public var dryRun = false
  /// Testing only: stop with SIGKILL after this many checkpoints.
  public var stopAfter: Int?

  public init() {}
}

/// One step of a migration, as the journal records it.
package struct MigrationStep: Sendable, Equatable {
  package enum Kind: String, Sendable {
    /// Create a missing folder (the destination or the `--into` folder).
    case createFolder = "create-folder"
    /// Move an entry.
    case move
    /// Remove the user-defaults key from the plist (last step).
    case updateDefaults = "update-defaults"
  }

  package var id: Int
  package var kind: Kind
  /// The entry moved (move), or the plist (updateDefaults).
  package var source: [[UInt8]]
  /// Where it goes (move), or the folder to create (createFolder).
  package var destination: [[UInt8]]
  /// Whether to set and verify the marker on `destination` after the step.
  package var mark: Bool
  /// Files and bytes of the moved tree, as planned.
  package var files: UInt64
  package var bytes: UInt64
  /// The defaults key (updateDefaults).
  package var key: String?
}

/// An entry of the source that is not moved, and why.
package struct SkippedEntry: Sendable, Equatable {
  package var source: [[UInt8]]
  package var reason: String
  /// Set when the entry is left because of a destination conflict.
  package var conflictWith: [[UInt8]]?
  /// What the entry holds (0 when it cannot be measured): the report shows what stays.
  package var files: UInt64 = 0
  package var bytes: UInt64 = 0
}

/// Everything a migration will do, worked out before anything changes.
package struct MigrationPlan: Sendable {
  package var source: [[UInt8]]
  package var destination: [[UInt8]]
  package var into: [UInt8]?
  package var markers: [Marker]
  package var onConflict: MigrationOptions.ConflictPolicy
  package var steps: [MigrationStep]
  package var skipped: [SkippedEntry]
  /// Under `--on-conflict fail`: every planned move whose destination exists.
  package var conflicts: [SkippedEntry]

  package var moves: [MigrationStep] { steps.filter { $0.kind == .move } }
}
