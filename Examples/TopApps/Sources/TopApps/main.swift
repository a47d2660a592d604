// The five apps with the most backed-up bytes under PATH, through appdata's library:
// `audit(paths:configuration:)` gives the reports, each container's `backup` its bytes.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AppDataCore
import AppDataReports

/// One line on standard error.
func complain(_ line: String) {
  let bytes = Array((line + "\n").utf8)
  _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

let arguments = CommandLine.arguments.dropFirst()
guard let path = arguments.first else {
  complain("usage: top-apps PATH (a Simulator device, a folder of containers, a device backup)")
  exit(2)
}

var configuration = AuditConfiguration()
configuration.overrides.top = 1  // only the figures are wanted, not the largest files
do {
  let set = try audit(paths: [path], configuration: configuration)
  // Largest first; equal sizes by name, so the list is the same on every run.
  let ranked = set.reports.sorted { a, b in
    a.backup.bytes != b.backup.bytes ? a.backup.bytes > b.backup.bytes : (a.id ?? a.container) < (b.id ?? b.container)
  }.prefix(5)
  for report in ranked {
    let name = report.id ?? report.container
    let size = ByteSize.human(report.backup.bytes)
    print(String(repeating: " ", count: max(0, 10 - size.count)) + size + "  \(name) (\(report.backup.files) \(report.backup.files == 1 ? "file" : "files"))")
  }
} catch {
  // A typed failure: switch on its cause, or show its message.
  switch error {
  case .input(let refusal) where refusal.cause == .notFound: complain("\(path): no such file or folder")
  default: complain(error.message)
  }
  exit(2)
}
