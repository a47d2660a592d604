import AppDataSystem
/// A property list (binary `bplist00` or XML), read by appdata's own bounded reader: every plist
/// appdata reads comes from someone else (a backup's `Manifest.plist`, `Info.plist` and
/// `Status.plist`, a container's metadata plist, an `.xcappdata` package's `AppDataInfo.plist`, a
/// defaults plist before migrate rewrites it), on disk or in an archive.
///
/// Foundation's `PropertyListSerialization` is not used to read them: a binary plist may
/// reference one object from many places, and Foundation builds a copy per reference, so a
/// 203-byte file whose 40 arrays each name the next twice asks for 2^40 objects. Here every
/// object built counts against `Limits.maximumObjects`, every string and data byte against
/// `Limits.maximumBytes`, and nesting (references followed, or XML elements opened) stops at
/// `Limits.maximumDepth`, so memory and time are bounded by the limits whatever the file says.
package enum PropertyList: Equatable, Sendable {
  case string(String)
  /// Every integer a plist holds, exactly: CoreFoundation and plistlib read 2^63 to 2^64 - 1
  /// (written as 16-byte integers in binary plists) as well as the 64-bit signed range.
  case integer(Int128)
  case real(Double)
  case bool(Bool)
  /// Seconds since 2001-01-01 00:00:00 UTC, as plists store dates.
  case date(Double)
  case data([UInt8])
  case array([PropertyList])
  /// Keys are told apart by their bytes (`PlistKey`), as CoreFoundation and plistlib keep them:
  /// `café` in NFC and in NFD are two keys.
  case dictionary([PlistKey: PropertyList])
  /// An NSKeyedArchiver object reference (binary plists only).
  case uid(UInt64)

  /// What one plist may cost. Real ones are far below: a `Manifest.plist` naming 300 apps with
  /// their icons is a few MB and some 10,000 objects.
  package enum Limits {
    /// The largest plist file appdata reads (a backup's plists with many apps reach several MB).
    package static let maximumFileSize = 64 << 20
    /// Values built from one plist, counting every reference followed.
    package static let maximumObjects = 250_000
    /// String and data bytes built from one plist, counting every reference followed.
    package static let maximumBytes = 256 << 20
    /// Arrays and dictionaries inside each other.
    package static let maximumDepth = 512
  }

  /// Why a plist could not be read, in words for a one-line message.
  package struct Malformed: Error, Equatable, Sendable {
    package var reason: String
  }

  /// Reads a binary (`bplist00`) or XML plist.
  package static func parse(_ bytes: [UInt8]) throws(Malformed) -> PropertyList {
    if bytes.starts(with: Array("bplist".utf8)) {
      guard bytes.starts(with: Array("bplist00".utf8)) else {
        throw Malformed(reason: "a binary plist of a version other than bplist00")
      }
      let result = bytes.withUnsafeBytes { raw -> Result<PropertyList, Malformed> in
        guard let plist = BinaryPropertyList(raw) else { return .failure(Malformed(reason: "a damaged binary plist (its trailer or offset table is out of range)")) }
        var budget = Budget()
        do throws(Malformed) {
          return .success(try budget.build(plist, index: plist.top, depth: 0))
        } catch {
          return .failure(error)
        }
      }
      return try result.get()
    }
    return try XMLPropertyList.parse(bytes)
  }

  /// What has been built so far from one plist.
  package struct Budget {
    package var objects = 0
    package var bytes = 0

    package mutating func spend(objects count: Int = 1, bytes size: Int = 0) throws(Malformed) {
      objects += count
      bytes += size
      if objects > Limits.maximumObjects {
        throw Malformed(reason: "expands to more than \(Limits.maximumObjects) objects (objects referenced many times?)")
      }
      if bytes > Limits.maximumBytes {
        throw Malformed(reason: "expands to more than \(Limits.maximumBytes >> 20) MiB of strings and data (objects referenced many times?)")
      }
    }

    /// The value of object `index`; recursion is bounded by `Limits.maximumDepth`.
    package mutating func build(_ plist: BinaryPropertyList, index: Int, depth: Int) throws(Malformed) -> PropertyList {
      guard depth < Limits.maximumDepth else {
        throw Malformed(reason: "nested more than \(Limits.maximumDepth) levels deep (a reference cycle?)")
      }
      guard let object = plist.object(index) else { throw Malformed(reason: "object \(index) is out of range") }
      try spend()
      let width = plist.referenceWidth
      switch object {
      case .integer(let value): return .integer(Int128(value))
      case .wideInteger(let value): return .integer(value)
      case .unrepresentableInteger(let size):
        let width = size == .max ? "more than 1024" : String(size)
        throw Malformed(reason: "an integer of \(width) bytes, wider than the 16 bytes a plist integer may take")
      case .uid(let value): return .uid(value)
      case .bool(let value): return .bool(value)
      case .real(let value): return .real(value)
      case .date(let value): return .date(value)
      case .data(let range):
        try spend(objects: 0, bytes: range.count)
        return .data(Array(plist.bytes[range]))
      case .string(let range, let unit):
        try spend(objects: 0, bytes: range.count)
        guard let text = Self.text(plist.bytes[range], bytesPerCharacter: unit) else {
          throw Malformed(reason: unit == 1 ? "an ASCII string holding a byte past 127" : "a UTF-16 string holding an unpaired surrogate")
        }
        return .string(text)
      case .array(let references, let count):
        var items: [PropertyList] = []
        items.reserveCapacity(min(count, 4096))
        for slot in 0..<count {
          items.append(try build(plist, index: plist.reference(at: references + slot * width), depth: depth + 1))
        }
        return .array(items)
      case .dictionary(let references, let count):
        var members: [PlistKey: PropertyList] = [:]
        for slot in 0..<count {
          guard case .string(let key) = try build(plist, index: plist.reference(at: references + slot * width), depth: depth + 1) else {
            throw Malformed(reason: "a dictionary key that is not a string")
          }
          members[PlistKey(key)] = try build(plist, index: plist.reference(at: references + (count + slot) * width), depth: depth + 1)
        }
        return .dictionary(members)
      case .other:
        throw Malformed(reason: "an object of a kind appdata does not read (a set, or an unknown marker)")
      }
    }

    /// ASCII or UTF-16 big-endian text; nil for a byte past 127 in ASCII or an unpaired
    /// surrogate in UTF-16, which plistlib refuses too: never read as U+FFFD.
    package static func text(_ bytes: Slice<UnsafeRawBufferPointer>, bytesPerCharacter unit: Int) -> String? {
      if unit == 1 {
        // Over the raw buffer, not the slice: a generic iterator per byte in a debug build.
        let raw = UnsafeRawBufferPointer(rebasing: bytes)
        var index = 0
        while index < raw.count {
          if raw[index] >= 0x80 { return nil }
          index += 1
        }
        return String(decoding: raw, as: UTF8.self)
      }
      var units: [UInt16] = []
      units.reserveCapacity(bytes.count / 2)
      var index = bytes.startIndex
      while index + 1 < bytes.endIndex {
        units.append(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]))
        index += 2
      }
      return String(validating: units, as: UTF16.self)
    }
  }

  // MARK: - Reading values

  /// A dictionary member, or nil (also when this is not a dictionary).
  package subscript(key: String) -> PropertyList? {
    if case .dictionary(let members) = self { return members[PlistKey(key)] }
    return nil
  }

  package var dictionaryValue: [PlistKey: PropertyList]? {
    if case .dictionary(let members) = self { return members }
    return nil
  }

  package var stringValue: String? {
    if case .string(let text) = self { return text }
    return nil
  }

  /// The integer when it fits 64 bits signed; nil for other values and for larger integers.
  package var integerValue: Int64? {
    if case .integer(let value) = self { return Int64(exactly: value) }
    return nil
  }

  package var boolValue: Bool? {
    if case .bool(let value) = self { return value }
    return nil
  }

  package var dataValue: [UInt8]? {
    if case .data(let bytes) = self { return bytes }
    return nil
  }

  /// A date as ISO 8601 in UTC to the second (`2024-05-01T09:30:00Z`); nil for other values and
  /// for dates outside the years 1 to 9999.
  package var dateText: String? {
    guard case .date(let seconds) = self, seconds.isFinite else { return nil }
    return PlistDate.text(secondsSince2001: seconds)
  }
}

