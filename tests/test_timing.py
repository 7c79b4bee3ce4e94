"""Sampled timing and log-linear histograms (docs/run-mode.md, "Timing"): the sampling rule is
visible and exact in the report, --time-all times every call, the bucket math holds against
a reference implementation, and quantiles read from the buckets agree with exact per-request
latencies of the same run (its --trace timeline)."""
import json
import re
import subprocess
import sys
import time

import pytest

from helpers import (IOTRACE, ROOT, iotrace_json, mkinput, real_processes, run, timed_or_late,
                     wl)

sys.path.insert(0, str(ROOT / "scripts"))
# The exact per-request reference: the same reader make bench uses.
from bench_timing import exact_quantile, trace_latencies  # noqa: E402

WARMUP, PERIOD = 1000, 64


def test_bucket_math_against_a_reference():
    res = subprocess.run([ROOT / ".output/tests/hist_test"], capture_output=True, text=True,
                         timeout=300)
    lines = res.stdout.splitlines()
    assert res.returncode == 0 and len(lines) == 6, res.stdout + res.stderr
    assert all(line.startswith("ok ") for line in lines), lines


def tr2u_report(tmp_path, *options):
    src = mkinput(tmp_path / "in", 200001, "-r")
    report, res = iotrace_json([wl("tr2u"), "a", "b"], tmp_path, stdin_path=src,
                               options=list(options))
    assert res.returncode == 0, res.stderr
    return report, real_processes(report)[0]


def test_sampling_rule_is_visible_and_exact(tmp_path):
    report, proc = tr2u_report(tmp_path)
    timing = report["timing"]
    assert timing["mode"] == "sampled"
    assert (timing["warmup_calls"], timing["sample_period"]) == (WARMUP, PERIOD)
    rows = proc["syscalls"]
    assert timing["calls"] == sum(r["calls"] for r in report["totals"]["syscalls"].values())
    assert timing["timed_calls"] == sum(r["timed_calls"]
                                        for r in report["totals"]["syscalls"].values())
    for name, r in rows.items():
        # Every call is counted; the first WARMUP of each syscall (per CPU) are all timed.
        assert r["timed_calls"] <= r["calls"], name
        if r["calls"] <= WARMUP:
            assert r["timed_calls"] == r["calls"], name
    read = rows["read"]
    # 200,002 reads: the warm-up (1,000 per CPU the thread ran on), then 1 in 2, 4 ... 64 as
    # the calls double (500 timed in each doubling until the period reaches 64 at 32,000
    # calls), then about 1 in 64.
    ncpus = len(re.findall(r"^processor", open("/proc/cpuinfo").read(), re.M))
    doublings = (WARMUP // 2) * (PERIOD.bit_length() - 2)
    assert WARMUP + (read["calls"] - 32 * WARMUP * ncpus) / PERIOD * 0.8 < read["timed_calls"]
    assert read["timed_calls"] < (WARMUP + doublings * 1.2) * ncpus + read["calls"] / PERIOD * 1.2
    # The latency histogram estimates every call: a timed call after the warm-up counts for
    # PERIOD calls (the mean gap), so its count is the number of calls, within the sampling's
    # error; min and max lie in its buckets.
    for kind in ("read", "write"):
        lat, calls = proc["io"][kind]["latency_ns"], rows[kind]["calls"]
        assert abs(lat["count"] - calls) <= 0.05 * calls, (kind, lat["count"], calls)
        assert lat["buckets"][0]["lo"] <= lat["min"] and lat["max"] <= lat["buckets"][-1]["hi"]
    # A syscall called fewer than WARMUP times: timed every time, its histogram exact.
    pread = proc["io"]["pread64"]
    assert pread["latency_ns"]["count"] == rows["pread64"]["calls"] == pread["calls"]
    assert report["drops"]["untimed_calls"] == 0
    text = run([IOTRACE, "--", wl("tr2u"), "a", "b"], stdin=open(tmp_path / "in", "rb"))
    table = text.stderr.decode()
    assert re.search(r"^ *[\d.]+ +≈[\d.]+ +\d+ +200003 +read$", table, re.M), table
    assert ("≈ estimated: each syscall's first 1000 calls (per CPU) timed, then 1 in 2..64 as "
            "its calls double, weighted" in table)


def test_time_all_times_every_call(tmp_path):
    report, proc = tr2u_report(tmp_path, "--time-all")
    assert report["timing"]["mode"] == "all"
    assert report["timing"]["timed_calls"] == report["timing"]["calls"]
    for name, r in proc["syscalls"].items():
        assert r["timed_calls"] == r["calls"], name
    assert proc["io"]["read"]["latency_ns"]["count"] == proc["syscalls"]["read"]["calls"]


def test_no_time(tmp_path):
    report, proc = tr2u_report(tmp_path, "--no-time")
    calls = sum(r["calls"] for r in report["totals"]["syscalls"].values())
    assert report["timing"] == {"mode": "off", "warmup_calls": None, "sample_period": None,
                                "calls": calls, "timed_calls": 0}
    assert all(r["total_ns"] is None and r["timed_calls"] == 0
               for r in proc["syscalls"].values())
    bad = run([IOTRACE, "--time-all", "--no-time", "--", "true"])
    assert bad.returncode == 1 and "contradict" in bad.stderr.decode()


def fine_width(v):
    """Width of the log-linear bucket holding v (bpf/buckets.h: 8 per power of two)."""
    return 1 if v < 16 else 1 << (v.bit_length() - 4)


@pytest.mark.parametrize("depth", [1, 32])
def test_block_quantiles_agree_with_exact_latencies(tmp_path, depth):
    """fio O_DIRECT random reads at queue depth 1 and 32: iotrace's block read p50/p90/p99,
    read from its log-linear buckets, lie in the bucket of the exact quantile of the same
    requests' latencies, one by one from the run's own timeline: within one bucket's width,
    at most 1/8 of the value."""
    target = mkinput(tmp_path / "f", "64m", "-r")
    engine = ["--ioengine=psync"] if depth == 1 else ["--ioengine=io_uring", "--iodepth=32"]

    def run_once():
        report, res = iotrace_json(
            ["fio", "--name=q", f"--filename={target}", "--rw=randread", "--direct=1",
             "--bs=4k", "--number_ios=3000", "--size=64m", "--output=/dev/null", *engine],
            tmp_path, options=["--trace", str(tmp_path / "t.json"), "--trace-min", "0"],
            timeout=300)
        assert res.returncode == 0, res.stderr
        trace = json.loads((tmp_path / "t.json").read_text())
        # fio's job process (its parent lays the file out and reads little).
        job = max((p for p in real_processes(report) if p["comm"] == "fio"),
                  key=lambda p: p["block"].get("read", {}).get("requests", 0))
        exact = trace_latencies(trace, job["pid"], "read")
        hist = job["block"]["read"]["latency_ns"]
        assert hist["count"] == len(exact)
        # A completion the kernel skipped has no latency (docs/block.md, "Late completions").
        return (exact, hist), job["block"]["read"]["requests"], hist["count"], \
            report["drops"]["block_completions_unseen"]

    exact, hist = timed_or_late(run_once)
    for q, key in ((0.5, "p50"), (0.9, "p90"), (0.99, "p99")):
        want = exact_quantile(exact, q)
        assert abs(hist[key] - want) < fine_width(want), (key, hist[key], want)
