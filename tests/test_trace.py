"""--trace FILE: the timeline of a run (docs/trace.md). Each check holds the trace against an
independent reference: the same run's report (counts, histograms, block requests, totals),
strace in the same run, the bytes the program asked for, the Trace Event Format's own rules,
and a real viewer (speedscope's static build, in headless Chromium)."""
import json
import math
import os
import re
import signal
import subprocess
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from helpers import (IOTRACE, MIB, ROOT, assert_no_new_bpf_objects, bpf_object_ids,
                     mkinput, parse_strace_c, real_processes, run, wl)

# The syscalls the timeline shows (user/kernel/tracer_trace.c): the read/write family, sync
# calls, opens, io_uring_enter.
TRACED = {"read", "write", "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev",
          "preadv2", "pwritev2", "sendfile", "copy_file_range", "splice", "fsync",
          "fdatasync", "sync_file_range", "sync", "syncfs", "msync", "open", "openat",
          "openat2", "creat", "io_uring_enter"}
READS = {"read", "pread64", "readv", "preadv", "preadv2"}
WRITES = {"write", "pwrite64", "writev", "pwritev", "pwritev2"}
COPIES = {"sendfile", "copy_file_range", "splice"}
PHASES = set("XbeiCM")


def traced(tmp_path, argv, *options, stdin=None, timeout=120):
    """Runs argv under iotrace --json --trace; returns (report, trace, CompletedProcess)."""
    report, trace = tmp_path / "report.json", tmp_path / "trace.json"
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
    res = run([IOTRACE, "--json", "-o", report, "--trace", trace, *options, "--", *argv],
              stdin=fin, timeout=timeout)
    assert res.returncode == 0, res.stderr
    return json.loads(report.read_text()), json.loads(trace.read_text()), res


def ns(us):
    """The trace's µs (three decimals: ns precision) back to ns."""
    return round(us * 1000)


def check_format(trace):
    """The rules of the Trace Event Format's JSON object form that the viewers rely on."""
    assert set(trace) == {"traceEvents", "displayTimeUnit", "metadata"}
    assert trace["displayTimeUnit"] == "ns"
    pairs, last_ts, outs = defaultdict(list), {}, {}
    for e in trace["traceEvents"]:
        assert e["ph"] in PHASES and isinstance(e["name"], str), e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
        assert e["ts"] >= 0 and abs(e["ts"] * 1000 - ns(e["ts"])) < 1e-3, e
        if e["ph"] == "X":
            assert e["dur"] >= 0, e
        if e["ph"] in "be":
            pairs[(e["cat"], e["id"])].append(e)
        if e["ph"] == "X" or (e["ph"] == "i" and e.get("s") == "t"):
            # A thread's own slices come in the order they started.
            key = (e["pid"], e["tid"])
            assert e["ts"] >= last_ts.get(key, 0), e
            last_ts[key] = e["ts"]
        if e.get("flow_out"):
            outs[e["bind_id"]] = e
        if e.get("flow_in"):
            assert e["bind_id"] in outs and outs[e["bind_id"]]["ts"] <= e["ts"], e
    for key, evs in pairs.items():
        assert [e["ph"] for e in evs] == ["b", "e"], key
        assert evs[0]["name"] == evs[1]["name"] and evs[0]["pid"] == evs[1]["pid"], key
        assert evs[1]["ts"] >= evs[0]["ts"], key
    return trace["traceEvents"]


def slices(events, pid=None):
    return [e for e in events if e["ph"] == "X" and (pid is None or e["pid"] == pid)]


def requests(events):
    return [e for e in events if e["ph"] == "b" and e.get("cat") == "block"]


def counter_sums(events):
    sums = defaultdict(Counter)
    for e in events:
        if e["ph"] == "C":
            sums[e["pid"]].update(e["args"])
    return sums


def io_bytes(proc, names):
    return sum(proc["io"].get(n, {}).get("transferred_bytes", 0) for n in names)


