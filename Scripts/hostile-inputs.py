#!/usr/bin/env python3
"""Hostile inputs for appdata, one per defect class of Docs/SECURITY.md ("Untrusted input"), and
a runner that holds the binary to its bounds on each: exit 0, 1 or 2, no signal, at most 512 MiB
of peak RSS, no terminal escape on stdout or stderr, and, where a case says so, at most so much
work as appdata counts it (decompressed bytes, entries read, key rounds, symlink steps: the line
APPDATA_DEBUG_STATS=1 makes it write). Time is no bound: a case still running after HANG_SECONDS
(or its own longer `hang`) is killed as hung, a detector of hangs only, set at 10 times or more
what the case takes in the debug build on a loaded 2-core machine (issue 49).

Usage: hostile-inputs.py make OUTDIR          builds OUTDIR/<case>/ and OUTDIR/cases.json
       hostile-inputs.py run BINARY OUTDIR [--only PREFIX]...
                                              runs the cases; prints one JSON line per case
                                              ({name, status, signal, seconds, cpuSeconds, rssMiB,
                                              decompressedBytes, entriesRead, keyRounds,
                                              symlinkSteps, stderr, problems}) and 'N passed, N failed'
       hostile-inputs.py mutate BINARY CORPUS[,CORPUS...] OUTDIR [--seed S] [--count N]
                                              a fixed-seed mutation run: each file of each
                                              CORPUS/KIND/ (Fuzz/corpus, Fuzz/regressions)
                                              mutated N times, put where appdata reads that
                                              kind of file, and run through the binary

Every case is built here from its description (none is a file someone sent), so the suite can be
rebuilt anywhere with Python's standard library and `cryptography` (for the encrypted backups).
"""
import importlib.util
import io
import json
import os
import plistlib
import random
import resource
import shutil
import sqlite3
import struct
import subprocess
import sys
import tarfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("backup", os.path.join(HERE, "make-test-backup.py"))
backup = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(backup)

# A hang detector, never a measure of speed: how fast these cases run belongs in `make bench`.
HANG_SECONDS = 60
RSS_MIB = 512
# "Refused before it is expanded": the most a bomb may make appdata decompress, the 256 MiB
# bound on a backup's Manifest.db (and on an adb backup's ratio test) and 1 MiB more.
BOMB_BYTES = (256 << 20) + (1 << 20)
PASSWORD = backup.PASSWORD
ESCAPES = [b"\x1b", b"\x07", b"\xc2\x9b", b"\x9b"]

# MARK: - Binary plists written by hand (offsets, references and UIDs of any width and value)


def bplist(objects, top=0, ref_size=1, offset_size=8, offset_override=None):
    """A bplist00 from encoded objects (each a function of ref_size returning bytes);
    offset_override maps an object index to the offset written for it."""
    body = b"bplist00"
    offsets = []
    for encode in objects:
        offsets.append(len(body))
        body += encode(ref_size)
    for index, offset in (offset_override or {}).items():
        offsets[index] = offset
    table = len(body)
    for offset in offsets:
        body += offset.to_bytes(offset_size, "big")
    body += bytes(6) + bytes([offset_size, ref_size]) + struct.pack(">QQQ", len(objects), top, table)
    return body


def ref(value, size):
    return value.to_bytes(size, "big")


def o_string(text):
    data = text.encode()
    assert len(data) < 15
    return lambda size: bytes([0x50 | len(data)]) + data


def o_int8(value):
    return lambda size: b"\x13" + struct.pack(">q", value)


def o_uid8(value):
    return lambda size: b"\x87" + value.to_bytes(8, "big")


def o_array(items):
    assert len(items) < 15
    return lambda size: bytes([0xA0 | len(items)]) + b"".join(ref(i, size) for i in items)


def o_dict(pairs):
    assert len(pairs) < 15
    return lambda size: (bytes([0xD0 | len(pairs)]) + b"".join(ref(k, size) for k, _ in pairs)
                         + b"".join(ref(v, size) for _, v in pairs))


def mbfile_objects(root_uid, size=100):
    """An MBFile archive: 0 top {$top: 1, $objects: 2}; 1 {root: UID}; 2 [$null, record]; ..."""
    return [
        o_dict([(3, 1), (4, 2)]),           # 0: {"$top": 1, "$objects": 2}
        o_dict([(5, 6)]),                   # 1: {"root": 6}
        o_array([7, 8]),                    # 2: ["$null", record]
        o_string("$top"),                   # 3
        o_string("$objects"),               # 4
        o_string("root"),                   # 5
        o_uid8(root_uid),                   # 6
        o_string("$null"),                  # 7
        o_dict([(9, 10)]),                  # 8: {"Size": 10}
        o_string("Size"),                   # 9
        o_int8(size),                       # 10
    ]


def expansion_bomb(levels=40, top_dict_key=None):
    """levels arrays, each naming the next twice: 2^levels objects once references are copies."""
    objects = [o_array([i + 1, i + 1]) for i in range(levels)] + [o_int8(0)]
    if top_dict_key is None:
        return bplist(objects, top=0, offset_size=1)
    # {key: bomb} so that a reader looking for a dictionary gets one.
    shift = 2
    objects = [o_dict([(1, 2)]), o_string(top_dict_key)] + [o_array([i + shift + 1, i + shift + 1]) for i in range(levels)] + [o_int8(0)]
    return bplist(objects, top=0, offset_size=1)


# MARK: - Building blocks


def container(folder):
    os.makedirs(os.path.join(folder, "Documents"), exist_ok=True)
    os.makedirs(os.path.join(folder, "Library", "Caches"), exist_ok=True)
    with open(os.path.join(folder, "Documents", "notes.txt"), "wb") as f:
        f.write(b"hello\n")


def plain_backup(folder, rows=None, applications=("com.example.app",)):
    os.makedirs(folder, exist_ok=True)
    backup.write_plists(folder, list(applications))
    if rows is None:
        rows = [("AppDomain-com.example.app", "Documents", 2, 0, None),
                ("AppDomain-com.example.app", "Documents/a.txt", 1, 10, None)]
    backup.write_database(folder, rows, stored=False)


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def set_keybag_record(folder, tag, value):
    """Rewrites one header record's 4-byte value in Manifest.plist's BackupKeyBag."""
    def change(manifest):
        bag = bytearray(manifest["BackupKeyBag"])
        at = bag.index(tag.encode())
        bag[at + 8:at + 12] = struct.pack(">I", value)
        manifest["BackupKeyBag"] = bytes(bag)
    backup.edit_manifest(folder, change)


GENERATED = (" AS (printf('%.*c', 900000000, 'a')) VIRTUAL", " AS (zeroblob(900000000)) VIRTUAL")


def hostile_database(path, schema, inserts, page_size=None):
    """A SQLite file whose schema is `schema` (generated columns allowed), holding the rows the
    (sql, parameters) pairs of `inserts` add. SQLite computes a generated column on INSERT too,
    so the rows go into the plain table and the schema is rewritten to the hostile one after."""
    db = sqlite3.connect(path)
    if page_size:
        db.execute(f"PRAGMA page_size={page_size}")
    plain = schema
    for clause in GENERATED:
        plain = plain.replace(clause, "")
    db.executescript(plain)
    for sql, values in inserts:
        db.execute(sql, values)
    db.commit()
    if plain != schema:
        db.execute("PRAGMA writable_schema=ON")
        db.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'Files'", (schema,))
        db.commit()
    db.close()


# MARK: - The cases


