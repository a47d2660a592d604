import AppDataSystem

/// What a user of the AppDataKit product needs from AppDataSystem, which the product does not
/// list (its syscall wrappers are not the library's interface): the buffer every
/// `PasswordSource` returns. The same type, so `import AppDataCore` is enough to make one
/// (`SecretBuffer(copying:)`, Docs/library.md "Passwords").
public typealias SecretBuffer = AppDataSystem.SecretBuffer
