import AppDataSystem
import AppDataKit
/// A command line that cannot run. `argumentIndex` points at the offending argv element.
package struct UsageError: Error, Equatable, Sendable {
  package var message: String
  package var argumentIndex: Int?

  package init(_ message: String, argumentIndex: Int? = nil) {
    self.message = message
    self.argumentIndex = argumentIndex
  }
}
