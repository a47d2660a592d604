#!/usr/bin/env python3
"""Builds iOS device backups (the Finder/iTunes and idevicebackup2 format, iOS 10 and later)
for the backup tests and the benchmark: Info.plist, Manifest.plist, Status.plist, a Manifest.db in
WAL mode whose `file` blobs are real NSKeyedArchiver MBFile archives, and the stored files at
<fileID[0:2]>/<fileID> (sparse: only their length matters).

Usage: make-test-backup.py OUTDIR            the test backups below
       make-test-backup.py --rows N [--apps A] [--encrypt PASSWORD --dpic N] DIR
                                             one backup of about N file rows (benchmarks),
                                             encrypted with PASSWORD and DPIC rounds if asked;
                                             A apps (default 40) and A/4 groups and extensions

Encrypted backups follow iOS 10.2 and later (as iphone-dataprotection decrypts them): a keybag whose class keys are
wrapped (RFC 3394) with PBKDF2-HMAC-SHA1(PBKDF2-HMAC-SHA256(password, DPSL, DPIC), SALT, ITER),
a ManifestKey wrapped with class 3's key, Manifest.db in AES-256-CBC with a zero IV and PKCS#7
padding, and stored files as long as their encrypted copies (padded to 16 bytes). Python's
`cryptography` does the cryptography (`make test` installs it).

OUTDIR/plain          apps (an id with dashes, an empty one, one only in Manifest.plist), an app
                      group, an extension, system domains; roots not at index 1, an 8-byte size,
                      hostile relativePaths, an undecodable blob, a cache file in the backup; stored
                      files present, one missing and one of the wrong size
OUTDIR/incomplete     SnapshotState 'uploading'
OUTDIR/encrypted      plain, encrypted with PASSWORD (spaces, non-ASCII) and a small DPIC; one
                      stored file shorter than its Size (the others padded, so longer)
OUTDIR/encrypted-old-keybag   the same with a keybag without DPSL and DPIC (only the SHA-1 step)
OUTDIR/encrypted-trailing     the same with 16 other bytes after the database, not padding
OUTDIR/encrypted-pre-10.2     IsEncrypted true with a plaintext Manifest.db and no ManifestKey
OUTDIR/encrypted-no-keybag    a Manifest.db that is not SQLite, a ManifestKey, no BackupKeyBag
OUTDIR/encrypted-damaged-*    encrypted, then damaged: a short ManifestKey, a keybag cut mid-record,
                      a ManifestKey naming a class the password does not unwrap, a ManifestKey
                      that does not unwrap, a Manifest.db cut to a part block, and a
                      Manifest.db whose plaintext is not SQLite
OUTDIR/not-sqlite     a Manifest.db holding text
OUTDIR/truncated      a Manifest.db cut in half
OUTDIR/no-files-table a SQLite Manifest.db without the Files table
OUTDIR/missing-db     the plists without Manifest.db
OUTDIR/old            a pre-iOS 10 backup: Manifest.mbdb, no Manifest.db
"""
import hashlib
import os
import plistlib
import random
import shutil
import sqlite3
import struct
import sys
from datetime import datetime

UID = plistlib.UID

PASSWORD = "correct horse \u00e9t\u00e9 \u96fb\u6c60 "  # spaces (one at the end) and non-ASCII
TEST_DPIC = 1000


def mbfile(relative_path, size, flags, layout):
    """An NSKeyedArchiver archive of an MBFile; `layout` moves the root away from index 1."""
    record = {"Size": size, "Mode": 0o100644 if flags == 1 else (0o40755 if flags == 2 else 0o120755),
              "LastModified": 1_600_000_000, "Birth": 1_600_000_000, "LastStatusChange": 1_600_000_000,
              "InodeNumber": 12345, "UserID": 501, "GroupID": 501, "ProtectionClass": 3, "Flags": 0}
    if layout == 0:
        record["RelativePath"] = UID(2)
        record["$class"] = UID(3)
        objects = ["$null", record, relative_path, {"$classname": "MBFile", "$classes": ["MBFile", "NSObject"]}]
        root = 1
    else:
        record["RelativePath"] = UID(1)
        record["$class"] = UID(2)
        objects = ["$null", relative_path, {"$classname": "MBFile", "$classes": ["MBFile", "NSObject"]}, record]
        root = 3
    return plistlib.dumps({"$version": 100000, "$archiver": "NSKeyedArchiver", "$top": {"root": UID(root)},
                           "$objects": objects}, fmt=plistlib.FMT_BINARY)


