import AppDataSystem

/// The Cache Directory Tagging Specification's `CACHEDIR.TAG` (honoured by borg, restic, tar).
package enum CacheDirectoryTag {
  package static let fileName = "CACHEDIR.TAG"
  package static let nameBytes = Array(fileName.utf8)
  /// The 43 bytes a valid tag starts with.
  package static let signature = "Signature: 8a477f597d28d172789f06886806bc55"

  package static func hasSignature(_ cName: UnsafePointer<CChar>, in directory: FileDescriptor) -> Bool {
    guard case .success(let descriptor) = Syscalls.open(cName: cName, in: directory, options: .readFile) else { return false }
    return descriptor.closeAfter {
      let head = (try? Syscalls.readUpTo(descriptor, 43, displayPath: "")) ?? []
      return head.elementsEqual(signature.utf8)
    }
  }
}
