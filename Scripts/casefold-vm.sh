#!/usr/bin/env bash
# make test-casefold: the case-insensitive tests (CaseInsensitiveTests, issue 42) on a real
# casefolded ext4, for a machine whose kernel cannot mount one (built without CONFIG_UNICODE, as
# this project's VMs are). It boots Debian's own kernel (which has CONFIG_UNICODE) in QEMU,
# with this machine's root folder shared read-only over 9p, and runs the test binary just built
# there, as root, where `onACasefoldedExt4` mounts its casefolded ext4 and runs migrate and
# extract on it.
#
# Debian and root only (apt-get download, 9p, loop devices); needs qemu-system-x86 and
# busybox-static, installed here with apt-get when missing. Nothing on this machine is written
# but the work folder (.build/casefold-vm): the VM sees / read-only and writes only to its own
# memory and to a loop-mounted ext4 in it (/tmp is one, as on this machine, for the tests'
# user.* extended attributes, which the VM's tmpfs lacks).
#
# TCG (no KVM: nested KVM hangs this kernel on these VMs), about a minute. Exit status: the
# tests'.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "casefold-vm: needs root (9p export of /, loop devices)" >&2; exit 2; }
work=.build/casefold-vm
mkdir -p "$work"
need() { command -v "$1" >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null; }
need qemu-system-x86_64 qemu-system-x86
need busybox busybox-static
if ldd "$(command -v busybox)" >/dev/null 2>&1; then echo "casefold-vm: busybox must be static (busybox-static)" >&2; exit 2; fi
case "$PWD" in /tmp/*|/proc/*|/sys/*|/dev/*|/run/*) echo "casefold-vm: the checkout must not be under /tmp, /run, /proc, /sys or /dev (the VM has its own)" >&2; exit 2;; esac

# Debian's newest amd64 kernel, unpacked once.
if [ ! -e "$work/kernel.done" ]; then
  package=$(apt-cache search --names-only '^linux-image-[0-9.]+-[0-9]+-amd64-unsigned$' | awk '{print $1}' | sort -V | tail -1)
  [ -n "$package" ] || { echo "casefold-vm: no linux-image-*-amd64-unsigned package in apt's lists" >&2; exit 2; }
  rm -rf "$work/kernel" && mkdir -p "$work/kernel"
  (cd "$work" && apt-get download -qq "$package" 2>/dev/null && dpkg-deb -x "$package"_*.deb kernel && rm -f "$package"_*.deb)
  grep -q '^CONFIG_UNICODE=y' "$work"/kernel/boot/config-* || { echo "casefold-vm: $package lacks CONFIG_UNICODE" >&2; exit 2; }
  touch "$work/kernel.done"
fi
modules=$(echo "$work"/kernel/lib/modules/*)

# The initramfs: busybox, the modules for 9p, loop, ext4 and the RNG (each after what it
# depends on, from the modules' own `depends=`), and an init that mounts / from the host and
# runs the tests in it.
rm -rf "$work/initrd" && mkdir -p "$work"/initrd/{bin,mods,newroot,host,proc,sys,dev}
cp "$(command -v busybox)" "$work/initrd/bin/busybox"
python3 - "$modules" "$work/initrd/mods" crc32c_generic virtio_pci 9pnet_virtio 9p loop ext4 virtio_rng <<'PY'
import os, re, shutil, sys
base, out, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
paths = {}
for root, _, files in os.walk(base):
    for name in files:
        if name.endswith(".ko"):
            paths[name[:-3].replace("-", "_")] = os.path.join(root, name)
order, seen = [], set()
def visit(name):
    if name in seen:
        return
    seen.add(name)
    found = re.search(rb"depends=([^\0]*)\0", open(paths[name], "rb").read())
    for dependency in (found.group(1).decode().split(",") if found else []):
        if dependency:
            visit(dependency.replace("-", "_"))
    order.append(name)
for name in wanted:
    visit(name)
for index, name in enumerate(order):
    shutil.copy(paths[name], os.path.join(out, f"{index:02d}-{name}.ko"))
PY
bin=$(swift build --show-bin-path)
cat > "$work/initrd/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in /mods/*.ko; do insmod "\$m" || echo "casefold-vm: insmod \$m failed"; done
ip link set lo up   # Foundation's run loop needs a socket pair, and loopback
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=1048576 hostroot /host || { echo "casefold-vm: 9p mount failed"; poweroff -f; }
mount -t tmpfs root /newroot; cd /newroot
mkdir -p tmp dev proc sys run
# Every folder of the host's root but those the VM has its own of; its symlinks as they are.
for e in /host/*; do
  n=\${e#/host/}
  case \$n in proc|sys|dev|run|tmp) continue;; esac
  if [ -L "\$e" ]; then ln -s "\$(readlink "\$e")" "\$n"; elif [ -d "\$e" ]; then mkdir -p "\$n" && mount --bind "\$e" "\$n"; fi
done
mount -t devtmpfs dev dev; mount -t proc proc proc; mount -t sysfs sys sys; mount -t tmpfs run run
cd /
echo; echo "casefold-vm: kernel \$(uname -r), ext4 casefold \$(cat /sys/fs/ext4/features/casefold)"
chroot /newroot /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/usr/sbin HOME=/tmp TMPDIR=/tmp /bin/sh -c '
  truncate -s 2G /run/tmp.img && mkfs.ext4 -q /run/tmp.img && mount -o loop /run/tmp.img /tmp && chmod 1777 /tmp
  cd "$PWD" && "$bin/appdataPackageTests.xctest" --testing-library swift-testing --filter CaseInsensitiveTests
  echo "casefold-vm: tests exited \$?"'
poweroff -f
EOF
chmod +x "$work/initrd/init"
(cd "$work/initrd" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1 > ../initrd.gz)

log="$work/console.txt"
timeout 900 qemu-system-x86_64 -cpu max -m 3072 -smp 2 -nographic -no-reboot \
  -kernel "$(echo "$work"/kernel/boot/vmlinuz-*)" -initrd "$work/initrd.gz" \
  -append "console=ttyS0 panic=-1 quiet random.trust_cpu=on" -device virtio-rng-pci \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on 2>/dev/null | tr -d '\r' | tee "$log" |
  grep -E '^(casefold-vm|◇|✔|✘|↳|➜)' || true
status=$(sed -n 's/^casefold-vm: tests exited \([0-9]*\)$/\1/p' "$log" | tail -1)
[ -n "$status" ] || { echo "casefold-vm: the VM ended before the tests did; its console is in $log" >&2; exit 2; }
exit "$status"