def file_id(domain, relative_path):
    raw = relative_path if isinstance(relative_path, bytes) else relative_path.encode()
    return hashlib.sha1(domain.encode() + b"-" + raw).hexdigest()


def write_plists(folder, applications, encrypted=False, state="finished", manifest_key=False):
    date = datetime(2026, 11, 1, 12, 0)  # plistlib writes naive datetimes as UTC
    with open(os.path.join(folder, "Info.plist"), "wb") as f:
        plistlib.dump({"Device Name": "Test iPhone", "Product Version": "17.1", "Product Type": "iPhone15,2",
                       "Last Backup Date": date, "Unique Identifier": "00008030-001234567890802E"}, f)
    manifest = {"IsEncrypted": encrypted, "Version": "10.0", "Date": date, "WasPasscodeSet": False,
                "Applications": {identifier: {"CFBundleIdentifier": identifier, "CFBundleVersion": "1",
                                              "Path": f"/var/containers/Bundle/Application/X/{identifier}.app"}
                                 for identifier in applications},
                "Lockdown": {"ProductVersion": "17.1", "DeviceName": "Test iPhone", "UniqueDeviceID": "00008030-001234567890802E"}}
    if manifest_key:
        manifest["ManifestKey"] = b"\x03\x00\x00\x00" + bytes(40)
    with open(os.path.join(folder, "Manifest.plist"), "wb") as f:
        plistlib.dump(manifest, f, fmt=plistlib.FMT_BINARY)
    with open(os.path.join(folder, "Status.plist"), "wb") as f:
        plistlib.dump({"SnapshotState": state, "IsFullBackup": True, "Date": date, "Version": "3.3", "UUID": "X"}, f,
                      fmt=plistlib.FMT_BINARY)


def write_database(folder, rows, stored=True, skip_stored=(), wrong_size=()):
    path = os.path.join(folder, "Manifest.db")
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE Files (fileID TEXT PRIMARY KEY, domain TEXT, relativePath TEXT, flags INTEGER, file BLOB)")
    db.execute("CREATE INDEX FilesDomainIdx ON Files(domain)")
    db.execute("CREATE INDEX FilesRelativePathIdx ON Files(relativePath)")
    db.execute("CREATE TABLE Properties (key TEXT PRIMARY KEY, value BLOB)")
    for index, (domain, relative_path, flags, size, blob) in enumerate(rows):
        identifier = file_id(domain, relative_path)
        if blob is None:
            text_path = relative_path.decode("utf-8", "replace") if isinstance(relative_path, bytes) else relative_path
            blob = mbfile(text_path, size, flags, index % 2)
        db.execute("INSERT INTO Files VALUES (?, ?, ?, ?, ?)", (identifier, domain, relative_path, flags, blob))
        if stored and flags == 1 and (domain, relative_path) not in skip_stored:
            folder_name = os.path.join(folder, identifier[:2])
            os.makedirs(folder_name, exist_ok=True)
            with open(os.path.join(folder_name, identifier), "wb") as f:
                f.truncate(size - 1 if (domain, relative_path) in wrong_size else size)
    db.commit()
    db.close()


