import AppDataSystem
import AppDataCore
import CZlib

/// What a backup Android really made holds for an app: the entries of its tar stream
/// (`apps/PKG/TOKEN/PATH`), read from an `adb backup` file (`.ab`: a text header, then the
/// tar, zlib-compressed or not) or from the stream LocalTransport keeps for the package (the
/// tar alone). Streamed: nothing is written out, only headers are kept, and the stream's size
/// (`maximumBytes`) and the bytes of the paths kept (`NameBudget`, `--max-name-bytes`) are
/// bounded. An encrypted `.ab` (AES-256) is decrypted as it streams, with
/// the key derived as AOSP's backup service derives it (`BackupDecryption.androidPayload`).
struct AndroidBackupStream {
  /// One entry: its domain token (`r`, `f`, `db`, `sp`, `ef`, `d_r`, ...), its path in the
  /// domain, and its size.
  struct Entry: Equatable {
    var token: String
    var path: [UInt8]
    var size: UInt64
    var isDirectory: Bool
  }

  struct Failure: Error {
    var message: String
  }

  /// The most an `.ab`'s tar may expand to: beyond it the file is refused. A zlib bomb is
  /// refused sooner: past 256 MiB, a stream that expands more than 200 times its compressed
  /// size (deflate reaches about 1,000 on zeros; an app's data, databases included, far less).
  static let maximumBytes: UInt64 = 8 << 30
  static let bombFloor: UInt64 = 256 << 20
  static let bombRatio: UInt64 = 200
  /// The most entries read, and the largest pax record block and name.
  static let maximumEntries = 10_000_000
  static let maximumPaxBytes = 1 << 20

  /// The entries of the backup at `path`. An encrypted `.ab` needs `password`, and may ask
  /// for at most `maximumRounds` key-derivation rounds; the paths kept are at most
  /// `maximumNameBytes` together (`--max-name-bytes`).
  static func entries(atPath path: String, password: SecretBuffer? = nil, maximumRounds: UInt64 = BackupKeybag.defaultMaximumRounds,
                      maximumNameBytes: UInt64 = NameBudget.defaultMaximum) throws(Failure) -> [Entry] {
    let file: OwnedDescriptor
    do { file = OwnedDescriptor(owning: try Syscalls.openFile(atPath: path)) } catch { throw Failure(message: "cannot \(error.action): \(error.reason)") }
    var source = ByteSource(file: file.descriptor)
    return try entries(from: &source, password: password, maximumRounds: maximumRounds, maximumNameBytes: maximumNameBytes)
  }

  /// The entries of a backup held in memory (the fuzz target's way in).
  static func entries(bytes: [UInt8], password: SecretBuffer? = nil, maximumRounds: UInt64 = BackupKeybag.defaultMaximumRounds,
                      maximumNameBytes: UInt64 = NameBudget.defaultMaximum) throws(Failure) -> [Entry] {
    var source = ByteSource(bytes: bytes)
    return try entries(from: &source, password: password, maximumRounds: maximumRounds, maximumNameBytes: maximumNameBytes)
  }

