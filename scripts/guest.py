#!/usr/bin/env python3
"""Boot other kernels under QEMU (TCG) and run iotrace in them.

The kernel matrix of the tests (tests/test_kernels.py, `make test-kernels`): Debian's own
kernel packages, one line of KERNELS each (bookworm's 6.1 generic, cloud and PREEMPT_RT,
trixie's 6.12, sid's and trixie-backports' 7.x; arm64's 6.1 and 6.12), are fetched with
`apt-get download` through an apt configuration of our own (scripts/debian.py) into
.output/kernels/ (reused on later runs), booted with qemu-system-x86_64 -accel tcg,thread=single or
qemu-system-aarch64 -M virt (KVM is not available on these hosts, which are VMs
themselves) and an initramfs that holds busybox, iotrace, its libraries, the workloads and
the reference tools (strace, fincore, ...) with theirs: this host's for x86_64, Debian's
arm64 packages (the sysroot of `make ARCH=arm64`) and the arm64 build for arm64. A scenario is a shell script run by the guest's /init with the work
disk (a virtio ext4 image made from a host directory, /dev/vda) mounted at /mnt; it
writes its results under /mnt/out, which the host reads back from the image with debugfs
(no mount needed). The guest powers off when the script ends.

    scripts/guest.py fetch [FLAVOUR...]                  download and unpack the kernels
    scripts/guest.py run FLAVOUR SCRIPT OUTDIR [--smp N]  boot, run SCRIPT, copy /mnt/out
    scripts/guest.py shell FLAVOUR                        an interactive guest (debugging)
"""
import argparse
import fcntl
import gzip
import lzma
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import namedtuple
from pathlib import Path

import debian

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / ".output"
KERNELS_DIR = OUTPUT / "kernels"

# The matrix's kernel lines: Debian's own kernel packages. Adding a line is one entry:
# its suite, its packages ({v}: the kernel's version part, the newest the suite has with all
# of them), its architecture, its flavour. From 7.x the image package is split: the kernel
# in linux-binary-unsigned-*, the modules in linux-modules-*.
Line = namedtuple("Line", "suite packages arch flavour")

BULLSEYE = "bullseye bullseye-security"
BOOKWORM, TRIXIE = "bookworm bookworm-security", "trixie trixie-security"
NOBLE = "noble noble-updates noble-security"
JAMMY = "jammy jammy-updates jammy-security"
SPLIT = "linux-binary-unsigned-{v}-amd64 linux-modules-{v}-amd64"
KERNELS = {
    "generic": Line(BOOKWORM, "linux-image-6.1.0-{v}-amd64-unsigned", "amd64", "generic"),
    "cloud": Line(BOOKWORM, "linux-image-6.1.0-{v}-cloud-amd64-unsigned", "amd64", "cloud"),
    "rt": Line(BOOKWORM, "linux-image-6.1.0-{v}-rt-amd64-unsigned", "amd64", "PREEMPT_RT"),
    "bullseye": Line(BULLSEYE, "linux-image-5.10.0-{v}-amd64-unsigned", "amd64", "generic"),
    # the signed image (the same kernel, signed for Secure Boot): the mirror lacks its
    # unsigned twin of the newest version
    "bullseye-cloud": Line(BULLSEYE, "linux-image-5.10.0-{v}-cloud-amd64", "amd64", "cloud"),
    "bullseye-rt": Line(BULLSEYE, "linux-image-5.10.0-{v}-rt-amd64-unsigned", "amd64",
                        "PREEMPT_RT"),
    "trixie": Line(TRIXIE, "linux-image-{v}-amd64-unsigned", "amd64", "generic"),
    "sid": Line("sid", SPLIT, "amd64", "generic"),
    "backports": Line("trixie-backports", SPLIT, "amd64", "generic"),
    "arm64": Line(BOOKWORM, "linux-image-6.1.0-{v}-arm64-unsigned", "arm64", "generic"),
    "trixie-arm64": Line(TRIXIE, "linux-image-{v}-arm64-unsigned", "arm64", "generic"),
    # Ubuntu 24.04's own kernel (6.8), from Ubuntu's archive (scripts/debian.py)
    "noble": Line(NOBLE, "linux-image-unsigned-6.8.0-{v}-generic linux-modules-6.8.0-{v}-generic",
                  "amd64", "generic"),
    # Ubuntu 22.04's (5.15): the 5.11-5.16 kernels, with task BTF and fetch atomics but no
    # bpf_loop and no folios
    "jammy": Line(JAMMY, "linux-image-unsigned-5.15.0-{v}-generic linux-modules-5.15.0-{v}-generic",
                  "amd64", "generic"),
}


