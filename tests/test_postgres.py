"""PostgreSQL, a program nobody here wrote, end to end: initdb, a server with its background
processes (checkpointer, WAL writer, autovacuum), pgbench's load and transactions over a Unix
socket, a checkpoint and a shutdown. Every process's syscalls equal strace -f's for its pid in
the same run; every (file, syscall) of the data directory's files (WAL segments, relations,
the control file) equals strace -ff -yy's; on a private loop disk, the block I/O of the run
(WAL fdatasyncs, the checkpoint's writes) equals the disk's own counters and is charged,
whole, to the processes that caused it."""
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest

from helpers import real_processes
from ledger import traced_by_both as traced_per_file
from perpid import differing, iotrace_per_process
from perpid import traced_by_both as traced_per_process
from test_disk_stat import COUNTS, charged_sum, files_match_processes, loop_disk, run_mode
from test_files import assert_same

# The server refuses to run as root: the script runs as nobody.
USER = "nobody"
# One scale of pgbench (100,000 accounts) and 100 transactions from each of two clients:
# under strace the whole run takes ~15 s on this project's 2-core hosts.
SCRIPT = """set -e
D="$1/data"; B="$2"
"$B/initdb" -D "$D" -A trust -U pg > "$1/initdb.out"
"$B/pg_ctl" -D "$D" -o "-k $1 -c listen_addresses= -c shared_buffers=16MB" \
    -l "$1/server.log" -w start > /dev/null
"$B/pgbench" -h "$1" -U pg -i -s 1 postgres 2> "$1/init.out"
"$B/pgbench" -h "$1" -U pg -t 100 -c 2 -j 2 postgres > "$1/bench.out" 2>&1
"$B/psql" -h "$1" -U pg -X -q -c checkpoint postgres
"$B/pg_ctl" -D "$D" -m fast -w stop > /dev/null
"""


def server_bin():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    if not found or not os.access(os.path.dirname(found[-1]) + "/pgbench", os.X_OK):
        pytest.fail("PostgreSQL is not installed (scripts/deps.sh installs postgresql-15)")
    return os.path.dirname(found[-1])


@contextmanager
def shared_dir():
    """A directory nobody may write, outside pytest's (root-only) tmp tree, removed after."""
    d = Path(tempfile.mkdtemp(prefix="iotrace-pg-"))
    try:
        d.chmod(0o755)
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def workload(base):
    """The command: the script as nobody, its files in base (base/data the cluster)."""
    pw = pwd.getpwnam(USER)
    os.chown(base, pw.pw_uid, pw.pw_gid)
    script = base / "pg.sh"
    script.write_text(SCRIPT)
    return ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups",
            "sh", str(script), str(base), server_bin()]


def check_transactions(base):
    """pgbench's own arithmetic: every transaction of both clients done, none failed."""
    text = (base / "bench.out").read_text()
    assert "number of transactions actually processed: 200/200" in text, text
    assert "number of failed transactions: 0" in text, text


def test_every_process_equals_strace(tmp_path):
    with shared_dir() as base:
        report, ref = traced_per_process(workload(base), tmp_path)
        check_transactions(base)
    assert report["exit"]["code"] == 0
    assert report["drops"]["overflow_processes"] == 0
    procs = {p["pid"]: p for p in real_processes(report)}
    ours = iotrace_per_process(report)
    (top,) = [pid for pid, p in procs.items() if p["comm"] != "strace" and
              procs.get(p["ppid"], {}).get("comm") == "strace"]
    checked = set()
    for pid, p in procs.items():
        if p["comm"] == "strace" or pid == top:  # strace itself; its child's pre-exec calls
            continue
        diff = differing(ours[pid], ref.get(pid, {}))
        assert not diff, (p["comm"], p["args"], pid, diff)
        checked.add(p["comm"])
    # The server's own processes were among them, each checked.
    assert {"initdb", "postgres", "pgbench", "psql", "pg_ctl"} <= checked, checked
    fsyncs = sum(p["syscalls"].get(n, {}).get("calls", 0) for p in procs.values()
                 for n in ("fsync", "fdatasync"))
    assert fsyncs >= 100, fsyncs  # a commit flushes the WAL


def test_every_file_equals_strace(tmp_path):
    pre = {}  # setpriv runs before the command's own calls, under strace as well
    with shared_dir() as base:
        ours, theirs, report = traced_per_file(workload(base), tmp_path)
        check_transactions(base)
        data = f"{base}/data/"
    assert report["drops"]["files"] == 0 and report["drops"]["file_rows"] == 0
    mine = {k: v for k, v in ours.items() if k[0].startswith(data)}
    strace = {k: v for k, v in theirs.items() if k[0].startswith(data)}
    assert_same(mine, strace, pre)
    wal = {k: v for k, v in strace.items() if "/pg_wal/" in k[0]}
    assert any(s == "fdatasync" for _, s in wal) or any(s == "fsync" for _, s in wal), wal
    assert sum(v[2] for (_, s), v in wal.items() if s in ("write", "pwrite64")) >= 1 << 20


def test_block_io_equals_the_disk(tmp_path):
    """The cluster on a loop disk of its own: iotrace's counts of that disk equal the disk's
    stat delta, and the processes' rows (and each one's file rows) add up to it."""
    with shared_dir() as base, loop_disk(base, "mq-deadline", "ext4") as (dev, disk, mnt):
        mnt.chmod(0o755)
        cmd = workload(mnt)
        ours, theirs, report = run_mode(cmd, disk, tmp_path)
        check_transactions(mnt)
        assert {k: ours.get(k, 0) for k in COUNTS} == {k: theirs[k] for k in COUNTS}, \
            (ours, theirs, report["drops"])
        files_match_processes(report, disk)
        sums = charged_sum(report, disk)
        for op in ("read", "write", "flush"):
            want = (theirs[f"{op}_ios"], theirs[f"{op}_sectors"] * 512 if op != "flush" else 0)
            assert sums.get(op, (0, 0)) == want, (op, sums, theirs)
        assert theirs["flush_ios"] >= 100 and theirs["write_ios"] >= 200, theirs
        writers = {p["comm"] for p in report["processes"]
                   if p["block"]["disks"].get(disk, {}).get("write")}
        assert "postgres" in writers, writers
