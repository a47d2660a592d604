import AppDataSystem
/// `appdata audit CONTAINER --backup BACKUP`: appdata's prediction (the container's categories)
/// against what a device backup really holds for the container's domain.
package struct BackupComparison: Sendable {
  /// Files and bytes.
  package struct Count: Sendable, Equatable {
    package var files: UInt64 = 0
    package var bytes: UInt64 = 0
    package mutating func add(_ bytes: UInt64) {
      files += 1
      self.bytes = self.bytes.saturatingSum(bytes)
    }
  }

  /// The backup folder and the domain compared with.
  package var backup: String
  package var domain: String
  /// Backed up as predicted: in the container as critical, and in the backup.
  package var inBoth = Count()
  /// Predicted backed up but absent from the backup (each a `backup-missing-file` finding).
  package var onlyInContainer = Count()
  /// In the backup though the container has them as not backed up (each a `backup-unexpected-file`).
  package var unexpectedInBackup = Count()
  /// In the backup, not in the container at all (deleted since, or created by the system): counted only.
  package var onlyInBackup = Count()

  /// The domain a container of `kind` with `id` has in a backup.
  package static func domain(kind: ContainerKind, id: String) -> String {
    let prefix = ContainerPlaces.backupDomains.first { $0.kind == kind }?.prefix ?? "AppDomain"
    return prefix + "-" + id
  }

  /// Compares `report` (whose `entries` list every file) with the backup's files of `domain`,
  /// adding the findings and the comparison to it.
  package static func compare(_ report: inout AuditReport, backupFiles: [[UInt8]: UInt64], backup: String, domain: String) {
    var comparison = BackupComparison(backup: backup, domain: domain)
    var findings: [Finding] = []
    var seen = Set<[UInt8]>()
    for entry in report.entries ?? [] {
      let held = backupFiles[entry.path]
      if held != nil { seen.insert(entry.path) }
      switch (entry.category == .critical, held) {
      case (true, .some): comparison.inBoth.add(entry.bytes)
      case (true, nil):
        comparison.onlyInContainer.add(entry.bytes)
        findings.append(Finding(rule: .backupMissingFile, path: entry.path,
                                message: "predicted backed up (critical), but \(domain) in the backup does not hold it", bytes: entry.bytes))
      case (false, .some(let bytes)):
        comparison.unexpectedInBackup.add(bytes)
        let marker = entry.excludedBy.map { " (excluded by \(TerminalText.escaped($0)))" } ?? ""
        findings.append(Finding(rule: .backupUnexpectedFile, path: entry.path,
                                message: "the backup holds it, but the container has it as \(entry.category.rawValue)\(marker)", bytes: bytes))
      case (false, nil): break
      }
    }
    for (path, bytes) in backupFiles where !seen.contains(path) { comparison.onlyInBackup.add(bytes) }
    report.findings = Finding.sortedForReport(report.findings + findings)
    report.backupComparison = comparison
  }
}

extension BackupComparison {
  package func json() -> JSONValue {
    func count(_ value: Count) -> JSONValue { .object(["files": .unsigned(value.files), "bytes": .unsigned(value.bytes)]) }
    return .object([
      "backup": .string(backup), "domain": .string(domain), "inBoth": count(inBoth), "onlyInContainer": count(onlyInContainer),
      "unexpectedInBackup": count(unexpectedInBackup), "onlyInBackup": count(onlyInBackup),
    ])
  }
}
