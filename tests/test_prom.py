"""Prometheus export: run mode's --prom-file and `iotrace serve` (issue 9).

References: promtool (Prometheus' own checker) for the format, strace -f -c and run mode's
JSON for the numbers, a real Prometheus server scraping serve for the end-to-end path.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from helpers import (IOTRACE, assert_no_new_bpf_objects, bpf_object_ids, mkinput, real_processes,
                     run, run_stdin, strace_counts, timed_or_late, wl)

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """[(name, {label: value}, float)] of every sample line."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        labels = dict(LABEL.findall(m.group(3) or ""))
        out.append((m.group(1), labels, float(m.group(4))))
    return out


def select(samples, name, **labels):
    return [v for n, l, v in samples if n == name and all(l.get(k) == w for k, w in labels.items())]


def one(samples, name, **labels):
    found = select(samples, name, **labels)
    assert len(found) == 1, (name, labels, found)
    return found[0]


def promtool_check(path):
    res = run(["promtool", "check", "metrics"], stdin=open(path, "rb"))
    assert res.returncode == 0, res.stdout + res.stderr
    # promtool accepts a series written twice; Prometheus would keep one of them.
    samples = parse(Path(path).read_text())
    counts = Counter((n, tuple(sorted(l.items()))) for n, l, _ in samples)
    dups = {k for k, c in counts.items() if c > 1}
    assert not dups, sorted(dups)[:5]


def check_histogram(samples, name, **labels):
    """Cumulative buckets ending in +Inf, equal to _count; returns (count, sum)."""
    buckets = [(l["le"], v) for n, l, v in samples if n == name + "_bucket"
               and all(l.get(k) == w for k, w in labels.items())]
    assert buckets and buckets[-1][0] == "+Inf", buckets[-3:]
    values = [v for _, v in buckets]
    assert values == sorted(values), "buckets must be cumulative"
    bounds = [float(le) for le, _ in buckets[:-1]]
    assert bounds == sorted(bounds) and len(set(bounds)) == len(bounds)
    count = one(samples, name + "_count", **labels)
    assert values[-1] == count
    return count, one(samples, name + "_sum", **labels)


@pytest.fixture(scope="module")
def small_input(tmp_path_factory):
    return mkinput(tmp_path_factory.mktemp("prom") / "in", 20_001)


# ---- run mode: --prom-file ----