def block_bytes(proc, op):
    return proc["block"].get(op, {}).get("bytes", 0)


def test_every_call_request_and_counter_is_the_reports(tmp_path):
    """--trace-min 0 under strace -f -c, on a shell that writes, syncs, reads back cold and
    copies: every traced call of every process is a slice (= the report's calls, = strace's
    in the same run), every block request a slice on its disk (= the report's per process
    and disk, other I/O included), and each process's counter tracks add up to its totals."""
    data, log = tmp_path / "f", tmp_path / "strace.log"
    script = (f"dd if=/dev/zero of={data} bs=64k count=64 conv=fsync status=none; "
              f"dd if={data} of=/dev/null bs=64k iflag=direct status=none; "
              f"cat {data} > {tmp_path}/copy; head -c 100000 /dev/urandom > /dev/null")
    report, trace, _ = traced(tmp_path, ["strace", "-f", "-c", "-o", log, "sh", "-c", script],
                              "--trace-min", "0")
    events = check_format(trace)
    strace = parse_strace_c(log.read_text())
    procs = real_processes(report)
    # strace itself, the command iotrace ran (the root: pids wrap, so not the least)
    pids = {p["pid"] for p in procs}
    (tracer,) = [p for p in procs if p["ppid"] not in pids]
    got = Counter(e["name"] for e in slices(events) if e["pid"] != tracer["pid"])
    for p in procs:
        want = Counter({n: r["calls"] for n, r in p["syscalls"].items() if n in TRACED})
        assert Counter(e["name"] for e in slices(events, p["pid"])) == want, p["comm"]
    for name in ("read", "write", "openat", "fsync"):
        assert got[name] == strace[name][0], name
    # Block requests: per charged process (0: other I/O) and disk.
    disk_of = {e["pid"]: e["args"]["name"].removeprefix("disk ") for e in events
               if e["ph"] == "M" and e["name"] == "process_name" and
               e["args"]["name"].startswith("disk ")}
    shown = Counter((r["args"]["pid"], disk_of[r["pid"]]) for r in requests(events))
    counted = Counter()
    for p in report["processes"]:
        for disk, ops in p["block"].get("disks", {}).items():
            counted[(p["pid"] or 0, disk)] += sum(o["requests"] for o in ops.values())
    assert shown == +counted
    assert report["trace"]["block_requests"] == len(requests(events))
    # Counter tracks: per process, the report's totals.
    sums = counter_sums(events)
    for p in procs:
        s = sums[p["pid"]]
        assert s["syscall_read_bytes"] == io_bytes(p, READS | COPIES), p["comm"]
        assert s["syscall_write_bytes"] == io_bytes(p, WRITES | COPIES), p["comm"]
        assert s["block_read_bytes"] == block_bytes(p, "read"), p["comm"]
        assert s["block_write_bytes"] == block_bytes(p, "write"), p["comm"]
        assert s["pages_added"] == p["page_cache"]["added_pages"], p["comm"]
        assert s["pages_dirtied"] == p["page_cache"]["dirtied_pages"], p["comm"]
    assert trace["metadata"]["lost_events"] == report["drops"]["trace_events"] == 0
    assert not trace["metadata"]["truncated"]


def bucket_count_from(hist, lo):
    """Calls in a histogram's buckets from the bucket starting at lo up."""
    return sum(b["count"] for b in hist["buckets"] if b["lo"] >= lo)


