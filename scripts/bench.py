#!/usr/bin/env python3
"""Overhead of iotrace against strace, perf trace, bpftrace and the hook floor (`make bench`).

Every workload runs untraced and under each tool, interleaved (round-robin) RUNS times; the
table gives medians (min–max) and ratios to the untraced median, plus whether each tool's
read/write counts equal strace's. Writes docs/performance.md, docs/performance.png and
docs/performance.json. Needs root; mounts tracefs for perf and bpftrace if it is missing.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_latency import LATENCY_MS, latency_lines, report_latency
from bench_ledger import ledger_scale, memory_watch, process_program_us, program_ns
from bench_timing import accuracy_lines, block_accuracy, syscall_accuracy

ROOT = Path(__file__).resolve().parent.parent
IOTRACE = ROOT / "iotrace"
FLOOR = ROOT / ".output/bench/floor"
CMDTIME = ROOT / ".output/bench/cmdtime"
WL = ROOT / "workloads"

# bpftrace equivalent of iotrace's read/write size and latency histograms.
BPFTRACE_SCRIPT = r"""
tracepoint:syscalls:sys_enter_read,tracepoint:syscalls:sys_enter_write
/pid == cpid/ { @start[tid] = nsecs; }
tracepoint:syscalls:sys_exit_read /pid == cpid && @start[tid]/ {
  @reads = count(); @read_lat = hist(nsecs - @start[tid]); @read_size = hist(args->ret);
  delete(@start[tid]); }
tracepoint:syscalls:sys_exit_write /pid == cpid && @start[tid]/ {
  @writes = count(); @write_lat = hist(nsecs - @start[tid]); @write_size = hist(args->ret);
  delete(@start[tid]); }
