import AppDataSystem
import AppDataCore

/// The one device backup a command reads (extract's BACKUP, restore's SOURCE): PATH is one, or
/// holds several of which `root` names one. Each command words its refusals with the lines here.
package enum OneDeviceBackup {
  package enum Problem: Error {
    /// PATH could not be read (the refusal says why and where).
    case input(Refusal)
    /// PATH is not a device backup and holds none.
    case none
    /// PATH holds several and `root` names none of them: their names.
    case several([String])
  }

  package static func at(_ path: String, root: [[UInt8]]?, maximumNameBytes: UInt64) throws(Problem) -> BackupSource {
    let backups: [BackupSource]
    do {
      var limits = InputLimits()
      limits.maximumNameBytes = maximumNameBytes
      backups = try InputResolver.deviceBackups(in: InputResolver.resolve(path, root: root, limits: limits))
    } catch {
      throw .input(error)
    }
    guard backups.count == 1 else { throw backups.isEmpty ? .none : .several(backups.map(\.name)) }
    return backups[0]
  }

  /// `PATH: not a device backup (…); ` and what the command reads (`hint`).
  package static func notABackup(_ path: String, _ hint: String) -> Refusal {
    Refusal(.notAnInput, path: path,
            message: "\(TerminalText.escaped(path)): not a device backup (no Manifest.db beside Manifest.plist, Info.plist or Status.plist); \(hint)")
  }

  /// `PATH: holds N backups; name the one to VERB with --root (…)`.
  package static func several(_ path: String, names: [String], toWhat verb: String) -> Refusal {
    Refusal(.notMatched, path: path,
            message: "\(TerminalText.escaped(path)): holds \(Plural.counted(names.count, "backup")); name the one to \(verb) with --root (\(Plural.listed(names.map(TerminalText.escaped), limit: 10)))")
  }
}

extension BackupSource {
  /// The password an encrypted backup needs, from `password` (asked once, given the backup's
  /// path); nil when the backup is not encrypted. A `Refusal` when there is no source, or the
  /// source's own.
  package func secret(from password: PasswordSource?) throws(Refusal) -> SecretBuffer? {
    guard needsPassword else { return nil }
    guard let password else { throw BackupReader.noPassword(source) }
    return try password(source)
  }
}
