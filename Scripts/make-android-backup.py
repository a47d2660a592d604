#!/usr/bin/env python3
"""Writes what Android's backup would send for an app's data folder, as an independent writer:
an `adb backup` file (.ab: the text header, then the tar, zlib-compressed or not) or the tar
alone (the stream LocalTransport keeps for a package). Each entry is named
apps/PKG/TOKEN/PATH, TOKEN the domain's (f, db, sp, r, ...), as AOSP's write_tarfile names it.

Usage: make-android-backup.py DATA OUT --package PKG [--format ab|ab-plain|stream]
                              [--skip PATH]... [--extra TOKEN/PATH]... [--encrypted-header]
                              [--password PW [--rounds N] [--key-out FILE]]
                              [--synthetic-bytes N]

With --password, an encrypted .ab as AOSP's backup service writes one (PerformAdbBackupTask):
the user key is PBKDF2-HMAC-SHA1 of the password with the user salt; it encrypts (AES-256-CBC,
the user IV) a blob of the master IV, the master key and its checksum, which is PBKDF2-HMAC-SHA1
of the master key's bytes each widened as Java widens a signed byte to a char, in UTF-8; the
master key encrypts the (compressed) tar. Python's cryptography does the AES and the PBKDF2.
Everything is streamed (tarfile's "w|", zlib's compressobj, the cipher's update), so
--synthetic-bytes can make a file of any size for the bench: 1 MiB files of base64 text.

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


class Sink:
    """The tar's bytes on their way out: zlib-compressed and AES-256-CBC-encrypted as they come
    (each optional), so a file of any size is written in constant memory."""

    def __init__(self, out, compressed, key=None, iv=None):
        self.out = out
        self.compressor = zlib.compressobj() if compressed else None
        self.encryptor = self.padder = None
        if key is not None:
            from cryptography.hazmat.primitives import padding
            from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
            self.padder = padding.PKCS7(128).padder()
            self.encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()

    def _emit(self, data):
        if self.encryptor is not None:
            data = self.encryptor.update(self.padder.update(data))
        self.out.write(data)

    def write(self, data):
        self._emit(self.compressor.compress(data) if self.compressor is not None else data)
        return len(data)

    def close(self):
        if self.compressor is not None:
            self._emit(self.compressor.flush())
        if self.encryptor is not None:
            self.out.write(self.encryptor.update(self.padder.finalize()) + self.encryptor.finalize())


def synthetic(total):
    """Files of 1 MiB (the last one shorter) making `total` bytes of base64 text: it compresses
    to about three quarters, as app data that is not already compressed does. Each file is a
    fresh random block, so zlib finds no repeats across files."""
    import base64
    index = 0
    while total > 0:
        size = min(total, 1 << 20)
        yield "f", f"synthetic/{index:06d}.txt", base64.b64encode(os.urandom(size * 3 // 4 + 3))[:size]
        total -= size
        index += 1


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
    parser.add_argument("--synthetic-bytes", type=int, help="write that many bytes of generated files instead of DATA's")
    parser.add_argument("--key-out", help="with --password: write the master key and IV there (hex, one line each), for openssl")
    args = parser.parse_args()
    compressed = args.format == "ab"
    with open(args.out, "wb") as out:
        key = iv = None
        if args.format != "stream":
            encrypted = args.password is not None
            encryption = "AES-256" if encrypted or args.encrypted_header else "none"
            out.write(f"ANDROID BACKUP\n5\n{1 if compressed else 0}\n{encryption}\n".encode())
            if encrypted:
                lines, key, iv = encrypted_header(args.password, args.rounds)
                out.write(lines)
                if args.key_out:
                    with open(args.key_out, "w") as f:
                        f.write(key.hex() + "\n" + iv.hex() + "\n")
        else:
            compressed = False
        sink = Sink(out, compressed, key, iv)
        with tarfile.open(fileobj=sink, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            def add(name, content):
                info = tarfile.TarInfo(f"apps/{args.package}/{name}")
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
            add("_manifest", b"1\n" + args.package.encode() + b"\n")
            if args.synthetic_bytes is not None:
                for token, relative, content in synthetic(args.synthetic_bytes):
                    add(f"{token}/{relative}", content)
            else:
                for token, relative, path in entries(args.data):
                    if relative in args.skip:
                        continue
                    with open(path, "rb") as f:
                        add(f"{token}/{relative}", f.read())
            for extra in args.extra:
                add(extra, b"extra")
        sink.close()


def encrypted_header(password, rounds):
    """The encryption lines of the header, and the master key and IV that encrypt the rest."""
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
    return ("\n".join(lines) + "\n").encode(), master_key, master_iv


if __name__ == "__main__":
    main()