"""


def ensure_tracefs():
    if not os.path.exists("/sys/kernel/tracing/events"):
        subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"],
                       stderr=subprocess.DEVNULL)


def evict(paths):
    """Drops these files' pages from the page cache. Only the workload's input: a global
    drop_caches would also evict the tools' own binaries and libraries, and time their
    cold start instead of their tracing."""
    subprocess.run(["sync"], check=True)
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


class Workload:
    def __init__(self, name, argv, stdin=None, cold=(), short=False, same_calls=True):
        """cold: input files evicted from the page cache before every run. short: a
        command of milliseconds, run SHORT_SCALE times as often (its noise is larger).
        same_calls: it makes the same reads and writes every run, so that counts of
        separate runs compare (fio's depend on timing: tests/test_uring.py compares
        them with strace's in one run)."""
        self.name, self.argv, self.stdin, self.cold = name, argv, stdin, list(cold)
        self.scale = SHORT_SCALE if short else 1
        self.same_calls = same_calls


SHORT_SCALE = 3


def workloads(tmp, quick):
    n = 50001 if quick else 500001
    rnd = tmp / "random.in"
    subprocess.run([WL / "mkinput", "-r", str(n), rnd], check=True)
    big = tmp / "big.in"
    subprocess.run([WL / "mkinput", "-r", "96m" if quick else "256m", big], check=True)
    tw = tmp / "tw.in"
    subprocess.run([WL / "mkinput", "-r", "1310720", tw], check=True)
    subprocess.run(["sync"], check=True)
    return [
        # An empty command: what each tool costs before and after the command (start-up,
        # teardown, report), which the command-time table leaves out.
        Workload("true (fixed cost)", ["/bin/true"], short=True),
        Workload("tr2u", [str(WL / "tr2u"), "a", "b"], stdin=rnd),
        Workload("tr2b", [str(WL / "tr2b"), "a", "b"], stdin=rnd, short=True),
        Workload("copy b=1", [str(WL / "copy"), "-m", "rw", "-b", "1", str(rnd),
                              str(tmp / "copy.out")]),
        Workload("copy b=8k", [str(WL / "copy"), "-m", "rw", "-b", "8k", str(rnd),
                               str(tmp / "copy.out")], short=True),
        Workload("timewrite", [str(WL / "timewrite"), str(tmp / "tw.out")], stdin=tw,
                 short=True),
        # Process-heavy, like a shell script or a build: what each new process costs.
        Workload("sh: 300 × /bin/true", ["/bin/sh", "-c", "for i in $(seq 300); do /bin/true; "
                                         "done"]),
        Workload("read-file cold 64M", [str(WL / "read-file"), "-n", "16m" if quick else "64m",
                                        str(big)], cold=[big], short=True),
        # io_uring: 4 KiB O_DIRECT random reads at queue depth 16, no read/write syscalls.
        Workload("fio io_uring randread", [
            "fio", "--name=j", f"--filename={big}", "--ioengine=io_uring", "--rw=randread",
            "--direct=1", "--bs=4k", "--iodepth=16", f"--size={'4m' if quick else '32m'}",
            "--output=/dev/null"], same_calls=False),
    ]


def tools(tmp, baseline=None, only=None):
    """name -> function(argv, out_path) -> command line; out_path collects the tool's output.
    baseline: another iotrace binary (an earlier build) timed in the same run; only: keep
    these tools (and "untraced")."""
    bt = tmp / "hist.bt"
    bt.write_text(BPFTRACE_SCRIPT)
    found = {
        "untraced": lambda argv, out: argv,
        "iotrace": lambda argv, out: [str(IOTRACE), "--json", "-o", str(out), "--"] + argv,
        "iotrace --time-all": lambda argv, out: [str(IOTRACE), "--time-all", "--json", "-o",
                                                 str(out), "--"] + argv,
        "iotrace --no-time": lambda argv, out: [str(IOTRACE), "--no-time", "--json", "-o",
                                                str(out), "--"] + argv,
        "strace -f -c": lambda argv, out: ["strace", "-f", "-c", "-o", str(out)] + argv,
        "perf trace -s": lambda argv, out: ["perf", "trace", "-s", "-o", str(out), "--"] + argv,
        # bpftrace -c splits its command on blanks (no shell): an argument with blanks can't
        # be passed, and such a row says so instead of timing a broken command.
        "bpftrace hist": lambda argv, out: None if any(" " in a for a in argv) else [
            "bpftrace", "-o", str(out), str(bt), "-c", " ".join(argv)],
        "floor (no-op tp_btf)": lambda argv, out: [str(FLOOR), "--"] + argv,
        # The timeline and the stacks, on the workloads their issues name (ONLY_ON).
        "iotrace --trace": lambda argv, out: [str(IOTRACE), "--trace", str(out) + ".trace",
                                              "--json", "-o", str(out), "--"] + argv,
        "iotrace --stacks": lambda argv, out: [str(IOTRACE), "--stacks", str(out) + ".folded",
                                               "--json", "-o", str(out), "--"] + argv,
        "iotrace --stacks dwarf": lambda argv, out: [
            str(IOTRACE), "--stacks", str(out) + ".folded", "--stacks-unwind", "dwarf",
            "--json", "-o", str(out), "--"] + argv,
    }
    if baseline:
        found["baseline iotrace"] = lambda argv, out: [baseline, "--json", "-o", str(out),
                                                       "--"] + argv
        found["baseline iotrace --no-time"] = lambda argv, out: [
            baseline, "--no-time", "--json", "-o", str(out), "--"] + argv
    return {k: v for k, v in found.items()
            if not only or k == "untraced" or k.startswith("baseline") or k in only}


# Tools measured on some workloads only (the rest of their column says so).
ONLY_ON = {"iotrace --trace": {"tr2u", "read-file cold 64M"},
           "iotrace --stacks": {"tr2u", "copy b=8k"},
           "iotrace --stacks dwarf": {"tr2u", "copy b=8k"}}


def timed(argv, cmd_out):
    """argv run through bench/cmdtime, which records its own time, exec to exit."""
    return [str(CMDTIME), str(cmd_out), "--"] + argv


def command_time(cmd_out, timeout=2.0):
    """What cmdtime recorded (seconds). Its watcher may finish just after the tool exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = Path(cmd_out).read_text() if Path(cmd_out).exists() else ""
        if text.endswith("\n"):
            return int(text) / 1e9
        time.sleep(0.005)
    return None


def run_once(cmd, stdin, cold, cmd_out):
    """(whole-command wall time, the command's own time, CompletedProcess)."""
    if cold:
        evict(cold)
    Path(cmd_out).unlink(missing_ok=True)
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
    start = time.monotonic()
    res = subprocess.run(cmd, stdin=fin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.monotonic() - start
    if stdin:
        fin.close()
    return wall, command_time(cmd_out) if res.returncode == 0 else None, res


def counts(tool, out):
    """(reads, writes) a tool reported, or None when it reports none."""
    text = Path(out).read_text(errors="replace") if Path(out).exists() else ""
    if "iotrace" in tool:
        s = json.loads(text)["totals"]["syscalls"]
        return s.get("read", {}).get("calls", 0), s.get("write", {}).get("calls", 0)
    if tool.startswith("strace") or tool.startswith("perf"):
        total = {"read": 0, "write": 0}
        for line in text.splitlines():
            f = line.split()
            # strace: "... calls errors syscall"; perf: "syscall calls errors total ..."
            if tool.startswith("strace") and f and f[-1] in total and len(f) >= 5:
                total[f[-1]] += int(f[3])
            elif tool.startswith("perf") and len(f) >= 3 and f[0] in total and f[1].isdigit():
                total[f[0]] += int(f[1])
        return total["read"], total["write"]
    if tool.startswith("bpftrace"):
        r = re.search(r"@reads: (\d+)", text)
        w = re.search(r"@writes: (\d+)", text)
        return int(r.group(1)) if r else 0, int(w.group(1)) if w else 0
    return None


def startup_ms(runs, env=None, iotrace=IOTRACE):
    """iotrace exec -> CMD exec: CMD prints CLOCK_MONOTONIC at its start."""
    probe = [sys.executable, "-c", "import time; print(time.clock_gettime_ns(1))"]
    def once(cmd):
        t = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        out = subprocess.run(cmd, capture_output=True, text=True, env=env).stdout
        return (int(out.split()[-1]) - t) / 1e6
    plain = statistics.median(once(probe) for _ in range(runs))
    traced = statistics.median(once([str(iotrace), "-o", "/dev/null", "--"] + probe)
                               for _ in range(runs))
    return traced - plain


def memory(wl):
    """iotrace's peak RSS on a workload (all of it, and its own memory: RssAnon) and the BPF
    map memory of its programs (bench_ledger.memory_watch)."""
    _, hwm, anon, maps = memory_watch([str(IOTRACE), "-o", "/dev/null", "--"] + wl.argv,
                                      wl.stdin)
    return {"peak_rss_kib": hwm, "peak_anon_kib": anon, "bpf_map_bytes": maps}


def syscall_program_ns(wl, baseline, rounds):
    """ns per run of sys_enter/sys_exit on this workload (bpf_stats), this build's and the
    baseline's, timed and --no-time."""
    variants = {"iotrace": [str(IOTRACE), "-o", "/dev/null"],
                "iotrace --no-time": [str(IOTRACE), "--no-time", "-o", "/dev/null"],
                FLOOR_NAME: [str(FLOOR)]}
    if baseline:
        variants["baseline iotrace"] = [baseline, "-o", "/dev/null"]
        variants["baseline iotrace --no-time"] = [baseline, "--no-time", "-o", "/dev/null"]
    return program_ns(variants, wl.argv, wl.stdin, rounds)


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(results)
    tool_names = [t for t in next(iter(results.values())) if t != "untraced"]
    fig, axes = plt.subplots(2, 1, figsize=(10, 8))
    width = 0.8 / len(tool_names)
    for ax, key, title in ((axes[0], "ratio", "whole command line, tool included"),
                           (axes[1], "cmd_ratio", "the traced program's own time")):
        for i, tool in enumerate(tool_names):
            ys = [results[w][tool][key] or 0 for w in names]
            ax.bar([x + i * width for x in range(len(names))], ys, width, label=tool)
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(names))], names, fontsize=8)
        ax.set_yscale("log")
        ax.axhline(1, color="black", linewidth=0.8)
        ax.set_ylabel("time / untraced (log)")
        ax.set_title(f"Tracing overhead, {title} (median of interleaved runs)", fontsize=10)
    axes[0].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# Issue 7's targets: (label, workload, tool, bound on the command-time ratio).
