#!/usr/bin/env bash
# Builds a sample app data container that shows every category and a few findings.
# Usage: make-demo-container.sh APPDATA_BINARY DIR
set -euo pipefail
appdata=$1
dir=$2

rm -rf "$dir"
mkdir -p "$dir"/Documents/Inbox "$dir"/Documents/OfflineMaps \
  "$dir/Library/Application Support/Database" "$dir"/Library/Preferences \
  "$dir"/Library/Caches/com.example.demo "$dir"/Library/Caches/Thumbnails \
  "$dir"/Library/SplashBoard/Snapshots "$dir"/tmp "$dir"/Downloads

cat > "$dir/.com.apple.mobile_container_manager.metadata.plist" <<'PLIST'
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict><key>MCMMetadataIdentifier</key><string>com.example.demo</string></dict></plist>
PLIST

# critical: user documents, a database, preferences, and one photo that is too big.
printf 'Shopping list\n' > "$dir/Documents/notes.txt"
head -c 1500000 /dev/zero > "$dir/Documents/holiday.jpg"
head -c 20000 /dev/zero > "$dir/Documents/Inbox/shared.pdf"
head -c 300000 /dev/zero > "$dir/Library/Application Support/Database/store.sqlite"
printf '<plist/>\n' > "$dir/Library/Preferences/com.example.demo.plist"

# offline: downloaded maps, kept but excluded from backup by marking their folder.
head -c 2500000 /dev/zero > "$dir/Documents/OfflineMaps/europe.mbtiles"
head -c 800000 /dev/zero > "$dir/Documents/OfflineMaps/asia.mbtiles"
"$appdata" exclude "$dir/Documents/OfflineMaps"

# A file marked only with the deprecated iOS 5.0.1 attribute (legacy-marker).
head -c 400000 /dev/zero > "$dir/Documents/podcast.mp3"
"$appdata" exclude --legacy "$dir/Documents/podcast.mp3"

# cached, temporary and system.
head -c 120000 /dev/zero > "$dir/Library/Caches/com.example.demo/Cache.db"
head -c 64000 /dev/zero > "$dir/Library/Caches/Thumbnails/1.png"
head -c 9000 /dev/zero > "$dir/tmp/upload.part"
head -c 30000 /dev/zero > "$dir/Library/SplashBoard/Snapshots/launch.ktx"

# other: a folder outside the standard layout (unknown-location).
printf 'x\n' > "$dir/Downloads/readme.txt"

echo "Sample container created in $dir"
