@testable import AppDataSystem
@testable import AppDataReaders
@testable import AppDataKit
import Foundation
import Testing

/// How a walk without `--jobs` decides to add workers (`WalkGrowth`): a folder whose reads
/// reached the disk, or whose wall-clock time ran far ahead of its CPU time, waited.
@Suite("walk growth")
struct WalkGrowthTests {
  @Test func aFolderWaitedWhenItsReadsReachedTheDiskOrItsClockRanFarAheadOfItsCPUTime() {
    // A fast disk: eight blocks read, no measurable wait.
    #expect(WalkGrowth.waited(blocksRead: 8, wallNanoseconds: 200_000, cpuNanoseconds: 200_000))
    // Nothing read, a few milliseconds off the CPU: preempted, or getrusage's tick, not the disk.
    #expect(!WalkGrowth.waited(blocksRead: 0, wallNanoseconds: 6_000_000, cpuNanoseconds: 1_000_000))
    // Nothing read from a block device, 40 ms of waiting: a network filesystem.
    #expect(WalkGrowth.waited(blocksRead: 0, wallNanoseconds: 41_000_000, cpuNanoseconds: 1_000_000))
    // CPU time ahead of the clock (getrusage's CPU time lags at the start): no wait.
    #expect(!WalkGrowth.waited(blocksRead: 0, wallNanoseconds: 1_000_000, cpuNanoseconds: 5_000_000))
  }

  @Test func everyTwoWaitingFoldersAddOneWorkerUpToTheMaximum() {
    let growth = WalkGrowth(started: 2, maximum: 4)
    var started: [Int] = []
    var canGrow: [Bool] = []
    for _ in 0..<6 {
      let (index, grows) = growth.blockedFolder()
      if let index { started.append(index) }
      canGrow.append(grows)
    }
    #expect(started == [2, 3])
    #expect(canGrow == [true, true, true, false, false, false])
  }

  /// The signal itself: a file read after its pages were dropped counts its blocks, and the same
  /// read again from the page cache counts none. Needs the temporary folder on a block device
  /// (a tmpfs reads no disk) and the kernel's per-task I/O accounting (/proc/self/io).
  @Test(.enabled(if: Self.temporaryFolderIsOnABlockDevice, "the temporary folder is not on a block device, or the kernel keeps no per-task I/O counts"))
  func threadUsageCountsTheBlocksThatReadsTookFromTheDisk() throws {
    let tree = try TestTree("blocks")
    let path = try tree.file("a", size: 1 << 20)
    let descriptor = open(path, O_RDONLY)
    #expect(descriptor >= 0)
    defer { close(descriptor) }
    #expect(fsync(descriptor) == 0)
    #expect(posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_DONTNEED)) == 0)
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    func blocksToRead() -> UInt64 {
      let before = Syscalls.threadUsage().blocksRead
      let count = pread(descriptor, &buffer, buffer.count, 0)
      #expect(count == 1 << 20)
      return Syscalls.threadUsage().blocksRead - before
    }
    let cold = blocksToRead()
    let warm = blocksToRead()
    #expect(cold >= 2048, "1 MiB read from the disk is 2,048 blocks of 512 bytes")
    #expect(warm == 0)
  }

  static var temporaryFolderIsOnABlockDevice: Bool {
    var status = stat()
    guard stat(FileManager.default.temporaryDirectory.path, &status) == 0 else { return false }
    // Anonymous devices (tmpfs, overlay and other filesystems without a disk) have major 0.
    return (status.st_dev >> 8) & 0xfff != 0 && FileManager.default.fileExists(atPath: "/proc/self/io")
  }
}