TARGETS = [
    ("tr2u, with timing", "tr2u", "iotrace", 1.45),
    ("tr2u, timing off", "tr2u", "iotrace --no-time", 1.30),
    ("tr2b (buffered)", "tr2b", "iotrace", 1.02),
    ("copy b=8k (buffered)", "copy b=8k", "iotrace", 1.02),
    ("timewrite (buffered)", "timewrite", "iotrace", 1.02),
    ("cold 64 MiB read", "read-file cold 64M", "iotrace", 1.02),
]
FLOOR_NAME = "floor (no-op tp_btf)"


def target_lines(results, extra):
    """Markdown rows: each target of issue 7 against what this run measured."""
    rows = ["| target | bound | command time | whole command | floor, command time | met |",
            "|---|---|---|---|---|---|"]
    for label, wl, tool, bound in TARGETS:
        cell = results.get(wl, {}).get(tool)
        if not cell or cell["cmd_ratio"] is None:
            continue
        floor = results[wl].get(FLOOR_NAME, {}).get("cmd_ratio")
        rows.append(f"| {label} | ≤ ×{bound:.2f} | ×{cell['cmd_ratio']:.3f} | "
                    f"×{cell['ratio']:.2f} | {f'×{floor:.3f}' if floor else 'n/a'} | "
                    f"{'yes' if cell['cmd_ratio'] <= bound else 'no'} |")
    exact = all(row[t]["counts_equal_strace"] is not False
                for row in results.values() for t in row if "iotrace" in t)
    anon = extra["peak_anon_kib"] / 1024
    rows += [f"| start-up | ≤ 50 ms | {extra['startup_ms']:.0f} ms | | | "
             f"{'yes' if extra['startup_ms'] <= 50 else 'no'} |",
             f"| peak RSS, iotrace's own memory (RssAnon) | ≤ 20 MiB | {anon:.1f} MiB | | | "
             f"{'yes' if anon <= 20 else 'no'} |",
             f"| counts equal strace's | every row | {'yes' if exact else 'no'} | | | "
             f"{'yes' if exact else 'no'} |"]
    return rows


# Issue 41's bounds: start-up (exec to the command's exec, and `iotrace -- true` whole), the
# default's cost per call against the floor's, and the own time a short process gets added.
STARTUP_MS, WHOLE_TRUE_MS, PER_CALL_VS_FLOOR, PER_PROCESS_US = 60, 60, 1.35, 20
# ×1.35 of a floor that adds ~220 ns a call on the AMD SRSO host leaves ~77 ns of work for
# both programs together (docs/startup.md, "Part by part").
PROGRAMS_OVER_FLOOR_NS = 77
SHORT_PROCESSES = ("sh: 300 × /bin/true", 300)


