import AppDataSystem

/// A string's UTF-8 bytes compared, ordered and hashed as one block (memcmp, one `Hasher`
/// call), for the keys that go by bytes (`JSONKey`, `PlistKey`): walking `utf8` a byte at a time
/// through generic collection code cost a report of 10,000 backups a tenth of its time in a debug
/// build, where nothing is inlined (issue 49). Native strings are contiguous; a string that is
/// not (none on Linux) takes the byte-by-byte way, with the same results.
package enum StringBytes {
  package static func equal(_ left: String, _ right: String) -> Bool {
    let result = left.utf8.withContiguousStorageIfAvailable { a in
      right.utf8.withContiguousStorageIfAvailable { b in
        a.count == b.count && (a.isEmpty || Syscalls.compareBytes(a.baseAddress!, b.baseAddress!, count: a.count) == 0)
      }
    }
    return (result ?? nil) ?? left.utf8.elementsEqual(right.utf8)
  }

  /// Whether `left`'s bytes come before `right`'s (a shorter prefix first).
  package static func precedes(_ left: String, _ right: String) -> Bool {
    let result = left.utf8.withContiguousStorageIfAvailable { a in
      right.utf8.withContiguousStorageIfAvailable { b in
        let common = min(a.count, b.count)
        let order = common == 0 ? 0 : Syscalls.compareBytes(a.baseAddress!, b.baseAddress!, count: common)
        return order != 0 ? order < 0 : a.count < b.count
      }
    }
    return (result ?? nil) ?? left.utf8.lexicographicallyPrecedes(right.utf8)
  }

  package static func hash(_ string: String, into hasher: inout Hasher) {
    let hashed: Void? = string.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    if hashed == nil { for byte in string.utf8 { hasher.combine(byte) } }
    hasher.combine(string.utf8.count)
  }
}
