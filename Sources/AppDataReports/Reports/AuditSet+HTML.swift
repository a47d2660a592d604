import AppDataSystem
import AppDataCore
// MARK: - `--format html`: one self-contained page to look at

extension AuditSet {
  /// One HTML file that loads nothing from the network: a treemap of each container (a cell per
  /// folder and large file, area = bytes, colour = category; for Android's data, the destinations
  /// that carry the file: `destinationSlots`), the summary, the largest
  /// backed-up files and the findings; for a report of many, first a treemap of the containers
  /// sized by backed-up bytes. Every name reaches the page as JSON data or escaped text and is
  /// drawn with `textContent`, never as markup.
  public func html(failOn: Severity?) -> String {
    let grouping = grouping()
    let labels = labels(grouping)
    func label(_ report: AuditReport) -> String { labels[report.container] ?? report.name }
    var backupOf: [JSONKey: String] = [:]
    for (index, backup) in grouping.backup.enumerated() {
      if let backup { backupOf[reports[index].container] = backups[backup].udid }
    }
    // Sections (and the overview's rows) for containers with app files or findings, largest
    // backup first; the others on one line, as in the table.
    let ordered = byBackupSize
    let shown = ordered.filter { !Self.isEmpty($0) }
    let empty = ordered.filter(Self.isEmpty)
    var anchors: [JSONKey: String] = [:]
    for (index, report) in shown.enumerated() { anchors[report.container] = "c\(index + 1)" }

    // Coloured by destination (`destinationSlots`) when every report's platform spells its
    // destinations out (Android's); otherwise by category.
    let byDestination = !reports.isEmpty && reports.allSatisfy { $0.platform.itemizesDestinations }
    // Inside its backup's cell (and its backup's column) a container needs no other name.
    let containers: [JSONValue] = ordered.map { report in
      let name = backupOf[report.container] == nil ? label(report) : report.name
      let entries = report.entries ?? ListedEntries()
      let tree = byDestination ? SizeTree(name: name, entries: entries, slot: Self.destinationSlot(report.platform)) : SizeTree(name: name, entries: entries)
      var object: [JSONKey: JSONValue] = ["name": .string(name), "kind": .string(report.kind.rawValue), "tree": tree.json(),
                                         "backup": .unsigned(report.backup.bytes)]
      object["group"] = backupOf[report.container].map { .string("backup " + $0) } ?? .null
      return .object(object)
    }
    let histories = backups.isEmpty ? [] : histories(grouping).filter { $0.backups.count > 1 }
    let data = JSONValue.object([
      "categories": .array(byDestination ? Self.destinationSlots.map { .string($0.name) } : Category.allCases.map { .string($0.rawValue) }),
      "labels": .object(byDestination ? Dictionary(uniqueKeysWithValues: Self.destinationSlots.map { (JSONKey($0.name), JSONValue.string($0.label)) }) : [:]),
      "containers": .array(containers),
      "many": .bool(isCollection || !backups.isEmpty),
      "groups": .array(backups.filter { $0.status == .audited }.map { .string("backup " + $0.udid) }),
      "history": .array(histories.map { historyChartJSON($0, grouping: grouping, anchors: anchors) }),
    ]).serialized(pretty: false)
    let heading = !isCollection && backups.isEmpty ? reports.first?.container ?? source : sources.isEmpty ? source : sources.joined(separator: ", ")
    var body = "<h1>appdata audit: \(Self.escape(heading))</h1>\n"
    let failed = fails(at: failOn)
    // As the table's totals: each device's latest backup, its older copies not added.
    let counted = countedReports(grouping)
    let held = Self.sums(of: counted.indices, in: reports).backup
    let older = counted.olderCopies == 0 ? "" : " (the latest backup of each device; \(Plural.counted(counted.olderCopies, "older copy", "older copies")) not added)"
    body += "<p class=\"result \(failed ? "fail" : "ok")\">\(failed ? "FAIL" : "OK"): \(Self.escape(Plural.counted(held.files, "file"))), \(ByteSize.human(held.bytes)) backed up\(older); findings: \(Severity.counted(findings(labels: labels).map(\.finding.severity)))</p>\n"
    if isCollection || !backups.isEmpty {
      body += overview(shown: shown, empty: empty, labels: labels, anchors: anchors, backupOf: backupOf, grouping: grouping)
      body += growthSection(labels: labels)
    }
    for (index, history) in histories.enumerated() {
      body += "<section class=\"history\"><h2>History of \(Self.escape(history.device ?? history.udid)) <small>\(Self.escape(history.udid)) · \(history.backups.count) backups</small></h2>\n"
        + "<svg class=\"chart\" id=\"chart\(index)\" data-device=\"\(index)\" role=\"img\" aria-label=\"backed-up bytes over time\"></svg>"
        + "<div class=\"chart-legend\" id=\"chart-legend\(index)\"></div></section>\n"
    }
    if !histories.isEmpty { body += "<div id=\"tooltip\" role=\"tooltip\"></div>\n" }
    body += "<div id=\"legend\"></div>\n<div id=\"crumbs\"></div>\n<svg id=\"map\" role=\"img\" aria-label=\"treemap\"></svg>\n"
    for report in (isCollection || !backups.isEmpty ? shown : reports) {
      body += section(report, title: label(report), anchor: anchors[report.container] ?? "c1")
    }
    return Self.page(title: "appdata audit", body: body, data: data)
  }