def make(out):
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    cases = []
    current = [""]

    def case(name, args, expect=(0, 1, 2), stderr=None, env=None, stdin=None, cwd=None, address_space=None, extract=None, hang=None,
             work=None, rss=None, contained=None):
        """args: the command line after 'appdata', with {DIR} for the folder made last; cwd (with
        {DIR} too) the folder it runs in; address_space a `ulimit -v` in bytes. extract: an
        `appdata extract` case, {"out": OUT, "absent": [paths]} ({DIR} in each): run as an
        unprivileged user, nothing below {DIR} but OUT may change, no path of `absent` may
        appear, and no symlink in OUT may resolve outside it. hang: a longer hang detector than
        HANG_SECONDS, for a case whose debug run takes more than a tenth of it. work: the most
        work appdata may count, {"decompressedBytes": N, "entriesRead": N, "keyRounds": N,
        "symlinkSteps": N} (any of them), for a case that must be refused before the work is done
        (a bomb, key rounds) or whose work is bounded (symlink resolution).
        rss: a tighter bound than RSS_MIB, in MiB (where memory is what a case tests).
        contained: an `appdata migrate` case, {"out": FOLDER or None, "absent": [paths], "keep":
        [paths]}: run as an unprivileged user, nothing below {DIR} but FOLDER (the container, for
        a run that may move entries; None for one that must change nothing) may change, no path
        of `absent` may appear, and each path of `keep` (user data inside FOLDER) must be left
        byte for byte. Every extract and migrate case has one or the other (issue 48)."""
        assert hang is None or hang >= HANG_SECONDS
        assert args[0] not in ("extract", "migrate", "restore") or (extract or contained), f"{name}: a writing case runs as nobody (extract= or contained=)"
        cases.append({"name": name, "dir": current[0], "args": args, "expect": list(expect), "stderrContains": stderr,
                      "env": env or {}, "stdin": stdin, "cwd": cwd, "addressSpace": address_space, "extract": extract,
                      "hang": hang, "work": work, "rss": rss, "contained": contained})

    def folder(name):
        path = os.path.join(out, name)
        os.makedirs(path, exist_ok=True)
        current[0] = name
        return path

    # 1. Integer traps: 8-byte UIDs, offsets and references of 2^63 and more in MBFile blobs,
    #    sizes of 2^63 - 1 in two rows of two domains, config numbers past UInt64.
    d = folder("int-bplist")
    huge = 1 << 63
    blobs = [
        bplist(mbfile_objects(huge)),                                       # UID 2^63
        bplist(mbfile_objects(1), offset_override={8: huge}),                # offset 2^63
        bplist([o_dict([(3, 1), (4, huge)])] + mbfile_objects(1)[1:], ref_size=8),  # reference 2^63
        bplist(mbfile_objects((1 << 64) - 1)),                               # UID 2^64 - 1
    ]
    rows = [("AppDomain-com.example.app", "Documents", 2, 0, None)]
    rows += [("AppDomain-com.example.app", f"Documents/blob{i}", 1, 0, blob) for i, blob in enumerate(blobs)]
    plain_backup(os.path.join(d, "backup"), rows)
    container(os.path.join(d, "container"))
    case("int-bplist", ["audit", "--format", "json", "{DIR}/backup"], expect=(0, 1))
    case("int-bplist-compare", ["audit", "--format", "json", "--backup", "{DIR}/backup", "--backup-domain",
                                "AppDomain-com.example.app", "{DIR}/container"], expect=(0, 1))

    d = folder("int-sizes")
    big = (1 << 63) - 1
    rows = [(domain, path, 1, big, None) for domain in ("AppDomain-com.example.app", "AppDomain-com.example.other")
            for path in ("Documents/a", "Documents/b")]
    plain_backup(os.path.join(d, "backup"), rows, applications=("com.example.app", "com.example.other"))
    for fmt in ("table", "json", "ndjson", "github", "junit", "sarif", "html"):
        case(f"int-sizes-{fmt}", ["audit", "--format", fmt, "--list", "all", "--max-backup-size", "1", "--max-file-size", "1",
                                  "{DIR}/backup"], expect=(1,))

    d = folder("int-config")
    container(os.path.join(d, "container"))
    write(os.path.join(d, "max.json"), b'{"maxFileSize":18446744073709551616}')
    write(os.path.join(d, "warn.json"), b'{"maxBackupSize":"1G","warnAt":1e19}')
    write(os.path.join(d, "budget.json"), b'{"budgets":[{"path":"Documents","maxBytes":1e300}]}')
    for name in ("max", "warn", "budget"):
        case(f"int-config-{name}", ["audit", "--config", "{DIR}/" + name + ".json", "{DIR}/container"], expect=(2,),
             stderr="appdata: error:")

    # 2. Recursion on input depth.
    d = folder("depth-backup")
    deep = "/".join(["d"] * 50_000)
    plain_backup(os.path.join(d, "backup"), [("AppDomain-com.example.app", "Documents/" + deep, 1, 5, None),
                                             ("AppDomain-com.example.app", "Documents/ok.txt", 1, 5, None)])
    for fmt in ("html", "json"):
        case(f"depth-backup-{fmt}", ["audit", "--format", fmt, "--list", "all", "{DIR}/backup"], expect=(0, 1))

    d = folder("depth-tar")
    with tarfile.open(os.path.join(d, "deep.tar"), "w", format=tarfile.PAX_FORMAT) as archive:
        for name, data in (("Documents/" + "/".join(["t"] * 20_000) + "/f", b"x"), ("Documents/ok.txt", b"ok")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            import io
            archive.addfile(info, io.BytesIO(data))
    case("depth-tar", ["audit", "--format", "json", "{DIR}/deep.tar"], expect=(0, 1))
    case("depth-tar-html", ["audit", "--format", "html", "--list", "all", "{DIR}/deep.tar"], expect=(0, 1))

    d = folder("depth-glob")
    container(os.path.join(d, "container"))
    write(os.path.join(d, "budget.json"), json.dumps({"budgets": [{"path": "**" * 8000, "maxBytes": 1}]}).encode())
    write(os.path.join(d, "budget-max.json"), json.dumps({"budgets": [{"path": "**" * 2048, "maxBytes": 1}]}).encode())
    case("depth-glob-budget", ["audit", "--config", "{DIR}/budget.json", "{DIR}/container"], expect=(2,),
         stderr="longer than the 4096 a glob may be")
    case("depth-glob-budget-max", ["audit", "--config", "{DIR}/budget-max.json", "{DIR}/container"], expect=(1,))
    case("depth-glob-ignore", ["audit", "--ignore", "**" * 60_000, "{DIR}/container"], expect=(2,),
         stderr="longer than the 4096 a glob may be")
    case("depth-glob-ignore-max", ["audit", "--ignore", "*?" * 2048, "{DIR}/container"], expect=(0, 1))

    # 3. SQLite runs what the file says: generated columns, a default, a view.
    for name, schema in (
        ("sqlite-generated-path", "CREATE TABLE Files (fileID TEXT PRIMARY KEY, domain TEXT, flags INTEGER, file BLOB, "
                                  "relativePath TEXT AS (printf('%.*c', 900000000, 'a')) VIRTUAL)"),
        ("sqlite-generated-blob", "CREATE TABLE Files (fileID TEXT PRIMARY KEY, domain TEXT, relativePath TEXT, flags INTEGER, "
                                  "file BLOB AS (zeroblob(900000000)) VIRTUAL)"),
        ("sqlite-view", "CREATE TABLE Real (fileID TEXT, domain TEXT, relativePath TEXT, flags INTEGER, file BLOB); "
                        "CREATE VIEW Files AS SELECT fileID, domain, printf('%.*c', 900000000, 'a') AS relativePath, flags, file FROM Real"),
    ):
        d = folder(name)
        os.makedirs(os.path.join(d, "backup"))
        backup.write_plists(os.path.join(d, "backup"), ["com.example.app"])
        target = "Real" if name == "sqlite-view" else "Files"
        columns = "(fileID, domain, flags, file)" if name == "sqlite-generated-path" else (
            "(fileID, domain, relativePath, flags)" if name == "sqlite-generated-blob" else "(fileID, domain, relativePath, flags, file)")
        inserts = []
        for i in range(3):
            values = {"sqlite-generated-path": (f"{i:040x}", "AppDomain-com.example.app", 1, backup.mbfile("x", 1, 1, 0)),
                      "sqlite-generated-blob": (f"{i:040x}", "AppDomain-com.example.app", f"Documents/{i}", 1),
                      "sqlite-view": (f"{i:040x}", "AppDomain-com.example.app", f"Documents/{i}", 1, backup.mbfile("x", 1, 1, 0))}[name]
            inserts.append((f"INSERT INTO {target} {columns} VALUES ({','.join('?' * len(values))})", values))
        hostile_database(os.path.join(d, "backup", "Manifest.db"), schema, inserts)
        case(name, ["audit", "--format", "json", "{DIR}/backup"], expect=(2,), stderr="appdata: error:")
    # The same generated column inside an encrypted backup (the decrypted database is checked too).
    d = folder("sqlite-generated-encrypted")
    shutil.copytree(os.path.join(out, "sqlite-generated-path", "backup"), os.path.join(d, "backup"))
    backup.encrypt(os.path.join(d, "backup"), dpic=10)
    case("sqlite-generated-encrypted", ["audit", "--format", "json", "--password-stdin", "{DIR}/backup"], expect=(2,),
         stderr="appdata: error:", stdin=PASSWORD + "\n")

    # 4. Plist expansion: the 2^40 bomb as every plist appdata reads, on disk and in an archive;
    #    an XML plist nested 100,000 deep.
    bomb = expansion_bomb(40)
    bomb_dict = expansion_bomb(40, top_dict_key="Lockdown")
    d = folder("plist-bomb-backup")
    for name in ("Manifest.plist", "Info.plist", "Status.plist"):
        folder_path = os.path.join(d, name.split(".")[0])
        plain_backup(folder_path)
        write(os.path.join(folder_path, name), bomb_dict)
        case(f"plist-bomb-{name}", ["audit", "--format", "json", "{DIR}/" + name.split(".")[0]], expect=(0, 1, 2))
    d = folder("plist-bomb-container")
    container(os.path.join(d, "container"))
    write(os.path.join(d, "container", ".com.apple.mobile_container_manager.metadata.plist"), bomb)
    container(os.path.join(d, "Package.xcappdata", "AppData"))
    write(os.path.join(d, "Package.xcappdata", "AppDataInfo.plist"), bomb_dict)
    write(os.path.join(d, "deep.plist"), b"<plist>" + b"<array>" * 100_000 + b"</array>" * 100_000 + b"</plist>")
    os.makedirs(os.path.join(d, "xml"))
    container(os.path.join(d, "xml", "container"))
    shutil.copy(os.path.join(d, "deep.plist"), os.path.join(d, "xml", "container", ".com.apple.mobile_container_manager.metadata.plist"))
    with tarfile.open(os.path.join(d, "bomb.tar"), "w") as archive:
        archive.add(os.path.join(d, "container"), arcname="container")
    case("plist-bomb-metadata", ["audit", "--format", "json", "{DIR}/container"], expect=(0, 1))
    case("plist-bomb-xcappdata", ["audit", "--format", "json", "{DIR}/Package.xcappdata"], expect=(0, 1))
    case("plist-bomb-xml-depth", ["audit", "--format", "json", "{DIR}/xml/container"], expect=(0, 1))
    case("plist-bomb-archive", ["audit", "--format", "json", "{DIR}/bomb.tar"], expect=(0, 1))
    write(os.path.join(d, "migrate", "Library", "Caches", "a.txt"), b"a")
    write(os.path.join(d, "migrate", "Library", "Preferences", "com.example.app.plist"), bomb_dict)
    case("plist-bomb-defaults", ["migrate", "--dry-run", "--defaults-key", "PSLegacyStoragePathUsed", "--defaults-plist",
                                 "Library/Preferences/com.example.app.plist", "{DIR}/migrate"], expect=(2,), stderr="not a property list appdata reads",
         contained={"out": None})

    # 5. Unbounded inputs: a 60 MB baseline of {"":0} objects; a backup of 100,000 app domains.
    d = folder("big-baseline")
    container(os.path.join(d, "container"))
    with open(os.path.join(d, "baseline.json"), "wb") as f:
        f.write(b'{"a":[')
        f.write(b",".join([b'{"":0}'] * 8_500_000))
        f.write(b"]}")
    case("big-baseline", ["audit", "--baseline", "{DIR}/baseline.json", "{DIR}/container"], expect=(2,), stderr="appdata: error:")
    d = folder("many-domains")
    os.makedirs(os.path.join(d, "backup"))
    backup.write_plists(os.path.join(d, "backup"), [])
    db = sqlite3.connect(os.path.join(d, "backup", "Manifest.db"))
    db.execute("CREATE TABLE Files (fileID TEXT PRIMARY KEY, domain TEXT, relativePath TEXT, flags INTEGER, file BLOB)")
    blob = backup.mbfile("Documents/a", 1, 1, 0)
    db.executemany("INSERT INTO Files VALUES (?, ?, 'Documents/a', 1, ?)",
                   ((f"{i:040x}", f"AppDomain-com.example.app{i}", blob) for i in range(100_000)))
    db.commit()
    db.close()
    for fmt in ("json", "html"):
        case(f"many-domains-{fmt}", ["audit", "--format", fmt, "{DIR}/backup"], expect=(0, 1, 2))

    # 6. Terminal escapes in SQLite's own error text (a schema object named with escapes).
    d = folder("escape-schema")
    plain_backup(os.path.join(d, "backup"))
    db = sqlite3.connect(os.path.join(d, "backup", "Manifest.db"))
    db.execute("PRAGMA journal_mode=DELETE")
    hostile = "\x1b]0;PWNED\x07\x1b[2J\x1b[31mRED"
    db.execute(f'CREATE TABLE "{hostile}" (x)')
    db.commit()
    db.execute("PRAGMA writable_schema=ON")
    db.execute("UPDATE sqlite_master SET sql = 'CREATE TABLE broken (' WHERE name = ?", (hostile,))
    db.commit()
    db.close()
    case("escape-schema", ["audit", "{DIR}/backup"], expect=(2,), stderr="malformed database schema")

    # 7. A real encrypted backup with a 1.2 MB Manifest.plist (100 apps with their icons).
    d = folder("big-manifest-plist")
    plain_backup(os.path.join(d, "backup"))
    backup.encrypt(os.path.join(d, "backup"), dpic=10)
    rng = random.Random(7)
    backup.edit_manifest(os.path.join(d, "backup"), lambda manifest: manifest.update(Applications={
        f"com.example.app{i}": {"CFBundleIdentifier": f"com.example.app{i}", "CFBundleVersion": "1",
                                "PlaceholderIcon": rng.randbytes(12_000)} for i in range(100)}))
    case("big-manifest-plist", ["audit", "--format", "json", "--password-stdin", "{DIR}/backup"], expect=(0, 1),
         stdin=PASSWORD + "\n")

    # 8. Key rounds chosen by the file: ITER and DPIC of 2^32 - 1, and of 0.
    for name, tag, value, message in (("rounds-iter-max", "ITER", 0xFFFFFFFF, "--max-key-rounds"),
                                      ("rounds-dpic-max", "DPIC", 0xFFFFFFFF, "--max-key-rounds"),
                                      ("rounds-iter-zero", "ITER", 0, "0 key-derivation rounds"),
                                      ("rounds-dpic-zero", "DPIC", 0, "0 key-derivation rounds")):
        d = folder(name)
        plain_backup(os.path.join(d, "backup"))
        backup.encrypt(os.path.join(d, "backup"), dpic=10)
        set_keybag_record(os.path.join(d, "backup"), tag, value)
        case(name, ["audit", "--password-stdin", "{DIR}/backup"], expect=(2,), stderr=message, stdin=PASSWORD + "\n",
             work={"keyRounds": 0})

    second_round(out, case, folder)
    third_round(out, case, folder)
    android_round(out, case, folder)
    names_round(out, case, folder)
    containment_round(out, case, folder)
    restore_round(out, case, folder)

    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)


# MARK: - Issue 31: the input shapes added since the first round


