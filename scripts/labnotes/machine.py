"""Loop-device filesystems and block-queue settings, always undone.

Every change to the machine is made inside a context manager whose exit undoes it, and
trap_signals() turns SIGTERM/SIGHUP into SystemExit (SIGINT is KeyboardInterrupt already),
so Ctrl-C or a kill unwinds through the same exits: nothing stays mounted, attached or
changed. The undoing itself runs with those signals held back (undisturbed()), so a second
Ctrl-C arrives only once it is done. Images live under the caller's temporary directory,
never in the repository.
"""
import contextlib
import signal
import subprocess
import sys
import time
from pathlib import Path


STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def trap_signals():
    def leave(signum, _frame):
        raise SystemExit(128 + signum)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, leave)


@contextlib.contextmanager
def undisturbed():
    """Hold SIGINT/SIGTERM/SIGHUP back meanwhile: one that arrives is raised when the block
    is done, not in the middle of an undo (the commands run meanwhile inherit the mask,
    and finish too)."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def sh(*args, **kw):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True,
                          **kw).stdout


def loop_devices_available():
    """None if loop devices can be used here, else the reason."""
    if not Path("/dev/loop-control").exists():
        return "no /dev/loop-control (loop driver not loaded)"
    try:
        sh("losetup", "-f")
    except (OSError, subprocess.CalledProcessError) as e:
        return f"losetup -f failed: {e}"
    return None


class LoopFs:
    """A filesystem on a loop device: .dev (/dev/loopN), .name (loopN), .mnt (mount point)."""

    def __init__(self, dev, mnt, fstype):
        self.dev, self.mnt, self.fstype = dev, mnt, fstype
        self.name = Path(dev).name

    @property
    def queue(self):
        return Path("/sys/block") / self.name / "queue"

    def read_ahead_kb(self):
        return int((self.queue / "read_ahead_kb").read_text())

    def set_read_ahead_kb(self, kb):
        (self.queue / "read_ahead_kb").write_text(f"{kb}\n")
        if self.read_ahead_kb() != kb:
            raise RuntimeError(f"{self.name}: read_ahead_kb stays {self.read_ahead_kb()}, "
                               f"not {kb}")


def _umount(mnt):
    # A process killed a moment ago may still hold the mount: retry, then detach it lazily.
    for _ in range(20):
        if subprocess.run(["umount", str(mnt)], capture_output=True).returncode == 0:
            return
        time.sleep(0.1)
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


# 4 KiB blocks as on the notes' disks: mke2fs would pick 1 KiB for a filesystem under
# 512 MiB (its "small" type), and each O_SYNC write would then go out in 1 KiB pieces.
MKFS_OPTIONS = {"ext4": ["-F", "-b", "4096"], "xfs": ["-f"]}


def attach(img):
    """losetup with direct I/O (the backing file's page cache would otherwise hold a
    second copy): the device's path."""
    return sh("losetup", "-f", "--show", "--direct-io=on", img).strip()


def detach(dev):
    subprocess.run(["losetup", "-d", dev], capture_output=True)


@contextlib.contextmanager
def loop_fs(tmp, fstype, size_mib):
    """mkfs.FSTYPE on a sparse image under tmp, attached and mounted; on exit, whatever
    the reason, read_ahead_kb goes back to its value at attach, then the filesystem is
    unmounted, the device detached and the image removed."""
    img = Path(tmp) / f"{fstype}.img"
    mnt = Path(tmp) / f"{fstype}.mnt"
    mnt.mkdir()
    with open(img, "wb") as f:
        f.truncate(size_mib << 20)
    dev, fs, ra_before, mounted = None, None, None, False
    try:
        with undisturbed():  # attached and mounted, or neither: nothing to lose track of
            dev = attach(img)
            fs = LoopFs(dev, mnt, fstype)
            ra_before = fs.read_ahead_kb()
            sh(f"mkfs.{fstype}", "-q", *MKFS_OPTIONS[fstype], dev)
            sh("mount", dev, mnt)
            mounted = True
        yield fs
    finally:
        with undisturbed():
            try:
                if ra_before is not None and fs.read_ahead_kb() != ra_before:
                    fs.set_read_ahead_kb(ra_before)
            finally:
                if mounted:
                    _umount(mnt)
                if dev:
                    detach(dev)
                img.unlink(missing_ok=True)
                mnt.rmdir()


@contextlib.contextmanager
def tmpfs(tmp, size_mib):
    mnt = Path(tmp) / "tmpfs.mnt"
    mnt.mkdir()
    mounted = False
    try:
        with undisturbed():
            sh("mount", "-t", "tmpfs", "-o", f"size={size_mib}m", "tmpfs", mnt)
            mounted = True
        yield mnt
    finally:
        with undisturbed():
            if mounted:
                _umount(mnt)
            mnt.rmdir()


def blockdev_report(dev):
    """`blockdev --report DEV`'s two lines (the note printed the same for its disk)."""
    return sh("blockdev", "--report", dev).rstrip()


def kernel():
    return sh("uname", "-r").strip()


if __name__ == "__main__":
    sys.exit("machine.py is a module of scripts/experiments.py")
