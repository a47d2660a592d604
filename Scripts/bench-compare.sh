#!/usr/bin/env bash
# make bench-compare REF=<tag or commit>: builds REF's release binary in a scratch folder
# (.build-compare/SHORT: REF's tree from git archive, its own build folder; kept, so a second
# run reuses it), then times this tree's release build against it on every compare case of
# Scripts/bench.py, alternated in one run, and fails when any case is more than 10% slower.
set -euo pipefail
cd "$(dirname "$0")/.."
ref="${1:?usage: Scripts/bench-compare.sh REF [bench.py options]}"
shift
commit=$(git rev-parse --verify "$ref^{commit}")
short=$(git rev-parse --short=7 "$commit")
dir=".build-compare/$short"
if [ ! -x "$dir/build/release/appdata" ]; then
  rm -rf "$dir"
  mkdir -p "$dir/src"
  git archive "$commit" | tar -x -C "$dir/src"
  echo "bench-compare: building $ref ($short) in $dir"
  (cd "$dir/src" && swift build -c release --static-swift-stdlib --scratch-path ../build)
fi
exec ./Scripts/bench.sh --compare "$dir/build/release/appdata" --fail-over 1.10 "$@"
