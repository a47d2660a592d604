import AppDataSystem
/// The tool's name and version, as `--version` and reports print them.
package enum AppDataVersion {
  package static let name = "appdata"
  package static let current = "0.1.0"
  /// The `schemaVersion` of the audit JSON (Docs/audit.schema.json).
  package static let auditSchemaVersion: Int64 = 1
}

extension AppDataVersion {
  /// `{"name": "appdata", "version": …}`, as every JSON report names its tool.
  package static var toolJSON: JSONValue { .object(["name": .string(name), "version": .string(current)]) }
}
