#!/usr/bin/env python3
"""Builds every shape of input appdata resolves, for the input tests (and by hand, to try them):
real folders with real extended attributes (user.-prefixed, as Linux stores them).

Usage: make-test-inputs.py OUTDIR

OUTDIR/device/<UDID>                 a Simulator device: three apps (one holding nothing but its
                                     metadata), an app group, an extension, and a bundle
OUTDIR/WeightTracker.xcappdata       a complete Xcode package (AppDataInfo.plist, metadata plist)
OUTDIR/Trimmed.xcappdata             a package trimmed by hand: AppData/Library only
OUTDIR/packages/                     a folder holding both packages
OUTDIR/WeightTracker.xcappdata.zip   the complete package, zipped
OUTDIR/Containers.tar.gz             the device's data/Containers, tarred with its attributes
OUTDIR/mac/Library/Containers        a Mac's sandboxed app (<id>/Data, Desktop as a symlink)
OUTDIR/mac/Library/Group Containers  a Mac's app group container
OUTDIR/empty, OUTDIR/checkout, OUTDIR/checkout-with-data, OUTDIR/home
                                     folders holding no container (the last with UI-test data)
"""
import os
import plistlib
import shutil
import subprocess
import sys

MODERN = "user.com.apple.metadata:com_apple_backup_excludeItem"
MODERN_VALUE = bytes.fromhex(
    "62706c69737430305f1011636f6d2e6170706c652e6261636b75706408000000000000010100000000000000010000000000000000000000000000001c")
METADATA = ".com.apple.mobile_container_manager.metadata.plist"
UDID = "5C3E8A1B-9D2F-4E6A-8B7C-1234567890AB"
APP_NOTES = "0A1B2C3D-0000-4000-8000-00000000000A"
APP_PHOTOS = "0A1B2C3D-0000-4000-8000-00000000000B"
APP_EMPTY = "0A1B2C3D-0000-4000-8000-00000000000D"
GROUP = "0A1B2C3D-0000-4000-8000-0000000000A1"
PLUGIN = "0A1B2C3D-0000-4000-8000-0000000000B1"
BUNDLE = "0A1B2C3D-0000-4000-8000-0000000000C1"


def file(path, size):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(bytes((i * 31 + 7) & 0xFF for i in range(size)))


def folder(path):
    os.makedirs(path, exist_ok=True)


def mark(path):
    os.setxattr(path, MODERN, MODERN_VALUE)


def metadata(root, identifier, content_class, binary=True):
    folder(root)
    with open(os.path.join(root, METADATA), "wb") as f:
        plistlib.dump({"MCMMetadataIdentifier": identifier, "MCMMetadataContentClass": content_class,
                       "MCMMetadataUUID": os.path.basename(root)}, f,
                      fmt=plistlib.FMT_BINARY if binary else plistlib.FMT_XML)


def device(out):
    base = os.path.join(out, "device", UDID)
    folder(base)
    with open(os.path.join(base, "device.plist"), "wb") as f:
        plistlib.dump({"UDID": UDID, "name": "iPhone 15", "runtime": "com.apple.CoreSimulator.SimRuntime.iOS-17-0"}, f)
    containers = os.path.join(base, "data", "Containers")
    folder(os.path.join(base, "data", "Library", "Preferences"))  # the device's own Library: not an app's

    notes = os.path.join(containers, "Data", "Application", APP_NOTES)
    metadata(notes, "com.example.notes", 2)
    file(os.path.join(notes, "Documents", "note.txt"), 1000)
    file(os.path.join(notes, "Library", "Preferences", "com.example.notes.plist"), 200)
    file(os.path.join(notes, "Documents", "Offline", "cache.bin"), 3000)
    mark(os.path.join(notes, "Documents", "Offline"))
    file(os.path.join(notes, "Library", "Caches", "c.bin"), 5000)
    file(os.path.join(notes, "tmp", "t.tmp"), 100)

    photos = os.path.join(containers, "Data", "Application", APP_PHOTOS)
    metadata(photos, "com.example.photos", 2, binary=False)
    file(os.path.join(photos, "Documents", "photo.jpg"), 2_000_000)
    file(os.path.join(photos, "Library", "Application Support", "db.sqlite"), 4096)
    folder(os.path.join(photos, "tmp"))

    empty = os.path.join(containers, "Data", "Application", APP_EMPTY)
    metadata(empty, "com.example.empty", 2)
    for name in ("Documents", "Library", "tmp"):
        folder(os.path.join(empty, name))

    group = os.path.join(containers, "Shared", "AppGroup", GROUP)
    metadata(group, "group.com.example.notes", 7)
    file(os.path.join(group, "ChatStorage.sqlite"), 4000)
    file(os.path.join(group, "stickers", "s1.png"), 1500)
    file(os.path.join(group, "Library", "Preferences", "group.com.example.notes.plist"), 100)
    file(os.path.join(group, "Library", "Caches", "x.bin"), 700)
    file(os.path.join(group, "tmp", "y"), 50)
    file(os.path.join(group, "Library", "SplashBoard", "Snapshots", "s.ktx"), 200)
    file(os.path.join(group, "SystemData", "com.apple.chrono", "c.plist"), 30)

    plugin = os.path.join(containers, "Data", "PluginKitPlugin", PLUGIN)
    metadata(plugin, "com.example.notes.widget", 4)
    file(os.path.join(plugin, "Documents", "w.json"), 250)
    file(os.path.join(plugin, "Library", "Caches", "w.bin"), 300)
    file(os.path.join(plugin, "Stray", "z"), 10)

    bundle = os.path.join(containers, "Bundle", "Application", BUNDLE)
    metadata(bundle, "com.example.notes", 1)
    file(os.path.join(bundle, "Notes.app", "Notes"), 9999)
    file(os.path.join(bundle, "Notes.app", "Library", "x"), 10)
    return containers


