#if canImport(Glibc) && !DARWIN_CHECK
import Glibc
import CLibattr
#elseif canImport(Darwin)
import Darwin
#endif

/// How the filesystem holding a folder tells two names apart, so that what appdata plans there
/// (migrate's moves, extract's rows) sees the collisions the filesystem will see, before it
/// changes anything. Linux compares bytes, except in a casefolded folder (ext4 or f2fs with
/// `casefold`, `chattr +F`), which ignores case and Unicode normalization. APFS ignores
/// normalization always, and case too unless formatted case-sensitive (macOS's default ignores
/// it; an iOS device's does not, so a backup can hold `Photos` and `photos`).
package enum NameComparison: Sendable, Equatable {
  /// Two names are one when their bytes are.
  case bytes
  /// Canonically equivalent Unicode names are one (`é` precomposed and decomposed).
  case ignoringNormalization
  /// Names equal after case folding and normalization are one (`Photos` and `photos`).
  case ignoringCaseAndNormalization

  /// The comparison of the filesystem `folder` is on (a casefolded folder's, on Linux).
  /// `APPDATA_TEST_NAME_COMPARISON` (`case` or `normalization`) stands in for a filesystem the
  /// tests cannot make: a kernel without CONFIG_UNICODE mounts no casefolded ext4.
  package static func of(_ folder: FileDescriptor) -> NameComparison {
    switch TestHooks.nameComparison {
    case "case": return .ignoringCaseAndNormalization
    case "normalization": return .ignoringNormalization
    default: break
    }
    #if canImport(Glibc) && !DARWIN_CHECK
    return appdata_is_casefolded(folder.rawValue) == 1 ? .ignoringCaseAndNormalization : .bytes
    #else
    // pathconf(2): _PC_CASE_SENSITIVE is 1 on a case-sensitive volume, 0 on one that ignores
    // case; -1 where the filesystem does not say (a network volume), taken as ignoring case,
    // which finds more collisions, never fewer. APFS and HFS+ ignore normalization either way.
    return fpathconf(folder.rawValue, _PC_CASE_SENSITIVE) == 1 ? .ignoringNormalization : .ignoringCaseAndNormalization
    #endif
  }

  /// How names compare, in words for a message ("this filesystem ignores case").
  package var phrase: String {
    switch self {
    case .bytes: return "compares names byte for byte"
    case .ignoringNormalization: return "ignores Unicode normalization"
    case .ignoringCaseAndNormalization: return "ignores case"
    }
  }

  /// The key two names share exactly when this comparison makes them one name. A name that is
  /// not UTF-8 is compared by its bytes (no filesystem folds what it cannot decode).
  package func key(_ name: [UInt8]) -> NameKey {
    if self == .bytes { return NameKey(storage: .bytes(name)) }
    guard let text = String(validating: name, as: UTF8.self) else { return NameKey(storage: .bytes(name)) }
    // String's equality and hash are canonical equivalence: normalization is ignored by both.
    return NameKey(storage: .text(self == .ignoringCaseAndNormalization ? text.lowercased() : text))
  }
}

/// A name as a `NameComparison` sees it: equal keys are one name on that filesystem.
package struct NameKey: Hashable, Sendable {
  enum Storage: Hashable, Sendable {
    case bytes([UInt8])
    case text(String)
  }
  let storage: Storage
}

/// Names in one folder, as its filesystem compares them: `insert` says which name already
/// there a new one is the same as.
package struct FolderNames: Sendable {
  package let comparison: NameComparison
  private var names: [NameKey: [UInt8]] = [:]

  package init(_ comparison: NameComparison, names: some Sequence<[UInt8]> = [[UInt8]]()) {
    self.comparison = comparison
    for name in names { self.names[comparison.key(name)] = name }
  }

  /// The name already here that `name` is the same as (itself, or another spelling), if any.
  package func existing(_ name: [UInt8]) -> [UInt8]? { names[comparison.key(name)] }
  package func contains(_ name: [UInt8]) -> Bool { existing(name) != nil }
  /// Adds `name`; returns the name already here that it is the same as, if any (then nothing
  /// is added).
  @discardableResult
  package mutating func insert(_ name: [UInt8]) -> [UInt8]? {
    let key = comparison.key(name)
    if let other = names[key] { return other }
    names[key] = name
    return nil
  }
}
