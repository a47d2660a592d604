#!/usr/bin/env python3
"""`make bench`: appdata audit against du -sb and getfattr on synthetic containers.

For each size it generates a seeded container (once; kept under the bench folder), warms
the page cache, then times the commands in alternation, round after round, and prints
medians, the ratio appdata/du and appdata's peak RSS (from wait4's rusage).

Usage: bench.py APPDATA_BINARY BENCH_DIR [--sizes 100000,1000000] [--rounds N]
"""
import argparse
import importlib.util
import json
import os
import plistlib
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(command, stdout=subprocess.DEVNULL):
    """Runs a command; returns (seconds, peak RSS in KiB, exit status)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=stdout, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    return elapsed, usage.ru_maxrss, os.waitstatus_to_exitcode(status)


def alternate(commands, rounds, reference, with_rss=False):
    """Warms up, then times `commands` in alternation for `rounds` rounds and prints each
    median, its ratio to the `reference` command's median, and appdata's peak RSS.
    Returns the medians by name."""
    for command in commands.values():
        run(command)
    times = {name: [] for name in commands}
    rss = {name: 0 for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            seconds, peak, status = run(command)
            if name.startswith("appdata") and status not in (0, 1):
                sys.exit(f"{name} exited {status}")
            times[name].append(seconds)
            rss[name] = max(rss[name], peak)
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name in commands:
        line = f"  {name:50s} {medians[name]:8.3f} s   {medians[name] / medians[reference]:5.2f} x {reference}"
        if name.startswith("appdata"):
            line += f"   peak RSS {human_kib(rss[name])}"
        print(line)
    return (medians, rss) if with_rss else medians


def ensure_generated(bench_dir, name, generator, entries, *extra):
    """BENCH_DIR/NAME-ENTRIES, made once by Scripts/GENERATOR (a stamp file says it finished)."""
    path = os.path.join(bench_dir, f"{name}-{entries}")
    stamp = path + ".done"
    if not os.path.exists(stamp):
        subprocess.run(["rm", "-rf", path], check=True)
        print(f"generating a {name} of {entries} entries in {path} ...", flush=True)
        subprocess.run([sys.executable, os.path.join(HERE, generator), "--entries", str(entries), *extra, path], check=True)
        open(stamp, "w").close()
    return path


def ensure_container(bench_dir, entries):
    return ensure_generated(bench_dir, "container", "generate-container.py", entries, "--seed", "1")


def ensure_device(bench_dir, entries):
    return ensure_generated(bench_dir, "device", "generate-device.py", entries)


def device(appdata, bench_dir, entries, rounds):
    """A Simulator-shaped device of 20 containers against one container of the same size: the
    report of many must cost what one walk of that many entries costs (both against du -sb)."""
    folder = ensure_device(bench_dir, entries)
    container = ensure_container(bench_dir, entries)
    commands = {
        "appdata audit --format json DEVICE": [appdata, "audit", "--format", "json", "--fail-on", "never", "--no-config", folder],
        "du -sb DEVICE": ["du", "-sb", folder],
        "appdata audit --format json CONTAINER": [appdata, "audit", "--format", "json", "--fail-on", "never", "--no-config", container],
        "du -sb CONTAINER": ["du", "-sb", container],
    }
    print(f"== a device of 20 containers (12 apps, 5 groups, 3 extensions), {entries} entries, against one container of {entries}; "
          f"{rounds} rounds, warm cache (medians) ==")
    medians = alternate(commands, rounds, "du -sb CONTAINER")
    device_ratio = medians["appdata audit --format json DEVICE"] / medians["du -sb DEVICE"]
    container_ratio = medians["appdata audit --format json CONTAINER"] / medians["du -sb CONTAINER"]
    print(f"  ratio appdata/du, device:    {device_ratio:.2f}")
    print(f"  ratio appdata/du, container: {container_ratio:.2f} (target: the device's ratio <= the container's; "
          f"{'met' if device_ratio <= container_ratio * 1.05 else 'missed'} within 5%)")
    print()


def backup(appdata, bench_dir, rows, rounds):
    """appdata audit of a generated device backup (WAL mode, real MBFile archives, groups and
    extensions) next to the sqlite3 shell scanning the same table: a count, and every column read."""
    folder = os.path.join(bench_dir, f"backup-{rows}")
    stamp = folder + ".done"
    if not os.path.exists(stamp):
        print(f"generating a device backup of {rows} file rows in {folder} ...", flush=True)
        subprocess.run([sys.executable, os.path.join(HERE, "make-test-backup.py"), "--rows", str(rows), folder], check=True)
        open(stamp, "w").close()
    uri = f"file:{folder}/Manifest.db?mode=ro&immutable=1"
    sqlite = "sqlite3 select fileID, domain, relativePath, flags, file"
    commands = {
        "appdata audit --format json BACKUP": [appdata, "audit", "--format", "json", "--fail-on", "never", "--no-config", folder],
        "appdata audit --format json --jobs 1 BACKUP": [appdata, "audit", "--format", "json", "--fail-on", "never", "--no-config", "--jobs", "1", folder],
        "sqlite3 count(*)": ["sqlite3", uri, "SELECT count(*) FROM Files"],
        # What SQLite needs to hand over the five columns appdata reads (issue 22's floor).
        sqlite: ["sqlite3", uri, "select fileID, domain, relativePath, flags, file from Files"],
    }
    size = os.path.getsize(os.path.join(folder, "Manifest.db"))
    print(f"== a device backup, {rows} rows (Manifest.db {size >> 20} MiB), {rounds} rounds, warm cache (medians) ==")
    medians, rss = alternate(commands, rounds, sqlite, with_rss=True)
    ratio = medians["appdata audit --format json BACKUP"] / medians[sqlite]
    peak = rss["appdata audit --format json BACKUP"]
    print(f"  appdata / sqlite3: {ratio:.2f} (target <= 1.5: {'met' if ratio <= 1.5 else 'missed'}); "
          f"peak RSS {human_kib(peak)} (target <= 64 MiB: {'met' if peak <= 64 * 1024 else 'missed'})")
    print()


def many_backups(appdata, bench_dir, rounds):
    """A folder of 10,000 and one of 20,000 backups (hard links of one small backup), alternated:
    the report of many is linear in backups (issue 31: 10,000 took 46 s, quadratic, before).
    Targets: 10,000 under 5 s; 20,000 at most 2.2 times 10,000."""
    spec = importlib.util.spec_from_file_location("backup", os.path.join(HERE, "make-test-backup.py"))
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    template = os.path.join(bench_dir, "backups-template")
    if not os.path.exists(template + ".done"):
        shutil.rmtree(template, ignore_errors=True)
        os.makedirs(template)
        maker.write_plists(template, ["com.example.app"])
        maker.write_database(template, [("AppDomain-com.example.app", "Documents", 2, 0, None),
                                        ("AppDomain-com.example.app", "Documents/a.txt", 1, 10, None)], stored=False)
        open(template + ".done", "w").close()
    folders = {}
    for count in (10_000, 20_000):
        folder = os.path.join(bench_dir, f"backups-{count}")
        folders[count] = folder
        if os.path.exists(folder + ".done"):
            continue
        print(f"making a folder of {count} backups in {folder} ...", flush=True)
        shutil.rmtree(folder, ignore_errors=True)
        for index in range(count):
            copy = os.path.join(folder, f"{index:08d}-{index:016X}")
            os.makedirs(copy)
            for name in ("Manifest.db", "Manifest.plist", "Info.plist", "Status.plist"):
                os.link(os.path.join(template, name), os.path.join(copy, name))
        open(folder + ".done", "w").close()
    commands = {}
    for count, folder in folders.items():
        # 20,000 is past the default bound (--max-backups 10,000): raised to measure the growth.
        bound = ["--max-backups", str(count)]
        commands[f"appdata audit {count} backups (table)"] = [appdata, "audit", "--no-config"] + bound + [folder]
        commands[f"appdata audit {count} backups (json)"] = [appdata, "audit", "--format", "json", "--no-config"] + bound + [folder]
    print(f"== a folder of 10,000 and of 20,000 backups, {rounds} rounds, warm cache (medians) ==")
    medians = alternate(commands, rounds, "appdata audit 10000 backups (table)")
    for fmt in ("table", "json"):
        ten, twenty = medians[f"appdata audit 10000 backups ({fmt})"], medians[f"appdata audit 20000 backups ({fmt})"]
        print(f"  {fmt}: 10,000 in {ten:.2f} s (target < 5: {'met' if ten < 5 else 'missed'}); 20,000 / 10,000: {twenty / ten:.2f} "
              f"(target <= 2.2: {'met' if twenty / ten <= 2.2 else 'missed'})")
    print()


def restore(appdata, bench_dir, rounds, files=10000):
    """appdata restore (issue 53): the extract benchmark's backup (10,000 files, 1 GiB) restored
    into a Simulator device's app container, against extract of the same app to a folder beside
    it, alternated, in memory (/dev/shm when there is one): target <= 1.2x. Each restore leaves
    the previous contents kept beside the container; removing them is timed with it, as the
    extract's output is removed with it."""
    many = os.path.join(bench_dir, "extract-many" if files == 10000 else f"extract-many-{files}")
    if not os.path.exists(many + ".done"):
        print(f"generating {many} ...", flush=True)
        shutil.rmtree(many, ignore_errors=True)
        subprocess.run([sys.executable, os.path.join(HERE, "make-extract-backup.py"), many, "--files", str(files),
                        "--file-size", str(100 * 1024 + 333)], check=True)
        open(many + ".done", "w").close()
    app = "com.example.extract"
    work = "/dev/shm/appdata-restore-bench" if os.path.isdir("/dev/shm") else os.path.join(bench_dir, "restore-work")
    shutil.rmtree(work, ignore_errors=True)
    uuid = "2C0D1E55-0000-4000-8000-000000000002"
    applications = os.path.join(work, "Devices", "UDID", "data", "Containers", "Data", "Application")
    os.makedirs(os.path.join(applications, uuid, "Documents"))
    with open(os.path.join(work, "Devices", "UDID", "device.plist"), "wb") as f:
        plistlib.dump({"UDID": "UDID", "state": 1}, f)
    with open(os.path.join(applications, uuid, ".com.apple.mobile_container_manager.metadata.plist"), "wb") as f:
        plistlib.dump({"MCMMetadataIdentifier": app, "MCMMetadataContentClass": 2}, f)
    quoted = lambda path: "'" + path + "'"
    commands = {
        "appdata extract": ["sh", "-c", f"{quoted(appdata)} extract -q --app {app} -o {work}/out {quoted(many + '/plain')} && rm -rf {work}/out"],
        "appdata restore": ["sh", "-c", f"{quoted(appdata)} restore -q {quoted(many + '/plain')} --simulator {work}/Devices/UDID --app {app}"
                            f" && rm -rf {applications}/.{uuid}.appdata-restore-*"],
    }
    print(f"== appdata restore: {files:,} files into a Simulator container, against extract of the same app, in {work}, {rounds} rounds (medians) ==")
    medians = alternate(commands, rounds, "appdata extract")
    ratio = medians["appdata restore"] / medians["appdata extract"]
    print(f"  restore / extract: {ratio:.2f} (target <= 1.2: {'met' if ratio <= 1.2 else 'missed'})")
    shutil.rmtree(work, ignore_errors=True)


