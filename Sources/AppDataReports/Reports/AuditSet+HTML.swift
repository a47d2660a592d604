import AppDataSystem
import AppDataCore
// MARK: - `--format html`: one self-contained page to look at

extension AuditSet {
  /// One HTML file that loads nothing from the network: a treemap of each container (a cell per
  /// folder and large file, area = bytes, colour = category), the summary, the largest
  /// backed-up files and the findings; for a report of many, first a treemap of the containers
  /// sized by backed-up bytes. Every name reaches the page as JSON data or escaped text and is
  /// drawn with `textContent`, never as markup.
  public func html(failOn: Severity?) -> String {
    let containers: [JSONValue] = reports.map { report in
      let tree = SizeTree(name: report.name, entries: report.entries ?? [])
      return .object(["name": .string(report.name), "kind": .string(report.kind.rawValue), "tree": tree.json(),
                      "backup": .unsigned(report.backup.bytes)])
    }
    let data = JSONValue.object([
      "categories": .array(Category.allCases.map { .string($0.rawValue) }),
      "containers": .array(containers),
      "many": .bool(isCollection),
    ]).serialized(pretty: false)
    var body = "<h1>appdata audit: \(Self.escape(isCollection ? source : reports.first?.container ?? source))</h1>\n"
    let failed = fails(at: failOn)
    body += "<p class=\"result \(failed ? "fail" : "ok")\">\(failed ? "FAIL" : "OK"): \(Self.escape(Plural.counted(backup.files, "file"))), \(ByteSize.human(backup.bytes)) backed up; findings: \(Severity.counted(findings.map(\.finding.severity)))</p>\n"
    body += "<div id=\"legend\"></div>\n<div id=\"crumbs\"></div>\n<svg id=\"map\" role=\"img\" aria-label=\"treemap\"></svg>\n"
    for report in reports.sorted(by: { $0.backup.bytes != $1.backup.bytes ? $0.backup.bytes > $1.backup.bytes : $0.name < $1.name }) {
      body += section(report)
    }
    return Self.page(title: "appdata audit", body: body, data: data)
  }

