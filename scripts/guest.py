#!/usr/bin/env python3
"""Boot other kernels under QEMU (TCG) and run iotrace in them.

The kernel matrix of the tests (tests/test_kernels.py, `make test-kernels`): Debian's own
6.1 kernel packages (generic, cloud and PREEMPT_RT) are fetched with `apt-get download`
into .output/kernels/ (reused on later runs), booted with qemu-system-x86_64 -accel tcg
(KVM is not available on these hosts, which are VMs themselves) and an initramfs that holds
busybox, iotrace, its libraries, the workloads and the reference tools (strace, fincore,
fio, ...) with theirs. A scenario is a shell script run by the guest's /init with the work
disk (a virtio ext4 image made from a host directory, /dev/vda) mounted at /mnt; it
writes its results under /mnt/out, which the host reads back from the image with debugfs
(no mount needed). The guest powers off when the script ends.

    scripts/guest.py fetch [FLAVOUR...]                  download and unpack the kernels
    scripts/guest.py run FLAVOUR SCRIPT OUTDIR [--smp N]  boot, run SCRIPT, copy /mnt/out
    scripts/guest.py shell FLAVOUR                        an interactive guest (debugging)
"""
import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / ".output"
KERNELS = OUTPUT / "kernels"

# Debian 12's kernel flavours: package infix -> short name.
FLAVOURS = {"generic": "amd64", "cloud": "cloud-amd64", "rt": "rt-amd64"}
# Modules the guest loads (with what they depend on): the work disk, its filesystems, loop.
MODULES = ["virtio_pci", "virtio_blk", "ext4", "xfs", "loop", "crc32c_generic"]
# Host programs copied into the guest with their shared libraries: iotrace's references
# and real programs to trace (busybox provides the shell and the small tools).
TOOLS = ["strace", "fincore", "fio", "dd", "cp", "tar", "gzip", "sqlite3", "cat", "head",
         "stat", "sync", "sha1sum", "env", "timeout", "mkfs.ext4", "mkfs.xfs", "losetup",
         "taskset", "nproc", "seq", "yes", "sort", "bpftool", "blkdiscard"]
GUEST_WORKDIR = "/mnt"


def log(msg):
    print(f"  GUEST  {msg}", file=sys.stderr, flush=True)


# ---- kernels ----

def newest_package(flavour):
    """The newest bookworm linux-image-6.1.0-N-FLAVOUR-unsigned that apt knows."""
    suffix = FLAVOURS[flavour]
    out = subprocess.run(["apt-cache", "pkgnames", "linux-image-6.1.0-"], capture_output=True,
                         text=True, check=True).stdout.split()
    pat = re.compile(rf"^linux-image-6\.1\.0-(\d+)-{re.escape(suffix)}-unsigned$")
    found = sorted((int(m.group(1)), n) for n in out if (m := pat.match(n)))
    if not found:
        raise RuntimeError(f"apt knows no linux-image-6.1.0-*-{suffix}-unsigned "
                           "(run apt-get update)")
    return found[-1][1]


def kernel_dir(flavour):
    """.output/kernels/FLAVOUR: the unpacked package (boot/vmlinuz-*, lib/modules/*)."""
    return KERNELS / flavour


def fetch(flavour):
    """Downloads and unpacks the flavour's newest package unless it is there already."""
    d = kernel_dir(flavour)
    if list(d.glob("boot/vmlinuz-*")):
        return d
    pkg = newest_package(flavour)
    log(f"apt-get download {pkg}")
    with tempfile.TemporaryDirectory(dir=OUTPUT) as tmp:
        # _apt cannot write to a root-owned directory: download unsandboxed.
        subprocess.run(["apt-get", "download", "-q", "-o", "APT::Sandbox::User=root", pkg],
                       cwd=tmp, check=True, stdout=subprocess.DEVNULL)
        deb = next(Path(tmp).glob("*.deb"))
        unpacked = Path(tmp) / "x"
        subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
        if d.exists():
            shutil.rmtree(d)
        d.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(unpacked), d)
    return d


def kernel_release(kdir):
    return next((kdir / "lib/modules").iterdir()).name


def module_depends(ko):
    """The modules ko needs, from its .modinfo "depends=" string (no modinfo needed)."""
    m = re.search(rb"depends=([^\0]*)\0", ko.read_bytes())
    return [d for d in (m.group(1).decode().split(",") if m else []) if d]


def modules_in_order(kdir, names):
    """The .ko files for names and their dependencies, dependencies first."""
    index = {}
    for ko in (kdir / "lib/modules").rglob("*.ko"):
        index.setdefault(ko.name[:-3].replace("-", "_"), ko)
    order, seen = [], set()

    def visit(name):
        name = name.replace("-", "_")
        if name in seen or name not in index:
            return  # built in, or absent in this flavour
        seen.add(name)
        for dep in module_depends(index[name]):
            visit(dep)
        order.append(index[name])

    for n in names:
        visit(n)
    return order


