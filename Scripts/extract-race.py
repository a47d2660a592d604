#!/usr/bin/env python3
"""Concurrent `appdata extract` runs to one OUT, some killed at random moments (issue 48's
acceptance): a run that publishes OUT publishes all of it, and a run that does not says so in one
line, whatever the others do.

Usage: extract-race.py BINARY [--rounds N] [--seed S] [--work DIR]

A backup of 208 files (Scripts/make-extract-backup.py, 200 files of 64 bytes and the usual
rows) is extracted once alone: the reference, each file's SHA-256 by path. Then, for 2, 4 and 8
runs at once, without `--force` (OUT removed before each round) and with it (OUT left from the
round before, so the runs replace it), N rounds (50): the runs start together, and each is
killed (SIGKILL) with probability 0.3 after a random delay within about a run's length there
(a lone run's median of three, times half the runs at once). After each round:

- OUT, if it exists, is complete: its files are the reference's, by path, count and SHA-256;
- every run was killed, or exited 0 having published OUT (without `--force` at most one does;
  with it each replaces the one before), or, without `--force`, exited 2 with exactly one line
  on stderr saying it lost the race (`appeared while this run extracted`, `already exists`);
  any other line or status is a failure (with `--force`, any refusal: runs that replace one
  OUT take turns, so none finds it changed under it);
- no live run's partial folder was removed: a run whose partial folder another removed fails
  with some other line (a write into a removed folder, `was moved or replaced`), or, removed
  while it wrote, publishes an incomplete OUT; both fail the round.

Killed runs leave their partial folders and owner records; the runs of the next rounds remove
them (their records' locks are free). Last, one more run (not killed) to OUT, and then nothing
may be left beside OUT. It works in /dev/shm where that keeps user extended attributes
(`scratch_folder`), else in the temporary folder, or in `--work DIR` (kept). The random delays
choose when the kills land; no assertion is on a time. Prints each configuration's counts, and
exits 1 on any failure.
"""
import hashlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
APP = "com.example.extract"
REFUSALS = {
    False: ("appeared while this run extracted (another appdata extract?); it was left as it is and nothing was written",
            "already exists; appdata extract never writes over it (--force replaces it once the new one is complete)"),
    True: (),
}


def scratch_folder():
    """/dev/shm when it is a tmpfs that keeps user extended attributes (Linux 6.6 and later;
    `--force` needs OUT's marker), else the temporary folder. On ext4, after the thousands of
    files each round removes, creating a file costs a scan of recently deleted inodes (three
    quarters of a run's time here), which is the filesystem's work, not what this measures."""
    probe = None
    try:
        probe = tempfile.NamedTemporaryFile(dir="/dev/shm")
        os.setxattr(probe.name, "user.appdata.probe", b"1")
        return "/dev/shm"
    except (OSError, AttributeError):  # no /dev/shm, no user attributes there, no os.setxattr (macOS)
        return None
    finally:
        if probe:
            probe.close()


def files_of(folder):
    """{relative path: SHA-256} of every regular file below `folder`; other entries by type."""
    found = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            relative = os.path.relpath(path, folder)
            if os.path.islink(path):
                found[relative] = "link:" + os.readlink(path)
            elif os.path.isfile(path):
                with open(path, "rb") as f:
                    found[relative] = hashlib.sha256(f.read()).hexdigest()
    return found


def extract(binary, backup, out, force):
    return [binary, "extract", "--app", APP, "-q"] + (["--force"] if force else []) + ["-o", out, backup]