def test_slow_calls_are_the_histograms_slow_buckets(tmp_path):
    """With --trace-min at a bucket boundary (2^17 ns: dd's O_DSYNC writes take longer, its
    reads of /dev/zero less), the slices of each read/write-family syscall are exactly the
    calls its latency histogram holds from that bucket up."""
    limit = 1 << 17
    report, trace, _ = traced(tmp_path, ["dd", "if=/dev/zero", f"of={tmp_path / 'f'}",
                                         "bs=64k", "count=200", "oflag=dsync", "status=none"],
                              "--trace-min", f"{limit}ns")
    events = check_format(trace)
    dd = next(p for p in real_processes(report) if p["comm"] == "dd")
    slow = 0
    for name, io in dd["io"].items():
        want = bucket_count_from(io["latency_ns"], limit)
        got = [e for e in slices(events, dd["pid"]) if e["name"] == name]
        assert len(got) == want, name
        assert all(ns(e["dur"]) >= limit for e in got), name
        slow += want
    calls = sum(io["calls"] for io in dd["io"].values())
    assert 0 < slow < calls, "all calls on one side of the limit: nothing was checked"
    assert all(n in TRACED for n in Counter(e["name"] for e in slices(events)))


def test_direct_reads_flow_to_their_requests(tmp_path):
    """dd iflag=direct over a cold file: each read's slice has flows to the block requests
    it started, and their bytes add up to the bytes the read returned."""
    src = mkinput(tmp_path / "cold", "16m", "-r")
    fd = os.open(src, os.O_RDONLY)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
    report, trace, _ = traced(tmp_path, ["dd", f"if={src}", "of=/dev/null", "bs=1M",
                                         "iflag=direct", "status=none"], "--trace-min", "0")
    events = check_format(trace)
    dd = next(p for p in real_processes(report) if p["comm"] == "dd")
    linked = defaultdict(list)
    for r in requests(events):
        if r.get("flow_in"):
            linked[r["bind_id"]].append(r)
    reads = [e for e in slices(events, dd["pid"])
             if e["name"] == "read" and e["args"].get("file") == str(src)]
    assert len(reads) == 17  # 16 MiB, then EOF
    for read in reads:
        got = linked.get(read.get("bind_id"), [])
        assert sum(r["args"]["bytes"] for r in got) == read["args"]["bytes"], read
        assert all(r["args"]["file"] == str(src) for r in got)
        assert bool(got) == bool(read.get("flow_out")) == (read["args"]["bytes"] > 0)
    assert trace["metadata"]["flows"] == sum(len(v) for v in linked.values()) >= 16


def test_io_uring_requests_are_async_slices(tmp_path):
    """workloads/uring's requests: one async slice each, by opcode, as the report counts
    their first completions."""
    target = mkinput(tmp_path / "u", "1m", "-r")
    report, trace, res = traced(tmp_path, [wl("uring"), "-n", "32", "-w", "16", "-f", "2",
                                           str(target)], "--trace-min", "0")
    events = check_format(trace)
    proc = next(p for p in real_processes(report) if p["comm"] == "uring")
    shown = Counter(e["name"] for e in events if e["ph"] == "b" and e["cat"] == "io_uring")
    want = Counter({op: r["ops"] for op, r in proc["io_uring"].items()})
    assert shown == want and sum(want.values()) >= 50
    assert trace["metadata"]["io_uring_requests"] == sum(want.values())


def test_names_lifetimes_and_instants(tmp_path):
    """A shell running two commands: each process is named, lives from its start to its
    exit, and its fork, exec and exit are instants."""
    report, trace, _ = traced(tmp_path, ["sh", "-c", "cat /etc/hostname; ls / > /dev/null"])
    events = check_format(trace)
    procs = {p["pid"]: p for p in real_processes(report)}
    names = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert {pid: names[pid] for pid in procs} == {pid: p["comm"] for pid, p in procs.items()}
    lifetimes = {e["pid"] for e in events if e["ph"] == "b" and e.get("cat") == "process"}
    assert lifetimes == set(procs)
    instants = Counter((e["name"], e["args"]["pid"]) for e in events if e["ph"] == "i")
    for pid, p in procs.items():
        assert instants[("exit", pid)] == 1, p["comm"]
        if p["comm"] in ("cat", "ls"):
            assert instants[("fork", pid)] == instants[("exec", pid)] == 1, p["comm"]


