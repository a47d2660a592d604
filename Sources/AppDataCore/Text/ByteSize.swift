import AppDataSystem
/// Sizes as people write and read them.
public enum ByteSize {
  /// Parses `1048576`, `1.5G`, `10M`, `500kB`, `2GiB`, as coreutils does: `K M G T P E`
  /// and `KiB MiB ...` are powers of 1024, `kB MB GB ...` powers of 1000; a trailing `B`
  /// alone means bytes. Returns nil for anything else, negative values or overflow.
  public static func parse(_ text: String) -> UInt64? {
    let scalars = Array(text.unicodeScalars)
    var numberEnd = 0
    while numberEnd < scalars.count, scalars[numberEnd] == "." || ("0"..."9").contains(scalars[numberEnd]) {
      numberEnd += 1
    }
    let number = String(String.UnicodeScalarView(scalars[0..<numberEnd]))
    // One space may stand between the number and its unit, as people write sizes (5 MiB).
    var unitStart = numberEnd
    if unitStart < scalars.count - 1, scalars[unitStart] == " " { unitStart += 1 }
    let unit = String(String.UnicodeScalarView(scalars[unitStart...]))
    guard !number.isEmpty, let multiplier = multiplier(for: unit) else { return nil }

    let parts = number.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count <= 2, let whole = parts[0].isEmpty ? 0 : UInt64(parts[0]) else { return nil }
    if parts.count == 2 && parts[0].isEmpty && parts[1].isEmpty { return nil }
    let (scaled, overflow) = whole.multipliedReportingOverflow(by: multiplier)
    guard !overflow else { return nil }
    guard parts.count == 2, !parts[1].isEmpty else { return parts.count == 2 && multiplier == 1 && !parts[1].isEmpty ? nil : scaled }
    // The fraction, exactly: digits * multiplier / 10^digits, rounded down.
    let digits = parts[1].prefix(18)
    guard let fraction = UInt64(digits) else { return nil }
    var denominator: UInt64 = 1
    for _ in digits { denominator *= 10 }
    let product = fraction.multipliedFullWidth(by: multiplier)
    let (quotient, _) = denominator.dividingFullWidth(product)
    let (total, overflowTotal) = scaled.addingReportingOverflow(quotient)
    return overflowTotal ? nil : total
  }

  private static func multiplier(for unit: String) -> UInt64? {
    if unit.isEmpty || unit == "B" { return 1 }
    let binary = ["K", "M", "G", "T", "P", "E"]
    let decimal = ["kB", "MB", "GB", "TB", "PB", "EB"]
    let iec = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    if let index = binary.firstIndex(of: unit) ?? (unit == "k" ? 0 : nil) { return power(1024, index + 1) }
    if let index = decimal.firstIndex(of: unit) ?? (unit == "KB" ? 0 : nil) { return power(1000, index + 1) }
    if let index = iec.firstIndex(of: unit) { return power(1024, index + 1) }
    return nil
  }

  private static func power(_ base: UInt64, _ exponent: Int) -> UInt64 {
    (0..<exponent).reduce(1) { result, _ in result * base }
  }

  /// `381,717,522`: a count with its thousands separated by commas.
  public static func grouped(_ count: UInt64) -> String {
    let digits = Array(String(count))
    var output = ""
    for (index, digit) in digits.enumerated() {
      if index > 0 && (digits.count - index) % 3 == 0 { output.append(",") }
      output.append(digit)
    }
    return output
  }

  /// `364.0 MiB (381,717,522 bytes)`: the rounded size a person reads, and the exact count;
  /// below 1 KiB just the count (`512 bytes`).
  public static func described(_ bytes: UInt64) -> String {
    bytes < 1024 ? Plural.counted(bytes, "byte") : human(bytes) + " (" + grouped(bytes) + " bytes)"
  }

  /// `512 B`, `1.5 KiB`, `12.0 MiB`: 1024-based with one decimal, as `ls -h` reads.
  public static func human(_ bytes: UInt64) -> String {
    if bytes < 1024 { return "\(bytes) B" }
    let units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    var value = Double(bytes) / 1024
    var index = 0
    while value >= 1024 && index < units.count - 1 {
      value /= 1024
      index += 1
    }
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) \(units[index])"
  }

  /// A size as people write it in a policy file, never below `bytes`: `900 B`, `4 KiB`,
  /// `1.3 MiB` (one decimal below 10 units, rounded up), `12 MiB` (whole units from 10 up,
  /// rounded up). `parse` reads it back as at least `bytes`.
  public static func written(_ bytes: UInt64) -> String {
    if bytes < 1024 { return "\(bytes) B" }
    let units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    var unit: UInt64 = 1024
    var index = 0
    while index < units.count - 1 && bytes / unit >= 1024 {
      unit *= 1024
      index += 1
    }
    if bytes / unit >= 10 || bytes > UInt64.max / 10 {
      let whole = bytes / unit + (bytes % unit == 0 ? 0 : 1)
      return "\(whole) \(units[index])"
    }
    // Tenths of the unit, rounded up; parse rounds the fraction down, so check and step up.
    var tenths = bytes * 10 / unit + 1
    if bytes % unit == 0 { tenths = bytes / unit * 10 }
    while tenths > 0, (parse("\(tenths / 10).\(tenths % 10) \(units[index])") ?? 0) < bytes { tenths += 1 }
    let text = tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
    return text + " " + units[index]
  }
}