def plain_rows():
    notes = "AppDomain-com.example.notes"
    myapp = "AppDomain-com.example.my-app"
    group = "AppDomainGroup-group.com.example.my-app"
    widget = "AppDomainPlugin-com.example.notes.widget"
    empty = "AppDomain-com.example.empty"
    return [
        (notes, "", 2, 0, None), (notes, "Documents", 2, 0, None), (notes, "Documents/note.txt", 1, 1000, None),
        (notes, "Library", 2, 0, None), (notes, "Library/Preferences", 2, 0, None),
        (notes, "Library/Preferences/com.example.notes.plist", 1, 200, None), (notes, "Documents/link", 4, 0, None),
        (myapp, "", 2, 0, None), (myapp, "Documents", 2, 0, None), (myapp, "Documents/big.mov", 1, 5_000_000_000, None),
        (myapp, "Library", 2, 0, None), (myapp, "Library/Caches", 2, 0, None), (myapp, "Library/Caches/leak.bin", 1, 700, None),
        (myapp, "Documents/evil\nname\x1b[31m", 1, 10, None), (myapp, b"Documents/\xff\xfe.bin", 1, 20, None),
        (myapp, "../escape", 1, 30, None), (myapp, "Documents/bad-blob", 1, 0, b"not a plist at all"),
        (group, "", 2, 0, None), (group, "ChatStorage.sqlite", 1, 4000, None), (group, "Library", 2, 0, None),
        (group, "Library/Preferences", 2, 0, None), (group, "Library/Preferences/g.plist", 1, 100, None),
        (group, "tmp", 2, 0, None), (group, "tmp/upload.part", 1, 60, None),
        (group, "Library/SplashBoard", 2, 0, None), (group, "Library/SplashBoard/s.ktx", 1, 80, None),
        (widget, "", 2, 0, None), (widget, "Documents", 2, 0, None), (widget, "Documents/w.json", 1, 250, None),
        (empty, "", 2, 0, None),
        ("HomeDomain", "", 2, 0, None), ("HomeDomain", "Library", 2, 0, None),
        ("HomeDomain", "Library/Preferences/com.apple.springboard.plist", 1, 300, None),
        ("CameraRollDomain", "Media/DCIM/100APPLE/IMG_0001.HEIC", 1, 2_000_000, None),
    ]


APPLICATIONS = ["com.example.notes", "com.example.my-app", "com.example.empty", "com.example.ghost"]


def make(folder, **options):
    os.makedirs(folder, exist_ok=True)
    write_plists(folder, APPLICATIONS, **options)


def keybag_and_keys(password, dpic, rng):
    """A backup keybag (class keys 1 to 11; class 11 device-wrapped) and the class keys."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
    from cryptography.hazmat.primitives.keywrap import aes_key_wrap

    def record(tag, value):
        return tag.encode() + struct.pack(">I", len(value)) + value

    def number(value):
        return struct.pack(">I", value)

    salt, dpsl, iterations = rng.randbytes(20), rng.randbytes(20), 10_000
    secret = password.encode()
    if dpic is not None:
        secret = PBKDF2HMAC(hashes.SHA256(), 32, dpsl, dpic).derive(secret)
    kek = PBKDF2HMAC(hashes.SHA1(), 32, salt, iterations).derive(secret)
    bag = record("VERS", number(4)) + record("TYPE", number(1)) + record("UUID", rng.randbytes(16))
    bag += record("HMCK", rng.randbytes(40)) + record("WRAP", number(0)) + record("SALT", salt)
    bag += record("ITER", number(iterations))
    if dpic is not None:
        bag += record("DPWT", number(1)) + record("DPIC", number(dpic)) + record("DPSL", dpsl)
    keys = {}
    for protection_class in range(1, 12):
        key = rng.randbytes(32)
        keys[protection_class] = key
        wrap = 1 if protection_class == 11 else 2
        wrapped = rng.randbytes(40) if wrap == 1 else aes_key_wrap(kek, key)
        bag += record("UUID", rng.randbytes(16)) + record("CLAS", number(protection_class))
        bag += record("WRAP", number(wrap)) + record("KTYP", number(0)) + record("WPKY", wrapped)
    return bag, keys


def encrypt(folder, password=PASSWORD, dpic=TEST_DPIC, trailing=b"", short=()):
    """Encrypts a plaintext backup in place: Manifest.plist gets IsEncrypted, BackupKeyBag and
    ManifestKey, Manifest.db is encrypted, and each stored file takes its encrypted length (the
    fileIDs in `short` left one byte shorter than their Size). Returns the database's key."""
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from cryptography.hazmat.primitives.keywrap import aes_key_wrap

    rng = random.Random(15)
    bag, class_keys = keybag_and_keys(password, dpic, rng)
    database_key = rng.randbytes(32)
    path = os.path.join(folder, "Manifest.db")
    rows = stored_rows(path)
    with open(path, "rb") as f:
        plain = f.read()
    if trailing:
        plain += trailing
    else:
        padder = padding.PKCS7(128).padder()
        plain = padder.update(plain) + padder.finalize()
    encryptor = Cipher(algorithms.AES(database_key), modes.CBC(bytes(16))).encryptor()
    with open(path, "wb") as f:
        f.write(encryptor.update(plain) + encryptor.finalize())
    edit_manifest(folder, lambda manifest: manifest.update(
        IsEncrypted=True, BackupKeyBag=bag, ManifestKey=struct.pack("<I", 3) + aes_key_wrap(class_keys[3], database_key)))
    pad_stored_files(folder, rows, short)
    return database_key