  static func entries(from source: inout ByteSource, password: SecretBuffer?, maximumRounds: UInt64,
                      maximumNameBytes: UInt64) throws(Failure) -> [Entry] {
    let header = try self.header(&source, password: password, maximumRounds: maximumRounds)
    var pipeline = try Pipeline(compressed: header.compressed, names: NameBudget(maximum: maximumNameBytes))
    defer {
      pipeline.end()
      WorkCounters.addDecompressed(header.compressed ? pipeline.tar.total : 0)
      WorkCounters.addEntries(pipeline.tar.headers)
    }
    var decryptor = header.decryptor
    defer { decryptor?.wipe() }
    var buffer = [UInt8](repeating: 0, count: 256 << 10)
    var carry: [UInt8] = []
    while true {
      let count = try source.read(into: &buffer)
      if count == 0 { break }
      guard var aes = decryptor else {
        try pipeline.feed(buffer[0..<count])
        continue
      }
      // AES works on whole 16-byte blocks: what is left over waits for the next read.
      carry += buffer[0..<count]
      let whole = carry.count / 16 * 16
      var decrypted: [UInt8] = []
      var damaged = false
      carry.withUnsafeBytes { raw in
        do throws(BackupDecryption.Failure) {
          try aes.update(UnsafeRawBufferPointer(rebasing: raw[0..<whole])) { decrypted += $0 }
        } catch {
          damaged = true
        }
      }
      if damaged { throw Failure(message: "its encrypted stream is damaged") }
      carry.removeFirst(whole)
      decryptor = aes
      try pipeline.feed(decrypted[...])
      for index in decrypted.indices { decrypted[index] = 0 }
    }
    if var aes = decryptor {
      guard carry.isEmpty else { throw Failure(message: "its encrypted stream is not whole AES blocks (a truncated file)") }
      var decrypted: [UInt8] = []
      do { try aes.finish { decrypted += $0 } } catch { throw Failure(message: "its encrypted stream ends badly (a truncated file)") }
      decryptor = aes
      try pipeline.feed(decrypted[...])
    }
    if header.compressed && !pipeline.ended { throw Failure(message: "the compressed stream ends before its end (a truncated file)") }
    guard pipeline.tar.sawEnd || pipeline.tar.isBetweenEntries else { throw Failure(message: "the tar stream ends inside an entry (a truncated file)") }
    return pipeline.tar.entries
  }

  /// What the file holds once decrypted: inflated when compressed, then read as a tar, within
  /// the bounds.
  struct Pipeline {
    var tar: TarReader
    var inflater: Inflater?
    var output = [UInt8](repeating: 0, count: 256 << 10)
    var compressedBytes: UInt64 = 0
    var ended = false

    init(compressed: Bool, names: NameBudget = NameBudget()) throws(Failure) {
      tar = TarReader(names: names)
      inflater = compressed ? try Inflater() : nil
    }

    func end() { inflater?.end() }

    mutating func feed(_ bytes: ArraySlice<UInt8>) throws(Failure) {
      guard var zlib = inflater else {
        try tar.feed(bytes)
        if tar.total > AndroidBackupStream.maximumBytes {
          throw Failure(message: "larger than \(ByteSize.human(AndroidBackupStream.maximumBytes)), more than appdata reads")
        }
        return
      }
      defer { inflater = zlib }
      compressedBytes += UInt64(bytes.count)
      var offset = bytes.startIndex
      while !ended && (offset < bytes.endIndex || zlib.hasPendingOutput) {
        let (used, produced, streamEnded) = try zlib.inflate(bytes[offset...], into: &output)
        offset += used
        if produced > 0 { try tar.feed(output[0..<produced]) }
        if tar.total > AndroidBackupStream.maximumBytes {
          throw Failure(message: "expands beyond \(ByteSize.human(AndroidBackupStream.maximumBytes)), more than appdata reads")
        }
        if tar.total > AndroidBackupStream.bombFloor && tar.total > compressedBytes * AndroidBackupStream.bombRatio {
          throw Failure(message: "expands more than \(AndroidBackupStream.bombRatio) times its compressed size (\(ByteSize.human(tar.total)) from \(ByteSize.human(compressedBytes))): a zlib bomb, not an app's backup")
        }
        if streamEnded { ended = true }
        if used == 0 && produced == 0 { break }
      }
    }
  }

  /// What an .ab's text header says (LocalTransport's stream has none: a plain tar).
  struct Header {
    var compressed = false
    var decryptor: BackupDecryption.PayloadDecryptor?
  }

  /// Whether the file at `path` is an encrypted adb backup, which needs a password.
  static func isEncrypted(atPath path: String) -> Bool {
    guard let opened = try? Syscalls.openFile(atPath: path) else { return false }
    let file = OwnedDescriptor(owning: opened)
    var source = ByteSource(file: file.descriptor)
    guard (try? source.peek(15)) == Array("ANDROID BACKUP\n".utf8) else { return false }
    return (try? (source.line(), source.line(), source.line(), source.line()).3) == "AES-256"
  }