# ---- initramfs ----

INIT = r"""#!/bin/sh
# The guest's init: mounts, modules, the work disk; runs the scenario; powers off.
export PATH=/usr/local/bin:/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /sys/fs/cgroup /tmp /run
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t cgroup2 cgroup2 /sys/fs/cgroup
for m in $(cat /lib/modules/order); do insmod /lib/modules/$m 2>/dev/null; done
ip link set lo up 2>/dev/null
hostname guest
i=0
while [ ! -b /dev/vda ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
if mount -t ext4 /dev/vda /mnt; then
	mkdir -p /mnt/out
	cd /mnt
	if grep -q 'guest.shell' /proc/cmdline; then
		setsid cttyhack sh -l
	else
		echo "GUEST-START $(uname -r)"
		sh /mnt/scenario.sh > /mnt/out/console.txt 2>&1
		echo "$?" > /mnt/out/status
		echo "GUEST-END $(cat /mnt/out/status)"
	fi
	cd /
	sync
	umount /mnt || umount -l /mnt
else
	echo "GUEST-NO-DISK"
fi
poweroff -f
"""


def shared_libs(binary):
    """Paths of the shared libraries binary loads (ldd), the loader included."""
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True).stdout
    libs = []
    for line in out.splitlines():
        m = re.search(r"(?:=> )?(/\S+) \(0x", line)
        if m:
            libs.append(m.group(1))
    return libs


def copy_with_libs(root, binary, dest):
    """Copies binary to root/dest and its libraries to the same paths in root."""
    target = root / dest.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(binary, target)
    for lib in shared_libs(binary):
        real = os.path.realpath(lib)
        for p in {lib, real}:
            t = root / p.lstrip("/")
            if not t.exists():
                t.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(real, t)


def iotrace_files():
    """The tree's files the guest needs: iotrace, the built workloads and the bench helpers
    (cmdtime, floor), ELF files only."""
    files = [ROOT / "iotrace"]
    for d in (ROOT / "workloads", OUTPUT / "bench"):
        for p in sorted(d.iterdir()) if d.is_dir() else []:
            if p.is_file() and os.access(p, os.X_OK) and p.read_bytes()[:4] == b"\x7fELF":
                files.append(p)
    return files


def build_initramfs(flavour, out):
    """out: a gzip'd cpio with busybox, the modules, iotrace, the workloads and TOOLS."""
    kdir = fetch(flavour)
    with tempfile.TemporaryDirectory(dir=OUTPUT) as tmp:
        root = Path(tmp)
        for d in ["bin", "sbin", "usr/bin", "usr/sbin", "usr/local/bin", "proc", "sys", "dev",
                  "mnt", "tmp", "etc", "lib/modules", "root"]:
            (root / d).mkdir(parents=True, exist_ok=True)
        busybox = shutil.which("busybox")
        shutil.copy2(busybox, root / "bin/busybox")
        applets = subprocess.run([busybox, "--list"], capture_output=True, text=True,
                                 check=True).stdout.split()
        for a in applets:
            if a != "busybox" and not (root / "bin" / a).exists():
                os.symlink("busybox", root / "bin" / a)
        order = []
        for ko in modules_in_order(kdir, MODULES):
            shutil.copy2(ko, root / "lib/modules" / ko.name)
            order.append(ko.name)
        (root / "lib/modules/order").write_text("\n".join(order) + "\n")
        for f in iotrace_files():
            rel = f.relative_to(OUTPUT if f.is_relative_to(OUTPUT) else ROOT)
            copy_with_libs(root, f, f"/iotrace/{rel}")
        for tool in TOOLS:
            path = shutil.which(tool)
            if path:
                # GNU tools shadow busybox's applets of the same name.
                copy_with_libs(root, Path(path), f"/usr/local/bin/{tool}")
        (root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\n"
                                         "nobody:x:65534:65534:nobody:/:/bin/false\n")
        (root / "etc/group").write_text("root:x:0:\nnogroup:x:65534:\n")
        (root / "init").write_text(INIT)
        (root / "init").chmod(0o755)
        cpio = subprocess.run("find . | cpio -o -H newc --quiet", shell=True, cwd=root,
                              capture_output=True, check=True).stdout
        tmp_out = out.with_suffix(".tmp")
        with gzip.open(tmp_out, "wb", compresslevel=1) as f:
            f.write(cpio)
        tmp_out.rename(out)
    return out


def initramfs(flavour):
    """The flavour's initramfs, rebuilt when iotrace or a workload is newer than it."""
    out = OUTPUT / "guest" / f"initramfs-{flavour}.cpio.gz"
    out.parent.mkdir(parents=True, exist_ok=True)
    newest = max(f.stat().st_mtime for f in iotrace_files() + [Path(__file__)])
    if not out.exists() or out.stat().st_mtime < newest:
        log(f"initramfs {flavour}")
        build_initramfs(flavour, out)
    return out


