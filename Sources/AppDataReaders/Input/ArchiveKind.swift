import AppDataSystem
import AppDataCore

/// What an archive PATH holds, decided once, from its first headers, before anything reads it
/// (issue 49): the audit then reads it once, as that kind, and a refusal on the way is final.
/// (Deciding after a failed read, as before, read a refused bomb's whole stream a second time.)
enum ArchiveKind: Equatable {
  /// App data containers, a device backup or a folder of them (`ArchiveSource`, which also
  /// refuses what is none of them, or no archive at all).
  case apple
  /// An Android app's data folder at the archive's top (`AndroidArchiveSource`).
  case androidData

  /// The most headers read to decide.
  static let maximumHeaders = 256
  /// The most bytes a compression filter may expand while deciding: a header whose data would
  /// take the stream past it (libarchive skips data by expanding it) ends the look.
  static let maximumBytes: UInt64 = 1 << 20

  /// The kind of the archive at `path`, from at most `maximumHeaders` headers and
  /// `maximumBytes` of its expanded stream: an Android app's data when its top-level names
  /// are those of one (`AndroidDataFolder.androidFolders`, or `files` beside `cache`) and none
  /// is an iOS container's (`Documents`, `Library`, `tmp`, the metadata plist) or a device
  /// backup's (`Manifest.db`, `Manifest.plist`); else `apple`. A file libarchive cannot read is
  /// `apple`, whose reader says why.
  static func of(_ path: String) -> ArchiveKind {
    guard let reader = try? LibArchive(path: path) else { return .apple }
    var names = TopLevelNames()
    var pending: UInt64 = 0
    for _ in 0..<maximumHeaders {
      // The data of the entry before is expanded to reach the next header.
      if reader.isCompressed && reader.expandedBytes &+ pending > maximumBytes { break }
      guard let header = try? reader.next() else { break }
      if reader.isTextListing { return .apple }
      pending = header.kind == .regular ? header.size : 0
      names.add(header)
      if names.isApple { return .apple }
    }
    return names.isAndroid ? .androidData : .apple
  }

  /// The names at an archive's top, as far as they were read.
  struct TopLevelNames {
    var folders: Set<String> = []
    var files: Set<String> = []

    mutating func add(_ header: ArchiveHeader) {
      guard let name = AndroidArchiveSource.normalized(header.path), !name.isEmpty else { return }
      let parts = name.split(separator: 0x2F)
      let first = String(decoding: parts[0], as: UTF8.self)
      if parts.count > 1 || header.kind == .directory { folders.insert(first) } else { files.insert(first) }
    }

    /// What an iOS container or a device backup has at its top.
    var isApple: Bool {
      ContainerPlaces.rootFolderNames.contains(where: folders.contains) || ContainerPlaces.metadataFileNames.contains(where: files.contains)
        || files.contains(BackupManifest.databaseName) || files.contains("Manifest.plist")
    }

    /// What only an Android app's data folder has at its top (as `AndroidDataFolder` decides
    /// for a folder on disk).
    var isAndroid: Bool {
      !isApple && (AndroidDataFolder.androidFolders.contains(where: folders.contains) || (folders.contains("files") && folders.contains("cache")))
    }
  }
}