def round_of(binary, backup, out, count, force, window, rng):
    """Starts `count` runs at once, kills some; returns [(status, stderr lines, killed)]."""
    processes = []
    timers = []
    for _ in range(count):
        process = subprocess.Popen(extract(binary, backup, out, force), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        processes.append(process)
    killed = [False] * count
    for index, process in enumerate(processes):
        if rng.random() < 0.3:
            def kill(index=index, process=process):
                if process.poll() is None:
                    killed[index] = True
                    process.kill()
            timer = threading.Timer(rng.uniform(0, window), kill)
            timer.start()
            timers.append(timer)
    results = []
    for index, process in enumerate(processes):
        _, err = process.communicate()
        results.append((process.returncode, err.decode("utf-8", "replace"), index))
    for timer in timers:
        timer.cancel()
        timer.join()
    return [(status, err, killed[index]) for status, err, index in results]


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = os.path.abspath(sys.argv[1])
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 50
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 48
    work = sys.argv[sys.argv.index("--work") + 1] if "--work" in sys.argv else tempfile.mkdtemp(prefix="appdata-extract-race-", dir=scratch_folder())
    rng = random.Random(seed)
    os.makedirs(work, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(HERE, "make-extract-backup.py"), os.path.join(work, "made"),
                    "--files", "200", "--file-size", "64"], check=True, stdout=subprocess.DEVNULL)
    backup = os.path.join(work, "made", "plain")
    # The reference: a lone run's extraction; and how long a run takes, for the kills' window.
    reference_out = os.path.join(work, "reference")
    subprocess.run(extract(binary, backup, reference_out, False), check=True)
    lengths = []
    for index in range(3):
        started = time.monotonic()
        subprocess.run(extract(binary, backup, os.path.join(work, f"lone{index}"), False), check=True)
        lengths.append(time.monotonic() - started)
    lone = sorted(lengths)[1]
    reference = files_of(reference_out)
    print(f"reference: {len(reference)} files (a lone run: {lone:.2f} s)")
    parent = os.path.join(work, "race")
    os.makedirs(parent)
    out = os.path.join(parent, "out")
    failures = []
    for force in (False, True):
        for count in (2, 4, 8):
            tally = {"rounds": 0, "runs": 0, "published": 0, "refused": 0, "killed": 0, "outComplete": 0, "noOut": 0}
            # Runs at once share 2 cores: each takes about count / 2 times a lone run's time.
            window = lone * max(1, count / 2)
            for number in range(rounds):
                if not force:
                    shutil.rmtree(out, ignore_errors=True)
                results = round_of(binary, backup, out, count, force, window, rng)
                label = f"{count} runs{' --force' if force else ''}, round {number + 1}"
                tally["rounds"] += 1
                tally["runs"] += count
                published = 0
                for status, err, killed in results:
                    lines = err.splitlines()
                    if killed and status == -9:
                        tally["killed"] += 1
                    elif status == 0 and not lines:
                        published += 1
                    elif status == 2 and len(lines) == 1 and lines[0].startswith(f"appdata: error: {out}: ") \
                            and lines[0][len(f"appdata: error: {out}: "):] in REFUSALS[force]:
                        tally["refused"] += 1
                    else:
                        failures.append(f"{label}: exit {status}{' (killed)' if killed else ''}, stderr {err!r}")
                tally["published"] += published
                if not force and published > 1:
                    failures.append(f"{label}: {published} runs published OUT without --force")
                if os.path.lexists(out):
                    found = files_of(out)
                    if found == reference:
                        tally["outComplete"] += 1
                    else:
                        missing = len(set(reference) - set(found))
                        differing = sum(1 for path in reference if path in found and found[path] != reference[path])
                        failures.append(f"{label}: OUT holds {len(found)} entries, {missing} missing and {differing} differing of {len(reference)}")
                else:
                    tally["noOut"] += 1
                    if published:
                        failures.append(f"{label}: a run exited 0 and there is no OUT")
            print(f"{count} runs{' --force' if force else ''}: " + ", ".join(f"{key} {value}" for key, value in tally.items()), flush=True)
    # One more run, not killed: every leftover of the killed runs is proven theirs and removed.
    last = subprocess.run(extract(binary, backup, out, True), stderr=subprocess.PIPE)
    if last.returncode != 0:
        failures.append(f"the last run: exit {last.returncode}, {last.stderr!r}")
    left = sorted(name for name in os.listdir(parent) if name != "out")
    print(f"left beside OUT after a last run: {len(left)}")
    if left:
        failures.append(f"left beside OUT after a last run: {left[:6]}")
    if files_of(out) != reference:
        failures.append("OUT after the last run is not the reference")
    for failure in failures[:40]:
        print("FAIL " + failure)
    print(f"{len(failures)} failures")
    if not failures and "--work" not in sys.argv:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
