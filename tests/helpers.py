"""Helpers shared by the test files: running programs, making inputs, reading strace -c."""
import json
import os
import re
import resource
import signal
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS = ROOT / "workloads"
IOTRACE = ROOT / "iotrace"
MIB = 1 << 20
USAGE = b"usage:"
# No test needs a file near this size; a program that misparses a size dies of SIGXFSZ
# instead of filling the disk.
FSIZE_LIMIT = 256 * MIB
# Every iotrace a test starts (and the command it runs) may have this much data (RLIMIT_DATA:
# heap and private writable mappings; the BPF maps and ring buffers iotrace maps are shared
# mappings, which do not count). A run keeps ~8 to 35 KiB per process it traced: the host
# tests' biggest (test_scale's 20,000 processes, compare's storm) peak under 300 MiB, `make
# soak`'s 100,000 processes an estimated 0.8 GiB. A runaway meets ENOMEM here and fails its
# own test instead of taking the machine (one left running reached 22.9 GB in CI: conftest.py).
IOTRACE_DATA_LIMIT = 4096 * MIB


def wl(name):
    return str(WORKLOADS / name)


def limit_file_size():
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE_LIMIT, FSIZE_LIMIT))


def limit_data():
    """The soft RLIMIT_DATA of IOTRACE_DATA_LIMIT (the hard limit stays)."""
    hard = resource.getrlimit(resource.RLIMIT_DATA)[1]
    soft = IOTRACE_DATA_LIMIT if hard == resource.RLIM_INFINITY else min(hard, IOTRACE_DATA_LIMIT)
    resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


# An argument that runs iotrace: its path (a program's argv, or a wrapper's: strace, taskset,
# timeout) or a word of a shell line ("... | iotrace snoop -j").
IOTRACE_WORD = re.compile(rb"""(?:^|[\s/'"(;|&])iotrace(?=$|[\s'")(;|&])""")


def starts_iotrace(args):
    """Whether a Popen's args (a list, or one string or path) may start iotrace."""
    if isinstance(args, (str, bytes, os.PathLike)):
        args = [args]
    return any(IOTRACE_WORD.search(os.fsencode(a)) for a in args
               if isinstance(a, (str, bytes, os.PathLike)))


def process_table():
    """{pid: (ppid, start time in clock ticks, state)} of every process (/proc/*/stat)."""
    table = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            table[int(proc.name)] = (int(fields[1]), fields[19], fields[0])
        except (OSError, IndexError, ValueError):
            continue  # gone
    return table


def iotrace_processes():
    """{(pid, start time): command line} of the processes of this tree's iotrace that this
    process started (its descendants: a test's, not another test run's beside it)."""
    found, exe, table = {}, os.path.realpath(IOTRACE), process_table()
    for pid, (ppid, start, _) in table.items():
        seen = set()
        while ppid > 1 and ppid != os.getpid() and ppid not in seen:
            seen.add(ppid)
            ppid = table.get(ppid, (0,))[0]
        try:
            if ppid != os.getpid() or os.readlink(f"/proc/{pid}/exe") != exe:
                continue
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").strip()
        except OSError:
            continue  # gone
        found[(pid, start)] = argv.decode(errors="replace")
    return found


def children_of(pids):
    """The children of pids, zombies left out."""
    return {pid for pid, (ppid, _, state) in process_table().items()
            if ppid in pids and state != "Z"}


def kill_tree(pid):
    """SIGKILL pid's descendants, then pid. iotrace is a subreaper: what its command's
    processes leave orphaned comes to it, so its children are killed until none is left."""
    for _ in range(100):
        tree, new = set(), {pid}
        while new:
            tree |= new
            new = children_of(new) - tree
        tree.discard(pid)
        if not tree:
            break
        for p in tree:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)  # its Popen, if any, reaps it
    except ProcessLookupError:
        pass


def end_leaked_iotrace(before, grace=5.0):
    """The iotrace processes started since `before` (iotrace_processes()) that outlive
    their test by `grace` seconds, killed with their commands: their command lines."""
    deadline = time.monotonic() + grace
    while True:
        leaked = {k: v for k, v in iotrace_processes().items() if k not in before}
        if not leaked or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for pid, _ in leaked:
        kill_tree(pid)
    return [f"{pid}: {argv}" for (pid, _), argv in leaked.items()]


def cap_iotrace_data():
    """Makes every Popen (subprocess.run's too) that starts iotrace do it under limit_data,
    whichever helper or test starts it: its own preexec_fn, if any, runs after."""
    popen_init = subprocess.Popen.__init__
    if getattr(popen_init, "caps_iotrace", False):
        return

    def init(self, args, *a, **kw):
        if starts_iotrace(args):
            given = kw.get("preexec_fn")

            def preexec():
                limit_data()
                if given:
                    given()
            kw["preexec_fn"] = preexec
        popen_init(self, args, *a, **kw)
    init.caps_iotrace = True
    subprocess.Popen.__init__ = init


