/// Reads an encrypted backup's password when one is needed, given the backup's path; throws
/// when there is none to be had (a `Refusal` with cause `.locked` lets a report of many list
/// the backup as locked). It may prompt: it is called on the caller's thread, before any
/// worker thread starts, and at most once per call of `audit`, `extract` or `restore`.
public typealias PasswordSource = @Sendable (String) throws(Refusal) -> SecretBuffer