def ubuntu(suite, version):
    """An Ubuntu kernel line of one major.minor (its hardware-enablement kernels: jammy's
    5.19-6.8, noble's 6.11-7.0): the unsigned image and its modules."""
    return Line(suite, f"linux-image-unsigned-{version}.0-{{v}}-generic "
                f"linux-modules-{version}.0-{{v}}-generic", "amd64", "generic")


# Ubuntu's hardware-enablement kernels: the releases between 6.2 and 6.17 most machines run,
# and 7.0.
KERNELS.update({f"{suite}-{version}": ubuntu(series, version) for suite, series, versions in
                (("jammy", JAMMY, ["5.19", "6.2", "6.5"]),
                 ("noble", NOBLE, ["6.11", "6.14", "6.17", "7.0"]))
                for version in versions})
# Kept for the callers that name the lines by flavour.
FLAVOURS = KERNELS
# A kernel package's version part: "6.1.0-56", "6.12.117+deb13", "7.3.4+deb13".
VERSION = r"[0-9][0-9a-z.+~]*(?:-[0-9]+)?"
# Per architecture: QEMU, its machine, the console, Debian's name for the GNU triplet.
ARCHES = {
    # One host thread for all the vCPUs (thread=single), not QEMU's one each: under
    # multi-threaded TCG (QEMU 7.2) a vCPU may go on running a translation that still holds
    # the int3 of a static branch the other vCPU has since patched (text_poke's int3
    # protocol, as the BPF links attach and detach), and the kernel, its patching done,
    # dies of it: "Oops: int3" at a tracepoint's branch (__set_task_comm,
    # trace_syscall_exit, filemap_map_pages), on 6.12, 7.2 and 7.3 alike, within minutes
    # of runs that attach and detach; none in 20 minutes of the same with one thread.
    "amd64": {"qemu": ["qemu-system-x86_64", "-accel", "tcg,thread=single", "-cpu", "max"],
              "console": "ttyS0", "triplet": "x86_64-linux-gnu"},
    "arm64": {"qemu": ["qemu-system-aarch64", "-accel", "tcg", "-M", "virt",
                       "-cpu", "max,pauth-impdef=on"],
              "console": "ttyAMA0", "triplet": "aarch64-linux-gnu"},
}
# Modules the guest loads (with what they depend on): the work disk, its filesystems, loop.
MODULES = ["virtio_pci", "virtio_mmio", "virtio_blk", "ext4", "xfs", "loop", "crc32c_generic"]
# Host programs copied into the guest with their shared libraries: iotrace's references
# and real programs to trace (busybox provides the shell and the small tools).
TOOLS = ["strace", "fincore", "fio", "dd", "cp", "tar", "gzip", "sqlite3", "cat", "head",
         "stat", "sync", "sha1sum", "env", "timeout", "mkfs.ext4", "mkfs.xfs", "losetup",
         "taskset", "nproc", "seq", "yes", "sort", "bpftool", "setarch", "blkdiscard"]
GUEST_WORKDIR = "/mnt"
HOST_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}[os.uname().machine]


def log(msg):
    print(f"  GUEST  {msg}", file=sys.stderr, flush=True)


