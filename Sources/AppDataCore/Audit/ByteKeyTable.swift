import AppDataSystem
/// Byte strings to dense indexes (0, 1, 2, … in the order first added): an open-addressing
/// table whose keys live in one byte arena, looked up by a hash the caller computed while
/// scanning the bytes (`hash(_:)`, FNV-1a). No allocation per lookup, none per new key but the
/// arena's growth. A backup's rows reach it in any order: the folder summary's folders, the
/// backup reader's domains, the treemap's folders.
package struct ByteKeyTable {
  package init() {}

  /// Index into the keys + 1 (0: empty); a power of two long.
  private var slots: [Int32] = []
  private var hashes: [UInt64] = []
  private var offsets: [Int32] = []
  private var lengths: [Int32] = []
  private var arena: [UInt8] = []

  package var count: Int { hashes.count }

  /// FNV-1a of `bytes`.
  package static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return hash
  }

  /// The index of `key` (whose hash is `hash`), added when absent.
  package mutating func index(of key: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Int {
    if hashes.count * 2 >= slots.count { grow() }
    let mask = slots.count - 1
    var slot = Int(truncatingIfNeeded: hash) & mask
    while true {
      let stored = Int(slots[slot])
      if stored == 0 {
        slots[slot] = Int32(hashes.count + 1)
        hashes.append(hash)
        offsets.append(Int32(arena.count))
        lengths.append(Int32(key.count))
        arena.append(contentsOf: key)
        return hashes.count - 1
      }
      let entry = stored - 1
      if hashes[entry] == hash && Int(lengths[entry]) == key.count && equals(entry, key) { return entry }
      slot = (slot + 1) & mask
    }
  }

  /// The index of `key`, or nil when it was never added.
  package func find(_ key: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Int? {
    guard !slots.isEmpty else { return nil }
    let mask = slots.count - 1
    var slot = Int(truncatingIfNeeded: hash) & mask
    while true {
      let stored = Int(slots[slot])
      if stored == 0 { return nil }
      let entry = stored - 1
      if hashes[entry] == hash && Int(lengths[entry]) == key.count && equals(entry, key) { return entry }
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
    for entry in hashes.indices {
      var slot = Int(truncatingIfNeeded: hashes[entry]) & mask
      while slots[slot] != 0 { slot = (slot + 1) & mask }
      slots[slot] = Int32(entry + 1)
    }
  }

  /// Every key with its index and hash, in index order.
  package func forEach(_ body: (_ key: UnsafeBufferPointer<UInt8>, _ index: Int, _ hash: UInt64) -> Void) {
    arena.withUnsafeBufferPointer { bytes in
      for entry in hashes.indices {
        body(UnsafeBufferPointer(rebasing: bytes[Int(offsets[entry])..<Int(offsets[entry] + lengths[entry])]), entry, hashes[entry])
      }
    }
  }
}
