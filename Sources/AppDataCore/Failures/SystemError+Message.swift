import AppDataSystem
extension SystemError {
  /// `PATH: cannot ACTION: REASON`, with advice where a reason is known to puzzle.
  package func message(path: String) -> String {
    let error = self
    var text = TerminalText.escaped(error.path.isEmpty ? path : error.path) + ": "
    if error.errno == .noSuchFileOrDirectory && error.operation == .readStatus { return text + "no such file or folder" }
    text += "cannot \(error.action): \(error.reason)"
    if [Errno.notSupported, .notSupportedOnSocket].contains(error.errno) { text += " (this filesystem does not store user extended attributes; on Linux use ext4, xfs, btrfs or tmpfs)" }
    if [Errno.permissionDenied, .notPermitted].contains(error.errno) && error.operation.concernsExtendedAttributes {
      text += " (Linux allows user.* attributes only on regular files and folders you own, not on symlinks)"
    }
    return text
  }
}
