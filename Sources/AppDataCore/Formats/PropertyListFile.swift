/// Property lists found beside containers and in backups (metadata, package info, a backup's
/// plists), binary or XML, read by the bounded reader.
package enum PropertyListFile {
  /// The top-level dictionary, or nil when the bytes are not a plist holding one.
  package static func dictionary(_ bytes: [UInt8]) -> [PlistKey: PropertyList]? {
    guard !bytes.isEmpty else { return nil }
    return (try? PropertyList.parse(bytes))?.dictionaryValue
  }
}
