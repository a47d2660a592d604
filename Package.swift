// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "appdata",
  // macOS 15: Synchronization's Mutex and Atomic, which the threads share state through, and
  // String(validating:as:) are available from macOS 15 (swift-crypto's CryptoKit, AES.KeyWrap,
  // needs only 11; typed throws in stored closures, 15). Ignored on Linux.
  platforms: [.macOS(.v15)],
  products: [
    .executable(name: "appdata", targets: ["appdata"]),
    .library(name: "AppDataKit", targets: ["AppDataKit", "AppDataCore", "AppDataReaders", "AppDataReports", "AppDataMigration"]),
  ],
  dependencies: [
    // An encrypted device backup's keys and Manifest.db: PBKDF2, AES key unwrap (RFC 3394) and
    // AES-CBC from BoringSSL, built in (no libssl at run time). Chosen over OpenSSL's libcrypto by
    // measurement: PBKDF2-HMAC-SHA256 of 10,000,000 rounds takes 1.13 s here against OpenSSL
    // 3.0's 2.00 s, and an audit of a backup with iOS's 10,000,000 rounds must finish in 2 s.
    .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
  ],
  targets: [
    // libattr (libattr1-dev) and the few Linux syscalls glibc does not wrap yet.
    .systemLibrary(
      name: "CLibattr",
      path: "Sources/CLibattr",
      providers: [.apt(["libattr1-dev"])]
    ),
    // libarchive: archives from a Mac, read without extracting them. This target declares the
    // functions appdata calls (shim.h; macOS ships the library but no header), and the library
    // is loaded the first time an archive is read (SharedLibrary): libarchive13 on Linux,
    // /usr/lib/libarchive.2.dylib on macOS.
    .systemLibrary(
      name: "CLibarchive",
      path: "Sources/CLibarchive"
    ),
    // zlib: the deflate stream of an `adb backup` file. Declared in shim.h (no header needed)
    // and loaded when an .ab is first read, like libarchive and SQLite.
    .systemLibrary(
      name: "CZlib",
      path: "Sources/CZlib"
    ),
    // SQLite (libsqlite3-dev): an iOS device backup's Manifest.db, read-only and immutable. Header
    // only, like libarchive: the library is loaded with the first backup.
    .systemLibrary(
      name: "CSQLite",
      path: "Sources/CSQLite",
      providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
    ),
    // The layers, each depending only on those above it in this list (the compiler checks it):
    // what glibc and libattr offer; the model every reader and report shares; the readers that
    // produce entries from a folder, an archive or a backup; the reports; migration; the command line.
    .target(
      name: "AppDataSystem",
      dependencies: [.target(name: "CLibattr", condition: .when(platforms: [.linux]))],
      path: "Sources/AppDataSystem"
    ),
    .target(
      name: "AppDataCore",
      dependencies: ["AppDataSystem"],
      path: "Sources/AppDataCore"
    ),
    .target(
      name: "AppDataReaders",
      dependencies: [
        "AppDataSystem", "AppDataCore", "CLibarchive", "CSQLite", "CZlib",
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "CryptoExtras", package: "swift-crypto"),
      ],
      path: "Sources/AppDataReaders"
    ),
    .target(
      name: "AppDataReports",
      dependencies: ["AppDataSystem", "AppDataCore", "AppDataReaders"],
      path: "Sources/AppDataReports"
    ),
    .target(
      name: "AppDataMigration",
      dependencies: ["AppDataSystem", "AppDataCore"],
      path: "Sources/AppDataMigration"
    ),
    // The façade: re-exports the layers and holds the jobs that need several of them.
    .target(
      name: "AppDataKit",
      dependencies: ["AppDataSystem", "AppDataCore", "AppDataReaders", "AppDataReports", "AppDataMigration"],
      path: "Sources/AppDataKit"
    ),
    .target(
      name: "AppDataCommandLine",
      dependencies: ["AppDataSystem", "AppDataKit"],
      path: "Sources/AppDataCommandLine"
    ),
    .executableTarget(
      name: "appdata",
      dependencies: ["AppDataSystem", "AppDataCommandLine"],
      path: "Sources/appdata"
    ),
    // Examples/TopApps, a package of its own that depends on AppDataKit (what a user builds).
    // Built here too, so that `make test` runs it without building the dependencies a second
    // time; Scripts/check-example.sh typechecks it as a separate module, which sees only what
    // is public.
    .executableTarget(
      name: "top-apps",
      dependencies: ["AppDataKit"],
      path: "Examples/TopApps/Sources/TopApps"
    ),
    .testTarget(
      name: "AppDataKitTests",
      dependencies: ["AppDataSystem", "AppDataCore", "AppDataReaders", "AppDataReports", "AppDataMigration", "AppDataKit", "AppDataCommandLine"],
      path: "Tests/AppDataKitTests"
    ),
  ],
  swiftLanguageModes: [.v6]
)