def test_prom_file_matches_strace_and_json(tmp_path, small_input):
    prom = tmp_path / "run.prom"
    out = tmp_path / "run.json"
    cmd = [wl("tr2u"), "a", "b"]
    res = run_stdin([IOTRACE, "--json", "-o", out, "--prom-file", prom, "--", *cmd], small_input,
                    stdout=subprocess.DEVNULL)
    assert res.returncode == 0, res.stderr
    promtool_check(prom)
    assert prom.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    samples = parse(prom.read_text())
    # Every series carries run="<file name without .prom>", so files in one node_exporter
    # textfile directory never clash.
    assert {l.get("run") for _, l, _ in samples} == {"run"}
    # Latency bounds are exact decimal seconds of 2^b - 1 ns.
    assert select(samples, "iotrace_syscall_latency_seconds_bucket", comm="tr2u", syscall="read",
                  le="1.073741823")
    report = json.loads(out.read_text())
    (proc,) = real_processes(report)
    sc = proc["syscalls"]
    for name, v in sc.items():
        assert one(samples, "iotrace_syscalls_total", comm="tr2u", syscall=name) == v["calls"]
        assert one(samples, "iotrace_syscall_errors_total", comm="tr2u", syscall=name) == v["errors"]
    assert not any("pid" in l for _, l, _ in samples), "no PID labels"
    # Independent count: strace -f -c on the same command and input.
    table, sres = strace_counts(cmd, tmp_path, small_input, stdout=subprocess.DEVNULL)
    assert sres.returncode == 0
    for name in ("read", "write"):
        assert one(samples, "iotrace_syscalls_total", comm="tr2u", syscall=name) == table[name][0]
    # tr2u reads the input one byte per call, then a 0 at EOF: the histogram says so.
    count, total = check_histogram(samples, "iotrace_syscall_io_bytes", comm="tr2u",
                                   syscall="read")
    assert count == table["read"][0]
    reads = proc["io"]["read"]
    assert total == reads["transferred_bytes"]
    assert one(samples, "iotrace_syscall_io_bytes_bucket", comm="tr2u", syscall="read",
               le="1") >= 20_001
    assert one(samples, "iotrace_syscall_io_bytes_bucket", comm="tr2u", syscall="read",
               le="0") == 1
    wcount, wsum = check_histogram(samples, "iotrace_syscall_io_bytes", comm="tr2u",
                                   syscall="write")
    assert (wcount, wsum) == (20_001, 20_001)
    # Sampled by default (run-mode.md): the latency histogram weighs each timed call by the
    # calls it stands for, so it estimates every call; its sum is the estimated time, which
    # is iotrace_syscall_seconds_total's and the JSON's; the timing rule is a gauge's labels.
    lcount, lsum = check_histogram(samples, "iotrace_syscall_latency_seconds", comm="tr2u",
                                   syscall="read")
    assert lcount == proc["io"]["read"]["latency_ns"]["count"]
    # ~300 timed reads after the warm-up: the sample's share of reads among tr2u's
    # alternating reads and writes is binomial, ±4% of the calls per standard deviation.
    assert abs(lcount - count) <= 0.2 * count and lsum > 0
    assert lsum == pytest.approx(sc["read"]["total_ns"] / 1e9, rel=1e-6)
    assert one(samples, "iotrace_syscall_seconds_total", comm="tr2u",
               syscall="read") == pytest.approx(lsum, rel=1e-6)
    timed = one(samples, "iotrace_syscall_timed_calls_total", comm="tr2u", syscall="read")
    assert timed == sc["read"]["timed_calls"] < count
    assert [l for n, l, v in samples if n == "iotrace_timing_info" and v == 1] == [
        {"mode": "sampled", "warmup_calls": "1000", "sample_period": "64", "run": "run"}]


def prom_file_of_shell(tmp_path, script):
    """--prom-file of `sh -c script`, checked by promtool; returns its path."""
    prom = tmp_path / "p.prom"
    res = run([IOTRACE, "-o", "/dev/null", "--prom-file", prom, "--", "sh", "-c", script])
    assert res.returncode == 0, res.stderr
    promtool_check(prom)
    return prom


def test_prom_file_totals_by_comm_and_block(tmp_path):
    """Processes of one name are summed; block I/O carries disk and op labels."""
    target = tmp_path / "direct.bin"

    def run_once():
        prom = prom_file_of_shell(tmp_path, f"/bin/true; /bin/true; dd if=/dev/zero "
                                            f"of={target} bs=4096 count=64 oflag=direct "
                                            f"status=none")
        samples = parse(prom.read_text())
        # A completion the kernel did not run the program for is counted late, without a
        # latency; the lost counter is the run's, other processes' requests included.
        lcount, _ = check_histogram(samples, "iotrace_block_io_latency_seconds", comm="dd",
                                    disk="vda", op="write")
        unseen = one(samples, "iotrace_lost_events_total", reason="block_completions_unseen")
        return samples, 64, lcount, unseen

    samples = timed_or_late(run_once)
    assert one(samples, "iotrace_syscalls_total", comm="true", syscall="execve") == 2
    assert one(samples, "iotrace_block_io_requests_total", comm="dd", disk="vda",
               op="write") == 64
    assert one(samples, "iotrace_block_io_bytes_total", comm="dd", disk="vda",
               op="write") == 64 * 4096
    count, total = check_histogram(samples, "iotrace_block_io_size_bytes", comm="dd",
                                   disk="vda", op="write")
    assert (count, total) == (64, 64 * 4096)
    assert one(samples, "iotrace_direct_io_bytes_total", comm="dd", op="write") == 64 * 4096


def test_prom_file_bad_directory_fails_before_running(tmp_path):
    marker = tmp_path / "ran"
    res = run([IOTRACE, "--prom-file", "/nonexistent-dir/x.prom", "--", "touch", marker])
    assert res.returncode == 1
    assert res.stderr.decode().count("\n") == 1 and "nonexistent-dir" in res.stderr.decode()
    assert not marker.exists()
    res = run([IOTRACE, "--prom-file", "", "--", "true"])
    assert res.returncode == 1 and b"--prom-file" in res.stderr


