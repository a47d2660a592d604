#!/usr/bin/env python3
"""Writes what Android's backup would send for an app's data folder, as an independent writer:
an `adb backup` file (.ab: the text header, then the tar, zlib-compressed or not) or the tar
alone (the stream LocalTransport keeps for a package). Each entry is named
apps/PKG/TOKEN/PATH, TOKEN the domain's (f, db, sp, r, ...), as AOSP's write_tarfile names it.

Usage: make-android-backup.py DATA OUT --package PKG [--format ab|ab-plain|stream]
                              [--skip PATH]... [--extra TOKEN/PATH]... [--encrypted-header]

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
        encryption = "AES-256" if args.encrypted_header else "none"
        out.write(f"ANDROID BACKUP\n5\n{1 if compressed else 0}\n{encryption}\n".encode())
        out.write(zlib.compress(payload) if compressed else payload)


if __name__ == "__main__":
    main()