def extract(appdata, bench_dir, rounds):
    """appdata extract (issue 33): 1 GiB over 10,000 files against cp -r of the same payloads
    (target <= 1.2x); encrypted, against openssl decrypting the same number of bytes (<= 1.3x;
    the keybag's rounds are few, so key derivation is out of it) and iphone_backup_decrypt
    extracting the same domain (appdata at least 5x faster); peak RSS with a 2 GiB file (<= 64 MiB)."""
    sys.path.insert(0, HERE)
    password = importlib.util.module_from_spec(spec := importlib.util.spec_from_file_location("b", os.path.join(HERE, "make-test-backup.py")))
    spec.loader.exec_module(password)
    password = password.PASSWORD
    many = os.path.join(bench_dir, "extract-many")
    big = os.path.join(bench_dir, "extract-big")
    for folder, extra in ((many, ["--files", "10000", "--file-size", str(100 * 1024 + 333)]), (big, ["--big", str(2 << 30)])):
        if not os.path.exists(folder + ".done"):
            print(f"generating {folder} ...", flush=True)
            shutil.rmtree(folder, ignore_errors=True)
            subprocess.run([sys.executable, os.path.join(HERE, "make-extract-backup.py"), folder] + extra, check=True)
            open(folder + ".done", "w").close()
    env = dict(os.environ, APPDATA_BACKUP_PASSWORD=password)
    app = "com.example.extract"
    shell = lambda command: ["sh", "-c", command]
    quoted = lambda path: "'" + path + "'"
    payloads = [name for name in os.listdir(os.path.join(many, "plain")) if len(name) == 2]
    total = sum(os.path.getsize(os.path.join(many, "encrypted", d, f)) for d in payloads for f in os.listdir(os.path.join(many, "encrypted", d)))
    # Written to memory (/dev/shm, warmed by the first round, which alternate() leaves out), and
    # to the bench folder's disk. On disk, ext4 making and removing 10,000 files a round is most
    # of the time (its inode allocator, after so many removals, scans for a free inode).
    places = [("memory (/dev/shm)", "/dev/shm/appdata-extract-bench")] if os.path.isdir("/dev/shm") else []
    places.append(("disk (" + bench_dir + ")", os.path.join(bench_dir, "extract-work")))
    for label, work in places:
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        # One file of ciphertext as long as the encrypted payloads together, for openssl.
        cipher = os.path.join(work, "cipher.bin")
        with open(cipher, "wb") as f:
            for _ in range(total // (1 << 20)):
                f.write(os.urandom(1 << 20))
        reader = (f"{quoted(sys.executable)} -c \"import os; from iphone_backup_decrypt import EncryptedBackup; "
                  f"EncryptedBackup(backup_directory='{many}/encrypted', passphrase=os.environ['APPDATA_BACKUP_PASSWORD'])"
                  f".extract_files(relative_paths_like='Documents/d%', domain_like='AppDomain-{app}', output_folder='{work}/i')\" > /dev/null"
                  f" && rm -rf {work}/i")
        commands = {
            "appdata extract (plain)": shell(f"{quoted(appdata)} extract -q --app {app} -o {work}/a {quoted(many + '/plain')} && rm -rf {work}/a"),
            "cp -r of the payloads": shell(f"mkdir {work}/c && cp -r " + " ".join(quoted(os.path.join(many, 'plain', d)) for d in payloads) + f" {work}/c && rm -rf {work}/c"),
            "appdata extract (encrypted)": shell(f"APPDATA_BACKUP_PASSWORD={quoted(password)} {quoted(appdata)} extract -q --app {app} -o {work}/e {quoted(many + '/encrypted')} && rm -rf {work}/e"),
            "openssl enc -d -aes-256-cbc (same bytes)": shell(f"openssl enc -d -aes-256-cbc -nopad -K {'11' * 32} -iv {'00' * 16} -in {cipher} -out {work}/o && rm -f {work}/o"),
            # What any writer of 10,000 files pays the filesystem before a byte: openssl writes one.
            "10,000 empty files (touch)": shell(f"mkdir {work}/t && (cd {work}/t && seq -w 10000 | xargs touch) && rm -rf {work}/t"),
        }
        has_reader = subprocess.run([sys.executable, "-c", "import iphone_backup_decrypt"], capture_output=True).returncode == 0
        if has_reader:
            # Its extract_files stops at an empty file (no EncryptionKey, as iOS writes them):
            # it is given the 10,000 files only, appdata the whole domain.
            commands["iphone_backup_decrypt (the 10,000 files)"] = ["env", f"APPDATA_BACKUP_PASSWORD={password}", "sh", "-c", reader]
        print(f"== appdata extract: 10,000 files, {total >> 20} MiB, written to {label}, {rounds} rounds (medians) ==")
        medians = alternate(commands, rounds, "cp -r of the payloads")
        plain = medians["appdata extract (plain)"] / medians["cp -r of the payloads"]
        encrypted = medians["appdata extract (encrypted)"] / medians["openssl enc -d -aes-256-cbc (same bytes)"]
        print(f"  plain: appdata / cp -r: {plain:.2f} (target <= 1.2: {'met' if plain <= 1.2 else 'missed'})")
        print(f"  encrypted: appdata / openssl: {encrypted:.2f} (target <= 1.3: {'met' if encrypted <= 1.3 else 'missed'})")
        floor = medians["10,000 empty files (touch)"] / medians["openssl enc -d -aes-256-cbc (same bytes)"]
        print(f"  making 10,000 empty files alone: {floor:.2f} x openssl"
              + (" (no writer of 10,000 files can meet the target here)" if floor > 1.3 else ""))
        if has_reader:
            speed = medians["iphone_backup_decrypt (the 10,000 files)"] / medians["appdata extract (encrypted)"]
            print(f"  iphone_backup_decrypt / appdata: {speed:.1f}x (target >= 5: {'met' if speed >= 5 else 'missed'})")
        else:
            print("  iphone_backup_decrypt: not installed (pip install iphone_backup_decrypt)")
        shutil.rmtree(work, ignore_errors=True)
    # Issue 40: one 256 MiB file and 2,000 small ones, the backup folder in memory too (so the
    # cost per file shows, not the disk), against cp -r of that backup folder: <= 1.1x.
    mixed = os.path.join(bench_dir, "extract-mixed")
    if not os.path.exists(mixed + ".done"):
        print(f"generating {mixed} ...", flush=True)
        shutil.rmtree(mixed, ignore_errors=True)
        subprocess.run([sys.executable, os.path.join(HERE, "make-extract-backup.py"), mixed, "--big", str(256 << 20),
                        "--files", "2000", "--file-size", "4096"], check=True)
        open(mixed + ".done", "w").close()
    if os.path.isdir("/dev/shm"):
        work = "/dev/shm/appdata-extract-mixed"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(os.path.join(mixed, "plain"), work + "/backup")
        commands = {
            "appdata extract (256 MiB + 2,000 files)": shell(f"{quoted(appdata)} extract -q --app {app} -o {work}/a {work}/backup && rm -rf {work}/a"),
            "cp -r of the backup folder": shell(f"cp -r {work}/backup {work}/c && rm -rf {work}/c"),
        }
        print(f"== appdata extract: one 256 MiB file and 2,000 of 4 KiB, memory to memory, {rounds} rounds (medians) ==")
        medians = alternate(commands, rounds, "cp -r of the backup folder")
        ratio = medians["appdata extract (256 MiB + 2,000 files)"] / medians["cp -r of the backup folder"]
        print(f"  appdata / cp -r: {ratio:.2f} (target <= 1.1: {'met' if ratio <= 1.1 else 'missed'})")
        shutil.rmtree(work, ignore_errors=True)
    work = os.path.join(bench_dir, "extract-work")
    os.makedirs(work, exist_ok=True)
    for kind in ("plain", "encrypted"):
        seconds, peak, status = run([appdata, "extract", "-q", "--app", app, "-o", f"{work}/big-{kind}", f"{big}/{kind}"]
                                    if kind == "plain" else shell(f"APPDATA_BACKUP_PASSWORD={quoted(password)} {quoted(appdata)} extract -q --app {app} -o {work}/big-{kind} {quoted(big + '/' + kind)}"))
        shutil.rmtree(f"{work}/big-{kind}", ignore_errors=True)
        print(f"  a 2 GiB file, {kind}: {seconds:.2f} s, peak RSS {human_kib(peak)} (target <= 64 MiB: {'met' if peak <= 64 * 1024 else 'missed'}; exit {status})")
    shutil.rmtree(work, ignore_errors=True)
    print()


def history(appdata, bench_dir, rounds):
    """The history of a device with 10 backups of 200,000 rows (issue 34): at most 1.1x the
    sum of auditing each alone, and at most 128 MiB. The backups share one generated Manifest.db
    (hard links) and differ by their dates."""
    import plistlib
    from datetime import datetime, timedelta
    source = os.path.join(bench_dir, "backup-200000")
    if not os.path.exists(source + ".done"):
        subprocess.run([sys.executable, os.path.join(HERE, "make-test-backup.py"), "--rows", "200000", source], check=True)
        open(source + ".done", "w").close()
    folder = os.path.join(bench_dir, "history-10")
    if not os.path.exists(folder + ".done"):
        shutil.rmtree(folder, ignore_errors=True)
        for index in range(10):
            date = datetime(2026, 1, 1) + timedelta(days=index)
            copy = os.path.join(folder, "00008030-001234567890802E" + ("" if index == 9 else f"-{date:%Y%m%d-%H%M%S}"))
            os.makedirs(copy)
            for name in os.listdir(source):
                path = os.path.join(source, name)
                if name in ("Info.plist", "Status.plist"):
                    with open(path, "rb") as f:
                        value = plistlib.load(f)
                    value["Last Backup Date" if name == "Info.plist" else "Date"] = date
                    with open(os.path.join(copy, name), "wb") as f:
                        plistlib.dump(value, f)
                elif os.path.isfile(path):
                    os.link(path, os.path.join(copy, name))
        open(folder + ".done", "w").close()
    backups = sorted(os.path.join(folder, name) for name in os.listdir(folder))
    base = [appdata, "audit", "--format", "json", "--fail-on", "never", "--no-config"]
    commands = {"appdata audit FOLDER (10 backups, history)": base + [folder]}
    for index, path in enumerate(backups):
        commands[f"appdata audit backup {index}"] = base + [path]
    print(f"== history: one device, 10 backups of 200,000 rows, {rounds} rounds, warm cache (medians) ==")
    medians, rss = alternate(commands, rounds, "appdata audit backup 0", with_rss=True)
    alone = sum(seconds for name, seconds in medians.items() if name.startswith("appdata audit backup"))
    whole = medians["appdata audit FOLDER (10 backups, history)"]
    peak = rss["appdata audit FOLDER (10 backups, history)"]
    print(f"  folder / sum of each alone: {whole / alone:.2f} (target <= 1.1: {'met' if whole / alone <= 1.1 else 'missed'}); "
          f"peak RSS {human_kib(peak)} (target <= 128 MiB: {'met' if peak <= 128 * 1024 else 'missed'})")
    print()


def baseline_path(appdata, bench_dir, rounds):
    """--baseline PATH (issue 34) costs one extra audit and no more: `audit A --baseline B` at
    most 1.1x (`audit A` + `audit B`); here B is A itself, a 200,000-entry container."""
    container = ensure_container(bench_dir, 200_000)
    base = [appdata, "audit", "--format", "json", "--fail-on", "never", "--no-config"]
    commands = {
        "appdata audit A": base + [container],
        "appdata audit A --baseline A": base + ["--baseline", container, container],
    }
    print(f"== --baseline PATH: a 200,000-entry container against itself, {rounds} rounds, warm cache (medians) ==")
    medians = alternate(commands, rounds, "appdata audit A")
    ratio = medians["appdata audit A --baseline A"] / (2 * medians["appdata audit A"])
    print(f"  audit A --baseline B / (audit A + audit B): {ratio:.2f} (target <= 1.1: {'met' if ratio <= 1.1 else 'missed'})")
    print()


def encrypted_backup(appdata, bench_dir, rows, rounds):
    """The same backup encrypted as iOS 10.2+ does (Scripts/make-test-backup.py's `encrypt`), with
    iOS's 10,000,000 PBKDF2-SHA256 rounds (DPIC) and with 1: the difference is the key
    derivation's share. Alternated with the plain backup's audit."""
    plain = os.path.join(bench_dir, f"backup-{rows}")
    if not os.path.exists(plain + ".done"):
        backup(appdata, bench_dir, rows, 1)
    password = "bench pass\u00e9"
    password_file = os.path.join(bench_dir, "backup-password")
    with open(password_file, "w") as f:
        f.write(password + "\n")
    folders = {}
    for dpic in (10_000_000, 1):
        folder = os.path.join(bench_dir, f"backup-{rows}-encrypted-dpic{dpic}")
        if not os.path.exists(folder + ".done"):
            print(f"encrypting a copy of {plain} with DPIC {dpic} in {folder} ...", flush=True)
            subprocess.run(["rm", "-rf", folder], check=True)
            subprocess.run(["cp", "-a", plain, folder], check=True)
            # In a process of its own: this one must stay small, as a child's peak RSS counts
            # the parent's pages it was forked with.
            encrypt = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('m', sys.argv[1]); "
                       "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); "
                       "m.encrypt(sys.argv[2], password=sys.argv[3], dpic=int(sys.argv[4]))")
            subprocess.run([sys.executable, "-c", encrypt, os.path.join(HERE, "make-test-backup.py"), folder, password, str(dpic)],
                           check=True)
            open(folder + ".done", "w").close()
        folders[dpic] = folder
    audit = [appdata, "audit", "--format", "json", "--fail-on", "never", "--no-config"]
    commands = {
        "appdata audit plain BACKUP": audit + [plain],
        "appdata audit encrypted BACKUP (DPIC 10,000,000)": audit + ["--password-file", password_file, folders[10_000_000]],
        "appdata audit encrypted BACKUP (DPIC 1)": audit + ["--password-file", password_file, folders[1]],
        # The library appdata did not choose, on the same derivation: OpenSSL's libcrypto.
        "openssl kdf PBKDF2-SHA256 10,000,000 rounds": [
            "openssl", "kdf", "-keylen", "32", "-kdfopt", "digest:SHA256", "-kdfopt", "pass:" + password,
            "-kdfopt", "hexsalt:" + "07" * 20, "-kdfopt", "iter:10000000", "PBKDF2"],
    }
    size = os.path.getsize(os.path.join(folders[10_000_000], "Manifest.db"))
    print(f"== an encrypted device backup, {rows} rows (Manifest.db {size / 1048576:.1f} MiB), {rounds} rounds, warm cache (medians) ==")
    medians = alternate(commands, rounds, "appdata audit plain BACKUP")
    whole = medians["appdata audit encrypted BACKUP (DPIC 10,000,000)"]
    derivation = whole - medians["appdata audit encrypted BACKUP (DPIC 1)"]
    _, peak, status = run(commands["appdata audit encrypted BACKUP (DPIC 10,000,000)"])
    limit = size / 1024 + 64 * 1024
    print(f"  whole audit: {whole:.3f} s (target <= 2 s: {'met' if whole <= 2 else 'missed'}); "
          f"key derivation (DPIC 10,000,000 minus DPIC 1): {derivation:.3f} s, {100 * derivation / whole:.0f}% of it")
    print(f"  key derivation: swift-crypto (BoringSSL, in appdata) {derivation:.3f} s against OpenSSL's "
          f"{medians['openssl kdf PBKDF2-SHA256 10,000,000 rounds']:.3f} s for the SHA-256 step alone")
    print(f"  peak RSS {human_kib(peak)} (target <= Manifest.db + 64 MiB = {human_kib(limit)}: {'met' if peak <= limit else 'missed'})")
    print()