def test_prom_file_is_replaced_atomically(tmp_path, small_input):
    """A reader polling the path sees the old complete file or the new one, never a part."""
    prom = tmp_path / "job.prom"
    prom.write_text("# old\n")
    seen, stop = set(), threading.Event()

    def reader():
        while not stop.is_set():
            try:
                text = prom.read_text()
            except FileNotFoundError:
                seen.add("missing")
                continue
            seen.add("old" if text == "# old\n" else
                     "new" if text.rstrip().endswith("} 0") or "lost_events" in text else
                     "partial")
    t = threading.Thread(target=reader)
    t.start()
    res = run_stdin([IOTRACE, "-o", "/dev/null", "--prom-file", prom, "--", wl("tr2b"), "a", "b"],
                    small_input, stdout=subprocess.DEVNULL)
    time.sleep(0.05)
    stop.set()
    t.join()
    assert res.returncode == 0
    assert "lost_events" in prom.read_text()
    assert seen <= {"old", "new"}, seen


# ---- serve ----

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cgroup2_root():
    for line in open("/proc/self/mounts"):
        dev, mnt, fstype = line.split()[:3]
        if fstype == "cgroup2":
            return Path(mnt)
    pytest.fail("no cgroup v2 hierarchy mounted")


def remove_cgroup(path):
    """Its processes have exited: the empty cgroup is removed (the kernel may take a
    moment to see it empty)."""
    for _ in range(50):
        try:
            path.rmdir()
            return
        except OSError:
            time.sleep(0.1)


@pytest.fixture
def test_cgroup():
    path = cgroup2_root() / f"iotrace-test-{os.getpid()}-{time.monotonic_ns()}"
    path.mkdir()
    yield path
    remove_cgroup(path)


class Serve:
    def __init__(self, *args, wrap=lambda argv: argv):
        self.port = free_port()
        self.before = bpf_object_ids()
        self.proc = subprocess.Popen(wrap([str(IOTRACE), "serve", "--listen",
                                           f"127.0.0.1:{self.port}", *args]),
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()
        assert "metrics on" in line, line + (self.proc.stderr.read() if self.proc.poll() else "")
        self.url = f"http://127.0.0.1:{self.port}/metrics"

    def scrape(self):
        with urllib.request.urlopen(self.url, timeout=30) as r:
            assert r.status == 200
            assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            return r.read().decode()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=20)
        assert_no_new_bpf_objects(self.before)
        return rc


def in_cgroup(cgroup, argv):
    """argv run inside cgroup: the shell moves itself in, then execs argv."""
    return ["sh", "-c", f'echo $$ > {cgroup}/cgroup.procs && exec "$@"', "sh", *argv]


def test_serve_counts_equal_run_mode(tmp_path, small_input, test_cgroup):
    rel = "/" + test_cgroup.name
    serve = Serve("-c", rel, "--comm")
    try:
        for _ in range(2):
            res = run_stdin(in_cgroup(test_cgroup, [wl("tr2b"), "a", "b"]), small_input,
                            stdout=subprocess.DEVNULL)
            assert res.returncode == 0
        text = serve.scrape()
    finally:
        assert serve.stop() == 0
    path = tmp_path / "serve.prom"
    path.write_text(text)
    promtool_check(path)
    samples = parse(text)
    report, _ = run_json(tmp_path, [wl("tr2b"), "a", "b"], small_input)
    (proc,) = real_processes(report)
    for name in ("read", "write", "close"):
        # Two runs under serve: each label's counters only grow.
        assert one(samples, "iotrace_syscalls_total", cgroup=rel, comm="tr2b",
                   syscall=name) == 2 * proc["syscalls"][name]["calls"]
    count, total = check_histogram(samples, "iotrace_syscall_io_bytes", cgroup=rel, comm="tr2b",
                                   syscall="write")
    assert total == 2 * 20_001
    # Only the -c cgroup is counted: nothing labelled with another cgroup.
    assert {l.get("cgroup") for n, l, v in samples if n == "iotrace_syscalls_total"} <= \
        {rel, "(overflow)"}
    assert not any("pid" in l for _, l, _ in samples)


