#!/usr/bin/env bash
# Coverage-guided fuzzing of appdata's parsers with libFuzzer (`make fuzz`).
#
# Each target in Tests/AppDataKitTests/FuzzTargets/NAME.swift (where `make test` replays the
# corpus and regressions through it in-process) exercises one parser; all of them are compiled with the
# library into one binary (`swiftc -sanitize=fuzzer,address -parse-as-library`: libFuzzer's main,
# AddressSanitizer and LeakSanitizer), and APPDATA_FUZZ_TARGET picks the target of a run. Each
# runs for FUZZ_SECONDS (default 60) on a copy of its seed corpus (Fuzz/corpus/NAME) and its
# regression inputs (Fuzz/regressions/NAME). Any crash, leak, timeout (FUZZ_TIMEOUT s for one
# input) or input needing over FUZZ_RSS_MB fails the run; libFuzzer writes that input to
# .build-fuzz/NAME/, and it belongs in Fuzz/regressions/NAME, which `make test` replays
# (FuzzRegressionTests) in-process.
#
# Usage: Scripts/fuzz.sh [NAME...]     (default: every target)
#        FUZZ_SECONDS=600 Scripts/fuzz.sh bplist xmlplist
#        Scripts/fuzz.sh --check      (type-checks the fuzz build and runs nothing: `make test` does
#                                      this, so a library change that breaks the build is seen)
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
TIMEOUT=${FUZZ_TIMEOUT:-10}
RSS_MB=${FUZZ_RSS_MB:-2048}
OUT=.build-fuzz
# The library's targets, compiled here as one module (their `import AppData…` lines dropped).
LIBRARY="Sources/AppDataSystem Sources/AppDataCore Sources/AppDataReaders Sources/AppDataReports Sources/AppDataMigration"

# One binary for every target: the library (all of it but its one swift-crypto file, which
# Fuzz/Support/NoCrypto.swift stands in for, and AppDataCore's Exports.swift, whose typealias
# names a type across modules, which one module already has) with every target and the entry
# point that picks one.
all_targets=(bplist xmlplist mbfile keybag json glob archive manifest androidxml androidbackup)
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")
binary="$OUT/fuzz-appdata"
mkdir -p "$OUT"
rm -rf "$OUT/src" && mkdir -p "$OUT/src"
# shellcheck disable=SC2086
for file in $(find $LIBRARY -name '*.swift' ! -name 'BackupDecryption.swift' ! -name 'Exports.swift' | sort); do
  flat="$OUT/src/$(echo "$file" | tr '/' '_')"
  grep -v '^import AppData' "$file" > "$flat"
done
sources="$(find "$OUT/src" -name '*.swift' | sort | tr '\n' ' ')"
if [ $check = 1 ]; then
  echo "== type-checking the fuzz build"
  # -j: the driver splits the files over one frontend per CPU (19 s on one, 9 s on two).
  # shellcheck disable=SC2086
  swiftc -typecheck -parse-as-library -module-name AppDataFuzz -package-name appdata -j "$(nproc 2>/dev/null || echo 2)" \
    -I Sources/CSQLite -I Sources/CLibarchive -I Sources/CLibattr -I Sources/CZlib \
    Tests/AppDataKitTests/FuzzTargets/*.swift Fuzz/Support/*.swift $sources
  exit
fi
echo "== building $binary"
# shellcheck disable=SC2086
swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name AppDataFuzz -package-name appdata \
  -I Sources/CSQLite -I Sources/CLibarchive -I Sources/CLibattr -I Sources/CZlib \
  Tests/AppDataKitTests/FuzzTargets/*.swift Fuzz/Support/*.swift $sources -lattr -o "$binary"

status=0
for name in "${targets[@]}"; do
  [ -f "Tests/AppDataKitTests/FuzzTargets/$name.swift" ] || { echo "fuzz.sh: no target '$name' in Tests/AppDataKitTests/FuzzTargets" >&2; exit 2; }
  mkdir -p "$OUT/$name"
  work="$OUT/$name/corpus"
  rm -rf "$work"; mkdir -p "$work"
  cp Fuzz/corpus/"$name"/* "$work"/ 2>/dev/null || true
  cp Fuzz/regressions/"$name"/* "$work"/ 2>/dev/null || true
  seeds=$(ls "$work" | wc -l)
  echo "== $name: fuzzing for ${SECONDS_EACH}s from $seeds inputs"
  log="$OUT/$name/fuzz.log"
  if (cd "$OUT/$name" && APPDATA_FUZZ_TARGET=$name ../fuzz-appdata -max_total_time="$SECONDS_EACH" -timeout="$TIMEOUT" -rss_limit_mb="$RSS_MB" \
        -malloc_limit_mb="$RSS_MB" -print_final_stats=1 corpus) > "$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    per_second=$(grep -o 'exec/s: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
    coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
    echo "== $name: clean: $runs runs, $per_second exec/s, coverage $coverage, corpus $(ls "$work" | wc -l) (from $seeds)"
  else
    status=1
    echo "== $name: FAILED; the input is in $OUT/$name (crash-*, leak-*, timeout-*, oom-*); the log:"
    tail -40 "$log"
  fi
done
exit $status