def issue41_lines(results, extra, command):
    """Markdown rows: issue 41's targets, this build beside the baseline's in the same run."""
    def met(v, bound):
        return "n/a" if v is None else ("yes" if v <= bound else "no")

    def fmt(v, spec):
        return "n/a" if v is None else format(v, spec)

    def per_call_ratio(tool):
        c, f = command.get("tr2u", {}).get(tool), command.get("tr2u", {}).get(FLOOR_NAME)
        if not c or not f or not c["ns_per_call"] or not f["ns_per_call"]:
            return None
        return c["ns_per_call"] / f["ns_per_call"]

    def whole_true_ms(tool):
        cell = results.get("true (fixed cost)", {}).get(tool)
        return cell["median_s"] * 1e3 if cell and cell.get("median_s") else None

    def per_process_us(tool):
        wl, n = SHORT_PROCESSES
        row = results.get(wl, {})
        if not row.get(tool) or row[tool]["cmd_median_s"] is None:
            return None
        return (row[tool]["cmd_median_s"] - row["untraced"]["cmd_median_s"]) / n * 1e6

    latency = extra.get("report_latency") or {}
    kernel_us = extra.get("process_program_us") or {}
    prog_ns = extra.get("program_ns") or {}

    def over_floor_ns(tool):
        """The two syscall programs' own time per traced call over the floor's (bpf_stats:
        steady where a loaded host's command times are not)."""
        mine, floor = prog_ns.get(tool), prog_ns.get(FLOOR_NAME)
        if not mine or not floor or "handle_sys_exit" not in mine:
            return None
        return sum(mine.get(p, 0) for p in floor) - sum(floor.values())

    def process_kernel_us(tool):
        return (kernel_us.get(tool) or {}).get("total_us")

    def latency_ms(tool, kind="text", field="median_ms"):
        cell = (latency.get("kinds") or {}).get(kind, {}).get(tool)
        return cell.get(field) if cell else None

    rows = ["| target | bound | iotrace | baseline iotrace | met |", "|---|---|---|---|---|"]
    for label, bound, unit, spec, now, before in (
            ("start-up, iotrace exec → command exec", STARTUP_MS, " ms", ".0f",
             extra.get("startup_ms"), extra.get("baseline_startup_ms")),
            ("`iotrace -- /bin/true`, whole", WHOLE_TRUE_MS, " ms", ".0f",
             whole_true_ms("iotrace"), whole_true_ms("baseline iotrace")),
            ("tr2u: default's ns/call / the floor's", PER_CALL_VS_FLOOR, "", ".2f",
             per_call_ratio("iotrace"), per_call_ratio("baseline iotrace")),
            ("tr2u: --no-time's ns/call / the floor's", PER_CALL_VS_FLOOR, "", ".2f",
             per_call_ratio("iotrace --no-time"), per_call_ratio("baseline iotrace --no-time")),
            ("tr2u: the default's programs over the floor's, per call (bpf_stats)",
             PROGRAMS_OVER_FLOOR_NS, " ns", ".0f",
             over_floor_ns("iotrace"), over_floor_ns("baseline iotrace")),
            ("short process: own time added (sh, 300 × true)", PER_PROCESS_US, " µs", ".0f",
             per_process_us("iotrace"), per_process_us("baseline iotrace")),
            ("short process: its kernel time in iotrace's programs (bpf_stats)",
             PER_PROCESS_US, " µs", ".0f",
             process_kernel_us("iotrace"), process_kernel_us("baseline iotrace")),
            (f"report out after a {latency.get('procs', 20000):,}-process run's end",
             LATENCY_MS, " ms", ".0f",
             latency_ms("iotrace"), latency_ms("baseline iotrace")),
            (f"`--json` report out after a {latency.get('procs', 20000):,}-process run's end",
             LATENCY_MS, " ms", ".0f",
             latency_ms("iotrace", "json"), latency_ms("baseline iotrace", "json")),
            ("iotrace's own CPU per process of that run (text)", None, " µs", ".0f",
             latency_ms("iotrace", field="own_cpu_us_per_process"),
             latency_ms("baseline iotrace", field="own_cpu_us_per_process"))):
        x = "" if unit else "×"  # a ratio
        rows.append(f"| {label} | {'—' if bound is None else f'≤ {x}{bound}{unit}'} | "
                    f"{x if now else ''}{fmt(now, spec)}"
                    f"{unit if now else ''} | {x if before else ''}{fmt(before, spec)}"
                    f"{unit if before else ''} | {'—' if bound is None else met(now, bound)} |")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", "3")))
    ap.add_argument("--quick", action="store_true", help="small inputs (smoke test)")
    ap.add_argument("--out", default=str(ROOT / "docs"))
    ap.add_argument("--only", action="append", help="run only this workload (repeatable)")
    ap.add_argument("--tools", action="append", help="run only this tool (repeatable)")
    ap.add_argument("--baseline", metavar="IOTRACE",
                    help="also time this iotrace binary (an earlier build) in the same run")
    ap.add_argument("--render", metavar="JSON",
                    help="only rewrite the table and chart from an earlier performance.json")
    args = ap.parse_args()
    if args.render:
        data = json.loads(Path(args.render).read_text())
        args.runs, args.quick = data["runs"], data["quick"]
        out_dir = Path(args.out)
        plot(data["results"], out_dir / "performance.png")
        write_markdown(out_dir / "performance.md", data["results"], data, args)
        return
    if os.geteuid() != 0:
        sys.exit("bench.py: needs root (BPF): sudo make bench")
    ensure_tracefs()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    results = {}
    with tempfile.TemporaryDirectory(dir="/var/tmp") as t:
        tmp = Path(t)
        wls = [w for w in workloads(tmp, args.quick) if not args.only or w.name in args.only]
        tl = tools(tmp, args.baseline, args.tools)
        for wl in wls:
            print(f"  BENCH    {wl.name}", flush=True)
            walls = {name: [] for name in tl}
            cmds = {name: [] for name in tl}
            reported = {}
            errors = {}
            for _ in range(args.runs * wl.scale):
                for name, make in tl.items():
                    out, cmd_out = tmp / "tool.out", tmp / "cmdtime.out"
                    out.unlink(missing_ok=True)
                    if wl.name not in ONLY_ON.get(name, {wl.name}):
                        errors[name] = "not measured on this workload"
                        continue
                    cmd_line = make(timed(wl.argv, cmd_out), out)
                    if cmd_line is None:
                        errors[name] = "cannot pass an argument with blanks"
                        continue
                    wall, cmd, res = run_once(cmd_line, wl.stdin, wl.cold, cmd_out)
                    if res.returncode != 0 or cmd is None:
                        errors[name] = (res.stderr.decode(errors="replace").strip()[-200:]
                                        or "cmdtime recorded nothing")
                        continue
                    walls[name].append(wall)
                    cmds[name].append(cmd)
                    c = counts(name, out)
                    if c is not None:
                        reported.setdefault(name, c)
            base = statistics.median(walls["untraced"])
            cmd_base = statistics.median(cmds["untraced"])
            ref = reported.get("strace -f -c")
            row = {}
            for name in tl:
                w, c = walls[name], cmds[name]
                row[name] = {
                    "median_s": statistics.median(w) if w else None,
                    "min_s": min(w) if w else None, "max_s": max(w) if w else None,
                    "ratio": statistics.median(w) / base if w else None,
                    "cmd_median_s": statistics.median(c) if c else None,
                    "cmd_min_s": min(c) if c else None, "cmd_max_s": max(c) if c else None,
                    "cmd_ratio": statistics.median(c) / cmd_base if c else None,
                    "reads_writes": reported.get(name),
                    "counts_equal_strace": (reported.get(name) == ref
                                            if name in reported and ref and wl.same_calls
                                            else None),
                    "error": errors.get(name) if not w else None,
                }
            results[wl.name] = row
        tr2u = next((w for w in wls if w.name == "tr2u"), None)
        prog_ns = syscall_program_ns(tr2u, args.baseline, args.runs) if tr2u else {}
        proc_us = (process_program_us({"iotrace": IOTRACE, **({"baseline iotrace": args.baseline}
                                                             if args.baseline else {})},
                                      args.runs, SHORT_PROCESSES[1])
                   if any(w.name == SHORT_PROCESSES[0] for w in wls) else {})
        if args.tools:  # a partial run: the tables only, in --out
            extra = {"command_time": command_table(results), "partial": True,
                     "program_ns": prog_ns, "process_program_us": proc_us}
            (out_dir / "performance.json").write_text(json.dumps(
                {"runs": args.runs, "quick": args.quick, "results": results, **extra},
                indent=1) + "\n")
            print(json.dumps({k: extra[k] for k in ("command_time", "program_ns",
                                                    "process_program_us")}, indent=1))
            return
        extra = {"startup_ms": startup_ms(9),
                 "baseline_startup_ms": startup_ms(9, iotrace=args.baseline)
                 if args.baseline else None,
                 # CO-RE against the whole kernel BTF instead of the minimal one
                 # (user/kernel/kbtf.h)
                 "startup_full_btf_ms": startup_ms(9, {**os.environ, "IOTRACE_FULL_BTF": "1"})}
        extra.update(memory(tr2u or wls[-1]))
        extra["program_ns"] = prog_ns
        extra["process_program_us"] = proc_us
        extra["ledger"] = ledger_scale(IOTRACE, tmp, 2000 if args.quick else 50000)
        # The report's latency after a run of many short processes (text and --json;
        # bench_latency.py alone for -s).
        extra["report_latency"] = report_latency(
            {"iotrace": IOTRACE, **({"baseline iotrace": args.baseline} if args.baseline
                                    else {})},
            2000 if args.quick else 20000, args.runs, {"text": [], "json": ["--json"]})
        if tr2u:
            extra["trace_size"] = trace_size(tmp, tr2u)
        extra["accuracy"] = {"block": block_accuracy(IOTRACE, tmp, args.quick),
                             "syscall": syscall_accuracy(
                                 IOTRACE, accuracy_workloads(wls, tmp, args.quick),
                                 max(args.runs, 7))}
    extra["command_time"] = command_table(results)
    (out_dir / "performance.json").write_text(json.dumps(
        {"runs": args.runs, "quick": args.quick, "results": results, **extra}, indent=1) + "\n")
    plot(results, out_dir / "performance.png")
    write_markdown(out_dir / "performance.md", results, extra, args)