def newest_packages(name):
    """The kernel line's packages at the newest version its suite has all of."""
    line = KERNELS[name]
    names = debian.pkgnames(line.suite, line.arch)
    pkgs = line.packages.split()
    pats = [re.compile("^" + re.escape(p).replace(re.escape("{v}"), f"({VERSION})") + "$")
            for p in pkgs]
    have = [{m.group(1) for n in names if (m := pat.match(n))} for pat in pats]
    versions = set.intersection(*have)
    if not versions:
        raise RuntimeError(f"{line.suite} ({line.arch}) has no {line.packages}")
    v = max(versions, key=lambda v: [int(x) for x in re.findall(r"\d+", v)])
    return [p.replace("{v}", v) for p in pkgs]


# ---- kernels ----

def kernel_dir(flavour):
    """.output/kernels/NAME: the unpacked packages (vmlinuz, modules)."""
    return KERNELS_DIR / flavour


def vmlinuz_of(kdir):
    """The kernel image in an unpacked package: boot/vmlinuz-* or, split packages,
    usr/lib/modules/VER/vmlinuz (.unsigned)."""
    found = sorted(kdir.glob("boot/vmlinuz-*")) + sorted(kdir.glob("usr/lib/modules/*/vmlinuz*"))
    return found[0] if found else None


def fetch(flavour):
    """Downloads and unpacks the line's newest packages unless they are there already."""
    d = kernel_dir(flavour)
    if vmlinuz_of(d):
        return d
    line = KERNELS[flavour]
    pkgs = newest_packages(flavour)
    log(f"apt-get download {' '.join(pkgs)} ({line.suite}, {line.arch})")
    OUTPUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=OUTPUT) as tmp:
        unpacked = Path(tmp) / "x"
        for deb in debian.download(line.suite, line.arch, pkgs, tmp):
            subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
        if d.exists():
            shutil.rmtree(d)
        d.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(unpacked), d)
    return d


def modules_root(kdir):
    """lib/modules/VER or usr/lib/modules/VER (merged /usr)."""
    for base in ("lib/modules", "usr/lib/modules"):
        if (kdir / base).is_dir():
            return next((kdir / base).iterdir())
    raise RuntimeError(f"no modules in {kdir}")


def kernel_release(kdir):
    return modules_root(kdir).name


def module_bytes(ko):
    """A module file's contents (.ko, .ko.xz as trixie ships them, .ko.zst as Ubuntu)."""
    if ko.name.endswith(".zst"):
        return subprocess.run(["zstd", "-dcq", str(ko)], capture_output=True,
                              check=True).stdout
    data = ko.read_bytes()
    return lzma.decompress(data) if ko.name.endswith(".xz") else data


def module_depends(ko):
    """The modules ko needs, from its .modinfo "depends=" string (no modinfo needed)."""
    m = re.search(rb"depends=([^\0]*)\0", module_bytes(ko))
    return [d for d in (m.group(1).decode().split(",") if m else []) if d]


def modules_in_order(kdir, names):
    """The module files for names and their dependencies, dependencies first."""
    index = {}
    for ko in modules_root(kdir).rglob("*.ko*"):
        base = ko.name.split(".ko")[0]
        index.setdefault(base.replace("-", "_"), ko)
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
		dmesg > /mnt/out/dmesg.txt 2>&1  # a crash's "segfault at" line, an oops
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


def opened_libs(binary):
    """Libraries binary opens itself, which neither ldd nor DT_NEEDED lists: iotrace's
    serve opens libmicrohttpd (user/cmd/mhd.c, MHD_SONAME)."""
    if Path(binary).name != "iotrace":
        return []
    return re.findall(r'#define MHD_SONAME "([^"]+)"', (ROOT / "user/cmd/mhd.c").read_text())