def package(path, identifier, complete):
    app_data = os.path.join(path, "AppData")
    if complete:
        folder(path)
        with open(os.path.join(path, "AppDataInfo.plist"), "wb") as f:
            plistlib.dump({"CFBundleIdentifier": identifier, "XCApplicationName": "WeightTracker",
                           "XCDownloadDate": "2019-02-02 11:31.02.515", "XCExecutableName": "WeightTracker",
                           "XCExecutableVersion": "1", "XCMinimumOSVersion": "12.0"}, f, fmt=plistlib.FMT_BINARY)
        metadata(app_data, identifier, 2)
        file(os.path.join(app_data, "Documents", "weights.json"), 800)
        file(os.path.join(app_data, "Library", "Preferences", identifier + ".plist"), 150)
        file(os.path.join(app_data, "Library", "Caches", "k.bin"), 90)
        folder(os.path.join(app_data, "tmp"))
    else:
        file(os.path.join(app_data, "Library", "Application Support", "db.sqlite"), 1200)


def mac(out):
    containers = os.path.join(out, "mac", "Library", "Containers")
    app = os.path.join(containers, "com.example.mac")
    data = os.path.join(app, "Data")
    file(os.path.join(data, "Documents", "a.txt"), 100)
    file(os.path.join(data, "Library", "Caches", "b.bin"), 200)
    file(os.path.join(data, "Library", "Preferences", "com.example.mac.plist"), 50)
    folder(os.path.join(out, "mac", "Desktop"))
    file(os.path.join(out, "mac", "Desktop", "secret.txt"), 7777)
    os.symlink("../../../../Desktop", os.path.join(data, "Desktop"))
    with open(os.path.join(app, ".com.apple.containermanagerd.metadata.plist"), "wb") as f:
        plistlib.dump({"MCMMetadataIdentifier": "com.example.mac"}, f, fmt=plistlib.FMT_BINARY)
    group = os.path.join(out, "mac", "Library", "Group Containers", "ABCDE12345.com.example.shared")
    file(os.path.join(group, "shared.db"), 640)
    file(os.path.join(group, "Library", "Caches", "g.bin"), 64)


def no_containers(out):
    folder(os.path.join(out, "empty"))
    checkout = os.path.join(out, "checkout")
    folder(os.path.join(checkout, ".git", "objects"))
    file(os.path.join(checkout, "Package.swift"), 300)
    file(os.path.join(checkout, "Sources", "App", "main.swift"), 120)
    file(os.path.join(checkout, "tmp", "build.log"), 10)
    with_data = os.path.join(out, "checkout-with-data")
    folder(os.path.join(with_data, ".git"))
    folder(os.path.join(with_data, "App.xcodeproj"))
    package(os.path.join(with_data, "UITests", "SampleData.xcappdata"), "com.example.app", True)
    home = os.path.join(out, "home")
    for name in ("Desktop", "Documents", "Downloads", "Music", "Pictures", "Library/Preferences"):
        folder(os.path.join(home, name))
    file(os.path.join(home, "Documents", "letter.txt"), 42)


def main():
    out = sys.argv[1]
    if os.path.exists(out):
        shutil.rmtree(out)
    folder(out)
    containers = device(out)
    package(os.path.join(out, "WeightTracker.xcappdata"), "com.example.WeightTracker", True)
    package(os.path.join(out, "Trimmed.xcappdata"), None, False)
    folder(os.path.join(out, "packages"))
    for name in ("WeightTracker.xcappdata", "Trimmed.xcappdata"):
        shutil.copytree(os.path.join(out, name), os.path.join(out, "packages", name))
    subprocess.run(["zip", "-qr", os.path.join(out, "WeightTracker.xcappdata.zip"), "WeightTracker.xcappdata"],
                   cwd=out, check=True)
    subprocess.run(["tar", "--xattrs", "--xattrs-include=user.*", "-czf", os.path.join(out, "Containers.tar.gz"),
                    "-C", os.path.dirname(containers), "Containers"], check=True)
    mac(out)
    no_containers(out)


if __name__ == "__main__":
    main()
