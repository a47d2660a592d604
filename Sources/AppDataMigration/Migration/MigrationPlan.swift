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
  public var markers: [Marker] = [.modern]
  public var defaultsKey: String?
  public var defaultsPlist: [[UInt8]]?
  public var dryRun = false
  /// Testing only: stop with SIGKILL after this many checkpoints.
  public var stopAfter: Int?

  public init() {}
}

/// One step of a migration, as the journal records it.
public struct MigrationStep: Sendable, Equatable {
  public enum Kind: String, Sendable {
    /// Create a missing folder (the destination or the `--into` folder).
    case createFolder = "create-folder"
    /// Move an entry.
    case move
    /// Remove the user-defaults key from the plist (last step).
    case updateDefaults = "update-defaults"
  }

  public var id: Int
  public var kind: Kind
  /// The entry moved (move), or the plist (updateDefaults).
  public var source: [[UInt8]]
  /// Where it goes (move), or the folder to create (createFolder).
  public var destination: [[UInt8]]
  /// Whether to set and verify the marker on `destination` after the step.
  public var mark: Bool
  /// Files and bytes of the moved tree, as planned.
  public var files: UInt64
  public var bytes: UInt64
  /// The defaults key (updateDefaults).
  public var key: String?
}

/// An entry of the source that is not moved, and why.
public struct SkippedEntry: Sendable, Equatable {
  public var source: [[UInt8]]
  public var reason: String
  /// Set when the entry is left because of a destination conflict.
  public var conflictWith: [[UInt8]]?
  /// What the entry holds (0 when it cannot be measured): the report shows what stays.
  public var files: UInt64 = 0
  public var bytes: UInt64 = 0
}

/// Everything a migration will do, worked out before anything changes.
public struct MigrationPlan: Sendable {
  public var source: [[UInt8]]
  public var destination: [[UInt8]]
  public var into: [UInt8]?
  public var markers: [Marker]
  public var onConflict: MigrationOptions.ConflictPolicy
  public var steps: [MigrationStep]
  public var skipped: [SkippedEntry]
  /// Under `--on-conflict fail`: every planned move whose destination exists.
  public var conflicts: [SkippedEntry]

  public var moves: [MigrationStep] { steps.filter { $0.kind == .move } }
}
