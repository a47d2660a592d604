import AppDataSystem
extension String {
  package func padding(_ width: Int) -> String {
    count >= width ? self : self + String(repeating: " ", count: width - count)
  }
}

/// Aligned columns separated by two spaces; on a terminal, fitted to its width.
package enum TextTable {
  /// The terminal's width while a report for it is drawn (`withValue`); nil: as wide as the
  /// rows are (piped output, which scripts parse, never changes with the window).
  @TaskLocal package static var width: Int?

  /// The narrowest a cut column gets before columns are dropped (an id stays readable), and
  /// after (all else is gone).
  static let narrowestCut = 24
  static let narrowestAfterDropping = 12

  /// The rows as lines. With a `width`, a table wider than it is fitted: the `cuttable` columns
  /// (names, paths) are cut in the middle with `…`, down to `narrowestCut`; then the columns of
  /// `dropOrder` go, least useful first; numbers are never cut. `indent`: what the caller puts
  /// before each line.
  package static func render(_ rows: [[String]], rightAligned: Set<Int>, indent: Int = 0, cuttable: Set<Int> = [0],
                             dropOrder: [Int] = []) -> [String] {
    var rows = rows
    var rightAligned = rightAligned
    if let width, !rows.isEmpty {
      (rows, rightAligned) = fitted(rows, rightAligned: rightAligned, width: width - indent, cuttable: cuttable, dropOrder: dropOrder)
    }
    let columns = rows.map(\.count).max() ?? 0
    var widths = [Int](repeating: 0, count: columns)
    for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
    return rows.map { row in
      var line = ""
      for (index, cell) in row.enumerated() {
        let pad = String(repeating: " ", count: widths[index] - cell.count)
        if index > 0 { line += "  " }
        line += rightAligned.contains(index) ? pad + cell : cell + (index == row.count - 1 ? "" : pad)
      }
      while line.hasSuffix(" ") { line.removeLast() }
      return line
    }
  }

  /// The rows as lines, the last column wrapped rather than cut: on a terminal (`width`), a
  /// last cell wider than what the other columns leave is wrapped at spaces within its column,
  /// its continuation lines indented four more (a hanging indent), so nothing of it is lost (a
  /// migration's `->` and the reason a row was skipped). When the other columns leave fewer
  /// than 24 characters, the columns of `dropOrder` go first, least useful first.
  package static func renderWrappingLast(_ rows: [[String]], rightAligned: Set<Int>, indent: Int = 0, dropOrder: [Int] = []) -> [String] {
    guard let width, let columns = rows.map(\.count).max(), columns > 1 else { return render(rows, rightAligned: rightAligned, indent: indent) }
    var rows = rows
    var rightAligned = rightAligned
    func leading() -> Int {
      let count = rows.map(\.count).max() ?? 0
      return (0..<max(0, count - 1)).reduce(0) { sum, column in sum + (rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0) + 2 }
    }
    var dropped: [Int] = []
    for original in dropOrder where width - indent - leading() < 24 {
      let column = original - dropped.filter { $0 < original }.count
      dropped.append(original)
      rows = rows.map { row in var row = row; if column < row.count - 1 { row.remove(at: column) }; return row }
      rightAligned = Set(rightAligned.compactMap { $0 == column ? nil : $0 > column ? $0 - 1 : $0 })
    }
    let count = rows.map(\.count).max() ?? 0
    var widths = [Int](repeating: 0, count: count - 1)
    for row in rows { for index in 0..<min(row.count, count) - 1 { widths[index] = max(widths[index], row[index].count) } }
    let column = widths.reduce(0) { $0 + $1 + 2 }
    let available = max(12, width - indent - column)
    return rows.flatMap { row -> [String] in
      var prefix = ""
      for (index, cell) in row.dropLast().enumerated() {
        let pad = String(repeating: " ", count: widths[index] - cell.count)
        prefix += (rightAligned.contains(index) ? pad + cell : cell + pad) + "  "
      }
      let cells = wrap(row.last ?? "", width: available)
      return cells.enumerated().map { item in
        let line = (item.offset == 0 ? prefix : String(repeating: " ", count: column)) + item.element
        return String(line.reversed().drop { $0 == " " }.reversed())
      }
    }
  }

  private static func fitted(_ rows: [[String]], rightAligned: Set<Int>, width: Int, cuttable: Set<Int>,
                             dropOrder: [Int]) -> ([[String]], Set<Int>) {
    var rows = rows
    var kept = Array(0..<(rows.map(\.count).max() ?? 0))
    func columnWidth(_ column: Int) -> Int { rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
    func total() -> Int { kept.map(columnWidth).reduce(0, +) + 2 * max(0, kept.count - 1) }
    func cut(to narrowest: Int) {
      for column in cuttable.sorted() where kept.contains(column) {
        let excess = total() - width
        guard excess > 0 else { return }
        let target = max(narrowest, columnWidth(column) - excess)
        for index in rows.indices where column < rows[index].count && rows[index][column].count > target {
          rows[index][column] = cutMiddle(rows[index][column], to: target)
        }
      }
    }
    cut(to: narrowestCut)
    var drop = dropOrder
    while total() > width, !drop.isEmpty {
      let column = drop.removeFirst()
      kept.removeAll { $0 == column }
      cut(to: narrowestCut)
    }
    cut(to: narrowestAfterDropping)
    cut(to: 4)
    let kept_ = kept
    let newRows = rows.map { row in kept_.filter { $0 < row.count }.map { row[$0] } }
    let newRight = Set(kept.enumerated().filter { rightAligned.contains($0.element) }.map(\.offset))
    return (newRows, newRight)
  }

  /// `text` cut to `width` characters by replacing its middle with `…` (both ends are what
  /// tells ids and paths apart).
  package static func cutMiddle(_ text: String, to width: Int) -> String {
    guard text.count > width, width >= 2 else { return text.count > width ? String(text.prefix(width)) : text }
    let head = (width - 1 + 1) / 2
    let tail = width - 1 - head
    return String(text.prefix(head)) + "…" + String(text.suffix(tail))
  }

  /// `line` wrapped at spaces to `width` characters, the continuation lines indented four more
  /// than the line; a word longer than the width is broken (unless it holds an escape sequence).
  package static func wrap(_ line: String, width: Int) -> [String] {
    guard line.count > width, width > 8 else { return [line] }
    let indent = line.prefix { $0 == " " }.count
    let hanging = String(repeating: " ", count: min(indent + 4, width / 2))
    var lines: [String] = []
    var current = ""
    for word in line.dropFirst(indent).split(separator: " ", omittingEmptySubsequences: false) {
      let prefix = lines.isEmpty && current.isEmpty ? String(repeating: " ", count: indent) : (current.isEmpty ? hanging : "")
      let candidate = current.isEmpty ? prefix + word : current + " " + word
      if candidate.count <= width || current.isEmpty {
        current = candidate
      } else {
        lines.append(current)
        current = hanging + word
      }
      // A single word wider than the line: break it where no escape sequence is.
      while current.count > width && !current.contains("\u{1B}") {
        lines.append(String(current.prefix(width)))
        current = hanging + current.dropFirst(width)
      }
    }
    if !current.isEmpty { lines.append(current) }
    return lines
  }

  /// Every line of `text` wrapped to `width`.
  package static func wrapped(_ text: String, width: Int?) -> String {
    guard let width else { return text }
    return text.split(separator: "\n", omittingEmptySubsequences: false).flatMap { wrap(String($0), width: width) }.joined(separator: "\n")
  }
}
