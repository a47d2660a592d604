import Foundation  // ProcessInfo, for the target's name

// One libFuzzer binary holds every target (the library is compiled once, in two minutes, not
// once per target): APPDATA_FUZZ_TARGET names the one this run calls (Scripts/fuzz.sh sets it).
let fuzzTargets: [String: (UnsafePointer<UInt8>, Int) -> Int32] = [
  "bplist": fuzz_bplist, "xmlplist": fuzz_xmlplist, "mbfile": fuzz_mbfile, "keybag": fuzz_keybag,
  "json": fuzz_json, "glob": fuzz_glob, "archive": fuzz_archive, "manifest": fuzz_manifest, "androidxml": fuzz_androidxml,
  "androidbackup": fuzz_androidbackup,
]

let selectedFuzzTarget: (UnsafePointer<UInt8>, Int) -> Int32 = {
  let name = ProcessInfo.processInfo.environment["APPDATA_FUZZ_TARGET"] ?? ""
  guard let target = fuzzTargets[name] else {
    FileHandle.standardError.write("APPDATA_FUZZ_TARGET must be one of \(fuzzTargets.keys.sorted())\n".data(using: .utf8)!)
    exit(2)
  }
  return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  // libFuzzer may pass a null pointer with size 0.
  var empty: UInt8 = 0
  return withUnsafePointer(to: &empty) { fallback in selectedFuzzTarget(data ?? fallback, size) }
}