def test_attached_with_p(tmp_path):
    """-p PID --trace: a running process's calls, until it exits."""
    src = tmp_path / "loop.sh"
    src.write_text("for i in $(seq 300); do head -c 100 /etc/services > /dev/null; sleep 0.01; "
                   "done\n")
    target = subprocess.Popen(["sh", str(src)])
    trace, report = tmp_path / "t.json", tmp_path / "r.json"
    try:
        res = run([IOTRACE, "--json", "-o", report, "--trace", trace, "--trace-min", "0",
                   "-p", str(target.pid)], timeout=60)
    finally:
        target.kill()
        target.wait()
    assert res.returncode == 0, res.stderr
    events = check_format(json.loads(trace.read_text()))
    heads = {p["pid"] for p in real_processes(json.loads(report.read_text()))
             if p["comm"] == "head"}
    reads = [e for e in slices(events) if e["pid"] in heads and e["name"] == "read"
             and e["args"].get("file") == "/etc/services"]
    assert len(heads) > 10 and len(reads) >= len(heads)


def test_truncated_beyond_max_events(tmp_path):
    """--trace-max-events 500 on a million calls: 500 events, the rest counted, the file
    valid and saying it was truncated, and the report says so too."""
    src = mkinput(tmp_path / "in", 20000, "-r")
    report, trace, _ = traced(tmp_path, [wl("tr2u"), "a", "b"], "--trace-min", "0",
                              "--trace-max-events", "500", stdin=src)
    check_format(trace)
    meta = trace["metadata"]
    assert meta["truncated"] and meta["events"] == len(trace["traceEvents"])
    assert meta["events"] <= 500 + 4 * len(report["processes"]) + 8  # + names at the end
    assert meta["not_written"] >= 40000 - 500
    assert report["trace"]["truncated"] and report["trace"]["not_written"] == meta["not_written"]


