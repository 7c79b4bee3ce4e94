#!/usr/bin/env python3
"""How soon iotrace's report is out after the traced command ends (issue 41: within 1 s of the
end of a 20,000-process run).

The command is a shell starting /bin/true PROCS times; its last act writes the time
(`date +%s%N`, CLOCK_REALTIME), and the latency is from then to iotrace's exit (the report
written and closed). Each build given runs in turn (A B A B ...) RUNS times per output kind
(text; json: --json; summary: -s); the table gives medians with (min–max) and the median of
the paired ratios to the baseline. Run alone: `scripts/bench_latency.py --baseline OTHER_IOTRACE`.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IOTRACE = ROOT / "iotrace"
KINDS = {"text": [], "json": ["--json"], "summary": ["-s"]}
LATENCY_MS = 1000  # the bound


def once(iotrace, args, procs, tmp):
    """(ms from the command's end to iotrace's exit, iotrace's own CPU µs per process), or
    None when the run failed. Own CPU: iotrace's rusage (wait4: with the command's, which it
    waited for) less the command's, which the shell's `times` gives (10 ms ticks)."""
    stamp, report, times = tmp / "end.ns", tmp / "report.out", tmp / "times.out"
    for f in (stamp, report, times):
        f.unlink(missing_ok=True)
    cmd = ["sh", "-c", f"for i in $(seq {procs}); do /bin/true; done; times > {times}; "
           f"date +%s%N > {stamp}"]
    proc = subprocess.Popen([str(iotrace), "-o", str(report)] + args + ["--"] + cmd,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    done = time.time_ns()
    if proc.returncode or not stamp.exists() or not report.stat().st_size:
        return None
    command_s = sum(float(m) * 60 + float(s) for m, s in
                    re.findall(r"(\d+)m([\d.]+)s", times.read_text()))
    own_us = max(0.0, usage.ru_utime + usage.ru_stime - command_s) * 1e6 / procs
    return (done - int(stamp.read_text())) / 1e6, own_us


def report_latency(builds, procs, runs, kinds=KINDS):
    """{kind: {build: {median_ms, min_ms, max_ms}, "ratio": median of paired ratios of the
    first build to the second}}; builds: {name: path}, the first this build."""
    out = {}
    with tempfile.TemporaryDirectory(dir="/var/tmp") as t:
        tmp = Path(t)
        for kind, args in kinds.items():
            ms = {name: [] for name in builds}
            own = {name: [] for name in builds}
            ratios = []
            for _ in range(runs):
                pair = {name: once(path, args, procs, tmp) for name, path in builds.items()}
                for name, v in pair.items():
                    if v is not None:
                        ms[name].append(v[0])
                        own[name].append(v[1])
                vals = [v and v[0] for v in pair.values()]
                if len(vals) == 2 and None not in vals and vals[1] > 0:
                    ratios.append(vals[0] / vals[1])
            out[kind] = {name: {"median_ms": statistics.median(v), "min_ms": min(v),
                                "max_ms": max(v), "runs": len(v),
                                "own_cpu_us_per_process": statistics.median(own[name])}
                         if v else None for name, v in ms.items()}
            out[kind]["ratio"] = statistics.median(ratios) if ratios else None
    return {"procs": procs, "kinds": out}


def latency_lines(lat):
    """Markdown rows of report_latency's result."""
    if not lat:
        return []
    names = [n for n in next(iter(lat["kinds"].values())) if n != "ratio"]
    rows = [f"Report latency: from the end of a {lat['procs']:,}-process command (`sh -c` of "
            f"/bin/true) to iotrace's exit, ms, median (min–max); bound ≤ {LATENCY_MS} ms.",
            "Beside each: iotrace's own CPU (the loader's, start to report) per process "
            "of the command, µs.",
            "", "| output | " + " | ".join(names) + " | paired ratio |",
            "|---" * (len(names) + 2) + "|"]
    for kind, row in lat["kinds"].items():
        cells = [f"{c['median_ms']:.0f} ({c['min_ms']:.0f}–{c['max_ms']:.0f}); "
                 f"{c.get('own_cpu_us_per_process', 0):.0f} µs" if c else "n/a"
                 for c in (row[n] for n in names)]
        ratio = f"×{row['ratio']:.2f}" if row.get("ratio") else "—"
        rows.append(f"| {kind} | " + " | ".join(cells) + f" | {ratio} |")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--procs", type=int, default=20000)
    ap.add_argument("--baseline", metavar="IOTRACE", help="an earlier build, run in turn")
    ap.add_argument("--kind", action="append", choices=list(KINDS),
                    help="only this output kind (repeatable)")
    args = ap.parse_args()
    builds = {"iotrace": IOTRACE}
    if args.baseline:
        builds["baseline iotrace"] = args.baseline
    kinds = {k: KINDS[k] for k in args.kind} if args.kind else KINDS
    lat = report_latency(builds, args.procs, args.runs, kinds)
    print("\n".join(latency_lines(lat)))
    print(json.dumps(lat, indent=1))


if __name__ == "__main__":
    sys.exit(main())
