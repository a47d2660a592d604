#!/usr/bin/env python3
"""A folder of device backups over time, for the history of a folder of backups (issue 34).

Usage: make-backup-history.py OUTDIR

OUTDIR/Backup/00008030-001234567890802E                    the newest backup of device A
OUTDIR/Backup/00008030-001234567890802E-YYYYMMDD-HHMMSS    five archived copies of it, older
    (Finder's naming, unconfirmed): com.example.notes grows from one backup to the next, a game
    appears, grows, shrinks and disappears, a group appears late; the third copy is encrypted
    with make-test-backup's PASSWORD
OUTDIR/Backup/00008110-00AA11BB22CC33DD                    device B's one backup
Info.plist names each device (Unique Identifier) and Status.plist the date.
"""
import os
import plistlib
import random
import sys
from datetime import datetime, timedelta
import importlib.util

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("backup", os.path.join(HERE, "make-test-backup.py"))
backup = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(backup)

NOTES, GAME, GROUP = "com.example.notes", "com.example.game", "group.com.example.notes"
DEVICE_A, DEVICE_B = "00008030-001234567890802E", "00008110-00AA11BB22CC33DD"


def make(folder, udid, name, date, rows, applications, encrypted=False):
    os.makedirs(folder)
    backup.write_plists(folder, applications)
    for plist, key in (("Info.plist", "Last Backup Date"), ("Status.plist", "Date")):
        path = os.path.join(folder, plist)
        with open(path, "rb") as f:
            value = plistlib.load(f)
        value[key] = date
        if plist == "Info.plist":
            value["Unique Identifier"] = udid
            value["Target Identifier"] = udid
            value["Device Name"] = name
        with open(path, "wb") as f:
            plistlib.dump(value, f)
    backup.edit_manifest(folder, lambda manifest: manifest["Lockdown"].update(DeviceName=name, UniqueDeviceID=udid))
    backup.write_database(folder, rows, stored=False)
    if encrypted:
        backup.encrypt(folder, dpic=10)


def main():
    out = os.path.join(sys.argv[1], "Backup")
    os.makedirs(out, exist_ok=True)
    start = datetime(2026, 10, 1, 9, 30)
    game_sizes = [None, 5_000, 90_000, 40_000, None, None]
    for index in range(6):
        date = start + timedelta(days=7 * index)
        rows = [("AppDomain-" + NOTES, "Documents", 2, 0, None)]
        rows += [("AppDomain-" + NOTES, f"Documents/note{n}.txt", 1, 1_000 + 500 * index, None) for n in range(index + 1)]
        applications = [NOTES]
        if game_sizes[index]:
            rows.append(("AppDomain-" + GAME, "Library/Application Support/save.dat", 1, game_sizes[index], None))
            applications.append(GAME)
        if index >= 3:
            rows.append(("AppDomainGroup-" + GROUP, "Shared.sqlite", 1, 10_000 * index, None))
        newest = index == 5
        name = DEVICE_A if newest else f"{DEVICE_A}-{date:%Y%m%d-%H%M%S}"
        make(os.path.join(out, name), DEVICE_A, "Ann's iPhone", date, rows, applications, encrypted=index == 2)
    make(os.path.join(out, DEVICE_B), DEVICE_B, "Bob's iPad", start + timedelta(days=3),
         [("AppDomain-" + NOTES, "Documents/b.txt", 1, 777, None)], [NOTES])


if __name__ == "__main__":
    main()
