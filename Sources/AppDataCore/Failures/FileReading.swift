import AppDataSystem
/// Reads a whole file the user named (a policy or a baseline), with a size limit.
package enum FileReading {
  package struct Failure: Error {
    package var message: String
    package init(message: String) { self.message = message }
  }

  /// What a FIFO, socket or device named as a file is told.
  package static let notRegular = "is not a regular file (a FIFO, socket or device), which appdata does not read"

  /// The file's bytes: a regular file (checked on what was opened), at most `limit` bytes.
  package static func read(path: String, limit: Int) throws(Failure) -> [UInt8] {
    let status: FileStatus
    let data: [UInt8]
    do {
      status = try Syscalls.status(ofPath: path)
      if status.isDirectory { throw Failure(message: "is a folder, not a file") }
      if status.kind == .regular && status.size > UInt64(limit) {
        throw Failure(message: "\(status.size) bytes, larger than the \(ByteSize.human(UInt64(limit))) appdata reads from such a file")
      }
      // Opened without waiting and checked for what it is: a FIFO (even one named
      // ./appdata.json, read by default) never blocks the run.
      let (descriptor, opened) = try Syscalls.openWithoutWaiting(atPath: path)
      let file = OwnedDescriptor(owning: descriptor)
      guard opened.kind == .regular else { throw Failure(message: notRegular) }
      if opened.size > UInt64(limit) {
        throw Failure(message: "\(opened.size) bytes, larger than the \(ByteSize.human(UInt64(limit))) appdata reads from such a file")
      }
      data = try Syscalls.readUpTo(file.descriptor, limit + 1, displayPath: path)
    } catch let failure as Failure {
      throw failure
    } catch let error as SystemError {
      if error.operation == .read { throw Failure(message: "cannot read: \(error.reason)") }
      throw Failure(message: error.errno == .noSuchFileOrDirectory ? "no such file" : "cannot \(error.operation): \(error.reason)")
    } catch {
      throw Failure(message: String(describing: error))
    }
    // A file that grew since its size was read (or a pipe) is held to the same limit.
    if data.count > limit { throw Failure(message: "larger than the \(ByteSize.human(UInt64(limit))) appdata reads from such a file") }
    return data
  }
}
