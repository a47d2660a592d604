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

/// Reads an encrypted backup's password when one is needed, given the backup's path; throws
/// when there is none to be had (a `Refusal` with cause `.locked` lets a report of many list
/// the backup as locked). It may prompt: it is called on the caller's thread, before any
/// worker thread starts, and at most once per call of `audit`, `extract` or `restore`.
public typealias PasswordSource = @Sendable (String) throws(Refusal) -> SecretBuffer