def start_traced(tmp_path, script):
    trace = tmp_path / "trace.json"
    proc = subprocess.Popen([str(IOTRACE), "--json", "-o", str(tmp_path / "r.json"), "--trace",
                             str(trace), "--trace-min", "0", "--", "sh", "-c", script],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, trace


@pytest.mark.parametrize("signals", [1, 2])
def test_valid_after_one_or_two_interrupts(tmp_path, signals):
    """A first Ctrl-C goes to the command (which ignores it in the second case); a second
    ends iotrace early: the trace is valid JSON either way, and says partial when cut."""
    ignore = "trap '' INT; " if signals == 2 else ""
    proc, trace = start_traced(tmp_path, ignore + "while :; do head -c 4096 /dev/zero "
                               "> /dev/null; done")
    time.sleep(1.0)
    for _ in range(signals):
        proc.send_signal(signal.SIGINT)
        time.sleep(0.5)
    proc.wait(timeout=60)
    # A command that ignored the interrupts outlives iotrace: end it.
    report = json.loads((tmp_path / "r.json").read_text())
    for p in real_processes(report):
        if p["exit"]["code"] is None and p["exit"]["signal"] is None:
            try:
                os.kill(p["pid"], signal.SIGKILL)
            except ProcessLookupError:
                pass
    data = json.loads(trace.read_text())
    check_format(data)
    assert data["metadata"]["partial"] == (signals == 2)
    assert len(slices(data["traceEvents"])) > 100


@pytest.mark.parametrize("options, message", [
    (["--trace", "/nonexistent/dir/t.json"], "cannot write the trace"),
    (["--trace", "{tmp}/t.json", "--no-time"], "contradicts --no-time"),
    (["--trace", "{tmp}/t.json", "--trace-min", "1 ms"], "invalid --trace-min"),
    (["--trace", "{tmp}/t.json", "--trace-min", "-1ms"], "invalid --trace-min"),
    (["--trace", "{tmp}/t.json", "--trace-interval", "0"], "invalid --trace-interval"),
    (["--trace", "{tmp}/t.json", "--trace-max-events", "0"], "invalid --trace-max-events"),
])
def test_bad_trace_options(tmp_path, options, message):
    """One line, exit 1, no trace file, no BPF object left."""
    before = bpf_object_ids()
    res = run([IOTRACE, *[o.format(tmp=tmp_path) for o in options], "--", "true"])
    assert res.returncode == 1 and message in res.stderr.decode(), res.stderr
    assert not (tmp_path / "t.json").exists()
    assert_no_new_bpf_objects(before)


SPEEDSCOPE = ROOT / ".output/speedscope/node_modules/speedscope/dist/release"


@pytest.mark.skipif(not SPEEDSCOPE.exists() or not Path("/usr/bin/chromium").exists(),
                    reason="speedscope (npm, scripts/deps.sh) or chromium is not installed")
def test_speedscope_opens_the_trace(tmp_path):
    """speedscope's own build, served on loopback, opens the trace in headless Chromium:
    its title names the traced process, no import error is shown, and the screenshot
    (kept in the test's directory) is drawn."""
    src = mkinput(tmp_path / "in", "1m", "-r")
    report, trace, _ = traced(tmp_path, [wl("copy"), "-b", "8k", str(src), str(tmp_path / "o")],
                              "--trace-min", "0")
    copy = next(p for p in real_processes(report) if p["comm"] == "copy")
    page = viewer_page(tmp_path, tmp_path / "trace.json")
    assert f"copy (pid {copy['pid']})" in page["dom"], page["dom"][-2000:]
    assert "Unrecognized format" not in page["dom"] and "rror" not in page["title"]
    assert page["shot"].stat().st_size > 5000


def viewer_page(tmp_path, profile, view=None, height=800):
    """Serves speedscope and the profile on loopback; returns the page's DOM and a
    screenshot after Chromium opened it (in speedscope's view VIEW: "sandwich" lists the
    frames by name, as many as a window HEIGHT pixels high shows)."""
    site = tmp_path / "site"
    site.symlink_to(SPEEDSCOPE, target_is_directory=True)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "profile.json").write_bytes(profile.read_bytes())
    server = subprocess.Popen(["/usr/bin/python3", "-m", "http.server", "0", "--bind",
                               "127.0.0.1", "--directory", str(tmp_path)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        port = re.search(r"port (\d+)", server.stdout.readline()).group(1)
        url = (f"http://127.0.0.1:{port}/site/index.html#profileURL="
               f"http://127.0.0.1:{port}/data/profile.json")
        if view:
            url += f"&view={view}"
        # Each Chromium its own profile directory: one still exiting holds its directory's
        # lock, and another started on it hands the page over and exits with nothing.
        def flags(run_name):
            return ["/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-quic", "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={tmp_path / ('chromium-' + run_name)}",
                    "--virtual-time-budget=15000", f"--window-size=1400,{height}"]
        shot = tmp_path / "speedscope.png"
        # A loaded profile names the page ("profile.json - speedscope"), and the sandwich
        # view has its table ("Symbol Name"). On a loaded host the page was once dumped
        # without the frames (a run of the whole suite): the dump is taken again, three
        # times at most, until the page is ready; the checks are the caller's.
        ready = ["<title>profile.json - speedscope</title>"]
        if view == "sandwich":
            ready.append(">Symbol Name<")
        for attempt in range(3):
            dom = run(flags(f"dom{attempt}") + ["--dump-dom", url],
                      timeout=120).stdout.decode(errors="replace")
            if all(r in dom for r in ready):
                break
        run(flags("shot") + [f"--screenshot={shot}", url], timeout=120)
    finally:
        server.terminate()
        server.wait()
    title = re.search(r"<title>(.*?)</title>", dom)
    return {"dom": dom, "title": title.group(1) if title else "", "shot": shot}
