import AppDataSystem
import AppDataCore
import AppDataReaders

extension RestoreReport {
  /// The table: per container, what it holds now and what it held, where the previous
  /// contents are kept; then what was not written.
  public func table() -> String {
    let verb = isUndo ? (dryRun ? "Would put back" : "Put back") : (dryRun ? "Would restore" : "Restored")
    var lines = ["Device: \(TerminalText.escaped(device)) (\(TerminalText.escaped(udid)))"]
    if !isUndo { lines.append("Source: \(TerminalText.escaped(source))") }
    lines.append("")
    var rows: [[String]] = [["CONTAINER", "KIND", "FILES", "BYTES", "REPLACES FILES", "REPLACES BYTES"]]
    for container in containers {
      rows.append([TerminalText.escaped(container.id), container.kind.rawValue, String(container.contents.files + container.contents.symlinks),
                   ByteSize.human(container.contents.bytes), String(container.replacedFiles), ByteSize.human(container.replacedBytes)])
    }
    lines += TextTable.render(rows, rightAligned: [2, 3, 4, 5], cuttable: [0], dropOrder: [1])
    lines.append("")
    for container in containers {
      lines.append("\(verb): \(TerminalText.escaped(container.path))")
      if let kept = container.keptCopy {
        lines.append("  previous contents kept in \(TerminalText.escaped(kept)) (\(ByteSize.human(container.keptBytes))); 'appdata restore --undo \(TerminalText.escaped(udid)) --app \(TerminalText.escaped(container.id))' puts them back")
      }
    }
    if !isUndo {
      lines.append("")
      lines += problems.tableLines()
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// `{schemaVersion, tool, source, device, udid, undo, dryRun, containers, problems}`
  /// (Docs/restore.schema.json).
  public func jsonDocument() -> JSONValue {
    problems.document([
      "source": isUndo ? .null : .string(source),
      "device": .string(device),
      "udid": .string(udid),
      "undo": .bool(isUndo),
      "dryRun": .bool(dryRun),
      "containers": .array(containers.map { container in
        .object(container.contents.jsonMembers.merging([
          "id": .string(container.id), "kind": .string(container.kind.rawValue), "path": .string(container.path),
          "replacedFiles": .unsigned(container.replacedFiles), "replacedBytes": .unsigned(container.replacedBytes),
          "keptCopy": container.keptCopy.map { .string($0) } ?? .null, "keptBytes": .unsigned(container.keptBytes),
        ]) { $1 })
      }),
    ])
  }
}