def zip_with_bomb(path, small, name, head, zeros):
    """A zip (written by hand, zip64 for the large entry) holding `small` ({name: bytes}, stored)
    and `name`: `head` then `zeros` zero bytes, deflated. The zeros are one 16 MiB deflate chunk
    ending in a full flush, repeated: a flush resets the compressor, so each copy is the same
    bytes, and a 3 GiB entry costs 3 MB and a fraction of a second to write."""
    import zlib
    chunk_size = 1 << 24
    assert zeros % chunk_size == 0
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = compressor.compress(head) + compressor.flush(zlib.Z_FULL_FLUSH)
    chunk = compressor.compress(bytes(chunk_size)) + compressor.flush(zlib.Z_FULL_FLUSH)
    last = compressor.flush(zlib.Z_FINISH)
    zero_chunk = bytes(chunk_size)
    crc = zlib.crc32(head)
    for _ in range(zeros // chunk_size):
        crc = zlib.crc32(zero_chunk, crc)
    entries = [(n, data, 0, zlib.crc32(data), len(data), len(data)) for n, data in small.items()]
    compressed_size = len(first) + len(chunk) * (zeros // chunk_size) + len(last)
    entries.append((name, None, 8, crc, compressed_size, len(head) + zeros))
    central = b""
    with open(path, "wb") as f:
        for entry_name, data, method, crc, csize, usize in entries:
            encoded = entry_name.encode()
            offset = f.tell()
            large = usize >= 0xFFFFFFFF
            extra = struct.pack("<HHQQ", 1, 16, usize, csize) if large else b""
            sizes = (0xFFFFFFFF, 0xFFFFFFFF) if large else (csize, usize)
            f.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, method, 0, 0x5A21, crc, sizes[0], sizes[1], len(encoded), len(extra))
                    + encoded + extra)
            if data is not None:
                f.write(data)
            else:
                f.write(first)
                for _ in range(zeros // chunk_size):
                    f.write(chunk)
                f.write(last)
            central += (struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, method, 0, 0x5A21, crc, sizes[0], sizes[1],
                                    len(encoded), len(extra), 0, 0, 0, 0o100644 << 16, offset) + encoded + extra)
        start = f.tell()
        f.write(central)
        f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), start, 0))


