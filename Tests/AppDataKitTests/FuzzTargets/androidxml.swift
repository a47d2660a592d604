#if canImport(AppDataCore)
@testable import AppDataSystem
@testable import AppDataCore
@testable import AppDataReaders
@testable import AppDataReports
@testable import AppDataMigration
@testable import AppDataCommandLine
#endif

// Fuzz target `androidxml` (Scripts/fuzz.sh): the bounded XML event reader (XMLEvents) through
// Android's rules files (AndroidRulesFile) and manifests (AndroidManifest), and the backup
// model on what a rules file reads: entities, DTDs, nesting, attributes, namespaces.
func fuzz_androidxml(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  _ = try? AndroidManifest.parse(bytes, name: "fuzz")
  guard let rules = try? AndroidRulesFile.parse(bytes, name: "fuzz") else { return 0 }
  var tree = AndroidTree()
  tree.add(AndroidPath(.credential, Array("files/a".utf8)), .file(size: 10))
  tree.add(AndroidPath(.credential, Array("databases/app.db".utf8)), .file(size: 4096))
  var app = AndroidApp(package: "com.example.app")
  if rules.kind == .fullBackupContent { app.fullBackupContent = .rules(rules) } else { app.dataExtractionRules = rules }
  for destination in AndroidDestination.allCases {
    _ = AndroidBackupModel.outcome(app, tree: tree, destination: destination, quota: AndroidFacts.cloudQuota)
  }
  _ = AndroidAnalysis(app: app, tree: tree, rulesFiles: [rules], cloudQuota: AndroidFacts.cloudQuota, transferQuota: nil, warnAt: nil)
  return 0
}
