import AppDataSystem
/// Where an entry stands in its container: its location rule and its category. Decided by
/// `ContainerLayout.place(depth:leadingComponents:parent:isExcluded:)` and nowhere else, whichever
/// reader (the walk on disk, an archive, a device backup's manifest) produced the entry.
@usableFromInline package struct Placement: Sendable, Equatable {
  /// The index of the location rule in the layout's `rules` (-1: its fallback). A plain value
  /// rather than the rule itself: sharing one reference-counted object between walker threads
  /// costs more than the walk's own work.
  @usableFromInline package var ruleIndex: Int
  /// Whether the location is part of the standard layout (false only for an unknown top-level entry).
  package var isStandardLocation: Bool
  /// The rule's category: where the entry lives, before markers.
  @usableFromInline package var locationCategory: Category
  /// The final category: the rule's, or `offline` when a marker excludes a backed-up location.
  package var category: Category

  @usableFromInline package init(ruleIndex: Int, isStandardLocation: Bool, locationCategory: Category, category: Category) {
    self.ruleIndex = ruleIndex
    self.isStandardLocation = isStandardLocation
    self.locationCategory = locationCategory
    self.category = category
  }

  /// The container root's own placement: what its top-level entries inherit from (nothing).
  @usableFromInline package static let root = Placement(ruleIndex: -1, isStandardLocation: true, locationCategory: .other, category: .other)
}

extension ContainerLayout {
  /// The one classifier. An entry at `depth` (1 = top level) takes the rule its first one or two
  /// path components match (`leadingComponents`, evaluated only at depth 1 and 2); deeper entries
  /// inherit their folder's (`parent`). A marker on the entry or a folder above it
  /// (`isExcluded`) turns a backed-up location into `offline`; elsewhere it changes nothing.
  ///
  /// A reader that has an entry's whole path but not its folder's placement (a backup manifest's
  /// rows come in no order) passes `min(depth, 2)` and the first two components: the same answer.
  @inlinable
  package func place(
    depth: Int, leadingComponents: @autoclosure () -> ArraySlice<[UInt8]>, parent: Placement, isExcluded: Bool
  ) -> Placement {
    if depth <= LocationRule.maximumDepth {
      return placement(depth: depth, ruleIndex: ruleIndex(for: leadingComponents()), isExcluded: isExcluded)
    }
    return placement(inheriting: parent, isExcluded: isExcluded)
  }

  /// `place` for a manifest row, from its path's bytes: `first` is its first component,
  /// `second` its second (nil for a top-level entry). No copy, no allocation.
  @inlinable
  package func place(first: UnsafeBufferPointer<UInt8>, second: UnsafeBufferPointer<UInt8>?, isExcluded: Bool) -> Placement {
    placement(depth: second == nil ? 1 : 2, ruleIndex: ruleIndex(first: first, second: second), isExcluded: isExcluded)
  }

  @inlinable
  func placement(depth: Int, ruleIndex: Int, isExcluded: Bool) -> Placement {
    let locationCategory = category(at: ruleIndex)
    return Placement(
      ruleIndex: ruleIndex, isStandardLocation: depth == 1 ? isStandard(at: ruleIndex) : true, locationCategory: locationCategory,
      category: locationCategory == .critical && isExcluded ? .offline : locationCategory)
  }

  @inlinable
  func placement(inheriting parent: Placement, isExcluded: Bool) -> Placement {
    Placement(
      ruleIndex: parent.ruleIndex, isStandardLocation: true, locationCategory: parent.locationCategory,
      category: parent.locationCategory == .critical && isExcluded ? .offline : parent.locationCategory)
  }

  /// `place` for an entry known by its path from the container root but not by its folder's
  /// placement (a manifest row): `components` are the path's first components (two suffice).
  @inlinable
  package func place(components: ArraySlice<[UInt8]>, isExcluded: Bool) -> Placement {
    let depth = min(components.count, LocationRule.maximumDepth)
    return place(depth: depth, leadingComponents: components.prefix(depth), parent: .root, isExcluded: isExcluded)
  }
}
