"""What the notes share: running a command under iotrace and under strace, reading the
reports, Markdown tables and matplotlib plots."""
import contextlib
import json
import os
import re
import subprocess
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
IOTRACE = ROOT / "iotrace"
WL = ROOT / "workloads"
KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
PAGE = 4096


def wl(name):
    return str(WL / name)


def mkinput(path, size, *opts):
    subprocess.run([wl("mkinput"), *opts, str(size), str(path)], check=True)
    return Path(path)


def _open_or_none(path, mode):
    return open(path, mode) if path else None


def run_redirected(args, stdin=None, stdout=None, stderr=None, check=True):
    """Run args with stdin/stdout from/to files (paths) or a given file object."""
    inp = stdin if hasattr(stdin, "fileno") else _open_or_none(stdin, "rb")
    out = stdout if hasattr(stdout, "fileno") else _open_or_none(stdout, "wb")
    try:
        res = subprocess.run([str(a) for a in args], stdin=inp,
                             stdout=out if out else subprocess.PIPE,
                             stderr=stderr or subprocess.PIPE)
    finally:
        for f, given in ((inp, stdin), (out, stdout)):
            if f and f is not given:
                f.close()
    if check and res.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} exited {res.returncode}: "
                           f"{(res.stderr or b'').decode(errors='replace').strip()}")
    return res


def iotrace(args, json_path, stdin=None, stdout=None, options=()):
    """Run args under `iotrace --json`; return (report, CompletedProcess)."""
    cmd = [IOTRACE, "--json", "-o", json_path, *options, "--", *args]
    res = run_redirected(cmd, stdin, stdout)
    return json.loads(Path(json_path).read_text()), res


def strace_c(args, out_path, stdin=None, stdout=None):
    """Run args under `strace -f -c`; return ({syscall: (calls, errors)}, CompletedProcess)."""
    res = run_redirected(["strace", "-f", "-c", "-o", out_path, *args], stdin, stdout)
    return parse_strace_c(Path(out_path).read_text()), res


def parse_strace_c(text):
    """{syscall: (calls, errors)} from strace -c's table (fixed columns under the rule)."""
    lines = text.splitlines()
    head = next(i for i, l in enumerate(lines) if l.lstrip().startswith("% time"))
    spans = [m.span() for m in re.finditer(r"-+", lines[head + 1])]
    names = [lines[head][a:b].strip() for a, b in spans[:-1]] + ["syscall"]
    table = {}
    for line in lines[head + 2:]:
        if not line.strip() or set(line.strip()) <= set("- "):
            continue
        cells = [line[a:b].strip() for a, b in spans[:-1]] + [line[spans[-1][0]:].strip()]
        row = dict(zip(names, cells))
        if row["syscall"] != "total":
            table[row["syscall"]] = (int(row["calls"]), int(row["errors"] or 0))
    return table


STRACE_CALL = re.compile(r"^(?:\d+ +)?(\w+)\((\d+)<([^>]*)>.*= (-?\d+)")


def strace_calls_by_path(args, out_path, calls, stdin=None, stdout=None):
    """Run args under `strace -f -yy -e trace=CALLS`; return [(syscall, path, result)] for
    calls on file descriptors (-yy names each descriptor's file)."""
    res = run_redirected(["strace", "-f", "-yy", "-e", f"trace={','.join(calls)}", "-o",
                          out_path, *args], stdin, stdout)
    found = []
    for line in Path(out_path).read_text(errors="replace").splitlines():
        m = STRACE_CALL.match(line)
        if m:
            found.append((m[1], m[3], int(m[4])))
    return found, res


def syscall_calls(report, proc=None):
    """{syscall: calls} of one process of a report, or of the totals."""
    table = (proc or report["totals"])["syscalls"]
    return {name: v["calls"] for name, v in table.items()}


def traced(report):
    return [p for p in report["processes"] if p["pid"] is not None]


def file_entry(report, path):
    """The page-cache entry of path in the report (the one process that read it)."""
    entries = [f for p in traced(report) for f in (p.get("files") or [])
               if f["path"] == str(path)]
    if len(entries) != 1:
        raise RuntimeError(f"{path}: {len(entries)} page-cache entries in the report")
    return entries[0]


def disk_op(proc, disk, op):
    """The block-I/O record of one process on one disk and operation (zeros if none)."""
    rec = ((proc.get("block") or {}).get("disks") or {}).get(disk, {}).get(op)
    return rec or {"requests": 0, "bytes": 0, "latency_ns": {"count": 0},
                   "size_bytes": {"count": 0}}


def quantile(hist, q):
    return hist.get(q) if hist and hist.get("count") else None


def fincore_bytes(path, expect=None, timeout=2.0):
    """fincore's resident bytes. Pages still being read in are not counted yet (mincore),
    so wait up to timeout for the count to reach expect (or to stop changing)."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        out = subprocess.run(["fincore", "-b", "-n", "-o", "RES", str(path)], check=True,
                             capture_output=True, text=True).stdout
        now = int(out.split()[0])
        if now == expect or (expect is None and now == last) or time.monotonic() > deadline:
            return now
        last = now
        time.sleep(0.05)


def evict(path, timeout=5.0):
    """Drop path's cached pages and wait until fincore sees none: pages still being read
    in by a previous run's readahead cannot be dropped until their I/O completes."""
    deadline = time.monotonic() + timeout
    while True:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
        if fincore_bytes(path, expect=0, timeout=0) == 0:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{path}: pages stay cached after POSIX_FADV_DONTNEED")
        time.sleep(0.05)


