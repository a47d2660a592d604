import AppDataSystem
import AppDataKit
/// A command line that cannot run. `argumentIndex` points at the offending argv element.
public struct UsageError: Error, Equatable, Sendable {
  public var message: String
  public var argumentIndex: Int?

  public init(_ message: String, argumentIndex: Int? = nil) {
    self.message = message
    self.argumentIndex = argumentIndex
  }
}