  /// A device's chart: its dates, its total backed-up bytes, and its ten largest containers'
  /// lines (by their largest point), each with the section its latest report has, if any.
  private func historyChartJSON(_ history: DeviceHistory, grouping: Grouping, anchors: [JSONKey: String]) -> JSONValue {
    let largest = history.containers.sorted { a, b in
      let (ma, mb) = (a.points.compactMap { $0?.bytes }.max() ?? 0, b.points.compactMap { $0?.bytes }.max() ?? 0)
      return ma != mb ? ma > mb : a.id.utf8.lexicographicallyPrecedes(b.id.utf8)
    }.prefix(Self.chartLines)
    let total = history.backups.indices.map { position in
      history.containers.reduce(UInt64(0)) { $0.saturatingSum($1.points[position]?.bytes ?? 0) }
    }
    func anchor(_ line: DeviceHistory.Line) -> JSONValue {
      for position in history.backups.indices.reversed() where line.points[position] != nil {
        for reportIndex in grouping.containers[history.backups[position]] {
          let report = reports[reportIndex]
          if report.kind == line.kind && (report.id ?? report.name) == line.id, let anchor = anchors[report.container] { return .string(anchor) }
        }
      }
      return .null
    }
    return .object([
      "device": .string(history.device ?? history.udid),
      "dates": .array(history.backups.map { .string(backups[$0].info?.date ?? backups[$0].udid) }),
      "total": .array(total.map { .unsigned($0) }),
      "lines": .array(largest.map { line in
        .object(["id": .string(line.id), "kind": .string(line.kind.rawValue), "anchor": anchor(line),
                 "points": .array(line.points.map { $0.map { .unsigned($0.bytes) } ?? .null })])
      }),
    ])
  }

  /// The containers a device's chart draws, besides the total.
  static let chartLines = 10

  /// The overview's rows shown before the rest are folded.
  static let overviewRows = 15

