#!/usr/bin/env python3
"""What `iotrace top` costs (`make bench-top`): tr2u's time per syscall untraced, under the
hook floor, under run mode (`iotrace --json`) and while `iotrace top -b -d 1` watches the
whole machine, interleaved RUNS times (medians); and top's own CPU time per refresh, while
tr2u runs and on the machine alone. Prints a markdown table for docs/top.md. Needs root.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import CMDTIME, FLOOR, IOTRACE, WL, command_time

N = 500001


def tr2u_calls(rnd, tmp):
    """tr2u's syscalls, as run mode counts them (equal to strace's: tests/test_syscalls.py)."""
    out = tmp / "calls.json"
    with open(rnd, "rb") as fin:
        subprocess.run([IOTRACE, "--json", "-o", out, "--", WL / "tr2u", "a", "b"], stdin=fin,
                       stdout=subprocess.DEVNULL, check=True)
    return sum(s["calls"] for s in json.loads(out.read_text())["totals"]["syscalls"].values())


def start_top(tmp, name):
    stats = tmp / f"{name}.cpu"
    top = subprocess.Popen([IOTRACE, "top", "-b", "-d", "1", "--cpu-stats", stats],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert top.stdout.readline(), top.stderr.read()  # loaded and refreshing
    return top, stats


def stop_top(top, stats):
    top.send_signal(2)
    top.communicate(timeout=30)
    return json.loads(stats.read_text())


def crowded(tmp, rnd, procs, secs):
    """top's CPU with procs more processes, each reading 4 KiB twice a second (paced)."""
    top, stats = start_top(tmp, "crowd")
    kids = [subprocess.Popen([WL / "paced", "-m", "read", "-b", "4k", "-r", "2", "-t",
                              str(secs + 30), rnd]) for _ in range(procs)]
    time.sleep(secs)
    result = stop_top(top, stats)
    for k in kids:
        k.kill()
        k.wait()
    return result


def one_run(tool, rnd, tmp):
    cmd_out = tmp / "cmdtime.out"
    cmd_out.unlink(missing_ok=True)
    argv = [str(CMDTIME), str(cmd_out), "--", str(WL / "tr2u"), "a", "b"]
    if tool == "run mode":
        argv = [str(IOTRACE), "--json", "-o", str(tmp / "run.json"), "--"] + argv
    elif tool == "floor":
        argv = [str(FLOOR), "--"] + argv
    with open(rnd, "rb") as fin:
        subprocess.run(argv, stdin=fin, stdout=subprocess.DEVNULL, check=True)
    return command_time(cmd_out)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--idle", type=int, default=10, help="seconds of top on the machine alone")
    ap.add_argument("--procs", type=int, default=500, help="processes of the crowded run")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-top-"))
    rnd = tmp / "random.in"
    subprocess.run([WL / "mkinput", "-r", str(N), rnd], check=True)
    calls = tr2u_calls(rnd, tmp)
    times = {t: [] for t in ("untraced", "floor", "run mode", "top -b")}
    top_cpu = []
    for _ in range(args.runs):
        for tool in ("untraced", "floor", "run mode"):
            times[tool].append(one_run(tool, rnd, tmp))
        top, stats = start_top(tmp, "busy")
        times["top -b"].append(one_run("untraced", rnd, tmp))
        top_cpu.append(stop_top(top, stats))
    top, stats = start_top(tmp, "idle")
    time.sleep(args.idle)
    idle = stop_top(top, stats)
    crowd = crowded(tmp, rnd, args.procs, args.idle)
    base = statistics.median(times["untraced"])
    print(f"tr2u: {calls} syscalls, {args.runs} interleaved runs, medians "
          f"({os.cpu_count()} CPUs, kernel {os.uname().release})\n")
    print("| tr2u under | time (s) | ns per syscall | over untraced (ns per syscall) |")
    print("| --- | --- | --- | --- |")
    for tool, ts in times.items():
        m = statistics.median(ts)
        print(f"| {tool} | {m:.3f} | {m / calls * 1e9:.0f} | {(m - base) / calls * 1e9:+.0f} |")
    busy_ms = [c["refresh_cpu_s"] / c["refreshes"] * 1e3 for c in top_cpu if c["refreshes"]]
    print("\n| top -b -d 1 | refreshes | CPU per refresh (ms) | CPU per second, ticks included "
          "(ms) |")
    print("| --- | --- | --- | --- |")
    by_refresh = sorted(top_cpu, key=lambda c: c["refresh_cpu_s"] / max(c["refreshes"], 1))
    for name, c in [("while tr2u ran (median of runs)", by_refresh[len(by_refresh) // 2]),
            ("machine alone", idle), (f"+{args.procs} processes", crowd)]:
        print(f"| {name} | {c['refreshes']} | {c['refresh_cpu_s'] / max(c['refreshes'], 1) * 1e3:.2f}"
              f" | {c['loop_cpu_s'] / c['loop_s'] * 1e3:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