def make_deep(path, levels):
    """A chain of `levels` nested folders under Documents, built with directory descriptors
    (the path is far longer than PATH_MAX), one file at the bottom."""
    subprocess.run(["rm", "-rf", path], check=True)
    os.makedirs(os.path.join(path, "Documents"))
    fd = os.open(os.path.join(path, "Documents"), os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(levels):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    leaf = os.open("leaf.bin", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd)
    os.write(leaf, b"x" * 100)
    os.close(leaf)
    os.close(fd)


def make_collisions(path, count):
    """`count` entries in Library/Caches whose names all exist in Documents."""
    subprocess.run(["rm", "-rf", path], check=True)
    for folder in ("Library/Caches", "Documents"):
        os.makedirs(os.path.join(path, folder))
        for index in range(count):
            with open(os.path.join(path, folder, f"item{index:05d}.bin"), "wb") as handle:
                handle.write(b"c" if folder == "Documents" else b"s")


def archive(appdata, bench_dir, entries, rounds):
    """appdata audit on a tar of the container next to tar -tvf of the same archive."""
    container = ensure_container(bench_dir, entries)
    tar = os.path.join(bench_dir, f"container-{entries}.tar")
    if not os.path.exists(tar):
        subprocess.run(["tar", "--xattrs", "--xattrs-include=user.*", "-cf", tar, "-C", container, "."], check=True)
    commands = {
        "appdata audit --format json ARCHIVE.tar": [appdata, "audit", "--format", "json", "--fail-on", "never", "--no-config", tar],
        "tar -tvf ARCHIVE.tar": ["tar", "-tvf", tar],
    }
    print(f"== {entries}-entry tar ({os.path.getsize(tar) >> 20} MiB), {rounds} rounds (medians) ==")
    alternate(commands, rounds, "tar -tvf ARCHIVE.tar")
    print()


def listings(appdata, bench_dir, entries, rounds):
    """Full listings against the plain audit of the same container: `--format json --list all`
    (every entry in the JSON document) and `--format html` (the treemap of every file)."""
    container = ensure_container(bench_dir, entries)
    audit = [appdata, "audit", "--fail-on", "never", "--no-config"]
    commands = {
        "appdata audit --format json": audit + ["--format", "json", container],
        "appdata audit --format json --list all": audit + ["--format", "json", "--list", "all", container],
        "appdata audit --format html": audit + ["--format", "html", container],
        "appdata audit --format ndjson --list all": audit + ["--format", "ndjson", "--list", "all", container],
    }
    print(f"== full listings, {entries} entries, {rounds} rounds, warm cache (medians) ==")
    medians, rss = alternate(commands, rounds, "appdata audit --format json", with_rss=True)
    listed = medians["appdata audit --format json --list all"] / medians["appdata audit --format json"]
    html = medians["appdata audit --format html"] / medians["appdata audit --format json"]
    peak = rss["appdata audit --format json --list all"]
    print(f"  --list all / plain: {listed:.2f} (target <= 1.5: {'met' if listed <= 1.5 else 'missed'}); "
          f"peak RSS {human_kib(peak)} (target <= 256 MiB: {'met' if peak <= 256 * 1024 else 'missed'})")
    print(f"  html / plain: {html:.2f} (target <= 1.3: {'met' if html <= 1.3 else 'missed'})")
    print()


def android(appdata, bench_dir, entries, rounds):
    """An Android app's data folder of `entries` entries (the generated container's tree, made
    again by the same generator and seed under files/, beside empty databases/, shared_prefs/,
    cache/ and no_backup/) against the same tree audited as an iOS container (issue 43's
    target: 1.05 x). Not hard links of the container: they gave every file of the container a
    second link, so that every later audit of it (the floor, the containers) counted each file
    as a hard link, 0.3 s more of CPU for 200,000 files."""
    container = ensure_container(bench_dir, entries)
    data = os.path.join(bench_dir, f"android-{entries}")
    # ".generated", not ".done": a folder an older bench.py made of hard links is made again.
    if not os.path.exists(data + ".generated"):
        subprocess.run(["rm", "-rf", data], check=True)
        for folder in ("databases", "shared_prefs", "cache", "no_backup"):
            os.makedirs(os.path.join(data, folder))
        subprocess.run([sys.executable, os.path.join(HERE, "generate-container.py"), "--entries", str(entries), "--seed", "1",
                        os.path.join(data, "files")], check=True)
        open(data + ".generated", "w").close()
    audit = [appdata, "audit", "--format", "json", "--fail-on", "never", "--no-config"]
    commands = {
        "appdata audit (the iOS container)": audit + [container],
        "appdata audit (the Android data folder)": audit + ["--platform", "android", data],
        "appdata audit --jobs 1 (the iOS container)": audit + ["--jobs", "1", container],
        "appdata audit --jobs 1 (the Android data folder)": audit + ["--jobs", "1", "--platform", "android", data],
    }
    print(f"== an Android data folder of {entries} entries against the iOS container, {rounds} rounds, warm cache (medians) ==")
    medians, rss = alternate(commands, rounds, "appdata audit (the iOS container)", with_rss=True)
    ratio = medians["appdata audit (the Android data folder)"] / medians["appdata audit (the iOS container)"]
    single = medians["appdata audit --jobs 1 (the Android data folder)"] / medians["appdata audit --jobs 1 (the iOS container)"]
    print(f"  Android / iOS: {ratio:.2f} (target <= 1.05: {'met' if ratio <= 1.05 else 'missed'}); on one thread: {single:.2f}")
    print()


def android_backup(appdata, bench_dir, payload, rounds):
    """--backup with a compressed adb backup of `payload` bytes of files (base64 text: the .ab is
    about three quarters of it), plain and encrypted, against Python's zlib inflating the same
    payload to /dev/null, and openssl enc -d piped into it (issue 43's targets: 1.3 x each, peak
    RSS <= 64 MiB). The data folder compared with is empty, so every file of the backup is a
    finding (android-backup-unexpected), as reading it all must be."""
    folder = os.path.join(bench_dir, f"android-backup-{payload}")
    plain, encrypted = os.path.join(folder, "plain.ab"), os.path.join(folder, "encrypted.ab")
    keys, cipher, password = os.path.join(folder, "keys"), os.path.join(folder, "cipher.bin"), os.path.join(folder, "password")
    data = os.path.join(folder, "data")
    writer = os.path.join(HERE, "make-android-backup.py")
    if not os.path.exists(folder + ".done"):
        subprocess.run(["rm", "-rf", folder], check=True)
        for sub in ("files", "databases", "shared_prefs"):
            os.makedirs(os.path.join(data, sub))
        print(f"writing adb backups of {payload >> 20} MiB of files in {folder} ...", flush=True)
        with open(password, "w") as f:
            f.write("bench\n")
        common = [data, "--package", "com.example.bench", "--synthetic-bytes", str(payload)]
        subprocess.run([sys.executable, writer, common[0], plain] + common[1:], check=True)
        subprocess.run([sys.executable, writer, common[0], encrypted] + common[1:] + ["--password", "bench", "--rounds", "10000", "--key-out", keys],
                       check=True)
        # The ciphertext alone, for openssl: the header is 9 lines.
        with open(encrypted, "rb") as f, open(cipher, "wb") as out:
            for _ in range(9):
                f.readline()
            while chunk := f.read(1 << 20):
                out.write(chunk)
        open(folder + ".done", "w").close()
    with open(keys) as f:
        key, iv = f.read().split()
    inflate = ("import sys, zlib\n"
               "f = open(sys.argv[1], 'rb') if len(sys.argv) > 1 else sys.stdin.buffer\n"
               "[f.readline() for _ in range(4)] if len(sys.argv) > 1 else None\n"
               "d = zlib.decompressobj(); o = open('/dev/null', 'wb')\n"
               "while chunk := f.read(1 << 20): o.write(d.decompress(chunk))\n"
               "o.write(d.flush())\n")
    audit = [appdata, "audit", "--format", "json", "--fail-on", "never", "--no-config", "--password-file", password]
    commands = {
        "python3 zlib inflate (plain .ab)": [sys.executable, "-c", inflate, plain],
        "appdata audit --backup plain.ab": audit + ["--backup", plain, data],
        "openssl enc -d | python3 zlib inflate": ["sh", "-c", f"openssl enc -d -aes-256-cbc -K {key} -iv {iv} -in '{cipher}' | "
                                                  f"{sys.executable} -c \"$1\"", "sh", inflate],
        "appdata audit --backup encrypted.ab": audit + ["--backup", encrypted, data],
    }
    print(f"== --backup with adb backups of {payload >> 20} MiB of files (.ab {os.path.getsize(plain) >> 20} MiB), {rounds} rounds (medians) ==")
    medians, rss = alternate(commands, rounds, "python3 zlib inflate (plain .ab)", with_rss=True)
    ratio = medians["appdata audit --backup plain.ab"] / medians["python3 zlib inflate (plain .ab)"]
    secret = medians["appdata audit --backup encrypted.ab"] / medians["openssl enc -d | python3 zlib inflate"]
    peak = max(rss["appdata audit --backup plain.ab"], rss["appdata audit --backup encrypted.ab"])
    print(f"  plain / python3 zlib: {ratio:.2f} (target <= 1.3: {'met' if ratio <= 1.3 else 'missed'}); "
          f"encrypted / openssl + zlib: {secret:.2f} (target <= 1.3: {'met' if secret <= 1.3 else 'missed'}); "
          f"peak RSS {human_kib(peak)} (target <= 64 MiB: {'met' if peak <= 64 * 1024 else 'missed'})")
    print()


def scale(appdata, bench_dir):
    print("== scale ==")
    deep = os.path.join(bench_dir, "deep-10000")
    make_deep(deep, 10_000)
    seconds, peak, status = run([appdata, "audit", "--format", "json", "--fail-on", "never", deep])
    out = subprocess.run([appdata, "audit", "--format", "json", "--fail-on", "never", deep], capture_output=True, text=True)
    import json
    report = json.loads(out.stdout)
    print(f"  audit of a tree 10,000 folders deep: exit {status}, {seconds:.3f} s, peak RSS {human_kib(peak)}, "
          f"{report['summary']['directories']} folders, {report['summary']['categories']['critical']['files']} file")
    subprocess.run(["rm", "-rf", deep], check=True)
    for count in (1_000, 10_000):
        path = os.path.join(bench_dir, f"collisions-{count}")
        make_collisions(path, count)
        seconds, peak, status = run([appdata, "migrate", "--on-conflict", "keep-both", path])
        moved = len([name for name in os.listdir(os.path.join(path, "Documents")) if name.endswith(" 2.bin")])
        print(f"  migrate --on-conflict keep-both, {count} colliding names: exit {status}, {seconds:.3f} s "
              f"({seconds / count * 1e6:.0f} us per entry), {moved} kept as 'name 2.bin', peak RSS {human_kib(peak)}")
        subprocess.run(["rm", "-rf", path], check=True)
    print()


def default_jobs():
    """appdata's default --jobs (Walker.defaultJobs): 8 per online CPU, 8 to 16."""
    return min(16, max(8, 8 * (os.cpu_count() or 1)))


def drop_caches():
    """Drops the page cache (root only); False when not allowed."""
    try:
        subprocess.run(["sync"], check=True)
        with open("/proc/sys/vm/drop_caches", "w") as handle:
            handle.write("3\n")
        return True
    except OSError:
        return False


def floor(appdata, floor_walker, container, entries, rounds):
    """appdata against the floor walker (Scripts/floor-walker.c: the audit's syscalls and nothing
    else), warm with the same thread counts, and cold (page cache dropped before each run)."""
    jobs = default_jobs()
    check = subprocess.run([floor_walker, "2", container], capture_output=True, text=True).stdout.split()
    report = json.loads(subprocess.run([appdata, "audit", "--format", "json", "--fail-on", "never", "--no-config", container],
                                       capture_output=True, text=True).stdout)
    totals = report["summary"]
    files = sum(category["files"] for category in totals["categories"].values())
    same = int(check[3]) == totals["directories"] and int(check[5]) == files
    print(f"== the floor: {entries} entries, {os.cpu_count()} online CPUs, default --jobs {jobs}; the floor walker counts "
          f"{check[3]} folders and {check[5]} files ({'the same as appdata' if same else 'NOT the same as appdata'}) ==")
    commands = {
        f"appdata audit --format json (--jobs {jobs})": [appdata, "audit", "--format", "json", "--fail-on", "never", "--no-config", container],
        f"floor walker, {jobs} threads": [floor_walker, str(jobs), container],
        "appdata audit --format json --jobs 1": [appdata, "audit", "--format", "json", "--fail-on", "never", "--no-config", "--jobs", "1", container],
        "floor walker, 1 thread": [floor_walker, "1", container],
        "floor walker, 2 threads": [floor_walker, "2", container],
        "floor walker, 4 threads": [floor_walker, "4", container],
        "du -sb": ["du", "-sb", container],
    }
    print(f"  warm, {rounds} rounds (medians):")
    medians = alternate(commands, rounds, "du -sb")
    warm = medians[f"appdata audit --format json (--jobs {jobs})"] / medians[f"floor walker, {jobs} threads"]
    single = medians["appdata audit --format json --jobs 1"] / medians["floor walker, 1 thread"]
    print(f"  warm: appdata / floor, {jobs} threads: {warm:.2f} (target <= 1.05: {'met' if warm <= 1.05 else 'missed'})")
    print(f"  warm: appdata / floor, 1 thread:  {single:.2f} (target <= 1.05: {'met' if single <= 1.05 else 'missed'})")
    warm_best = min(seconds for name, seconds in medians.items() if name.startswith("floor"))
    default_warm = medians[f"appdata audit --format json (--jobs {jobs})"] / warm_best
    print(f"  warm: appdata (default --jobs) / the floor at its best thread count: {default_warm:.2f} "
          f"(target <= 1.05: {'met' if default_warm <= 1.05 else 'missed'})")
    if not drop_caches():
        print("  cold: skipped (dropping the page cache needs root: /proc/sys/vm/drop_caches)")
        print()
        return
    cold_commands = {f"appdata --jobs {count}": [appdata, "audit", "--format", "json", "--fail-on", "never", "--no-config", "--jobs", str(count), container]
                     for count in sorted({2, 8, jobs})}
    cold_commands["appdata (default --jobs)"] = commands[f"appdata audit --format json (--jobs {jobs})"]
    for count in (2, 8, 16, 32):
        cold_commands[f"floor walker, {count} threads"] = [floor_walker, str(count), container]
    cold_commands["du -sb"] = ["du", "-sb", container]
    # A cold run varies by 20% or more from one to the next on a VM (the host's own cache, other
    # guests), so the rounds are many, every other round runs the commands in reverse order, and
    # besides the ratio of medians the median of each round's own ratio is printed.
    cold = {name: [] for name in cold_commands}
    cold_rounds = max(9, rounds)
    names = list(cold_commands)
    for round_index in range(cold_rounds):
        for name in (names if round_index % 2 == 0 else names[::-1]):
            drop_caches()
            seconds, _, _ = run(cold_commands[name])
            cold[name].append(seconds)
    medians = {name: statistics.median(values) for name, values in cold.items()}
    print(f"  cold (page cache dropped before each run), {cold_rounds} rounds (medians):")
    for name, seconds in medians.items():
        print(f"  {name:50s} {seconds:8.3f} s   {seconds / medians['du -sb']:5.2f} x du -sb")
    best_name = min((name for name in medians if name.startswith("floor")), key=lambda name: medians[name])
    best = medians[best_name]
    ours = medians["appdata (default --jobs)"]
    paired = statistics.median(a / b for a, b in zip(cold["appdata (default --jobs)"], cold[best_name]))
    print(f"  cold: appdata / du -sb: {ours / medians['du -sb']:.2f} (target <= 0.55: {'met' if ours / medians['du -sb'] <= 0.55 else 'missed'})")
    print(f"  cold: appdata / the floor's best ({best_name}): {ours / best:.2f}, median of the rounds' own ratios {paired:.2f} "
          f"(target <= 1.15: {'met' if ours / best <= 1.15 else 'missed'})")
    # Start-up with a cold cache: what loading the binary costs before the first folder is read.
    tiny = os.path.join(os.path.dirname(container), "container-startup")
    os.makedirs(os.path.join(tiny, "Documents"), exist_ok=True)
    with open(os.path.join(tiny, "Documents", "a"), "w") as handle:
        handle.write("a")
    start_commands = {
        "appdata audit (a container of one file)": [appdata, "audit", "--format", "json", "--fail-on", "never", "--no-config", tiny],
        "appdata --version": [appdata, "--version"],
        "floor walker, 1 thread (the same container)": [floor_walker, "1", tiny],
    }
    start = {name: [] for name in start_commands}
    for _ in range(cold_rounds):
        for name, command in start_commands.items():
            drop_caches()
            start[name].append(run(command)[0])
    print(f"  cold start, {cold_rounds} rounds (medians):")
    for name, values in start.items():
        print(f"  {name:50s} {statistics.median(values) * 1000:8.1f} ms")
    print()


def migrate_copies(appdata, bench_dir, rounds):
    """Migrate across filesystems against cp: a 2 GiB sparse file with 4 MiB of data onto a
    64 MiB tmpfs, and a dense 768 MiB file onto a tmpfs (root only: it mounts them)."""
    print("== migrate across filesystems ==")
    if os.geteuid() != 0:
        print("  skipped: mounting the tmpfs destinations needs root")
        print()
        return
    base = os.path.join(bench_dir, "migrate-copies")
    subprocess.run(["rm", "-rf", base], check=True)
    os.makedirs(base)
    dense = os.path.join(base, "dense.bin")
    with open(dense, "wb") as handle:
        block = os.urandom(1 << 20)
        for _ in range(768):
            handle.write(block)

    def container(name, make):
        root = os.path.join(base, name)
        subprocess.run(["rm", "-rf", root], check=True)
        os.makedirs(os.path.join(root, "Library", "Caches"))
        os.makedirs(os.path.join(root, "Documents"))
        make(os.path.join(root, "Library", "Caches"))
        # Untimed: write the new source out, so the timed run does not also pay its writeback.
        subprocess.run(["sync"], check=True)
        return root

    def sparse(folder):
        with open(os.path.join(folder, "disk.img"), "wb") as handle:
            for offset in (0, 1 << 30, (2 << 30) - (3 << 20)):
                handle.seek(offset)
                handle.write(os.urandom(1 << 20) + os.urandom(1 << 20)[: (1 << 20) if offset == 0 else 0])
            handle.truncate(2 << 30)

    root = container("sparse", sparse)
    documents = os.path.join(root, "Documents")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", documents], check=True)
    try:
        seconds, peak, status = run([appdata, "migrate", root])
        copied = os.stat(os.path.join(documents, "disk.img")) if status == 0 else None
        print(f"  2 GiB sparse file (4 MiB of data) onto a 64 MiB tmpfs: exit {status}, {seconds:.3f} s"
              + (f", {copied.st_size} bytes, {copied.st_blocks * 512 >> 20} MiB allocated" if copied else ""))
    finally:
        subprocess.run(["umount", documents], check=True)

    times = {"appdata migrate (dense 768 MiB onto tmpfs)": [], "cp (the same file onto tmpfs)": []}
    target = os.path.join(base, "cp-target")
    os.makedirs(target, exist_ok=True)
    def warm(folder):
        # Pages this VM hands out for the first time cost 3-5x to write: touch as many as the
        # copy will need, in the destination itself, then free them, so that whichever command is
        # timed writes into pages touched before (making the container allocates page cache
        # just before appdata's run; cp's run had no such step, and measured 1.4 s against 0.3 s
        # when it went first).
        scratch = os.path.join(folder, ".warm")
        with open(scratch, "wb") as handle:
            block = bytes(1 << 20)
            for _ in range(800):
                handle.write(block)
        os.unlink(scratch)

    def with_appdata():
        root = container("dense", lambda folder: subprocess.run(["cp", dense, os.path.join(folder, "dense.bin")], check=True))
        documents = os.path.join(root, "Documents")
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1g", "tmpfs", documents], check=True)
        warm(documents)
        try:
            seconds, _, status = run([appdata, "migrate", root])
            if status != 0:
                sys.exit(f"appdata migrate exited {status}")
            times["appdata migrate (dense 768 MiB onto tmpfs)"].append(seconds)
        finally:
            subprocess.run(["umount", documents], check=True)

    def with_cp():
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1g", "tmpfs", target], check=True)
        warm(target)
        try:
            seconds, _, _ = run(["cp", dense, os.path.join(target, "dense.bin")])
            times["cp (the same file onto tmpfs)"].append(seconds)
        finally:
            subprocess.run(["umount", target], check=True)

    # Whichever writes first into fresh tmpfs pages pays for reclaiming page cache: alternate
    # which goes first, so neither always does.
    for index in range(rounds * 2):
        (with_appdata, with_cp)[index % 2]() if index // 2 % 2 == 0 else (with_cp, with_appdata)[index % 2]()
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, seconds in medians.items():
        print(f"  {name:50s} {seconds:8.3f} s")
    ratio = medians["appdata migrate (dense 768 MiB onto tmpfs)"] / medians["cp (the same file onto tmpfs)"]
    bound = medians["cp (the same file onto tmpfs)"] * 1.25 + 0.150
    met = medians["appdata migrate (dense 768 MiB onto tmpfs)"] <= bound
    print(f"  appdata / cp: {ratio:.2f} (target: within 1.25 x cp + 150 ms = {bound:.3f} s, which also "
          f"covers removing the 768 MiB source, a move's cost cp has not: {'met' if met else 'missed'}; "
          f"{rounds} rounds each, order alternated, medians)")
    subprocess.run(["rm", "-rf", base], check=True)
    print()


def human_kib(kib):
    return f"{kib / 1024:.1f} MiB"


def compare(appdata, other, bench_dir, rounds, fail_over=None):
    """This appdata against another build (`--compare OTHER`; `make bench-compare REF` builds
    REF), on the same inputs, alternated in one run: the ratio of each pair's medians, whether
    their output is identical, and (with `fail_over`) exit 1 when any case is slower than that
    ratio. The cases: audits (a container on every CPU and on one, a backup, an encrypted one, a
    tar, an Android data folder, a folder of 1,000 backups) and extract (10,000 files to memory)."""
    container = ensure_container(bench_dir, 200_000)
    plain = os.path.join(bench_dir, "backup-200000")
    encrypted = plain + "-encrypted-dpic10000000"
    if not os.path.exists(encrypted + ".done"):
        encrypted_backup(appdata, bench_dir, 200_000, 1)
    tar = os.path.join(bench_dir, "container-100000.tar")
    if not os.path.exists(tar):
        archive(appdata, bench_dir, 100_000, 1)
    data = os.path.join(bench_dir, "android-200000")
    if not os.path.exists(data + ".done"):
        android(appdata, bench_dir, 200_000, 1)
    many = os.path.join(bench_dir, "extract-many")
    if not os.path.exists(many + ".done"):
        print(f"generating {many} ...", flush=True)
        shutil.rmtree(many, ignore_errors=True)
        subprocess.run([sys.executable, os.path.join(HERE, "make-extract-backup.py"), many,
                        "--files", "10000", "--file-size", str(100 * 1024 + 333)], check=True)
        open(many + ".done", "w").close()
    password_file = os.path.join(bench_dir, "backup-password")
    audit = ["audit", "--format", "json", "--fail-on", "never", "--no-config"]
    work = "/dev/shm/appdata-bench-compare" if os.path.isdir("/dev/shm") else os.path.join(bench_dir, "compare-work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    quoted = lambda path: "'" + path + "'"
    cases = {
        "audit: container 200,000": lambda binary: [binary] + audit + [container],
        "audit: container 200,000 --jobs 1": lambda binary: [binary] + audit + ["--jobs", "1", container],
        "audit: backup 200,000 rows": lambda binary: [binary] + audit + [plain],
        "audit: encrypted backup": lambda binary: [binary] + audit + ["--password-file", password_file, encrypted],
        "audit: tar 100,000": lambda binary: [binary] + audit + [tar],
        "audit: Android data 200,000": lambda binary: [binary] + audit + ["--platform", "android", data],
        "extract: 10,000 files (1 GiB) to memory": lambda binary: [
            "sh", "-c", f"{quoted(binary)} extract -q --app com.example.extract -o {work}/o {quoted(many + '/plain')}; s=$?; rm -rf {work}/o; exit $s"],
    }
    print(f"== {appdata} (this) against {other} (other), {rounds} rounds, warm cache (medians) ==")
    strip = lambda output: re.sub(rb'"version" *: *"[^"]*"', b"", output)
    over = []
    for name, command in cases.items():
        # A case the other build cannot run (an option it does not have yet) is named, not timed.
        statuses = [subprocess.run(command(binary), capture_output=True).returncode for binary in (appdata, other)]
        if any(status not in (0, 1) for status in statuses):
            print(f"  {name}: skipped (this exits {statuses[0]}, other exits {statuses[1]})")
            continue
        same = ""
        if name.startswith("audit"):
            this = subprocess.run(command(appdata), capture_output=True).stdout
            that = subprocess.run(command(other), capture_output=True).stdout
            same = "; JSON " + ("identical" if strip(this) == strip(that) else "DIFFERENT")
        medians = alternate({f"appdata this: {name}": command(appdata), f"appdata other: {name}": command(other)},
                            rounds, f"appdata other: {name}")
        ratio = medians[f"appdata this: {name}"] / medians[f"appdata other: {name}"]
        verdict = "" if fail_over is None else (" ok" if ratio <= fail_over else f" SLOWER than {fail_over:.2f} x")
        print(f"  {name}: this / other = {ratio:.3f}{verdict}{same}")
        if fail_over is not None and ratio > fail_over:
            over.append(name)
    shutil.rmtree(work, ignore_errors=True)
    print()
    if over:
        sys.exit(f"bench-compare: {len(over)} case(s) more than {(fail_over - 1) * 100:.0f}% slower: {', '.join(over)}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("appdata")
    parser.add_argument("bench_dir")
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--rounds", type=int, default=0, help="rounds per size (default: 9 up to 100k entries, 5 above)")
    parser.add_argument("--no-scale", action="store_true", help="skip the deep-tree and name-collision runs")
    parser.add_argument("--compare", metavar="OTHER", help="time OTHER (another appdata build) against this one, alternated")
    parser.add_argument("--fail-over", type=float, metavar="RATIO",
                        help="with --compare: exit 1 when a case's this/other ratio is above RATIO (make bench-compare: 1.10)")
    parser.add_argument("--only", choices=["containers", "device", "archive", "backup", "backups", "baseline", "history", "encrypted", "extract", "restore", "floor",
                                           "migrate", "listings", "android", "android-backup"],
                        help="run only this part")
    parser.add_argument("--floor-walker", default=os.path.join(HERE, "..", ".build", "floor-walker"),
                        help="the compiled Scripts/floor-walker.c (bench.sh builds it)")
    args = parser.parse_args()
    os.makedirs(args.bench_dir, exist_ok=True)
    cpus = os.cpu_count()
    print(f"machine: {cpus} online CPUs, kernel {os.uname().release}")
    print(f"appdata: {args.appdata}")
    print()

    # The parts --only can pick; the full run below runs them too.
    parts = {
        "device": lambda: device(args.appdata, args.bench_dir, 200_000, args.rounds or 7),
        "archive": lambda: archive(args.appdata, args.bench_dir, 100_000, args.rounds or 5),
        "backup": lambda: (backup(args.appdata, args.bench_dir, 200_000, args.rounds or 7),
                           backup(args.appdata, args.bench_dir, 1_000_000, args.rounds or 3)),
        "backups": lambda: many_backups(args.appdata, args.bench_dir, args.rounds or 3),
        "extract": lambda: extract(args.appdata, args.bench_dir, args.rounds or 3),
        "restore": lambda: restore(args.appdata, args.bench_dir, args.rounds or 5),
        "baseline": lambda: baseline_path(args.appdata, args.bench_dir, args.rounds or 7),
        "history": lambda: history(args.appdata, args.bench_dir, args.rounds or 3),
        "listings": lambda: listings(args.appdata, args.bench_dir, 1_000_000, args.rounds or 3),
        "encrypted": lambda: encrypted_backup(args.appdata, args.bench_dir, 200_000, args.rounds or 5),
        "floor": lambda: floor(args.appdata, args.floor_walker, ensure_container(args.bench_dir, 200_000), 200_000, args.rounds or 9),
        "migrate": lambda: migrate_copies(args.appdata, args.bench_dir, args.rounds or 5),
        "android": lambda: android(args.appdata, args.bench_dir, 200_000, args.rounds or 7),
        "android-backup": lambda: android_backup(args.appdata, args.bench_dir, 1344 << 20, args.rounds or 3),
    }
    if args.compare:
        compare(args.appdata, args.compare, args.bench_dir, args.rounds or 9, args.fail_over)
        return
    if args.only in parts:
        parts[args.only]()
        return
    for entries in [int(size) for size in args.sizes.split(",")]:
        container = ensure_container(args.bench_dir, entries)
        commands = {
            "appdata audit --format json": [args.appdata, "audit", "--format", "json", "--fail-on", "never", container],
            "appdata audit --format json --jobs 1": [args.appdata, "audit", "--format", "json", "--fail-on", "never", "--jobs", "1", container],
            "appdata audit --format ndjson --list all": [args.appdata, "audit", "--format", "ndjson", "--list", "all", "--fail-on", "never", container],
            "du -sb": ["du", "-sb", container],
            "getfattr -R -d -m -": ["getfattr", "-R", "-d", "-m", "-", container],
        }
        rounds = args.rounds or (9 if entries <= 100_000 else 5)
        print(f"== {entries} entries, {rounds} rounds, warm cache (medians) ==")
        medians = alternate(commands, rounds, "du -sb")
        du = medians["du -sb"]
        print(f"  ratio appdata/du (json, default jobs): {medians['appdata audit --format json'] / du:.2f} (target <= 0.70)")
        print(f"  ratio appdata/du (--jobs 1):           {medians['appdata audit --format json --jobs 1'] / du:.2f} (target <= 1.40)")
        print()
    if args.only == "containers":
        return
    parts["floor"]()
    floor(args.appdata, args.floor_walker, ensure_container(args.bench_dir, 1_000_000), 1_000_000, args.rounds or 5)
    for name in ["migrate", "device", "backup", "backups", "baseline", "history", "encrypted", "extract", "restore", "listings", "android", "android-backup"]:
        parts[name]()
    archive(args.appdata, args.bench_dir, 100_000, 5)
    if not args.no_scale:
        scale(args.appdata, args.bench_dir)


if __name__ == "__main__":
    main()
