#!/usr/bin/env python3
"""Reproduce the five lab notes (../shared/seeds) with `iotrace compare`.

For each note: run its variants under iotrace, save the compare JSON, and write a Markdown
page with what the note claimed, our command, our table, a plot where a sweep makes one,
and where our results differ. `make experiments` writes docs/experiments/; `--quick` uses
small inputs (for the test suite) and `--out DIR` writes elsewhere.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IOTRACE = ROOT / "iotrace"
WL = ROOT / "workloads"


def compare(labels, commands, out_json, repeat, drop_caches=False):
    args = [str(IOTRACE), "compare", "--json", "-o", str(out_json), "--repeat", str(repeat)]
    if drop_caches:
        args.append("--drop-caches")
    for label in labels:
        args += ["-l", label]
    subprocess.run(args + ["--"] + commands, check=True)
    return json.loads(Path(out_json).read_text())


def summaries(result):
    return {v["label"]: v["summary"] for v in result["variants"]}


def file_values(result, path, key):
    """{label: median over runs of `key` in the run's entry for the file at path}."""
    out = {}
    for v in result["variants"]:
        vals = sorted(f[key] or 0 for run in v["runs"] for p in run["processes"]
                      for f in (p.get("files") or []) if f["path"] == str(path))
        out[v["label"]] = vals[len(vals) // 2] if vals else 0
    return out


def table(result, rows, extra=None):
    """Markdown table of summary rows, then extra rows {name: {label: value}}."""
    s = summaries(result)
    labels = list(s)
    lines = ["| metric | " + " | ".join(labels) + " |", "|---" * (len(labels) + 1) + "|"]
    for key, fmt in rows:
        lines.append(f"| {key} | " + " | ".join(fmt.format(s[l][key]) for l in labels) + " |")
    for key, values in (extra or {}).items():
        lines.append(f"| {key} | " + " | ".join(f"{values[l]:,.0f}" for l in labels) + " |")
    return "\n".join(lines)


def table_by_variant(result, keys):
    """One row per variant (for sweeps with many variants)."""
    lines = ["| variant | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
    for label, summary in summaries(result).items():
        cells = [f"{summary[k]:.4f}" if k == "wall_s" else f"{summary[k]:,.0f}" for k in keys]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(path, title, xlabel, series, ylabel, logx=True, logy=True):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    # Distinct styles: equal series (rw and stdio-unbuf) must not hide each other.
    styles = [("-", "o", 8), ("--", "s", 6), (":", "^", 4)]
    for i, (name, (xs, ys)) in enumerate(series.items()):
        line, marker, size = styles[i % len(styles)]
        ax.plot(xs, ys, linestyle=line, marker=marker, markersize=size, label=name)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def mkinput(path, size, *opts):
    subprocess.run([str(WL / "mkinput"), *opts, str(size), str(path)], check=True)
    return path


# ---- the notes -------------------------------------------------------------------------

def exp000(out, tmp, quick, repeat):
    size = 20000 if quick else 500001
    src = mkinput(tmp / "src000", size, "-r")
    sizes = [1, 16, 256, 8192] if quick else [1, 4, 16, 64, 256, 1024, 8192, 65536]
    modes = ["rw", "stdio", "stdio-unbuf"]
    labels, cmds = [], []
    for mode in modes:
        for bs in sizes:
            labels.append(f"{mode} b={bs}")
            cmds.append(f"{WL}/copy -m {mode} -b {bs} {src} {tmp}/dst000")
    res = compare(labels, cmds, out / "000.json", repeat)
    s = summaries(res)
    plot(out / "000-syscalls.png", "copy: syscalls by buffer size (lab note 000)",
         "buffer size (bytes)",
         {m: (sizes, [s[f"{m} b={b}"]["syscalls"] for b in sizes]) for m in modes}, "syscalls")
    plot(out / "000-time.png", "copy: wall time by buffer size", "buffer size (bytes)",
         {m: (sizes, [s[f"{m} b={b}"]["wall_s"] for b in sizes]) for m in modes}, "seconds")
    rw1, st1 = s["rw b=1"], s["stdio b=1"]
    text = f"""# Lab note 000: read/write vs fread/fwrite by buffer size

**The note** copied a file with `read`/`write` ("measure1") and with `fread`/`fwrite`
("measure2") at buffer sizes 1 and 8192, and with stdio unbuffered (`setvbuf _IONBF`). It found
that with 1-byte buffers measure1 made 500,001 writes and 500,002 reads while measure2 made
only ~124 of each (stdio reads ahead in 4 KiB blocks), that `_IONBF` brings measure2 back to
500,001 writes, and that at 8192 measure2 writes about twice as often as measure1.

**Our command:** `iotrace compare` over `./workloads/copy -m rw|stdio|stdio-unbuf -b SIZE`
on a {size:,}-byte file, sizes {sizes}.

{table_by_variant(res, ["syscalls", "read_bytes", "write_bytes", "wall_s"])}

![syscalls](000-syscalls.png) ![time](000-time.png)

**Where we differ and why:** with 1-byte buffers `rw` makes {rw1['syscalls']:,.0f} syscalls
against stdio's {st1['syscalls']:,.0f}, the note's contrast. Our counts also include the
dynamic loader and the `/bin/sh -c` that compare runs each variant through.
Times are this machine's, not the note's.
"""
    (out / "000-copy.md").write_text(text)


def exp001(out, tmp, quick, repeat):
    size = 20001 if quick else 500001
    src = mkinput(tmp / "in001", size, "-c", "1")
    res = compare(["tr2u", "tr2b"], [f"{WL}/tr2u 1 a < {src} > /dev/null",
                                     f"{WL}/tr2b 1 a < {src} > /dev/null"],
                  out / "001.json", repeat)
    s = summaries(res)
    text = f"""# Lab note 001: tr2u (unbuffered) vs tr2b (buffered)

**The note** ran `tr2u 1 a` and `tr2b 1 a` on a 500,001-byte file of `1`s: tr2u made 500,001
writes and 500,003 reads (one per byte, plus EOF), tr2b a few dozen; tr2u took 0.59 s, tr2b
0.058 s.

**Our command:** `iotrace compare -- 'tr2u 1 a < in > /dev/null' 'tr2b 1 a < in > /dev/null'`
on {size:,} bytes.

{table(res, [("syscalls", "{:,.0f}"), ("read_bytes", "{:,.0f}"), ("write_bytes", "{:,.0f}"),
             ("wall_s", "{:.4f}")])}

**Where we differ and why:** tr2u makes {s['tr2u']['syscalls']:,.0f} syscalls, tr2b
{s['tr2b']['syscalls']:,.0f} ({s['tr2u']['syscalls'] / s['tr2b']['syscalls']:,.0f}×). Our
tr2u reads stdin N+1 times (the note counted N+2 reads in all); the other reads here are the
dynamic loader's and the `/bin/sh -c` wrapper's. tr2b's stdout is /dev/null, whose 4 KiB
block size glibc uses as its buffer, so it writes in 4 KiB chunks like the note's file
output (the note's terminal output was line-buffered: 489 writes).
"""
    (out / "001-tr2u-tr2b.md").write_text(text)


def exp002(out, tmp, quick, repeat):
    size = 131072 if quick else 1310720
    src = mkinput(tmp / "in002", size, "-r")
    res = compare(["async", "sync"], [f"{WL}/timewrite {tmp}/out002 < {src}",
                                      f"{WL}/timewrite {tmp}/out002 sync < {src}"],
                  out / "002.json", repeat)
    s = summaries(res)
    text = f"""# Lab note 002: timewrite, O_SYNC vs buffered writes

**The note** rewrote a 1,310,720-byte file with BUFFSIZE 256 … 131072 (10 rows), with and
without O_SYNC, on several systems: synchronous writes cost far more at small BUFFSIZE, and the
gap closes as BUFFSIZE grows; on a fast filesystem asynchronous writes barely help.

**Our command:** `iotrace compare -- 'timewrite out < in' 'timewrite out sync < in'` on
{size:,} bytes (all 10 rows in one run).

{table(res, [("syscalls", "{:,.0f}"), ("write_bytes", "{:,.0f}"),
             ("block_write_requests", "{:,.0f}"), ("block_write_bytes", "{:,.0f}"),
             ("block_p50_latency_us", "{:.1f}"), ("block_p99_latency_us", "{:.1f}"),
             ("wall_s", "{:.3f}")])}

**Where we differ and why:** with O_SYNC every write reaches the disk before it returns:
{s['sync']['block_write_requests']:,.0f} block writes ({s['sync']['block_write_bytes']:,.0f} bytes)
during the run, against {s['async']['block_write_requests']:,.0f} without it — the buffered run's
data is still in the page cache when it exits (run mode's `--sync` would charge that
writeback too). The note timed rows with `times()` ticks (10 ms); iotrace gives per-request
latencies instead.
"""
    (out / "002-timewrite.md").write_text(text)


def exp003(out, tmp, quick, repeat):
    size = "4m" if quick else "256m"
    src = mkinput(tmp / "in003", size, "-r")
    res = compare(["ReadAll (grow)", "ReadFile (stat)"],
                  [f"{WL}/readall -m grow {src}", f"{WL}/readall -m stat {src}"],
                  out / "003.json", repeat)
    s = summaries(res)
    text = f"""# Lab note 003: ReadAll (doubling buffer) vs ReadFile (sized by stat)

**The note** (Go) found `ioutil.ReadFile` ~3.6× faster than `ioutil.ReadAll` on an 800 MB file
because ReadFile sizes its buffer from the file size while ReadAll starts at 512 bytes and
doubles, allocating 536,869,438 B/op against 209,305,932.

**Our command:** `iotrace compare -- 'readall -m grow F' 'readall -m stat F'`, F = {size}B.

{table(res, [("syscalls", "{:,.0f}"), ("read_bytes", "{:,.0f}"), ("wall_s", "{:.4f}")])}

**Where we differ and why:** the C version's read count follows the doubling:
{s['ReadAll (grow)']['syscalls']:,.0f} syscalls for grow against
{s['ReadFile (stat)']['syscalls']:,.0f} for stat; `readall` itself prints the bytes allocated.
Go's extra cost also came from its allocator and copying, which syscall counts do not show.
"""
    (out / "003-readall.md").write_text(text)


def exp004(out, tmp, quick, repeat):
    size, read = ("64m", "16m") if quick else ("256m", "64m")
    src = mkinput(tmp / "in004", size, "-r")
    subprocess.run(["sync"], check=True)
    modes = {"NORMAL": "", "SEQUENTIAL": "-s", "RANDOM": "-r", "O_DIRECT": "-i"}
    res = compare(list(modes), [f"{WL}/read-file {o} -n {read} {src}" for o in modes.values()],
                  out / "004.json", repeat, drop_caches=True)
    per_file = {f"file: {k}": file_values(res, src, k)
                for k in ("readahead_pages", "unused_readahead_pages", "miss_pages",
                          "resident_pages", "direct_read_bytes")}
    ahead = per_file["file: readahead_pages"]
    ra_kb = Path("/sys/block/vda/queue/read_ahead_kb")
    text = f"""# Lab note 004: readahead under posix_fadvise modes

**The note** read 64 MiB of a 1 GB file after dropping its cache (read_ahead_kb 128) and saw
with fincore 64 MiB + 128 KiB resident under NORMAL and 64 MiB + 384 KiB under SEQUENTIAL
(readahead doubled), watching the requests with biosnoop.

**Our command:** `iotrace compare --drop-caches -- 'read-file -n {read} F' 'read-file -s ...'
'read-file -r ...' 'read-file -i ...'`, F = {size}B on vda (read_ahead_kb
{ra_kb.read_text().strip() if ra_kb.exists() else '?'}). Rows marked `file:` are F's own
entry; the others are run totals (they include the loader's libraries).

{table(res, [("readahead_windows", "{:,.0f}"), ("block_read_requests", "{:,.0f}"),
             ("block_avg_request_bytes", "{:,.0f}"), ("block_p50_latency_us", "{:.1f}"),
             ("wall_s", "{:.3f}")], per_file)}

**Where we differ and why:** pages read ahead of any request in F: SEQUENTIAL
{ahead['SEQUENTIAL']:,.0f} > NORMAL {ahead['NORMAL']:,.0f} > RANDOM {ahead['RANDOM']:,.0f},
as in the note, and O_DIRECT leaves {per_file['file: resident_pages']['O_DIRECT']:,.0f} pages
of F cached. Our device reads ahead 8 MiB rather than 128 KiB, so the unused tail is larger,
and SEQUENTIAL's doubled window ramps to three times NORMAL's unused pages, not two.
"""
    (out / "004-read-file.md").write_text(text)


EXPERIMENTS = {"000": exp000, "001": exp001, "002": exp002, "003": exp003, "004": exp004}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="small inputs, one run each")
    ap.add_argument("--out", default=str(ROOT / "docs" / "experiments"))
    ap.add_argument("--only", action="append", choices=sorted(EXPERIMENTS))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    repeat = 1 if args.quick else 3
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        for key in args.only or sorted(EXPERIMENTS):
            print(f"  EXP      {key}", flush=True)
            EXPERIMENTS[key](out, Path(tmp), args.quick, repeat)
    index = ["# Lab notes reproduced", "",
             "Regenerated by `make experiments` (scripts/experiments.py).", ""]
    index += [f"- [{p.stem}]({p.name})" for p in sorted(out.glob("0*.md"))]
    (out / "README.md").write_text("\n".join(index) + "\n")


if __name__ == "__main__":
    sys.exit(main())