def trace_size(tmp, wl):
    """A --trace-min 0 timeline of a workload: its size per million events."""
    trace, report = tmp / "size.trace", tmp / "size.json"
    fin = open(wl.stdin, "rb") if wl.stdin else subprocess.DEVNULL
    subprocess.run([str(IOTRACE), "--trace", str(trace), "--trace-min", "0", "--json", "-o",
                    str(report), "--"] + wl.argv, stdin=fin, stdout=subprocess.DEVNULL,
                   check=True)
    events = json.loads(report.read_text())["trace"]["events"]
    size = trace.stat().st_size
    trace.unlink()
    return {"workload": wl.name, "events": events, "bytes": size,
            "bytes_per_million_events": size / events * 1e6 if events else None}


def accuracy_workloads(wls, tmp, quick):
    """The sampled-against---time-all comparison: (name, argv, stdin, cold). Each makes far
    more than the 1,000 calls a syscall is timed before sampling starts, or the comparison
    would only show run-to-run noise: tr2u as above, copy b=8k over the big input, and a cold
    read of it in 4 KiB reads (misses and hits: a wide distribution)."""
    size = "32m" if quick else "128m"
    mid = tmp / "mid.in"
    subprocess.run([WL / "mkinput", "-r", size, mid], check=True)
    out = [(w.name, w.argv, w.stdin, w.cold) for w in wls if w.name == "tr2u"]
    return out + [
        (f"copy b=8k, {size}", [str(WL / "copy"), "-m", "rw", "-b", "8k", str(mid),
                                str(tmp / "copy.out")], None, []),
        (f"read-file -b 4k cold, {size}", [str(WL / "read-file"), "-b", "4k", str(mid)], None,
         [mid])]