# ---- running ----

def make_disk(image, workdir, size_mb):
    """An ext4 image holding workdir's files (mke2fs -d: no mount, no loop device)."""
    if image.exists():
        image.unlink()
    subprocess.run(["mke2fs", "-q", "-F", "-t", "ext4", "-d", str(workdir), str(image),
                    f"{size_mb}M"], check=True)


def read_out(image, dest):
    """Copies /out of the image to dest (debugfs rdump: no mount needed)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    subprocess.run(["debugfs", "-R", f"rdump /out {dest}", str(image)], check=True,
                   capture_output=True)
    return dest / "out"


def qemu_command(flavour, image, smp, mem_mb, append=""):
    kdir = fetch(flavour)
    vmlinuz = next(kdir.glob("boot/vmlinuz-*"))
    return ["qemu-system-x86_64", "-accel", "tcg", "-cpu", "max", "-m", str(mem_mb),
            "-smp", str(smp), "-kernel", str(vmlinuz), "-initrd", str(initramfs(flavour)),
            "-append", f"console=ttyS0 quiet panic=-1 {append}".strip(),
            "-drive", f"file={image},if=virtio,format=raw,cache=unsafe",
            "-nographic", "-no-reboot", "-nodefaults", "-serial", "stdio"]


class GuestRun:
    """What one boot left: the console, the scenario's exit status and its /mnt/out."""

    def __init__(self, flavour, console, out, seconds):
        self.flavour, self.console, self.out, self.seconds = flavour, console, out, seconds
        status = out / "status"
        self.status = int(status.read_text()) if status.exists() else None
        log_file = out / "console.txt"
        self.log = log_file.read_text(errors="replace") if log_file.exists() else ""

    def text(self, name):
        return (self.out / name).read_text(errors="replace")

    def __repr__(self):
        return f"GuestRun({self.flavour}, status {self.status}, {self.seconds:.0f} s)"


def run(flavour, script, workdir=None, dest=None, smp=2, mem_mb=2048, disk_mb=1024,
        timeout=900):
    """Boots flavour, runs script (text) with workdir's files on /mnt; returns a GuestRun.

    workdir: a host directory copied onto the work disk (inputs); dest: where the guest's
    /mnt/out lands on the host (a new temporary directory by default).
    """
    dest = Path(dest or tempfile.mkdtemp(prefix=f"guest-{flavour}-", dir=OUTPUT))
    dest.mkdir(parents=True, exist_ok=True)
    stage = dest / "disk"
    if stage.exists():
        shutil.rmtree(stage)
    if workdir:
        shutil.copytree(workdir, stage, symlinks=True)
    else:
        stage.mkdir()
    (stage / "scenario.sh").write_text(script)
    (stage / "out").mkdir(exist_ok=True)
    image = dest / "disk.img"
    make_disk(image, stage, disk_mb)
    shutil.rmtree(stage)
    cmd = qemu_command(flavour, image, smp, mem_mb)
    start = time.monotonic()
    try:
        res = subprocess.run(cmd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
        console = res.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        console = (e.stdout or b"").decode(errors="replace") + "\nGUEST-TIMEOUT\n"
    seconds = time.monotonic() - start
    (dest / "console.log").write_text(console)
    out = read_out(image, dest / "result")
    image.unlink()
    return GuestRun(flavour, console, out, seconds)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch")
    f.add_argument("flavours", nargs="*", default=list(FLAVOURS))
    r = sub.add_parser("run")
    r.add_argument("flavour", choices=FLAVOURS)
    r.add_argument("script")
    r.add_argument("outdir")
    r.add_argument("--workdir")
    r.add_argument("--smp", type=int, default=2)
    r.add_argument("--mem", type=int, default=2048)
    s = sub.add_parser("shell")
    s.add_argument("flavour", choices=FLAVOURS)
    s.add_argument("--smp", type=int, default=2)
    a = ap.parse_args()
    if a.cmd == "fetch":
        for fl in a.flavours:
            print(fetch(fl))
    elif a.cmd == "run":
        g = run(a.flavour, Path(a.script).read_text(), a.workdir, a.outdir, a.smp, a.mem)
        print(g.log, end="")
        print(f"{g!r}: {g.out}", file=sys.stderr)
        sys.exit(0 if g.status == 0 else 1)
    else:
        with tempfile.TemporaryDirectory(dir=OUTPUT) as tmp:
            stage = Path(tmp) / "disk"
            (stage / "out").mkdir(parents=True)
            image = Path(tmp) / "disk.img"
            make_disk(image, stage, 1024)
            os.execvp("qemu-system-x86_64",
                      qemu_command(a.flavour, image, a.smp, 2048, "guest.shell"))


if __name__ == "__main__":
    main()
