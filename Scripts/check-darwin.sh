#!/usr/bin/env bash
# `make check-darwin`: compiles the macOS branches of every library target on Linux, so that a
# change that would not build on a Mac fails here, where no Mac is.
#
# Each target (AppDataSystem, then every target above it, in the layers' order) is compiled with
# -D DARWIN_CHECK, which selects the `#else` (Darwin) side of every `#if canImport(Glibc)` and
# `#if os(macOS)`, against a module named Darwin built from Tests/DarwinCheck: darwin.h declares
# each C function, type and constant the Darwin branches use with macOS's own signatures (16-bit
# mode_t, DIR as a complete struct, six-argument xattr calls, st_*timespec, memset_s, ...), each
# citing its header; Darwin.swift adds what Swift's Darwin overlay adds. The targets are compiled
# to object files (not only type-checked), so the compiler's later checks (ownership, definite
# initialization) run too. Nothing is linked or run.
#
# What it proves: the Darwin branches call what macOS declares, with the types macOS gives, and
# the code around them still type-checks. What it cannot: that the calls behave on a Mac as the
# code expects, or that darwin.h matches the SDK a Mac has (it was written from Apple's
# open-source headers). The macOS CI job (.github/workflows/ci.yml) proves those.
#
# It also checks Sources/CLibarchive/shim.h, which declares the libarchive functions appdata
# calls (macOS ships no archive.h), against libarchive's real headers: a declaration that differs
# is an error; and Sources/CZlib/shim.h's stream layout against zlib.h's.
#
# Needs the debug build (swift-crypto's modules come from .build/debug). Usage:
#   Scripts/check-darwin.sh
#   Scripts/check-darwin.sh --mutations   (proves the check can fail: puts back, one at a time
#                                          in a copy of AppDataSystem, each Darwin compile error
#                                          issue 42 found, and fails unless each is an error)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=.build/darwin-check
if [ "$(uname -s)" = Darwin ]; then
  echo "check-darwin: skipped on a Mac, where the build itself compiles the Darwin branches"
  exit 0
fi

darwin_module() {
  mkdir -p "$1"
  swiftc -emit-module -module-name Darwin -parse-as-library -I Tests/DarwinCheck/CDarwin \
    Tests/DarwinCheck/Darwin.swift -emit-module-path "$1/Darwin.swiftmodule"
}

if [ "${1:-}" = "--mutations" ]; then
  work=.build/darwin-mutations
  rm -rf "$work" && darwin_module "$work"
  # file | what the code has | what it had (a compile error on a Mac)
  mutations=(
    "DirectoryStream.swift|let stream: UnsafeMutablePointer<DIR>|let stream: OpaquePointer"
    "DirectoryStream.swift|@usableFromInline let stream|private let stream"
    "ExtendedAttributes.swift|@usableFromInline static func withEntryDescriptor|private static func withEntryDescriptor"
    "ExtendedAttributes.swift|fgetxattr(descriptor.rawValue, attribute, raw.baseAddress, raw.count, 0, 0)|fgetxattr(descriptor.rawValue, attribute, raw.baseAddress, raw.count)"
    "Threads.swift|running.append(UInt(bitPattern: thread))|running.append(thread)"
    "SecretMemory.swift|_ = memset_s(pointer, count, 0, count)|explicit_bzero(pointer, count)"
    "FileStatus.swift|st.st_mtimespec.tv_sec, nanoseconds: st.st_mtimespec.tv_nsec|st.st_mtim.tv_sec, nanoseconds: st.st_mtim.tv_nsec"
  )
  failed=0
  for mutation in "${mutations[@]}"; do
    IFS='|' read -r file now before <<< "$mutation"
    rm -rf "$work/src" && cp -r Sources/AppDataSystem "$work/src"
    python3 - "$work/src/System/$file" "$now" "$before" <<'PY' || { echo "check-darwin: '$now' is no longer in $file: update the mutation" >&2; exit 2; }
