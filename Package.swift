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
    .target(
      name: "AppDataKit",
      dependencies: [.target(name: "CLibattr", condition: .when(platforms: [.linux]))],
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
  swiftLanguageModes: [.v5]
)
