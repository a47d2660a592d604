import AppDataSystem
extension String {
  package func padding(_ width: Int) -> String {
    count >= width ? self : self + String(repeating: " ", count: width - count)
  }
}

/// Aligned columns separated by two spaces.
package enum TextTable {
  package static func render(_ rows: [[String]], rightAligned: Set<Int>) -> [String] {
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
}
