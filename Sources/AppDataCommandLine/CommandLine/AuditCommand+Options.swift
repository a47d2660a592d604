import AppDataSystem
import AppDataKit

/// `appdata audit`'s options, read into the library's types: what overrides the policy, the
/// bounds on what is read, and the files named (read when the command runs).
extension AuditCommand {
  /// `--config` (or `./appdata.json` when it exists, unless `--no-config`) and `--baseline`.
  static func namedFiles(_ parsed: ParsedArguments) throws(UsageError) -> AuditConfiguration.NamedFiles {
    var files = AuditConfiguration.NamedFiles()
    if !parsed.flag(.noConfig) {
      if let file = parsed.value(.config) {
        files.policyFile = file
      } else if (try? Syscalls.status(ofPath: AuditPolicy.defaultFileName)) != nil {
        files.policyFile = AuditPolicy.defaultFileName
      }
    }
    files.baseline = parsed.value(.baseline)
    return files
  }

  /// The Android options (read after the others, as their usage errors always were).
  static func androidOptions(_ parsed: ParsedArguments) throws(UsageError) -> AuditConfiguration.AndroidOptions {
    var files = AuditConfiguration.NamedFiles()
    files.android.project = parsed.value(.androidProject)
    files.android.manifest = parsed.value(.androidManifest)
    files.android.rules = parsed.allValues(.androidRules)
    files.android.package = parsed.value(.androidPackage)
    files.android.targetSdk = try parsed.integer(.targetSdk, minimum: 1, maximum: 1000)
    files.android.deviceAPI = try parsed.integer(.deviceApi, minimum: 1, maximum: 1000)
    files.android.notEncrypted = parsed.flag(.noEndToEndEncryption)
    files.android.deviceData = parsed.value(.androidDeviceData)
    files.android.external = parsed.value(.androidExternal)
    return files.android
  }

  /// What overrides the policy: limits, `--warn-at`, `--ignore`, growth, `--top`, `--jobs`, `--list`.
  static func overrides(_ parsed: ParsedArguments, hasBaseline: Bool) throws(UsageError) -> AuditConfiguration.Overrides {
    var options = AuditConfiguration.Overrides()
    options.maxFileSize = try parsed.size(.maxFileSize)
    options.maxBackupSize = try parsed.size(.maxBackupSize)
    if let text = parsed.value(.warnAt) {
      guard let fraction = Double(text), fraction > 0, fraction < 1 else {
        throw UsageError("invalid value '\(TerminalText.escaped(text))' for '--warn-at': expected a fraction between 0 and 1, such as 0.9")
      }
      options.warnAt = fraction
    }
    if parsed.contains(.ignore) {
      var globs: [Glob] = []
      for pattern in parsed.allValues(.ignore) {
        do { globs.append(try Glob(pattern)) } catch {
          throw UsageError("invalid glob '\(TerminalText.abbreviated(pattern))' for '--ignore': \(error.message)")
        }
      }
      options.ignore = globs
    }
    options.maxGrowth = try parsed.size(.maxGrowth)
    if let text = parsed.value(.maxGrowthPercent) {
      guard let percent = Double(text), percent >= 0, percent.isFinite else {
        throw UsageError("invalid value '\(TerminalText.escaped(text))' for '--max-growth-percent': expected a number of percent, such as 10")
      }
      options.maxGrowthPercent = percent
    }
    if (options.maxGrowth != nil || options.maxGrowthPercent != nil) && !hasBaseline {
      throw UsageError("'--max-growth' and '--max-growth-percent' need '--baseline FILE' to compare with")
    }
    options.top = try parsed.integer(.top) ?? 10
    options.jobs = try parsed.integer(.jobs, minimum: 1, maximum: 256) ?? AuditOptions.defaultJobs
    options.jobsAreFixed = parsed.allValues(.jobs).count > 0
    for value in parsed.allValues(.list) {
      for name in value.split(separator: ",") {
        if name == "all" { options.listedCategories.formUnion(Category.allCases) }
        else if let category = Category(rawValue: String(name)) { options.listedCategories.insert(category) }
      }
    }
    return options
  }

  /// The bounds on what is read.
  static func limits(_ parsed: ParsedArguments) throws(UsageError) -> AuditConfiguration.Limits {
    var limits = AuditConfiguration.Limits()
    limits.maximumArchiveBytes = try parsed.size(.maxArchiveBytes)
    limits.maximumManifestBytes = try parsed.size(.maxManifestBytes)
    limits.maximumNameBytes = try parsed.size(.maxNameBytes)
    limits.maximumBackups = try parsed.integer(.maxBackups, minimum: 1)
    limits.maximumKeyRounds = try parsed.integer(.maxKeyRounds, minimum: 1).map { UInt64($0) } ?? BackupKeybag.defaultMaximumRounds
    return limits
  }
}
