// The five apps with the most backed-up bytes under PATH, through appdata's library:
// `audit(paths:configuration:)` gives the reports, each container's `backup` its bytes.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AppDataKit

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
// An encrypted backup's password: TOP_APPS_PASSWORD's bytes in a `SecretBuffer` (memory of its
// own, wiped when released). Without it, encrypted backups in a folder are listed as locked.
let password: @Sendable (String) throws(Refusal) -> SecretBuffer = { backup throws(Refusal) in
  guard let value = getenv("TOP_APPS_PASSWORD"), let secret = SecretBuffer(copying: Array(String(cString: value).utf8)) else {
    throw Refusal(.locked, path: backup, "encrypted; set TOP_APPS_PASSWORD to its password")
  }
  return secret
}
do {
  let set = try audit(paths: [path], configuration: configuration, password: password)
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
