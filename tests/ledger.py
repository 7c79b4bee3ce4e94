"""The per-file ledger against strace in the same run: `iotrace --json -- strace -ff -yy CMD`.

Both observers see the same syscalls of the same processes. strace prints each fd with the
file it refers to (-yy), so calls and bytes per (file, syscall) can be summed from its log
and compared with iotrace's `files[].io`. strace's own calls in the child before its execve
(the command is a child of strace) are iotrace's only extra: measured on `true` and taken off.
"""
import collections
import glob
import json
import re
import subprocess

from helpers import IOTRACE, run

# The ledger's syscalls (FILE_OPS in bpf/iotrace.h), as strace names them.
FILE_CALLS = ["read", "write", "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev",
              "preadv2", "pwritev2", "sendfile", "copy_file_range", "splice", "fsync",
              "fdatasync", "sync_file_range", "fallocate", "ftruncate", "open", "openat",
              "openat2", "creat", "close", "mmap", "lseek", "getdents64", "fadvise64",
              "readahead"]
DATA = {"read", "write", "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev",
        "preadv2", "pwritev2", "sendfile", "copy_file_range", "splice"}
# Both ends of a copy: (source argument, destination argument), by position among the fds.
COPIES = {"sendfile": (1, 0), "copy_file_range": (0, 1), "splice": (0, 1)}
OPENS = {"open", "openat", "openat2", "creat"}
LINE = re.compile(r"^(\w+)\((.*)\)\s+= (.*)$")
# fd<info>: info may hold "->" (a socket's peer) and <...> (a device: <char 1:3>).
FD = re.compile(r"(?<![\w])(\d+)<((?:->|[^<>]|<[^<>]*>)*)>")


def normal(name):
    """One spelling for both observers: strace -yy's UNIX-STREAM:[ino->peer] and iotrace's
    "socket:[ino] (UNIX)" are both socket:[ino]; strace's device suffix (<char 1:3>) and
    " (deleted)" go (iotrace names a file as it was when first used)."""
    name = re.sub(r"<(char|block) \d+:\d+>$", "", name)
    name = re.sub(r" \(deleted\)$", "", name)
    m = re.match(r"^socket:\[(\d+)\]", name) or re.match(r"^[A-Z0-9-]+:\[(\d+)(?:->|\])", name)
    return f"socket:[{m.group(1)}]" if m and not name.startswith("pipe:") else name


THREAD_CLONE = re.compile(r"^clone3?\(.*CLONE_THREAD.*\)\s+= (\d+)$")


def strace_tgids(log):
    """{tid: its process's pid} of strace -ff's logs (one a thread): a thread is the
    CLONE_THREAD clone or clone3 of a thread of its process, in that thread's log."""
    parent = {}
    for path in glob.glob(f"{log}.*"):
        tid = int(path.rsplit(".", 1)[1])
        for line in open(path, errors="replace"):
            m = THREAD_CLONE.match(line.strip())
            if m:
                parent[int(m.group(1))] = tid
    def leader(tid):
        while tid in parent:
            tid = parent[tid]
        return tid
    return {tid: leader(tid) for tid in parent}


def strace_calls(log_prefix):
    """(pid, syscall, args, [files], failed, return value) of every ledger call in strace
    -ff -yy -s0 logs, each log in order: files as strace -yy names them (normal); pid is
    the process's (its threads' logs folded where the logs have their clones)."""
    tgid = strace_tgids(log_prefix)
    for path in glob.glob(f"{log_prefix}.*"):
        tid = int(path.rsplit(".", 1)[1])
        pid = tgid.get(tid, tid)
        for line in open(path, errors="replace"):
            m = LINE.match(line.strip())
            if not m or m.group(1) not in FILE_CALLS:
                continue
            name, args, ret = m.groups()
            value = ret.split()[0]
            if value == "?" and "ERESTART" not in ret:
                continue  # its thread died in it: it never returned (as strace -c counts)
            if name in OPENS:
                fd = FD.match(ret)
                files = [fd.group(2)] if fd else []
            else:
                fds = [f for _, f in FD.findall(args)]
                if name in COPIES and len(fds) == 2:
                    files = [fds[i] for i in COPIES[name]]
                elif name == "mmap":
                    files = fds[-1:]
                else:
                    files = fds[:1]
            failed = value.startswith("-") or value == "?"  # ? ERESTART...: interrupted
            yield pid, name, args, [normal(f) for f in files], failed, value


