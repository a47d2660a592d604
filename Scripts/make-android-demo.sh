#!/usr/bin/env bash
# Builds a sample Android app data folder (as `adb exec-out run-as PKG tar c .` gives it,
# extracted) that shows every destination: what the cloud backup carries, what only
# device-to-device transfer carries, what neither does, and a map-tile cache in files/ that the
# cloud backup carries (cache-like data in a carried folder).
# Usage: make-android-demo.sh DIR
set -euo pipefail
dir=$1

rm -rf "$dir"
mkdir -p "$dir"/files/tiles "$dir"/databases "$dir"/shared_prefs "$dir"/app_webview/Default \
  "$dir"/cache/image_manager_disk_cache "$dir"/code_cache "$dir"/no_backup

printf 'Shopping list\n' > "$dir/files/notes.txt"
for n in 1 2 3 4 5 6; do head -c 900000 /dev/zero > "$dir/files/tiles/$n.png"; done
head -c 3000000 /dev/zero > "$dir/databases/app.db"
head -c 400000 /dev/zero > "$dir/databases/app.db-wal"
head -c 32768 /dev/zero > "$dir/databases/app.db-shm"
printf '<map/>\n' > "$dir/shared_prefs/settings.xml"
printf '<map><string name="token">x</string></map>\n' > "$dir/shared_prefs/session_0.xml"
head -c 200000 /dev/zero > "$dir/app_webview/Default/Cookies"
head -c 5000000 /dev/zero > "$dir/cache/image_manager_disk_cache/journal"
head -c 700000 /dev/zero > "$dir/no_backup/com.google.android.gms.appid-no-backup"
echo "made an Android app data folder in $dir"
