import AppDataSystem
import AppDataCore
import AppDataReaders

extension BackupExtraction.Report {
  /// The table: each container's folders, files, symlinks and bytes, then what was not written.
  public func table() -> String {
    var lines = ["Backup: \(TerminalText.escaped(backup))", (dryRun ? "Would write: " : "Written: ") + TerminalText.escaped(output)
                 + (isPackage ? " (an Xcode package; the container in AppData)" : ""), ""]
    var rows: [[String]] = [["CONTAINER", "KIND", "FOLDER", "FOLDERS", "FILES", "SYMLINKS", "BYTES"]]
    for container in containers {
      rows.append([TerminalText.escaped(container.id), container.kind.rawValue, TerminalText.escaped(container.root), String(container.written.folders),
                   String(container.written.files), String(container.written.symlinks), ByteSize.human(container.written.bytes)])
    }
    // Narrow terminals: the id and folder cut in the middle, then KIND, SYMLINKS and FOLDERS go.
    lines += TextTable.render(rows, rightAligned: [3, 4, 5, 6], cuttable: [0, 2], dropOrder: [1, 5, 3])
    let differences = containers.flatMap { container in container.sizeDifferences.map { (container.id, $0) } }
    if !differences.isEmpty {
      lines.append("")
      lines.append("Written with another length than the manifest's Size (the file changed while the backup was made):")
      for (id, difference) in differences {
        lines.append("  \(TerminalText.escaped(id)): \(TerminalText.escaped(RelativePath.display(difference.path))): \(difference.written) bytes, recorded \(difference.manifestSize)")
      }
    }
    lines.append("")
    lines += problems.tableLines()
    return lines.joined(separator: "\n") + "\n"
  }

  /// `{schemaVersion, tool, backup, output, package, dryRun, containers, problems}`
  /// (Docs/extract.schema.json).
  public func jsonDocument() -> JSONValue {
    problems.document([
      "backup": .string(backup),
      "output": .string(output),
      "package": .bool(isPackage),
      "dryRun": .bool(dryRun),
      "containers": .array(containers.map { container in
        .object(container.written.jsonMembers.merging([
          "id": .string(container.id), "kind": .string(container.kind.rawValue), "domain": .string(container.domain),
          "folder": .string(container.root),
          "sizeDifferences": .array(container.sizeDifferences.map { difference in
            var object = JSONValue.pathFields(difference.path)
            object["manifestSize"] = .unsigned(difference.manifestSize)
            object["written"] = .unsigned(difference.written)
            return .object(object)
          }),
        ]) { $1 })
      }),
    ])
  }

  /// The entries not written (errors), and whether the run fails at `failOn` ("error",
  /// "warning" or "never").
  public func fails(at failOn: String) -> Bool {
    let errors = problems.filter(\.isError).count
    switch failOn {
    case "never": return false
    case "warning": return problems.count > 0
    default: return errors > 0
    }
  }
}

// MARK: - What was not written, as extract and restore show it

extension [ExtractReport.Problem] {
  /// `Not written: none`, or the errors and warnings counted, then a line each.
  func tableLines() -> [String] {
    let errors = filter(\.isError)
    var lines = [isEmpty ? "Not written: none" : "Not written: \(errors.count); warnings: \(count - errors.count)"]
    for problem in self {
      // A domain's own finding (no path: the domain is not written at all) names the domain alone.
      let path = problem.path.isEmpty ? "" : "\(TerminalText.escaped(RelativePath.display(problem.path))): "
      lines.append("  \(problem.isError ? "error  " : "warning") \(TerminalText.escaped(problem.domain)): \(path)\(TerminalText.controlsEscaped(problem.message))")
    }
    return lines
  }

  /// The JSON document: `fields`, with its schema's version (1), the tool, and these problems,
  /// each with its path fields, domain, message and severity.
  func document(_ fields: [JSONKey: JSONValue]) -> JSONValue {
    var document = fields
    document["schemaVersion"] = .integer(1)
    document["tool"] = AppDataVersion.toolJSON
    document["problems"] = .array(map { problem in
      var object = JSONValue.pathFields(problem.path)
      object["domain"] = .string(problem.domain)
      object["message"] = .string(problem.message)
      object["severity"] = .string(problem.isError ? "error" : "warning")
      return .object(object)
    })
    return .object(document)
  }
}

extension TreeCounts {
  /// `folders`, `files`, `symlinks` and `bytes`: the members extract's and restore's JSON give a
  /// container's tree.
  var jsonMembers: [JSONKey: JSONValue] {
    ["folders": .unsigned(folders), "files": .unsigned(files), "symlinks": .unsigned(symlinks), "bytes": .unsigned(bytes)]
  }
}
