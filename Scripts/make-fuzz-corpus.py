#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpus (Fuzz/corpus/NAME/) and the regression inputs for the
defect classes of issue 19 (Fuzz/regressions/NAME/): small, valid inputs of each kind the
parsers read, so that libFuzzer starts from real shapes, and one input per known defect, which
`make test` replays in-process (FuzzRegressionTests) and the fixed-seed mutation run mutates.

Usage: make-fuzz-corpus.py [FUZZDIR]     (default: Fuzz/ beside this script's folder)

Deterministic: the same bytes on every run, so the committed files only change when this does.
"""
import gzip
import importlib.util
import io
import json
import os
import plistlib
import random
import sqlite3
import struct
import sys
import tarfile
import tempfile
import zipfile
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


backup = load("backup", "make-test-backup.py")
hostile = load("hostile", "hostile-inputs.py")
archives_script = load("archives", "make-test-archives.py")

MARKER = bytes.fromhex("62706c69737430305f1011636f6d2e6170706c652e6261636b75706408000000000000010100000000000000010000000000000000000000000000001c")


def write(folder, name, data):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def plists():
    date = datetime(2026, 11, 1, 12, 0)
    return {
        "metadata": {"MCMMetadataIdentifier": "com.example.app", "MCMMetadataContentClass": 2,
                     "MCMMetadataUUID": "0A1B2C3D-0000-4000-8000-000000000000"},
        "appdatainfo": {"CFBundleIdentifier": "com.example.app", "XCApplicationName": "Example",
                        "XCDownloadDate": "2019-02-02 11:31.02.515", "XCExecutableVersion": "1.0"},
        "manifest": {"IsEncrypted": False, "Version": "10.0", "Date": date, "WasPasscodeSet": False,
                     "Applications": {"com.example.app": {"CFBundleIdentifier": "com.example.app", "CFBundleVersion": "1",
                                                          "PlaceholderIcon": bytes(range(64))}},
                     "Lockdown": {"ProductVersion": "17.1", "DeviceName": "Test \u00e9 iPhone", "UniqueDeviceID": "0000"},
                     "ManifestKey": b"\x03\x00\x00\x00" + bytes(40), "Real": 1.5, "Neg": -3, "Big": 2**63 - 1},
        "status": {"SnapshotState": "finished", "IsFullBackup": True, "Date": date, "Version": "3.3"},
    }


def corpus(fuzz):
    root = os.path.join(fuzz, "corpus")
    for name, value in plists().items():
        write(os.path.join(root, "bplist"), name + ".plist", plistlib.dumps(value, fmt=plistlib.FMT_BINARY))
        write(os.path.join(root, "xmlplist"), name + ".plist", plistlib.dumps(value, fmt=plistlib.FMT_XML))
    write(os.path.join(root, "bplist"), "marker.plist", MARKER)
    write(os.path.join(root, "bplist"), "mbfile.plist", backup.mbfile("Documents/a.txt", 12, 1, 0))
    write(os.path.join(root, "xmlplist"), "features.plist",
          '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
          '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n<plist version="1.0"><!-- a comment -->\n<dict>'
          '<key>a&amp;b</key><string>&lt;&#x41;&#66;<![CDATA[<raw>]]></string><key>e</key><dict/><key>n</key><array/>'
          '<key>t</key><true/><key>f</key><false/><key>d</key><date>2024-05-01T09:30:00Z</date>'
          '<key>x</key><data>\n  AAEC\n  Aw==\n</data><key>i</key><integer>-42</integer><key>r</key><real>1e3</real>'
          '</dict></plist>\n')
    for layout in (0, 1):
        for flags, size in ((1, 123456), (2, 0), (4, 0)):
            write(os.path.join(root, "mbfile"), f"mbfile-{layout}-{flags}.bin", backup.mbfile("Library/x", size, flags, layout))
    rng = random.Random(19)
    bag, _ = backup.keybag_and_keys("pw", 10, rng)
    write(os.path.join(root, "keybag"), "keybag-dpic.bin", b"\x00" + bag)
    old_bag, _ = backup.keybag_and_keys("pw", None, rng)
    write(os.path.join(root, "keybag"), "keybag-old.bin", b"\x00" + old_bag)
    write(os.path.join(root, "keybag"), "manifestkey.bin", b"\x01" + struct.pack("<I", 3) + rng.randbytes(40))
    write(os.path.join(root, "json"), "config.json", json.dumps({
        "maxFileSize": "10MB", "maxBackupSize": 104857600, "warnAt": 0.9, "rules": {"cache-in-backup": "error", "unknown-location": "off"},
        "ignore": ["Documents/Inbox/**"], "budgets": [{"path": "Library/Application Support/**", "maxBytes": "50M"}],
        "containers": {"com.example.app": {"maxBackupSize": "1G"}}}, indent=2))
    write(os.path.join(root, "json"), "baseline.json", json.dumps({
        "schemaVersion": 1, "tool": {"name": "appdata", "version": "0"}, "id": "com.example.app",
        "summary": {"backup": {"files": 1, "bytes": 10}, "categories": {c: {"files": 0, "bytes": 0, "allocatedBytes": 0}
                                                                        for c in ("critical", "offline", "cached", "temporary", "other")}},
        "largest": [{"path": "Documents/a", "bytes": 10, "category": "critical"}],
        "entries": [{"path": "Documents/a", "bytes": 10, "category": "critical"}]}))
    write(os.path.join(root, "json"), "numbers.json", '[0, -1, 1.5e3, 18446744073709551615, -9223372036854775808, "\\u00e9\\ud83d\\ude00", true, null]')
    for index, text in enumerate(["Documents/**/*.jpg\nDocuments/a/b/c.jpg", "**/Caches\nLibrary/Caches/x/y", "[!a]?*\nxyz/q",
                                  "Library/[a-c]*/**\nLibrary/b/x", "a/**/b\na/b", "\\*\n*"]):
        write(os.path.join(root, "glob"), f"glob-{index}.txt", text)
    archives(os.path.join(root, "archive"))
    write(os.path.join(root, "manifest"), "Manifest.db", manifest_db())


def archives(folder):
    def tar(name, compress, pax):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
            for path, data, kind in (("c/Documents", b"", tarfile.DIRTYPE), ("c/Documents/a.txt", b"hello", tarfile.REGTYPE),
                                     ("c/Library/Caches/b", b"x" * 100, tarfile.REGTYPE), ("c/tmp/link", b"", tarfile.SYMTYPE)):
                info = tarfile.TarInfo(path)
                info.type = kind
                info.size = len(data)
                if kind == tarfile.SYMTYPE:
                    info.linkname = "../Documents"
                if pax and path.endswith("a.txt"):
                    info.pax_headers = {"SCHILY.xattr.com.apple.metadata:com_apple_backup_excludeItem": MARKER.decode("latin-1"),
                                        "SCHILY.xattr.user.com.apple.MobileBackup": "\x01"}
                archive.addfile(info, io.BytesIO(data))
        # gzip's header carries a time: 0, so the file is the same on every run.
        write(folder, name, gzip.compress(buffer.getvalue(), mtime=0) if compress else buffer.getvalue())
    tar("pax.tar", False, True)
    tar("plain.tgz", True, False)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, data in (("c/Documents/a.txt", b"hello"),
                           ("__MACOSX/c/Documents/._a.txt", archives_script.appledouble({"com.apple.MobileBackup": b"\x01"})),
                           ("c/Documents/._b.txt", archives_script.appledouble({"com.apple.metadata:com_apple_backup_excludeItem": MARKER}))):
            archive.writestr(zipfile.ZipInfo(path, date_time=(2026, 11, 1, 12, 0, 0)), data)
    write(folder, "finder.zip", buffer.getvalue())


def manifest_db():
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "Manifest.db")
        db = sqlite3.connect(path)
        db.execute("PRAGMA page_size=512")
        db.execute("CREATE TABLE Files (fileID TEXT PRIMARY KEY, domain TEXT, relativePath TEXT, flags INTEGER, file BLOB)")
        db.execute("CREATE TABLE Properties (key TEXT PRIMARY KEY, value BLOB)")
        for index, (domain, relative, flags, size) in enumerate((
                ("AppDomain-com.example.app", "Documents", 2, 0), ("AppDomain-com.example.app", "Documents/a.txt", 1, 12),
                ("AppDomainGroup-group.example", "tmp/x", 1, 3), ("HomeDomain", "Library/y", 1, 5))):
            db.execute("INSERT INTO Files VALUES (?, ?, ?, ?, ?)", (backup.file_id(domain, relative), domain, relative, flags,
                                                                   backup.mbfile(relative, size, flags, index % 2)))
        db.commit()
        db.close()
        with open(path, "rb") as f:
            return f.read()


def regressions(fuzz):
    """One input per defect class of issue 19, for the target that reads it."""
    root = os.path.join(fuzz, "regressions")
    huge = 1 << 63
    write(os.path.join(root, "mbfile"), "uid-2-63.bin", hostile.bplist(hostile.mbfile_objects(huge)))
    write(os.path.join(root, "mbfile"), "offset-2-63.bin", hostile.bplist(hostile.mbfile_objects(1), offset_override={8: huge}))
    write(os.path.join(root, "mbfile"), "reference-2-63.bin",
          hostile.bplist([hostile.o_dict([(3, 1), (4, huge)])] + hostile.mbfile_objects(1)[1:], ref_size=8))
    write(os.path.join(root, "bplist"), "expansion-2-40.plist", hostile.expansion_bomb(40))
    write(os.path.join(root, "bplist"), "expansion-in-dict.plist", hostile.expansion_bomb(40, top_dict_key="Lockdown"))
    write(os.path.join(root, "bplist"), "uid-2-64.plist", hostile.bplist(hostile.mbfile_objects((1 << 64) - 1)))
    write(os.path.join(root, "bplist"), "cycle.plist", hostile.bplist([hostile.o_array([0])], offset_size=1))
    write(os.path.join(root, "xmlplist"), "deep.plist", "<plist>" + "<array>" * 20_000 + "</array>" * 20_000 + "</plist>")
    write(os.path.join(root, "xmlplist"), "entity.plist",
          '<!DOCTYPE plist [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><plist><string>&b;</string></plist>')
    write(os.path.join(root, "json"), "uint64-overflow.json", '{"maxFileSize":18446744073709551616}')
    write(os.path.join(root, "json"), "warnat-1e19.json", '{"maxBackupSize":"1G","warnAt":1e19}')
    write(os.path.join(root, "json"), "budget-1e300.json", '{"budgets":[{"path":"Documents","maxBytes":1e300}]}')
    write(os.path.join(root, "glob"), "stars-8000.txt", "**" * 8000 + "\n" + "a/" * 200 + "b")
    write(os.path.join(root, "glob"), "stars-mixed.txt", "*" * 3000 + "?" * 10 + "\n" + "x" * 5000)
    write(os.path.join(root, "glob"), "alternating-4096.txt", "*?" * 2048 + "\n" + "x" * 4095 + "/y")
    rng = random.Random(19)
    bag, _ = backup.keybag_and_keys("pw", 10, rng)
    for tag, value, name in (("ITER", 0, "iter-zero"), ("DPIC", 0, "dpic-zero"), ("ITER", 0xFFFFFFFF, "iter-max")):
        edited = bytearray(bag)
        at = edited.index(tag.encode())
        edited[at + 8:at + 12] = struct.pack(">I", value)
        write(os.path.join(root, "keybag"), f"keybag-{name}.bin", b"\x00" + bytes(edited))
    write(os.path.join(root, "keybag"), "record-past-end.bin", b"\x00VERS\xff\xff\xff\xff")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        info = tarfile.TarInfo("Documents/" + "/".join(["t"] * 20_000) + "/f")
        info.size = 1
        archive.addfile(info, io.BytesIO(b"x"))
    write(os.path.join(root, "archive"), "deep-20000.tar", buffer.getvalue())
    for name, schema, insert in (
        ("generated-path", "CREATE TABLE Files (fileID TEXT PRIMARY KEY, domain TEXT, flags INTEGER, file BLOB, "
                           "relativePath TEXT AS (printf('%.*c', 900000000, 'a')) VIRTUAL)",
         "INSERT INTO Files (fileID, domain, flags, file) VALUES ('0', 'AppDomain-a', 1, x'00')"),
        ("generated-blob", "CREATE TABLE Files (fileID TEXT PRIMARY KEY, domain TEXT, relativePath TEXT, flags INTEGER, "
                           "file BLOB AS (zeroblob(900000000)) VIRTUAL)",
         "INSERT INTO Files (fileID, domain, relativePath, flags) VALUES ('0', 'AppDomain-a', 'Documents/a', 1)"),
        ("view", "CREATE TABLE R (fileID, domain, relativePath, flags, file); CREATE VIEW Files AS SELECT fileID, domain, "
                 "printf('%.*c', 900000000, 'a') AS relativePath, flags, file FROM R",
         "INSERT INTO R VALUES ('0', 'AppDomain-a', 'Documents/a', 1, x'00')"),
    ):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "Manifest.db")
            hostile.hostile_database(path, schema, [(insert, ())], page_size=512)
            with open(path, "rb") as f:
                write(os.path.join(root, "manifest"), name + ".db", f.read())


def main():
    fuzz = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(HERE), "Fuzz")
    corpus(fuzz)
    regressions(fuzz)
    return 0


if __name__ == "__main__":
    sys.exit(main())
