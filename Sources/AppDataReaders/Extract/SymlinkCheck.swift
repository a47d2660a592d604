import AppDataSystem
import AppDataCore
/// Which of a container's symlink rows may be written as symlinks: those whose target, resolved
/// as the kernel would resolve it in the extracted tree (through the container's other symlinks,
/// at most 40 of them, as Linux's ELOOP bound), stays inside the container. The rest are written
/// as files holding their target.
///
/// Counting `..` in the text is not enough: with `Documents/y -> ..`, the target
/// `Documents/y/Documents/y/../../..` climbs one level per `..` from the container's root, not
/// from three folders down. So every symlink row of the container is known before the first is
/// written, and the decision is made for all of them at once: links that resolve out become
/// files, round after round, until every link left resolves inside with the others as they will
/// be (a link that became a file stops a resolution that reaches it, as the kernel's stops at a
/// file: `l1 -> l2` with `l2 -> ../..` leaves `l1` a link, to the file `l2`). Each round takes the
/// links that get out through the fewest others (those whose own text climbs out first), so a
/// link that only leads to one that gets out stays a link; after eight rounds, every link that
/// still resolves out goes at once. A loop, or a chain of more than 40 links, is a file too.
///
/// That is sound because the tree keeps three promises the writer makes: a symlink is written
/// only at a path this table holds, with the target it holds; no folder is ever made at such a
/// path (a row that would need one is not written); and a link judged here to resolve out is
/// written as a file. A path that names no link here is a folder (resolved as its text says), a
/// file or nothing (where the kernel's resolution stops, going nowhere).
///
/// **The work is bounded by components visited, across the run.** Each step of a resolution
/// (one component of a link's folder or of a target) costs one component's hashing: where
/// resolution is, is a stack of keyed hashes of the path so far (`PathHash`: two SipHash values,
/// Swift's `Hasher`, seeded per process), and a link is looked up by them, never by its path's
/// text, so a step costs the same 3.8 KB deep as at the root (it cost the whole path's hashing,
/// about 18 s of CPU for a 2 MB manifest of links 3.8 KB deep, issue 48). Every step of every
/// container of one extraction counts against one `Budget` (`Budget.defaultLimit`, 4,000,000
/// steps): past it, every link not yet judged inside is written as a file, with that reason.
/// The interrupt flag is read every 1,024 steps; once it is set the check stops (`interrupted`)
/// and the caller ends the run.
///
/// **Names compare as the filesystem written to compares them** (`NameComparison`): on a volume
/// that ignores case (macOS's default APFS, where a Simulator's devices live) `K` names the link
/// `k`, so `Documents/z -> K/../..` with `Documents/k -> ..` resolves out of the container, though
/// byte for byte it stays inside (a hostile round of issue 53). Each component is hashed by its
/// key under that comparison: its bytes (Linux, a case-sensitive volume), its ASCII letters
/// lowercased where case is ignored, a name that is not ASCII by its canonical equivalence. Where
/// case is ignored, how the filesystem folds a name that is not ASCII cannot be known here (APFS
/// folds with tables of its own, and folding is not lowercasing: `ſ` is `s`, the Kelvin sign
/// `k`), so no judgement rests on one: a link whose own path, or whose resolution, has a name
/// that is not ASCII is written as a file, and no folder whose name is not ASCII is made in a
/// folder a link row lies in or below (`folderBlocked`); so every link on disk, and every name
/// a resolution looks up, is ASCII, which folds one way only, and no folder exists that the
/// filesystem may take for a link row's path (a link row not written, its name taken, leaves a
/// file or nothing there, where a resolution stops). The second promise above reads "no folder
/// is ever made at such a path, nor where the filesystem may take it for one".
struct SymlinkCheck {
  /// What every container's check of one extraction spends, and may: steps of resolution (a
  /// component of a link's folder or of a target, visited).
  struct Budget {
    static let defaultLimit = 4_000_000
    var limit = Budget.defaultLimit
    var spent = 0
    var isExhausted: Bool { spent >= limit }
  }

  /// A path from the container's root, as two keyed hashes of its components.
  struct PathHash: Hashable {
    var first: Int
    var second: Int
    static let root = PathHash(first: 0, second: 0)

    /// The path `self` then `name`, as `comparison` tells names apart.
    func appending(_ name: ArraySlice<UInt8>, _ comparison: NameComparison) -> PathHash {
      var a = Hasher()
      var b = Hasher()
      a.combine(0 as UInt8)
      b.combine(1 as UInt8)
      a.combine(first)
      b.combine(second)
      if comparison == .bytes || (comparison == .ignoringNormalization && SymlinkCheck.isASCII(name)) {
        a.combine(name.count)
        b.combine(name.count)
        name.withUnsafeBytes { bytes in
          a.combine(bytes: bytes)
          b.combine(bytes: bytes)
        }
      } else if SymlinkCheck.isASCII(name) {
        // Where case is ignored: the ASCII letters lowercased (the same bytes hashed as a name
        // that has them).
        let folded = SymlinkCheck.asciiLowercased(name)
        a.combine(folded.count)
        b.combine(folded.count)
        folded.withUnsafeBytes { bytes in
          a.combine(bytes: bytes)
          b.combine(bytes: bytes)
        }
      } else {
        let key = comparison.key(Array(name))
        a.combine(key)
        b.combine(key)
      }
      return PathHash(first: a.finalize(), second: b.finalize())
    }
  }