class Userland:
    """Where a guest's programs come from: this host's for its own architecture; for
    another, Debian's packages unpacked into a sysroot (scripts/debian.py), their libraries
    found from each ELF file's DT_NEEDED (nothing of that architecture can run here)."""

    def __init__(self, arch):
        self.arch = arch
        self.root = None if arch == HOST_ARCH else debian.sysroot(arch)
        self.bin = ROOT if self.root is None else OUTPUT / arch

    def which(self, tool):
        if self.root is None:
            return shutil.which(tool)
        for d in ("usr/local/bin", "usr/bin", "bin", "usr/sbin", "sbin"):
            if (self.root / d / tool).exists():
                return str(self.root / d / tool)
        return None

    def opened(self, binary):
        """Paths in the guest of the libraries binary opens itself (opened_libs)."""
        paths = []
        for name in opened_libs(binary):
            path = self.find_lib(name)
            if path is None:
                raise RuntimeError(f"{Path(binary).name} opens {name}: not in "
                                   f"{self.root or 'this system'}")
            paths.append(path)
        return paths

    def libs(self, binary):
        """(path in the guest, file here) of binary's libraries and loader."""
        if self.root is None:
            libs = shared_libs(binary)
            for path in self.opened(binary):
                libs += [path] + shared_libs(path)
            return [(lib, os.path.realpath(lib)) for lib in dict.fromkeys(libs)]
        found = {path: self.root / path.lstrip("/") for path in self.opened(binary)}
        todo = [Path(binary)] + list(found.values())
        while todo:
            elf = todo.pop()
            dyn = subprocess.run(["readelf", "-d", "-l", str(elf)], capture_output=True,
                                 text=True).stdout
            interp = re.findall(r"program interpreter: (\S+)\]", dyn)
            for name in re.findall(r"\(NEEDED\)\s+Shared library: \[(\S+)\]", dyn) + interp:
                path = self.find_lib(name)
                if path is None:
                    raise RuntimeError(f"{elf.name} needs {name}: not in {self.root}")
                if path not in found:
                    found[path] = self.root / path.lstrip("/")
                    todo.append(found[path])
        return [(p, os.path.realpath(f)) for p, f in found.items()]

    def find_lib(self, name):
        triplet = ARCHES[self.arch]["triplet"]
        root = self.root or Path("/")
        if name.startswith("/"):
            return name if (root / name.lstrip("/")).exists() else None
        for d in (f"/lib/{triplet}", f"/usr/lib/{triplet}", "/lib", "/usr/lib"):
            if (root / d.lstrip("/") / name).exists():
                return f"{d}/{name}"
        return None

    def copy(self, root, binary, dest):
        """Copies binary to root/dest and its libraries to their paths in root."""
        target = root / dest.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(binary, target)
        for path, real in self.libs(binary):
            t = root / path.lstrip("/")
            if not t.exists():
                t.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(real, t)

    def iotrace_files(self):
        """The tree's files the guest needs: iotrace, the built workloads and the bench
        helpers (cmdtime, floor), ELF files only, as (file, path under /iotrace)."""
        out = OUTPUT if self.root is None else self.bin
        files = [(self.bin / "iotrace", "iotrace")] if (self.bin / "iotrace").exists() else []
        for d, name in ((self.bin / "workloads", "workloads"), (out / "bench", "bench")):
            for p in sorted(d.iterdir()) if d.is_dir() else []:
                if p.is_file() and os.access(p, os.X_OK) and p.read_bytes()[:4] == b"\x7fELF":
                    files.append((p, f"{name}/{p.name}"))
        return files


