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
struct SymlinkCheck {
  /// The symlink rows: path (relative to the container) to target.
  private var targets: [[UInt8]: [UInt8]] = [:]
  /// Links written as files, with why.
  private var demoted: [[UInt8]: String] = [:]
  /// The longest path in `targets`: a longer prefix names no link, so is not looked up.
  private var longest = 0
  static let maximumHops = 40
  /// The components one resolution may step through before it is given up (and the link
  /// written as a file): a bound on the work a hostile target can cause.
  static let maximumSteps = 8192
  static let maximumRounds = 8

  /// The work all rounds together may do, in resolution steps: past it, every link not yet
  /// judged inside is written as a file (a hostile manifest's million long targets cost a bounded
  /// time, not hours).
  static let maximumTotalSteps = 2_000_000
  /// Links beyond what `Plan.symlinks` holds in memory (`isComplete` false): written as files.
  private var isComplete = true
  private var spent = 0

  /// `isComplete`: false when the container has more symlink rows than were handed over (their
  /// targets passed the memory bound); those are all written as files.
  init(links: [(path: [UInt8], target: [UInt8])], isComplete: Bool = true) {
    self.isComplete = isComplete
    for link in links where targets[link.path] == nil {
      targets[link.path] = link.target
      longest = max(longest, link.path.count)
    }
    var round = 0
    while true {
      round += 1
      var outward: [(path: [UInt8], why: String, hops: Int)] = []
      for (path, target) in targets where demoted[path] == nil {
        if spent > Self.maximumTotalSteps {
          outward.append((path, "is one of more symlinks than appdata resolves in one container", 0))
          continue
        }
        if let (why, hops) = resolve(path, target) { outward.append((path, why, hops)) }
      }
      guard let fewest = outward.map(\.hops).min() else { break }
      let all = round >= Self.maximumRounds || spent > Self.maximumTotalSteps
      for link in outward where link.hops == fewest || all { demoted[link.path] = link.why }
    }
  }

  /// Whether a symlink row holds `path`: no folder may be made there.
  func isLink(_ path: [UInt8]) -> Bool { targets[path] != nil }

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

  /// Resolves `target` from the folder holding `path`, through the links that are links: why it
  /// ends outside the container and after how many links, or nil.
  private mutating func resolve(_ path: [UInt8], _ target: [UInt8]) -> (why: String, hops: Int)? {
    if target.first == 0x2F { return ("is absolute", 0) }
    if target.isEmpty { return ("is empty", 0) }
    // Where resolution is: the components from the container's root, and their bytes joined.
    var here = Array(path.split(separator: 0x2F, omittingEmptySubsequences: true).dropLast())
    var joined = Array(RelativePath.join(here.map(Array.init)))
    var work = Array(target.split(separator: 0x2F, omittingEmptySubsequences: true).reversed())
    var hops = 0
    var steps = 0
    func pop() {
      let last = here.removeLast()
      joined.removeLast(min(joined.count, last.count + (here.isEmpty ? 0 : 1)))
    }
    defer { spent += steps }
    while let component = work.popLast() {
      steps += 1
      if steps > Self.maximumSteps { return ("takes more than \(Self.maximumSteps) steps to resolve", hops) }
      if component.elementsEqual([0x2E]) { continue }
      if component.elementsEqual([0x2E, 0x2E]) {
        if here.isEmpty { return (hops == 0 ? "climbs out of the container" : "resolves out of the container through another symlink", hops) }
        pop()
        continue
      }
      if !here.isEmpty { joined.append(0x2F) }
      joined.append(contentsOf: component)
      here.append(component)
      guard joined.count <= longest, let next = targets[joined] else { continue }
      // A link written as a file: the kernel stops there (the file, or ENOTDIR), inside.
      if demoted[joined] != nil { return nil }
      hops += 1
      if hops > Self.maximumHops { return ("resolves through more than \(Self.maximumHops) symlinks", hops) }
      if next.first == 0x2F { return ("resolves through an absolute symlink", hops) }
      pop()
      work.append(contentsOf: next.split(separator: 0x2F, omittingEmptySubsequences: true).reversed())
    }
    return nil
  }
}
