"""iotrace top: rows against the paced workloads' own arithmetic, the header's disk counts
against /sys/block/<disk>/stat, the full screen driven in tmux, bad input."""
import json
import os
import shutil
import signal
import subprocess
import threading
import time

import pytest

from helpers import IOTRACE, IOTRACE_DATA_LIMIT, MIB, run, wl
from test_block import disk_of, disk_stat

KIB = 1024


def start_top(*args):
    return subprocess.Popen([IOTRACE, "top", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def paced(mode, size, ops, secs, path, *opts):
    return subprocess.Popen([wl("paced"), "-m", mode, "-b", str(size), "-r", str(ops),
                             "-t", str(secs), *opts, str(path)], stdout=subprocess.PIPE,
                            text=True)


def prepare(tmp_path):
    data = tmp_path / "r.dat"
    data.write_bytes(os.urandom(16 * MIB))
    subprocess.run(["sync"], check=True)
    return data


def mean(values):
    assert values, "no interval to average"
    return sum(values) / len(values)


def within(got, want, tol=0.10):
    return abs(got - want) <= tol * want


def rows_of(intervals, pid):
    return [next((p for p in o["processes"] if p.get("pid") == pid), None) for o in intervals]


def test_rows_match_the_paced_workloads(tmp_path):
    """Three paced workloads under top -j: each row's rates over the intervals the workload
    ran through whole, within 10% of its arithmetic (SIZE * OPS per second)."""
    data = prepare(tmp_path)
    top = start_top("-j", "-d", "1", "-n", "7")
    first = top.stdout.readline()  # top is running: the workloads are new processes to it
    assert first, top.stderr.read()
    reader = paced("read", "64k", 50, 8, data, "-d")  # O_DIRECT: every read reaches the disk
    writer = paced("write", "128k", 20, 8, tmp_path / "w.dat")
    uring = paced("uring", "16k", 200, 8, data)
    lines = [top.stdout.readline() for _ in range(6)]
    for p in (reader, writer, uring):
        assert p.wait(timeout=30) == 0
    top.wait(timeout=30)
    assert top.returncode == 0, top.stderr.read()
    # The first interval after the start holds the workloads' start: the next four are whole.
    intervals = [json.loads(line) for line in lines[1:5]]
    r = rows_of(intervals, reader.pid)
    w = rows_of(intervals, writer.pid)
    u = rows_of(intervals, uring.pid)
    assert all(r) and all(w) and all(u), [o["processes"][:3] for o in intervals]
    assert all(x["comm"] == "paced" for x in r + w + u)
    want_r, want_w = 64 * KIB * 50, 128 * KIB * 20
    got = {
        "reader read/s": (mean([x["read_bytes_per_sec"] for x in r]), want_r),
        "reader disk read/s": (mean([x["disk_read_bytes_per_sec"] for x in r]), want_r),
        "writer write/s": (mean([x["write_bytes_per_sec"] for x in w]), want_w),
        # the fdatasync's journal block (4 KiB a write, 3%) is the writer's too
        "writer disk write/s": (mean([x["disk_write_bytes_per_sec"] for x in w]), want_w),
        "uring ops/s": (mean([x["io_uring_ops_per_sec"] for x in u]), 200),
    }
    bad = {k: v for k, v in got.items() if not within(*v)}
    assert not bad, got
    # Cached reads through io_uring: every page found in the cache.
    assert all(x["hit_pct"] is not None and x["hit_pct"] > 99 for x in u)
    # The files pane: the written file's disk writes are the writer's data, exactly paced.
    files = [next(f for f in o["files"] if f["file"].endswith("/w.dat")) for o in intervals]
    assert within(mean([f["disk_write_bytes_per_sec"] for f in files]), want_w), files


def test_header_disk_counts_match_sysfs(tmp_path):
    """The header's disk counts of each interval against /sys/block/<disk>/stat read as each
    interval's line arrives (a paced writer keeps the disk busy)."""
    disk = disk_of(tmp_path)
    writer = paced("write", "128k", 20, 9, tmp_path / "w.dat")
    time.sleep(0.5)
    top = start_top("-j", "-d", "1", "-n", "7")
    stats, lines = [], []
    for _ in range(7):
        lines.append(top.stdout.readline())
        stats.append(disk_stat(disk))
    assert writer.wait(timeout=30) == 0
    assert top.wait(timeout=30) == 0, top.stderr.read()
    objs = [json.loads(line) for line in lines]
    disks = [next((d for d in o["machine"]["disks"] if d["disk"] == disk), None) for o in objs]
    ours = [sum(d[k] if d else 0 for d in disks[1:]) for k in
            ("disk_reads", "disk_read_bytes", "disk_writes", "disk_write_bytes")]
    theirs = [a - b for a, b in zip(stats[-1], stats[0])]
    theirs[1] *= 512
    theirs[3] *= 512
    assert theirs[3] >= 5 * 128 * KIB * 20 * 0.9  # the writer was seen by the disk
    for name, a, b in zip(("reads", "read bytes", "writes", "write bytes"), ours, theirs):
        # An interval's line is read a few ms after its end: what completes in between
        # falls on the other side; allow 10% and a few requests.
        slack = 0.10 * b + (8 if "bytes" not in name else 8 * 128 * KIB)
        assert abs(a - b) <= slack, (name, ours, theirs)


def test_cgroup_filter_and_groups(tmp_path):
    """-c: only the processes of that cgroup (moved there after their fork: a process that
    enters a -c cgroup by exec is counted from then); --group cgroup: one row for it."""
    data = prepare(tmp_path)
    root = next(line.split()[1] for line in open("/proc/self/mounts")
                if line.split()[2] == "cgroup2")
    cg = os.path.join(root, f"iotrace-top-{os.getpid()}")
    os.mkdir(cg)
    try:
        top = start_top("-j", "-d", "1", "-n", "4", "-c", cg, "--group", "cgroup")
        assert top.stdout.readline(), top.stderr.read()
        inside = subprocess.Popen(["sh", "-c", f"echo $$ > {cg}/cgroup.procs && exec "
                                   f"{wl('paced')} -m read -b 64k -r 50 -t 4 -d {data}"],
                                  stdout=subprocess.PIPE)
        outside = paced("read", "64k", 50, 4, data, "-d")
        lines = [top.stdout.readline() for _ in range(3)]
        assert inside.wait(timeout=30) == 0 and outside.wait(timeout=30) == 0
        assert top.wait(timeout=30) == 0, top.stderr.read()
    finally:
        os.rmdir(cg)
    objs = [json.loads(line) for line in lines]
    groups = [g for o in objs[1:] for g in o["groups"]]
    assert groups and all(g["group"] == cg[len(root):] for g in groups), groups
    rates = [g["read_bytes_per_sec"] for g in groups]
    assert within(mean(rates), 64 * KIB * 50), rates  # the inside reader only


def test_batch_blocks(tmp_path):
    top = start_top("-b", "-d", "0.5", "-n", "2", "-o", "dwrite")
    out, err = top.communicate(timeout=30)
    assert top.returncode == 0, err
    blocks = [b for b in out.split("iotrace top ") if b]
    assert len(blocks) == 2
    for b in blocks:
        lines = b.splitlines()
        assert lines[1].startswith("syscalls  read ") and lines[2].startswith("disks     read ")
        titles = [line for line in lines if "READ/s" in line]
        assert len(titles) == 2 and "*DWRITE/s" in titles[0] and "FILE" in titles[1]
        assert all(len(line) <= 100 for line in lines)


# ---- the full screen, in tmux ----

TMUX = shutil.which("tmux")


def tmux(*args):
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=False)


def capture(session):
    return tmux("capture-pane", "-p", "-t", session).stdout


def wait_for(session, text, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = capture(session)
        if text in screen:
            return screen
        time.sleep(0.2)
    pytest.fail(f"{text!r} never on the screen:\n{capture(session)}")


@pytest.fixture
def session():
    if not TMUX:
        pytest.skip("tmux not installed")
    name = f"iotrace-top-{os.getpid()}"
    tmux("kill-session", "-t", name)
    yield name
    tmux("kill-session", "-t", name)


def open_shell(session, width, height):
    # The shell, not tmux's server (maybe another session's), starts iotrace: capped here.
    res = tmux("new-session", "-d", "-s", session, "-x", str(width), "-y", str(height),
               "prlimit", f"--data={IOTRACE_DATA_LIMIT}:", "env", "-u", "COLUMNS", "-u",
               "LINES", "TERM=screen-256color", "PS1=$ ", "sh")
    assert res.returncode == 0, res.stderr


def test_screen_in_tmux(session, tmp_path):
    data = prepare(tmp_path)
    reader = paced("read", "64k", 50, 20, data, "-d")
    open_shell(session, 120, 40)
    tmux("send-keys", "-t", session, f"{IOTRACE} top -d 0.5 -o dread; echo EXIT=$?", "Enter")
    screen = wait_for(session, "*DREAD/s")
    screen = wait_for(session, str(reader.pid))
    row = next(line for line in screen.splitlines() if line.strip().startswith(str(reader.pid)))
    assert "paced" in row
    assert max(len(line) for line in screen.splitlines()) > 80  # the wider screen is used
    tmux("send-keys", "-t", session, ">")
    wait_for(session, "*DWRITE/s")
    tmux("send-keys", "-t", session, "f")
    wait_for(session, "FILE")
    wait_for(session, "r.dat")
    # '/' filters the rows by name: only the reader's (and no other process) stays.
    tmux("send-keys", "-t", session, "/", "paced", "Enter")
    screen = wait_for(session, "filter: paced")
    procs = [line for line in screen.split("PID")[1].split("FILE")[0].splitlines()
             if line.strip()[:1].isdigit()]
    assert procs and all("paced" in line for line in procs), screen
    # A narrower window: the lines follow it (the name column gives way).
    tmux("resize-window", "-t", session, "-x", "90", "-y", "30")
    deadline = time.monotonic() + 10
    while max(len(line) for line in capture(session).splitlines()) > 90:
        assert time.monotonic() < deadline, capture(session)
        time.sleep(0.2)
    assert "*DWRITE/s" in capture(session)
    tmux("send-keys", "-t", session, "q")
    wait_for(session, "EXIT=0")
    tmux("send-keys", "-t", session, "stty -a | tr ' ;' '\\n\\n' | grep -x -e echo -e icanon"
         " | tr '\\n' ' '; echo SANE", "Enter")
    wait_for(session, "icanon echo SANE")  # stty lists icanon first
    reader.kill()
    reader.wait()


def test_screen_too_small(session):
    open_shell(session, 60, 8)
    tmux("send-keys", "-t", session, f"{IOTRACE} top -d 0.5; echo EXIT=$?", "Enter")
    wait_for(session, "terminal too small (60x8)")
    tmux("send-keys", "-t", session, "q")
    wait_for(session, "EXIT=0")


# ---- bad input ----

@pytest.mark.parametrize("args,message", [
    (["-b", "-o", "nosuch"], "unknown sort key 'nosuch'"),
    (["-b", "-d", "0"], "invalid -d '0'"),
    (["-b", "-d", "-1"], "invalid -d '-1'"),
    (["-b", "-d", "x"], "invalid -d 'x'"),
    (["-b", "-n", "0"], "invalid -n '0'"),
    (["-b", "-c", "/nonexistent"], "cgroup '/nonexistent'"),
    (["-b", "--group", "disk"], "invalid --group 'disk'"),
    (["-b", "-j"], "-b and -j"),
    (["-b", "ls"], "unexpected argument 'ls'"),
    ([], "not a terminal; use -b (text) or -j (JSON)"),
])
def test_bad_input(args, message):
    res = run([IOTRACE, "top", *args])
    assert res.returncode == 1
    lines = res.stderr.decode().splitlines()
    assert message in lines[0], lines


def test_stopped_top_gives_back_every_slot(tmp_path):
    """top stopped while 40 processes holding its slots (--max-procs 41) wait, a storm of
    3,000 more (past the cap: the shared row) fills its notice buffer, and the 40 exit: their
    exit notices are lost. Continued, top reads the kernel's slot table, retires them and
    gives their slots back: the processes started after that get slots of their own, none
    goes to the shared row. (Before, the slots of processes whose exit notice was lost
    stayed taken for as long as top ran.)"""
    root = next(line.split()[1] for line in open("/proc/self/mounts")
                if line.split()[2] == "cgroup2")
    cg = os.path.join(root, f"iotrace-top36-{os.getpid()}")
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    os.mkdir(cg)
    top = start_top("-j", "-d", "0.5", "-c", cg, "--max-procs", "41")
    lines = []

    def reader():
        for line in top.stdout:
            lines.append(json.loads(line))
    try:
        assert top.stdout.readline(), top.stderr.read()
        t = threading.Thread(target=reader)
        t.start()
        top.send_signal(signal.SIGSTOP)
        done = tmp_path / "storm-done"
        holders = subprocess.Popen(
            ["sh", "-c", f"echo $$ > {cg}/cgroup.procs && for i in $(seq 40); do "
             f"(read x < {gate}) & done; {wl('storm')} -j 4 3000; touch {done}; wait"])
        # The 40 readers hold their slots until the storm is done, then exit.
        with open(gate, "w") as g:
            deadline = time.monotonic() + 120
            while not done.exists():
                assert time.monotonic() < deadline and holders.poll() is None
                time.sleep(0.05)
            g.write("x\n" * 40)
        assert holders.wait(timeout=60) == 0
        top.send_signal(signal.SIGCONT)
        time.sleep(1.5)
        seen = len(lines)
        res = run(["sh", "-c", f"echo $$ > {cg}/cgroup.procs && for i in $(seq 20); do "
                   "dd if=/dev/zero of=/dev/null bs=1 count=10 status=none; done"])
        assert res.returncode == 0
        time.sleep(1.5)
    finally:
        top.send_signal(signal.SIGINT)
        top.wait(timeout=30)
        for _ in range(50):
            try:
                os.rmdir(cg)
                break
            except OSError:
                time.sleep(0.1)
    assert sum(o["drops"]["ringbuf_events"] for o in lines[:seen]) > 0  # the case happened
    after = lines[seen:]
    assert after and sum(o["drops"]["overflow_processes"] for o in after) == 0, \
        [o["drops"]["overflow_processes"] for o in after]
