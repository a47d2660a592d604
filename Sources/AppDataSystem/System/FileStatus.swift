#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A point in time as the filesystem stores it.
@usableFromInline package struct FileTime: Hashable, Sendable, Codable {
  package var seconds: Int
  package var nanoseconds: Int
  @usableFromInline package init(seconds: Int, nanoseconds: Int) {
    self.seconds = seconds
    self.nanoseconds = nanoseconds
  }
}

/// A file, whatever path names it: its device and inode. Usable from inlining: the walk's
/// hard-link table takes one from each entry with several links.
@usableFromInline package struct FileIdentity: Hashable, Sendable {
  package var device: UInt64
  package var inode: UInt64

  @usableFromInline package init(device: UInt64, inode: UInt64) {
    self.device = device
    self.inode = inode
  }
}

/// What appdata needs from stat(2), without exposing `struct stat`.
@usableFromInline package struct FileStatus: Sendable {
  /// The kind of entry.
  @usableFromInline package enum Kind: Sendable { case regular, directory, symbolicLink, other }

  @usableFromInline package var kind: Kind
  /// Permission bits (st_mode & 07777).
  @usableFromInline package var permissions: UInt32
  /// Apparent size in bytes (st_size): what a backup copies.
  @usableFromInline package var size: UInt64
  /// Allocated size in bytes (st_blocks * 512).
  @usableFromInline package var allocatedSize: UInt64
  /// Number of hard links.
  @usableFromInline package var linkCount: UInt64
  @usableFromInline package var device: UInt64
  @usableFromInline package var inode: UInt64
  @usableFromInline package var accessTime: FileTime
  @usableFromInline package var modificationTime: FileTime
  /// The owner's user id (st_uid).
  @usableFromInline package var owner: UInt32

  @inlinable
  package init(_ st: stat) {
    let type = UInt32(st.st_mode) & UInt32(S_IFMT)
    switch type {
    case UInt32(S_IFREG): kind = .regular
    case UInt32(S_IFDIR): kind = .directory
    case UInt32(S_IFLNK): kind = .symbolicLink
    default: kind = .other
    }
    permissions = UInt32(st.st_mode) & 0o7777
    size = UInt64(max(0, st.st_size))
    allocatedSize = UInt64(max(0, st.st_blocks)) * 512
    linkCount = UInt64(st.st_nlink)
    device = UInt64(st.st_dev)
    inode = UInt64(st.st_ino)
    owner = UInt32(st.st_uid)
    #if canImport(Glibc) && !DARWIN_CHECK
    accessTime = FileTime(seconds: st.st_atim.tv_sec, nanoseconds: st.st_atim.tv_nsec)
    modificationTime = FileTime(seconds: st.st_mtim.tv_sec, nanoseconds: st.st_mtim.tv_nsec)
    #else
    accessTime = FileTime(seconds: st.st_atimespec.tv_sec, nanoseconds: st.st_atimespec.tv_nsec)
    modificationTime = FileTime(seconds: st.st_mtimespec.tv_sec, nanoseconds: st.st_mtimespec.tv_nsec)
    #endif
  }

  package var isDirectory: Bool { kind == .directory }
  /// Which file it is: its device and inode.
  @inlinable package var identity: FileIdentity { FileIdentity(device: device, inode: inode) }

  /// A folder known from its directory listing alone: the walk does not stat folders,
  /// because it needs nothing from them but that they are folders.
  /// Computed, not stored: a `static let` is a lazily initialised global, checked on every use.
  @inlinable package static var listedDirectory: FileStatus { FileStatus(describing: .directory, size: 0, allocatedSize: 0) }

  /// The status of an entry known without stat(2) (a listed folder, an archive entry, a backup's
  /// row), described by its kind and sizes: one link, identity 0/0, no owner, no times.
  @inlinable package init(describing kind: Kind, size: UInt64, allocatedSize: UInt64) {
    self.kind = kind
    self.size = size
    self.allocatedSize = allocatedSize
    permissions = 0
    linkCount = 1
    (device, inode, owner) = (0, 0, 0)
    accessTime = FileTime(seconds: 0, nanoseconds: 0)
    modificationTime = accessTime
  }
}