def run(args, **kw):
    kw.setdefault("preexec_fn", limit_file_size)
    if "stdout" not in kw:
        kw.setdefault("capture_output", True)
    elif "stderr" not in kw:
        kw["stderr"] = subprocess.PIPE
    kw.setdefault("timeout", 120)
    return subprocess.run([str(a) if isinstance(a, Path) else a for a in args], **kw)


def mkinput(path, size, *opts):
    res = run([wl("mkinput"), *opts, str(size), path])
    assert res.returncode == 0, res.stderr
    return Path(path)


def run_stdin(args, stdin_path, **kw):
    with open(stdin_path, "rb") as f:
        return run(args, stdin=f, **kw)


def assert_usage_error(res):
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert USAGE in res.stderr, res.stderr


def assert_runtime_error(res, prog):
    """Exit 1 with one line "prog: what failed: reason" on stderr."""
    assert res.returncode == 1, (res.returncode, res.stderr)
    lines = res.stderr.decode(errors="replace").splitlines()
    assert len(lines) == 1, lines
    assert re.match(rf"^{re.escape(prog)}: .+: .+$", lines[0]), lines[0]


def parse_strace_c(text):
    """Parse the table `strace -c` prints into {syscall: (calls, errors)}.

    The table is fixed-width and right-aligned, and the errors column (and in the total row
    usecs/call) may be blank, so fields are cut out at the positions of the dashed rule
    under the header rather than split on blanks. The last column runs to the end of the
    line. The summary row is returned under the key "total".
    """
    lines = text.splitlines()
    header_i = next((i for i, l in enumerate(lines) if l.lstrip().startswith("% time")), None)
    if header_i is None or header_i + 1 >= len(lines):
        raise ValueError("no strace -c table found")
    rule = lines[header_i + 1]
    if not re.fullmatch(r"-+( +-+)+", rule.strip()):
        raise ValueError(f"no dashed rule under the header: {rule!r}")
    spans = [[m.start(), m.end()] for m in re.finditer(r"-+", rule)]
    spans[-1][1] = None

    def cut(line):
        return [line[a:b].strip() if b else line[a:].strip() for a, b in spans]

    names = cut(lines[header_i])
    if "calls" not in names or "syscall" not in names or "errors" not in names:
        raise ValueError(f"unexpected columns {names}")
    ci, ei, si = names.index("calls"), names.index("errors"), names.index("syscall")
    table = {}
    for line in lines[header_i + 2:]:
        if not line.strip() or set(line.strip()) <= set("- "):
            continue
        fields = cut(line)
        table[fields[si]] = (int(fields[ci]), int(fields[ei]) if fields[ei] else 0)
    if "total" not in table:
        raise ValueError("no total row")
    return table


def strace_c(args, tmp_path, stdin_path=None, **kw):
    """Run args under `strace -f -c`; return {syscall: calls}."""
    out = tmp_path / f"strace-c.{len(list(tmp_path.glob('strace-c.*')))}"
    cmd = ["strace", "-f", "-c", "-o", str(out), *args]
    res = run_stdin(cmd, stdin_path, **kw) if stdin_path else run(cmd, **kw)
    assert res.returncode == 0, res.stderr
    return {k: v[0] for k, v in parse_strace_c(out.read_text()).items()}, res


STRACE_LINE = re.compile(r"^(?:\d+ +)?(\w+)\((\d+)<([^>]*)>")


def strace_by_path(args, tmp_path, calls, stdin_path=None, **kw):
    """Run args under `strace -f -y -e trace=CALLS`; return {(syscall, path): count}.

    -y prints each fd with the path it refers to, so calls on the files under test are
    counted exactly, apart from the dynamic loader's reads of libc. The raw trace is left
    in res.trace.
    """
    out = tmp_path / f"strace-y.{len(list(tmp_path.glob('strace-y.*')))}"
    cmd = ["strace", "-f", "-y", "-e", f"trace={','.join(calls)}", "-o", str(out), *args]
    res = run_stdin(cmd, stdin_path, **kw) if stdin_path else run(cmd, **kw)
    counts = {}
    res.trace = out.read_text(errors="replace")
    for line in res.trace.splitlines():
        m = STRACE_LINE.match(line)
        if m:
            key = (m.group(1), m.group(3))
            counts[key] = counts.get(key, 0) + 1
    return counts, res


def real(path):
    return os.path.realpath(path)




