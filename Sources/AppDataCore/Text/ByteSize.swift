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
    let unit = String(String.UnicodeScalarView(scalars[numberEnd...]))
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
}
