import AppDataSystem
import AppDataCore

/// The report formats of `appdata audit`.
public enum AuditFormat: String, CaseIterable, Sendable {
  case table, json, ndjson, github, junit, sarif, html
}

/// How a report is drawn: what the formats take besides the reports.
public struct RenderStyle: Sendable {
  /// The severity at which the run fails (`--fail-on`); nil: never.
  public var failOn: Severity? = .error
  /// Table: sizes in bytes (`--bytes`), ANSI colours, findings only (`--quiet`), box-drawing
  /// and other non-ASCII characters (a UTF-8 locale).
  public var exactBytes = false
  public var colors = false
  public var findingsOnly = false
  public var unicode = true
  /// JUnit: the rules the policy turned off, listed as skipped.
  public var disabledRules: Set<String> = []
  /// GitHub: the job summary is written too (`GITHUB_STEP_SUMMARY`), so the commands say so.
  public var hasStepSummary = false
  /// NDJSON: the entries were streamed while the audit ran (`AuditConfiguration.entrySink`).
  public var streamedNDJSON = false
  /// Table: the terminal's width; tables are fitted to it (names cut in the middle, the least
  /// useful columns dropped) and other lines wrapped. nil: full width (piped, or a file).
  public var width: Int?
  /// Table: how many grown and new paths the baseline section lists (`--top`).
  public var top = 10
  /// SARIF: the checkout the results' locations are relative to, and the policy file.
  public var sarif = SARIFAnchors()

  public init() {}
}

/// Where SARIF results point. GitHub's code scanning rejects a whole file when one result has
/// no location, and links a result to a file only when its URI is relative to the checkout
/// (`%SRCROOT%`).
public struct SARIFAnchors: Sendable {
  /// The checkout, absolute and resolved (`--sarif-root DIR`, or `GITHUB_WORKSPACE`): a
  /// container inside it is located by paths relative to it, with `uriBaseId` `%SRCROOT%`.
  public var root: String?
  /// The policy file that applied, absolute and resolved: findings about a limit it set (the
  /// backup's, a budget's, growth) point at it rather than at the container.
  public var policyFile: String?
  /// The ids of the rules whose limit the policy file set (the command line set none of them).
  public var policyRules: Set<String> = []

  public init(root: String? = nil, policyFile: String? = nil, policyRules: Set<String> = []) {
    self.root = root
    self.policyFile = policyFile
    self.policyRules = policyRules
  }
}

extension AuditSet {
  /// Writes the report in `format` to `write`, in chunks as it is made: a JSON listing of a
  /// million files is never whole in memory.
  public func render(format: AuditFormat, style: RenderStyle, to write: ([UInt8]) -> Void) {
    switch format {
    case .json:
      jsonDocument().serialize(pretty: true, to: write)
      write([0x0A])
    case .table:
      let text = TextTable.$width.withValue(style.width) {
        table(exactBytes: style.exactBytes, failOn: style.failOn, colors: style.colors, findingsOnly: style.findingsOnly, unicode: style.unicode,
              top: style.top)
      }
      write(Array(TextTable.wrapped(text, width: style.width).utf8))
    case .ndjson:
      write(Array(ndjson(streamed: style.streamedNDJSON).utf8))
    case .github:
      write(Array(githubCommands(hasStepSummary: style.hasStepSummary).utf8))
    case .junit:
      write(Array(junitXML(failOn: style.failOn, disabledRules: style.disabledRules).utf8))
    case .sarif:
      write(Array((sarifDocument(anchors: style.sarif).serialized(pretty: true) + "\n").utf8))
    case .html:
      write(Array(html(failOn: style.failOn).utf8))
    }
  }
}