def strace_files(log_prefix):
    """{(file, syscall): [calls, errors, bytes]} from strace -ff -yy -s0 logs."""
    out = collections.defaultdict(lambda: [0, 0, 0])
    for _pid, name, _args, files, failed, value in strace_calls(log_prefix):
        for f in files:
            row = out[(f, name)]
            row[0] += 1
            row[1] += failed
            if name in DATA and not failed:
                row[2] += int(value)
    return out


def iotrace_files(report, skip_comm="strace"):
    """{(file, syscall): [calls, errors, bytes]} of every process but strace itself, and
    {earlier name: latest name} of renamed files."""
    out, renamed = collections.defaultdict(lambda: [0, 0, 0]), {}
    for p in report["processes"]:
        if p["pid"] is None or p["comm"] == skip_comm:
            continue
        for f in p["files"]:
            for old in f.get("other_names", []):
                renamed[normal(old)] = normal(f["path"])
            for name, row in (f.get("io") or {}).items():
                r = out[(normal(f["path"] or ""), name.split(" ")[0])]
                r[0] += row["calls"]
                r[1] += row["errors"]
                r[2] += row["transferred_bytes"]
    return out, renamed


def iotrace_calls_by_name(report, skip_comm="strace"):
    """{(file, syscall): [calls, errors, bytes]} of every process but strace itself, each
    call under the name it was made under (`io_by_name` where a file was renamed), as
    strace -yy names it: no renaming needed to compare them."""
    out = collections.defaultdict(lambda: [0, 0, 0])
    for p in report["processes"]:
        if p["pid"] is None or p["comm"] == skip_comm:
            continue
        for f in p["files"]:
            by_name = f.get("io_by_name") or {normal(f["path"] or ""): f.get("io") or {}}
            for path, io in by_name.items():
                for name, row in io.items():
                    r = out[(normal(path), name.split(" ")[0])]
                    r[0] += row["calls"]
                    r[1] += row["errors"]
                    r[2] += row["transferred_bytes"]
    return out


def by_latest_name(counts, renamed):
    """strace's counts with a renamed file's paths under the file's latest name."""
    out = collections.defaultdict(lambda: [0, 0, 0])
    for (path, call), row in counts.items():
        r = out[(renamed.get(path, path), call)]
        for i in range(3):
            r[i] += row[i]
    return out


def traced_by_both(cmd, tmp_path, env=None, stdin=None, strace_opts=("-yy",), exact=False,
                   opts=()):
    """(iotrace's and strace's {(file, syscall): [calls, errors, bytes]}, the report).
    exact: each call under the name it was made under, on both sides (iotrace's
    io_by_name); else under each file's latest name."""
    n = len(list(tmp_path.glob("ledger.*.json")))
    out, log = tmp_path / f"ledger.{n}.json", tmp_path / f"strace.{n}"
    res = run([str(IOTRACE), "--json", *opts, "-o", str(out), "--", "strace", "-f", "-ff",
               "-s0", *strace_opts, "-e", "trace=" + ",".join(FILE_CALLS), "-o", str(log),
               *cmd], env=env, stdin=stdin, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    report = json.loads(out.read_text())
    if exact:
        return iotrace_calls_by_name(report), strace_files(log), report
    ours, renamed = iotrace_files(report)
    return ours, by_latest_name(strace_files(log), renamed), report


def pre_exec(tmp_path):
    """What iotrace counts in strace's child before its execve (strace's log starts after):
    iotrace's numbers of `true` minus strace's."""
    ours, theirs, _ = traced_by_both(["true"], tmp_path)
    return {k: [a - b for a, b in zip(v, theirs.get(k, [0, 0, 0]))] for k, v in ours.items()}


def differences(ours, theirs, pre):
    """(file, syscall): (iotrace, strace) wherever they differ, strace's pre-exec calls aside."""
    diff = {}
    for key in set(ours) | set(theirs):
        mine = [a - b for a, b in zip(ours.get(key, [0, 0, 0]), pre.get(key, [0, 0, 0]))]
        if mine != theirs.get(key, [0, 0, 0]):
            diff[key] = (mine, theirs.get(key, [0, 0, 0]))
    return diff