  private func section(_ report: AuditReport) -> String {
    var html = "<section><h2>\(Self.escape(report.name)) <small>\(report.kind.rawValue) · \(Self.escape(report.container))</small></h2>\n"
    html += "<table><tr><th>category</th><th>files</th><th>bytes</th><th>backed up</th></tr>\n"
    for category in Category.allCases {
      let totals = report.categories[category] ?? CategoryTotals()
      html += "<tr><td><span class=\"swatch c-\(category.rawValue)\"></span>\(category.rawValue)</td><td>\(totals.files)</td><td>\(ByteSize.human(totals.bytes))</td><td>\(category.isBackedUp ? "yes" : "no")</td></tr>\n"
    }
    html += "</table>\n"
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
      #map rect{stroke:#fff;stroke-width:1;cursor:pointer}#map text{font-size:11px;pointer-events:none;fill:#111}
      #crumbs{margin:.4em 0;font-family:ui-monospace,monospace}#crumbs a{cursor:pointer;color:#1a57b5;text-decoration:underline}
      .swatch{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle;border:1px solid #999}
      #legend span.item{margin-right:1em}
      .c-critical{background:#d93025}.c-offline{background:#7baaf7}.c-cached{background:#a8dab5}
      .c-temporary{background:#fdd663}.c-system{background:#c6c6c6}.c-other{background:#e6c9f2}
      </style></head><body>
      \(body)<script type="application/json" id="data">\(safeData)</script>
      <script>
      "use strict";
      (function () {
        const data = JSON.parse(document.getElementById("data").textContent);
        const colors = {critical: "#d93025", offline: "#7baaf7", cached: "#a8dab5", temporary: "#fdd663", system: "#c6c6c6", other: "#e6c9f2"};
        const svg = document.getElementById("map"), crumbs = document.getElementById("crumbs"), legend = document.getElementById("legend");
        const NS = "http://www.w3.org/2000/svg";
        const total = n => n.b.reduce((a, b) => a + b, 0);
        const human = n => { const u = ["B", "KiB", "MiB", "GiB", "TiB"]; let i = 0; while (n >= 1024 && i < 4) { n /= 1024; i++; } return (i ? n.toFixed(1) : n) + " " + u[i]; };
        for (const c of data.categories) {
          const item = document.createElement("span"); item.className = "item";
          const sw = document.createElement("span"); sw.className = "swatch c-" + c; item.appendChild(sw);
          item.appendChild(document.createTextNode(c + (c === "critical" ? " (backed up)" : ""))); legend.appendChild(item);
        }
        // The root: one container's tree, or the containers, sized by backed-up bytes.
        const root = data.many
          ? {n: "all containers", b: data.categories.map((c, i) => data.containers.reduce((s, k) => s + (i === 0 ? k.backup : 0), 0)),
             k: data.containers.map(k => Object.assign({}, k.tree, {n: k.name, size: k.backup}))}
          : data.containers[0].tree;
        const size = n => n.size !== undefined ? n.size : total(n);
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
        function colour(n) { let best = 0; for (let i = 1; i < n.b.length; i++) if (n.b[i] > n.b[best]) best = i; return colors[data.categories[best]]; }
        let path = [root];
        function draw() {
          while (svg.firstChild) svg.removeChild(svg.firstChild);
          const box = svg.getBoundingClientRect(), W = box.width || 1000, H = box.height || 560;
          const node = path[path.length - 1];
          let drawn = 0;
          // Two levels: each cell of the current folder shows its own cells inside, under its name.
          function cellsOf(parent, x, y, w, h, depth, trail) {
            const cells = [];
            layout((parent.k || []).slice().sort((a, b) => size(b) - size(a)), x, y, w, h, cells);
            for (const [n, cx, cy, cw, ch] of cells) {
              const nested = depth === 0 && n.k && n.k.length && cw > 30 && ch > 30;
              const rect = document.createElementNS(NS, "rect");
              rect.setAttribute("x", cx); rect.setAttribute("y", cy); rect.setAttribute("width", Math.max(0, cw)); rect.setAttribute("height", Math.max(0, ch));
              rect.setAttribute("fill", nested ? "#f1f3f4" : colour(n)); rect.setAttribute("class", "cell");
              const title = document.createElementNS(NS, "title");
              title.textContent = trail.concat([n.n]).join("/") + "  " + human(total(n)) + " (" + human(n.b[0]) + " backed up)";
              rect.appendChild(title);
              const target = depth === 0 ? n : parent;
              if (target.k && target.k.length) rect.addEventListener("click", event => { event.stopPropagation(); path.push(target); draw(); });
              svg.appendChild(rect);
              drawn++;
              if (cw > 60 && ch > 14) { const t = document.createElementNS(NS, "text"); t.setAttribute("x", cx + 3); t.setAttribute("y", cy + 12);
                t.textContent = n.n.length > cw / 7 ? n.n.slice(0, Math.max(1, Math.floor(cw / 7) - 1)) + "…" : n.n; svg.appendChild(t); }
              if (nested) cellsOf(n, cx + 2, cy + 16, cw - 4, ch - 18, depth + 1, trail.concat([n.n]));
            }
          }
          cellsOf(node, 0, 0, W, H, data.many && path.length === 1 ? 1 : 0, path.slice(1).map(p => p.n));
          while (crumbs.firstChild) crumbs.removeChild(crumbs.firstChild);
          path.forEach((p, i) => { const a = document.createElement(i < path.length - 1 ? "a" : "span");
            a.textContent = (i ? " / " : "") + p.n; if (i < path.length - 1) a.addEventListener("click", () => { path = path.slice(0, i + 1); draw(); }); crumbs.appendChild(a); });
          document.body.setAttribute("data-cells", String(drawn));
        }
        draw();
        window.addEventListener("resize", draw);
      })();
      </script>
      </body></html>

      """
  }
}
