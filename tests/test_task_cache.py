"""The hooks' per-CPU record of the task they saw last, whatever it holds (issue 44).

On x86-64 sys_enter and sys_exit find the current task in a per-CPU row of `cpu_threads`
(bpf/task.bpf.c, `syscall_task`; a cache line per CPU in `.bss`), and so do the page cache's,
block and io_uring hooks (`hook_task`, which also writes the row's second word). The 7.x kernels run
the syscall tracepoints' programs preemptibly, so another task's hook may write that row
between one hook's reads or writes, and the row may hold words that different tasks' hooks
wrote: a child's calls were charged to an untraced task that way, in the sid and
trixie-backports guests. This host (6.18) runs
those programs with preemption off, so the test writes such rows itself: while tr2u runs
pinned to CPU 0, this process (pinned to CPU 1) writes into CPU 0's row, over and over,
each mixture of the words tr2u's hooks left there and the words its own hooks left in CPU 1's
row. tr2u's calls must all count, in its own process: N+1 reads of stdin and N writes, and
each of the N reads that reached the page cache asked its file for one page.
"""
import ctypes
import json
import mmap
import os
import platform
import re
import subprocess
import time
from pathlib import Path

import pytest

from helpers import IOTRACE, mkinput, wl

NR_BPF = {"x86_64": 321, "aarch64": 280}.get(platform.machine())
BPF_MAP_LOOKUP_ELEM, BPF_MAP_UPDATE_ELEM, BPF_MAP_GET_FD_BY_ID = 1, 2, 14
LIBC = ctypes.CDLL(None, use_errno=True)


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    res = LIBC.syscall(NR_BPF, cmd, buf, len(buf))
    if res < 0:
        raise OSError(ctypes.get_errno(), f"bpf({cmd})")
    return res


class Rows:
    """The per-CPU rows of a variable of iotrace's `.bss` map, read and written in place
    (the map is mmappable): 64 bytes a CPU from the variable's offset."""

    def __init__(self, map_id, value_size, offset):
        self.fd = bpf(BPF_MAP_GET_FD_BY_ID, map_id.to_bytes(4, "little") + bytes(8))
        self.mem = mmap.mmap(self.fd, (value_size + mmap.PAGESIZE - 1) // mmap.PAGESIZE *
                             mmap.PAGESIZE, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self.offset = offset

    def read(self, cpu):
        at = self.offset + cpu * 64
        return self.mem[at:at + 64]

    def write(self, cpu, raw):
        at = self.offset + cpu * 64
        self.mem[at:at + len(raw)] = raw

    def close(self):
        self.mem.close()
        os.close(self.fd)


def bss_var_of(pid, var):
    """(map id, value size, offset of var) of the `.bss` map that process pid holds, from the
    map's BTF (its DATASEC), or None."""
    ids = set()
    for info in Path(f"/proc/{pid}/fdinfo").glob("*"):
        try:
            ids |= {int(i) for i in re.findall(r"^map_id:\s+(\d+)$", info.read_text(), re.M)}
        except OSError:
            pass
    res = subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True, text=True)
    for m in json.loads(res.stdout or "[]"):
        if m.get("id") in ids and m.get("name", "").endswith(".bss") and m.get("btf_id"):
            btf = subprocess.run(["bpftool", "btf", "dump", "id", str(m["btf_id"]), "format",
                                  "raw"], capture_output=True, text=True).stdout
            at = re.search(rf"offset=(\d+) size=\d+ \(VAR '{var}'\)", btf)
            if at:
                return m["id"], m["bytes_value"], int(at.group(1))
    return None


def mixtures(mine, theirs, words=3):
    """Rows made of the first `words` 8-byte words of either row, each way but the two rows
    themselves (the rest from theirs)."""
    for mask in range(1, (1 << words) - 1):
        row = bytearray(theirs)
        for w in range(words):
            if mask >> w & 1:
                row[w * 8:(w + 1) * 8] = mine[w * 8:(w + 1) * 8]
        yield bytes(row)


def run_poisoned(iotrace, tmp_path, n):
    """tr2u over n bytes under iotrace, CPU 0's row rewritten meanwhile; the report and how
    many rows were written."""
    data = mkinput(tmp_path / "in", n)
    out = tmp_path / "r.json"
    old = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {1})
    written = 0
    try:
        with open(data, "rb") as stdin:
            proc = subprocess.Popen([str(iotrace), "--json", "-o", str(out), "--", "taskset",
                                     "-c", "0", wl("tr2u"), "a", "b"], stdin=stdin,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        found, deadline = None, time.monotonic() + 30
        while not found and proc.poll() is None and time.monotonic() < deadline:
            found = bss_var_of(proc.pid, "cpu_threads")
            time.sleep(0.01)
        assert found, "iotrace's cpu_threads rows not found"
        rows = Rows(*found)
        try:
            while proc.poll() is None:
                for row in mixtures(rows.read(1), rows.read(0)):
                    rows.write(0, row)
                    written += 1
        finally:
            rows.close()
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    finally:
        os.sched_setaffinity(0, old)
    return json.loads(out.read_text()), written


@pytest.mark.skipif(NR_BPF is None or platform.machine() != "x86_64",
                    reason="the per-CPU task record is x86-64's (arm64 asks the helper)")
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 or not {0, 1} <= os.sched_getaffinity(0),
                    reason="needs CPUs 0 and 1")
def test_calls_stay_their_tasks_whatever_the_row_holds(tmp_path):
    n = 300_000
    report, written = run_poisoned(IOTRACE, tmp_path, n)
    assert written > 100, written  # the row was rewritten while tr2u ran
    tr2u = [p for p in report["processes"] if p["pid"] is not None and p["comm"] == "tr2u"]
    assert len(tr2u) == 1, [p["comm"] for p in report["processes"]]
    calls = {k: v["calls"] for k, v in tr2u[0]["syscalls"].items()}
    stdin = next(f for f in tr2u[0]["files"] if f["path"] and f["path"].endswith("/in"))
    assert (calls["write"], stdin["io"]["read"]["calls"]) == (n, n + 1), (calls, written)
    assert stdin["requested_pages"] == n, (stdin["requested_pages"], written)
    assert report["drops"].get("nested_runs", 0) == 0
