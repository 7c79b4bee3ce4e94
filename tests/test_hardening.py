"""Hardening (issue 8): process storms, bad input on every option, the fuzzers, and the
long soak runs (`make soak`, marker "soak", not in the default run).
"""
import json
import os
import re
import resource
import signal
import subprocess
import time
from pathlib import Path

import pytest

from helpers import (IOTRACE, ROOT, assert_no_new_bpf_objects, bpf_object_ids, parse_strace_c,
                     real_processes, run, wl)

SOAK_SECONDS = int(os.environ.get("SOAK_SECONDS", "600"))
soak = pytest.mark.soak


def storm(tmp_path, n):
    """n short-lived processes from one shell: iotrace against strace -f -c."""
    cmd = ["sh", "-c", f"for i in $(seq {n}); do /bin/true; done"]
    out = tmp_path / "storm.json"
    res = run([IOTRACE, "--json", "-o", out, "--", *cmd], timeout=1200)
    assert res.returncode == 0, res.stderr
    report = json.loads(out.read_text())
    st = tmp_path / "storm.strace"
    sres = run(["strace", "-f", "-c", "-o", st, *cmd], timeout=1200)
    assert sres.returncode == 0
    table = parse_strace_c(st.read_text())
    totals = report["totals"]["syscalls"]
    for name in ("execve", "vfork", "clone", "rt_sigprocmask", "close", "openat", "mmap"):
        want = table.get(name, (0, 0))[0]
        got = totals.get(name, {"calls": 0})["calls"]
        assert got == want, (name, got, want)
    procs = real_processes(report)
    # The shell, seq, and n /bin/true: each exited normally and was reported.
    assert len(procs) == n + 2
    assert all(p["exit"]["code"] == 0 for p in procs), [p["exit"] for p in procs if p["exit"]["code"]]
    # Nothing lost silently: slots were recycled; what did not fit is counted.
    assert report["drops"]["overflow_processes"] == 0
    assert report["drops"]["ringbuf_events"] == 0
    assert report["drops"]["untimed_calls"] == 0
    # Each exited process's page-cache entries are read and recycled at its exit, so the
    # 4096-entry file table never fills: every /bin/true reports its own binary, counted.
    assert report["drops"]["files"] == 0 and report["drops"]["page_chunks"] == 0
    trues = [p for p in procs if p["comm"] == "true"]
    assert len(trues) == n
    for p in trues:
        (binary,) = [f for f in p["files"] if f["path"] and f["path"].endswith("/true")]
        assert binary["faults"] + binary["requested_pages"] > 0
    return report


def test_storm_of_2000_processes(tmp_path):
    storm(tmp_path, 2000)


@soak
def test_storm_of_10000_processes(tmp_path):
    # 10,000 processes touch ~40,000 (process, file) pairs, ten times the kernel's table.
    storm(tmp_path, 10000)


# ---- bad input: one line on stderr (argp may add its "Try --help" hint), exit 1 ----

def assert_one_line_error(res, words):
    assert res.returncode == 1, (res.returncode, res.stderr)
    lines = res.stderr.decode(errors="replace").splitlines()
    assert lines and lines[0].startswith("iotrace"), lines
    assert words in lines[0], lines
    # After the one line, only argp's usage hint ("Try `iotrace --help' ...", maybe wrapped).
    assert len(lines) == 1 or " ".join(lines[1:]).startswith("Try "), lines


