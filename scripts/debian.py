#!/usr/bin/env python3
"""Debian's packages of any suite and architecture, through an apt configuration of our own.

The kernel matrix (scripts/guest.py) fetches kernel packages of other suites (trixie, sid,
trixie-backports) and other architectures (arm64), and `make ARCH=arm64` builds against a
sysroot of Debian's arm64 -dev packages: each (suites, architecture) gets its own apt
configuration, lists and cache under .output/apt/, so the system's sources are never read
or changed.

    scripts/debian.py sysroot ARCH     unpack the cross-build's and the guest's packages
"""
import contextlib
import fcntl
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / ".output"


def log(msg):
    print(f"  APT    {msg}", file=sys.stderr, flush=True)


def apt_dir(suite, arch):
    return OUTPUT / "apt" / f"{suite.replace(' ', '+')}-{arch}"


# Ubuntu's suites (the matrix boots Ubuntu 24.04's kernel, the one most machines of the
# 6.2-6.17 range run): its archive, and its signing keys from Debian's own package of them
# (trixie's ubuntu-keyring), so that trust starts at Debian's keyring as for every
# other suite.
UBUNTU_SUITES = {"noble", "noble-updates", "noble-security", "jammy", "jammy-updates",
                 "jammy-security"}
UBUNTU_ARCHIVE = "http://archive.ubuntu.com/ubuntu"
UBUNTU_KEYRING = OUTPUT / "apt" / "ubuntu-archive-keyring.gpg"


def ubuntu_keyring():
    """Ubuntu's archive keyring, unpacked once from Debian trixie's package of it."""
    if not UBUNTU_KEYRING.exists():
        UBUNTU_KEYRING.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=OUTPUT) as tmp:
            (deb,) = download("trixie trixie-security", "amd64", ["ubuntu-keyring"], tmp)
            subprocess.run(["dpkg-deb", "-x", str(deb), f"{tmp}/x"], check=True)
            found = Path(tmp, "x/usr/share/keyrings/ubuntu-archive-keyring.gpg")
            found.replace(UBUNTU_KEYRING)
    return UBUNTU_KEYRING


def source_line(suite):
    """The sources.list line of one suite."""
    if suite in UBUNTU_SUITES:
        return f"deb [signed-by={ubuntu_keyring()}] {UBUNTU_ARCHIVE} {suite} main\n"
    return ("deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian."
            f"org/debian{'-security' if suite.endswith('-security') else ''} {suite} main\n")