def edit_manifest(folder, change):
    """Reads the folder's Manifest.plist, lets `change` modify the dictionary, writes it back."""
    path = os.path.join(folder, "Manifest.plist")
    with open(path, "rb") as f:
        manifest = plistlib.load(f)
    change(manifest)
    with open(path, "wb") as f:
        plistlib.dump(manifest, f, fmt=plistlib.FMT_BINARY)


def stored_rows(path):
    db = sqlite3.connect(path)
    rows = db.execute("SELECT fileID, file FROM Files WHERE flags = 1").fetchall()
    db.close()
    return rows


def pad_stored_files(folder, rows, short=()):
    """Gives each stored file the length of its AES-CBC copy (Size rounded up past a 16-byte
    block), but for the fileIDs in `short`, left one byte shorter than their Size."""
    for file_id_value, blob in rows:
        stored = os.path.join(folder, file_id_value[:2], file_id_value)
        if not os.path.exists(stored):
            continue
        if file_id_value in short:
            continue  # already one byte short in the plain backup
        size = os.path.getsize(stored)
        with open(stored, "r+b") as f:
            f.truncate((size // 16 + 1) * 16)


def damaged(out, encrypted, database_key):
    """Copies of the encrypted backup (without its stored files), each damaged one way;
    `database_key` is the key its Manifest.db is encrypted with."""
    def copy(name, change_manifest=None, change_database=None):
        folder = os.path.join(out, "encrypted-damaged-" + name)
        os.makedirs(folder)
        for plist in ["Info.plist", "Status.plist", "Manifest.plist", "Manifest.db"]:
            shutil.copy(os.path.join(encrypted, plist), folder)
        if change_manifest:
            edit_manifest(folder, change_manifest)
        if change_database:
            path = os.path.join(folder, "Manifest.db")
            with open(path, "rb") as f:
                data = f.read()
            with open(path, "wb") as f:
                f.write(change_database(data))

    def set_key(manifest, value):
        manifest["ManifestKey"] = value

    def not_sqlite(_):
        # Text encrypted with the right key: the password is right, the content is not SQLite.
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        encryptor = Cipher(algorithms.AES(database_key), modes.CBC(bytes(16))).encryptor()
        return encryptor.update(b"not a database, but text".ljust(4096, b".")) + encryptor.finalize()

    copy("short-key", lambda m: set_key(m, b"\x03\x00\x00"))
    copy("keybag", lambda m: m.__setitem__("BackupKeyBag", m["BackupKeyBag"][:30]))
    copy("class", lambda m: set_key(m, struct.pack("<I", 11) + m["ManifestKey"][4:]))
    copy("manifest-key", lambda m: set_key(m, m["ManifestKey"][:4] + bytes(40)))
    copy("blocks", change_database=lambda data: data[:-5])
    copy("not-sqlite", change_database=not_sqlite)


def tests(out):
    if os.path.exists(out):
        shutil.rmtree(out)
    plain = os.path.join(out, "plain")
    make(plain)
    write_database(plain, plain_rows(),
                   skip_stored={("AppDomain-com.example.my-app", "Documents/big.mov")},
                   wrong_size={("AppDomain-com.example.notes", "Library/Preferences/com.example.notes.plist")})
    incomplete = os.path.join(out, "incomplete")
    make(incomplete, state="uploading")
    write_database(incomplete, plain_rows()[:7], stored=False)
    # Encrypted copies of plain: the stored file plain has one byte short stays short (so
    # --verify finds as much); the others take their padded, longer length.
    short_file = file_id("AppDomain-com.example.notes", "Library/Preferences/com.example.notes.plist")
    keys = {}
    for name, options in [("encrypted", {}), ("encrypted-old-keybag", {"dpic": None}),
                          ("encrypted-trailing", {"trailing": bytes(13) + b"\x07\x00\x03"})]:
        shutil.copytree(plain, os.path.join(out, name))
        keys[name] = encrypt(os.path.join(out, name), short={short_file}, **options)
    damaged(out, os.path.join(out, "encrypted"), keys["encrypted"])
    pre = os.path.join(out, "encrypted-pre-10.2")
    shutil.copytree(plain, pre)
    edit_manifest(pre, lambda manifest: manifest.update(IsEncrypted=True))
    pad_stored_files(pre, stored_rows(os.path.join(pre, "Manifest.db")), short={short_file})
    encrypted = os.path.join(out, "encrypted-no-keybag")
    make(encrypted, encrypted=True, manifest_key=True)
    with open(os.path.join(encrypted, "Manifest.db"), "wb") as f:
        f.write(random.Random(1).randbytes(8192))
    not_sqlite = os.path.join(out, "not-sqlite")
    make(not_sqlite)
    with open(os.path.join(not_sqlite, "Manifest.db"), "w") as f:
        f.write("this is not a database\n")
    truncated = os.path.join(out, "truncated")
    make(truncated)
    write_database(truncated, plain_rows() * 1, stored=False)
    path = os.path.join(truncated, "Manifest.db")
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])
    no_table = os.path.join(out, "no-files-table")
    make(no_table)
    db = sqlite3.connect(os.path.join(no_table, "Manifest.db"))
    db.execute("CREATE TABLE Properties (key TEXT PRIMARY KEY, value BLOB)")
    db.commit()
    db.close()
    missing = os.path.join(out, "missing-db")
    make(missing)
    old = os.path.join(out, "old")
    make(old)
    with open(os.path.join(old, "Manifest.mbdb"), "wb") as f:
        f.write(b"mbdb\x05\x00" + bytes(100))