  /// The symlink rows: path (relative to the container) to target.
  private var targets: [[UInt8]: [UInt8]] = [:]
  /// The same rows, found by their path's hash: their index in `rows`.
  private var byHash: [PathHash: Int] = [:]
  private var rows: [(path: [UInt8], target: [UInt8])] = []
  /// Per row: written as a file.
  private var isDemoted: [Bool] = []
  /// Per row: found inside in a round. It stays inside in every later one (a link that becomes
  /// a file only stops a resolution that reaches it, inside), so it is not resolved again.
  private var isInside: [Bool] = []
  /// Links written as files, with why.
  private var demoted: [[UInt8]: String] = [:]
  static let maximumHops = 40
  /// The components one resolution may step through before it is given up (and the link
  /// written as a file): a bound on the work a hostile target can cause.
  static let maximumSteps = 8192
  static let maximumRounds = 8
  /// How often (in steps) the interrupt flag is read.
  static let interruptInterval = 1024
  /// Links beyond what `Plan.symlinks` holds in memory (`isComplete` false): written as files.
  private var isComplete = true
  /// Where names fold: every folder above a link row (the root included), by its path's hash
  /// (`folderBlocked`).
  private var linkAncestors: Set<PathHash> = []
  /// Where case is ignored: the link rows' paths that are ASCII, lowercased (`folderBlocked`).
  private var foldedLinkPaths: Set<[UInt8]> = []
  /// How the filesystem written to tells names apart.
  private let comparison: NameComparison
  /// The check stopped for an interrupt: its verdicts are not to be used.
  private(set) var interrupted = false

  /// `isComplete`: false when the container has more symlink rows than were handed over (their
  /// targets passed the memory bound); those are all written as files. `budget`: the steps the
  /// run may still spend, spent here. `isInterrupted`: read every `interruptInterval` steps.
  /// `comparison`: how the filesystem written to tells names apart; of two rows it takes for one
  /// name, the first is the one found (the writer writes the first, and refuses the second).
  init(links: [(path: [UInt8], target: [UInt8])], isComplete: Bool = true, comparison: NameComparison = .bytes, budget: inout Budget,
       isInterrupted: () -> Bool = { false }) {
    self.isComplete = isComplete
    self.comparison = comparison
    // Where names fold at all (case, or normalization alone: U+212A is K there too).
    let folds = comparison != .bytes
    for link in links where targets[link.path] == nil {
      targets[link.path] = link.target
      var hash = PathHash.root
      for component in link.path.split(separator: 0x2F, omittingEmptySubsequences: true) {
        if folds { linkAncestors.insert(hash) }  // asked only where names fold
        hash = hash.appending(component, comparison)
      }
      if byHash[hash] == nil { byHash[hash] = rows.count }
      let unfoldable = folds && !Self.isASCII(link.path[...])
      if unfoldable { demoted[link.path] = Self.notASCII }
      if comparison == .ignoringCaseAndNormalization && !unfoldable { foldedLinkPaths.insert(Self.asciiLowercased(link.path[...])) }
      rows.append(link)
      isDemoted.append(unfoldable)
      isInside.append(false)
    }
    var round = 0
    var nextCheck = budget.spent + Self.interruptInterval
    let pastBudget = "is one of more symlinks than appdata resolves in one extraction (\(budget.limit) steps)"
    while true {
      round += 1
      var outward: [(index: Int, why: String, hops: Int)] = []
      for index in rows.indices where !isDemoted[index] && !isInside[index] {
        if budget.isExhausted {
          outward.append((index, pastBudget, 0))
          continue
        }
        if budget.spent >= nextCheck {
          nextCheck = budget.spent + Self.interruptInterval
          if isInterrupted() {
            interrupted = true
            return
          }
        }
        switch resolve(index, budget: &budget, isInterrupted: isInterrupted) {
        case .inside: isInside[index] = true
        case .outside(let why, let hops): outward.append((index, why, hops))
        case .interrupted:
          interrupted = true
          return
        }
      }
      guard let fewest = outward.map(\.hops).min() else { break }
      let all = round >= Self.maximumRounds || budget.isExhausted
      for link in outward where link.hops == fewest || all {
        isDemoted[link.index] = true
        demoted[rows[link.index].path] = link.why
      }
    }
  }

  /// A check with a budget of its own (tests, the fuzz target).
  init(links: [(path: [UInt8], target: [UInt8])], isComplete: Bool = true, comparison: NameComparison = .bytes) {
    var budget = Budget()
    self.init(links: links, isComplete: isComplete, comparison: comparison, budget: &budget)
  }

