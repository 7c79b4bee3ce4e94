"""Every live process its own exact counters, however many and on however many CPUs
(issue 26: the counters live in per-CPU caches of rows and in totals that grow with use,
bpf/counters.bpf.c). The reference is strace -f in the same run, per process."""
import sys

from helpers import real_processes, wl
from perpid import differing, iotrace_per_process, traced_by_both

# A Python program starting 200 long-lived processes that wait, then each read i bytes one
# at a time (so they are all alive at once, and all do I/O); 100 short-lived ones in a row;
# and 8 threads of its own, each reading n bytes one by one.
CROWD = r"""
import os, subprocess, sys, threading, time
work = [subprocess.Popen(["sh", "-c", f"sleep 1.5; exec dd if=/dev/zero of=/dev/null bs=1 "
                          f"count={i + 1} status=none"]) for i in range(200)]
for _ in range(100):
    subprocess.run(["/bin/true"])
def reader(n):
    fd = os.open("/dev/zero", os.O_RDONLY)
    for _ in range(n):
        os.read(fd, 1)
    os.close(fd)
threads = [threading.Thread(target=reader, args=(100 + k,)) for k in range(8)]
for t in threads: t.start()
for t in threads: t.join()
for p in work: p.wait()
"""


def test_hundreds_of_live_processes_each_exact(tmp_path):
    """~500 processes, 200 of them alive and reading at once, threads too: each one's
    calls and errors of every syscall equal strace -f's for its pid in the same run; none
    shares the overflow counters."""
    report, ref = traced_by_both([sys.executable, "-c", CROWD], tmp_path)
    assert report["drops"]["overflow_processes"] == 0
    assert report["drops"]["cache_totals"] == 0
    procs = {p["pid"]: p for p in real_processes(report)}
    dds = [p for p in procs.values() if p["comm"] == "dd"]
    assert len(dds) == 200
    ours = iotrace_per_process(report)
    top = min(pid for pid, p in procs.items() if p["comm"] != "strace")
    checked = 0
    for pid, p in procs.items():
        if p["comm"] == "strace" or pid == top:  # strace itself; its child's pre-exec calls
            continue
        diff = differing(ours[pid], ref.get(pid, {}))
        assert not diff, (p["comm"], pid, diff)
        checked += 1
    assert checked >= 500
    for p in dds:  # and each its own: dd number n read /dev/zero n times
        n = int(next(a for a in p["args"].split() if a.startswith("count="))[6:])
        files = {f["path"]: f["io"] for f in p["files"]}
        assert files["/dev/zero"]["read"]["calls"] == files["/dev/null"]["write"]["calls"] == n
    py = procs[top]
    assert py["syscalls"]["read"]["calls"] >= sum(100 + k for k in range(8))
