import AppDataSystem
import AppDataCore
/// Checks for the PATH operand of audit and migrate.
enum ContainerPath {
  /// PATH must exist and be a folder (a symlink to a folder is accepted for the root).
  static func checkFolder(_ path: String) throws(Refusal) {
    if path.isEmpty { throw Refusal(.notFound, "the container path is empty") }
    do {
      var status = try Syscalls.status(ofPath: path)
      if status.kind == .symbolicLink {
        // Closed at the end of this block, whether the status is had or not.
        let folder = OwnedDescriptor(owning: try Syscalls.openDirectory(atPath: path))
        status = try Syscalls.status(of: folder.descriptor, displayPath: path)
      }
      guard status.isDirectory else {
        throw Refusal(.notAnInput, path: path, "not a folder; give the container root, the folder holding Documents, Library and tmp")
      }
    } catch let error as SystemError {
      if error.errno == .noSuchFileOrDirectory { throw Refusal(.notFound, path: path, "no such file or folder") }
      throw Refusal(.unreadable, path: path, message: TerminalText.escaped(error.description))
    } catch let error as Refusal {
      throw error
    } catch {
      throw Refusal(.unreadable, String(describing: error))
    }
  }
}
