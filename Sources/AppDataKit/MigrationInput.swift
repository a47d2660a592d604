import AppDataSystem
import AppDataCore
import AppDataReaders
import AppDataMigration

/// What `appdata migrate PATH` migrates: the one app container PATH names.
public enum MigrationInput {
  /// PATH itself, a package's `AppData`, or, in a folder of containers (a Simulator device, a
  /// Mac's Containers), the app container `apps` picks by its exact id. A `Refusal` naming PATH
  /// when it holds none, or several and `apps` does not pick one.
  package static func container(at path: String, apps: [String]) throws(Refusal) -> ContainerRef {
    let source = try InputResolver.resolve(path)
    let folders = try source.folders()
    let filter = apps.isEmpty ? nil : AppFilter(ids: apps)
    let kept = folders.filter { filter?.matches($0.id) ?? true }
    if !source.isCollection, let only = kept.first, kept.count == 1 { return only }
    if !apps.isEmpty && kept.isEmpty { throw AppFilter.noMatch(apps, source: path, available: folders.map(\.name)) }
    // In a folder of containers, the app's own container: its id is exactly the one named.
    let named = kept.filter { $0.kind == .app && apps.contains($0.id ?? "") }
    if named.count == 1 { return named[0] }
    let ids = folders.filter { $0.kind == .app }.map { TerminalText.escaped($0.name) }.sorted().joined(separator: ", ")
    throw Refusal(.notMatched, path: path, "holds \(Plural.counted(folders.count, "container")); name the app to migrate with --app ID (app containers: \(ids.isEmpty ? "none" : ids))")
  }

  /// The root folder of that container: what `Migration(rootPath:options:)` takes.
  public static func root(at path: String, apps: [String]) throws(Refusal) -> String {
    try container(at: path, apps: apps).root
  }
}
