// swift-tools-version:6.0
// An example of appdata's library: audits a folder of containers (a Simulator device, a
// folder of .xcappdata packages, a device backup) and prints the five apps whose data the
// backup would carry most of. Built and run by `make test`, so the API it uses cannot rot.
//
//   swift run --package-path Examples/TopApps top-apps PATH
import PackageDescription

let package = Package(
  name: "TopApps",
  dependencies: [.package(name: "appdata", path: "../..")],
  targets: [
    .executableTarget(
      name: "top-apps",
      dependencies: [.product(name: "AppDataKit", package: "appdata")],
      path: "Sources/TopApps"
    ),
  ],
  swiftLanguageModes: [.v6]
)
