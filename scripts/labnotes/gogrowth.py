"""How many read() calls readall-go makes on an S-byte regular file, derived from the Go
release that built it: its io.ReadAll growth rule and its allocator's size classes, both
read from that release's own source ($GOROOT/src).

A regular file fills every buffer a read offers until the end, so the count is the number
of buffers needed to hold S bytes, plus the read that returns 0 at EOF:
- io.ReadAll, Go 1.26 on: a 512-byte buffer, then fresh chunks of next = 256, 384, 576, ...
  bytes (next += next/2), each rounded up by append to an allocator size class (whole 8 KiB
  pages above 32 KiB);
- io.ReadAll before 1.26: one buffer, 512 bytes, grown by append(b, 0) when full: doubled
  below 256 bytes of capacity, else by (cap + 3·256)/4, then rounded up the same way.
- os.ReadFile: a buffer of size+1 (at least 512): the whole file, then 0;
- io.ReadFull into a buffer of exactly S bytes: one read, none at EOF (none for S = 0);
- the note's fixed loop: 4096-byte reads, ceil(S/4096) + 1.
"""
import os
import re
import subprocess
from pathlib import Path

MAX_SMALL = 32768
PAGE = 8192  # the Go allocator's page


def find_go():
    """The go command the Makefile uses: $GO if set (GO= empty: none, as `make GO=`), else
    PATH first, then /usr/local/go; None if there is none."""
    if "GO" in os.environ:
        return os.environ["GO"] or None
    found = subprocess.run(["sh", "-c", "command -v go || command -v /usr/local/go/bin/go"],
                           capture_output=True, text=True).stdout.strip()
    return found or None


class GoRelease:
    """The growth rule and size classes of the release at goroot."""

    def __init__(self, goroot):
        src = Path(goroot) / "src"
        io_go = (src / "io" / "io.go").read_text()
        readall = io_go[io_go.index("func ReadAll("):]
        self.chunked = "chunks" in readall[:readall.index("\n}\n")]
        self.classes = self._size_classes(src)

    @staticmethod
    def _size_classes(src):
        for path in sorted(src.glob("**/sizeclasses.go")):
            m = re.search(r"(?:class_to_size|SizeClassToSize) = \[\w+\]uint16\{([\d, ]+)\}",
                          path.read_text())
            if m:
                return [int(x) for x in m[1].split(",") if int(x)]
        raise RuntimeError(f"no size-class table under {src}")

    def roundupsize(self, n):
        if n <= MAX_SMALL:
            return next(c for c in self.classes if c >= n)
        return -(-n // PAGE) * PAGE

    def readall_buffers(self):
        """The sizes of the reads io.ReadAll offers on a regular file, in order."""
        yield 512
        if self.chunked:
            nxt = 256
            while True:
                yield self.roundupsize(nxt)
                nxt += nxt // 2
        cap = 512
        while True:
            new = 2 * cap if cap < 256 else cap + (cap + 3 * 256) // 4
            new = self.roundupsize(new)
            yield new - cap
            cap = new

    def file_reads(self, mode, size):
        if mode == "readfile":
            return 1 if size == 0 else 2
        if mode == "readfull":
            return 0 if size == 0 else 1
        if mode == "fixed":
            return -(-size // 4096) + 1
        reads, held = 0, 0
        for offered in self.readall_buffers():
            if held >= size:
                return reads + 1
            reads += 1
            held += offered
        raise AssertionError("unreachable")


def release(go):
    """(GoRelease, version) of the go command."""
    out = subprocess.run([go, "env", "GOROOT", "GOVERSION"], capture_output=True, text=True,
                         check=True, env={"GOTOOLCHAIN": "local", "PATH": "/usr/bin:/bin",
                                          "HOME": "/root"}).stdout.split()
    return GoRelease(out[0]), out[1]
