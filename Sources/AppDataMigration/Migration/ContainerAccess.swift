import AppDataSystem
import AppDataCore
/// The container a migration works in: `Beneath` (every entry reached by components, the kernel
/// keeping each open below the root and refusing symlinks), with names shown as the terminal
/// shows them.
package typealias ContainerAccess = Beneath

extension Beneath {
  /// Opens the container at `rootPath`; when it was found below the folder the user named
  /// (`below`), it is reached from there one component at a time, following no symlink.
  package convenience init(container rootPath: String, below: String? = nil) throws(SystemError) {
    try self.init(opening: rootPath, below: below, display: { TerminalText.escaped(RelativePath.join($0)) })
  }
}

extension RelativePath {
  /// Splits a relative path typed on the command line; nil if it is absolute, empty, or
  /// holds `.` or `..` (a path that could leave the container).
  package static func checkedComponents(_ text: String) -> [[UInt8]]? {
    let components = components(Array(text.utf8))
    guard !text.hasPrefix("/"), !components.isEmpty else { return nil }
    for component in components where component == [0x2E] || component == [0x2E, 0x2E] { return nil }
    return components
  }
}
