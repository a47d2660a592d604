import AppDataSystem
import AppDataCore
/// What a migration did (or, with `--dry-run`, would do), entry by entry.
public struct MigrationReport: Sendable {
  public enum Action: String, Sendable {
    /// Renamed into place (same filesystem).
    case moved
    /// Copied across filesystems, then the source removed.
    case copied
    /// Left in place: owned by the system, not selected, or a conflict under `--on-conflict skip`.
    case skipped
    /// Left in place because its destination exists (planning, or a name that appeared since).
    case conflict
    /// An error stopped this entry; the journal is kept for a rerun.
    case failed
    /// `--dry-run`: would be moved.
    case planned
  }

  public struct Entry: Sendable {
    public var action: Action
    public var source: [[UInt8]]
    public var destination: [[UInt8]]?
    public var files: UInt64
    public var bytes: UInt64
    /// Moved across filesystems: the bytes of data copied (holes are not copied); nil for a rename.
    public var copiedBytes: UInt64? = nil
    /// The markers set and verified on the destination (empty when none).
    package var markers: [Marker]
    /// Why it was skipped, what it conflicts with, or what failed.
    public var message: String?
  }

  public var container: String
  public var source: [[UInt8]]
  public var destination: [[UInt8]]
  public var dryRun: Bool
  /// True when an interrupted migration's journal was found and finished.
  public var resumed: Bool
  public var entries: [Entry]
  /// Errors not tied to one entry (a folder that could not be created, the defaults plist).
  public var errors: [String]
  /// What happened to the defaults key, if one was given.
  public var defaultsNote: String?

  public var hasFailures: Bool { !errors.isEmpty || entries.contains { $0.action == .failed || $0.action == .conflict } }

  /// Files and bytes by action.
  public func totals(_ action: Action) -> (entries: Int, files: UInt64, bytes: UInt64) {
    let matching = entries.filter { $0.action == action }
    return (matching.count, matching.reduce(0) { $0 + $1.files }, matching.reduce(0) { $0 + $1.bytes })
  }

  // MARK: - Output

  public func jsonDocument() -> JSONValue {
    func path(_ components: [[UInt8]]) -> [JSONKey: JSONValue] { JSONValue.pathFields(RelativePath.join(components)) }
    let items: [JSONValue] = entries.map { entry in
      var object: [JSONKey: JSONValue] = ["action": .string(entry.action.rawValue), "files": .unsigned(entry.files), "bytes": .unsigned(entry.bytes)]
      if let copied = entry.copiedBytes { object["copiedBytes"] = .unsigned(copied) }
      for (key, value) in path(entry.source) { object[key == "path" ? "source" : "sourceBase64"] = value }
      if let destination = entry.destination {
        for (key, value) in path(destination) { object[key == "path" ? "destination" : "destinationBase64"] = value }
      } else {
        object["destination"] = .null
      }
      object["marker"] = MarkerSet(entry.markers).name.map { .string($0) } ?? .null
      object["message"] = entry.message.map { .string($0) } ?? .null
      return .object(object)
    }
    var totals: [JSONKey: JSONValue] = [:]
    for action in [Action.moved, .copied, .skipped, .conflict, .failed, .planned] {
      let sum = self.totals(action)
      totals[action.rawValue] = .object(["entries": .integer(Int64(sum.entries)), "files": .unsigned(sum.files), "bytes": .unsigned(sum.bytes)])
    }
    return .object([
      "schemaVersion": .integer(1),
      "tool": .object(["name": .string(AppDataVersion.name), "version": .string(AppDataVersion.current)]),
      "container": .string(container),
      "source": .string(RelativePath.display(RelativePath.join(source))),
      "destination": .string(RelativePath.display(RelativePath.join(destination))),
      "dryRun": .bool(dryRun),
      "resumed": .bool(resumed),
      "entries": .array(items),
      "totals": .object(totals),
      "errors": .array(errors.map { .string($0) }),
      "defaults": defaultsNote.map { .string($0) } ?? .null,
    ])
  }

  public func table() -> String {
    var lines = ["Container: \(TerminalText.escaped(container))",
                 "Migrating \(TerminalText.escaped(RelativePath.join(source))) -> \(TerminalText.escaped(RelativePath.join(destination)))"
                   + (dryRun ? " (dry run: nothing changes)" : "") + (resumed ? " (resuming an interrupted migration)" : ""),
                 ""]
    if entries.isEmpty {
      lines.append("Nothing to migrate.")
    } else {
      var rows = [["ACTION", "FILES", "SIZE", "MARKER", "ENTRY"]]
      for entry in entries {
        var description = TerminalText.escaped(RelativePath.join(entry.source))
        if let destination = entry.destination { description += " -> " + TerminalText.escaped(RelativePath.join(destination)) }
        if let message = entry.message { description += "  (" + TerminalText.escaped(message) + ")" }
        // Across filesystems, what was copied: a sparse file's holes are not.
        let size = ByteSize.human(entry.bytes) + (entry.copiedBytes.map { $0 == entry.bytes ? "" : " (" + ByteSize.human($0) + " copied)" } ?? "")
        rows.append([entry.action.rawValue, String(entry.files), size,
                     MarkerSet(entry.markers).name ?? "-", description])
      }
      // Narrow terminals: the description (paths, the destination, why a row was skipped) is
      // wrapped in its column with a hanging indent, never cut; the marker column goes first
      // when the others leave it too little.
      lines.append(contentsOf: TextTable.renderWrappingLast(rows, rightAligned: [1, 2], dropOrder: [3]))
    }
    if let defaultsNote { lines += ["", "Defaults: " + defaultsNote] }
    for error in errors { lines += ["", "Error: " + TerminalText.escaped(error)] }
    lines.append("")
    var summary: [String] = []
    for action in [Action.planned, .moved, .copied, .skipped, .conflict, .failed] {
      let sum = totals(action)
      if sum.entries > 0 { summary.append("\(sum.entries) \(action.rawValue) (\(Plural.counted(sum.files, "file")), \(ByteSize.human(sum.bytes)))") }
    }
    lines.append("Total: " + (summary.isEmpty ? "nothing to do" : summary.joined(separator: ", ")))
    return lines.joined(separator: "\n") + "\n"
  }
}

extension MarkerSet {
  init(_ markers: [Marker]) {
    self = []
    for marker in markers { insert(MarkerSet(marker)) }
  }
}