RUN_BAD = [
    (["-o", "/nonexistent-dir/x", "--", "true"], "cannot write"),
    (["-o", "/proc/version", "--", "true"], "/proc/version"),
    (["-p", "abc"], "invalid pid"),
    (["-p", "-5"], "invalid pid"),
    (["-p", " 5"], "invalid pid"),
    (["-p", "99999999999999999999"], "invalid pid"),
    (["-p", "4000000"], "no process 4000000"),
    (["-u", "no-such-user-iotrace", "--", "true"], "no-such-user-iotrace"),
    (["-u", "root", "-p", "1"], "-u applies"),
    (["--max-procs", "x", "--", "true"], "invalid --max-procs"),
    (["--max-procs", "", "--", "true"], "invalid --max-procs"),
    (["--max-procs", "18446744073709551617", "--", "true"], "invalid --max-procs"),
    (["--prom-file", "/nonexistent-dir/x.prom", "--", "true"], "cannot write"),
    (["--prom-file", "", "--", "true"], "--prom-file"),
    (["--json"], "no command given"),
    (["-o"], "requires an argument"),
    (["--nope"], "unrecognized option"),
    # issue 36: errors due where zeros were printed, and messages that misled
    (["-p", "2"], "kernel thread"),
    (["--trace-min", "5ms", "--", "true"], "need --trace FILE"),
    (["--trace-interval", "5ms", "--", "true"], "need --trace FILE"),
    (["--prom-file", "/tmp", "--", "true"], "a directory"),
]


@pytest.mark.parametrize("args,words", RUN_BAD, ids=[" ".join(a) for a, _ in RUN_BAD])
def test_run_mode_bad_input(args, words, tmp_path):
    before = bpf_object_ids()
    res = run([IOTRACE, *args], cwd=tmp_path, timeout=30)
    assert_one_line_error(res, words)
    assert_no_new_bpf_objects(before)


SNOOP_BAD = [
    (["0"], "invalid duration"), (["-1"], "invalid option"), (["abc"], "invalid duration"),
    (["inf"], "invalid duration"), (["nan"], "invalid duration"), (["1e99"], "invalid duration"),
    (["0x10"], "invalid duration"), (["1", "2"], "unexpected argument '2'"),
    (["1e8"], "in digits"), (["-p", "999999"], "no process 999999"),
    (["-p", "0"], "invalid pid"), (["-d", "sdz9"], "not in /sys/block"),
    (["-c", "no/such/cgroup"], "no/such/cgroup"), (["--bogus"], "unrecognized option"),
]


@pytest.mark.parametrize("args,words", SNOOP_BAD, ids=[" ".join(a) for a, _ in SNOOP_BAD])
def test_snoop_bad_input(args, words):
    assert_one_line_error(run([IOTRACE, "snoop", *args], timeout=30), words)


COMPARE_BAD = [
    ([], "no commands"), (["--repeat", "0", "--", "true"], "--repeat"),
    (["--repeat", "1001", "--", "true"], "--repeat"), (["--repeat", "x", "--", "true"], "--repeat"),
    (["-l", "a", "-l", "b", "--", "true"], "labels"), (["--", ""], "empty"),
    (["-o", "/nonexistent-dir/x", "--", "true"], "nonexistent-dir"),
    (["--bogus"], "unrecognized option"),
]


@pytest.mark.parametrize("args,words", COMPARE_BAD, ids=[" ".join(a) for a, _ in COMPARE_BAD])
def test_compare_bad_input(args, words):
    assert_one_line_error(run([IOTRACE, "compare", *args], timeout=60), words)


OTHER_BAD = [
    (["top", "-b", "--max-procs", "4294967294"], "invalid --max-procs"),
    (["top", "-b", "--max-procs", "4294967295"], "invalid --max-procs"),
    (["top", "-b", "--max-procs", "16383"], "invalid --max-procs"),
    (["fields", "x"], "unexpected argument 'x'"),
    (["info", "bogus"], "unexpected argument 'bogus'"),
]


@pytest.mark.parametrize("args,words", OTHER_BAD, ids=[" ".join(a) for a, _ in OTHER_BAD])
def test_other_subcommands_bad_input(args, words):
    """(Before: top --max-procs 4294967294 failed to load with "Bad address", 4294967295 put
    every process in the overflow row; `fields x` ran a command "fields"; `info bogus`
    suggested `info --help`.)"""
    before = bpf_object_ids()
    res = run([IOTRACE, *args], timeout=30)
    assert_one_line_error(res, words)
    assert "info --help" not in res.stderr.decode()
    assert_no_new_bpf_objects(before)