def run_json(tmp_path, argv, stdin_path):
    out = tmp_path / "run.json"
    res = run_stdin([IOTRACE, "--json", "-o", out, "--", *argv], stdin_path,
                    stdout=subprocess.DEVNULL)
    assert res.returncode == 0, res.stderr
    return json.loads(out.read_text()), res


def test_serve_labels_by_own_cgroup_without_c(test_cgroup):
    serve = Serve()
    try:
        res = run(in_cgroup(test_cgroup, ["/bin/true"]))
        assert res.returncode == 0
        samples = parse(serve.scrape())
    finally:
        serve.stop()
    rel = "/" + test_cgroup.name
    # One execve in the test cgroup (the shell's exec of /bin/true), no comm label.
    assert one(samples, "iotrace_syscalls_total", cgroup=rel, syscall="execve") == 1
    assert all("comm" not in l for n, l, v in samples if n == "iotrace_syscalls_total")


def test_serve_cgroup_made_again_and_self_excluded(test_cgroup):
    """A cgroup removed and made again at one path (a new id) is still one series per label;
    serve's own syscalls are not counted (serve runs in a cgroup of its own, so that other
    iotrace processes on the machine, counted under comm="iotrace" too, are not in it)."""
    own = test_cgroup.parent / f"{test_cgroup.name}-serve"
    own.mkdir()
    serve = Serve("--comm", wrap=lambda argv: in_cgroup(own, argv))
    try:
        assert run(in_cgroup(test_cgroup, ["/bin/true"])).returncode == 0
        test_cgroup.rmdir()
        test_cgroup.mkdir()
        assert run(in_cgroup(test_cgroup, ["/bin/true"])).returncode == 0
        first = parse(serve.scrape())
        text = serve.scrape()
    finally:
        serve.stop()
        remove_cgroup(own)
    samples = parse(text)
    # Each scrape makes hundreds of bpf() calls; none of them is counted.
    mine = {"cgroup": "/" + own.name, "comm": "iotrace", "syscall": "bpf"}
    assert select(first, "iotrace_syscalls_total", **mine) == \
        select(samples, "iotrace_syscalls_total", **mine) == []
    rel = "/" + test_cgroup.name
    assert one(samples, "iotrace_syscalls_total", cgroup=rel, comm="true", syscall="execve") == 2
    keys = [(n, tuple(sorted(l.items()))) for n, l, _ in samples]
    assert len(keys) == len(set(keys))


