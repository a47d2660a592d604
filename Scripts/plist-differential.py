#!/usr/bin/env python3
"""Random property lists from a fixed seed, written by Python's plistlib (the reference reader
here, as CoreFoundation is on a Mac), each with the value plistlib reads back from it, for
appdata's reader to match value for value (Tests: PlistConformanceTests).

Usage: plist-differential.py OUTDIR [--seed S] [--count N]
       plist-differential.py --read FILE...     prints NAME<TAB>VALUE for each FILE plistlib reads,
                                                NAME<TAB>refused: WHY for one it refuses

Writes OUTDIR/N.plist (binary and XML alternately) and OUTDIR/expected.txt: one line per file,
`NAME<TAB>VALUE`, VALUE in a canonical form both sides can print exactly:
  i:DECIMAL  r:IEEE-754 BITS (hex)  b:0|1  s:UTF-8 (hex)  d:BYTES (hex)  t:SECONDS SINCE 2001 (bits)
  u:UID  [A,B,...]  {KEY-UTF-8-HEX=VALUE,...} with keys sorted by their UTF-8 bytes.
Every type is covered, with the extremes: integers from -2^63 to 2^64 - 1 (16-byte ones in
binary plists), reals with +-inf and -0, astral-plane and control-character strings, empty and
large data, dates, nesting, keys that differ only in Unicode composition (NFC and NFD).
"""
import datetime
import os
import plistlib
import random
import struct
import sys

EPOCH = datetime.datetime(2001, 1, 1, tzinfo=datetime.timezone.utc)
EXTREME_INTEGERS = [0, 1, -1, 2**63 - 1, -2**63, 2**63, 2**64 - 1, 255, 256, 65535, 65536, 2**32 - 1, 2**32, -129]
EXTREME_REALS = [0.0, -0.0, float("inf"), float("-inf"), 1e308, 5e-324, -1.5, 3.141592653589793]
ALPHABET = "abcXYZ019 _-.é字\U0001F600\t\n<>&\"'"


def canonical(value):
    if isinstance(value, bool):
        return "b:" + ("1" if value else "0")
    if isinstance(value, plistlib.UID):
        return "u:" + str(value.data)
    if isinstance(value, int):
        return "i:" + str(value)
    if isinstance(value, float):
        return "r:" + struct.pack(">d", value).hex()
    if isinstance(value, str):
        return "s:" + value.encode("utf-8").hex()
    if isinstance(value, bytes):
        return "d:" + value.hex()
    if isinstance(value, datetime.datetime):
        seconds = (value.replace(tzinfo=datetime.timezone.utc) - EPOCH).total_seconds()
        return "t:" + struct.pack(">d", seconds).hex()
    if isinstance(value, list):
        return "[" + ",".join(canonical(item) for item in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda key: key.encode("utf-8"))
        return "{" + ",".join(key.encode("utf-8").hex() + "=" + canonical(value[key]) for key in keys) + "}"
    raise TypeError(type(value))


def random_string(rng, xml):
    text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12)))
    if xml:
        # XML 1.0 cannot hold most control characters, and plistlib refuses them.
        text = "".join(c for c in text if c in "\t\n" or ord(c) >= 0x20)
    return text


def random_value(rng, depth, xml):
    kinds = ["int", "real", "bool", "string", "data", "date"] + (["array", "dict"] if depth < 4 else [])
    kind = rng.choice(kinds)
    if kind == "int":
        value = rng.choice(EXTREME_INTEGERS) if rng.random() < 0.5 else rng.randint(-2**63, 2**64 - 1)
        return value
    if kind == "real":
        return rng.choice(EXTREME_REALS) if rng.random() < 0.4 else rng.uniform(-1e6, 1e6)
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "string":
        return random_string(rng, xml)
    if kind == "data":
        return rng.randbytes(rng.choice([0, 1, 2, 3, 57, 300]))
    if kind == "date":
        return datetime.datetime(2001, 1, 1) + datetime.timedelta(seconds=rng.randint(-3_000_000_000, 3_000_000_000))
    if kind == "array":
        return [random_value(rng, depth + 1, xml) for _ in range(rng.randint(0, 5))]
    members = {}
    for _ in range(rng.randint(0, 5)):
        members[random_string(rng, xml) or "k"] = random_value(rng, depth + 1, xml)
    if rng.random() < 0.2:
        # The same name in two Unicode compositions: two keys, as plistlib and CoreFoundation keep them.
        members["caf\u00e9"] = random_value(rng, depth + 1, xml)
        members["cafe\u0301"] = random_value(rng, depth + 1, xml)
    return members


def read(files):
    for path in files:
        try:
            with open(path, "rb") as f:
                value = canonical(plistlib.load(f))
        except RecursionError:
            value = "refused: a reference cycle"
        except Exception as error:  # what plistlib refuses, with its reason
            value = "refused: " + type(error).__name__
        print(os.path.basename(path) + "\t" + value)


def main():
    if sys.argv[1] == "--read":
        read(sys.argv[2:])
        return
    out = sys.argv[1]
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 32
    count = int(sys.argv[sys.argv.index("--count") + 1]) if "--count" in sys.argv else 2000
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    lines = []
    for index in range(count):
        xml = index % 2 == 1
        value = {"top": random_value(rng, 0, xml)}
        name = f"{index:05d}.plist"
        data = plistlib.dumps(value, fmt=plistlib.FMT_XML if xml else plistlib.FMT_BINARY)
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        # The reference: what plistlib reads back from the file.
        lines.append(name + "\t" + canonical(plistlib.loads(data)))
    with open(os.path.join(out, "expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
