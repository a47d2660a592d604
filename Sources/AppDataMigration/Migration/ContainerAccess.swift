import AppDataSystem
import AppDataCore
/// Reaches paths inside a container through descriptors only: every component is opened
/// with `O_NOFOLLOW`, so a symlink anywhere on the way is refused instead of followed,
/// and nothing outside the container can be read or written.
/// Sendable: its two stored properties are constants (a path and a descriptor that is only
/// closed in deinit); every method opens descriptors of its own.
public final class ContainerAccess: Sendable {
  /// The container root as the user named it.
  public let rootPath: String
  /// The open root folder.
  public let root: FileDescriptor

  /// Opens `rootPath`; when it was found below the folder the user named (`below`), it is reached
  /// from there one component at a time, following no symlink.
  public init(rootPath: String, below: String? = nil) throws(SystemError) {
    self.rootPath = rootPath
    root = try Syscalls.openDirectory(atPath: rootPath, below: below)
  }

  deinit { root.close() }

  /// Opens the folder at `components` below the root (the root itself for none).
  /// The caller closes the result (it is a fresh descriptor even for the root).
  public func openFolder(_ components: [[UInt8]]) throws(SystemError) -> FileDescriptor {
    var current = try Syscalls.open(Array(".".utf8), in: root, options: .directory, displayPath: rootPath)
    for (index, component) in components.enumerated() {
      let next: FileDescriptor
      do {
        next = try Syscalls.open(component, in: current, options: .directory,
                                 displayPath: display(Array(components[...index])))
      } catch {
        // O_NOFOLLOW | O_DIRECTORY on a symlink fails with ENOTDIR: say what it really is.
        var reported = error
        if error.code == ErrnoValue.notAFolder,
           let status = try? Syscalls.status(of: component, in: current, displayPath: ""), status.kind == .symbolicLink {
          reported = SystemError(code: ErrnoValue.loop, operation: error.operation, path: error.path)
        }
        current.close()
        throw reported
      }
      current.close()
      current = next
    }
    return current
  }

  /// The status of the entry at `components` (never following a symlink), or nil if absent.
  public func status(_ components: [[UInt8]]) throws(SystemError) -> FileStatus? {
    guard let name = components.last else { return try Syscalls.status(of: root, displayPath: rootPath) }
    let parent: FileDescriptor
    do {
      parent = try openFolder(Array(components.dropLast()))
    } catch where error.isNotFound {
      return nil
    }
    defer { parent.close() }
    do {
      return try Syscalls.status(of: name, in: parent, displayPath: display(components))
    } catch where error.isNotFound {
      return nil
    }
  }

  /// Reads a whole (small) file inside the container.
  public func readFile(_ components: [[UInt8]], limit: Int = 64 << 20) throws(SystemError) -> [UInt8] {
    let parent = try openFolder(Array(components.dropLast()))
    defer { parent.close() }
    let file = try Syscalls.open(components.last!, in: parent, options: .readFile, displayPath: display(components))
    defer { file.close() }
    let data = try Syscalls.readUpTo(file, limit + 1, displayPath: display(components))
    if data.count > limit { throw SystemError(code: ErrnoValue.tooLarge, operation: .readTooLarge, path: display(components)) }
    return data
  }

  /// `Library/Caches/x` for messages.
  public func display(_ components: [[UInt8]]) -> String {
    components.isEmpty ? "." : TerminalText.escaped(RelativePath.join(components))
  }
}

extension RelativePath {
  /// Splits a relative path typed on the command line; nil if it is absolute, empty, or
  /// holds `.` or `..` (a path that could leave the container).
  public static func checkedComponents(_ text: String) -> [[UInt8]]? {
    let components = components(Array(text.utf8))
    guard !text.hasPrefix("/"), !components.isEmpty else { return nil }
    for component in components where component == [0x2E] || component == [0x2E, 0x2E] { return nil }
    return components
  }
}
