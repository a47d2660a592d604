import AppDataSystem
import AppDataCore
/// `appdata status ARCHIVE//PATH`: the markers on one entry inside an archive and on the
/// folders above it there, read in one pass like the archive audit.
package enum ArchiveMarkerStatus {
  /// Splits `ARCHIVE//PATH` when ARCHIVE is a regular file; nil otherwise.
  package static func split(_ argument: String) -> (archive: String, path: [[UInt8]])? {
    guard let range = argument.firstRange(of: "//") else { return nil }
    let archive = String(argument[..<range.lowerBound])
    guard !archive.isEmpty, (try? Syscalls.status(ofPath: archive))?.kind == .regular else { return nil }
    let inner = RelativePath.components(Array(argument[range.upperBound...].utf8)).filter { $0 != [0x2E] }
    return (archive, inner)
  }

  /// Own markers of `path` and the nearest marked folder above it (as `ARCHIVE//FOLDER`).
  package static func read(archive: String, path: [[UInt8]]) throws(ArchiveAuditor.Failure) -> MarkerStatus {
    let reader: LibArchive
    do {
      reader = try LibArchive(path: archive)
    } catch {
      throw ArchiveAuditor.Failure(.unreadable, message: "cannot read the archive: \(error.message)")
    }
    // Markers of the entry and each folder above it, from headers and AppleDouble files.
    var markers: [[UInt8]: MarkerSet] = [:]
    let wanted = Set((0...path.count).map { RelativePath.join(Array(path.prefix($0))) })
    var found = false
    while true {
      let header: ArchiveHeader?
      do { header = try reader.next() } catch { throw ArchiveAuditor.Failure(.damaged, message: "cannot read the archive: \(error.message)") }
      guard let header else { break }
      var components = RelativePath.components(header.path).filter { $0 != [0x2E] }
      let attributes = header.attributes
      if components.first == Array("__MACOSX".utf8) { components.removeFirst() }
      if let name = components.last, name.starts(with: [0x2E, 0x5F]), name.count > 2, header.kind == .regular {
        let target = Array(components.dropLast()) + [Array(name.dropFirst(2))]
        if wanted.contains(RelativePath.join(target)), let data = try? reader.readData(limit: ArchiveAuditor.metadataLimit),
           let parsed = AppleDouble.attributes(data) {
          markers[RelativePath.join(target), default: []].formUnion(EntryAttributes(attributes: parsed).markers)
          continue
        }
      }
      let key = RelativePath.join(components)
      guard wanted.contains(key) else { continue }
      if components == path { found = true }
      markers[key, default: []].formUnion(EntryAttributes(attributes: attributes).markers)
    }
    guard found else {
      throw ArchiveAuditor.Failure(.notFound, message: "no entry \(TerminalText.escaped(RelativePath.join(path))) in the archive")
    }
    let own = markers[RelativePath.join(path)] ?? []
    var inherited: (String, MarkerSet)?
    for depth in stride(from: path.count - 1, through: 0, by: -1) {
      let folder = RelativePath.join(Array(path.prefix(depth)))
      if let set = markers[folder], set.isExcluding {
        inherited = (archive + "//" + RelativePath.display(folder), set)
        break
      }
    }
    return MarkerStatus(path: archive + "//" + RelativePath.display(RelativePath.join(path)), ownMarkers: own, inheritedFrom: inherited)
  }
}
