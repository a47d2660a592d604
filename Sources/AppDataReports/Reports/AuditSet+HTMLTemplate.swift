// The HTML page of `--format html` as its template: only the page's text, its styles and its
// script. `AuditSet.html` fills {{title}}, {{body}} and {{data}}, each once, by splitting the text
// at them before anything is put in (a name that reads "{{data}}" is not filled again).

extension AuditSet {
  static let pageTemplate = #"""
  <!DOCTYPE html>
  <html lang="en"><head><meta charset="utf-8">
  <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
  <title>{{title}}</title>
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
  {{body}}<script type="application/json" id="data">{{data}}</script>
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

  """#
}
