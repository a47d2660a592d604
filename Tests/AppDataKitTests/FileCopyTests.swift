@testable import AppDataSystem
import Foundation
import Testing

/// `Syscalls.copyData` told its steps: what extract's progress line and interrupts rely on
/// within a large file.
@Suite("file copy steps")
struct FileCopyTests {
  /// A sparse file, 1 MiB of data at 0 and 1 MiB at 100 MiB: copied extent by extent, each
  /// step told, holes kept; a step that says stop ends the copy with ECANCELED.
  @Test func eachStepIsToldAndOneCanStopTheCopy() throws {
    let folder = NSTemporaryDirectory() + "appdata-copy-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let source = folder + "/source"
    let data = Data((0..<(1 << 20)).map { UInt8($0 % 251) })
    FileManager.default.createFile(atPath: source, contents: data)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: source))
    try handle.seek(toOffset: 100 << 20)
    try handle.write(contentsOf: data)
    try handle.close()

    func copy(to name: String, step: @escaping (UInt64) -> Bool) throws(SystemError) -> UInt64 {
      let input = try Syscalls.openFile(atPath: source)
      defer { input.close() }
      let parent = try Syscalls.openDirectory(atPath: folder)
      defer { parent.close() }
      let output = try Syscalls.open(Array(name.utf8), in: parent, options: .createNewFile, displayPath: name)
      defer { output.close() }
      return try Syscalls.copyData(from: input, to: output, displayPath: name, step: step)
    }
    var steps: [UInt64] = []
    let copied = try copy(to: "whole") { steps.append($0); return true }
    #expect(copied == 2 << 20)
    #expect(steps.reduce(0, +) == copied && steps.count >= 2, "\(steps)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/whole")) == Data(contentsOf: URL(fileURLWithPath: source)))

    var told = 0
    #expect(throws: SystemError.self) { _ = try copy(to: "stopped") { _ in told += 1; return false } }
    #expect(told == 1)
    do {
      _ = try copy(to: "stopped-again") { _ in false }
    } catch {
      #expect(error.errno == .canceled)
    }
  }
}