# ---- rendering ---------------------------------------------------------------------------

def md_table(headers, rows):
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def bullet(text, width=92):
    """A generated "- ..." list item wrapped as the pages' hand-written ones are."""
    return textwrap.fill(" ".join(text.split()), width=width, subsequent_indent="  ",
                         break_long_words=False, break_on_hyphens=False)


def paragraph(text, width=92):
    """A generated paragraph, its lines refilled."""
    return textwrap.fill(" ".join(text.split()), width=width, break_long_words=False,
                         break_on_hyphens=False)


def num(v, fmt="{:,}"):
    return "—" if v is None else fmt.format(v)


def us(ns):
    return "—" if ns is None else f"{ns / 1000:,.1f}"


def write_json(path, data):
    Path(path).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


STYLES = ["-o", "--s", ":^", "-.D", "-v", "--P", ":X", "-.*"]


def byte_label(x, _pos=None):
    """4,096 → "4 KiB": tick labels of a byte axis spanning many powers of two."""
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if x >= size and x % size == 0:
            return f"{x / size:,.0f} {unit}"
    return f"{x:,.0f}"


def line_panel(ax, title, xlabel, ylabel, series, logx=2, logy=True, legend_below=False,
               xbytes=False):
    """One panel: series {label: (xs, ys)}, each with its own line style and marker, or
    {label: (xs, ys, style)} with matplotlib's plot() keywords for that series."""
    for i, (label, (xs, ys, *style)) in enumerate(series.items()):
        if style:
            ax.plot(xs, ys, label=label, **style[0])
        else:
            ax.plot(xs, ys, STYLES[i % len(STYLES)], label=label, markersize=5)
    if logx:
        ax.set_xscale("log", base=logx)
        from matplotlib.ticker import FuncFormatter
        ax.xaxis.set_major_formatter(FuncFormatter(
            byte_label if xbytes else lambda x, _pos: f"{x:,.0f}"))
    if logy == "symlog":
        set_symlog(ax, 1)
    elif logy:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    if legend_below:  # many series: keep the lines clear
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    else:
        ax.legend(fontsize=8)


# Two series that may coincide point for point (the same mode on two filesystems, a count
# and its derivation): the first drawn wide and pale with large hollow markers, the second
# thin and dashed with small filled ones on top, so that both show where they agree.
UNDER = {"linewidth": 5, "alpha": 0.35, "markersize": 11, "markerfacecolor": "none",
         "markeredgewidth": 1.5}
OVER = {"linewidth": 1.3, "linestyle": (0, (4, 2)), "markersize": 4}


def plain_log_ticks(axis):
    """Tick labels 2, 3, 5, 10, 20 … rather than 2×10⁰ on a log axis of counts."""
    import math
    from matplotlib.ticker import FuncFormatter

    def minor(y, _pos):
        lead = round(y / 10 ** math.floor(math.log10(y))) if y > 0 else 0
        return f"{y:,.0f}" if lead in (2, 3, 5) else ""
    axis.set_major_formatter(FuncFormatter(lambda y, _pos: f"{y:,.0f}"))
    axis.set_minor_formatter(FuncFormatter(minor))


def set_symlog(ax, linthresh):
    """Log scale that still shows 0 (linear below linthresh); no negative half."""
    ax.set_yscale("symlog", linthresh=linthresh)
    ax.set_ylim(bottom=0)


def save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    pyplot().close(fig)


def environment():
    """The conditions every page states: kernel, CPUs, the iotrace version."""
    ver = subprocess.run([str(IOTRACE), "--version"], capture_output=True, text=True).stdout
    return {"kernel": os.uname().release, "cpus": os.cpu_count(),
            "iotrace": ver.split()[-1] if ver.split() else "?"}


# ---- strace -c beside iotrace (notes 000 and 001) ------------------------------------------

def trace_both(args, tmp, stdin=None, stdout_factory=None):
    """Run args under strace -f -c and under iotrace (fresh stdout each time); return
    {"strace": {name: calls}, "iotrace": {name: calls}, "errors": {...}, "wall_s": s}."""
    def out():
        return stdout_factory() if stdout_factory else contextlib.nullcontext(None)
    with out() as so:
        table, _ = strace_c(args, tmp / "strace-c.txt", stdin=stdin, stdout=so)
    with out() as so:
        report, _ = iotrace(args, tmp / "iotrace.json", stdin=stdin, stdout=so)
    calls = report["totals"]["syscalls"]
    return {"strace": {k: v[0] for k, v in table.items()},
            "strace_errors": {k: v[1] for k, v in table.items() if v[1]},
            "iotrace": {k: v["calls"] for k, v in calls.items()},
            "iotrace_errors": {k: v["errors"] for k, v in calls.items() if v["errors"]},
            "wall_s": report["wall_ns"] / 1e9}


def side_by_side(note, note_total, ours):
    """Markdown rows: syscall | the note's strace -c | our strace -f -c | iotrace."""
    names = sorted(set(note) | set(ours["strace"]) | set(ours["iotrace"]),
                   key=lambda n: (-max(note.get(n, 0), ours["strace"].get(n, 0)), n))
    rows = [[n, num(note.get(n)), num(ours["strace"].get(n)), num(ours["iotrace"].get(n))]
            for n in names]
    rows.append(["**total**", num(note_total), f"{sum(ours['strace'].values()):,}",
                 f"{sum(ours['iotrace'].values()):,}"])
    return md_table(["syscall", "note (strace -c)", "ours: strace -f -c", "ours: iotrace"],
                    rows)
