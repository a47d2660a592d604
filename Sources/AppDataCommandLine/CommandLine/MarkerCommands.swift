import AppDataSystem
import AppDataKit
/// `appdata exclude`, `include` and `status`: the marker verbs, like `tmutil`'s.
enum MarkerCommands {
  static func exclude(_ parsed: ParsedArguments, io: CommandIO) -> ExitCode {
    let lastChoice = parsed.order.last { $0 == .legacy || $0 == .both }
    let markers: [Marker]
    switch lastChoice {
    case .both: markers = [.modern, .legacy]
    case .legacy: markers = [.legacy]
    default: markers = [.modern]
    }
    var failed = false
    for path in parsed.operands {
      do {
        _ = try Syscalls.status(ofPath: path)
        for marker in markers {
          let name = MarkerTable.platformName(of: marker)
          try ExtendedAttributes.setValue(marker.valueToWrite, of: name, atPath: path)
          // Read it back: some filesystems accept an attribute and then drop it.
          guard let stored = try ExtendedAttributes.value(of: name, atPath: path), marker.isExcluding(value: stored) else {
            io.error("\(TerminalText.escaped(path)): the \(marker.rawValue) marker did not stick (read back as absent)")
            failed = true
            continue
          }
        }
      } catch {
        io.error(error.message(path: path))
        failed = true
      }
    }
    return failed ? .failure : .success
  }

  static func include(_ parsed: ParsedArguments, io: CommandIO) -> ExitCode {
    var failed = false
    for path in parsed.operands {
      do {
        _ = try Syscalls.status(ofPath: path)
        for marker in Marker.allCases {
          for name in MarkerTable.allNames(of: marker) {
            do {
              try ExtendedAttributes.removeValue(of: name, atPath: path)
            } catch Errno.notSupported, Errno.notSupportedOnSocket {
              // Linux cannot store un-namespaced names, so there is nothing to remove.
            }
          }
        }
        let status = try MarkerStatus.read(path)
        if let inherited = status.inheritedFrom {
          io.warning("\(TerminalText.escaped(path)): still excluded by the \(inherited.markers.name!) marker on \(TerminalText.escaped(inherited.path))")
        }
      } catch {
        io.error(error.message(path: path))
        failed = true
      }
    }
    return failed ? .failure : .success
  }

  static func status(_ parsed: ParsedArguments, io: CommandIO) -> ExitCode {
    var failed = false
    var items: [JSONValue] = []
    for path in parsed.operands {
      do {
        let status: MarkerStatus
        if let (archive, inner) = ArchiveMarkerStatus.split(path) {
          do {
            status = try ArchiveMarkerStatus.read(archive: archive, path: inner)
          } catch {
            io.error("\(TerminalText.escaped(archive)): \(TerminalText.escaped(error.message))")
            failed = true
            continue
          }
        } else {
          status = try MarkerStatus.read(path)
        }
        if parsed.flag(.json) {
          items.append(.object([
            "path": .string(path),
            "excluded": .bool(status.isExcluded),
            "marker": status.effectiveMarkers.name.map { .string($0) } ?? .null,
            "excludedBy": status.ownMarkers.isExcluding
              ? .string(ArchiveMarkerStatus.split(path) == nil ? MarkerStatus.absolute(path) : status.path)
              : status.inheritedFrom.map { .string($0.path) } ?? .null,
          ]))
        } else {
          var line = (status.isExcluded ? "[Excluded]" : "[Included]") + "    " + TerminalText.escaped(path)
          if status.ownMarkers.isExcluding {
            line += "  (\(Self.markerWords(status.ownMarkers.name!)))"
          } else if let inherited = status.inheritedFrom {
            line += "  (\(Self.markerWords(inherited.markers.name!)), inherited from \(TerminalText.escaped(inherited.path)))"
          }
          io.writeOutput(line + "\n")
        }
      } catch {
        io.error(error.message(path: path))
        failed = true
      }
    }
    if parsed.flag(.json) {
      let document = JSONValue.object([
        "schemaVersion": .integer(1),
        "tool": .object(["name": .string(AppDataVersion.name), "version": .string(AppDataVersion.current)]),
        "paths": .array(items),
      ])
      io.writeOutput(document.serialized(pretty: true) + "\n")
    }
    return failed ? .failure : .success
  }

  /// One line naming the path and the cause, with a hint for the common cases.
}

extension MarkerCommands {
  /// `modern marker`, `legacy marker`, `both markers`.
  static func markerWords(_ name: String) -> String { name == "both" ? "both markers" : name + " marker" }
}