@pytest.mark.parametrize("args,words", [
    (["-b", "0", "x", "y"], "usage"), (["-b", "-1", "x", "y"], "usage"),
    (["-b", "99999999999999999999999", "x", "y"], "usage"), (["-b", "8kB", "x", "y"], "usage"),
    (["-b", " 8", "x", "y"], "usage"),
])
def test_workload_absurd_sizes(args, words, tmp_path):
    res = run([wl("copy"), *args], cwd=tmp_path)
    assert res.returncode == 2 and words.encode() in res.stderr
    assert not (tmp_path / "y").exists()


# ---- the parser fuzzer (longer: `make fuzz`) ----

def test_parser_fuzzer_short_run(tmp_path):
    fuzzer = ROOT / ".output" / "fuzz" / "fuzz_parsers"
    assert fuzzer.exists(), "built by make"
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    # A real note section to start from (its build-ID note comes first and fits in 64 bytes).
    (corpus / "kernel-notes").write_bytes(open("/sys/kernel/notes", "rb").read()[:64])
    res = run([fuzzer, "-runs=300000", "-max_len=64", "-seed=1", str(corpus),
               str(ROOT / "tests" / "fuzz" / "seeds")], cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    assert not list(tmp_path.glob("crash-*"))


def short_fuzz_run(tmp_path, name, runs, max_len, seeds):
    fuzzer = ROOT / ".output" / "fuzz" / name
    assert fuzzer.exists(), "built by make"
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    res = run([fuzzer, f"-runs={runs}", f"-max_len={max_len}", "-seed=1", str(corpus),
               str(ROOT / "tests" / "fuzz" / seeds)], cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    assert not list(tmp_path.glob("crash-*"))


def test_escape_fuzzer_short_run(tmp_path):
    """The escaping of names and the text cells that cut them (tests/fuzz/fuzz_escape.c:
    every output kind read back by its own decoder); `make fuzz` runs it longer."""
    short_fuzz_run(tmp_path, "fuzz_escape", 25000, 256, "escape-seeds")


def test_a_crash_prints_its_stack(tmp_path):
    """A fatal signal in iotrace (here sent to it, while it follows a command) gives one
    line naming it and iotrace's own frames, which addr2line turns into its functions;
    then the signal's default action (status 128 + 11 to a shell, no report written)."""
    mark, out, errf = tmp_path / "started", tmp_path / "r.json", tmp_path / "err"
    with open(errf, "w") as err:
        proc = subprocess.Popen([IOTRACE, "--json", "-o", out, "--", "sh", "-c",
                                 f"echo $$ > {mark}; exec sleep 60"], stderr=err)
    try:
        deadline = time.monotonic() + 60
        while not (mark.exists() and mark.read_text().strip()) and proc.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGSEGV)
        proc.wait(timeout=60)
    finally:
        proc.kill()
        if mark.exists() and mark.read_text().strip():
            os.kill(int(mark.read_text()), signal.SIGKILL)
    err = errf.read_text()
    assert proc.returncode == -signal.SIGSEGV, err
    assert err.startswith("iotrace: crashed (SIGSEGV)"), err
    offsets = re.findall(r"^iotrace\(\+(0x[0-9a-f]+)\)", err, re.M)
    assert len(offsets) >= 3, err
    # a return address points after its call: one byte back is inside the calling line;
    # -i: the functions inlined there too. Whether the signal came in the event loop or
    # just before it (the command may write its mark first), run_trace holds it.
    names = subprocess.run(["addr2line", "-f", "-i", "-e", IOTRACE,
                            *(hex(int(o, 16) - 1) for o in offsets)], capture_output=True,
                           text=True, check=True).stdout.splitlines()[::2]
    assert {"main", "run_trace"} <= set(names), names
    assert not out.exists() or out.stat().st_size == 0


def test_container_fuzzer_short_run(tmp_path):
    """The cgroup path parser's properties (tests/fuzz/fuzz_container.c); `make fuzz` runs
    it longer."""
    short_fuzz_run(tmp_path, "fuzz_container", 200000, 512, "container-seeds")


# ---- soak: long runs ----

def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def soak_snoop(tmp_path, seconds):
    """snoop under fio random I/O: memory flat, every event shown or counted as lost."""
    data = tmp_path / "fio.dat"
    snoop = subprocess.Popen([str(IOTRACE), "snoop", "-j", "-d", "vda", str(seconds + 5)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert b"tracing block I/O" in snoop.stderr.readline()
    fio = subprocess.Popen(["fio", "--name=soak", f"--filename={data}", "--size=64m",
                            "--rw=randrw", "--bs=4k", "--direct=1", "--ioengine=psync",
                            f"--runtime={seconds}", "--time_based", "--output-format=json"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    events, samples, tail = 0, [], b""
    start = time.monotonic()
    # Read snoop's output while fio runs, sampling RSS every few seconds.
    os.set_blocking(snoop.stdout.fileno(), False)
    next_sample = start + min(5, seconds / 4)
    while fio.poll() is None:
        chunk = snoop.stdout.read()
        if chunk:
            events += chunk.count(b"\n")
            tail = (tail + chunk)[-4096:]
        if time.monotonic() >= next_sample:
            samples.append(rss_kib(snoop.pid))
            next_sample += min(5, seconds / 4)
        time.sleep(0.05)
    fio_report = json.loads(fio.stdout.read())
    snoop.send_signal(signal.SIGINT)
    rest, err = snoop.communicate(timeout=60)
    events += rest.count(b"\n")
    tail = (tail + rest)[-4096:]
    assert snoop.returncode == 0, err
    # -j ends with a summary line: {"summary":true,"events":N,"lost_events":M}.
    summary = json.loads(tail.splitlines()[-1])
    assert summary["summary"] and summary["events"] == events - 1
    assert summary["lost_events"] == int(re.search(r"(\d+) lost", err.decode()).group(1))
    events -= 1
    job = fio_report["jobs"][0]
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    m = re.search(r"(\d+) requests shown, (\d+) lost", err.decode())
    assert m, err
    assert int(m.group(1)) == events
    lost = int(m.group(2))
    # Every fio request was shown, or counted as lost (other disk I/O may add events).
    assert events + lost >= ios, (events, lost, ios)
    # Memory flat: after warm-up, RSS does not grow by more than 1 MiB.
    warm = samples[len(samples) // 4:]
    assert warm and max(warm) - min(warm) < 1024, samples
    return events, ios


def test_snoop_short_soak(tmp_path):
    soak_snoop(tmp_path, 8)


@soak
def test_snoop_soak(tmp_path):
    soak_snoop(tmp_path, SOAK_SECONDS)


def soak_pid(tmp_path, seconds):
    """-p on a long-running process: counts equal the workload's own arithmetic."""
    tr = subprocess.Popen([wl("tr2u"), "a", "b"], stdin=subprocess.PIPE,
                          stdout=subprocess.DEVNULL)
    out = tmp_path / "pid.json"
    tracer = subprocess.Popen([str(IOTRACE), "--json", "-o", str(out), "-p", str(tr.pid)],
                              stderr=subprocess.PIPE)
    # tr2u is blocked in its first read; wait until iotrace has attached.
    line = tracer.stderr.readline()
    assert b"attached" in line or b"tracing" in line, line
    fed, block = 0, b"x" * 65536
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        tr.stdin.write(block)
        fed += len(block)
    tr.stdin.close()
    assert tr.wait(timeout=600) == 0
    assert tracer.wait(timeout=120) == 0
    report = json.loads(out.read_text())
    (proc,) = real_processes(report)
    # One byte per read, a final read of 0 at EOF (the first read began before the attach).
    assert proc["syscalls"]["read"]["calls"] == fed + 1
    assert proc["syscalls"]["write"]["calls"] == fed
    assert proc["io"]["write"]["transferred_bytes"] == fed
    return fed


def test_pid_short_soak(tmp_path):
    soak_pid(tmp_path, 2)


@soak
def test_pid_soak(tmp_path):
    fed = soak_pid(tmp_path, SOAK_SECONDS)
    assert fed > 10_000_000