/// Dates as plists store them (seconds since 2001-01-01 UTC) and write them in XML
/// (`2024-05-01T09:30:00Z`), converted by the proleptic Gregorian calendar without Foundation.
package enum PlistDate {
  /// 2001-01-01 as days since 1970-01-01.
  package static let referenceDay: Int64 = 11_323
  /// Years 1 to 9999: what the ISO form can write with four digits.
  package static let firstDay: Int64 = -719_162
  package static let lastDay: Int64 = 2_932_896

  package static func text(secondsSince2001 seconds: Double) -> String? {
    let whole = seconds.rounded(.down)
    guard whole.isFinite, abs(whole) < 1e15 else { return nil }
    let total = Int64(whole)
    let days = total.dividedRoundingDown(by: 86_400) + referenceDay
    guard (firstDay...lastDay).contains(days) else { return nil }
    let secondOfDay = total - (days - referenceDay) * 86_400
    let (year, month, day) = civil(fromDays: days)
    func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
    let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
    return "\(yearText)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))Z"
  }

  /// `YYYY-MM-DDTHH:MM:SSZ` (what XML plists hold) as seconds since 2001, or nil.
  package static func seconds(fromText text: [UInt8]) -> Double? {
    guard text.count == 20, text[4] == 0x2D, text[7] == 0x2D, text[10] == 0x54, text[13] == 0x3A, text[16] == 0x3A, text[19] == 0x5A
    else { return nil }
    func number(_ range: Range<Int>) -> Int64? {
      var value: Int64 = 0
      for byte in text[range] {
        guard (0x30...0x39).contains(byte) else { return nil }
        value = value * 10 + Int64(byte - 0x30)
      }
      return value
    }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
          let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
          (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
    let days = days(fromCivil: year, month, day)
    return Double((days - referenceDay) * 86_400 + hour * 3600 + minute * 60 + second)
  }

  /// Howard Hinnant's `days_from_civil`.
  package static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = y.dividedRoundingDown(by: 400)
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  /// Howard Hinnant's `civil_from_days`.
  package static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
    let z = days + 719_468
    let era = z.dividedRoundingDown(by: 146_097)
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }
}

extension Int64 {
  /// Division rounding towards negative infinity.
  package func dividedRoundingDown(by divisor: Int64) -> Int64 {
    let quotient = self / divisor
    return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
  }
}

/// A plist dictionary's key: equal and hashed by its UTF-8 bytes, never by Unicode canonical
/// equivalence as `String` is, so two keys that differ only in composition stay two.
package struct PlistKey: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
  package let string: String

  package init(_ string: String) { self.string = string }
  package init(stringLiteral value: String) { self.string = value }

  package var description: String { string }

  package static func == (left: PlistKey, right: PlistKey) -> Bool { StringBytes.equal(left.string, right.string) }

  package func hash(into hasher: inout Hasher) { StringBytes.hash(string, into: &hasher) }
}

extension Dictionary where Key == PlistKey {
  /// The member named `name` (by its bytes).
  package subscript(name: String) -> Value? { self[PlistKey(name)] }
}
