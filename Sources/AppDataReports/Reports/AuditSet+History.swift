import AppDataSystem
import AppDataCore
// MARK: - The history of a device's backups (issue 34)

extension AuditSet {
  /// One device's backups in a folder of backups, in date order, and each container's
  /// backed-up files and bytes at each: what grew from backup to backup.
  struct DeviceHistory {
    var device: String?
    var udid: String
    /// Indices in `backups`, oldest first (by folder name when a backup gives no date).
    var backups: [Int]
    /// Whether the backups were ordered by date; false when one of them gives none (Status.plist,
    /// Manifest.plist and Info.plist all without a readable date): then by folder name.
    var byDate: Bool
    struct Line {
      var id: String
      var kind: ContainerKind
      /// Per backup of `backups`: the backed-up files and bytes, or nil when the container
      /// was not in that backup.
      var points: [CategoryTotals?]
    }
    var containers: [Line]
  }

  /// Where a backup's folder name says which device it is: Finder names an archived copy of a
  /// device's backup after the device's UDID with the date and time appended
  /// (`<UDID>-YYYYMMDD-HHMMSS`, *unconfirmed*); the device identifier in Info.plist comes first.
  static let archivedCopySuffix: [(length: Int, dashes: [Int])] = [(16, [0, 9])]

  /// The device a backup belongs to: Info.plist's identifier, else its folder's name without an
  /// archived copy's date suffix.
  static func deviceKey(_ backup: BackupAudit) -> String {
    if let identifier = backup.info?.deviceIdentifier, !identifier.isEmpty { return identifier }
    let name = Array(backup.udid.utf8)
    for suffix in archivedCopySuffix where name.count > suffix.length {
      let tail = name.suffix(suffix.length)
      let start = tail.startIndex
      let shape = suffix.dashes.allSatisfy { tail[start + $0] == 0x2D }
        && tail.indices.filter { !suffix.dashes.contains($0 - start) }.allSatisfy { (0x30...0x39).contains(tail[$0]) }
      if shape { return String(decoding: name.dropLast(suffix.length), as: UTF8.self) }
    }
    return backup.udid
  }

  /// Backups in date order, oldest first; when one of them gives no date, in folder-name order
  /// (as each device's history): what the table, the JSON and the HTML list.
  public mutating func orderBackupsByDate() {
    let byDate = backups.allSatisfy { !($0.info?.date ?? "").isEmpty }
    backups.sort { a, b in
      let (da, db) = byDate ? (a.info?.date ?? "", b.info?.date ?? "") : ("", "")
      return da != db ? da.utf8.lexicographicallyPrecedes(db.utf8) : a.path.utf8.lexicographicallyPrecedes(b.path.utf8)
    }
  }

  /// The latest audited backup of each device (by date, else by folder name), and how many
  /// older copies there are: what the totals count, so that a device's history is not summed.
  func latestBackups() -> (latest: [Int], older: Int) {
    var latest: [JSONKey: Int] = [:]
    var audited = 0
    for (index, backup) in backups.enumerated() where backup.status == .audited {
      audited += 1
      let key = JSONKey(Self.deviceKey(backup))
      guard let current = latest[key] else { latest[key] = index; continue }
      let (da, db) = (backups[current].info?.date ?? "", backup.info?.date ?? "")
      let later = !da.isEmpty && !db.isEmpty ? da.utf8.lexicographicallyPrecedes(db.utf8)
        : backups[current].path.utf8.lexicographicallyPrecedes(backup.path.utf8)
      if later { latest[key] = index }
    }
    return (latest.values.sorted(), audited - latest.count)
  }

  /// Each id's backed-up bytes, largest first (then by id): in a folder of backups, from each
  /// device's latest backup, the largest where several devices hold it (`--list-apps`).
  public func appSizes() -> [AppSize] {
    var sizes: [JSONKey: AppSize] = [:]
    for index in countedReports(grouping()).indices {
      guard let size = AppSize(reports[index]) else { continue }
      if let other = sizes[JSONKey(size.id)], other.bytes >= size.bytes { continue }
      sizes[JSONKey(size.id)] = size
    }
    return sizes.values.sorted(by: AppSize.largestFirst)
  }

  /// The reports the totals count: the containers of each device's latest backup, and those
  /// beside the backups; with the number of older copies left out.
  func countedReports(_ grouping: Grouping) -> (indices: [Int], olderCopies: Int) {
    guard !backups.isEmpty else { return (Array(reports.indices), 0) }
    let (latest, older) = latestBackups()
    return (latest.flatMap { grouping.containers[$0] } + grouping.loose, older)
  }

  /// The history of each device with an audited backup, devices in the order their first
  /// backup comes; containers by kind and id (the system domains by their line's name).
  func histories(_ grouping: Grouping) -> [DeviceHistory] {
    var order: [String] = []
    var byDevice: [JSONKey: [Int]] = [:]
    for (index, backup) in backups.enumerated() where backup.status == .audited {
      let key = Self.deviceKey(backup)
      if byDevice[JSONKey(key)] == nil { order.append(key) }
      byDevice[JSONKey(key), default: []].append(index)
    }
    return order.map { key in
      let all = byDevice[JSONKey(key)] ?? []
      let byDate = all.allSatisfy { !(backups[$0].info?.date ?? "").isEmpty }
      let members = all.sorted { a, b in
        let (da, db) = byDate ? (backups[a].info?.date ?? "", backups[b].info?.date ?? "") : ("", "")
        return da != db ? da.utf8.lexicographicallyPrecedes(db.utf8) : backups[a].udid.utf8.lexicographicallyPrecedes(backups[b].udid.utf8)
      }
      var lines: [JSONKey: DeviceHistory.Line] = [:]
      var lineOrder: [JSONKey] = []
      for (position, backup) in members.enumerated() {
        for reportIndex in grouping.containers[backup] {
          let report = reports[reportIndex]
          let id = report.id ?? report.name
          let key = JSONKey(report.kind.rawValue + " " + id)
          if lines[key] == nil {
            lines[key] = DeviceHistory.Line(id: id, kind: report.kind, points: Array(repeating: nil, count: members.count))
            lineOrder.append(key)
          }
          lines[key]!.points[position] = report.backup
        }
      }
      let device = members.last.flatMap { backups[$0].info?.deviceName }
      return DeviceHistory(device: device, udid: key, backups: members, byDate: byDate, containers: lineOrder.compactMap { lines[$0] })
    }
  }