  /// The overview of a report of many: the backups (if any), then a row per container, largest
  /// backup first, each linking to its section; the empty containers on one line.
  private func overview(shown: [AuditReport], empty: [AuditReport], labels: [JSONKey: String], anchors: [JSONKey: String],
                        backupOf: [JSONKey: String], grouping: Grouping) -> String {
    var html = "<section id=\"overview\"><h2>Overview</h2>\n"
    if !backups.isEmpty {
      html += "<table class=\"backups\"><tr><th>backup</th><th>device</th><th>iOS</th><th>date</th><th>encrypted</th><th>status</th><th>files</th><th>backed up</th></tr>\n"
      // In date order, as the table and the JSON list them.
      let rows = backups.indices.map { (backup: backups[$0], held: Self.sums(of: grouping.containers[$0], in: reports).backup) }
      for (backup, held) in rows {
        let audited = backup.status == .audited
        let status = backup.status.words + (backup.reason.map { ": " + Self.escape($0) } ?? "")
        html += "<tr><td class=\"path\">\(Self.escape(backup.udid))</td><td>\(Self.escape(backup.info?.deviceName ?? "-"))</td>"
          + "<td>\(Self.escape(backup.info?.productVersion ?? "-"))</td><td>\(Self.escape(backup.info?.date ?? "-"))</td>"
          + "<td>\(backup.info.map { $0.isEncrypted ? "yes" : "no" } ?? "-")</td><td>\(status)</td>"
          + "<td>\(audited ? String(held.files) : "-")</td>"
          + "<td>\(audited ? ByteSize.human(held.bytes) : "-")</td></tr>\n"
      }
      html += "</table>\n"
    }
    if !shown.isEmpty {
      let header = "<tr><th>container</th><th>kind</th>\(backups.isEmpty ? "" : "<th>backup</th>")<th>files</th><th>backed up</th><th>errors</th><th>warnings</th></tr>\n"
      func row(_ report: AuditReport) -> String {
        let files = report.categories.values.reduce(0) { $0 + $1.files }
        let name = backupOf[report.container] == nil ? labels[report.container] ?? report.name : report.name
        return "<tr><td><a href=\"#\(anchors[report.container] ?? "")\">\(Self.escape(name))</a></td><td>\(report.kind.rawValue)</td>"
          + (backups.isEmpty ? "" : "<td class=\"path\">\(Self.escape(backupOf[report.container] ?? "-"))</td>")
          + "<td>\(files)</td><td>\(ByteSize.human(report.backup.bytes))</td><td>\(count(.error, in: report))</td><td>\(count(.warning, in: report))</td></tr>\n"
      }
      // The largest first; the rest folded, so the treemap stays near the top of the page.
      html += "<table class=\"containers\">" + header + shown.prefix(Self.overviewRows).map(row).joined() + "</table>\n"
      if shown.count > Self.overviewRows {
        let rest = shown.dropFirst(Self.overviewRows)
        html += "<details class=\"more\"><summary>\(Plural.counted(rest.count, "more container")) with app files</summary><table class=\"containers\">"
          + header + rest.map(row).joined() + "</table></details>\n"
      }
    }
    if !empty.isEmpty {
      let names = empty.map { Self.escape(labels[$0.container] ?? $0.name) }.sorted()
      html += "<details class=\"empty\"><summary>\(Plural.counted(empty.count, "container")) with no app files: \(Plural.listed(names, limit: Self.namesOnOneLine))</summary><p>\(names.joined(separator: ", "))</p></details>\n"
    }
    return html + "</section>\n"
  }

  /// With `--baseline`: what grew, as the table shows it (largest change first, new and gone).
  private func growthSection(labels: [JSONKey: String]) -> String {
    guard let growth = growth(labels: labels) else { return "" }
    // Its style here, so that a page without a baseline is as it was.
    var html = "<section id=\"growth\"><style>table.growth td:nth-child(n+2){text-align:right}tr.grew td:last-child,tr.new td:last-child{color:#b00020}"
      + "tr.shrank td:last-child,tr.gone td:last-child{color:#137333}</style><h2>Since \(Self.escape(growth.file))</h2>\n<p>\(Self.escape(growth.summary))</p>\n"
    if !growth.rows.isEmpty {
      html += "<table class=\"growth\"><tr><th>container</th><th>then</th><th>now</th><th>change</th></tr>\n"
      for row in growth.rows {
        let kind = row.then == nil ? "new" : row.now == nil ? "gone" : row.change > 0 ? "grew" : "shrank"
        html += "<tr class=\"\(kind)\"><td>\(Self.escape(row.name))</td><td>\(row.then.map(ByteSize.human) ?? "-")</td>"
          + "<td>\(row.now.map(ByteSize.human) ?? "-")</td><td>\(Self.escape(row.changeText(ByteSize.human)))</td></tr>\n"
      }
      html += "</table>\n"
    }
    return html + "</section>\n"
  }

