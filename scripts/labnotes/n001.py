"""Lab note 001: tr2u (unbuffered) against tr2b (stdio), with the note's strace -c tables.

`tr2u 1 a` and `tr2b 1 a` on the note's 500,001 '1' characters, stdout to a file and to a
terminal (a pseudo-terminal this script drains), each under `strace -f -c` and iotrace.
"""
import contextlib
import os
import pty
import threading

from . import notes
from .common import md_table, mkinput, side_by_side, trace_both, wl

VARIANTS = {"tr2b > file": ("tr2b", "file"), "tr2u > file": ("tr2u", "file"),
            "tr2u > tty": ("tr2u", "tty"), "tr2b > tty": ("tr2b", "tty")}


def _drain(fd):
    while True:
        try:
            if not os.read(fd, 65536):
                return
        except OSError:  # EIO once the last writer has closed the terminal
            return


@contextlib.contextmanager
def terminal():
    """A pseudo-terminal's writing end, read (and discarded) by a thread so it never fills."""
    master, slave = pty.openpty()
    reader = threading.Thread(target=_drain, args=(master,), daemon=True)
    reader.start()
    out = os.fdopen(slave, "wb", buffering=0)
    try:
        yield out
    finally:
        out.close()
        reader.join(timeout=5)
        os.close(master)


def measure(ctx):
    size = 20001 if ctx.quick else 500001
    src = mkinput(ctx.tmp / "input.txt", size, "-c", "1")
    runs = {}
    for name, (prog, target) in VARIANTS.items():
        factory = terminal if target == "tty" else (lambda: open(ctx.tmp / "output", "wb"))
        runs[name] = trace_both([wl(prog), "1", "a"], ctx.tmp, stdin=src,
                                stdout_factory=factory)
    data = {"input_bytes": size, "runs": runs}
    return data


def render(data, out):
    (out / "001-tr2u-tr2b.md").write_text(page(data))


def page(data):
    sections = [f"### `{name.split()[0]} 1 a < input.txt{' > output' if 'file' in name else ''}`"
                f" ({'stdout a file' if 'file' in name else 'stdout a terminal'})\n\n"
                + side_by_side(notes.N001_STRACE[name], notes.N001_TOTAL[name], ours)
                for name, ours in data["runs"].items()]
    r = data["runs"]
    times = md_table(["run", "note s (time, real)", "ours s (iotrace wall)"],
                     [[n, f"{t:.3f}", f"{r[n]['wall_s']:.3f}"]
                      for n, t in notes.N001_SECONDS.items()])
    return TEMPLATE.format(size=data["input_bytes"], tables="\n\n".join(sections),
                           times=times, bf=r["tr2b > file"]["iotrace"],
                           agree="agree call for call" if all(
                               v["iotrace"] == v["strace"] for v in r.values())
                           else "do NOT agree (see the tables)",
                           bt=r["tr2b > tty"]["iotrace"], uf=r["tr2u > file"]["iotrace"])


TEMPLATE = """# Lab note 001: tr2u (read/write per byte) against tr2b (getchar/putchar)

**The note** ran `tr2b 1 a` and `tr2u 1 a` on 500,001 `1` characters under `strace -c`,
stdout to a file and to the terminal: tr2u made 500,001 writes and 500,003 reads
(1,000,026 calls), tr2b 44 calls to a file and 525 to the terminal (489 writes: a terminal
gets smaller flushes than a file), and tr2b took 0.058 s against tr2u's 0.590 s.

**Our conditions:** `workloads/tr2u` and `workloads/tr2b` on a {size:,}-byte file of `1`s,
stdin redirected from it, stdout to a file or to a pseudo-terminal, each run once under
`strace -f -c` and once under `iotrace`.

{tables}

Times (a timing: the note's machine against ours):

{times}

## Where we differ and why

- iotrace and strace -f -c {agree} on every run.
- tr2u's calls are the note's: {uf[read]:,} reads (one per byte, one at EOF and the dynamic
  loader's read of libc; the note: 500,003) and {uf[write]:,} writes, one per byte.
- tr2b to a file: {bf[read]:,} reads and {bf[write]:,} writes: glibc sizes each stream's
  buffer from `st_blksize`, 4096 on our ext4. The note's 10 reads and 8 writes fit a
  65,536-byte buffer (500,001 / 65,536 → 8 reads and 8 writes, plus the read at EOF and
  the loader's): the note's files were on a filesystem reporting 64 KiB blocks
  (`st_blksize` 65,536).
- tr2b to a terminal: {bt[write]:,} writes. glibc sizes a terminal's stdout buffer from the
  terminal's `st_blksize` (1024 bytes: 500,001 / 1024 → 489 writes, the note's count) and
  flushes it when full, since the `a`s contain no newline.
- The remaining rows are the dynamic loader's start-up, which has changed since the note
  (`open` became `openat`, `fstat` `newfstatat`; `pread64`, `rseq` and others are new).
"""