  /// `history` in the JSON report of a folder of backups.
  func historyJSON(_ grouping: Grouping) -> JSONValue {
    .array(histories(grouping).map { history in
      .object([
        "device": history.device.map { .string($0) } ?? .null,
        "udid": .string(history.udid),
        "orderedBy": .string(history.byDate ? "date" : "folder name"),
        "backups": .array(history.backups.map { index in
          .object(["path": .string(backups[index].path), "date": backups[index].info?.date.map { .string($0) } ?? .null])
        }),
        "containers": .array(history.containers.map { line in
          .object([
            "id": .string(line.id), "kind": .string(line.kind.rawValue),
            "points": .array(line.points.map { point in
              point.map { .object(["files": .unsigned($0.files), "bytes": .unsigned($0.bytes)]) } ?? .null
            }),
          ])
        }),
      ])
    })
  }

  /// The table's block per device with two backups or more: the containers that changed
  /// most (at most 15), first and last backed-up bytes, the change, and a sparkline.
  func historyLines(_ grouping: Grouping, size: (UInt64) -> String, unicode: Bool) -> [String] {
    var lines: [String] = []
    for history in histories(grouping) where history.backups.count > 1 {
      let first = backups[history.backups.first!].info?.date ?? "?"
      let last = backups[history.backups.last!].info?.date ?? "?"
      if history.byDate {
        lines.append("History of \(TerminalText.escaped(history.device ?? history.udid)) (\(TerminalText.escaped(history.udid))): "
                     + "\(history.backups.count) backups from \(TerminalText.escaped(first)) to \(TerminalText.escaped(last))")
      } else {
        lines.append("History of \(TerminalText.escaped(history.device ?? history.udid)) (\(TerminalText.escaped(history.udid))): "
                     + "\(history.backups.count) backups, ordered by folder name (not every backup gives its date)")
      }
      func bytes(_ point: CategoryTotals??) -> UInt64 { (point ?? nil)?.bytes ?? 0 }
      let changed = history.containers.map { line -> (line: DeviceHistory.Line, change: Int64) in
        let change = Int64(clamping: bytes(line.points.last)) - Int64(clamping: bytes(line.points.first))
        return (line, change)
      }.sorted { a, b in
        a.change.magnitude != b.change.magnitude ? a.change.magnitude > b.change.magnitude : a.line.id.utf8.lexicographicallyPrecedes(b.line.id.utf8)
      }
      var rows: [[String]] = [["CONTAINER", "KIND", "FIRST", "LAST", "CHANGE", "OVER TIME"]]
      for item in changed.prefix(Self.historyRows) {
        let sign = item.change > 0 ? "+" : item.change < 0 ? "-" : ""
        rows.append([TerminalText.escaped(item.line.id), item.line.kind.rawValue,
                     item.line.points.first.flatMap { $0 }.map { size($0.bytes) } ?? "-",
                     item.line.points.last.flatMap { $0 }.map { size($0.bytes) } ?? "-",
                     sign + size(item.change.magnitude), Self.sparkline(item.line.points.map { $0?.bytes }, unicode: unicode)])
      }
      lines += TextTable.render(rows, rightAligned: [2, 3, 4], indent: 2).map { "  " + $0 }
      if changed.count > Self.historyRows { lines.append("  … and \(changed.count - Self.historyRows) more") }
      lines.append("")
    }
    return lines
  }

  /// Containers a device's history block shows before "… and N more".
  static let historyRows = 15

  /// One character per backup, the bar's height its bytes between the line's least and most
  /// (`▁▂▃▄▅▆▇█`, or ASCII `_.-=+*#@` when the terminal's locale is not UTF-8); a space where
  /// the container was not in the backup.
  static func sparkline(_ values: [UInt64?], unicode: Bool) -> String {
    let bars = unicode ? Array("▁▂▃▄▅▆▇█") : Array("_.-=+*#@")
    let present = values.compactMap { $0 }
    guard let low = present.min(), let high = present.max() else { return String(repeating: " ", count: values.count) }
    return String(values.map { value -> Character in
      guard let value else { return " " }
      guard high > low else { return bars[bars.count / 2] }
      let step = Double(value - low) / Double(high - low) * Double(bars.count - 1)
      return bars[Int(step.rounded())]
    })
  }
}

/// An app's id and its backed-up bytes.
public struct AppSize: Sendable, Equatable {
  public var id: String
  public var bytes: UInt64

  /// The id and backed-up bytes of a report's container; nil for one without an id.
  package init?(_ report: AuditReport) {
    guard let id = report.id else { return nil }
    self.id = id
    bytes = report.backup.bytes
  }

  /// The order `--list-apps` and a refused `--app` list sizes in: largest first, then by id,
  /// compared by its UTF-8 bytes.
  package static func largestFirst(_ a: AppSize, _ b: AppSize) -> Bool {
    a.bytes != b.bytes ? a.bytes > b.bytes : a.id.utf8.lexicographicallyPrecedes(b.id.utf8)
  }
}