  /// Why no folder may be made, nor entered, at `path`, or nil: a symlink row holds it, as the
  /// filesystem compares names; or, where names fold, the first of its names that is not ASCII
  /// lies in a folder that a symlink row lies in or below (whether the filesystem takes that name
  /// for one on the link's way, as ſ for s, cannot be known here). So no folder the writer makes
  /// or enters is one the filesystem may take for a link row's path, or for a folder on its way:
  /// a path whose names are ASCII folds one way only, and one with a name that is not ASCII
  /// branches off every link row's way before that name.
  func folderBlocked(_ path: [UInt8]) -> String? {
    let sameAsLink = "a symlink row has the same path"
    // A path that is ASCII (any, byte for byte): looked up whole, as its bytes or folded.
    if comparison == .bytes || Self.isASCII(path[...]) {
      if comparison == .ignoringCaseAndNormalization { return foldedLinkPaths.contains(Self.asciiLowercased(path[...])) ? sameAsLink : nil }
      return targets[path] != nil ? sameAsLink : nil
    }
    var hash = PathHash.root
    for component in path.split(separator: 0x2F, omittingEmptySubsequences: true) {
      if !Self.isASCII(component) {
        return linkAncestors.contains(hash) ? "a name of its path is not ASCII where a symlink row lies in or below that name's folder, on a filesystem that folds names (whether it takes the name for one on the link's way cannot be known here)" : nil
      }
      hash = hash.appending(component, comparison)
    }
    return byHash[hash] != nil ? sameAsLink : nil
  }

  /// Whether every byte of `bytes` is ASCII.
  static func isASCII(_ bytes: ArraySlice<UInt8>) -> Bool { bytes.allSatisfy { $0 < 0x80 } }
  /// `bytes` with the ASCII capitals lowercased.
  static func asciiLowercased(_ bytes: ArraySlice<UInt8>) -> [UInt8] { bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 } }
  static let notASCII = "has a name that is not ASCII, where the filesystem folds names (how it folds such a name cannot be known here)"

  /// Why the symlink row at `path` is written as a file, or nil: it is written as a symlink.
  func verdict(_ path: [UInt8], target: [UInt8]) -> String? {
    if let why = demoted[path] { return why }
    // A row this table does not hold: past the memory bound, or a second row with one path
    // (which is never written). Never a link.
    if targets[path] != target {
      return isComplete ? "is not the symlink row its path names" : "is one of more symlinks than appdata holds for one container (their paths and targets pass 64 MiB)"
    }
    return nil
  }

  private enum Resolution {
    case inside
    case outside(why: String, hops: Int)
    case interrupted
  }

  /// Resolves row `index`'s target from the folder holding it, through the links that are
  /// links: inside, or why it ends outside the container and after how many links.
  private func resolve(_ index: Int, budget: inout Budget, isInterrupted: () -> Bool) -> Resolution {
    let (path, target) = rows[index]
    if target.first == 0x2F { return .outside(why: "is absolute", hops: 0) }
    if target.isEmpty { return .outside(why: "is empty", hops: 0) }
    // Where resolution is: the hash of each folder from the root down (the root's first).
    var here: [PathHash] = [.root]
    let folders = path.split(separator: 0x2F, omittingEmptySubsequences: true).dropLast()
    budget.spent += folders.count
    WorkCounters.addSymlinkSteps(UInt64(folders.count))
    for component in folders { here.append(here[here.count - 1].appending(component, comparison)) }
    var work = Array(target.split(separator: 0x2F, omittingEmptySubsequences: true).reversed())
    var hops = 0
    var steps = 0
    defer {
      budget.spent += steps
      WorkCounters.addSymlinkSteps(UInt64(steps))
    }
    while let component = work.popLast() {
      steps += 1
      if steps > Self.maximumSteps { return .outside(why: "takes more than \(Self.maximumSteps) steps to resolve", hops: hops) }
      if steps % Self.interruptInterval == 0 && isInterrupted() { return .interrupted }
      if component.count == 1 && component.first == 0x2E { continue }
      if comparison != .bytes && !Self.isASCII(component) { return .outside(why: Self.notASCII, hops: hops) }
      if component.count == 2 && component.first == 0x2E && component.last == 0x2E {
        if here.count == 1 {
          return .outside(why: hops == 0 ? "climbs out of the container" : "resolves out of the container through another symlink", hops: hops)
        }
        here.removeLast()
        continue
      }
      let next = here[here.count - 1].appending(component, comparison)
      guard let link = byHash[next] else {
        here.append(next)
        continue
      }
      // A link written as a file: the kernel stops there (the file, or ENOTDIR), inside.
      if isDemoted[link] { return .inside }
      hops += 1
      if hops > Self.maximumHops { return .outside(why: "resolves through more than \(Self.maximumHops) symlinks", hops: hops) }
      let linkTarget = rows[link].target
      if linkTarget.first == 0x2F { return .outside(why: "resolves through an absolute symlink", hops: hops) }
      work.append(contentsOf: linkTarget.split(separator: 0x2F, omittingEmptySubsequences: true).reversed())
    }
    return .inside
  }
}