def command_table(results):
    """Per workload and tool: the command's own time / untraced, and for the syscall-heavy
    workloads the time each read/write call adds (from strace's count of them)."""
    out = {}
    for wl, row in results.items():
        base = row["untraced"]["cmd_median_s"]
        # strace's count of read/write calls, or iotrace's (equal to it: tested) without it.
        rw = row.get("strace -f -c", {}).get("reads_writes") or next(
            (c["reads_writes"] for t, c in row.items() if "iotrace" in t and c["reads_writes"]),
            None)
        calls = sum(rw) if rw else 0
        out[wl] = {}
        for tool, cell in row.items():
            if tool == "untraced" or cell["cmd_median_s"] is None or not base:
                continue
            extra = cell["cmd_median_s"] - base
            out[wl][tool] = {"ratio": cell["cmd_median_s"] / base,
                             "ns_per_call": extra / calls * 1e9 if calls > 100000 else None}
    return out


NOTES = """Reading the tables:

- Where start-up goes (verification, maps, attaching) and what the syscall programs cost
  per call: [startup.md](startup.md).

- The first table is the whole command line, tool included: its start-up, teardown and
  report weigh on commands of a few milliseconds (tr2b, copy b=8k, timewrite); the first
  row (/bin/true) is that fixed cost alone.
- The second table is what the traced program itself experiences: every command runs
  through `.output/bench/cmdtime` (bench/cmdtime.c), which execs it in place and records
  its wall time from the exec to its exit, so the tool's start-up and teardown fall
  outside. For the syscall-heavy rows (tr2u, copy b=1: a million read/write calls) it
  also gives the time each call adds.
- `perf trace -s` loses events under load (≠: its read/write counts differ from strace's).
- fio's own reads (of /proc, its job files) vary from run to run, so its row compares no
  counts across runs; tests/test_uring.py checks them against strace in one run.
- The bpftrace script follows only the process `-c` starts, so it misses read-file's child
  and the shell's children (≠ on those rows): a limit of the script, not of the counts it
  does see.
- strace's cost per syscall (~90 µs here) makes it hundreds of times slower on the
  syscall-heavy workloads."""


# Issue 17's cost targets: (workload, tool, bound on its ns/call over --no-time's).
TIMING_MODES = ("iotrace --no-time", "iotrace", "iotrace --time-all", FLOOR_NAME)


