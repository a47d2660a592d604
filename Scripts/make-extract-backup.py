#!/usr/bin/env python3
"""Device backups with their payloads, for `appdata extract` (issue 33): what each app's files
hold, not only their length. Written as iOS 10.2 and later write them (Docs/backups.md), with
Python's standard library and `cryptography` for the encrypted one.

Usage: make-extract-backup.py OUTDIR [--big BYTES] [--files N --file-size BYTES]

OUTDIR/plain       an app com.example.extract (nested folders, an empty folder and an empty file,
                   a symlink, modes, modification times, extended attributes on a file and a
                   folder, a non-ASCII name), its group and its widget; payloads at
                   <fileID[0:2]>/<fileID>
OUTDIR/encrypted   the same rows, encrypted with make-test-backup's PASSWORD: each payload
                   AES-256-CBC (zero IV, PKCS#7) with a key of its own, wrapped (RFC 3394) with
                   its protection class's key, in the MBFile's EncryptionKey (4-byte
                   little-endian class, then the 40-byte wrapped key); one file whose Size is
                   10 bytes more than its payload (a live database)
OUTDIR/expected.json   per domain, per path: kind, mode, mtime, sha256 and length of the content,
                   symlink target, extended attributes (hex)
With --big BYTES, the app also holds Documents/big.bin of BYTES (the benchmark's large file);
with --files N, N more files of --file-size BYTES each in Documents/dNN/ (the benchmark's many files).
"""
import hashlib
import importlib.util
import json
import os
import plistlib
import random
import sqlite3
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("backup", os.path.join(HERE, "make-test-backup.py"))
backup = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(backup)

UID = plistlib.UID
APP = "com.example.extract"
GROUP = "group.com.example.extract"
WIDGET = "com.example.extract.widget"


def rows(rng, big=0, files=0, file_size=0):
    """(domain, relativePath, kind, mode, mtime, content, target, xattrs, protection class)."""
    app, group, widget = "AppDomain-" + APP, "AppDomainGroup-" + GROUP, "AppDomainPlugin-" + WIDGET
    folder = lambda domain, path, mode=0o755, mtime=1_700_000_000, xattrs=None: (domain, path, "folder", mode, mtime, None, None, xattrs or {}, 0)
    file = lambda domain, path, content, mode=0o644, mtime=1_700_000_100, xattrs=None, cls=3: (domain, path, "file", mode, mtime, content, None, xattrs or {}, cls)
    link = lambda domain, path, target: (domain, path, "symlink", 0o755, 1_700_000_200, None, target, {}, 0)
    result = [
        folder(app, ""), folder(app, "Documents"), folder(app, "Documents/Empty", mode=0o700),
        file(app, "Documents/notes.txt", b"hello from the backup\n" * 50, xattrs={"com.example.tag": b"blue"}),
        file(app, "Documents/empty.txt", b"", mode=0o600, mtime=1_600_000_000),
        folder(app, "Documents/Nested", xattrs={"com.example.folder": b"\x00\x01\x02"}), folder(app, "Documents/Nested/a"),
        file(app, "Documents/Nested/a/deep.bin", rng.randbytes(70_000), mode=0o640, cls=4),
        file(app, "Documents/caf\u00e9.txt", "caf\u00e9 au lait".encode()),
        file(app, "Documents/exact-block.bin", rng.randbytes(4096)),
        link(app, "Documents/link", "notes.txt"),
        folder(app, "Library"), folder(app, "Library/Preferences"),
        file(app, "Library/Preferences/" + APP + ".plist", plistlib.dumps({"PSLegacyStoragePathUsed": True}, fmt=plistlib.FMT_BINARY)),
        file(app, "Library/Application Support/live.sqlite", rng.randbytes(3000), cls=2),
        folder(group, ""), file(group, "Shared.sqlite", rng.randbytes(5000)), folder(group, "Library"),
        folder(widget, ""), folder(widget, "Documents"), file(widget, "Documents/w.json", b'{"w": 1}'),
    ]
    if big:
        result.append(file(app, "Documents/big.bin", None))  # written in chunks, not held
    for index in range(files):
        if index % 100 == 0:
            result.append(folder(app, f"Documents/d{index // 100:03d}"))
        result.append(file(app, f"Documents/d{index // 100:03d}/f{index:05d}.bin", rng.randbytes(file_size)))
    return result


