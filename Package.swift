// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "appdata",
  products: [
    .executable(name: "appdata", targets: ["appdata"]),
    .library(name: "AppDataKit", targets: ["AppDataKit"]),
  ],
  targets: [
    // libattr (libattr1-dev) and the few Linux syscalls glibc does not wrap yet.
    .systemLibrary(
      name: "CLibattr",
      path: "Sources/CLibattr",
      providers: [.apt(["libattr1-dev"])]
    ),
    // libarchive (libarchive-dev): archives from a Mac, read without extracting them.
    .systemLibrary(
      name: "CLibarchive",
      path: "Sources/CLibarchive",
      providers: [.apt(["libarchive-dev"]), .brew(["libarchive"])]
    ),
    // SQLite (libsqlite3-dev): an iOS device backup's Manifest.db, read-only and immutable.
    .systemLibrary(
      name: "CSQLite",
      path: "Sources/CSQLite",
      providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
    ),
    .target(
      name: "AppDataKit",
      dependencies: [
        .target(name: "CLibattr", condition: .when(platforms: [.linux])),
        "CLibarchive",
        "CSQLite",
      ],
      path: "Sources/AppDataKit"
    ),
    .executableTarget(
      name: "appdata",
      dependencies: ["AppDataKit"],
      path: "Sources/appdata"
    ),
    .testTarget(
      name: "AppDataKitTests",
      dependencies: ["AppDataKit"],
      path: "Tests/AppDataKitTests"
    ),
  ],
  swiftLanguageModes: [.v6]
)
