#!/usr/bin/env python3
"""Generates a Simulator-shaped device for benchmarks: DIR/data/Containers with app data
containers (Data/Application), app groups (Shared/AppGroup) and extensions
(Data/PluginKitPlugin), each a seeded generate-container.py tree with its metadata plist,
sizes falling off like real devices' (a few large apps, many small), N entries in all.

Usage: generate-device.py --entries N [--apps 12 --groups 5 --plugins 3] DIR
"""
import argparse
import os
import plistlib
import subprocess
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, required=True)
    parser.add_argument("--apps", type=int, default=12)
    parser.add_argument("--groups", type=int, default=5)
    parser.add_argument("--plugins", type=int, default=3)
    parser.add_argument("dir")
    args = parser.parse_args()
    containers = os.path.join(args.dir, "data", "Containers")
    if os.path.exists(containers):
        sys.exit(f"{containers}: exists")
    kinds = [("Data/Application", 2, f"com.example.app{index:02d}") for index in range(args.apps)]
    kinds += [("Shared/AppGroup", 7, f"group.com.example.app{index:02d}") for index in range(args.groups)]
    kinds += [("Data/PluginKitPlugin", 4, f"com.example.app{index:02d}.widget") for index in range(args.plugins)]
    weights = [1 / (index + 1) for index in range(len(kinds))]
    sizes = [max(20, int(args.entries * weight / sum(weights))) for weight in weights]
    sizes[0] += args.entries - sum(sizes)
    for index, ((place, content_class, identifier), entries) in enumerate(zip(kinds, sizes)):
        root = os.path.join(containers, place, str(uuid.UUID(int=index + 1)).upper())
        subprocess.run([sys.executable, os.path.join(HERE, "generate-container.py"), "--entries", str(entries),
                        "--seed", str(index + 1), root], check=True, stderr=subprocess.DEVNULL)
        with open(os.path.join(root, ".com.apple.mobile_container_manager.metadata.plist"), "wb") as handle:
            plistlib.dump({"MCMMetadataIdentifier": identifier, "MCMMetadataContentClass": content_class}, handle,
                          fmt=plistlib.FMT_BINARY)
    os.makedirs(os.path.join(containers, "Bundle", "Application"), exist_ok=True)
    print(f"{args.dir}: {len(kinds)} containers, {sum(sizes)} entries", file=sys.stderr)


if __name__ == "__main__":
    main()