def big_content(size):
    """`size` bytes of a fixed pattern, 1 MiB at a time."""
    block = hashlib.sha256(b"big").digest() * 32768
    left = size
    while left > 0:
        yield block[:min(left, len(block))]
        left -= len(block)


def mbfile(path, item, size, encryption_key=None):
    domain, relative, kind, mode, mtime, content, target, xattrs, cls = item
    type_bits = {"file": 0o100000, "folder": 0o40000, "symlink": 0o120000}[kind]
    record = {"Size": size, "Mode": type_bits | mode, "LastModified": mtime, "Birth": mtime - 10, "LastStatusChange": mtime,
              "InodeNumber": 1000, "UserID": 501, "GroupID": 501, "ProtectionClass": cls or 3, "Flags": 0,
              "RelativePath": UID(2), "$class": UID(3)}
    objects = ["$null", record, path, {"$classname": "MBFile", "$classes": ["MBFile", "NSObject"]}]
    if target is not None:
        record["Target"] = UID(len(objects))
        objects.append(target)
    if xattrs:
        record["ExtendedAttributes"] = UID(len(objects))
        objects.append(plistlib.dumps(xattrs, fmt=plistlib.FMT_BINARY))
    if encryption_key is not None:
        record["EncryptionKey"] = UID(len(objects))
        objects.append({"NS.data": encryption_key, "$class": UID(len(objects) + 1)})
        objects.append({"$classname": "NSMutableData", "$classes": ["NSMutableData", "NSData", "NSObject"]})
    return plistlib.dumps({"$version": 100000, "$archiver": "NSKeyedArchiver", "$top": {"root": UID(1)},
                           "$objects": objects}, fmt=plistlib.FMT_BINARY)


def write(folder, items, class_keys=None, big=0):
    """The backup's database and payloads; class_keys: encrypt each payload with a key of its own."""
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(33)
    db = sqlite3.connect(os.path.join(folder, "Manifest.db"))
    db.execute("CREATE TABLE Files (fileID TEXT PRIMARY KEY, domain TEXT, relativePath TEXT, flags INTEGER, file BLOB)")
    db.execute("CREATE TABLE Properties (key TEXT PRIMARY KEY, value BLOB)")
    for item in items:
        domain, relative, kind, mode, mtime, content, target, xattrs, cls = item
        identifier = backup.file_id(domain, relative)
        flags = {"file": 1, "folder": 2, "symlink": 4}[kind]
        size = 0
        key = None
        if kind == "file":
            size = big if content is None else len(content)
            chunks = big_content(big) if content is None else [content]
            stored = os.path.join(folder, identifier[:2], identifier)
            os.makedirs(os.path.dirname(stored), exist_ok=True)
            with open(stored, "wb") as f:
                if class_keys is None or size == 0:
                    for chunk in chunks:
                        f.write(chunk)
                else:
                    from cryptography.hazmat.primitives import padding
                    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
                    from cryptography.hazmat.primitives.keywrap import aes_key_wrap
                    file_key = rng.randbytes(32)
                    key = struct.pack("<I", cls) + aes_key_wrap(class_keys[cls], file_key)
                    encryptor = Cipher(algorithms.AES(file_key), modes.CBC(bytes(16))).encryptor()
                    padder = padding.PKCS7(128).padder()
                    for chunk in chunks:
                        f.write(encryptor.update(padder.update(chunk)))
                    f.write(encryptor.update(padder.finalize()) + encryptor.finalize())
            if class_keys is not None and relative.endswith("live.sqlite"):
                size += 10  # the manifest's Size of a database that changed while it was copied
        db.execute("INSERT INTO Files VALUES (?, ?, ?, ?, ?)", (identifier, domain, relative, flags, mbfile(relative, item, size, key)))
    db.commit()
    db.close()


def expected(items, big):
    result = {}
    for domain, relative, kind, mode, mtime, content, target, xattrs, cls in items:
        entry = {"kind": kind, "mode": mode, "mtime": mtime, "xattrs": {k: v.hex() for k, v in xattrs.items()}}
        if kind == "file":
            digest = hashlib.sha256()
            for chunk in (big_content(big) if content is None else [content]):
                digest.update(chunk)
            entry.update(sha256=digest.hexdigest(), length=big if content is None else len(content))
        if kind == "symlink":
            entry["target"] = target
        result.setdefault(domain, {})[relative] = entry
    return result


