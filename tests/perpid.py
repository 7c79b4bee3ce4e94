"""Per-process syscall counts from `strace -f -o LOG`, for the same run under iotrace.

strace -f writes each thread's calls with its tid; a thread is grouped with its process
(the tgid) by the clone that made it (CLONE_THREAD, also when another thread's line split
that clone's into its unfinished and resumed halves). A call is counted when it returns, as
iotrace counts: `exit_group(0) = ?` never does; a call interrupted to be restarted
(`= ? ERESTARTSYS`) did return, with that error, before the kernel restarted it.
"""
import collections
import json
import re

from helpers import IOTRACE, run

CALL = re.compile(r"^(\d+) +(?:<\.\.\. (\w+) resumed>.*|(\w+)\(.*)$")
RESULT = re.compile(r"\) += (-?\d+|\?|0x[0-9a-f]+)(.*)$")
THREAD = re.compile(r"^(\d+) +(?:<\.\.\. clone3? resumed>|clone3?\().*CLONE_THREAD.*\) += (\d+)")
# A clone that another thread's line interrupted: its flags on the first half, the new tid on
# the second ("<... clone3 resumed> => {parent_tid=[N]}, 88) = N").
THREAD_BEGUN = re.compile(r"^(\d+) +clone3?\(.*CLONE_THREAD.*<unfinished \.\.\.>$")
RESUMED = re.compile(r"^(\d+) +<\.\.\. clone3? resumed>.*\) += (\d+)")


def strace_per_process(log):
    """{tgid: {syscall: (calls, errors)}} from an strace -f log."""
    tgid, counts = {}, collections.defaultdict(lambda: collections.Counter())
    lines = open(log, errors="replace").read().splitlines()
    begun = set()
    for line in lines:
        m = THREAD.match(line)
        b = THREAD_BEGUN.match(line)
        r = RESUMED.match(line)
        if b:
            begun.add(int(b.group(1)))
        elif r and int(r.group(1)) in begun:
            begun.discard(int(r.group(1)))
            m = r
        if m:
            tgid[int(m.group(2))] = tgid.get(int(m.group(1)), int(m.group(1)))
    for line in lines:
        m = CALL.match(line)
        if not m or line.endswith("<unfinished ...>"):
            continue
        tid, name = int(m.group(1)), m.group(2) or m.group(3)
        r = RESULT.search(line)
        if not r:
            continue
        value, rest = r.groups()
        if value == "?" and "ERESTART" not in rest:
            continue  # never returned (exit, exit_group, the execve of a thread)
        error = value == "?" or (value.startswith("-") and
                                 re.match(r"\s+E[A-Z0-9]+\b", rest) is not None)
        c = counts[tgid.get(tid, tid)]
        c[(name, "calls")] += 1
        c[(name, "errors")] += bool(error)
    return {pid: {name: (c[(name, "calls")], c[(name, "errors")])
                  for name, kind in c if kind == "calls"} for pid, c in counts.items()}


def iotrace_per_process(report):
    """{pid: {syscall: (calls, errors)}} of every traced process."""
    return {p["pid"]: {n: (r["calls"], r["errors"]) for n, r in p["syscalls"].items()}
            for p in report["processes"] if p["pid"] is not None}


def traced_by_both(cmd, tmp_path, options=(), env=None):
    """The report of `iotrace --json -- strace -f -o LOG CMD`, and strace's counts."""
    n = len(list(tmp_path.glob("perpid.*.json")))
    out, log = tmp_path / f"perpid.{n}.json", tmp_path / f"perpid.{n}.log"
    res = run([str(IOTRACE), "--json", "-o", str(out), *options, "--", "strace", "-f",
               "-o", str(log), *cmd], timeout=600, env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(out.read_text()), strace_per_process(log)


def differing(ours, theirs, ignore=("rt_sigreturn",)):
    """{syscall: (iotrace's, strace's)} where the two differ. A shell's rt_sigreturn after
    SIGCHLD is left out: how often its handler runs depends on when ptrace stops it."""
    return {n: (ours.get(n), theirs.get(n)) for n in set(ours) | set(theirs)
            if n not in ignore and ours.get(n) != theirs.get(n)}
