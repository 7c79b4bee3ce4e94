"""Latency accuracy for `make bench` (imported by scripts/bench.py; docs/run-mode.md, "Timing").

- block_accuracy: fio 4 KiB O_DIRECT random reads at queue depth 1 (psync) and 32 (io_uring),
  traced by `iotrace --json --trace`: the run report's block read p50/p90/p99 (read from its
  log-linear buckets) against the exact quantiles of the same requests, each one's
  issue-to-completion time from the run's own timeline (the same clock reads). A second
  observer (`iotrace snoop`) would not do: its programs run before the run's on the same
  tracepoints, and its ring-buffer wakeup's IPI lands between their clock reads.
- syscall_accuracy: the sampled default against `--time-all` on tr2u, copy b=8k and a cold
  read, in alternating runs: the read and write latency p50/p99 of each (median over runs).
"""
import json
import math
import os
import statistics
import subprocess
from pathlib import Path

QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))


def exact_quantile(values, q):
    """The value of rank ceil(q * n), as iotrace ranks within a histogram (user/model/hist.c)."""
    values = sorted(values)
    return values[max(0, min(len(values) - 1, math.ceil(q * len(values)) - 1))]


def trace_latencies(trace, pid, op):
    """Each request's issue-to-completion time from the run's own timeline (--trace)."""
    begins, out = {}, []
    for e in trace["traceEvents"]:
        if e.get("cat") != "block" or e["name"] != op:
            continue
        if e["ph"] == "b" and e["args"]["pid"] == pid and "queued_us" in e["args"] \
                and not e["args"].get("late"):
            begins[e["id"]] = e["ts"]
        elif e["ph"] == "e" and e["id"] in begins:
            out.append(round(e["ts"] * 1000) - round(begins.pop(e["id"]) * 1000))
    return out


def fio_job(report):
    """The fio process that did the reading (its parent lays out the file)."""
    procs = [p for p in report["processes"] if p.get("comm") == "fio"]
    return max(procs, key=lambda p: p["block"].get("read", {}).get("requests", 0))


