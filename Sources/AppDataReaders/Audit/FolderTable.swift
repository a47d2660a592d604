import AppDataSystem
import AppDataCore
/// Bytes by folder path, for the folder summary.
struct FolderTable {
  private var keys = ByteKeyTable()
  private var sums: [UInt64] = []

  var isEmpty: Bool { sums.isEmpty }

  /// Adds `amount` to the folder `key` (whose FNV-1a hash is `hash`).
  mutating func add(_ amount: UInt64, to key: UnsafeBufferPointer<UInt8>, hash: UInt64) {
    let index = keys.index(of: key, hash: hash)
    if index == sums.count { sums.append(0) }
    sums[index] = sums[index].saturatingSum(amount)
  }

  /// Every folder and its bytes.
  func forEach(_ body: (_ key: UnsafeBufferPointer<UInt8>, _ hash: UInt64, _ bytes: UInt64) -> Void) {
    keys.forEach { key, index, hash in body(key, hash, sums[index]) }
  }

  /// Adds another table's folders to this one.
  mutating func merge(_ other: FolderTable) {
    other.forEach { key, hash, bytes in add(bytes, to: key, hash: hash) }
  }
}