import sys
path, now, before = sys.argv[1:]
text = open(path).read()
if now not in text: sys.exit(1)
open(path, "w").write(text.replace(now, before, 1))
PY
    # shellcheck disable=SC2046
    if swiftc -parse-as-library -package-name appdata -D DARWIN_CHECK -swift-version 6 -I "$work" -I Tests/DarwinCheck/CDarwin \
         -module-name AppDataSystem -wmo -c -o "$work/AppDataSystem.o" $(find "$work/src" -name '*.swift' | sort) > "$work/log" 2>&1; then
      echo "MISSED  $file: $before"; failed=1
    else
      echo "caught  $file: $(grep -m1 'error:' "$work/log" | sed 's/^.*error: //')"
    fi
  done
  exit $failed
fi

BUILT=.build/debug/Modules
[ -d "$BUILT" ] || { echo "check-darwin.sh: no $BUILT: run swift build first" >&2; exit 2; }
rm -rf "$OUT" && mkdir -p "$OUT/objects"

echo "== libarchive: Sources/CLibarchive/shim.h against archive.h and archive_entry.h"
archive_include=${ARCHIVE_INCLUDE:-/usr/include}
clang -fsyntax-only -Werror -x c -include "$archive_include/archive.h" -include "$archive_include/archive_entry.h" \
  Sources/CLibarchive/shim.h

echo "== zlib: Sources/CZlib/shim.h's stream against zlib.h (each field's offset, the size, the codes)"
cat > "$OUT/zlib-check.c" <<'C'
#include <stddef.h>
#include <zlib.h>
#include "shim.h"
#define SAME(field) _Static_assert(offsetof(z_stream, field) == offsetof(appdata_z_stream, field), #field);
SAME(next_in) SAME(avail_in) SAME(total_in) SAME(next_out) SAME(avail_out) SAME(total_out) SAME(msg) SAME(state)
SAME(zalloc) SAME(zfree) SAME(opaque) SAME(data_type) SAME(adler) SAME(reserved)
_Static_assert(sizeof(z_stream) == sizeof(appdata_z_stream), "the stream's size");
_Static_assert(Z_OK == APPDATA_Z_OK && Z_STREAM_END == APPDATA_Z_STREAM_END && Z_NEED_DICT == APPDATA_Z_NEED_DICT, "codes");
_Static_assert(Z_BUF_ERROR == APPDATA_Z_BUF_ERROR && Z_NO_FLUSH == APPDATA_Z_NO_FLUSH, "codes");
C
clang -fsyntax-only -Werror -I Sources/CZlib "$OUT/zlib-check.c"

# swift-crypto's modules, as the debug build made them, and the C modules they import.
for module in Crypto CryptoExtras SwiftASN1 CryptoBoringWrapper; do
  ln -s "$PWD/$BUILT/$module.swiftmodule" "$OUT/$module.swiftmodule"
done
crypto_maps=()
for map in .build/checkouts/swift-crypto/Sources/*/include/module.modulemap; do
  crypto_maps+=(-Xcc "-fmodule-map-file=$map")
done

common=(-package-name appdata -D DARWIN_CHECK -swift-version 6 -Onone
  -I "$OUT" -I Tests/DarwinCheck/CDarwin -I Sources/CLibarchive -I Sources/CSQLite -I Sources/CZlib "${crypto_maps[@]}")

echo "== Darwin: Tests/DarwinCheck (darwin.h and the overlay's additions)"
darwin_module "$OUT"

for target in AppDataSystem AppDataCore AppDataReaders AppDataReports AppDataMigration AppDataKit AppDataCommandLine; do
  echo "== $target"
  # shellcheck disable=SC2046
  swiftc "${common[@]}" -parse-as-library -module-name "$target" -emit-module -emit-module-path "$OUT/$target.swiftmodule" \
    -wmo -c -o "$OUT/objects/$target.o" $(find "Sources/$target" -name '*.swift' | sort)
done
echo "== appdata (the executable's main.swift)"
swiftc "${common[@]}" -module-name appdata -c -o "$OUT/objects/appdata.o" Sources/appdata/main.swift
echo "check-darwin: the Darwin branches compile against Tests/DarwinCheck (signatures, not behaviour)"