  static func header(_ source: inout ByteSource, password: SecretBuffer?, maximumRounds: UInt64) throws(Failure) -> Header {
    var header = Header()
    guard try source.peek(15) == Array("ANDROID BACKUP\n".utf8) else { return header }
    _ = try source.line()
    guard let version = Int(try source.line()), (1...5).contains(version) else { throw Failure(message: "an adb backup of a version appdata does not know (1 to 5)") }
    let flag = try source.line()
    guard flag == "0" || flag == "1" else { throw Failure(message: "an adb backup whose compression flag is neither 0 nor 1") }
    header.compressed = flag == "1"
    let encryption = try source.line()
    if encryption == "none" { return header }
    guard encryption == "AES-256" else { throw Failure(message: "an adb backup with an unknown encryption '\(TerminalText.escaped(encryption))'") }
    guard version >= 2 else { throw Failure(message: "an encrypted adb backup of version 1, whose key derivation appdata does not read") }
    func hex(_ what: String) throws(Failure) -> [UInt8] {
      let text = Array(try source.line().utf8)
      guard text.count % 2 == 0, text.count <= 1024 else { throw Failure(message: "its \(what) is not hexadecimal") }
      var bytes: [UInt8] = []
      var index = 0
      while index < text.count {
        guard let high = Self.hexDigit(text[index]), let low = Self.hexDigit(text[index + 1]) else { throw Failure(message: "its \(what) is not hexadecimal") }
        bytes.append(high << 4 | low)
        index += 2
      }
      return bytes
    }
    let userSalt = try hex("user salt")
    let checksumSalt = try hex("checksum salt")
    let roundsText = try source.line()
    guard let rounds = UInt64(roundsText), rounds > 0 else { throw Failure(message: "its key-derivation rounds '\(TerminalText.escaped(roundsText))' are not a number") }
    // A password costs two derivations of that many rounds (the user key, then the master
    // key's checksum), both counted, as a keybag's DPIC and ITER are: at the default bound a
    // file may ask for 50,000,000, which a wrong password takes about 9.5 s of one CPU to be
    // refused after (one derivation; swift-crypto's PBKDF2-HMAC-SHA1 round costs about 1.8
    // times a keybag's SHA-256 one here), and the right one about 19 s. At 100,000,000 it was
    // 19.5 s and 38 s (Docs/SECURITY.md, issue 48).
    let (total, overflow) = rounds.multipliedReportingOverflow(by: 2)
    guard !overflow, total <= maximumRounds else {
      throw Failure(message: "it asks for \(overflow ? "more than \(UInt64.max)" : String(total)) key-derivation rounds (\(rounds) for the user key, \(rounds) for its checksum), more than the \(maximumRounds) appdata allows (--max-key-rounds)")
    }
    let userIV = try hex("user IV")
    let blob = try hex("master key blob")
    guard let password else {
      throw Failure(message: "an encrypted adb backup; give its password (--password-file, --password-stdin or APPDATA_BACKUP_PASSWORD)")
    }
    do {
      header.decryptor = try BackupDecryption.androidPayload(password: password, userSalt: userSalt, checksumSalt: checksumSalt, rounds: Int(rounds),
                                                            userIV: userIV, blob: blob)
    } catch {
      if case .wrongPassword = error { throw Failure(message: "the password is not this adb backup's") }
      throw Failure(message: "its key is damaged")
    }
    return header
  }