def timing_lines(results, extra):
    """Markdown: what each timing mode adds per read/write call on the syscall-heavy rows, and
    the sampled default against --no-time (target: at most 10% more per call)."""
    cmd = extra.get("command_time") or {}
    rows = [(wl, cmd[wl]) for wl in ("tr2u", "copy b=1") if wl in cmd]
    if not rows:
        return []
    lines = ["## Timing modes", "", "Time each read/write call adds to the traced program "
             "(its own time, exec to exit), per timing mode, in the same interleaved run: "
             "`--no-time` (no clock), the sampled default, `--time-all` (every call timed) and "
             "the floor (two no-op hooks). Target: the default at most 10% more per call "
             "than `--no-time`.", "",
             "| workload | " + " | ".join(TIMING_MODES) + " | default / --no-time | met |",
             "|---" * (len(TIMING_MODES) + 3) + "|"]
    for wl, row in rows:
        ns = {t: (row.get(t) or {}).get("ns_per_call") for t in TIMING_MODES}
        cells = [f"+{ns[t]:.0f} ns" if ns[t] is not None else "n/a" for t in TIMING_MODES]
        base, dflt = ns["iotrace --no-time"], ns["iotrace"]
        ratio = dflt / base if base and dflt else None
        lines.append(f"| {wl} | " + " | ".join(cells) +
                     (f" | ×{ratio:.2f} | {'yes' if ratio <= 1.10 else 'no'} |" if ratio
                      else " | n/a | |"))
    return lines + [""]


def timeline_lines(results, extra):
    """Markdown: what --trace and --stacks cost on the workloads their issues name."""
    cmd = extra.get("command_time") or {}
    rows = []
    for tool in ONLY_ON:
        for wl in sorted(ONLY_ON[tool]):
            c = (cmd.get(wl) or {}).get(tool)
            base = (cmd.get(wl) or {}).get("iotrace")
            if not c:
                continue
            ns = f"+{c['ns_per_call']:.0f} ns/call" if c["ns_per_call"] is not None else ""
            rows.append(f"| {tool} | {wl} | ×{c['ratio']:.3f} {ns} | "
                        f"{'×%.3f' % base['ratio'] if base else 'n/a'} |")
    if not rows:
        return []
    lines = ["## The timeline and the stacks", "",
             "The traced program's own time with `--trace FILE` (default `--trace-min 1ms`: "
             "every call timed, the slow ones and every block request written) and with "
             "`--stacks FILE` (frame pointers, and DWARF), ×untraced, beside plain iotrace "
             "in the same run.", "", "| tool | workload | command time | iotrace |",
             "|---|---|---|---|"] + rows
    size = extra.get("trace_size")
    if size and size.get("bytes_per_million_events"):
        lines += ["", f"A `--trace-min 0` timeline of {size['workload']} ({size['events']:,} "
                  f"events): {size['bytes'] / 2**20:.1f} MiB, "
                  f"{size['bytes_per_million_events'] / 2**20:.0f} MiB per million events."]
    return lines + [""]


def process_kernel_lines(extra, shown=8):
    """Where a short process's kernel time goes: bpf_stats per program, per process."""
    kernel_us = extra.get("process_program_us") or {}
    if not kernel_us:
        return []
    labels = list(kernel_us)
    first = kernel_us[labels[0]]["programs"]
    top = sorted(first, key=lambda n: -first[n])[:shown]
    lines = ["", f"A short process's kernel time in iotrace's programs, by program (µs per "
             f"process; `sh` starting /bin/true {SHORT_PROCESSES[1]} times, "
             "BPF_ENABLE_STATS, medians; each run of a program also carries the "
             "~60 ns the accounting adds, and other tasks' syscalls meanwhile count too):",
             "", "| program | " + " | ".join(labels) + " |",
             "|---|" + "---|" * len(labels)]
    for name in top:
        lines.append(f"| {name} | " + " | ".join(
            f"{kernel_us[label]['programs'].get(name, 0):.1f}" for label in labels) + " |")
    lines.append("| all programs (min–max) | " + " | ".join(
        f"{kernel_us[label]['total_us']:.1f} ({kernel_us[label]['min_us']:.0f}–"
        f"{kernel_us[label]['max_us']:.0f})" for label in labels) + " |")
    return lines


def ledger_lines(extra):
    """The per-file ledger's targets (issue 15): per-call cost against a baseline build,
    memory and losses at 50,000 files."""
    lines = ["## The per-file ledger", ""]
    prog = extra.get("program_ns") or {}
    if prog:
        lines += ["Time of the syscall programs per run on tr2u (BPF_ENABLE_STATS, "
                  "median of alternating runs; includes the ~2 clock reads the accounting "
                  "adds):", "", "| build | sys_enter ns | sys_exit ns |", "|---|---|---|"]
        for label, p in prog.items():
            lines.append(f"| {label} | {p.get('handle_sys_enter', 0):.0f} | "
                         f"{p.get('handle_sys_exit', 0):.0f} |"
                         if "no-time" not in label else
                         f"| {label} | — | {p.get('handle_sys_exit', 0):.0f} |")
        lines.append("")
    led = extra.get("ledger")
    if led:
        rss, maps = led["peak_rss_kib"] / 1024, led["bpf_map_bytes"] / 2**20
        lost = (led["drops_files"] or 0) + (led["drops_paths"] or 0)
        lines += [f"`tar cf - TREE | cat` over {led['files']:,} generated files "
                  f"({led['files_in_report']:,} of them in tar's ledger):", "",
                  "| target | bound | this run | met |", "|---|---|---|---|",
                  f"| BPF map memory | ≤ 64 MiB | {maps:.1f} MiB | {'yes' if maps <= 64 else 'no'} |",
                  f"| iotrace peak RSS | ≤ 100 MiB | {rss:.1f} MiB (own: "
                  f"{led['peak_anon_kib'] / 1024:.1f}) | {'yes' if rss <= 100 else 'no'} |",
                  f"| nothing lost (drops.files + drops.paths) | 0 | {lost} | "
                  f"{'yes' if lost == 0 and led['files_in_report'] == led['files'] else 'no'} |"]
    return lines


