#!/usr/bin/env bash
# make bench: release build, tools from apt, then Scripts/bench.py.
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
# getfattr (attr) and the sqlite3 shell (sqlite3) are what appdata is timed against.
for tool in getfattr:attr sqlite3:sqlite3; do
  if ! command -v "${tool%%:*}" >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get install -y -qq "${tool#*:}" >/dev/null 2>&1 || { $sudo apt-get update -qq && $sudo apt-get install -y -qq "${tool#*:}"; }
  fi
done
# Python's cryptography encrypts the encrypted-backup bench's copy (as in make test).
python3 -c 'import cryptography' 2>/dev/null || python3 -m pip install -q cryptography ||
  python3 -m pip install -q --break-system-packages cryptography
swift build -c release --static-swift-stdlib
# The floor appdata is measured against: the audit's syscalls and nothing else, in C.
cc -O2 -pthread -o .build/floor-walker Scripts/floor-walker.c
python3 Scripts/bench.py .build/release/appdata "${BENCH_DIR:-.build/bench-data}" "$@"