def tgz_with_bomb(path, small, name, head, zeros):
    """A gzipped tar with `small` and `name` (`head` then `zeros` zero bytes): the gzip stream is
    members, one per 16 MiB of zeros, compressed once and repeated (gzip readers take
    concatenated members as one stream)."""
    import gzip
    import io
    chunk_size = 1 << 24
    assert zeros % chunk_size == 0
    prefix = io.BytesIO()
    with tarfile.open(fileobj=prefix, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for entry_name, data in small.items():
            info = tarfile.TarInfo(entry_name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo(name)
        info.size = len(head) + zeros
        # The header alone: the data follows below, written as gzip members.
        prefix.write(info.tobuf(format=tarfile.PAX_FORMAT))
        archive.fileobj = io.BytesIO()  # what close() writes (the end blocks) goes nowhere
    total = len(head) + zeros
    tail = bytes((512 - total % 512) % 512) + bytes(1024)
    chunk = gzip.compress(bytes(chunk_size), 9)
    with open(path, "wb") as f:
        f.write(gzip.compress(prefix.getvalue() + head, 9))
        for _ in range(zeros // chunk_size):
            f.write(chunk)
        f.write(gzip.compress(tail, 9))


def second_round(out, case, folder):
    hostile = "\x1b]0;PWNED\x07\x1b[31mRED"

    # 1. Escapes in JSON error messages: a key in a policy file, a baseline, and the appdata.json
    #    read by default from the working folder; then every other message quoting input text.
    d = folder("escape-json")
    container(os.path.join(d, "container"))
    bad = ('{"' + hostile.replace("\x1b", "\\u001b").replace("\x07", "\\u0007") + '" 1}').encode()
    duplicate = b'{"\\u001b]0;X\\u0007":1,"\\u001b]0;X\\u0007":2}'
    write(os.path.join(d, "bad.json"), bad)
    write(os.path.join(d, "duplicate.json"), duplicate)
    write(os.path.join(d, "repository", "appdata.json"), bad)
    case("escape-json-config", ["audit", "--config", "{DIR}/bad.json", "{DIR}/container"], expect=(2,), stderr="expected ':' after key")
    case("escape-json-duplicate", ["audit", "--config", "{DIR}/duplicate.json", "{DIR}/container"], expect=(2,), stderr="duplicate key")
    case("escape-json-baseline", ["audit", "--baseline", "{DIR}/bad.json", "{DIR}/container"], expect=(2,), stderr="expected ':' after key")
    case("escape-json-working-folder", ["audit", "{DIR}/container"], expect=(2,), stderr="appdata.json", cwd="{DIR}/repository")
    case("escape-json-init-config", ["init-config", "--output", "{DIR}/" + hostile + "/x.json", "{DIR}/container"], expect=(2,))
    case("escape-message-path", ["audit", "{DIR}/" + hostile], expect=(2,), stderr="no such file")
    case("escape-message-root", ["audit", "--root", hostile, "{DIR}/container"], expect=(2,))
    case("escape-message-app", ["audit", "--app", hostile, "{DIR}/container"], expect=(2,))
    case("escape-message-output", ["audit", "--output", "{DIR}/" + hostile + "/report.json", "{DIR}/container"], expect=(2,))
    case("escape-message-password-file", ["audit", "--password-file", "{DIR}/" + hostile, "{DIR}/container"], expect=(0, 2))
    case("escape-message-option", ["audit", "--" + hostile, "{DIR}/container"], expect=(2,))
    case("escape-message-migrate", ["migrate", "--from", hostile, "{DIR}/container"], expect=(1, 2), contained={"out": None})
    case("escape-message-status", ["status", "{DIR}/" + hostile], expect=(1, 2))

    # 2. A zipped backup whose Manifest.db is a bomb: 3 GiB in a 3 MB zip, 1 GiB in a 1 MB tgz;
    #    refused before it is expanded, also with an address-space limit; a bound raised past
    #    what the address space allows is refused too, never a crash.
    d = folder("manifest-bomb")
    plain_backup(os.path.join(d, "backup"))
    small = {}
    for name in ("Manifest.plist", "Info.plist", "Status.plist"):
        with open(os.path.join(d, "backup", name), "rb") as f:
            small["bk/" + name] = f.read()
    with open(os.path.join(d, "backup", "Manifest.db"), "rb") as f:
        database = f.read()
    zip_with_bomb(os.path.join(d, "bomb.zip"), small, "bk/Manifest.db", database, 3 << 30)
    tgz_with_bomb(os.path.join(d, "bomb.tgz"), small, "bk/Manifest.db", database, 1 << 30)
    bomb = {"decompressedBytes": BOMB_BYTES}
    case("manifest-bomb-zip", ["audit", "{DIR}/bomb.zip"], expect=(2,), stderr="--max-manifest-bytes", work=bomb)
    case("manifest-bomb-zip-ulimit", ["audit", "{DIR}/bomb.zip"], expect=(2,), stderr="--max-manifest-bytes",
         address_space=1_500_000 * 1024, work=bomb)
    case("manifest-bomb-zip-raised", ["audit", "--max-manifest-bytes", "8G", "{DIR}/bomb.zip"], expect=(2,),
         stderr="cannot map", address_space=1_500_000 * 1024, work=bomb)
    case("manifest-bomb-tgz", ["audit", "--format", "json", "{DIR}/bomb.tgz"], expect=(2,), stderr="--max-manifest-bytes", work=bomb)

    # 3. A folder of 10,000 backups (hard links of one small backup): linear, not quadratic.
    d = folder("many-backups")
    plain_backup(os.path.join(d, "backup"))
    for index in range(10_000):
        copy = os.path.join(d, "Backup", f"{index:08d}-{index:016X}")
        os.makedirs(copy)
        for name in ("Manifest.db", "Manifest.plist", "Info.plist", "Status.plist"):
            os.link(os.path.join(d, "backup", name), os.path.join(copy, name))
    # (4.3 s in the debug build on this 2-core VM since issue 49, 6.2 s before it and 14 s on
    # another machine: a hang after 120 s.)
    case("many-backups-table", ["audit", "{DIR}/Backup"], expect=(0,), hang=120)
    case("many-backups-over-bound", ["audit", "--max-backups", "9999", "{DIR}/Backup"], expect=(2,), stderr="--max-backups raises it")

    # 4. The same input twice, or inside another PATH given: read once, said in one line.
    d = folder("named-twice")
    plain_backup(os.path.join(d, "Backup", "A"))
    plain_backup(os.path.join(d, "Backup", "B"))
    container(os.path.join(d, "container"))
    case("named-twice-backup", ["audit", "--format", "json", "{DIR}/Backup/A", "{DIR}/Backup/A"], expect=(0,), stderr="named twice")
    case("named-twice-inside", ["audit", "--format", "json", "{DIR}/Backup", "{DIR}/Backup/A"], expect=(0,), stderr="already named by")
    case("named-twice-container", ["audit", "{DIR}/container", "{DIR}/container/."], expect=(0,), stderr="read once")

    # 5. Backup plists that are too large (2 GB, sparse) or not regular files (a FIFO).
    d = folder("backup-plists")
    plain_backup(os.path.join(d, "large"))
    with open(os.path.join(d, "large", "Info.plist"), "wb") as f:
        f.truncate(2_000_000_000)
    plain_backup(os.path.join(d, "fifo"))
    os.remove(os.path.join(d, "fifo", "Info.plist"))
    os.mkfifo(os.path.join(d, "fifo", "Info.plist"))
    case("backup-plist-large", ["audit", "{DIR}/large"], expect=(0,))
    case("backup-plist-fifo", ["audit", "{DIR}/fifo"], expect=(0,))

    # 6. Every other input shape the resolver takes, each with hostile content: a Simulator
    #    device (bomb metadata, an id and a folder name holding escapes), a package, several
    #    PATHs of different shapes, an archive of a folder of backups.
    d = folder("shapes")
    device = os.path.join(d, "Device", "data", "Containers", "Data", "Application")
    for index, metadata in enumerate((expansion_bomb(40), plistlib.dumps({"MCMMetadataIdentifier": hostile}, fmt=plistlib.FMT_BINARY),
                                      b"<plist>" + b"<array>" * 100_000)):
        root = os.path.join(device, f"{index:08X}-0000-0000-0000-000000000000")
        container(root)
        write(os.path.join(root, ".com.apple.mobile_container_manager.metadata.plist"), metadata)
        write(os.path.join(root, "Documents", hostile), b"x")
    container(os.path.join(d, "Hostile.xcappdata", "AppData"))
    write(os.path.join(d, "Hostile.xcappdata", "AppDataInfo.plist"), plistlib.dumps({"CFBundleIdentifier": hostile}, fmt=plistlib.FMT_BINARY))
    plain_backup(os.path.join(d, "Backup", "A"))
    plain_backup(os.path.join(d, "Backup", hostile))
    with tarfile.open(os.path.join(d, "backups.tar.gz"), "w:gz") as archive:
        archive.add(os.path.join(d, "Backup"), arcname="Backup")
    # appdata extract (issue 33) on a hostile manifest: escapes in names and ids, paths that
    # climb out, a symlink out then a file below it, payloads that are a symlink and a FIFO.
    spec = importlib.util.spec_from_file_location("extract_backup", os.path.join(HERE, "make-extract-backup.py"))
    extract_backup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(extract_backup)
    evil = os.path.join(d, "extract-backup")
    os.makedirs(evil)
    backup.write_plists(evil, ["com.example.evil"])
    domain = "AppDomain-com.example.evil"
    rows = [(domain, "", "folder", 0o755, 1, None, None, {}, 0), (domain, "Documents", "folder", 0o755, 1, None, None, {}, 0),
            (domain, "Documents/" + hostile, "file", 0o644, 1, b"x", None, {hostile: b"v"}, 3),
            (domain, "../" + hostile, "file", 0o644, 1, b"x", None, {}, 3),
            (domain, "Documents/out", "symlink", 0o755, 1, None, "/etc", {}, 0),
            (domain, "Documents/out/passwd", "file", 0o644, 1, b"x", None, {}, 3),
            (domain, "Documents/fifo", "file", 0o644, 1, b"x", None, {}, 3)]
    extract_backup.write(evil, rows)
    fifo = backup.file_id(domain, "Documents/fifo")
    os.remove(os.path.join(evil, fifo[:2], fifo))
    os.mkfifo(os.path.join(evil, fifo[:2], fifo))
    for fmt in ("table", "json"):
        case(f"shapes-extract-{fmt}", ["extract", "--format", fmt, "--app", "com.example.evil", "-o", "{DIR}/extract-out-" + fmt,
                                       "{DIR}/extract-backup"], expect=(1,), extract={"out": "{DIR}/extract-out-" + fmt})
    case("shapes-extract-unknown-id", ["extract", "--app", hostile, "-o", "{DIR}/extract-none", "{DIR}/extract-backup"], expect=(2,),
         stderr="holds no app", extract={"out": "{DIR}/extract-none"})
    # extract on the first round's hostile backups: integer traps in MBFile blobs, a path
    # 50,000 folders deep, a generated column, 100,000 domains.
    for name, app in (("int-bplist", "com.example.app"), ("depth-backup", "com.example.app"),
                      ("sqlite-generated-path", "com.example.app"), ("many-domains", "com.example.app7")):
        case(f"shapes-extract-{name}", ["extract", "--app", app, "-o", "{DIR}/extract-" + name, "{DIR}/../" + name + "/backup"],
             extract={"out": "{DIR}/extract-" + name})

    for fmt in ("table", "json", "html"):
        case(f"shapes-device-{fmt}", ["audit", "--format", fmt, "{DIR}/Device"], expect=(0, 1))
        case(f"shapes-package-{fmt}", ["audit", "--format", fmt, "{DIR}/Hostile.xcappdata"], expect=(0, 1))
        case(f"shapes-folder-of-backups-{fmt}", ["audit", "--format", fmt, "{DIR}/Backup"], expect=(0, 1))
        case(f"shapes-archive-of-backups-{fmt}", ["audit", "--format", fmt, "{DIR}/backups.tar.gz"], expect=(0, 1))
        case(f"shapes-several-{fmt}", ["audit", "--format", fmt, "{DIR}/Device", "{DIR}/Hostile.xcappdata", "{DIR}/Backup",
                                       "{DIR}/backups.tar.gz"], expect=(0, 1))


# MARK: - Issue 38: appdata extract against a hostile backup and a careless command line


def third_round(out, case, folder):
    """Each case of issue 38 as it describes it: the backups, the command lines, and what must
    hold (nothing outside OUT changed, no link in OUT resolving outside it, `absent` never made)."""
    spec = importlib.util.spec_from_file_location("extract_backup", os.path.join(HERE, "make-extract-backup.py"))
    x = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(x)
    app = "com.example.x"
    d = "AppDomain-" + app
    folder_row = lambda p, dom=d, mode=0o755: (dom, p, "folder", mode, 1, None, None, {}, 0)
    file_row = lambda p, c, dom=d: (dom, p, "file", 0o644, 1, c, None, {}, 3)
    link_row = lambda p, t, dom=d: (dom, p, "symlink", 0o755, 1, None, t, {}, 0)

    def extract_backup(path, rows, apps=(app,)):
        os.makedirs(path)
        backup.write_plists(path, list(apps))
        x.write(path, rows)

    def tar(path, source):
        with tarfile.open(path, "w") as archive:
            archive.add(source, arcname=".")

    def extract_case(name, args, out="{DIR}/work/out", expect=(0, 1), absent=(), **options):
        os.makedirs(out.replace("{DIR}", current_dir[0]).rstrip("/").rsplit("/", 1)[0], exist_ok=True)
        case(name, ["extract"] + args + ["-o", out], expect=expect, extract={"out": out, "absent": list(absent)}, **options)

    current_dir = [""]

    def place(name):
        current_dir[0] = folder(name)
        return current_dir[0]

    # X1: extension ids as paths: three '..' beside OUT's parent, forty and an absolute tail, 300 bytes.
    for name, plugin in (("x1-climb", app + "./../../../ESCAPED"),
                         ("x1-absolute", app + "." + "/.." * 40 + os.path.join(out, "shapes-extract-x1-absolute", "PWNED")),
                         ("x1-long", app + "." + "l" * 300)):
        f = place("shapes-extract-" + name)
        extract_backup(os.path.join(f, "backup"), [folder_row(""), file_row("Documents/ok.txt", b"ok"),
                                                   folder_row("", "AppDomainPlugin-" + app + "."),
                                                   folder_row("", "AppDomainPlugin-" + plugin),
                                                   file_row("pwned.sh", b"#!/bin/sh\n", "AppDomainPlugin-" + plugin)])
        tar(os.path.join(f, "backup.tar"), os.path.join(f, "backup"))
        for source in ("backup", "backup.tar"):
            extract_case(f"shapes-extract-{name}-{source}", ["--with-extensions", "--app", app, "{DIR}/" + source],
                         out="{DIR}/work/out-" + source, expect=(1,), absent=["{DIR}/ESCAPED", "{DIR}/PWNED"])

    # X3: links that resolve out through other links, whose text stays inside.
    f = place("shapes-extract-x3")
    extract_backup(os.path.join(f, "backup"), [
        folder_row(""), folder_row("Documents"), link_row("Documents/y", ".."),
        link_row("x", "Documents/y/Documents/y/../../../../etc/passwd"),
        link_row("Library/a", "b/../../Documents/y/.."), link_row("Library/b", "../Documents"),
        link_row("Library/c", "../Documents/y/Documents/y/../../../.."), link_row("Library/d", "c/etc"),
        link_row("Library/loop1", "loop2"), link_row("Library/loop2", "loop1"),
        link_row("Library/far", "/".join(["."] * 2000) + "/../x"), link_row("t", "a" * 255 + "/.." * 1900)])
    extract_case("shapes-extract-x3", ["--app", app, "{DIR}/backup"], expect=(0, 1))
    # X3 where names fold (APPDATA_TEST_NAME_COMPARISON=case stands in for a Mac's APFS): a
    # target's K goes through the link k; a folder A/<not ASCII>dir/x the filesystem takes for
    # the link a/sdir/x's way; a link named with ſ (s), and one reached through it. No link in
    # OUT may lead outside it on a filesystem that folds (checked by a resolver that folds as
    # casefolded ext4 does: Unicode case folding of the NFD form; make test-casefold runs the
    # first two on a real one).
    deep = "/".join(f"d{i}" for i in range(30))
    for name, rows in (
            ("case", [folder_row(""), folder_row("Documents"), link_row("Documents/k", ".."), link_row("Documents/z", "K/../.."),
                      folder_row("Library"), folder_row("Library/K"), link_row("Library/k", "a/b/c"), link_row("Library/w", "K/../../..")]),
            ("way", [folder_row(""), folder_row("A/\u017fdir/x"), folder_row("B/\u212adir/x"), folder_row("C/\u00df/x"),
                     link_row("a/sdir/x", deep), link_row("b/kdir/x", deep), link_row("c/ss/x", deep),
                     link_row("e", "a/sdir/x/" + "../" * 32 + "etc/passwd"), link_row("f", "b/kdir/x/" + "../" * 32 + "etc/passwd"),
                     link_row("g", "c/ss/x/" + "../" * 32 + "etc/passwd")]),
            ("names", [folder_row(""), folder_row("Documents"), link_row("Documents/\u017f", ".."), link_row("Documents/z", "s/../.."),
                       link_row("Documents/y", "\u017f/../..")])):
        f = place("shapes-extract-x3-fold-" + name)
        extract_backup(os.path.join(f, "backup"), rows)
        extract_case("shapes-extract-x3-fold-" + name, ["--app", app, "{DIR}/backup"], expect=(0, 1), env={"APPDATA_TEST_NAME_COMPARISON": "case"})
    # 2,000 links whose 3,000-byte targets each go 600 folders down, come back and go on through
    # the next link: resolving them all is bounded work (past it they become files), in bounded time.
    f = place("shapes-extract-x3-many")
    hops = "/".join(["a"] * 600) + "/" + "/".join([".."] * 600)
    extract_backup(os.path.join(f, "backup"), [folder_row("")] + [link_row(f"l{i:05d}", hops + f"/l{(i + 1) % 2000:05d}") for i in range(2000)])
    # (4.2 s in the debug build on this 2-core VM: a hang after 120 s.)
    extract_case("shapes-extract-x3-many", ["--app", app, "{DIR}/backup"], expect=(0, 1), hang=120)
    # Issue 48: 250 links 3.8 KB deep (950 folders), each target 4 KB of 'x/..' then the next
    # link, a 3 MB manifest: a resolution step cost the whole path's hashing (22 s of CPU in the
    # debug build); now one component's, and the work is counted: 250 x (950 + 8,193) steps.
    # 500 such links would take 4.6 million: the run's budget (4,000,000) stops them, within
    # one resolution (at most 1,023 folders and 8,193 steps) past it.
    deep = "/".join(["ddd"] * 950)
    for name, count, bound in (("deep", 250, 250 * (950 + 8193)), ("budget", 500, 4_000_000 + 1023 + 8193)):
        f = place("shapes-extract-x3-" + name)
        extract_backup(os.path.join(f, "backup"), [folder_row("")] + [
            link_row(f"{deep}/l{i:04d}", "x/../" * 816 + f"l{(i + 1) % count:04d}") for i in range(count)])
        extract_case("shapes-extract-x3-" + name, ["--app", app, "{DIR}/backup"], expect=(0, 1), work={"symlinkSteps": bound})

    # --force onto what appdata did not make: a desk, the backup, the folder holding it, inside
    # it, the working folder.
    f = place("shapes-extract-force")
    os.makedirs(os.path.join(f, "desk"))
    write(os.path.join(f, "desk", "notes.txt"), b"important\n")
    extract_backup(os.path.join(f, "holder", "backup"), [folder_row(""), file_row("Documents/ok.txt", b"ok")])
    for name, out_path, cwd in (("desk", "{DIR}/desk", None), ("backup", "{DIR}/holder/backup", None),
                                ("backup-slash", "{DIR}/holder/backup//", None), ("holder", "{DIR}/holder", None),
                                ("inside", "{DIR}/holder/backup/inside", None), ("pwd", "{DIR}/desk", "{DIR}/desk")):
        extract_case(f"shapes-extract-force-{name}", ["--force", "--app", app, "{DIR}/holder/backup"], out=out_path, expect=(2,), cwd=cwd)

    # X4: a trailing '//'.
    f = place("shapes-extract-x4")
    extract_backup(os.path.join(f, "backup"), [folder_row(""), file_row("Documents/ok.txt", b"ok")])
    extract_case("shapes-extract-x4", ["--app", app, "{DIR}/backup"], out="{DIR}/work/out//", expect=(0,))

    # X6, X8, X9, X10: rows sharing a fileID (from a folder and a tar), Size 0 with a payload, a
    # target with a NUL, a target of 4,097 bytes.
    f = place("shapes-extract-rows")
    path = os.path.join(f, "backup")
    x.write_hostile_rows(path, app)
    tar(os.path.join(f, "backup.tar"), path)
    for source in ("backup", "backup.tar"):
        extract_case(f"shapes-extract-rows-{source}", ["--json", "--app", app, "{DIR}/" + source], out="{DIR}/work/out-" + source, expect=(1,))

    # X7: 20,000 rows 500 folders deep (40 chains), and a plugin id of 300 bytes beside it.
    f = place("shapes-extract-x7")
    rows = [folder_row("")]
    for chain in range(40):
        for depth in range(1, 501):
            rows.append(folder_row("/".join([f"c{chain:02d}"] + ["d"] * (depth - 1))))
    extract_backup(os.path.join(f, "backup"), rows)
    # (3.8 s in the debug build on this 2-core VM, 5.6 s on another: a hang after 120 s.)
    extract_case("shapes-extract-x7", ["--app", app, "{DIR}/backup"], expect=(0,), hang=120)


# MARK: - Issue 53: appdata restore into a Simulator device, from the hostile backups


def restore_round(out, case, folder):
    """`appdata restore` of issue 38's hostile manifests into a Simulator device folder, and
    devices that are hostile themselves (a booted state, escapes in the UDID and the ids, a
    container, its place or its metadata plist that is a symlink to outside, a device.plist that
    is a bomb, a planted restore folder no record proves). Each runs as nobody; OUT is the
    device's Data/Application folder (the container and restore's folder beside it): nothing else
    below the case's folder may change, the other app's container is kept byte for byte, no
    link in OUT resolves outside it, and nothing named in `absent` appears."""
    spec = importlib.util.spec_from_file_location("extract_backup", os.path.join(HERE, "make-extract-backup.py"))
    x = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(x)
    hostile = "\x1b]0;PWNED\x07\x1b[31mRED"
    app = "com.example.x"
    d = "AppDomain-" + app
    folder_row = lambda p, dom=d, mode=0o755: (dom, p, "folder", mode, 1, None, None, {}, 0)
    file_row = lambda p, c, dom=d, xattrs=None: (dom, p, "file", 0o644, 1, c, None, xattrs or {}, 3)
    link_row = lambda p, t, dom=d: (dom, p, "symlink", 0o755, 1, None, t, {}, 0)
    applications = "Devices/UDID/data/Containers/Data/Application"

    def device(root, state=1, udid="UDID", apps=((app, "A0000000-0000-4000-8000-000000000001"),
                                                 ("com.example.other", "B0000000-0000-4000-8000-000000000002")), plist=None):
        dev = os.path.join(root, "Devices", "UDID")
        os.makedirs(dev)
        write(os.path.join(dev, "device.plist"), plist if plist is not None else
              plistlib.dumps({"UDID": udid, "state": state, "name": hostile, "runtime": "com.apple.CoreSimulator.SimRuntime.iOS-18-0"}, fmt=plistlib.FMT_BINARY))
        for ident, uuid in apps:
            c = os.path.join(dev, "data", "Containers", "Data", "Application", uuid)
            container(c)
            write(os.path.join(c, ".com.apple.mobile_container_manager.metadata.plist"),
                  plistlib.dumps({"MCMMetadataIdentifier": ident, "MCMMetadataContentClass": 2}, fmt=plistlib.FMT_BINARY))
        return dev

    def restore_case(name, args, expect=(0, 1), absent=(), keep=("{DIR}/" + applications + "/B0000000-0000-4000-8000-000000000002",), **options):
        case(name, ["restore"] + args, expect=expect,
             extract={"out": "{DIR}/" + applications, "absent": list(absent), "keep": list(keep)}, **options)

    # The manifests: paths climbing out, a link to /etc then a file below it, links that resolve
    # out through other links, escapes in names and attributes, a plugin id that is a path.
    f = folder("restore-manifest")
    path = os.path.join(f, "backup")
    os.makedirs(path)
    backup.write_plists(path, [app])
    x.write(path, [folder_row(""), folder_row("Documents"), file_row("Documents/" + hostile, b"x", xattrs={hostile: b"v"}),
                   file_row("../ESCAPED", b"x"), file_row("Documents/../../ESCAPED", b"x"),
                   link_row("Documents/out", "/etc"), file_row("Documents/out/passwd", b"x"),
                   link_row("Documents/y", ".."), link_row("x", "Documents/y/Documents/y/../../../../etc/passwd"),
                   link_row("Library/c", "../Documents/y/Documents/y/../../../.."), file_row("Library/c/PWNED", b"x"),
                   file_row(".appdata-migration.journal", b"planted"),
                   folder_row("", "AppDomainPlugin-" + app + "./../../ESCAPED"),
                   file_row("pwned.sh", b"#!/bin/sh\n", "AppDomainPlugin-" + app + "./../../ESCAPED")])
    dev = device(f, apps=((app, "A0000000-0000-4000-8000-000000000001"), ("com.example.other", "B0000000-0000-4000-8000-000000000002")))
    # A plugin container on the device whose id is that path: matched by id, never made a path.
    plugin = os.path.join(dev, "data", "Containers", "Data", "PluginKitPlugin", "C0000000-0000-4000-8000-000000000003")
    container(plugin)
    write(os.path.join(plugin, ".com.apple.mobile_container_manager.metadata.plist"),
          plistlib.dumps({"MCMMetadataIdentifier": app + "./../../ESCAPED", "MCMMetadataContentClass": 4}))
    restore_case("restore-manifest", ["{DIR}/backup", "--simulator", "{DIR}/Devices/UDID", "--app", app], expect=(1,),
                 absent=["{DIR}/ESCAPED", "{DIR}/Devices/ESCAPED", "{DIR}/" + applications + "/ESCAPED", "{DIR}/PWNED"])
    # With --with-extensions the plugin is restored too: OUT is then the device's Data folder.
    case("restore-manifest-extensions", ["restore", "--with-extensions", "--json", "{DIR}/backup", "--simulator", "{DIR}/Devices/UDID", "--app", app],
         expect=(1,), extract={"out": "{DIR}/Devices/UDID/data/Containers/Data", "absent": ["{DIR}/ESCAPED", "{DIR}/Devices/ESCAPED", "{DIR}/PWNED"],
                               "keep": ["{DIR}/" + applications + "/B0000000-0000-4000-8000-000000000002"]})
    # Issue 38's rows: fileIDs shared, Size 0 with a payload, targets with a NUL or of 4,097 bytes.
    f = folder("restore-rows")
    x.write_hostile_rows(os.path.join(f, "backup"), app)
    device(f)
    restore_case("restore-rows", ["--json", "{DIR}/backup", "--simulator", "{DIR}/Devices/UDID", "--app", app], expect=(1,))
    # The device itself: booted; escapes in its UDID and in the installed ids; the container, its
    # place, its metadata plist a symlink to outside; device.plist a bomb; a planted restore
    # folder with a record that proves nothing.
    for name, build, expect, stderr in (
            ("booted", lambda f: device(f, state=3, udid=hostile), (2,), "xcrun simctl shutdown"),
            ("escapes", lambda f: device(f, udid=hostile, apps=((hostile, "A0000000-0000-4000-8000-000000000001"),
                                                                ("com.example.other", "B0000000-0000-4000-8000-000000000002"))), (2,), "is installed"),
            ("bomb", lambda f: device(f, plist=expansion_bomb(top_dict_key="state")), (2,), None),
            ("container-link", "container-link", (2,), "is installed"),
            ("place-link", "place-link", (2,), "is installed"),
            ("metadata-link", "metadata-link", (2,), "cannot be read"),
            ("planted", "planted", (0,), None)):
        f = folder("restore-device-" + name)
        os.makedirs(os.path.join(f, "backup"))
        backup.write_plists(os.path.join(f, "backup"), [app])
        x.write(os.path.join(f, "backup"), [folder_row(""), file_row("Documents/ok.txt", b"ok")])
        keep = ["{DIR}/" + applications + "/B0000000-0000-4000-8000-000000000002"]
        if callable(build):
            build(f)
        else:
            dev = device(f, apps=(("com.example.other", "B0000000-0000-4000-8000-000000000002"),))
            apps_folder = os.path.join(dev, "data", "Containers", "Data", "Application")
            outside = os.path.join(f, "outside")
            container(os.path.join(outside, "A0000000-0000-4000-8000-000000000001"))
            write(os.path.join(outside, "A0000000-0000-4000-8000-000000000001", ".com.apple.mobile_container_manager.metadata.plist"),
                  plistlib.dumps({"MCMMetadataIdentifier": app, "MCMMetadataContentClass": 2}))
            if build == "container-link":
                os.symlink(os.path.join(outside, "A0000000-0000-4000-8000-000000000001"), os.path.join(apps_folder, "A0000000-0000-4000-8000-000000000001"))
            elif build == "place-link":
                shutil.rmtree(apps_folder)
                os.symlink(outside, apps_folder)
                keep = []
            elif build == "metadata-link":
                c = os.path.join(apps_folder, "A0000000-0000-4000-8000-000000000001")
                container(c)
                os.symlink(os.path.join(outside, "A0000000-0000-4000-8000-000000000001", ".com.apple.mobile_container_manager.metadata.plist"),
                           os.path.join(c, ".com.apple.mobile_container_manager.metadata.plist"))
            else:
                c = os.path.join(apps_folder, "A0000000-0000-4000-8000-000000000001")
                container(c)
                write(os.path.join(c, ".com.apple.mobile_container_manager.metadata.plist"),
                      plistlib.dumps({"MCMMetadataIdentifier": app, "MCMMetadataContentClass": 2}))
                planted = os.path.join(apps_folder, ".A0000000-0000-4000-8000-000000000001.appdata-restore-" + "0" * 32)
                container(planted)
                write(planted + ".owner", b"appdata-owner 1 " + b"0" * 32 + b" folder\n1 1\n1 1 1 1\n")
                keep += ["{DIR}/" + applications + "/" + os.path.basename(planted), "{DIR}/" + applications + "/" + os.path.basename(planted) + ".owner"]
        # A refusal changes nothing at all (the device's own links to outside stay as they are).
        case("restore-device-" + name, ["restore", "{DIR}/backup", "--simulator", "{DIR}/Devices/UDID", "--app", app], expect=expect, stderr=stderr,
             **({"extract": {"out": "{DIR}/" + applications, "absent": [], "keep": keep}} if expect != (2,)
                else {"contained": {"out": None, "absent": [], "keep": keep}}))
        if name == "planted":
            case("restore-device-planted-undo", ["restore", "--undo", "{DIR}/Devices/UDID", "--app", app], expect=(0, 2),
                 extract={"out": "{DIR}/" + applications, "absent": [], "keep": keep})


# MARK: - Running


def unprivileged_prefix():
    """The command that runs the binary as nobody when this runs as root (setpriv), else nothing."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"] if setpriv else None


def tree_listing(folder, skip=None):
    """Every path at or below `folder` (its type and mode, a file's size and SHA-256, a link's
    target, the extended attributes), but those at or below `skip`."""
    import hashlib
    listing = []

    def entry(path):
        info = os.lstat(path)
        content = None
        if os.path.islink(path):
            content = os.readlink(path)
        elif os.path.isfile(path):
            digest = hashlib.sha256()
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    digest.update(chunk)
            content = digest.hexdigest()
        try:
            attributes = sorted((name, os.getxattr(path, name, follow_symlinks=False).hex())
                                for name in os.listxattr(path, follow_symlinks=False))
        except OSError:
            attributes = []
        return (os.path.relpath(path, folder), info.st_mode, info.st_size if not os.path.isdir(path) else 0, content, tuple(attributes))

    if os.path.lexists(folder) and folder != skip:
        listing.append(entry(folder))
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if os.path.join(root, d) != skip]
        for name in sorted(dirs + files):
            path = os.path.join(root, name)
            if path == skip:
                continue
            listing.append(entry(path))
    return sorted(listing)


def links_outside(out):
    """The symlinks below `out` whose target the kernel resolves (realpath) outside `out`."""
    outside = []
    root = os.path.realpath(out)
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            if os.path.islink(path) and os.path.commonpath([root, os.path.realpath(path)]) != root:
                outside.append(os.path.relpath(path, root))
    return outside


def links_outside_folded(out):
    """The symlinks below `out` that a filesystem folding names (as casefolded ext4: Unicode case
    folding of the NFD form; APFS folds much the same) would resolve outside `out`: each link
    followed component by component, a name found by its folded form among the folder's
    entries, `..` taken from the folder reached, stopping (inside) at a name not there or a file."""
    import unicodedata

    def fold(name):
        try:
            return unicodedata.normalize("NFD", name.decode("utf-8")).casefold()
        except UnicodeDecodeError:
            return name

    root = os.path.realpath(out)
    outside = []
    for folder, dirs, files in os.walk(root):
        for link_name in dirs + files:
            link = os.path.join(folder, link_name)
            if not os.path.islink(link):
                continue
            here = os.path.relpath(folder, root).split(os.sep) if folder != root else []
            work = list(reversed(os.fsencode(os.readlink(link)).split(b"/")))
            hops = 0
            escaped = False
            while work and hops <= 40:
                part = work.pop()
                if part in (b"", b"."):
                    continue
                if part == b"..":
                    if not here:
                        escaped = True
                        break
                    here.pop()
                    continue
                current = os.path.join(root, *here)
                try:
                    entries = os.listdir(os.fsencode(current))
                except OSError:
                    break
                found = [e for e in entries if fold(e) == fold(part)]
                if not found:
                    break
                path = os.path.join(os.fsencode(current), found[0])
                if os.path.islink(path):
                    hops += 1
                    target = os.readlink(path)
                    if target.startswith(b"/"):
                        escaped = True
                        break
                    work.extend(reversed(target.split(b"/")))
                elif os.path.isdir(path):
                    here.append(os.fsdecode(found[0]))
                else:
                    break
            if escaped:
                outside.append(os.path.relpath(link, root))
    return outside


STATS_PREFIX = b"appdata-stats: "


def work_counts(stderr):
    """appdata's own counts from its APPDATA_DEBUG_STATS line (the last line of stderr), and
    stderr without it; the counts are None when there is no such line (a signal ended it)."""
    lines = stderr.split(b"\n")
    at = len(lines) - 2 if stderr.endswith(b"\n") else len(lines) - 1
    if at < 0 or not lines[at].startswith(STATS_PREFIX):
        return {"decompressedBytes": None, "entriesRead": None, "keyRounds": None, "symlinkSteps": None}, stderr
    fields = dict(item.split(b"=", 1) for item in lines[at][len(STATS_PREFIX):].split())
    counts = {"decompressedBytes": int(fields[b"decompressed-bytes"]), "entriesRead": int(fields[b"entries-read"]),
              "keyRounds": int(fields[b"key-rounds"]),
              "symlinkSteps": int(fields[b"symlink-steps"]) if b"symlink-steps" in fields else None}
    return counts, b"\n".join(lines[:at] + lines[at + 1:])


def run_one(binary, args, stdin=None, env=None, timeout=HANG_SECONDS, cwd=None, address_space=None, prefix=()):
    """Runs the binary (in `cwd`, under an address-space limit of `address_space` bytes, after
    `prefix`, a command such as setpriv's), killed as hung after `timeout` seconds; returns
    status, signal, whether it hung, seconds, CPU seconds, peak RSS (MiB), appdata's work counts,
    stdout and stderr (without the counts' line)."""
    environment = dict(os.environ)
    environment.update(env or {})
    environment.pop("APPDATA_BACKUP_PASSWORD", None)
    environment["APPDATA_DEBUG_STATS"] = "1"
    limit = None
    if address_space:
        limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    start = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = subprocess.Popen(list(prefix) + [os.path.abspath(binary)] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=environment, cwd=cwd, preexec_fn=limit)
    hung = False
    try:
        out, err = process.communicate((stdin or "").encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        hung = True
        process.kill()
        out, err = process.communicate()
    seconds = time.monotonic() - start
    status = process.returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    rss = after.ru_maxrss / 1024
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    counts, err = work_counts(err)
    return {"status": status if status >= 0 else None, "signal": -status if status < 0 else None, "hung": hung,
            "timeout": timeout, "seconds": round(seconds, 3), "cpuSeconds": round(cpu, 3), "rssMiB": round(rss, 1), **counts,
            "stdout": out, "stderr": err}


def problems_of(result, expect, stderr_contains=None, work=None, rss=None):
    problems = []
    if result.get("hung"):
        problems.append(f"hung: killed after {result['timeout']} s")
    elif result["signal"]:
        problems.append(f"killed by signal {result['signal']}")
    elif result["status"] not in expect:
        problems.append(f"exit {result['status']}, expected {expect}")
    # Work as appdata counts it, never seconds: a slow or loaded machine does no more of it.
    for key, bound in (work or {}).items():
        if result.get(key) is None:
            problems.append(f"no {key} count (APPDATA_DEBUG_STATS line missing)")
        elif result[key] > bound:
            problems.append(f"{key} {result[key]} (> {bound})")
    if result["rssMiB"] > (rss or RSS_MIB):
        problems.append(f"peak RSS {result['rssMiB']} MiB (> {rss or RSS_MIB})")
    for stream in ("stdout", "stderr"):
        for escape in ESCAPES:
            if escape in result[stream] and not (stream == "stdout" and escape in (b"\x9b",)):
                problems.append(f"{stream} holds a raw {escape!r}")
    if result["status"] == 2 and result["stderr"].count(b"\n") != 1:
        problems.append("a refusal is not exactly one line on stderr")
    if stderr_contains and stderr_contains.encode() not in result["stderr"]:
        problems.append(f"stderr lacks {stderr_contains!r}")
    return problems


def measured(binary, args, stdin, env, cwd=None, address_space=None, prefix=(), timeout=HANG_SECONDS):
    """run_one in a child Python, so that peak RSS is this command's alone."""
    code = ("import json,sys,importlib.util;s=importlib.util.spec_from_file_location('h',sys.argv[1]);"
            "m=importlib.util.module_from_spec(s);s.loader.exec_module(m);"
            "r=m.run_one(sys.argv[2],json.loads(sys.argv[3]),json.loads(sys.argv[4]),json.loads(sys.argv[5]),"
            "cwd=json.loads(sys.argv[6]),address_space=json.loads(sys.argv[7]),prefix=json.loads(sys.argv[8]),"
            "timeout=json.loads(sys.argv[9]));"
            "r['stdout']=r['stdout'].decode('latin-1');r['stderr']=r['stderr'].decode('latin-1');print(json.dumps(r))")
    output = subprocess.run([sys.executable, "-c", code, os.path.abspath(__file__), binary, json.dumps(args),
                             json.dumps(stdin), json.dumps(env), json.dumps(cwd), json.dumps(address_space), json.dumps(list(prefix)),
                             json.dumps(timeout)],
                            capture_output=True, check=True).stdout
    result = json.loads(output)
    result["stdout"] = result["stdout"].encode("latin-1")
    result["stderr"] = result["stderr"].encode("latin-1")
    return result


def run(binary, out, only):
    with open(os.path.join(out, "cases.json")) as f:
        cases = json.load(f)
    passed = failed = 0
    for item in cases:
        if only and not any(item["name"].startswith(prefix) for prefix in only):
            continue
        folder = os.path.join(out, item["dir"])
        args = [a.replace("{DIR}", folder) for a in item["args"]]
        cwd = item.get("cwd") and item["cwd"].replace("{DIR}", folder)
        extract = item.get("extract")
        spec = extract or item.get("contained")
        prefix = []
        if spec:
            # As nobody, so that a regression cannot reach the machine's files; the case's
            # folder is made writable for it, and compared before and after.
            prefix = unprivileged_prefix()
            if prefix is None:
                print(json.dumps({"name": item["name"], "problems": ["setpriv is missing: cannot run as an unprivileged user"]}))
                failed += 1
                continue
            if prefix:
                subprocess.run(["chown", "-R", "65534:65534", folder], check=True)
            out_path = spec.get("out") and os.path.normpath(spec["out"].replace("{DIR}", folder))
            before = tree_listing(folder, out_path)
            kept = {path: tree_listing(path.replace("{DIR}", folder)) for path in spec.get("keep", [])}
        result = measured(binary, args, item["stdin"], item["env"], cwd, item.get("addressSpace"), prefix,
                          timeout=item.get("hang") or HANG_SECONDS)
        problems = problems_of(result, item["expect"], item["stderrContains"], item.get("work"), item.get("rss"))
        if spec:
            after = tree_listing(folder, out_path)
            if after != before:
                changed = sorted(set(before) ^ set(after))[:5]
                where = "outside OUT" if extract else "outside the container" if out_path else "(nothing may)"
                problems.append(f"changed {where}: {changed}")
            for path, listing in kept.items():
                if tree_listing(path.replace("{DIR}", folder)) != listing:
                    problems.append(f"{path} (user data) changed")
            for path in spec.get("absent", []):
                if os.path.lexists(path.replace("{DIR}", folder)):
                    problems.append(f"{path} was made")
            if extract and os.path.isdir(out_path):
                # Where appdata is told names fold, links are judged as such a filesystem
                # resolves them (this one does not fold: its realpath is not the question).
                folds = item["env"].get("APPDATA_TEST_NAME_COMPARISON") == "case"
                outside = links_outside_folded(out_path) if folds else links_outside(out_path)
                if outside:
                    problems.append(f"links in OUT resolve outside it{' where names fold' if folds else ''}: {outside[:5]}")
        passed += not problems
        failed += bool(problems)
        print(json.dumps({"name": item["name"], "status": result["status"], "signal": result["signal"],
                          "seconds": result["seconds"], "cpuSeconds": result.get("cpuSeconds"), "rssMiB": result["rssMiB"],
                          "decompressedBytes": result["decompressedBytes"], "entriesRead": result["entriesRead"],
                          "keyRounds": result["keyRounds"], "symlinkSteps": result["symlinkSteps"],
                          "stderr": result["stderr"][:400].decode("utf-8", "replace"), "problems": problems}), flush=True)
    print(f"{passed} passed, {failed} failed")
    return failed == 0


# MARK: - Fixed-seed mutation run


def mutate_bytes(data, rng):
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        choice = rng.randrange(6)
        if not data:
            data += bytes([rng.randrange(256)])
            continue
        at = rng.randrange(len(data))
        if choice == 0:
            data[at] = rng.randrange(256)
        elif choice == 1:
            data[at] ^= 1 << rng.randrange(8)
        elif choice == 2:
            del data[at:at + rng.randint(1, 16)]
        elif choice == 3:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif choice == 4:
            for k in range(min(8, len(data) - at)):
                data[at + k] = 0xFF
        else:
            span = data[at:at + rng.randint(1, 64)]
            data[rng.randrange(len(data)):0] = span
    return bytes(data)


def mutate(binary, corpus, out, seed, count):
    """Each corpus file (its folder names its kind) mutated `count` times, placed where appdata
    reads that kind, and run: the bounds of `problems_of` hold for every run."""
    rng = random.Random(seed)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    passed = failed = 0
    scratch = os.path.join(out, "case")
    inputs = [(kind, os.path.join(root, kind, name)) for root in corpus.split(",") for kind in sorted(os.listdir(root))
              for name in sorted(os.listdir(os.path.join(root, kind)))]
    for kind, path in inputs:
        name = os.path.basename(path)
        with open(path, "rb") as f:
            original = f.read()
        for index in range(count):
            data = mutate_bytes(original, rng)
            shutil.rmtree(scratch, ignore_errors=True)
            os.makedirs(scratch)
            args, expect = place(kind, data, scratch)
            if args is None:
                continue
            # A run that writes runs as nobody, and nothing but its OUT may change (issue 48).
            prefix = []
            if args[0] in ("extract", "migrate"):
                prefix = unprivileged_prefix()
                if prefix is None:
                    print(json.dumps({"kind": kind, "problems": ["setpriv is missing: cannot run as an unprivileged user"]}))
                    return False
                if prefix:
                    subprocess.run(["chown", "-R", "65534:65534", scratch], check=True)
                before = tree_listing(scratch, os.path.join(scratch, "out"))
            # Peak RSS over all children so far: a run over the bound is the first to raise it.
            result = run_one(binary, args, PASSWORD + "\n", {}, prefix=prefix)
            problems = problems_of(result, expect)
            if args[0] in ("extract", "migrate") and tree_listing(scratch, os.path.join(scratch, "out")) != before:
                problems.append("changed outside OUT")
            if problems:
                failed += 1
                keep = os.path.join(out, f"failed-{kind}-{name}-{index}")
                with open(keep, "wb") as f:
                    f.write(data)
                print(json.dumps({"kind": kind, "input": name, "mutation": index, "kept": keep, "problems": problems,
                                  "stderr": result["stderr"][:300].decode("utf-8", "replace")}), flush=True)
            else:
                passed += 1
    shutil.rmtree(scratch, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return failed == 0


# MARK: - Issue 43: Android data folders and their rules


def android_data(path):
    """An Android app's credential-encrypted data folder, recognised by its shape."""
    for name, size in (("files/a.txt", 100), ("databases/app.db", 4096), ("shared_prefs/s.xml", 20), ("cache/c", 10)):
        write(os.path.join(path, name), b"x" * size)


def android_round(out, case, folder):
    """XML with entities, deep nesting and huge attributes; a data folder with symlinks out of it."""
    laughs = b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">' + b"".join(
        b'<!ENTITY lol%d "%s">' % (i, b"&lol%d;" % (i - 1) * 10 if i else b"&lol;" * 10) for i in range(10)) + \
        b']><full-backup-content><include domain="file" path="&lol9;"/></full-backup-content>'
    hostile = {
        "entities": laughs,
        "undeclared-entity": b'<full-backup-content><include domain="file" path="&xxe;"/></full-backup-content>',
        "system-entity": b'<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><full-backup-content/>',
        "deep": b"<full-backup-content>" + b"<include>" * 200000 + b"</include>" * 200000 + b"</full-backup-content>",
        "huge-attribute": b'<full-backup-content><include domain="file" path="' + b"a" * (10 << 20) + b'"/></full-backup-content>',
        "many-attributes": b"<full-backup-content><include " + b" ".join(b'a%d="x"' % i for i in range(5000)) + b"/></full-backup-content>",
        "not-utf8": b'<full-backup-content><include domain="file" path="\xff\xfe"/></full-backup-content>',
        "unclosed": b"<data-extraction-rules><cloud-backup><include domain=\"file\"",
    }
    for name, data in hostile.items():
        d = folder(f"android-rules-{name}")
        android_data(os.path.join(d, "data"))
        write(os.path.join(d, "rules.xml"), data)
        case(f"android-rules-{name}", ["audit", "--format", "json", "--android-rules", "{DIR}/rules.xml", "{DIR}/data"], expect=(2,))
        write(os.path.join(d, "AndroidManifest.xml"), data.replace(b"full-backup-content", b"manifest"))
        case(f"android-manifest-{name}", ["audit", "--format", "json", "--android-manifest", "{DIR}/AndroidManifest.xml", "{DIR}/data"],
             expect=(2,))
    # Symlinks out of the data folder are never followed: the figures are the folder's own.
    d = folder("android-symlinks-out")
    android_data(os.path.join(d, "data"))
    os.symlink("/etc", os.path.join(d, "data", "files", "etc"))
    os.symlink("/", os.path.join(d, "data", "app_root"))
    os.symlink("../../outside", os.path.join(d, "data", "databases", "outside.db"))
    write(os.path.join(d, "outside"), b"y" * 100000)
    case("android-symlinks-out", ["audit", "--format", "json", "{DIR}/data"], expect=(0, 1))
    # A tar of a data folder whose names climb out, start at /, or are links out: read in
    # place (nothing is extracted), never counted where they point.
    d = folder("android-tar-traversal")
    with tarfile.open(os.path.join(d, "app.tar"), "w") as t:
        for name, data in (("./shared_prefs/s.xml", b"<map/>"), ("../../etc/passwd", b"x"), ("/abs/file", b"y"),
                           ("files/../../x", b"z"), ("./databases/app.db", b"d" * 4096)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("files/link")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/shadow"
        t.addfile(link)
    case("android-tar-traversal", ["audit", "--format", "json", "--platform", "android", "{DIR}/app.tar"], expect=(0, 1))
    case("android-tar-traversal-by-shape", ["audit", "--format", "json", "{DIR}/app.tar"], expect=(0, 1))
    # adb backup files and LocalTransport streams given with --backup: a zlib bomb, a truncated
    # file, an encrypted one asking for 2^31 rounds (refused before any is computed), a header line that never ends, a pax
    # header of 100 MB, a size that is not a number.
    d = folder("android-backups")
    android_data(os.path.join(d, "data"))
    compressor = zlib.compressobj(9)
    zeros = bytes(1 << 24)
    write(os.path.join(d, "bomb.ab"), b"ANDROID BACKUP\n5\n1\nnone\n" + b"".join(compressor.compress(zeros) for _ in range(32)) + compressor.flush())
    plain = io.BytesIO()
    with tarfile.open(fileobj=plain, mode="w") as t:
        info = tarfile.TarInfo("apps/com.example.app/f/a.txt")
        info.size = 100
        t.addfile(info, io.BytesIO(b"x" * 100))
    write(os.path.join(d, "truncated.ab"), (b"ANDROID BACKUP\n5\n1\nnone\n" + zlib.compress(plain.getvalue()))[:60])
    write(os.path.join(d, "rounds.ab"), b"ANDROID BACKUP\n5\n1\nAES-256\n" + b"00" * 64 + b"\n" + b"00" * 64 + b"\n2147483648\n" + b"00" * 16 + b"\n" + b"00" * 96 + b"\n")
    write(os.path.join(d, "endless.ab"), b"ANDROID BACKUP\n" + b"5" * 100000)
    # Encrypted headers that lie: a salt that is not hex, a master key blob of 100,000 hex
    # digits, a blob whose length is not a whole AES block, and one whose padding is a lie.
    encrypted = b"ANDROID BACKUP\n5\n1\nAES-256\n"
    write(os.path.join(d, "bad-hex.ab"), encrypted + b"zz" * 64 + b"\n" + b"00" * 64 + b"\n1000\n" + b"00" * 16 + b"\n" + b"00" * 96 + b"\n")
    write(os.path.join(d, "huge-blob.ab"), encrypted + b"00" * 64 + b"\n" + b"00" * 64 + b"\n1000\n" + b"00" * 16 + b"\n" + b"0" * 100000 + b"\n")
    write(os.path.join(d, "odd-blob.ab"), encrypted + b"00" * 64 + b"\n" + b"00" * 64 + b"\n1000\n" + b"00" * 16 + b"\n" + b"00" * 95 + b"\n")
    write(os.path.join(d, "lying-blob.ab"), encrypted + b"00" * 64 + b"\n" + b"00" * 64 + b"\n1000\n" + b"00" * 16 + b"\n" + b"ff" * 96 + b"\n")
    huge_pax = bytearray(512)
    huge_pax[0:9] = b"PaxHeader"
    huge_pax[124:136] = b"%011o\0" % (100 << 20)
    huge_pax[156:157] = b"x"
    write(os.path.join(d, "huge-pax.stream"), bytes(huge_pax) + bytes(1024))
    bad_size = bytearray(plain.getvalue()[:512])
    bad_size[124:136] = b"99999999999\0"
    write(os.path.join(d, "bad-size.stream"), bytes(bad_size) + bytes(1024))
    # Sizes near 2^64 (a pax record's and a base-256 field's): the size and its padding must not overflow.
    huge_size = io.BytesIO()
    with tarfile.open(fileobj=huge_size, mode="w", format=tarfile.PAX_FORMAT) as t:
        info = tarfile.TarInfo("apps/com.example.app/f/a")
        info.size = 3
        info.pax_headers = {"size": "18446744073709551615"}
        t.addfile(info, io.BytesIO(b"abc"))
    write(os.path.join(d, "pax-size.stream"), huge_size.getvalue())
    base256 = bytearray(plain.getvalue()[:512])
    base256[124:136] = b"\x80\x00\x00\x00" + b"\xff" * 8
    base256[148:156] = b"        "
    base256[148:156] = b"%06o\0 " % sum(base256)
    write(os.path.join(d, "base256-size.stream"), bytes(base256) + bytes(1024))
    for name in ("bomb.ab", "truncated.ab", "rounds.ab", "endless.ab", "huge-pax.stream", "bad-size.stream", "pax-size.stream", "base256-size.stream",
                 "bad-hex.ab", "huge-blob.ab", "odd-blob.ab", "lying-blob.ab"):
        # Refused within the bomb bound, and (rounds.ab) before a key round is computed.
        case(f"android-backup-{name}", ["audit", "--format", "json", "--password-file", "{DIR}/password", "--backup", "{DIR}/" + name, "{DIR}/data"],
             expect=(2,), work={"decompressedBytes": BOMB_BYTES, **({"keyRounds": 0} if name == "rounds.ab" else {})})
    write(os.path.join(d, "password"), b"x\n")
    # A rules file naming paths that climb out, and a project whose manifest names a resource
    # that climbs out of res/xml.
    d = folder("android-climbing-rules")
    android_data(os.path.join(d, "data"))
    write(os.path.join(d, "rules.xml"), b'<full-backup-content><include domain="root" path="../../etc"/>'
          b'<exclude domain="file" path="/etc/passwd"/><include domain="nowhere" path="x"/></full-backup-content>')
    case("android-climbing-rules", ["audit", "--format", "json", "--android-rules", "{DIR}/rules.xml", "{DIR}/data"], expect=(0, 1))
    write(os.path.join(d, "app", "AndroidManifest.xml"),
          b'<manifest xmlns:android="http://schemas.android.com/apk/res/android"><application android:fullBackupContent="@xml/../../x"/></manifest>')
    case("android-climbing-resource", ["audit", "--android-manifest", "{DIR}/app/AndroidManifest.xml", "{DIR}/data"], expect=(2,),
         stderr="is not a resource name")


# MARK: - Issue 48: name bombs


def ab_name_bomb(path, entries, name_bytes, seed=48):
    """An adb backup (.ab, zlib, not encrypted) of `entries` entries, each a pax `path` of
    `name_bytes` bytes (apps/com.example.app/f/ then letters in runs, about 85:1 once
    compressed) and no data: gigabytes of names in a file of megabytes. Every entry's bytes are
    the same, compressed once as raw deflate blocks ending in a full flush and repeated; the
    zlib header, a final empty block and the Adler-32 of the whole tar make it a valid stream."""
    rng = random.Random(seed)
    prefix = b"apps/com.example.app/f/"
    body = bytearray()
    while len(body) < name_bytes - len(prefix):
        body += bytes([rng.choice(b"abcdefgh")]) * rng.randint(1, 520)
    name = prefix + bytes(body[:name_bytes - len(prefix)])
    record = b" path=" + name + b"\n"
    digits = len(str(len(record)))
    while len(str(len(record) + digits)) != digits:
        digits += 1
    record = str(len(record) + digits).encode() + record
    pax = tarfile.TarInfo("PaxHeader/a")
    pax.type = tarfile.XHDTYPE
    pax.size = len(record)
    entry = tarfile.TarInfo("a")
    block = (pax.tobuf(format=tarfile.USTAR_FORMAT) + record + bytes((512 - len(record) % 512) % 512)
             + entry.tobuf(format=tarfile.USTAR_FORMAT))
    end = bytes(1024)

    def deflated(data, mode):
        compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
        return compressor.compress(data) + compressor.flush(mode)

    repeated = deflated(block, zlib.Z_FULL_FLUSH)
    adler = 1
    for _ in range(entries):
        adler = zlib.adler32(block, adler)
    adler = zlib.adler32(end, adler)
    with open(path, "wb") as f:
        f.write(b"ANDROID BACKUP\n5\n1\nnone\n\x78\x9c")
        for _ in range(entries):
            f.write(repeated)
        f.write(deflated(end, zlib.Z_FINISH))
        f.write(struct.pack(">I", adler))


def tgz_name_bomb(path, entries, name_bytes):
    """A gzipped pax tar of a container whose Documents holds `entries` folders, each named with
    `name_bytes` bytes (its number, then letters) and holding an empty file: names that a reader
    keeps, one per folder (the folders are not entries of their own)."""
    import gzip
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for index in range(entries):
            archive.addfile(tarfile.TarInfo("c/Documents/" + f"{index:06d}-".ljust(name_bytes, "n") + "/x"))
    with open(path, "wb") as f:
        f.write(gzip.compress(raw.getvalue(), 1))


def names_round(out, case, folder):
    """What a reader keeps of an archive's names is bounded (--max-name-bytes, 64 MiB): past it,
    one line naming the option, exit 2, in bounded memory."""
    # The case: a 35 MB .ab (85:1) of 3,000 entries, each with a 1 MB pax name, grew to
    # 3.8 GB and aborted with SIGABRT.
    d = folder("name-bomb-ab")
    android_data(os.path.join(d, "data"))
    ab_name_bomb(os.path.join(d, "names.ab"), 3000, 1_000_000)
    case("name-bomb-ab", ["audit", "--format", "json", "--backup", "{DIR}/names.ab", "{DIR}/data"], expect=(2,),
         stderr="(--max-name-bytes raises it)", rss=256)
    # 20,000 folders of 4,000-byte names (80 MB of names in a 1 MB tgz): read as a container (audit
    # and extract), and as an Android app's data (every name is in its tree).
    d = folder("name-bomb-tgz")
    tgz_name_bomb(os.path.join(d, "names.tgz"), 20000, 4000)
    for name, args in (("audit", ["audit", "--format", "json", "{DIR}/names.tgz"]),
                       ("android", ["audit", "--format", "json", "--platform", "android", "{DIR}/names.tgz"]),
                       ("extract", ["extract", "--app", "com.example.app", "-o", "{DIR}/out", "{DIR}/names.tgz"])):
        case(f"name-bomb-tgz-{name}", args, expect=(2,), stderr="(--max-name-bytes raises it)", rss=256,
             extract={"out": "{DIR}/out"} if name == "extract" else None)


# MARK: - Issue 48: migrate on containers an attacker prepared


def migration_journal(path, root, source, destination, steps, identities="own"):
    """Writes an appdata migration journal at `path` (the container at `root`), its plan's paths
    as components (base64). identities: "own" records the container's and the file's own
    (device, inode), as appdata records them, so the journal passes the identity check and what
    refuses it is its paths; a dict gives others."""
    import base64
    components = lambda path: [base64.b64encode(part.encode()).decode() for part in path]
    def text(container, journal):
        plan = {"appdataMigrationJournal": 1, "container": container, "journal": journal,
                "source": components(source), "destination": components(destination), "into": None,
                "markers": ["modern"], "onConflict": "fail",
                "steps": [{"id": index, "kind": kind, "source": components(step_source), "destination": components(step_destination),
                           "mark": False, "files": 1, "bytes": 1, "key": None}
                          for index, (kind, step_source, step_destination) in enumerate(steps)]}
        return (json.dumps(plan, separators=(",", ":")) + "\n").encode()
    identity = lambda info: {"device": info.st_dev, "inode": info.st_ino}
    write(path, text({"device": 0, "inode": 0}, {"device": 0, "inode": 0}))
    if identities == "own":
        identities = {"container": identity(os.stat(root)), "journal": identity(os.stat(path))}
    # Rewritten in place ("wb" truncates the same inode), so the identities stay true.
    with open(path, "wb") as f:
        f.write(text(identities["container"], identities["journal"]))


def containment_round(out, case, folder):
    """migrate on a container an attacker prepared: a journal whose steps climb out with '..' or
    are absolute (with the identities appdata would record, so its paths are what is checked), a
    journal copied from another container, a user's folders named as partial copies, a
    symlinked Documents. Each run as nobody, nothing outside the container changed, and a
    refusal on one line (exit 2) with nothing changed inside either."""
    def prepared(name):
        d = folder(name)
        container(os.path.join(d, "c"))
        write(os.path.join(d, "c", "Library", "Caches", "cache.bin"), b"cache" * 100)
        write(os.path.join(d, "c", "Documents", "payload.sh"), b"echo pwned\n")
        write(os.path.join(d, "victim", "secret.txt"), b"secret\n")
        return d

    caches, documents = ["Library", "Caches"], ["Documents"]
    d = prepared("containment-journal-climbs")
    migration_journal(os.path.join(d, "c", ".appdata-migration.journal"), os.path.join(d, "c"), caches, documents, [
        ("move", caches + ["..", "..", "..", "victim", "secret.txt"], documents + ["secret.txt"]),
        ("move", caches + ["..", "..", "Documents", "payload.sh"], documents + ["..", "..", "victim", "planted.sh"]),
        ("create-folder", [], documents + ["..", "..", "victim", "made-by-appdata"])])
    case("containment-journal-climbs", ["migrate", "{DIR}/c"], expect=(2,), stderr="names a path outside the plan's folders",
         contained={"out": None, "absent": ["{DIR}/victim/planted.sh", "{DIR}/victim/made-by-appdata", "{DIR}/c/Documents/secret.txt"]})
    d = prepared("containment-journal-absolute")
    victim = os.path.join(d, "victim")
    migration_journal(os.path.join(d, "c", ".appdata-migration.journal"), os.path.join(d, "c"), caches, documents, [
        ("move", caches + ["/" + os.path.join(victim, "secret.txt").lstrip("/")], documents + ["secret.txt"]),
        ("move", caches + ["cache.bin"], documents + [os.path.join(victim, "planted.bin")]),
        ("move", [""] + victim.lstrip("/").split("/") + ["secret.txt"], documents + ["stolen.txt"])])
    case("containment-journal-absolute", ["migrate", "{DIR}/c"], expect=(2,), stderr="names a path outside the plan's folders",
         contained={"out": None, "absent": ["{DIR}/victim/planted.bin", "{DIR}/c/Documents/secret.txt", "{DIR}/c/Documents/stolen.txt"]})
    # A journal appdata would have written for container a (its identities), with a plan that
    # stays inside: copied into container c, it is data, not a plan.
    d = prepared("containment-journal-copied")
    container(os.path.join(d, "a"))
    write(os.path.join(d, "a", "Library", "Caches", "cache.bin"), b"cache" * 100)
    migration_journal(os.path.join(d, "a", ".appdata-migration.journal"), os.path.join(d, "a"), caches, documents, [
        ("move", caches + ["cache.bin"], documents + ["cache.bin"])])
    shutil.copy2(os.path.join(d, "a", ".appdata-migration.journal"), os.path.join(d, "c", ".appdata-migration.journal"))
    case("containment-journal-copied", ["migrate", "{DIR}/c"], expect=(2,), stderr="was not written by appdata migrate in this container",
         contained={"out": None, "absent": ["{DIR}/c/Documents/cache.bin"]})
    # A user's folders and files named as partial copies (as earlier versions named them, and as
    # this one does, with an owner record that proves nothing), moved onto on one filesystem and
    # across (a copy): each stays byte for byte.
    for name, env in (("containment-partial-names", None), ("containment-partial-names-copy", {"APPDATA_TEST_FORCE_COPY": "1"})):
        d = prepared(name)
        token = "0123456789abcdef0123456789abcdef"
        write(os.path.join(d, "c", "Documents", ".appdata-partial-0", "mine.txt"), b"mine\n")
        write(os.path.join(d, "c", "Documents", ".appdata-partial-" + token, "mine.txt"), b"mine too\n")
        write(os.path.join(d, "c", "Documents", ".appdata-partial-" + token + ".owner"), b"appdata-owner 1 " + b"f" * 32 + b" folder\n")
        write(os.path.join(d, "c", "Library", "Caches", ".appdata-partial-1"), b"a file\n")
        case(name, ["migrate", "{DIR}/c"], expect=(0,), env=env,
             contained={"out": "{DIR}/c", "keep": ["{DIR}/c/Documents/.appdata-partial-0", "{DIR}/c/Documents/.appdata-partial-" + token,
                                                  "{DIR}/c/Documents/.appdata-partial-" + token + ".owner"]})
    # Documents a symlink to a folder outside: refused, nothing moved there.
    d = prepared("containment-documents-symlink")
    shutil.rmtree(os.path.join(d, "c", "Documents"))
    os.symlink("../victim", os.path.join(d, "c", "Documents"))
    for name, env in (("containment-documents-symlink", None), ("containment-documents-symlink-copy", {"APPDATA_TEST_FORCE_COPY": "1"})):
        case(name, ["migrate", "{DIR}/c"], expect=(2,), env=env, stderr="Documents: is a symlink",
             contained={"out": None, "absent": ["{DIR}/victim/cache.bin"]})


def place(kind, data, folder):
    """Puts a mutated input where appdata reads it; the command line and the statuses allowed."""
    if kind in ("bplist", "xmlplist"):
        container(os.path.join(folder, "c"))
        write(os.path.join(folder, "c", ".com.apple.mobile_container_manager.metadata.plist"), data)
        return ["audit", "--format", "json", os.path.join(folder, "c")], (0, 1)
    if kind == "androidxml":
        android_data(os.path.join(folder, "data"))
        write(os.path.join(folder, "rules.xml"), data)
        return ["audit", "--format", "json", "--android-rules", os.path.join(folder, "rules.xml"), os.path.join(folder, "data")], (0, 1, 2)
    if kind == "manifest-plist":
        plain_backup(os.path.join(folder, "b"))
        write(os.path.join(folder, "b", "Manifest.plist"), data)
        return ["audit", "--format", "json", os.path.join(folder, "b")], (0, 1, 2)
    if kind == "json":
        container(os.path.join(folder, "c"))
        write(os.path.join(folder, "config.json"), data)
        return ["audit", "--config", os.path.join(folder, "config.json"), os.path.join(folder, "c")], (0, 1, 2)
    if kind == "archive":
        write(os.path.join(folder, "a.tar"), data)
        return ["audit", "--format", "json", os.path.join(folder, "a.tar")], (0, 1, 2)
    if kind == "manifest-db":
        plain_backup(os.path.join(folder, "b"))
        write(os.path.join(folder, "b", "Manifest.db"), data)
        return ["audit", "--format", "json", os.path.join(folder, "b")], (0, 1, 2)
    if kind == "glob":
        pattern = data.split(b"\n")[0]
        if b"\0" in pattern or not pattern:
            return None, None
        container(os.path.join(folder, "c"))
        return ["audit", "--ignore", pattern.decode("utf-8", "surrogateescape"), os.path.join(folder, "c")], (0, 1, 2)
    if kind == "mbfile":
        # Audited, or (half of the mutations, by length) extracted with the blob on a file row, a
        # symlink row and a folder row.
        if len(data) % 2 == 0:
            plain_backup(os.path.join(folder, "b"), [("AppDomain-com.example.app", "Documents/a", 1, 0, data)])
            return ["audit", "--format", "json", os.path.join(folder, "b")], (0, 1)
        plain_backup(os.path.join(folder, "b"), [("AppDomain-com.example.app", "Documents/a", 1, 0, data),
                                                 ("AppDomain-com.example.app", "Documents/l", 4, 0, data),
                                                 ("AppDomain-com.example.app", "Documents/f", 2, 0, data)])
        return ["extract", "--json", "--app", "com.example.app", "-o", os.path.join(folder, "out"), os.path.join(folder, "b")], (0, 1)
    return None, None


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "make":
        make(sys.argv[2])
        return 0
    if len(sys.argv) >= 4 and sys.argv[1] == "run":
        only = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--only"]
        return 0 if run(sys.argv[2], sys.argv[3], only) else 1
    if len(sys.argv) >= 5 and sys.argv[1] == "mutate":
        seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 19
        count = int(sys.argv[sys.argv.index("--count") + 1]) if "--count" in sys.argv else 20
        return 0 if mutate(sys.argv[2], sys.argv[3], sys.argv[4], seed, count) else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
