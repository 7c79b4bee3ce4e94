#!/usr/bin/env python3
"""The container filter's cost (issue 39; `make bench-containers`), from bpf_stats: ns per
run of the hooks, each variant in turn for several rounds (medians), beside a baseline build
when one is given (--baseline), in the same run.

1. top -c CGROUP, CGROUP a podman container's, while tr2u runs on the host, outside the
   filter: what sys_enter/sys_exit cost a process the filter leaves out (one look-up of its
   slot). Beside it: top with no filter (tr2u traced), and the floor (a no-op hook pair).
2. snoop --container A while A and the host write with O_DIRECT: the block programs' cost
   (a baseline without --container is given A's cgroup with -c).

Needs root and podman (tests/containers.py makes the container). Prints a Markdown table.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "scripts"))
import containers  # noqa: E402
from bench_ledger import bpf_programs, run_time_stats  # noqa: E402

SYSCALL_PROGS = ("handle_sys_enter", "handle_sys_exit")
BLOCK_PROGS = ("handle_block_io_start", "handle_block_rq_issue", "handle_block_rq_complete")


def stats(ids, names):
    """(run_time_ns, run_cnt) of the programs ids by name (the floor's named floor_*)."""
    out = {}
    for p in bpf_programs():
        name = p.get("name", "").replace("floor_", "handle_")
        if p["id"] in ids and name in names:
            out[name] = (p.get("run_time_ns", 0), p.get("run_cnt", 0))
    return out


def measure(tool_argv, names, work):
    """Starts tool_argv, runs work() once its programs are attached; ns per run of each of
    its programs during work() (other tools' programs, loaded meanwhile, left out)."""
    before = {p["id"] for p in bpf_programs()}
    tool = subprocess.Popen(tool_argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(400):
            ids = {p["id"] for p in bpf_programs() if p["id"] not in before and
                   p.get("name", "").replace("floor_", "handle_") in names}
            if len(ids) == len(names):
                break
            time.sleep(0.025)
        time.sleep(0.5)
        a = stats(ids, names)
        work()
        b = stats(ids, names)
    finally:
        tool.terminate()
        tool.wait(timeout=60)
    return {n: (b[n][0] - a[n][0]) / (b[n][1] - a[n][1])
            for n in names if n in a and n in b and b[n][1] > a[n][1]}


def tr2u(tmp):
    def work():
        with open(tmp / "in", "rb") as fin, open(tmp / "out", "wb") as fout:
            subprocess.run([str(ROOT / "workloads" / "tr2u"), "a", "b"], stdin=fin,
                           stdout=fout, check=True)
    return work


def writes(tmp, c):
    def work():
        gate = subprocess.Popen(["podman", "exec", c.name, "dd", "if=/dev/zero",
                                 "of=/data/bench", "bs=4k", "count=3000", "oflag=direct"],
                                env=containers.ENV, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        subprocess.run(["dd", "if=/dev/zero", f"of={tmp}/host", "bs=4k", "count=3000",
                        "oflag=direct"], check=True, capture_output=True)
        gate.wait(timeout=120)
    return work


def table(results, names):
    rows = [f"| variant | {' | '.join(n.replace('handle_', '') for n in names)} |",
            "|---|" + "---|" * len(names)]
    for label, samples in results.items():
        cells = [f"{statistics.median(samples[n]):.0f}" if samples.get(n) else "n/a"
                 for n in names]
        rows.append(f"| {label} | {' | '.join(cells)} |")
    return rows


def run_rounds(variants, names, work, rounds):
    results = {label: {n: [] for n in names} for label in variants}
    for _ in range(rounds):
        for label, argv in variants.items():
            for n, ns in measure(argv, names, work).items():
                results[label][n].append(ns)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--baseline", metavar="IOTRACE", help="an earlier build, measured alike")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    iot = str(ROOT / "iotrace")
    with run_time_stats(), tempfile.TemporaryDirectory() as d, containers.Podman() as pm:
        tmp = Path(d)
        subprocess.run([str(ROOT / "workloads" / "mkinput"), str(1 << 20),
                        str(tmp / "in")], check=True)
        vol = tmp / "vol"
        vol.mkdir()
        c = pm.run("bench", volume=vol)
        rel = next(l[3:].strip() for l in open(f"/proc/{c.pid}/cgroup")
                   if l.startswith("0::"))
        top = {"top -c CONTAINER (tr2u outside)": [iot, "top", "-b", "-d", "1", "-c", rel],
               "top, no filter (tr2u traced)": [iot, "top", "-b", "-d", "1"],
               "floor (no-op hook pair)": [str(ROOT / ".output/bench/floor"), "--",
                                           "sleep", "3600"]}
        snoop = {"snoop --container A": [iot, "snoop", "--container", c.name]}
        if args.baseline:
            top["baseline: top -c CONTAINER"] = [args.baseline, "top", "-b", "-d", "1",
                                                 "-c", rel]
            snoop["baseline: snoop -c A's cgroup"] = [args.baseline, "snoop", "-c", rel]
        res = run_rounds(top, SYSCALL_PROGS, tr2u(tmp), args.rounds)
        print("\n".join(table(res, SYSCALL_PROGS)) + "\n")
        res = run_rounds(snoop, BLOCK_PROGS, writes(tmp, c), args.rounds)
        print("\n".join(table(res, BLOCK_PROGS)))


if __name__ == "__main__":
    main()
