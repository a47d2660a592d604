#!/usr/bin/env python3
"""Generates a synthetic app data container for benchmarks: seeded, so the same
arguments always give the same tree.

Usage: generate-container.py --entries N [--seed S] DIR

The tree has Documents (with nested folders, a marked offline folder), Library/Application
Support, Library/Preferences, Library/Caches, tmp, mostly small files (0-16 KiB), and one
large sparse file per 10,000 entries. About 1 entry in 12 is a folder. Markers: a modern
marker on offline folders and a legacy marker on some files, as Linux stores them (user.).
"""
import argparse
import os
import random
import sys

MODERN = "user.com.apple.metadata:com_apple_backup_excludeItem"
LEGACY = "user.com.apple.MobileBackup"
MODERN_VALUE = bytes.fromhex(
    "62706c69737430305f1011636f6d2e6170706c652e6261636b75706408000000000000010100000000000000010000000000000000000000000000001c")

AREAS = [  # (top folder, share of entries)
    ("Documents", 0.35),
    ("Documents/Offline", 0.15),
    ("Library/Application Support", 0.15),
    ("Library/Preferences", 0.02),
    ("Library/Caches", 0.28),
    ("tmp", 0.05),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("dir")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    root = args.dir
    if os.path.exists(root) and os.listdir(root):
        sys.exit(f"{root}: exists and is not empty")
    os.makedirs(root, exist_ok=True)
    made = 0
    payload = bytes(range(256)) * 64  # 16 KiB

    def mkdir(path):
        nonlocal made
        os.makedirs(path, exist_ok=True)
        made += 1

    for area, _ in AREAS:
        mkdir(os.path.join(root, area))
    try:
        os.setxattr(os.path.join(root, "Documents/Offline"), MODERN, MODERN_VALUE)
    except OSError as error:
        sys.exit(f"cannot set xattrs in {root}: {error}")

    for area, share in AREAS:
        budget = int(args.entries * share)
        base = os.path.join(root, area)
        folder = base
        in_folder = 0
        created = 0
        folder_index = 0
        while created < budget and made < args.entries:
            if in_folder >= 11:
                folder_index += 1
                parent = base if folder_index % 7 == 0 else folder
                if len(os.path.relpath(parent, base).split(os.sep)) > 6:
                    parent = base
                folder = os.path.join(parent, f"d{folder_index:06d}")
                mkdir(folder)
                created += 1
                in_folder = 0
                if area.startswith("Documents") and folder_index % 50 == 0:
                    os.setxattr(folder, MODERN, MODERN_VALUE)
                continue
            name = os.path.join(folder, f"f{created:07d}.bin")
            with open(name, "wb") as handle:
                if made % 10000 == 5000:
                    handle.truncate(rng.randrange(8, 64) << 20)  # large and sparse
                else:
                    handle.write(payload[: rng.randrange(0, 16384)])
            if made % 97 == 0:
                os.setxattr(name, LEGACY, b"\x01")
            made += 1
            created += 1
            in_folder += 1
    print(f"{root}: {made} entries", file=sys.stderr)


if __name__ == "__main__":
    main()
