#!/usr/bin/env python3
"""Builds the archive fixtures for the archive tests: one container, on disk (markers as Linux
stores them, with the user. prefix) and in every form a Mac or Linux puts it in an archive.

Usage: make-test-archives.py OUTDIR

OUTDIR/tree/Data            the container on disk
OUTDIR/pax-schily.tar       pax, SCHILY.xattr.<bare name> (what bsdtar on a Mac writes)
OUTDIR/pax-libarchive.tar   pax, LIBARCHIVE.xattr.<url-encoded name>=<base64>
OUTDIR/appledouble.tar      ._NAME AppleDouble entries beside the files, no pax attributes
OUTDIR/finder.zip           __MACOSX/…/._NAME AppleDouble entries at the end (Finder, ditto)
OUTDIR/gnu.tar.gz           GNU tar --xattrs of the tree on disk (user. names), gzip
OUTDIR/pax-schily.tar.xz    the first one, xz-compressed
"""
import base64
import io
import lzma
import os
import struct
import subprocess
import sys
import tarfile
import urllib.parse
import zipfile

MODERN = "com.apple.metadata:com_apple_backup_excludeItem"
LEGACY = "com.apple.MobileBackup"
MODERN_VALUE = bytes.fromhex(
    "62706c69737430305f1011636f6d2e6170706c652e6261636b75706408000000000000010100000000000000010000000000000000000000000000001c")

# (path, kind, size or None, markers)
ENTRIES = [
    ("Data", "dir", None, {}),
    ("Data/.com.apple.mobile_container_manager.metadata.plist", "file", 120, {}),
    ("Data/Documents", "dir", None, {}),
    ("Data/Documents/a.bin", "file", 5000, {}),
    ("Data/Documents/Offline", "dir", None, {MODERN: MODERN_VALUE}),
    ("Data/Documents/Offline/m.bin", "file", 300, {}),
    ("Data/Documents/Offline/deep", "dir", None, {}),
    ("Data/Documents/Offline/deep/n.bin", "file", 700, {}),
    ("Data/Documents/legacy.bin", "file", 40, {LEGACY: b"\x01"}),
    ("Data/Documents/both.bin", "file", 50, {MODERN: MODERN_VALUE, LEGACY: b"\x01"}),
    ("Data/Documents/zero.bin", "file", 60, {LEGACY: b"\x00"}),
    ("Data/Library", "dir", None, {}),
    ("Data/Library/Application Support", "dir", None, {}),
    ("Data/Library/Application Support/db.sqlite", "file", 4096, {}),
    ("Data/Library/Caches", "dir", None, {}),
    ("Data/Library/Caches/c.bin", "file", 2, {}),
    ("Data/tmp", "dir", None, {}),
    ("Data/tmp/t.bin", "file", 3, {}),
    ("Data/Junk", "dir", None, {}),
    ("Data/Junk/j.bin", "file", 1, {}),
]


def content(path, size):
    seed = sum(path.encode())
    return bytes((seed + index * 7) % 251 for index in range(size))


def appledouble(attributes):
    """An AppleDouble file as macOS copyfile writes it: header, Finder Info, ATTR block."""
    names = [(name.encode() + b"\0", value) for name, value in attributes.items()]
    cursor = 120
    for encoded, _ in names:
        cursor += (11 + len(encoded) + 3) & ~3
    data_start = cursor
    data, offsets = b"", []
    for _, value in names:
        offsets.append(data_start + len(data))
        data += value
    total = data_start + len(data)
    entries = b""
    for (encoded, value), offset in zip(names, offsets):
        entry = struct.pack(">IIHB", offset, len(value), 0, len(encoded)) + encoded
        entries += entry + b"\0" * (((len(entry) + 3) & ~3) - len(entry))
    attr_header = b"ATTR" + struct.pack(">IIII", 0, total, data_start, len(data)) + b"\0" * 12 + struct.pack(">HH", 0, len(names))
    header = struct.pack(">II", 0x00051607, 0x00020000) + b"\0" * 16 + struct.pack(">H", 2)
    header += struct.pack(">III", 9, 50, total - 50) + struct.pack(">III", 2, total, 0)
    blob = header + b"\0" * 32 + b"\0\0" + attr_header + entries + data
    assert len(blob) == total, (len(blob), total)
    return blob


def tar_info(path, kind, size):
    info = tarfile.TarInfo(path)
    info.mtime = 1318413600
    if kind == "dir":
        info.type, info.mode = tarfile.DIRTYPE, 0o755
    else:
        info.size, info.mode = size, 0o644
    return info


def write_tar(target, pax):
    with tarfile.open(target, "w", format=tarfile.PAX_FORMAT) as archive:
        for path, kind, size, markers in ENTRIES:
            info = tar_info(path, kind, size)
            info.pax_headers = pax(markers)
            archive.addfile(info, io.BytesIO(content(path, size)) if kind == "file" else None)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    # On disk, with the user. prefix Linux needs.
    for path, kind, size, markers in ENTRIES:
        full = os.path.join(out, "tree", path)
        if kind == "dir":
            os.makedirs(full, exist_ok=True)
        else:
            with open(full, "wb") as handle:
                handle.write(content(path, size))
        for name, value in markers.items():
            os.setxattr(full, "user." + name, value)

    write_tar(os.path.join(out, "pax-schily.tar"),
              lambda markers: {"SCHILY.xattr." + name: value.decode("latin-1") for name, value in markers.items()})
    write_tar(os.path.join(out, "pax-libarchive.tar"),
              lambda markers: {"LIBARCHIVE.xattr." + urllib.parse.quote(name, safe=""): base64.b64encode(value).decode()
                               for name, value in markers.items()})
    with open(os.path.join(out, "pax-schily.tar"), "rb") as source, lzma.open(os.path.join(out, "pax-schily.tar.xz"), "wb") as target:
        target.write(source.read())

    # bsdtar on a Mac: "._NAME" just before NAME.
    with tarfile.open(os.path.join(out, "appledouble.tar"), "w", format=tarfile.USTAR_FORMAT) as archive:
        for path, kind, size, markers in ENTRIES:
            if markers:
                folder, name = os.path.split(path)
                blob = appledouble(markers)
                info = tar_info(os.path.join(folder, "._" + name), "file", len(blob))
                archive.addfile(info, io.BytesIO(blob))
            archive.addfile(tar_info(path, kind, size), io.BytesIO(content(path, size)) if kind == "file" else None)

    # Finder and ditto -c -k --sequesterRsrc: __MACOSX/ at the end.
    with zipfile.ZipFile(os.path.join(out, "finder.zip"), "w", zipfile.ZIP_DEFLATED) as archive:
        for path, kind, size, markers in ENTRIES:
            if kind == "dir":
                archive.writestr(path + "/", b"")
            else:
                archive.writestr(path, content(path, size))
        for path, kind, size, markers in ENTRIES:
            if markers:
                folder, name = os.path.split(path)
                archive.writestr("__MACOSX/" + folder + "/._" + name, appledouble(markers))

    subprocess.run(["tar", "--xattrs", "--xattrs-include=user.*", "-czf", os.path.join(out, "gnu.tar.gz"),
                    "-C", os.path.join(out, "tree"), "Data"], check=True)


if __name__ == "__main__":
    main()
