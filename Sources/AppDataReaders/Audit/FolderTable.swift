import AppDataSystem
import AppDataCore
/// Bytes by folder path, for the folder summary: an open-addressing table whose keys live in one
/// byte arena, looked up by a hash the caller computed while scanning the path. No allocation
/// per lookup, none per new key but the arena's growth: a backup's rows reach it in any order.
struct FolderTable {
  /// Index into the entries + 1 (0: empty); a power of two long.
  private var slots: [Int32] = []
  private var hashes: [UInt64] = []
  private var offsets: [Int32] = []
  private var lengths: [Int32] = []
  private var sums: [UInt64] = []
  private var arena: [UInt8] = []

  var isEmpty: Bool { sums.isEmpty }

  /// Adds `amount` to the folder `key` (whose FNV-1a hash is `hash`).
  mutating func add(_ amount: UInt64, to key: UnsafeBufferPointer<UInt8>, hash: UInt64) {
    if sums.count * 2 >= slots.count { grow() }
    let mask = slots.count - 1
    var slot = Int(truncatingIfNeeded: hash) & mask
    while true {
      let stored = Int(slots[slot])
      if stored == 0 {
        slots[slot] = Int32(sums.count + 1)
        hashes.append(hash)
        offsets.append(Int32(arena.count))
        lengths.append(Int32(key.count))
        sums.append(amount)
        arena.append(contentsOf: key)
        return
      }
      let entry = stored - 1
      if hashes[entry] == hash && Int(lengths[entry]) == key.count && equals(entry, key) {
        sums[entry] = sums[entry].saturatingSum(amount)
        return
      }
      slot = (slot + 1) & mask
    }
  }

  private func equals(_ entry: Int, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
    guard key.count > 0 else { return true }
    return arena.withUnsafeBufferPointer { bytes in
      Syscalls.compareBytes(bytes.baseAddress! + Int(offsets[entry]), key.baseAddress!, count: key.count) == 0
    }
  }

  private mutating func grow() {
    let capacity = max(16, slots.count * 2)
    slots = [Int32](repeating: 0, count: capacity)
    let mask = capacity - 1
    for entry in sums.indices {
      var slot = Int(truncatingIfNeeded: hashes[entry]) & mask
      while slots[slot] != 0 { slot = (slot + 1) & mask }
      slots[slot] = Int32(entry + 1)
    }
  }

  /// Every folder and its bytes.
  func forEach(_ body: (_ key: UnsafeBufferPointer<UInt8>, _ hash: UInt64, _ bytes: UInt64) -> Void) {
    arena.withUnsafeBufferPointer { bytes in
      for entry in sums.indices {
        body(UnsafeBufferPointer(rebasing: bytes[Int(offsets[entry])..<Int(offsets[entry] + lengths[entry])]), hashes[entry], sums[entry])
      }
    }
  }

  /// Adds another table's folders to this one.
  mutating func merge(_ other: FolderTable) {
    other.forEach { key, hash, bytes in add(bytes, to: key, hash: hash) }
  }
}
