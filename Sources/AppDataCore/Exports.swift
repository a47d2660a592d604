import AppDataSystem

/// What a user of the AppDataKit product needs from AppDataSystem, which the product does not
/// list (its syscall wrappers are not the library's interface): the buffer every
/// `PasswordSource` returns. The same type, so `import AppDataCore` is enough to make one
/// (`SecretBuffer(copying:)`, Docs/library.md "Passwords").
public typealias SecretBuffer = AppDataSystem.SecretBuffer

/// A failed system call, as a `MigrationError` carries it (`errno`, the call, the path), and its
/// errno, matched by name (`case .noSpace`): the same types, for `import AppDataKit` alone.
public typealias SystemError = AppDataSystem.SystemError
public typealias Errno = AppDataSystem.Errno
