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
    return """
      <!DOCTYPE html>
      <html lang="en"><head><meta charset="utf-8">
      <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
      <title>\(escape(title))</title>
      <style>
      body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}h1{font-size:1.3em;word-break:break-all}
      h2 small{font-weight:normal;color:#666;font-size:.7em;word-break:break-all}
      table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 8px;text-align:left;vertical-align:top}
      td.path{font-family:ui-monospace,monospace;word-break:break-all;white-space:pre-wrap}
      tr.error td:first-child{color:#b00020;font-weight:bold}tr.warning td:first-child{color:#a06000}
      .result{font-weight:bold}.fail{color:#b00020}.ok{color:#137333}
      #map{width:100%;height:560px;border:1px solid #ccc;display:block;background:#fafafa}
      #map rect.cell{fill:transparent;stroke:#fff;stroke-width:1;cursor:pointer}#map rect.share,#map rect.frame{pointer-events:none}
      #map text{font-size:11px;pointer-events:none;fill:#111}#map text.size{fill:#333}
      #crumbs{margin:.4em 0;font-family:ui-monospace,monospace}#crumbs a{cursor:pointer;color:#1a57b5;text-decoration:underline}
      .swatch{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle;border:1px solid #999}
      #legend span.item{margin-right:1em}
      .c-cloud{background:#d93025}.c-transfer{background:#f29900}.c-none{background:#7baaf7}
      .c-critical{background:#d93025}.c-offline{background:#7baaf7}.c-cached{background:#a8dab5}
      .c-temporary{background:#fdd663}.c-system{background:#c6c6c6}.c-other{background:#e6c9f2}
      svg.chart{width:100%;height:320px;border:1px solid #ccc;display:block;background:#fff}
      svg.chart polyline{fill:none;stroke-width:2;cursor:pointer}svg.chart polyline.total{stroke:#111;stroke-width:3;stroke-dasharray:6 3}
      svg.chart circle{cursor:pointer}svg.chart text{font-size:11px;fill:#444}svg.chart line.axis{stroke:#999}
      .chart-legend{margin:.4em 0 1.2em}.chart-legend span.item{margin-right:1em;white-space:nowrap;cursor:pointer}
      #tooltip{position:absolute;display:none;background:#222;color:#fff;padding:3px 7px;border-radius:3px;font-size:12px;pointer-events:none;white-space:nowrap}
      </style></head><body>
      \(body)<script type="application/json" id="data">\(safeData)</script>
      <script>
      "use strict";
      (function () {
        const data = JSON.parse(document.getElementById("data").textContent);
        const colors = {critical: "#d93025", offline: "#7baaf7", cached: "#a8dab5", temporary: "#fdd663", system: "#c6c6c6", other: "#e6c9f2",
          cloud: "#d93025", transfer: "#f29900", none: "#7baaf7"};
        const svg = document.getElementById("map"), crumbs = document.getElementById("crumbs"), legend = document.getElementById("legend");
        const NS = "http://www.w3.org/2000/svg";
        const total = n => n.b.reduce((a, b) => a + b, 0);
        const human = n => { const u = ["B", "KiB", "MiB", "GiB", "TiB"]; let i = 0; while (n >= 1024 && i < 4) { n /= 1024; i++; } return (i ? n.toFixed(1) : n) + " " + u[i]; };
        for (const c of data.categories) {
          const item = document.createElement("span"); item.className = "item";
          const sw = document.createElement("span"); sw.className = "swatch c-" + c; item.appendChild(sw);
          item.appendChild(document.createTextNode(data.labels[c] || c + (c === "critical" ? " (backed up)" : ""))); legend.appendChild(item);
        }
        // Every node: n (name), b (bytes per category), k (children). A report of many adds a root
        // over the containers, and one node per backup between them.
        const sum = nodes => data.categories.map((c, i) => nodes.reduce((s, n) => s + n.b[i], 0));
        const containerNode = c => Object.assign({}, c.tree, {n: c.name});
        let root;
        if (!data.many) {
          root = data.containers[0].tree;
        } else {
          const top = [];
          for (const g of data.groups) {
            const k = data.containers.filter(c => c.group === g).map(containerNode);
            top.push({n: g, b: sum(k), k: k});
          }
          for (const c of data.containers) if (c.group === null) top.push(containerNode(c));
          root = {n: data.groups.length ? "all backups" : "all containers", b: sum(top), k: top};
        }
        const size = n => total(n);
        // Squarified treemap (Bruls, Huizing, van Wijk).
        function layout(items, x, y, w, h, out) {
          items = items.filter(i => size(i) > 0);
          const sum = items.reduce((s, i) => s + size(i), 0);
          if (!items.length || w <= 0 || h <= 0) return;
          const scale = w * h / sum;
          let row = [], rest = items.slice();
          const worst = (r, side) => { const s = r.reduce((a, i) => a + size(i) * scale, 0); let m = 0;
            for (const i of r) { const a = size(i) * scale; m = Math.max(m, side * side * a / (s * s), s * s / (side * side * a)); } return m; };
          while (rest.length) {
            const side = Math.min(w, h), next = rest[0];
            if (!row.length || worst(row.concat([next]), side) <= worst(row, side)) { row.push(next); rest.shift(); continue; }
            [x, y, w, h] = place(row, x, y, w, h, scale, out); row = [];
          }
          if (row.length) place(row, x, y, w, h, scale, out);
        }
        function place(row, x, y, w, h, scale, out) {
          const area = row.reduce((a, i) => a + size(i) * scale, 0);
          if (w >= h) { const cw = area / h; let cy = y; for (const i of row) { const ch = size(i) * scale / cw; out.push([i, x, cy, cw, ch]); cy += ch; } return [x + cw, y, w - cw, h]; }
          const ch = area / w; let cx = x; for (const i of row) { const cw = size(i) * scale / ch; out.push([i, cx, y, cw, ch]); cx += cw; } return [x, y + ch, w, h - ch];
        }
        function svgElement(name, attributes) {
          const element = document.createElementNS(NS, name);
          for (const key in attributes) element.setAttribute(key, attributes[key]);
          return element;
        }
        // A cell's fill: one stripe per category it holds, as wide as that category's share, so
        // backed-up bytes show even inside a mostly excluded folder.
        function stripes(n, x, y, w, h) {
          const all = total(n);
          let cx = x;
          data.categories.forEach((c, i) => {
            if (!n.b[i]) return;
            const sw = w * n.b[i] / all;
            svg.appendChild(svgElement("rect", {x: cx, y: y, width: Math.max(0, sw), height: Math.max(0, h), fill: colors[c], class: "share", "data-category": c}));
            cx += sw;
          });
        }
        let path = [root];
        function zoom(node) { path.push(node); draw(); }
        function draw() {
          while (svg.firstChild) svg.removeChild(svg.firstChild);
          const box = svg.getBoundingClientRect(), W = box.width || 1000, H = box.height || 560;
          const node = path[path.length - 1];
          let drawn = 0;
          // Two levels: each cell of the current node shows its own cells inside, under its name;
          // a click anywhere in a cell zooms into that cell (the one whose name is shown).
          function cellsOf(parent, x, y, w, h, depth, trail, owner) {
            const cells = [];
            layout((parent.k || []).slice().sort((a, b) => size(b) - size(a)), x, y, w, h, cells);
            for (const [n, cx, cy, cw, ch] of cells) {
              const nested = depth === 0 && n.k && n.k.length && cw > 30 && ch > 40;
              const target = depth === 0 ? n : owner;
              if (nested) {
                svg.appendChild(svgElement("rect", {x: cx, y: cy, width: Math.max(0, cw), height: Math.max(0, ch), fill: "#f1f3f4", class: "frame"}));
              } else {
                stripes(n, cx, cy, cw, ch);
              }
              const hit = svgElement("rect", {x: cx, y: cy, width: Math.max(0, cw), height: Math.max(0, ch), class: "cell",
                "data-name": n.n, "data-depth": String(depth), "data-bytes": String(total(n)), "data-backed-up": String(n.b[0])});
              const title = svgElement("title", {});
              title.textContent = trail.concat([n.n]).join("/") + "  " + human(total(n)) + " (" + human(n.b[0]) + " backed up)";
              hit.appendChild(title);
              if (target.k && target.k.length) hit.addEventListener("click", event => { event.stopPropagation(); zoom(target); });
              svg.appendChild(hit);
              drawn++;
              const chars = Math.floor(cw / 7);
              if (cw > 40 && ch > 14) {
                const t = svgElement("text", {x: cx + 3, y: cy + 12});
                t.textContent = n.n.length > chars ? n.n.slice(0, Math.max(1, chars - 1)) + "…" : n.n; svg.appendChild(t);
              }
              if (!nested && cw > 60 && ch > 28) {
                const t = svgElement("text", {x: cx + 3, y: cy + 25, class: "size"});
                t.textContent = human(total(n)); svg.appendChild(t);
              } else if (nested && cw > 60) {
                const t = svgElement("text", {x: cx + cw - 3, y: cy + 12, class: "size", "text-anchor": "end"});
                const text = human(total(n));
                if (cw > (n.n.length + text.length + 2) * 7) { t.textContent = text; svg.appendChild(t); }
              }
              if (nested) cellsOf(n, cx + 2, cy + 16, cw - 4, ch - 18, depth + 1, trail.concat([n.n]), n);
            }
          }
          cellsOf(node, 0, 0, W, H, 0, path.slice(1).map(p => p.n), node);
          while (crumbs.firstChild) crumbs.removeChild(crumbs.firstChild);
          path.forEach((p, i) => {
            if (i) crumbs.appendChild(document.createTextNode(" / "));
            const a = document.createElement(i < path.length - 1 ? "a" : "span");
            a.textContent = p.n;
            if (i < path.length - 1) a.addEventListener("click", () => { path = path.slice(0, i + 1); draw(); });
            crumbs.appendChild(a);
          });
          document.body.setAttribute("data-cells", String(drawn));
          document.body.setAttribute("data-trail", path.map(p => p.n).join(" / "));
        }
        draw();
        window.addEventListener("resize", draw);
        // Each device's history: the total (dashed) and its largest containers over its backups;
        // a point's tooltip gives container, date and size, a click goes to the container.
        const palette = ["#1a73e8", "#d93025", "#188038", "#f9ab00", "#9334e6", "#e8710a", "#12b5cb", "#b3261e", "#5f6368", "#a142f4"];
        const tooltip = document.getElementById("tooltip");
        function chart(history, index) {
          const box = document.getElementById("chart" + index), key = document.getElementById("chart-legend" + index);
          while (box.firstChild) box.removeChild(box.firstChild);
          while (key.firstChild) key.removeChild(key.firstChild);
          const rect = box.getBoundingClientRect(), W = rect.width || 900, H = rect.height || 320, L = 70, R = 45, T = 15, B = 40;
          const count = history.dates.length, max = Math.max(1, ...history.total);
          const x = i => L + (count > 1 ? i * (W - L - R) / (count - 1) : 0), y = v => T + (H - T - B) * (1 - v / max);
          const add = (name, attributes, parent) => { const e = document.createElementNS(NS, name); for (const k in attributes) e.setAttribute(k, attributes[k]); (parent || box).appendChild(e); return e; };
          add("line", {x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis"});
          add("line", {x1: L, y1: T, x2: L, y2: H - B, class: "axis"});
          for (const v of [0, max / 2, max]) { const t = add("text", {x: L - 6, y: y(v) + 4, "text-anchor": "end"}); t.textContent = human(Math.round(v)); }
          history.dates.forEach((d, i) => { const t = add("text", {x: x(i), y: H - B + 16, "text-anchor": "middle"}); t.textContent = d.slice(0, 10); });
          const show = (event, text) => { tooltip.textContent = text; tooltip.style.display = "block";
            tooltip.style.left = (event.pageX + 12) + "px"; tooltip.style.top = (event.pageY + 12) + "px"; };
          const hide = () => { tooltip.style.display = "none"; };
          const series = [{id: "total", points: history.total, anchor: null, total: true}].concat(history.lines);
          series.forEach((line, n) => {
            const color = line.total ? "#111" : palette[(n - 1) % palette.length];
            const go = () => { if (line.anchor) location.hash = line.anchor; };
            // A line per run of backups the container was in.
            let run = [];
            const flush = () => { if (run.length > 1) { const p = add("polyline", {points: run.join(" "), stroke: color, class: line.total ? "total" : "line", "data-id": line.id}); p.addEventListener("click", go); } run = []; };
            line.points.forEach((v, i) => { if (v === null) { flush(); return; } run.push(x(i) + "," + y(v)); });
            flush();
            line.points.forEach((v, i) => {
              if (v === null) return;
              const c = add("circle", {cx: x(i), cy: y(v), r: line.total ? 4 : 5, fill: color, "data-id": line.id, "data-date": history.dates[i], "data-bytes": String(v)});
              const text = (line.total ? "all containers" : line.id) + " · " + history.dates[i] + " · " + human(v);
              c.addEventListener("mouseenter", event => show(event, text));
              c.addEventListener("mousemove", event => show(event, text));
              c.addEventListener("mouseleave", hide);
              c.addEventListener("click", go);
            });
            const item = document.createElement("span"); item.className = "item";
            const sw = document.createElement("span"); sw.className = "swatch"; sw.style.background = color; item.appendChild(sw);
            item.appendChild(document.createTextNode(line.total ? "all containers (total)" : line.id));
            item.addEventListener("click", go);
            key.appendChild(item);
          });
        }
        const charts = () => data.history.forEach(chart);
        charts();
        window.addEventListener("resize", charts);
      })();
      </script>
      </body></html>

      """
  }
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
