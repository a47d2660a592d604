import AppDataCore
import AppDataReaders
import AppDataMigration

extension AndroidRulesMigration {
  /// `appdata migrate --android-rules FILE [PATH]`'s job: reads the legacy rules FILE (at most
  /// 4 MiB) and, when given, the app's data folder at `data` (whose files the check counts),
  /// converts FILE to `<data-extraction-rules>` and checks what Android 12 would carry with them
  /// against what Android 11 carries with FILE. Writes nothing: `write(_:to:)` writes the
  /// outcome's `xml`, which a caller does only when `differences` is empty.
  public static func convert(file: String, data: String?, maximumNameBytes: UInt64? = nil) throws(Refusal) -> Outcome {
    let bytes: [UInt8]
    do { bytes = try FileReading.read(path: file, limit: 4 << 20) } catch {
      throw Refusal(.unreadable, path: file, message: "\(TerminalText.escaped(file)): \(error.message)")
    }
    let tree = try data.map { path throws(Refusal) in
      try AndroidData.tree(atPath: path, maximumNameBytes: maximumNameBytes ?? NameBudget.defaultMaximum)
    }
    do throws(Failure) {
      return try convert(bytes, name: TerminalText.escaped(file), data: tree)
    } catch {
      throw Refusal(.damaged, path: file, message: error.message)
    }
  }
}