  private func section(_ report: AuditReport, title: String, anchor: String) -> String {
    var html = "<section id=\"\(anchor)\"><h2>\(Self.escape(title)) <small>\(report.kind.rawValue) · \(Self.escape(report.container))</small></h2>\n"
    html += "<table><tr><th>category</th><th>files</th><th>bytes</th><th>backed up</th></tr>\n"
    let destinations = report.destinations
    for category in report.platform.categories {
      let totals = report.categories[category] ?? CategoryTotals()
      let backedUp = report.platform.isBackedUp(category, destinations: destinations)
      html += "<tr><td><span class=\"swatch c-\(category.rawValue)\"></span>\(category.rawValue)</td><td>\(totals.files)</td><td>\(ByteSize.human(totals.bytes))</td><td>\(backedUp ? "yes" : "no")</td></tr>\n"
    }
    html += "</table>\n"
    if report.platform.itemizesDestinations {
      // Each destination, with the platform's own measure against its quota.
      let name = report.platform.name
      html += "<h3>\(name) destinations</h3><table class=\"destinations\"><tr><th>destination</th><th>carried</th><th>files</th><th>bytes</th><th>\(name)'s measure</th><th>quota</th><th>rules</th></tr>\n"
      for destination in destinations {
        let carried = destination.carried ? "yes" : "no: " + Self.escape(destination.reason ?? "")
        html += "<tr><td>\(destination.name)</td><td>\(carried)</td><td>\(destination.files)</td>"
          + "<td>\(ByteSize.human(destination.bytes))</td><td>\(ByteSize.human(destination.measured))</td><td>\(destination.quota.map { ByteSize.human($0) } ?? "none")</td>"
          + "<td>\(Self.escape(destination.rules))</td></tr>\n"
      }
      html += "</table>\n"
    }
    if !report.largest.isEmpty {
      html += "<h3>Largest backed-up files</h3><table>\n"
      for file in report.largest { html += "<tr><td>\(ByteSize.human(file.bytes))</td><td class=\"path\">\(Self.escape(RelativePath.display(file.path)))</td></tr>\n" }
      html += "</table>\n"
    }
    html += "<h3>Findings (\(report.findings.count))</h3>\n"
    if !report.findings.isEmpty {
      html += "<table>\n"
      for finding in report.findings {
        html += "<tr class=\"\(finding.severity.rawValue)\"><td>\(finding.severity.rawValue)</td><td>\(finding.rule.id)</td><td class=\"path\">\(Self.escape(RelativePath.display(finding.path)))</td><td>\(Self.escape(finding.message))</td></tr>\n"
      }
      html += "</table>\n"
    }
    return html + "</section>\n"
  }

  /// HTML text: control characters (newlines too) shown as escapes, as the table shows them, then
  /// markup characters as entities (XML's, which HTML shares).
  static func escape(_ text: String) -> String { AuditReport.xml(TerminalText.escaped(text)) }

  /// The page: styles and script inline. The data is JSON inside a `<script type="application/json">`
  /// with every `<` written as `\u003c`, so no name can close the element.
  private static func page(title: String, body: String, data: String) -> String {
    let safeData = data.replacingAll("<", with: "\\u003c")
    var page = ""
    for (index, part) in pageParts.enumerated() {
      page += part
      if index < pageParts.count - 1 { page += [escape(title), body, safeData][index] }
    }
    return page
  }

  /// `pageTemplate` cut at its three places: before {{title}}, {{body}}, {{data}}, and after.
  private static let pageParts: [String] = {
    var parts: [String] = []
    var rest = pageTemplate[...]
    for mark in ["{{title}}", "{{body}}", "{{data}}"] {
      guard let found = rest.firstRange(of: mark) else { preconditionFailure("the HTML template has no \(mark)") }
      parts.append(String(rest[..<found.lowerBound]))
      rest = rest[found.upperBound...]
    }
    return parts + [String(rest)]
  }()
}

extension AuditSet {
  /// An Android treemap's colours, by the destinations that carry a file: the cloud backup (slot
  /// 0, "backed up" as a critical file is for iOS), device-to-device transfer alone, or neither.
  static let destinationSlots: [(name: String, label: String)] = [
    ("cloud", "carried by the cloud backup"),
    ("transfer", "carried by device-to-device transfer only"),
    ("none", "carried by neither"),
  ]

  /// Which of `destinationSlots` a listed file counts in.
  static func destinationSlot(_ platform: any Platform) -> (UnsafeBufferPointer<UInt8>, Category) -> Int {
    { path, _ in
      let destinations = platform.carriers(of: Array(path)) ?? []
      return destinations.contains("cloud") ? 0 : destinations.contains("deviceTransfer") ? 1 : 2
    }
  }
}
