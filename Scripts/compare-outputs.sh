#!/usr/bin/env bash
# Every report format of two appdata builds, byte for byte, on the same generated inputs
# (containers, a device, an archive, backups, an Android app's data folder and its tar, extract,
# restore and its undo, migrate, init-config, --list-apps): a refactoring that must not change
# output (issue 40) shows `identical` on every line.
#
# Usage: Scripts/compare-outputs.sh OLD_BINARY NEW_BINARY [WORKDIR]
# Prints one line per command: identical, or the first lines of the diff; exits 1 if any differ.
set -uo pipefail
old=$(realpath "$1") new=$(realpath "$2") work=${3:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
[ -d "$work/inputs" ] || python3 "$here/make-test-inputs.py" "$work/inputs" >/dev/null
[ -d "$work/backups" ] || python3 "$here/make-test-backup.py" "$work/backups" >/dev/null
[ -d "$work/big" ] || python3 "$here/make-test-backup.py" --rows 3000 --apps 20 "$work/big" >/dev/null
[ -d "$work/history" ] || python3 "$here/make-backup-history.py" "$work/history" >/dev/null
[ -d "$work/container" ] || python3 "$here/generate-container.py" --entries 2000 --seed 5 "$work/container" >/dev/null
# An Android app's data folder (the generated tree under files/, beside the folders Android
# makes, a cached file and one it does not back up), a tar of it, and an adb backup of it that
# lacks one file and holds one the folder has not.
if [ ! -d "$work/android/com.example.app" ]; then
  data="$work/android/com.example.app"
  mkdir -p "$data"/{databases,shared_prefs,cache,no_backup}
  python3 "$here/generate-container.py" --entries 300 --seed 9 "$data/files" >/dev/null 2>&1
  printf 'db' > "$data/databases/app.db"; printf '<map/>' > "$data/shared_prefs/prefs.xml"
  head -c 5000 /dev/zero > "$data/cache/thumb"; head -c 700 /dev/zero > "$data/no_backup/token"
  tar -C "$data" -cf "$work/android/com.example.app.tar" .
  python3 "$here/make-android-backup.py" "$data" "$work/android/backup.ab" --package com.example.app \
    --skip databases/app.db --extra f/added.txt >/dev/null
fi
export APPDATA_BACKUP_PASSWORD=${APPDATA_BACKUP_PASSWORD:-$(python3 -c "import importlib.util,sys; s=importlib.util.spec_from_file_location('m','$here/make-test-backup.py'); m=importlib.util.module_from_spec(s); s.loader.exec_module(m); print(m.PASSWORD)")}
device=$(ls -d "$work"/inputs/device/*-* | head -1)
history=$(ls -d "$work"/history/Backup/*-* | head -1)
newest=$(ls -d "$work"/history/Backup/00008030-001234567890802E)
inputs=(
  "$work/container"
  "$device"
  "$work/inputs/WeightTracker.xcappdata"
  "$work/inputs/Containers.tar.gz"
  "$work/inputs/mac/Library/Containers"
  "$work/backups/plain"
  "$work/big"
  "$work/history/Backup"
)
differ=0
fresh() {  # the binary
  [ -z "${FRESH:-}" ] && return
  rm -rf "${FRESH#*:}" && cp -a "${FRESH%%:*}" "${FRESH#*:}"
  # shellcheck disable=SC2086  # SETUP is words
  [ -z "${SETUP:-}" ] || (cd "$work" && "$1" $SETUP >/dev/null 2>&1)
}
tree_of() {
  [ -z "${FRESH:-}" ] && return
  python3 - "${FRESH#*:}" <<'PY'
import hashlib, os, stat, sys
root = sys.argv[1]
lines = []
for folder, dirs, files in os.walk(root):
    for name in dirs + files:
        path = os.path.join(folder, name)
        st = os.lstat(path)
        kind = "l" if stat.S_ISLNK(st.st_mode) else "d" if stat.S_ISDIR(st.st_mode) else "f"
        what = os.readlink(path) if kind == "l" else ""
        if kind == "f" and not name.endswith(".owner"):  # an owner record holds its token and inodes
            with open(path, "rb") as f: what = hashlib.sha256(f.read()).hexdigest()[:12]
        attrs = sorted(f"{n}={os.getxattr(path, n, follow_symlinks=False).hex()}" for n in os.listxattr(path, follow_symlinks=False))
        lines.append(f"{kind} {oct(st.st_mode & 0o7777)} {st.st_size if kind == 'f' else '-'} {os.path.relpath(path, root)} {what} {' '.join(attrs)}")
print("\n".join(sorted(lines)))
PY
}
masked() { sed -E 's/(appdata-([a-z]+-)*)[0-9a-f]{16,}/\1TOKEN/g'; }
run() {  # a name, then the arguments; SORTED=1: compare the lines sorted (streamed NDJSON
  # lines come in the order the walk's threads classify them); FRESH=FROM:TO: TO is a new copy
  # of FROM before each binary runs (what the command changes), and its tree is compared after
  # (each entry's kind, mode, size, contents and extended attributes; the random tokens in the
  # names appdata makes, and its owner records' contents, masked); SETUP='ARGS': run first by the same binary, its output not
  # compared (a restore before an undo)
  local name=$1; shift
  local a b
  [ -n "${CLEAN:-}" ] && rm -rf "$CLEAN"
  fresh "$old"; a=$(cd "$work" && "$old" "$@" 2>&1; echo "exit $?"); a+=$(tree_of)
  [ -n "${CLEAN:-}" ] && a+=$(cd "$work" && find "${CLEAN#"$work"/}" -printf '%y %m %s %P %l\n' 2>/dev/null | sort) && rm -rf "$CLEAN"
  fresh "$new"; b=$(cd "$work" && "$new" "$@" 2>&1; echo "exit $?"); b+=$(tree_of)
  [ -n "${CLEAN:-}" ] && b+=$(cd "$work" && find "${CLEAN#"$work"/}" -printf '%y %m %s %P %l\n' 2>/dev/null | sort) && rm -rf "$CLEAN"
  a=$(masked <<<"$a"); b=$(masked <<<"$b")
  if [ -n "${SORTED:-}" ]; then a=$(sort <<<"$a"); b=$(sort <<<"$b"); fi
  if [ "$a" == "$b" ]; then
    echo "identical  $name ($(printf '%s' "$b" | wc -c) bytes)"
  else
    differ=1
    echo "DIFFERENT  $name"
    diff <(printf '%s\n' "$a") <(printf '%s\n' "$b") | head -10
  fi
}
for input in "${inputs[@]}"; do
  short=${input#"$work"/}
  for format in table json ndjson github junit sarif html; do
    run "$short $format" audit --no-config --fail-on never --format "$format" "$input"
  done
  run "$short json --list all" audit --no-config --fail-on never --format json --list all "$input"
  SORTED=1 run "$short ndjson --list critical (sorted)" audit --no-config --fail-on never --format ndjson --list critical "$input"
  run "$short table --bytes -q" audit --no-config --bytes -q "$input"
done
for input in "$work/android/com.example.app" "$work/android/com.example.app.tar"; do
  short=${input#"$work"/}
  for format in table json ndjson github junit sarif html; do
    run "$short $format" audit --no-config --fail-on never --format "$format" "$input"
  done
  run "$short json --list all" audit --no-config --fail-on never --format json --list all "$input"
  run "$short table --list all --bytes" audit --no-config --fail-on never --list all --bytes "$input"
  run "$short table --max-file-size" audit --no-config --fail-on never --max-file-size 2KB --max-backup-size 10KB "$input"
  run "$short --target-sdk 30" audit --no-config --fail-on never --target-sdk 30 --device-api 31 "$input"
done
run "android --backup" audit --no-config --fail-on never --format json --list all --backup "$work/android/backup.ab" "$work/android/com.example.app"
run "android --backup table" audit --no-config --fail-on never --backup "$work/android/backup.ab" "$work/android/com.example.app"
run "android --platform android" audit --no-config --fail-on never --platform android "$work/android/com.example.app/files"
policy="$work/policy.json"
CLEAN=$policy run "init-config android" init-config "$work/android/com.example.app" -o "$policy"
CLEAN=$policy run "init-config container" init-config "$work/container" -o "$policy"
run "baseline PATH (older backup)" audit --no-config --fail-on never --format json --baseline "$history" "$newest"
run "baseline PATH table" audit --no-config --fail-on never --baseline "$history" "$newest"
run "baseline PATH --list all" audit --no-config --fail-on never --format json --list all --baseline "$history" "$newest"
"$new" audit --no-config --fail-on never --format json "$work/container" > "$work/saved.json"
run "baseline saved report" audit --no-config --fail-on never --format json --baseline "$work/saved.json" "$work/container"
run "--backup comparison" audit --no-config --fail-on never --format json --list all --backup "$work/backups/plain" --app com.example.my-app "$work/backups/plain"
run "--app none" audit --no-config --app nope "$device"
run "two PATHs" audit --no-config --fail-on never --format json "$device" "$work/container"
run "encrypted" audit --no-config --fail-on never --format json "$work/backups/encrypted"
out="$work/out.xcappdata"
CLEAN=$out run "extract table" extract "$work/backups/plain" --app com.example.my-app -o "$out"
CLEAN=$out run "extract --json" extract "$work/backups/plain" --app com.example.my-app -o "$out" --json
CLEAN=$out run "extract --with-extensions" extract "$work/backups/plain" --app com.example.my-app -o "$out" --with-extensions
CLEAN=$out run "extract encrypted" extract "$work/backups/encrypted" --app com.example.my-app -o "$out" --json
CLEAN=$out run "extract --dry-run" extract "$work/big" --app com.example.app07 -o "$out" --dry-run
CLEAN=$out run "extract no such app" extract "$work/backups/plain" --app com.example.nope -o "$out"
CLEAN=$out run "extract not a backup" extract "$work/container" --app x -o "$out"
CLEAN=$out run "extract several backups" extract "$work/history/Backup" --app com.example.notes -o "$out"
run "--list-apps device" audit --no-config --list-apps "$device"
run "--list-apps backups" audit --no-config --list-apps "$work/backups/plain" "$work/big"
run "--list-apps history" audit --no-config --list-apps "$work/history/Backup"
# A Simulator device that is shut down (state 1), restored into and back.
sim="$work/simulator"
if [ ! -d "$sim" ]; then
  cp -a "$device" "$sim"
  python3 -c "import plistlib,sys; p=sys.argv[1]; d=plistlib.load(open(p,'rb')); d['state']=1; plistlib.dump(d,open(p,'wb'))" "$sim/device.plist"
fi
FRESH=$sim:$work/sim-run run "restore --dry-run" restore "$work/backups/plain" --simulator "$work/sim-run" --app com.example.notes --dry-run
FRESH=$sim:$work/sim-run run "restore --with-extensions --json" restore "$work/backups/plain" --simulator "$work/sim-run" --app com.example.notes --with-extensions --json
FRESH=$sim:$work/sim-run run "restore from a folder" restore "$work/inputs/WeightTracker.xcappdata" --simulator "$work/sim-run" --app com.example.notes
FRESH=$sim:$work/sim-run run "restore no such app" restore "$work/backups/plain" --simulator "$work/sim-run" --app com.example.nope
FRESH=$sim:$work/sim-run run "restore --undo, none kept" restore --undo "$work/sim-run" --app com.example.notes
SETUP="restore $work/inputs/WeightTracker.xcappdata --simulator $work/sim-run --app com.example.notes" \
  FRESH=$sim:$work/sim-run run "restore, then --undo --json" restore --undo "$work/sim-run" --app com.example.notes --json
# A container whose Library/Caches holds what migrate moves.
legacy="$work/legacy"
if [ ! -d "$legacy" ]; then
  mkdir -p "$legacy"/{Documents,Library/Caches/offline/maps,tmp}
  printf 'tile' > "$legacy/Library/Caches/offline/maps/a.tile"; head -c 3000 /dev/zero > "$legacy/Library/Caches/offline/b.bin"
  printf 'keep' > "$legacy/Documents/notes.txt"
fi
FRESH=$legacy:$work/legacy-run run "migrate --dry-run" migrate "$work/legacy-run" --from Library/Caches/offline --dry-run
FRESH=$legacy:$work/legacy-run run "migrate --json" migrate "$work/legacy-run" --from Library/Caches/offline --json
FRESH=$legacy:$work/legacy-run run "migrate table" migrate "$work/legacy-run" --from Library/Caches/offline
exit $differ