def strace_counts(args, tmp_path, stdin_path=None, **kw):
    """Run args under `strace -f -c`; return {syscall: (calls, errors)} without the total."""
    out = tmp_path / f"strace-c.{len(list(tmp_path.glob('strace-c.*')))}"
    cmd = ["strace", "-f", "-c", "-o", str(out), *args]
    res = run_stdin(cmd, stdin_path, **kw) if stdin_path else run(cmd, **kw)
    table = parse_strace_c(out.read_text())
    del table["total"]
    return table, res


def iotrace_json(args, tmp_path, stdin_path=None, options=(), **kw):
    """Run CMD under `iotrace --json`; return (report dict, CompletedProcess)."""
    out = tmp_path / f"iotrace.{len(list(tmp_path.glob('iotrace.*')))}.json"
    cmd = [str(IOTRACE), "--json", "-o", str(out), *options, "--", *args]
    res = run_stdin(cmd, stdin_path, **kw) if stdin_path else run(cmd, **kw)
    assert out.exists() and out.stat().st_size, res.stderr
    return json.loads(out.read_text()), res


def counts_of(syscalls):
    """{name: (calls, errors)} from a JSON "syscalls" object."""
    return {name: (v["calls"], v["errors"]) for name, v in syscalls.items()}


def bpf_object_ids():
    """IDs of BPF programs, maps and links loaded right now (via bpftool)."""
    ids = set()
    for kind in ("prog", "map", "link"):
        res = subprocess.run(["bpftool", "-j", kind, "show"], capture_output=True, text=True)
        # An object freed while bpftool lists it can show up as {"error": ...}: skip it.
        ids |= {(kind, o["id"]) for o in json.loads(res.stdout or "[]") if "id" in o}
    return ids


def bpf_objects_of_other_sessions():
    """BPF objects held by live processes of other sessions (other test runs sharing the
    machine): through a descriptor (/proc/*/fdinfo), a held link's program, or a held
    program's maps. What this session's processes leave behind, even orphaned children
    (iotrace never calls setsid), still counts as left behind."""
    held, ours = set(), os.getsid(0)
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if os.getsid(int(proc.name)) == ours:
                continue
            fdinfos = list((proc / "fdinfo").iterdir())
        except OSError:
            continue  # gone
        for fdinfo in fdinfos:
            try:
                text = fdinfo.read_text()
            except OSError:
                continue  # closed meanwhile
            for kind in ("prog", "map", "link"):
                held |= {(kind, int(i)) for i in re.findall(rf"^{kind}_id:\s+(\d+)$", text, re.M)}
    res = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True)
    for prog in json.loads(res.stdout or "[]"):
        if ("prog", prog.get("id")) in held:
            held |= {("map", m) for m in prog.get("map_ids", [])}
    return held


def assert_no_new_bpf_objects(before, timeout=5.0):
    """The kernel frees a closed map from a workqueue, so allow it a moment. Objects that
    processes of other sessions hold are theirs: other test runs may share the machine."""
    deadline = time.monotonic() + timeout
    while True:
        extra = bpf_object_ids() - before
        if extra:
            extra -= bpf_objects_of_other_sessions()
        if not extra or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not extra, f"left behind: {sorted(extra)}"


def real_processes(report):
    """The traced processes of a report, without the "(other I/O)" pseudo-process."""
    return [p for p in report["processes"] if p["pid"] is not None]


def page_cache_evictions():
    """How many times the kernel has taken pages from the page cache behind a test's back since
    boot (/proc/vmstat: pages reclaimed, and writes to drop_caches, which another session on
    the machine may make). A drop_caches is counted when it has finished: read this again a
    moment later before blaming the count of an evicted page on iotrace."""
    with open("/proc/vmstat") as f:
        return sum(int(v) for k, v in (line.split() for line in f)
                   if k.startswith("pgsteal_") or k == "drop_pagecache")


def timed_or_late(run_once, attempts=3):
    """Block latencies of a run in which the kernel may skip completions (docs/block.md, "Late
    completions"). run_once() returns (result, requests, timed, unseen): the workload's
    requests, how many of them have a latency, and the run's block_completions_unseen (every
    process's). In every attempt each request is timed or counted late, and those counted late
    are among the unseen. How many the kernel skips grows with the load and comes in bursts
    (52 of dd's 64 sequential writes in one CI run): a run without a single timed request
    says nothing of the latencies and runs again, at most `attempts` times."""
    for _ in range(attempts):
        result, requests, timed, unseen = run_once()
        assert 0 <= requests - timed <= unseen, (requests, timed, unseen)
        if timed:
            return result
    pytest.fail(f"{attempts} runs without one timed request: all {requests} counted late")
