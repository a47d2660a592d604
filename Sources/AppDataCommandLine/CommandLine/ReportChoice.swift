import AppDataSystem
import AppDataKit

/// How extract, restore and migrate show their report: as JSON (`--format json`, `--json`, even
/// with `-q`), else as a table, or, with `-q`, not at all.
struct ReportChoice {
  let json: Bool
  let quiet: Bool

  init(_ parsed: ParsedArguments) {
    json = parsed.asksForJSON
    quiet = parsed.flag(.quiet)
  }

  /// Whether a progress line may be shown on a terminal: not beside JSON, nor with `-q`.
  var allowsProgress: Bool { !json && !quiet }
}

extension CommandIO {
  /// A command's report on standard output: its JSON document, or, unless quiet, its table
  /// fitted to the output's width.
  func writeReport(_ choice: ReportChoice, document: () -> JSONValue, table: () -> String) {
    if choice.json {
      writeOutput(document().serialized(pretty: true) + "\n")
    } else if !choice.quiet {
      writeOutput(TextTable.wrapped(TextTable.$width.withValue(outputWidth) { table() }, width: outputWidth))
    }
  }
}
