import AppDataSystem
/// What an entry's extended attributes say.
@usableFromInline package struct EntryAttributes {
  @usableFromInline package var markers: MarkerSet = []
  @usableFromInline package var declinesBackup = false

  /// One listxattr per entry; a getxattr only for the names appdata recognises.
  @inlinable
  package static func read(cName: UnsafePointer<CChar>, in directory: FileDescriptor, scratch: inout [UInt8],
                   pathFallback: Bool = ExtendedAttributes.usesPathFallback) -> Result<EntryAttributes, Errno> {
    let length: Int
    switch ExtendedAttributes.listNames(of: cName, in: directory, into: &scratch, pathFallback: pathFallback) {
    case .success(let count): length = count
    case .failure(let error):
      // A filesystem without extended attributes simply has no markers.
      if error == .notSupported { return .success(EntryAttributes()) }
      return .failure(error)
    }
    var result = EntryAttributes()
    if length == 0 { return .success(result) }
    var start = 0
    while start < length {
      var end = start
      while end < length && scratch[end] != 0 { end += 1 }
      let name = scratch[start..<end]
      for known in MarkerTable.recognisedBytes where known.name.count == name.count && known.name.elementsEqual(name) {
        switch ExtendedAttributes.value(of: known.attribute, on: cName, in: directory) {
        case .failure(let error): return .failure(error)
        case .success(nil): break
        case .success(let value?): result.add(known.meaning, value: value)
        }
      }
      start = end + 1
    }
    return .success(result)
  }

  /// Folds one recognised attribute's value into the result.
  @inlinable
  package mutating func add(_ meaning: MarkerTable.Meaning, value: [UInt8]) {
    switch meaning {
    case .marker(let marker):
      if marker.isExcluding(value: value) { markers.insert(MarkerSet(marker)) }
    case .robotsBackup:
      if MarkerTable.robotsValueDeclinesBackup(value) { declinesBackup = true }
    }
  }

  /// What a list of (name, value) attributes says (from an archive's headers or AppleDouble file).
  package init(attributes: [(name: String, value: [UInt8])]) {
    for (name, value) in attributes {
      for known in MarkerTable.recognised where known.name == name { add(known.meaning, value: value) }
    }
  }

  @inlinable package init() {}
}