def bench(folder, rows, password=None, dpic=None, apps=40):
    """About `rows` file rows over `apps` apps (40), a quarter as many groups and extensions
    (10 each), and 5 system domains."""
    if os.path.exists(folder):
        shutil.rmtree(folder)
    rng = random.Random(7)
    domains = [f"AppDomain-com.example.app{index:02d}" for index in range(apps)]
    domains += [f"AppDomainGroup-group.com.example.app{index:02d}" for index in range(apps // 4)]
    domains += [f"AppDomainPlugin-com.example.app{index:02d}.widget" for index in range(apps // 4)]
    domains += ["HomeDomain", "CameraRollDomain", "MediaDomain", "KeychainDomain", "WirelessDomain"]
    make(folder)
    data = []
    for index in range(rows):
        domain = domains[min(int(rng.paretovariate(1.2)) - 1, len(domains) - 1) if index % 3 else index % len(domains)]
        top = rng.choice(["Documents", "Library/Application Support", "Library/Preferences", "Library/WebKit"])
        data.append((domain, f"{top}/d{index % 500:03d}/f{index:07d}.bin", 1, rng.randrange(0, 1 << 20), None))
        if index % 20 == 0:
            data.append((domain, f"{top}/d{index % 500:03d}", 2, 0, None))
    # Unique fileIDs only (folders repeat).
    unique = {}
    for row in data:
        unique[(row[0], row[1])] = row
    write_database(folder, list(unique.values()), stored=False)
    if password is not None:
        encrypt(folder, password=password, dpic=dpic)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--rows":
        bench(sys.argv[3], int(sys.argv[2]))
    elif len(sys.argv) == 6 and sys.argv[1] == "--rows" and sys.argv[3] == "--apps":
        bench(sys.argv[5], int(sys.argv[2]), apps=int(sys.argv[4]))
    elif len(sys.argv) == 8 and sys.argv[1] == "--rows" and sys.argv[3] == "--encrypt" and sys.argv[5] == "--dpic":
        bench(sys.argv[7], int(sys.argv[2]), password=sys.argv[4], dpic=int(sys.argv[6]))
    elif len(sys.argv) == 2 and not sys.argv[1].startswith("-"):
        tests(sys.argv[1])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
