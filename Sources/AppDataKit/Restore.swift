import AppDataCore
import AppDataReaders

/// Restores app `app` (with `options.withExtensions`, its groups and plugins installed on the
/// device) from `source` (a device backup, an `.xcappdata` package or a container folder) into
/// its container on the shut-down Simulator device `simulator` (the device's folder, or its
/// UDID under `options.devicesFolder`), as `appdata restore` does (Docs/restore.md): each new
/// tree is made beside its container and exchanged with it in one step; the previous contents
/// are kept for `undoRestore`.
///
/// - `password` is asked only when the backup is encrypted; it may prompt.
/// - `options.isInterrupted` stops the run between files; what was not exchanged is left as it was.
public func restore(source: String, simulator: String, app: String, options: RestoreOptions = RestoreOptions(),
                    password: PasswordSource? = nil) throws(RestoreFailure) -> RestoreReport {
  try Restore.run(source: source, simulator: simulator, app: app, options: options, password: password)
}

/// Puts back the previous contents the last `restore` kept of `app`'s container (with
/// `options.withExtensions`, of its groups' and plugins' too), in one exchange each, as
/// `appdata restore --undo` does; the restored tree is then removed.
public func undoRestore(simulator: String, app: String, options: RestoreOptions = RestoreOptions()) throws(RestoreFailure) -> RestoreReport {
  try Restore.undo(simulator: simulator, app: app, options: options)
}