def write_markdown(path, results, extra, args):
    lines = ["# Performance: iotrace against strace, perf trace, bpftrace and the floor", "",
             "Generated by `make bench` (scripts/bench.py) on this machine: "
             f"{os.cpu_count()} CPUs, kernel {os.uname().release}; {args.runs} interleaved "
             f"runs per cell ({args.runs * SHORT_SCALE} for the commands of milliseconds)"
             f"{' (quick inputs)' if args.quick else ''}. Cells: median wall "
             "seconds, (min–max), ×untraced. `=` / `≠`: the tool's read and write counts "
             "equal / differ from strace's (— when the tool does not count calls).", ""]
    tools = list(next(iter(results.values())))
    lines.append("| workload | " + " | ".join(tools) + " |")
    lines.append("|---" * (len(tools) + 1) + "|")
    for wl, row in results.items():
        cells = []
        for t in tools:
            c = row[t]
            if c["median_s"] is None:
                cells.append(f"n/a ({(c['error'] or 'failed')[:60]})")
                continue
            eq = {True: " =", False: " ≠", None: ""}[c["counts_equal_strace"]]
            cells.append(f"{c['median_s']:.3f} ({c['min_s']:.3f}–{c['max_s']:.3f}) "
                         f"×{c['ratio']:.2f}{eq}")
        lines.append(f"| {wl} | " + " | ".join(cells) + " |")
    cmd = extra.get("command_time") or {}
    if cmd:
        c_tools = [t for t in tools if t != "untraced"]
        lines += ["", "The traced program's own time (exec → exit, via bench/cmdtime), "
                  "×untraced, and for the syscall-heavy rows the time each read/write call "
                  "adds.", "", "| workload | untraced | " + " | ".join(c_tools) + " |",
                  "|---" * (len(c_tools) + 2) + "|"]
        for wl, row in cmd.items():
            u = results[wl]["untraced"]
            cells = [f"{u['cmd_median_s']:.4f} s"]
            for t in c_tools:
                c = row.get(t)
                if not c:
                    cells.append("n/a")
                    continue
                ns = f", +{c['ns_per_call']:.0f} ns/call" if c["ns_per_call"] is not None else ""
                cells.append(f"×{c['ratio']:.3f}{ns}")
            lines.append(f"| {wl} | " + " | ".join(cells) + " |")
    lines += ["", "Issue 7's targets against this run (ratios of the traced program's own "
              "time; the floor column is the same ratio for no-op hooks):", ""]
    lines += target_lines(results, extra)
    lines += ["", "Issue 41's targets (start-up, the sampled default against the floor, short "
              "processes), beside the build before when `--baseline` gives it:", ""]
    lines += issue41_lines(results, extra, extra["command_time"])
    lines += process_kernel_lines(extra)
    lines += ["", "![overhead](performance.png)", "",
              f"- iotrace start-up (iotrace exec → command exec, median of 9): "
              f"{extra['startup_ms']:.0f} ms ({extra['startup_full_btf_ms']:.0f} ms with CO-RE "
              "against the whole kernel BTF, `IOTRACE_FULL_BTF=1`)",
              f"- iotrace peak RSS on tr2u: {extra['peak_rss_kib'] / 1024:.1f} MiB, of which "
              f"{extra['peak_anon_kib'] / 1024:.1f} MiB its own memory (RssAnon); the rest is "
              "its libraries and the BPF maps it maps from the kernel (ring buffers, counter "
              "arrays, the ledger's entries and rows), kernel memory counted again",
              f"- BPF map memory of one iotrace run: {extra['bpf_map_bytes'] / 2**20:.1f} MiB",
              "", "The floor is `.output/bench/floor`: no-op tp_btf sys_enter/sys_exit programs "
              "(bpf/floor.bpf.c), the least any syscall tracer on these hooks costs. Raw numbers "
              "are in performance.json.", ""] + timing_lines(results, extra) + \
        accuracy_lines(extra.get("accuracy")) + timeline_lines(results, extra) + \
        ledger_lines(extra) + [""] + latency_lines(extra.get("report_latency")) + ["", NOTES]
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