def build_initramfs(flavour, out):
    """out: a gzip'd cpio with busybox, the modules, iotrace, the workloads and TOOLS."""
    kdir = fetch(flavour)
    with tempfile.TemporaryDirectory(dir=OUTPUT) as tmp:
        root = Path(tmp)
        for d in ["bin", "sbin", "usr/bin", "usr/sbin", "usr/local/bin", "proc", "sys", "dev",
                  "mnt", "tmp", "etc", "lib/modules", "root"]:
            (root / d).mkdir(parents=True, exist_ok=True)
        user = Userland(KERNELS[flavour].arch)
        shutil.copy2(user.which("busybox"), root / "bin/busybox")
        # The applets a busybox has: the host's (static) busybox of the same package lists
        # them for every architecture's.
        applets = subprocess.run([shutil.which("busybox"), "--list"], capture_output=True,
                                 text=True, check=True).stdout.split()
        for a in applets:
            if a != "busybox" and not (root / "bin" / a).exists():
                os.symlink("busybox", root / "bin" / a)
        order = []
        for ko in modules_in_order(kdir, MODULES):
            name = ko.name.split(".ko")[0] + ".ko"
            (root / "lib/modules" / name).write_bytes(module_bytes(ko))
            order.append(name)
        (root / "lib/modules/order").write_text("\n".join(order) + "\n")
        for f, rel in user.iotrace_files():
            user.copy(root, f, f"/iotrace/{rel}")
        for tool in TOOLS:
            path = user.which(tool)
            if path:
                # GNU tools shadow busybox's applets of the same name.
                user.copy(root, Path(path), f"/usr/local/bin/{tool}")
        (root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\n"
                                         "nobody:x:65534:65534:nobody:/:/bin/false\n")
        (root / "etc/group").write_text("root:x:0:\nnogroup:x:65534:\n")
        (root / "init").write_text(INIT)
        (root / "init").chmod(0o755)
        cpio = subprocess.run("find . | cpio -o -H newc --quiet", shell=True, cwd=root,
                              capture_output=True, check=True).stdout
        # A name of its own, renamed over out whole: a boot started before reads the old one.
        fd, tmp_out = tempfile.mkstemp(dir=out.parent, prefix=out.name, suffix=".tmp")
        with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb",
                                                        compresslevel=1) as f:
            f.write(cpio)
        os.chmod(tmp_out, 0o644)
        os.rename(tmp_out, out)
    return out


def initramfs(flavour):
    """The flavour's initramfs, rebuilt when iotrace or a workload is newer than it."""
    out = OUTPUT / "guest" / f"initramfs-{flavour}.cpio.gz"
    out.parent.mkdir(parents=True, exist_ok=True)
    files = [f for f, _ in Userland(KERNELS[flavour].arch).iotrace_files()]
    newest = max(f.stat().st_mtime for f in files + [Path(__file__)])
    # One builder at a time per flavour (the generic line and its 64-CPU boot start together
    # and share it): a second one waits, then finds it fresh.
    with open(out.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
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


# Boots again when the kernel died before the scenario began (seen once in CI on sid's 7.2
# under TCG: an oops and panic 9 s into the boot, before init's
# script): the line's cases never ran, so booting again hides nothing of iotrace's.
BOOT_RETRIES = 1


def qemu_command(flavour, image, smp, mem_mb, append=""):
    arch = ARCHES[KERNELS[flavour].arch]
    vmlinuz = vmlinuz_of(fetch(flavour))
    return [*arch["qemu"], "-m", str(mem_mb),
            "-smp", str(smp), "-kernel", str(vmlinuz), "-initrd", str(initramfs(flavour)),
            "-append", f"console={arch['console']} quiet panic=-1 {append}".strip(),
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
        timeout=900, nice=0):
    """Boots flavour, runs script (text) with workdir's files on /mnt; returns a GuestRun.

    workdir: a host directory copied onto the work disk (inputs); dest: where the guest's
    /mnt/out lands on the host (a new temporary directory by default); nice: QEMU's CPU
    priority (19: it runs on what the host's other work leaves).
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
    for attempt in range(1 + BOOT_RETRIES):
        try:
            res = subprocess.run(cmd, capture_output=True, timeout=timeout,
                                 stdin=subprocess.DEVNULL, preexec_fn=lambda: os.nice(nice))
            console = res.stdout.decode(errors="replace")
        except subprocess.TimeoutExpired as e:
            console = (e.stdout or b"").decode(errors="replace") + "\nGUEST-TIMEOUT\n"
        if "GUEST-START" in console or "GUEST-TIMEOUT" in console:
            break
        # The kernel died before the scenario began (nothing of ours had run: the disk is
        # untouched): the console is kept, and the line boots again.
        (dest / f"console-early-death-{attempt + 1}.log").write_text(console)
        print(f"guest {flavour}: the kernel died before the scenario began (console in "
              f"{dest}/console-early-death-{attempt + 1}.log); booting again", file=sys.stderr)
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
            cmd = qemu_command(a.flavour, image, a.smp, 2048, "guest.shell")
            os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main()