  static func hexDigit(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 0x30...0x39: byte - 0x30
    case 0x41...0x46: byte - 0x41 + 10
    case 0x61...0x66: byte - 0x61 + 10
    default: nil
    }
  }

  /// The file, read in chunks, with the few header lines an .ab starts with.
  struct ByteSource {
    /// Nil when the bytes are all in `pending` from the start.
    let file: FileDescriptor?
    var pending: [UInt8] = []

    init(file: FileDescriptor) { self.file = file }
    init(bytes: [UInt8]) {
      file = nil
      pending = bytes
    }

    /// read(2) into `buffer`, a failure in words.
    func readFile(into buffer: inout [UInt8]) throws(Failure) -> Int {
      guard let file else { return 0 }
      var result: Result<Int, SystemError> = .success(0)
      buffer.withUnsafeMutableBytes { raw in
        do throws(SystemError) { result = .success(try Syscalls.read(file, into: raw, displayPath: "")) } catch { result = .failure(error) }
      }
      switch result {
      case .success(let read): return read
      case .failure(let error): throw Failure(message: "cannot read: \(error.reason)")
      }
    }

    mutating func fill(_ count: Int) throws(Failure) {
      var chunk = [UInt8](repeating: 0, count: 4096)
      while pending.count < count {
        let read = try readFile(into: &chunk)
        if read == 0 { return }
        pending += chunk[0..<read]
      }
    }

    mutating func peek(_ count: Int) throws(Failure) -> [UInt8] {
      try fill(count)
      return Array(pending.prefix(count))
    }

    /// A header line, without its newline (at most 1 KiB: the master key blob is ~300 hex digits).
    mutating func line() throws(Failure) -> String {
      try fill(1024)
      guard let end = pending.prefix(1024).firstIndex(of: 0x0A) else { throw Failure(message: "an adb backup header line longer than 1 KiB, or without its end") }
      let text = String(decoding: pending[..<end], as: UTF8.self)
      pending.removeFirst(end + 1)
      return text
    }

    mutating func read(into buffer: inout [UInt8]) throws(Failure) -> Int {
      if !pending.isEmpty {
        let count = min(pending.count, buffer.count)
        buffer.replaceSubrange(0..<count, with: pending[0..<count])
        pending.removeFirst(count)
        return count
      }
      return try readFile(into: &buffer)
    }
  }

  /// zlib's inflate over the loaded library (`CZlib`).
  struct Inflater {
    private static let functions: Result<appdata_zlib, SharedLibrary.LoadFailure> = SharedLibrary.table(libraryNames, bind: appdata_zlib_bind)
    #if os(macOS) || DARWIN_CHECK
    static let libraryNames = ["/usr/lib/libz.1.dylib"]
    #else
    static let libraryNames = ["libz.so.1", "libz.so"]
    #endif
    private let z: appdata_zlib
    private let stream: UnsafeMutablePointer<appdata_z_stream>
    /// Whether the last call filled the output: more may be waiting inside zlib.
    private(set) var hasPendingOutput = false

    init() throws(Failure) {
      switch Self.functions {
      case .success(let table): z = table
      case .failure(let failure): throw Failure(message: "cannot load zlib (\(failure.reason))")
      }
      stream = .allocate(capacity: 1)
      stream.initialize(to: appdata_z_stream(next_in: nil, avail_in: 0, total_in: 0, next_out: nil, avail_out: 0, total_out: 0, msg: nil,
                                             state: nil, zalloc: nil, zfree: nil, opaque: nil, data_type: 0, adler: 0, reserved: 0))
      guard z.inflateInit_(stream, z.zlibVersion(), Int32(MemoryLayout<appdata_z_stream>.size)) == APPDATA_Z_OK else {
        stream.deallocate()
        throw Failure(message: "zlib would not start")
      }
    }

    func end() {
      _ = z.inflateEnd(stream)
      stream.deallocate()
    }

    /// Inflates from `input` into `output`: the bytes used, the bytes made, and whether the
    /// stream ended.
    mutating func inflate(_ input: ArraySlice<UInt8>, into output: inout [UInt8]) throws(Failure) -> (Int, Int, Bool) {
      var result: Int32 = 0
      var used = 0
      var produced = 0
      input.withUnsafeBufferPointer { inputBuffer in
        output.withUnsafeMutableBufferPointer { outputBuffer in
          stream.pointee.next_in = inputBuffer.baseAddress
          stream.pointee.avail_in = UInt32(inputBuffer.count)
          stream.pointee.next_out = outputBuffer.baseAddress
          stream.pointee.avail_out = UInt32(outputBuffer.count)
          result = z.inflate(stream, APPDATA_Z_NO_FLUSH)
          used = inputBuffer.count - Int(stream.pointee.avail_in)
          produced = outputBuffer.count - Int(stream.pointee.avail_out)
        }
      }
      hasPendingOutput = produced == output.count
      switch result {
      case APPDATA_Z_OK: return (used, produced, false)
      case APPDATA_Z_STREAM_END: return (used, produced, true)
      case APPDATA_Z_BUF_ERROR: return (used, produced, false)
      default:
        let words = stream.pointee.msg.map { String(cString: $0) } ?? "code \(result)"
        throw Failure(message: "its compressed stream is damaged (zlib: \(TerminalText.escaped(words)))")
      }
    }
  }

  /// A tar stream read as it comes: ustar headers, pax `path` and `size` records, GNU long
  /// names; data skipped. Only `apps/PKG/TOKEN/PATH` entries are kept, their paths within
  /// `names` (one pax name of at most 1 MiB is held besides, while its entry is read).
  struct TarReader {
    var entries: [Entry] = []
    /// The bytes of the kept entries' paths.
    private(set) var names: NameBudget

    init(names: NameBudget = NameBudget()) {
      self.names = names
    }
    private(set) var total: UInt64 = 0
    /// Headers read (pax and long-name records included; end blocks not).
    private(set) var headers: UInt64 = 0
    private(set) var sawEnd = false
    private var header: [UInt8] = []
    /// Bytes of the current entry's data still to skip, and of its padding.
    private var skipping: UInt64 = 0
    /// A pax or GNU long-name record being read, and for which entry.
    private var record: [UInt8]?
    private var recordKind: UInt8 = 0
    private var recordLeft: UInt64 = 0
    private var recordPadding: UInt64 = 0
    private var paxPath: [UInt8]?
    private var paxSize: UInt64?
    private var zeroBlocks = 0

    var isBetweenEntries: Bool { header.isEmpty && skipping == 0 && record == nil }

    mutating func feed(_ bytes: ArraySlice<UInt8>) throws(Failure) {
      total += UInt64(bytes.count)
      var index = bytes.startIndex
      while index < bytes.endIndex {
        if sawEnd { return }
        if record != nil {
          let take = Int(min(UInt64(bytes.endIndex - index), recordLeft))
          record! += bytes[index..<(index + take)]
          index += take
          recordLeft -= UInt64(take)
          if recordLeft == 0 {
            finishRecord()
            skipping = recordPadding
          }
          continue
        }
        if skipping > 0 {
          let take = Int(min(UInt64(bytes.endIndex - index), skipping))
          index += take
          skipping -= UInt64(take)
          continue
        }
        let take = min(512 - header.count, bytes.endIndex - index)
        header += bytes[index..<(index + take)]
        index += take
        if header.count == 512 {
          try readHeader()
          header.removeAll(keepingCapacity: true)
        }
      }
    }

    private mutating func finishRecord() {
      guard let bytes = record else { return }
      record = nil
      if recordKind == UInt8(ascii: "L") {
        paxPath = Array(bytes.prefix { $0 != 0 })
        return
      }
      // pax: "LEN key=value\n" records.
      var index = 0
      while index < bytes.count {
        // A record's length counts its digits, the space, the body and the newline: one that
        // ends before its body starts, or past the records, ends the reading (no overflow:
        // the length is compared with what is left).
        guard let space = bytes[index...].firstIndex(of: 0x20), let length = Int(String(decoding: bytes[index..<space], as: UTF8.self)),
              length > space - index + 1, length <= bytes.count - index else { return }
        let body = bytes[(space + 1)..<(index + length - 1)]
        if let equals = body.firstIndex(of: 0x3D) {
          let key = String(decoding: body[..<equals], as: UTF8.self)
          let value = Array(body[(equals + 1)...])
          if key == "path" { paxPath = value }
          if key == "size" { paxSize = UInt64(String(decoding: value, as: UTF8.self)) }
        }
        index += length
      }
    }

    /// A numeric field: octal digits, or (GNU's and POSIX's extension for what octal cannot
    /// hold) base-256, big-endian after a first byte of 0x80 (a negative one, 0xFF, is refused).
    /// Nil when it is neither, or past UInt64.
    private static func octal(_ field: ArraySlice<UInt8>) -> UInt64? {
      if let first = field.first, first & 0x80 != 0 {
        guard first == 0x80 else { return nil }
        var value: UInt64 = 0
        for byte in field.dropFirst() {
          guard value >> 56 == 0 else { return nil }
          value = value << 8 | UInt64(byte)
        }
        return value
      }
      var value: UInt64 = 0
      var sawDigit = false
      for byte in field {
        if byte == 0 || byte == 0x20 { if sawDigit { break } else { continue } }
        guard (0x30...0x37).contains(byte) else { return nil }
        let (shifted, overflow) = value.multipliedReportingOverflow(by: 8)
        guard !overflow else { return nil }
        value = shifted + UInt64(byte - 0x30)
        sawDigit = true
      }
      return value
    }

    private mutating func readHeader() throws(Failure) {
      if header.allSatisfy({ $0 == 0 }) {
        zeroBlocks += 1
        if zeroBlocks == 2 { sawEnd = true }
        return
      }
      zeroBlocks = 0
      headers += 1
      guard let size = Self.octal(header[124..<136]) else { throw Failure(message: "a tar header with a size that is not a number") }
      // No entry is larger than the stream appdata reads (so no size and its padding overflow).
      guard size <= AndroidBackupStream.maximumBytes else { throw Failure(message: "a tar entry of \(size) bytes, more than appdata reads") }
      let type = header[156]
      let padding = (512 - size % 512) % 512
      if type == UInt8(ascii: "x") || type == UInt8(ascii: "L") {
        guard size <= UInt64(AndroidBackupStream.maximumPaxBytes) else { throw Failure(message: "a tar extended header of \(size) bytes, more than appdata reads") }
        record = []
        recordKind = type
        recordLeft = size
        recordPadding = padding
        if size == 0 { finishRecord(); skipping = padding }
        return
      }
      if type == UInt8(ascii: "g") {
        skipping = size + padding
        return
      }
      var name = paxPath ?? {
        let base = Array(header[0..<100].prefix { $0 != 0 })
        let isUstar = header[257..<262].elementsEqual("ustar".utf8)
        let prefix = isUstar ? Array(header[345..<500].prefix { $0 != 0 }) : []
        return prefix.isEmpty ? base : prefix + [0x2F] + base
      }()
      let entrySize = paxSize ?? size
      guard entrySize <= AndroidBackupStream.maximumBytes else { throw Failure(message: "a tar entry of \(entrySize) bytes, more than appdata reads") }
      paxPath = nil
      paxSize = nil
      let isDirectory = type == UInt8(ascii: "5")
      skipping = isDirectory ? 0 : entrySize + (512 - entrySize % 512) % 512
      if name.last == 0x2F { name.removeLast() }
      // apps/PKG/TOKEN/PATH; `_manifest` and the APK (`a`) are not app data.
      let parts = name.split(separator: 0x2F, maxSplits: 3, omittingEmptySubsequences: false)
      guard parts.count == 4, parts[0].elementsEqual("apps".utf8) else { return }
      let token = String(decoding: parts[2], as: UTF8.self)
      guard ["r", "f", "db", "sp", "ef", "d_r", "d_f", "d_db", "d_sp"].contains(token) else { return }
      guard entries.count < AndroidBackupStream.maximumEntries else { throw Failure(message: "more than \(AndroidBackupStream.maximumEntries) entries, more than appdata reads") }
      guard names.keep(parts[3].count) else { throw Failure(message: names.exceeded) }
      entries.append(Entry(token: token, path: Array(parts[3]), size: isDirectory ? 0 : entrySize, isDirectory: isDirectory))
    }
  }
}