def test_serve_survives_bad_requests(test_cgroup):
    serve = Serve("-c", "/" + test_cgroup.name)
    port = serve.port
    try:
        def raw(data):
            """The server's first reply bytes; b"" if it closed (or reset) the connection."""
            with socket.create_connection(("127.0.0.1", port), timeout=15) as s:
                try:
                    s.sendall(data)
                    s.shutdown(socket.SHUT_WR)
                except OSError:
                    pass  # it may answer and close before reading everything
                try:
                    return s.recv(4096)
                except ConnectionResetError:
                    return b""

        big = raw(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 300_000 +
                  b"\r\n\r\n")
        assert big == b"" or big.startswith(b"HTTP/1.1 431"), big[:80]
        raw(b"\x00\xff\xfe garbage \r\n\r\n")
        raw(b"GET " + b"/" * 100_000 + b" HTTP/1.1\r\n\r\n")
        assert b" 405 " in raw(b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
        assert b" 404 " in raw(b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
        assert raw(b"GET /metrics HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 ")  # no Host
        assert raw(b"GET /metrics HTTP/9.9\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 505")
        # Idle connections (never finishing their request) do not block a scrape.
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
        for s in idle:
            s.sendall(b"GET /metrics HTTP/1.1\r\n")
        text = serve.scrape()
        assert "iotrace_build_info" in text
        for s in idle:
            s.close()
        # Many scrapes at once.
        results = []
        threads = [threading.Thread(target=lambda: results.append(len(serve.scrape())))
                   for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(results) == 16 and min(results) > 0
        assert serve.proc.poll() is None
    finally:
        assert serve.stop() == 0


@pytest.mark.parametrize("args, words", [
    (["--listen", "nope"], "--listen"),
    (["--listen", "127.0.0.1:99999"], "--listen"),
    (["--listen", "localhost:9435"], "--listen"),
    (["-c", "/no-such-cgroup-here"], "no-such-cgroup-here"),
    (["-c", "/etc"], "/etc"),
    (["--max-labels", "0"], "--max-labels"),
    (["extra"], "extra"),
    (["-c", "/"] * 9, "at most"),
])
def test_serve_bad_input(args, words):
    res = run([IOTRACE, "serve", *args], timeout=20)
    assert res.returncode == 1, res
    err = res.stderr.decode()
    assert err.count("\n") == 1 and words in err, err


def test_serve_port_in_use():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        before = bpf_object_ids()
        res = run([IOTRACE, "serve", "--listen", f"127.0.0.1:{port}"], timeout=20)
        assert res.returncode == 1
        err = res.stderr.decode()
        assert err.count("\n") == 1 and "cannot listen" in err, err
        assert_no_new_bpf_objects(before)


# ---- a real Prometheus server scraping serve ----

def test_prometheus_scrapes_serve(tmp_path, small_input, test_cgroup):
    assert shutil.which("prometheus"), "prometheus is installed by scripts/deps.sh"
    rel = "/" + test_cgroup.name
    serve = Serve("-c", rel, "--comm")
    prom_port = free_port()
    (tmp_path / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "scrape_configs:\n  - job_name: iotrace\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{serve.port}']\n")
    server = subprocess.Popen(
        ["prometheus", f"--config.file={tmp_path / 'prometheus.yml'}",
         f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{prom_port}"],
        stdout=subprocess.DEVNULL, stderr=(tmp_path / "prometheus.log").open("w"))
    try:
        res = run_stdin(in_cgroup(test_cgroup, [wl("tr2b"), "a", "b"]), small_input,
                        stdout=subprocess.DEVNULL)
        assert res.returncode == 0
        query = f'iotrace_syscalls_total{{cgroup="{rel}",comm="tr2b",syscall="read"}}'
        url = (f"http://127.0.0.1:{prom_port}/api/v1/query?" +
               urllib.parse.urlencode({"query": query}))
        value, deadline = None, time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    data = json.load(r)
                if data["status"] == "success" and data["data"]["result"]:
                    value = int(float(data["data"]["result"][0]["value"][1]))
                    break
            except OSError:
                pass
            time.sleep(0.5)
        assert value is not None, (tmp_path / "prometheus.log").read_text()[-2000:]
    finally:
        server.terminate()
        server.wait(timeout=30)
        serve.stop()
    report, _ = run_json(tmp_path, [wl("tr2b"), "a", "b"], small_input)
    (proc,) = real_processes(report)
    assert value == proc["syscalls"]["read"]["calls"]


def test_every_metric_is_documented(tmp_path):
    """docs/prometheus.md names every family iotrace writes; the Grafana dashboard uses only
    families that exist."""
    target = tmp_path / "d.bin"
    prom = prom_file_of_shell(tmp_path, f"dd if=/dev/zero of={target} bs=4096 count=8 "
                                        f"oflag=direct status=none; cat {target} /etc/passwd "
                                        f"> /dev/null")
    families = set(re.findall(r"^# TYPE (\S+) ", prom.read_text(), re.M))
    assert len(families) >= 25, families
    docs = (Path(__file__).parent.parent / "docs" / "prometheus.md").read_text()
    missing = {f for f in families if f"`{f}`" not in docs}
    assert not missing, missing
    dashboard = (Path(__file__).parent.parent / "docs" / "grafana-iotrace.json").read_text()
    used = set(re.findall(r"(iotrace_[a-z_]+)", dashboard))
    series = families | {f + s for f in families for s in ("_bucket", "_sum", "_count")}
    assert used and used <= series, used - series


def test_serve_on_ipv6_loopback():
    with socket.socket(socket.AF_INET6) as s:
        s.bind(("::1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([str(IOTRACE), "serve", "--listen", f"[::1]:{port}"],
                            stderr=subprocess.PIPE, text=True)
    try:
        assert "metrics on" in proc.stderr.readline()
        with urllib.request.urlopen(f"http://[::1]:{port}/metrics", timeout=30) as r:
            assert r.status == 200 and b"iotrace_syscalls_total" in r.read()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
