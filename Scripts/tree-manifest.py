#!/usr/bin/env python3
"""Prints a JSON manifest of a folder tree for tests: every entry's type, mode, size,
SHA-256 of its bytes, symlink target, extended attributes and modification time,
never following symlinks.

Usage: tree-manifest.py DIR [--no-times] [--drop-attr NAME]...
"""
import argparse
import hashlib
import json
import os
import stat


def describe(path, with_times, dropped):
    st = os.lstat(path)
    entry = {"mode": oct(stat.S_IMODE(st.st_mode))}
    if stat.S_ISDIR(st.st_mode):
        entry["type"] = "dir"
    elif stat.S_ISLNK(st.st_mode):
        entry["type"] = "link"
        entry["target"] = os.readlink(path).decode("utf-8", "backslashreplace") if isinstance(path, bytes) else os.readlink(path)
    elif stat.S_ISREG(st.st_mode):
        entry["type"] = "file"
        entry["size"] = st.st_size
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        entry["sha256"] = digest.hexdigest()
    else:
        entry["type"] = "other"
    if with_times and not stat.S_ISDIR(st.st_mode):
        entry["mtime_ns"] = st.st_mtime_ns
    attrs = {}
    if not stat.S_ISLNK(st.st_mode):
        for name in os.listxattr(path, follow_symlinks=False):
            if name not in dropped:
                attrs[name] = os.getxattr(path, name, follow_symlinks=False).hex()
    entry["xattrs"] = attrs
    return entry


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--no-times", action="store_true")
    parser.add_argument("--drop-attr", action="append", default=[])
    args = parser.parse_args()
    root = os.fsencode(args.dir)
    manifest = {}
    for folder, folders, files in os.walk(root, followlinks=False):
        for name in folders + files:
            full = os.path.join(folder, name)
            key = os.path.relpath(full, root).decode("utf-8", "backslashreplace")
            manifest[key] = describe(full, not args.no_times, set(args.drop_attr))
    print(json.dumps(manifest, sort_keys=True, indent=1))


if __name__ == "__main__":
    main()
