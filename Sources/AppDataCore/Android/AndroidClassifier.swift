import AppDataSystem

/// Android's classifier: the one place an Android file's category is decided (iOS's is
/// `ContainerLayout.place`, Container/Classifier.swift). Whether the cloud backup's walk sends a
/// file is decided by the rules (AndroidRulesApplied.swift); this turns that into a category.
extension AndroidPlatform {
  /// A file's category: what the cloud backup's rules carry is critical (whether or not the
  /// app is eligible: that is the destination's `carried`), a file in cache/ or code_cache/ of
  /// the app's own storage is cached, the rest (no_backup/, what a rule excludes) offline; a
  /// symlink or special file is other. Nil for a folder.
  package static func category(of node: AndroidTree.Node, in tree: AndroidTree, sentByCloud: Bool) -> Category? {
    switch tree.kind(at: node) {
    case .directory: return nil
    case .other: return .other
    case .file:
      if sentByCloud { return .critical }
      if tree.storage(of: node) != .external, case let top = tree.top(of: node), top >= 0, top != node, isCacheFolder(tree.name(of: top)) {
        return .cached
      }
      return .offline
    }
  }

  /// cache/ and code_cache/ at a storage's top: Android's caches, never in the cloud backup.
  static func isCacheFolder(_ name: ArraySlice<UInt8>) -> Bool {
    name.elementsEqual("cache".utf8) || name.elementsEqual("code_cache".utf8)
  }
}
