"""Run mode: `iotrace -- CMD` counts every syscall as `strace -f -c` does, call for call.

The reference for counts is strace on a separate run of the same deterministic command;
byte counts and histograms are checked against each workload's own arithmetic.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from helpers import (IOTRACE, assert_no_new_bpf_objects, bpf_object_ids, counts_of, iotrace_json,
                     mkinput, real_processes, run, run_stdin, strace_counts, wl)
from ledger import traced_by_both as ledger_traced
from perpid import differing, iotrace_per_process
from perpid import traced_by_both as perpid_traced


@pytest.fixture
def small_input(tmp_path):
    return mkinput(tmp_path / "in.bin", 20000, "-r")


def assert_same_counts(iot, ref, restarted=(), signal_timed=False):
    """Every syscall strace lists has iotrace's calls and errors, and nothing else is there.

    With signal_timed, rt_sigreturn and rt_sigsuspend are left out: how often a shell's
    SIGCHLD handler runs depends on when its children exit, which varies from run to run
    under any tracer. For the syscalls in restarted only successful calls are compared: strace's ptrace stops
    interrupt a parent blocked in them (wait4 returns ERESTARTSYS and is retried), adding
    failed calls that the untraced program never makes.
    """
    for name in restarted:
        for table in (iot, ref):
            if name in table:
                calls, errors = table[name]
                table[name] = (calls - errors, 0)
    for name in ("rt_sigreturn", "rt_sigsuspend") if signal_timed else ():
        iot.pop(name, None)
        ref.pop(name, None)
    diff = {name: (iot.get(name), ref.get(name))
            for name in set(iot) | set(ref) if iot.get(name) != ref.get(name)}
    assert not diff, f"(iotrace, strace) differ: {diff}"


def compare_with_strace(args, tmp_path, stdin_path=None, options=(), fresh=(), restarted=(),
                        signal_timed=False):
    """Same command under iotrace and strace; paths in fresh are deleted before each run."""
    def reset():
        for path in fresh:
            path.unlink(missing_ok=True)

    reset()
    report, res = iotrace_json(args, tmp_path, stdin_path, options)
    reset()
    ref, sres = strace_counts(args, tmp_path, stdin_path)
    assert res.returncode == sres.returncode, (res.stderr, sres.stderr)
    assert_same_counts(counts_of(report["totals"]["syscalls"]), ref, restarted, signal_timed)
    return report


# Each entry: (id, argv builder, stdin builder). Paths come from tmp_path at run time.
WORKLOAD_CASES = {
    "tr2u": lambda d: ([wl("tr2u"), "abc", "xyz"], d / "in.bin"),
    "tr2b": lambda d: ([wl("tr2b"), "abc", "xyz"], d / "in.bin"),
    "copy-rw-1": lambda d: ([wl("copy"), "-m", "rw", "-b", "1", d / "in.bin", d / "o"], None),
    "copy-rw-8k": lambda d: ([wl("copy"), "-m", "rw", "-b", "8k", d / "in.bin", d / "o"], None),
    "copy-stdio-1": lambda d: ([wl("copy"), "-m", "stdio", "-b", "1", d / "in.bin", d / "o"],
                               None),
    "copy-unbuf-512": lambda d: ([wl("copy"), "-m", "stdio-unbuf", "-b", "512", d / "in.bin",
                                  d / "o"], None),
    "timewrite": lambda d: ([wl("timewrite"), d / "o"], d / "in.bin"),
    "timewrite-sync": lambda d: ([wl("timewrite"), d / "o", "sync"], d / "in.bin"),
    "read-file": lambda d: ([wl("read-file"), "-n", "8k", d / "in.bin", d / "in.bin"], None),
    "read-file-direct": lambda d: ([wl("read-file"), "-i", "-b", "4k", d / "in.bin"], None),
    "readall-grow": lambda d: ([wl("readall"), "-m", "grow", d / "in.bin"], None),
    "readall-stat": lambda d: ([wl("readall"), "-m", "stat", d / "in.bin"], None),
    "pipeline": lambda d: (["/bin/sh", "-c", f"cat {d}/in.bin | wc -c"], None),
    "fork-exec": lambda d: (["/bin/sh", "-c", f"{wl('tr2b')} a b < {d}/in.bin > /dev/null; "
                             "ls / > /dev/null; exit 3"], None),
}


@pytest.mark.parametrize("case", sorted(WORKLOAD_CASES))
def test_counts_equal_strace(case, tmp_path, small_input):
    args, stdin = WORKLOAD_CASES[case](tmp_path)
    args = [str(a) for a in args]
    report = compare_with_strace(args, tmp_path, stdin, fresh=[tmp_path / "o"],
                                 restarted=["wait4"], signal_timed=args[0] == "/bin/sh")
    assert report["totals"]["syscalls"]["execve"]["calls"] >= 1


@pytest.mark.parametrize("case", ["tr2u", "fork-exec"])
def test_compat_build_counts_equal_strace(case, tmp_path, small_input):
    """The compat build (5.10-5.16's: bpf/compat.bpf.h) asked for here (IOTRACE_BUILD) loads
    whole and counts as strace -f -c: this kernel's verifier walks its unrolled loops too,
    and refuses a program past its million instructions as 5.10's does, without a boot."""
    args, stdin = WORKLOAD_CASES[case](tmp_path)
    env = {**os.environ, "IOTRACE_BUILD": "compat"}
    report, res = iotrace_json([str(a) for a in args], tmp_path, stdin, env=env)
    assert report["kernel"]["build"]["name"] == "compat", report["kernel"]["build"]
    ref, sres = strace_counts([str(a) for a in args], tmp_path, stdin)
    assert res.returncode == sres.returncode, (res.stderr, sres.stderr)
    assert_same_counts(counts_of(report["totals"]["syscalls"]), ref, restarted=["wait4"],
                       signal_timed=case == "fork-exec")


def test_counts_equal_strace_without_timing(tmp_path, small_input):
    report = compare_with_strace([wl("tr2u"), "a", "b"], tmp_path, small_input,
                                 options=["--no-time"])
    assert report["timing"]["mode"] == "off"
    assert report["totals"]["syscalls"]["read"]["total_ns"] is None
    assert report["totals"]["io"]["read"]["latency_ns"] is None


# Every call of the read/write family that states its size otherwise than in its third
# argument (an iovec array, sendfile's fourth, copy_file_range's and splice's fifth), each
# asking for a size no other argument equals.
REQUESTS = r"""
import os, sys
d = sys.argv[1]
fd = os.open(f"{d}/v", os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644)
os.writev(fd, [b"a" * 100, b"b" * 23, b"c" * 4000])
os.pwritev(fd, [b"x" * 10, b"y" * 5], 0)
os.lseek(fd, 0, 0)
os.readv(fd, [bytearray(1000)] * 3)
os.preadv(fd, [bytearray(7), bytearray(9)], 0)
out = os.open(f"{d}/w", os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644)
os.sendfile(out, fd, 0, 1234)
os.copy_file_range(fd, out, 555, 0, 0)
r, w = os.pipe()
os.splice(fd, w, 321, offset_src=0)
"""


def test_requested_bytes_of_every_kind(tmp_path):
    """requested_bytes per call kind equal what the workload asked for: the iovecs' sums,
    sendfile's, copy_file_range's and splice's counts (writev and sendfile once took
    another kind's way of reading them: the iovec count, an offset's address)."""
    (tmp_path / "req.py").write_text(REQUESTS)
    report, res = iotrace_json([sys.executable, str(tmp_path / "req.py"), str(tmp_path)],
                               tmp_path)
    assert res.returncode == 0, res.stderr
    io = report["totals"]["io"]
    asked = {"writev": 4123, "pwritev2": 15, "readv": 3000, "preadv2": 16, "sendfile": 1234,
             "copy_file_range": 555, "splice": 321}
    ours = {k: io[k]["requested_bytes"] for k in asked if k in io}
    # Python calls pwritev2/preadv2 where the C library has them, else pwritev/preadv
    for v2, v1 in (("pwritev2", "pwritev"), ("preadv2", "preadv")):
        if v2 not in ours and v1 in io:
            ours[v2] = io[v1]["requested_bytes"]
    assert ours == asked, io


def test_tr2u_io_arithmetic(tmp_path, small_input):
    """N bytes through tr2u: N one-byte writes and N+1 stdin reads (the last returns 0)."""
    n = small_input.stat().st_size
    report, res = iotrace_json([wl("tr2u"), "a", "b"], tmp_path, small_input,
                               stdout=subprocess.DEVNULL)
    write = report["totals"]["io"]["write"]
    assert (write["calls"], write["transferred_bytes"], write["requested_bytes"]) == (n, n, n)
    assert write["size_bytes"]["buckets"] == [{"lo": 1, "hi": 1, "count": n}]
    assert write["size_bytes"]["p50"] == write["size_bytes"]["p99"] == 1
    # The latency histogram holds the timed calls, each weighted by the calls it stands for
    # (a sample: docs/run-mode.md, "Timing"), so its count estimates the calls: within the
    # binomial error of the sample's split between tr2u's alternating reads and writes.
    lat = write["latency_ns"]
    timed = report["totals"]["syscalls"]["write"]["timed_calls"]
    assert sum(b["count"] for b in lat["buckets"]) == lat["count"] and timed <= n
    assert abs(lat["count"] - n) <= 0.25 * n
    assert lat["min"] <= lat["p50"] <= lat["p99"] <= lat["max"]
    assert report["totals"]["syscalls"]["write"]["total_ns"] >= lat["count"] * lat["min"]
    # Reads: the loader's few reads of libc plus N+1 one-byte reads from stdin.
    read = report["totals"]["io"]["read"]
    one_byte = next(b["count"] for b in read["size_bytes"]["buckets"] if b["lo"] == 1)
    assert one_byte == n


def test_copy_io_arithmetic(tmp_path):
    """copy -b 4096 of S bytes: S/4096 writes of 4096 to the file, plus its one stdout line."""
    size = 256 * 4096 + 100
    src = mkinput(tmp_path / "src", size, "-r")
    report, res = iotrace_json([wl("copy"), "-m", "rw", "-b", "4096", src, tmp_path / "dst"],
                               tmp_path)
    assert res.returncode == 0
    line = len(res.stdout)
    write = report["totals"]["io"]["write"]
    assert write["calls"] == 258 and write["errors"] == 0
    assert write["transferred_bytes"] == size + line
    buckets = {(b["lo"], b["hi"]): b["count"] for b in write["size_bytes"]["buckets"]}
    assert buckets[(4096, 8191)] == 256
    assert write["size_bytes"]["max"] == 4096
    assert write["size_bytes"]["p50"] == 4096


def test_output_and_input_pass_through(tmp_path, small_input):
    plain = run_stdin([wl("tr2u"), "abc", "xyz"], small_input)
    traced = run_stdin([IOTRACE, "--", wl("tr2u"), "abc", "xyz"], small_input)
    assert traced.returncode == 0
    assert traced.stdout == plain.stdout and len(plain.stdout) == small_input.stat().st_size
    assert traced.stderr.startswith(b"iotrace: 1 process")


def test_text_report_matches_json(tmp_path, small_input):
    report, _ = iotrace_json([wl("tr2b"), "a", "b"], tmp_path, small_input)
    text = run_stdin([IOTRACE, "--", wl("tr2b"), "a", "b"], small_input).stderr.decode()
    rows = {}
    for line in text.splitlines():
        m = re.match(r"^ *[\d.]+ +[\d.]+ +\d+ +(\d+) +(\d+)? *([a-z_0-9]+)$", line)
        if m and m.group(3) != "total":
            rows[m.group(3)] = (int(m.group(1)), int(m.group(2) or 0))
    assert rows == counts_of(report["totals"]["syscalls"])
    assert "read: bytes transferred per successful call" in text
    no_hist = run_stdin([IOTRACE, "-H", "--", wl("tr2b"), "a", "b"], small_input).stderr
    assert b"distribution" not in no_hist and b"read/write" in no_hist


def test_process_tree(tmp_path):
    script = f"{wl('tr2b')} a b </dev/null; {wl('tr2u')} a b </dev/null; true"
    report, res = iotrace_json(["/bin/sh", "-c", script], tmp_path)
    procs = real_processes(report)
    assert [p["comm"] for p in procs] == ["sh", "tr2b", "tr2u"]
    sh = procs[0]
    assert sh["ppid"] == os.getpid() or sh["ppid"] != 0
    assert all(p["ppid"] == sh["pid"] for p in procs[1:])
    assert procs[1]["args"] == f"{wl('tr2b')} a b"
    assert all(p["exit"] == {"code": 0, "signal": None} for p in procs)
    # Totals are the sum of the processes.
    for name, row in report["totals"]["syscalls"].items():
        assert row["calls"] == sum(p["syscalls"].get(name, {"calls": 0})["calls"]
                                   for p in procs)


def test_exit_code_is_the_commands(tmp_path):
    report, res = iotrace_json(["/bin/sh", "-c", "exit 7"], tmp_path)
    assert res.returncode == 7
    assert report["exit"] == {"code": 7, "signal": None}


def test_signal_death(tmp_path):
    report, res = iotrace_json(["/bin/sh", "-c", "kill -SEGV $$"], tmp_path)
    assert res.returncode == 128 + signal.SIGSEGV
    assert report["exit"]["signal"] == signal.SIGSEGV and report["exit"]["code"] is None
    assert b"killed by SIGSEGV" in res.stderr


def wait_for_file(path, proc, timeout=30):
    """Until the traced command made path (iotrace's start-up time varies with the load)."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "the command never started"
        time.sleep(0.02)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_to_iotrace_reaches_the_command(tmp_path, sig):
    out, ready = tmp_path / "r.json", tmp_path / "ready"
    p = subprocess.Popen([IOTRACE, "--json", "-o", out, "--", "/bin/sh", "-c",
                          f"touch {ready}; exec sleep 30"])
    wait_for_file(ready, p)
    p.send_signal(sig)
    assert p.wait(timeout=20) == 128 + sig
    report = json.loads(out.read_text())
    assert report["exit"]["signal"] == sig and report["partial"] is False


@pytest.mark.parametrize("args,status,message", [
    (["/nonexistent/cmd"], 127, "command not found"),
    (["no-such-command-iotrace"], 127, "command not found"),
    (["/etc/passwd"], 126, "permission denied or not an executable"),
    (["/tmp"], 126, "permission denied or not an executable"),
])
def test_command_cannot_run(args, status, message):
    before = bpf_object_ids()
    res = run([IOTRACE, "--", *args])
    assert res.returncode == status
    lines = res.stderr.decode().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert_no_new_bpf_objects(before)


@pytest.mark.parametrize("opts,message", [
    ([], "no command given"),
    (["-p", "abc"], "invalid pid"),
    (["-p", "0"], "invalid pid"),
    (["--max-procs", "0", "--", "true"], "invalid --max-procs"),
    (["--max-procs", "99999", "--", "true"], "invalid --max-procs"),
    (["-p", "1", "--", "true"], "not both"),
    (["--bogus-option"], "unrecognized option"),
    (["-o", "/nonexistent-dir/x", "--", "true"], "cannot write"),
])
def test_bad_options(opts, message):
    res = run([IOTRACE, *opts])
    assert res.returncode == 1
    first = res.stderr.decode().splitlines()[0]
    assert first.startswith("iotrace: ") and message in first, res.stderr


def test_missing_pid():
    res = run([IOTRACE, "-p", "4000000"])
    assert res.returncode == 1
    assert res.stderr.decode().startswith("iotrace: no process 4000000")


def test_unprivileged_user_gets_one_clear_line():
    before = bpf_object_ids()
    res = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
               "--inh-caps=-all", "--bounding-set=-all", str(IOTRACE), "--", "true"])
    assert res.returncode == 1
    lines = res.stderr.decode().splitlines()
    assert lines == ["iotrace: need root (CAP_BPF and CAP_PERFMON) to load the BPF programs"]
    assert_no_new_bpf_objects(before)


def test_no_bpf_objects_left_after_a_run(tmp_path):
    before = bpf_object_ids()
    iotrace_json(["true"], tmp_path)
    assert_no_new_bpf_objects(before)


def test_untraced_processes_are_not_counted(tmp_path):
    """A busy unrelated process and a second iotrace run alongside change nothing."""
    noise = subprocess.Popen(["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=3000000"],
                             stderr=subprocess.DEVNULL)
    other = subprocess.Popen([IOTRACE, "--", "dd", "if=/dev/zero", "of=/dev/null", "bs=1",
                              "count=200000"], stderr=subprocess.DEVNULL)
    try:
        report = compare_with_strace([wl("readall"), "-m", "stat", str(IOTRACE)], tmp_path)
    finally:
        noise.kill()
        other.wait(timeout=60)
        noise.wait()
    assert [p["comm"] for p in real_processes(report)] == ["readall"]


def test_more_processes_than_slots_stay_exact(tmp_path, small_input):
    """With one slot, concurrent children share the overflow counters; totals stay exact."""
    args = [wl("read-file"), "-D", "-n", "8k"] + [str(small_input)] * 3
    # clone too: a child that exits while the parent forks the next one leaves SIGCHLD
    # pending, and fork fails with ERESTARTNOINTR and is retried, in some runs and not others.
    report = compare_with_strace(args, tmp_path, options=["--max-procs", "1"],
                                 restarted=["wait4", "clone"])
    assert report["drops"]["overflow_processes"] == 3
    assert report["overflow"]["syscalls"]["read"]["calls"] >= 3
    assert [p["in_overflow"] for p in real_processes(report)] == [False, True, True, True]


def test_process_storm_matches_strace(tmp_path):
    script = "for i in $(seq 300); do /bin/true; done"
    report = compare_with_strace(["/bin/sh", "-c", script], tmp_path, restarted=["wait4"],
                                 signal_timed=True)
    # sh, the $(seq ...) subshell that execs seq, and 300 × true.
    assert report["totals"]["syscalls"]["execve"]["calls"] == 302
    assert len(real_processes(report)) == 302
    assert report["drops"]["ringbuf_events"] == 0


def test_events_that_do_not_wake_the_loader_are_not_lost(tmp_path):
    """Fork and exec events do not wake iotrace (bpf/proc.bpf.c, submit_event): they wait in
    the ring buffer for its 50 ms timer, an exit, or a quarter-full buffer. 700 long-lived
    children make 1,400 of them (~300 bytes each, more than the 256 KiB buffer holds) with
    no exit for 1.5 s: none may be lost."""
    script = "for i in $(seq 700); do sleep 1.5 & done; wait"
    report, res = iotrace_json(["/bin/sh", "-c", script], tmp_path, options=["--no-time"])
    assert res.returncode == 0, res.stderr
    assert report["drops"]["ringbuf_events"] == 0
    procs = real_processes(report)
    # sh, the $(seq ...) subshell that execs seq, and 700 × sleep.
    assert len(procs) == 702
    assert sum(p["comm"] == "sleep" for p in procs) == 700
    assert report["totals"]["syscalls"]["execve"]["calls"] == 702


PID_WORKER = """
import os, sys
sys.stdin.readline()
for _ in range(1000):
    os.getppid()
"""


def test_attach_to_running_process(tmp_path):
    worker = subprocess.Popen([sys.executable, "-c", PID_WORKER], stdin=subprocess.PIPE)
    out = tmp_path / "p.json"
    tracer = subprocess.Popen([IOTRACE, "--json", "-o", out, "-p", str(worker.pid)],
                              stderr=subprocess.PIPE)
    # iotrace says when it is attached; only then may the worker start.
    line = tracer.stderr.readline().decode()
    assert line.startswith(f"iotrace: attached to pid {worker.pid}"), line
    worker.stdin.write(b"go\n")
    worker.stdin.flush()
    worker.wait(timeout=30)
    assert tracer.wait(timeout=30) == 0
    report = json.loads(out.read_text())
    assert real_processes(report)[0]["pid"] == worker.pid
    assert report["totals"]["syscalls"]["getppid"]["calls"] == 1000


@pytest.mark.parametrize("options", [[], ["--no-time"]])
def test_signal_handler_returns_are_counted(tmp_path, options):
    """rt_sigreturn reaches sys_exit with orig_ax = -1 on x86; it must still count."""
    script = "trap : USR1; kill -USR1 $$; kill -USR1 $$; kill -USR1 $$"
    report = compare_with_strace(["/bin/sh", "-c", script], tmp_path, options=options)
    assert report["totals"]["syscalls"]["rt_sigreturn"]["calls"] == 3


@pytest.mark.parametrize("sig,trap", [(signal.SIGINT, "INT"), (signal.SIGTERM, "TERM")])
def test_second_interrupt_gives_a_partial_report(tmp_path, sig, trap):
    """The command ignores the signal: the first one is forwarded, the second ends iotrace."""
    out, ready = tmp_path / "partial.json", tmp_path / "ready"
    p = subprocess.Popen([IOTRACE, "--json", "-o", out, "--", "/bin/sh", "-c",
                          f"trap '' {trap}; touch {ready}; sleep 3"])
    # Signalled once the shell ignores it (start-up takes longer on a loaded machine).
    wait_for_file(ready, p)
    p.send_signal(sig)
    time.sleep(0.3)
    assert p.poll() is None  # still waiting for the command
    p.send_signal(sig)
    assert p.wait(timeout=20) == 128 + sig
    report = json.loads(out.read_text())  # valid JSON despite the interruption
    assert report["partial"] is True and report["exit"]["code"] is None
    assert report["totals"]["syscalls"]["execve"]["calls"] >= 1


def test_sigkill_of_iotrace_leaves_nothing_behind(tmp_path):
    before = bpf_object_ids()
    marker, started = tmp_path / "done", tmp_path / "started"
    p = subprocess.Popen([IOTRACE, "-o", "/dev/null", "--", "/bin/sh", "-c",
                          f"touch {started}; sleep 1; touch {marker}"])
    wait_for_file(started, p)
    p.kill()
    p.wait(timeout=10)
    assert_no_new_bpf_objects(before)
    # The command was neither stopped nor killed with it: it finishes on its own.
    deadline = time.monotonic() + 10
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marker.exists()


def test_run_as_another_user(tmp_path):
    """-u drops to the user's ids before the command's execve, like strace -u, and the
    set-up calls that does are not counted."""
    res = run([IOTRACE, "-u", "nobody", "-o", tmp_path / "r.txt", "--", "id", "-u"])
    assert res.returncode == 0 and res.stdout.strip() == b"65534"
    report, _ = iotrace_json(["id", "-u"], tmp_path, options=["-u", "nobody"])
    ref, _ = strace_counts(["-u", "nobody", "id", "-u"], tmp_path)
    assert_same_counts(counts_of(report["totals"]["syscalls"]), ref)
    bad = run([IOTRACE, "-u", "no-such-user-x", "--", "true"])
    assert bad.returncode == 1
    assert bad.stderr.decode().splitlines() == ["iotrace: unknown user 'no-such-user-x'"]


def test_many_concurrent_processes_keep_their_own_counts(tmp_path):
    """~100 processes alive at once (50 subshells, each with its sleep), each its own slot
    (a bitmap word holds 64): dd number i reads /dev/zero exactly i times and writes
    /dev/null i times, in its own counters."""
    script = ("for i in $(seq 50); do (sleep 0.5; dd if=/dev/zero of=/dev/null bs=1 count=$i"
              " status=none) & done; wait")
    report, res = iotrace_json(["/bin/sh", "-c", script], tmp_path)
    assert res.returncode == 0, res.stderr
    assert report["drops"]["overflow_processes"] == 0
    dds = [p for p in real_processes(report) if p["comm"] == "dd"]
    assert len(dds) == 50
    for p in dds:
        i = int(next(a for a in p["args"].split() if a.startswith("count="))[6:])
        files = {f["path"]: f["io"] for f in p["files"]}
        assert files["/dev/zero"]["read"]["calls"] == i
        assert files["/dev/null"]["write"]["calls"] == i
        assert p["syscalls"]["write"]["calls"] == i


# Threads left blocked in calls when their process ends: each thread is killed in its call
# (exit_group, an execve by another thread, a SIGKILL from outside) and never returns.
KILLED_IN_CALLS = r"""
import os, signal, sys, threading, time
r, w = os.pipe()
def blocked():
    ts = [threading.Thread(target=f, daemon=True) for f in
          (lambda: time.sleep(60), lambda: os.read(r, 1), lambda: threading.Event().wait())]
    for t in ts:
        t.start()
    time.sleep(0.3)
mode = sys.argv[1]
if mode == "exit":
    blocked(); os._exit(0)
if mode == "exec":  # in a child, compared whole (strace's own child is not)
    pid = os.fork()
    if pid == 0:
        blocked()
        # The exec waits for this thread to be blocked in its sleep: a call that returns
        # as the exec kills its thread (Thread.start's wait) is counted by sys_exit, and
        # strace, stopping the thread at that exit, may not see it return.
        threading.Thread(target=lambda: (time.sleep(0.3),
                                          os.execv("/bin/true", ["true"]))).start()
        time.sleep(60)
    os.waitpid(pid, 0)
if mode == "kill":  # a child blocked in read, killed by its parent
    pid = os.fork()
    if pid == 0:
        blocked(); os.read(r, 1)
    time.sleep(0.6); os.kill(pid, signal.SIGKILL); os.waitpid(pid, 0)
"""


@pytest.mark.parametrize("build", ["default", "compat"])
def test_calls_a_thread_is_killed_in_are_not_counted(tmp_path, build):
    """A call its thread dies in never returns to user space: strace -f does not count it,
    nor does iotrace, per process and per file, in the same run (sys_exit sees it pass with
    SIGKILL pending). Each way a thread dies in a call: exit_group, another thread's
    execve, a SIGKILL from another process."""
    env = {**os.environ, "IOTRACE_BUILD": "compat"} if build == "compat" else None
    script = tmp_path / "killed.py"
    script.write_text(KILLED_IN_CALLS)
    for mode in ("exit", "exec", "kill"):
        cmd = [sys.executable, str(script), mode]
        report, ref = perpid_traced(cmd, tmp_path, env=env)
        procs = {p["pid"]: p for p in real_processes(report)}
        ours = iotrace_per_process(report)
        (top,) = [pid for pid, p in procs.items() if p["comm"] != "strace" and
                  procs.get(p["ppid"], {}).get("comm") == "strace"]
        for pid, p in procs.items():
            if p["comm"] != "strace" and pid != top:
                assert not differing(ours[pid], ref.get(pid, {})), (mode, p["comm"], pid,
                                                                    differing(ours[pid], ref[pid]))
        mine, theirs, _ = ledger_traced(cmd, tmp_path, env=env)
        pipes = {k: v for k, v in theirs.items() if k[0].startswith("pipe:")}
        assert pipes and all(mine.get(k) == v for k, v in pipes.items()), (mode, pipes, mine)
        # The execve a thread made is counted as execve, and timed from its own start
        # (the kernel gave the thread its dead leader's tid in between).
        if mode == "exec":
            (true,) = [p for p in procs.values() if p["comm"] == "true"]
            execve = true["syscalls"]["execve"]
            assert execve["calls"] == execve["timed_calls"] == 1, (true["pid"], execve)
        # Python blocked three threads (and, killed, the child's main one): none counted.
        py = [p for p in procs.values() if p["comm"] == "python3"]
        assert all(p["syscalls"].get("clock_nanosleep", {}).get("calls", 0) <= 1 for p in py)