def write_encrypted(encrypted, items, apps, big=0):
    """An encrypted backup of `items`, with make-test-backup's PASSWORD: its payloads as write()
    encrypts them, its manifest as make-test-backup encrypts it (class 3's key wraps its key)."""
    os.makedirs(encrypted, exist_ok=True)
    backup.write_plists(encrypted, apps)
    bag, class_keys = backup.keybag_and_keys(backup.PASSWORD, 10, random.Random(15))
    write(encrypted, items, class_keys=class_keys, big=big)
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from cryptography.hazmat.primitives.keywrap import aes_key_wrap
    database_key = random.Random(7).randbytes(32)
    path = os.path.join(encrypted, "Manifest.db")
    with open(path, "rb") as f:
        data = f.read()
    padder = padding.PKCS7(128).padder()
    data = padder.update(data) + padder.finalize()
    encryptor = Cipher(algorithms.AES(database_key), modes.CBC(bytes(16))).encryptor()
    with open(path, "wb") as f:
        f.write(encryptor.update(data) + encryptor.finalize())
    backup.edit_manifest(encrypted, lambda manifest: manifest.update(
        IsEncrypted=True, BackupKeyBag=bag, ManifestKey=struct.pack("<I", 3) + aes_key_wrap(class_keys[3], database_key)))


def write_hostile_rows(folder, app):
    """Issue 38's rows a manifest may hold that are each a finding, never a silent change: two
    file rows sharing one fileID (the table rebuilt without the primary key a real one has), a
    row whose Size is 0 though its payload holds 26 bytes, a symlink target holding a NUL and one
    of 4,097 bytes; and a plain file beside them."""
    d = "AppDomain-" + app
    folder_row = lambda p: (d, p, "folder", 0o755, 1, None, None, {}, 0)
    file_row = lambda p, c: (d, p, "file", 0o644, 1, c, None, {}, 3)
    link_row = lambda p, t: (d, p, "symlink", 0o755, 1, None, t, {}, 0)
    os.makedirs(folder)
    backup.write_plists(folder, [app])
    write(folder, [folder_row(""), folder_row("Documents"), file_row("Documents/a.txt", b"shared payload"),
                   file_row("Documents/zero.txt", b"twenty-six bytes, not zero"), file_row("Documents/ok.txt", b"ok"),
                   link_row("Documents/nul", "notes.txt\0.backup"), link_row("Documents/long", "a/" * 2048 + "b")])
    db = sqlite3.connect(os.path.join(folder, "Manifest.db"))
    db.executescript("CREATE TABLE F2 AS SELECT * FROM Files; DROP TABLE Files; ALTER TABLE F2 RENAME TO Files")
    shared = db.execute("SELECT fileID FROM Files WHERE relativePath = 'Documents/a.txt'").fetchone()[0]
    db.execute("INSERT INTO Files VALUES (?, ?, ?, 1, ?)",
               (shared, d, "Documents/b.txt", mbfile("Documents/b.txt", file_row("Documents/b.txt", b"shared payload"), 14)))
    zero = db.execute("SELECT fileID FROM Files WHERE relativePath = 'Documents/zero.txt'").fetchone()[0]
    db.execute("UPDATE Files SET file = ? WHERE fileID = ?", (mbfile("Documents/zero.txt", file_row("Documents/zero.txt", b""), 0), zero))
    db.commit()
    db.close()


def main():
    out = sys.argv[1]
    big = int(sys.argv[sys.argv.index("--big") + 1]) if "--big" in sys.argv else 0
    files = int(sys.argv[sys.argv.index("--files") + 1]) if "--files" in sys.argv else 0
    file_size = int(sys.argv[sys.argv.index("--file-size") + 1]) if "--file-size" in sys.argv else 0
    items = rows(random.Random(33), big, files, file_size)
    plain = os.path.join(out, "plain")
    os.makedirs(plain, exist_ok=True)
    backup.write_plists(plain, [APP, "com.example.other"])
    write(plain, items, big=big)
    write_encrypted(os.path.join(out, "encrypted"), items, [APP, "com.example.other"], big=big)
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected(items, big), f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
