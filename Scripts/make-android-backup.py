#!/usr/bin/env python3
"""Writes what Android's backup would send for an app's data folder, as an independent writer:
an `adb backup` file (.ab: the text header, then the tar, zlib-compressed or not) or the tar
alone (the stream LocalTransport keeps for a package). Each entry is named
apps/PKG/TOKEN/PATH, TOKEN the domain's (f, db, sp, r, ...), as AOSP's write_tarfile names it.

Usage: make-android-backup.py DATA OUT --package PKG [--format ab|ab-plain|stream]
                              [--skip PATH]... [--extra TOKEN/PATH]... [--encrypted-header]
                              [--password PW [--rounds N]]

With --password, an encrypted .ab as AOSP's backup service writes one (PerformAdbBackupTask):
the user key is PBKDF2-HMAC-SHA1 of the password with the user salt; it encrypts (AES-256-CBC,
the user IV) a blob of the master IV, the master key and its checksum, which is PBKDF2-HMAC-SHA1
of the master key's bytes each widened as Java widens a signed byte to a char, in UTF-8; the
master key encrypts the (compressed) tar. Python's cryptography does the AES and the PBKDF2.

Which files go is decided here from the default rules only (no rules file): files/,
databases/, shared_prefs/ and the other top-level folders but cache/, code_cache/, no_backup/
and lib; symlinks never. --skip leaves a file out, --extra adds one that is not in DATA."""
import argparse, io, os, tarfile, zlib

DOMAINS = {"files": "f", "databases": "db", "shared_prefs": "sp"}
NEVER = {"cache", "code_cache", "no_backup", "lib"}


def entries(data):
    for top in sorted(os.listdir(data)):
        full = os.path.join(data, top)
        if top in NEVER or os.path.islink(full):
            continue
        token, base = (DOMAINS[top], full) if top in DOMAINS else ("r", data)
        if os.path.isfile(full):
            yield token, top, full
            continue
        for root, dirs, files in os.walk(full):
            dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(root, d)))
            for name in sorted(files):
                path = os.path.join(root, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                yield token, os.path.relpath(path, base), path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("out")
    parser.add_argument("--package", required=True)
    parser.add_argument("--format", default="ab", choices=["ab", "ab-plain", "stream"])
    parser.add_argument("--skip", action="append", default=[])
    parser.add_argument("--extra", action="append", default=[])
    parser.add_argument("--encrypted-header", action="store_true")
    parser.add_argument("--password")
    parser.add_argument("--rounds", type=int, default=10000)
    args = parser.parse_args()
    body = io.BytesIO()
    with tarfile.open(fileobj=body, mode="w", format=tarfile.PAX_FORMAT) as tar:
        manifest = tarfile.TarInfo(f"apps/{args.package}/_manifest")
        text = b"1\n" + args.package.encode() + b"\n"
        manifest.size = len(text)
        tar.addfile(manifest, io.BytesIO(text))
        for token, relative, path in entries(args.data):
            if relative in args.skip:
                continue
            with open(path, "rb") as f:
                content = f.read()
            info = tarfile.TarInfo(f"apps/{args.package}/{token}/{relative}")
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
        for extra in args.extra:
            info = tarfile.TarInfo(f"apps/{args.package}/{extra}")
            info.size = 5
            tar.addfile(info, io.BytesIO(b"extra"))
    payload = body.getvalue()
    with open(args.out, "wb") as out:
        if args.format == "stream":
            out.write(payload)
            return
        compressed = args.format == "ab"
        data = zlib.compress(payload) if compressed else payload
        if args.password is not None:
            out.write(f"ANDROID BACKUP\n5\n{1 if compressed else 0}\nAES-256\n".encode() + encrypted_header_and(data, args.password, args.rounds))
            return
        encryption = "AES-256" if args.encrypted_header else "none"
        out.write(f"ANDROID BACKUP\n5\n{1 if compressed else 0}\n{encryption}\n".encode())
        out.write(data)


def encrypted_header_and(data, password, rounds):
    """The encryption lines of the header, then `data` encrypted with the master key."""
    from cryptography.hazmat.primitives import hashes, padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

    def pbkdf2(secret, salt):
        return PBKDF2HMAC(algorithm=hashes.SHA1(), length=32, salt=salt, iterations=rounds).derive(secret)

    def cbc(key, iv, plain):
        padder = padding.PKCS7(128).padder()
        padded = padder.update(plain) + padder.finalize()
        encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
        return encryptor.update(padded) + encryptor.finalize()

    user_salt, checksum_salt = os.urandom(64), os.urandom(64)
    user_iv, master_iv, master_key = os.urandom(16), os.urandom(16), os.urandom(32)
    widened = "".join(chr(b) if b < 0x80 else chr(0xFF00 | b) for b in master_key).encode("utf-8")
    checksum = pbkdf2(widened, checksum_salt)
    blob = bytes([16]) + master_iv + bytes([32]) + master_key + bytes([32]) + checksum
    user_key = pbkdf2(password.encode("utf-8"), user_salt)
    lines = [user_salt.hex().upper(), checksum_salt.hex().upper(), str(rounds), user_iv.hex().upper(), cbc(user_key, user_iv, blob).hex().upper()]
    return ("\n".join(lines) + "\n").encode() + cbc(master_key, master_iv, data)


if __name__ == "__main__":
    main()
