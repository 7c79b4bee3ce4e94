"""Helpers shared by the test files: running programs, making inputs, reading strace -c."""
import json
import os
import re
import resource
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


def wl(name):
    return str(WORKLOADS / name)


def limit_file_size():
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE_LIMIT, FSIZE_LIMIT))


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