def block_case(iotrace, target, depth, ios):
    engine = ["--ioengine=psync"] if depth == 1 else ["--ioengine=io_uring",
                                                      f"--iodepth={depth}"]
    out, trace = Path(target).with_suffix(".json"), Path(target).with_suffix(".trace")
    fio_out = Path(target).with_suffix(".fio.json")
    subprocess.run([str(iotrace), "--json", "-o", str(out), "--trace", str(trace),
                    "--trace-min", "1s", "--", "fio", "--name=acc", f"--filename={target}",
                    "--rw=randread", "--direct=1", "--bs=4k", f"--number_ios={ios}",
                    "--size=256m", "--output-format=json", f"--output={fio_out}"] + engine,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    report = json.loads(out.read_text())
    job = fio_job(report)
    exact = trace_latencies(json.loads(trace.read_text()), job["pid"], "read")
    hist = job["block"]["read"]["latency_ns"]
    fio = json.loads(fio_out.read_text())
    # Requests whose completion the program never saw are counted, without a latency.
    row = {"requests": hist["count"], "exact_requests": len(exact),
           "all_requests": job["block"]["read"]["requests"],
           "all_bytes": job["block"]["read"]["bytes"],
           "fio_ios": sum(j["read"]["total_ios"] for j in fio["jobs"]),
           "fio_bytes": sum(j["read"]["io_bytes"] for j in fio["jobs"]),
           "late": report["drops"]["block_completions_unseen"] + report["drops"]["nested_runs"]}
    for key, q in QUANTILES:
        want = exact_quantile(exact, q) if exact else None
        row[key] = {"iotrace": hist.get(key), "exact": want,
                    "error_pct": 100.0 * (hist[key] - want) / want if want else None}
    return row


def block_accuracy(iotrace, tmp, quick):
    target = tmp / "acc.in"
    subprocess.run([str(Path(iotrace).parent / "workloads/mkinput"), "-r", "256m", str(target)],
                   check=True)
    ios = 2000 if quick else 10000
    return {f"fio randread 4k O_DIRECT, queue depth {d}": block_case(iotrace, target, d, ios)
            for d in (1, 32)}


def latency_of(iotrace, mode, argv, stdin, cold):
    """(read p50, read p99, write p50, write p99) of one run in a timing mode."""
    out = Path("/tmp") / f"iotrace-acc-{os.getpid()}.json"
    if cold:
        subprocess.run(["sync"], check=True)
        for path in cold:
            fd = os.open(path, os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
    opts = {"sampled": [], "all": ["--time-all"]}[mode]
    subprocess.run([str(iotrace), "--json", "-o", str(out)] + opts + ["--"] + argv, stdin=fin,
                   stdout=subprocess.DEVNULL, check=True)
    if stdin:
        fin.close()
    totals = json.loads(out.read_text())["totals"]
    out.unlink()
    vals = {}
    for kind in ("read", "write"):
        lat = (totals["io"].get(kind) or {}).get("latency_ns") or {}
        if lat.get("count"):
            vals[kind] = (lat["p50"], lat["p99"], totals["syscalls"][kind]["timed_calls"])
    return vals


def syscall_accuracy(iotrace, workloads, runs):
    """workloads: (name, argv, stdin, cold) tuples."""
    result = {}
    for name, argv, stdin, cold in workloads:
        got = {"sampled": [], "all": []}
        for _ in range(runs):
            for mode in got:
                got[mode].append(latency_of(iotrace, mode, argv, stdin, cold))
        row = {}
        for kind in ("read", "write"):
            runs_s = [r[kind] for r in got["sampled"] if kind in r]
            runs_a = [r[kind] for r in got["all"] if kind in r]
            if not runs_s or not runs_a:
                continue
            cell = {"timed_sampled": statistics.median(r[2] for r in runs_s),
                    "timed_all": statistics.median(r[2] for r in runs_a)}
            for i, key in ((0, "p50"), (1, "p99")):
                s = statistics.median(r[i] for r in runs_s)
                a = statistics.median(r[i] for r in runs_a)
                cell[key] = {"sampled": s, "all": a,
                             "diff_pct": 100.0 * (s - a) / a if a else None,
                             # --time-all's own spread over runs: how far two runs of the
                             # same command differ with every call timed
                             "all_min": min(r[i] for r in runs_a),
                             "all_max": max(r[i] for r in runs_a)}
            row[kind] = cell
        result[name] = row
    return result


# A syscall's calls per CPU timed before sampling starts (WARMUP_CALLS, bpf/iotrace.h).
WARMUP_CALLS = 1000


def accuracy_lines(acc):
    """Markdown: the two accuracy tables."""
    if not acc:
        return []
    lines = ["## Latency percentiles you can trust", "",
             "Block read latency from the run report's log-linear buckets against the exact "
             "latency of every request of the same run (from its `--trace` timeline: the same "
             "clock reads, request by request); target: p50 and p99 within 5%.", "",
             "| case | requests timed / all | p50 iotrace / exact | p90 | p99 | p50, p99 within 5% |",
             "|---|---|---|---|---|---|"]
    for name, r in acc.get("block", {}).items():
        cells = []
        for key, _ in QUANTILES:
            c = r[key]
            cells.append(f"{c['iotrace'] / 1000:.1f} / {c['exact'] / 1000:.1f} µs "
                         f"({c['error_pct']:+.1f}%)" if c["exact"] else "n/a")
        ok = all(r[k]["error_pct"] is not None and abs(r[k]["error_pct"]) <= 5
                 for k in ("p50", "p99"))
        lines.append(f"| {name} | {r['requests']:,} / {r['all_requests']:,} | "
                     + " | ".join(cells) +
                     f" | {'yes' if ok else 'no'} |")
    lines += ["", "Syscall latency of the sampled default against `--time-all` (every call "
              "timed), in 7 alternating runs each (medians); target: p50 and p99 within "
              "10%.", "",
              "| workload | syscall | calls timed, sampled / all | p50 sampled / all | "
              "p99 sampled / all | within 10% |", "|---|---|---|---|---|---|"]
    for name, row in acc.get("syscall", {}).items():
        for kind, c in row.items():
            if c["timed_all"] <= WARMUP_CALLS:
                continue  # every call timed in both modes: two runs' noise, not sampling
            lines.append(f"| {name} | {kind} | {c['timed_sampled']:,.0f} / "
                         f"{c['timed_all']:,.0f} | " +
                         " | ".join(sampled_cell(c[k]) for k in ("p50", "p99")) +
                         f" | {sampled_verdict(c)} |")
    return lines + ["", "In brackets: the lowest and highest value of the `--time-all` runs, "
                    "every call timed: how far the same command moves between runs. A tail "
                    "that moves more than 10% between two such runs cannot show a 10% "
                    "sampling error; such rows say \"within --time-all's spread\" when the "
                    "sampled median falls inside it. \"Within one bucket\": the two differ by "
                    "at most a histogram bucket (1/8 of the power of two below them: 32 ns "
                    "between 256 and 512 ns), the resolution both are read at.", ""]


def sampled_cell(q):
    spread = (f"; all {q['all_min']:,}–{q['all_max']:,}" if "all_min" in q else "")
    return f"{q['sampled']:,} / {q['all']:,} ns ({q['diff_pct']:+.1f}%{spread})"


def sampled_verdict(c):
    """yes: p50 and p99 within 10%; else whether the sampled values lie inside the spread
    of the --time-all runs."""
    def close(q):
        return q["diff_pct"] is not None and abs(q["diff_pct"]) <= 10

    def inside(q):
        return "all_min" in q and q["all_min"] <= q["sampled"] <= q["all_max"]

    def one_bucket(q):
        # log-linear buckets: a power of two cut in 8 (bpf/buckets.h), so two readings of
        # one latency may differ by a bucket: 1/8 of the power of two below them
        top = max(q["sampled"], q["all"])
        return top >= 16 and abs(q["sampled"] - q["all"]) <= (1 << (int(top).bit_length() - 1)) / 8

    qs = [c[k] for k in ("p50", "p99")]
    if all(close(q) for q in qs):
        return "yes"
    if all(close(q) or one_bucket(q) for q in qs):
        return "within one bucket"
    if all(close(q) or one_bucket(q) or inside(q) for q in qs):
        return "within --time-all's spread"
    return "no"
