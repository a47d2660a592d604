#!/usr/bin/env bash
# make test: Examples/TopApps, a user's program on appdata's library, still builds and runs.
#  1. Its manifest loads (the package a user builds: `swift run --package-path Examples/TopApps`).
#  2. Its source typechecks as a module of another package against the modules just built, so
#     it uses only what is public (the root package also builds it, as `top-apps`, to run it).
#  3. It runs on a generated Simulator device and prints the five largest apps, largest first.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(swift build --show-bin-path)
swift package --package-path Examples/TopApps --scratch-path .build/examples dump-package >/dev/null
# Every system-library target's module map (the library's modules import them), so that a new
# one (CZlib was) needs no edit here.
maps=()
for map in Sources/C*/module.modulemap; do maps+=(-Xcc "-fmodule-map-file=$map"); done
swiftc -typecheck -swift-version 6 -module-name TopApps -I "$bin/Modules" "${maps[@]}" \
  Examples/TopApps/Sources/TopApps/main.swift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 Scripts/make-test-inputs.py "$work" >/dev/null
output=$("$bin/top-apps" "$work"/device/*)
expected=$("$bin/appdata" audit --no-config --format json "$work"/device/* |
  jq -r '.containers | sort_by(-.summary.backup.bytes, (.id // .container)) | .[:5][] | .id // .container')
got=$(sed 's/^ *[0-9.]* [KMG]*i*B  //; s/ ([0-9]* files*)$//' <<<"$output")
if [ "$got" != "$expected" ]; then
  echo "check-example: top-apps printed:"; echo "$output"; echo "expected the apps:"; echo "$expected"; exit 1
fi
echo "check-example: top-apps builds against the public API and ranks $(wc -l <<<"$output") apps as appdata's JSON does"