def options(suite, arch):
    """apt-get/apt-cache options for the ARCH packages of SUITE (one suite or several,
    e.g. "bookworm bookworm-security") from a configuration and state of our own under
    .output/apt/ (the system's sources are never changed or read)."""
    d = apt_dir(suite, arch)
    etc = d / "etc"
    if not (etc / "sources.list").exists():
        for sub in ("etc/apt.conf.d", "etc/preferences.d", "etc/sources.list.d",
                    "state/lists/partial", "cache/archives/partial"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        (d / "state/status").touch()
        (etc / "sources.list").write_text("".join(source_line(s) for s in suite.split()))
    return ["-o", f"Dir::Etc={etc}", "-o", f"Dir::State={d / 'state'}",
            "-o", f"Dir::State::status={d / 'state/status'}", "-o", f"Dir::Cache={d / 'cache'}",
            "-o", f"APT::Architecture={arch}", "-o", f"APT::Architectures::={arch}",
            "-o", "Acquire::Languages=none",
            "-o", "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false",
            "-o", "APT::Sandbox::User=root", "-q"]


@contextlib.contextmanager
def apt_lock(suite, arch):
    """One apt-get at a time on a configuration of ours: the kernel matrix fetches its lines
    in parallel, and two `apt-get update`s of one state directory fail on apt's own lock
    (the Ubuntu lines all take their keyring through trixie's)."""
    d = apt_dir(suite, arch)
    d.mkdir(parents=True, exist_ok=True)
    with open(d / "iotrace.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def update(suite, arch, force=False):
    """Reads SUITE's package lists once (again with force: a package moved on)."""
    with apt_lock(suite, arch):
        return update_locked(suite, arch, force)


def update_locked(suite, arch, force=False):
    """update, its caller holding apt_lock."""
    opts = options(suite, arch)
    lists = apt_dir(suite, arch) / "state/lists"
    if force or not any(lists.glob("*_Packages*")):
        log(f"apt-get update ({suite}, {arch})")
        subprocess.run(["apt-get", *opts, "update"], check=True, stdout=subprocess.DEVNULL)
    return opts


def download(suite, arch, packages, dest):
    """apt-get download of packages (exact names) into dest; lists refreshed once when a
    file is gone from the mirror."""
    with apt_lock(suite, arch):
        for attempt in (0, 1):
            opts = update_locked(suite, arch, force=attempt == 1)
            r = subprocess.run(["apt-get", *opts, "download", *packages], cwd=dest,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if r.returncode == 0:
                return sorted(Path(dest).glob("*.deb"))
    raise RuntimeError(f"apt-get download {' '.join(packages)} ({suite}): {r.stderr.strip()}")


def pkgnames(suite, arch):
    opts = update(suite, arch)
    return subprocess.run(["apt-cache", *opts, "pkgnames"], capture_output=True, text=True,
                          check=True).stdout.split()


# ---- a sysroot of another architecture's packages ----

# The suite the cross-build and the guests' programs come from: the host's (Debian 12).
SYSROOT_SUITE = "bookworm bookworm-security"
# What `make ARCH=...` compiles and links against (iotrace's and the workloads' libraries,
# the C library and GCC's start files and libgcc, which clang finds in the sysroot).
BUILD_PACKAGES = ["libc6-dev", "linux-libc-dev", "libgcc-12-dev", "libbpf-dev", "libelf-dev",
                  "zlib1g-dev", "libcjson-dev", "libseccomp-dev", "libmicrohttpd-dev",
                  "libncurses-dev", "libdw-dev", "liburing-dev", "uthash-dev"]
# The guests' shell and reference tools (scripts/guest.py TOOLS), Debian's builds of them.
GUEST_PACKAGES = ["busybox-static", "strace", "util-linux", "util-linux-extra", "coreutils",
                  "tar", "gzip", "sqlite3", "e2fsprogs", "xfsprogs", "bpftool"]


def sysroot_dir(arch):
    return OUTPUT / arch / "sysroot"


def depends(suite, arch, packages):
    """The packages that packages depend on (first of each alternative, no virtual ones)."""
    out = subprocess.run(["apt-cache", *update(suite, arch), "depends", "--no-recommends",
                          "--no-suggests", "--no-conflicts", "--no-breaks", "--no-replaces",
                          "--no-enhances", *packages], capture_output=True, text=True,
                         check=True).stdout
    return {m.group(1) for m in re.finditer(r"^\s+\|?(?:Pre)?Depends: ([^<\s]\S*)", out, re.M)}


def library_closure(suite, arch, packages):
    """packages and, recursively, the libraries they depend on (the C library's too)."""
    want, todo = set(packages), set(packages)
    while todo:
        new = {p.split(":")[0] for p in depends(suite, arch, sorted(todo))}
        new = {p for p in new if re.match(r"(lib|zlib)", p) and not re.search(r"-(bin|doc)$", p)}
        todo = new - want
        want |= new
    return sorted(want)


def sysroot(arch):
    """.output/ARCH/sysroot: BUILD_PACKAGES and GUEST_PACKAGES with their libraries,
    unpacked (made once; remade when this file's lists change)."""
    d = sysroot_dir(arch)
    stamp = d / ".packages"
    listed = " ".join(BUILD_PACKAGES + GUEST_PACKAGES)
    if stamp.exists() and stamp.read_text().split("\n")[0] == listed:
        return d
    wanted = library_closure(SYSROOT_SUITE, arch, BUILD_PACKAGES + GUEST_PACKAGES)
    debs = OUTPUT / arch / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    have = {p.name.split("_")[0] for p in debs.glob("*.deb")}
    missing = [p for p in wanted if p not in have]
    if missing:
        log(f"apt-get download {len(missing)} {arch} packages")
        download(SYSROOT_SUITE, arch, missing, debs)
    tmp = d.with_name("sysroot.tmp")
    subprocess.run(["rm", "-rf", str(tmp)], check=True)
    tmp.mkdir(parents=True)
    for deb in sorted(debs.glob("*.deb")):
        if deb.name.split("_")[0] in wanted:
            subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp)], check=True)
    (tmp / ".packages").write_text(listed + "\n" + "\n".join(wanted) + "\n")
    subprocess.run(["rm", "-rf", str(d)], check=True)
    tmp.rename(d)
    return d


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "sysroot":
        print(sysroot(sys.argv[2]))
        return 0
    print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
