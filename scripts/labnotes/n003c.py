"""Lab note 003 on a machine without Go: the C imitation, workloads/readall.

`readall -m grow` does what the note says ioutil.ReadAll does (a 512-byte buffer, doubled
whenever a read fills it, until read() returns 0), `-m stat` what it says ioutil.ReadFile
does (fstat, one buffer of st_size + 1 bytes). Each size and mode runs once under iotrace
(read calls on the file and in all, bytes, mremap calls) and once under strace (anonymous
memory: the brk heap and anonymous mappings), beside the read count derived from the rule.
"""
import re

from . import notes
from .common import (OVER, UNDER, WL, bullet, iotrace, line_panel, md_table, mkinput,
                     num, paragraph, plain_log_ticks, pyplot, run_redirected, save, traced)

MODES = ["grow", "stat"]
NOTE_MODE = {"grow": "readall", "stat": "readfile"}  # the note's benchmark each stands for
FIRST = 512
ADDR = r"(0x[0-9a-f]+)"
BRK = re.compile(rf"^(?:\d+ +)?brk\((?:NULL|0x[0-9a-f]+)\) += {ADDR}")
MMAP = re.compile(rf"^(?:\d+ +)?mmap\([^,]+, (\d+), PROT_(?!NONE)[^,]*, [^,]*MAP_ANONYMOUS"
                  rf"[^=]*= {ADDR}")
MREMAP = re.compile(rf"^(?:\d+ +)?mremap\({ADDR}, (\d+), (\d+),[^=]*= {ADDR}")
MUNMAP = re.compile(rf"^(?:\d+ +)?munmap\({ADDR}, (\d+)\) += 0")


def derived(mode, size):
    """(read calls, bytes passed to malloc/realloc, final buffer) on a size-byte regular
    file, which fills every read's free space until its end."""
    if mode == "stat":
        return (1 if size == 0 else 2), size + 1, size + 1
    reads, held, cap, allocated = 0, 0, FIRST, FIRST
    while True:
        if held == cap:
            cap *= 2
            allocated += cap
        n = min(cap - held, size - held)
        reads += 1
        if n == 0:
            return reads, allocated, cap
        held += n


def parse_output(stdout):
    """readall's line "mode=M reads=N allocated=A bytes=B sec=S": {key: value}."""
    fields = dict(kv.split("=", 1) for kv in stdout.decode().split())
    return {k: v if k == "mode" else float(v) if k == "sec" else int(v)
            for k, v in fields.items()}


def anonymous_growth(log, path):
    """(bytes at open, peak bytes) of anonymous memory, brk heap plus anonymous mappings,
    from a strace log: at the openat of path, and the most at any point after it."""
    base_brk = brk = None
    maps, at_open, peak = {}, None, 0
    for line in log.read_text(errors="replace").splitlines():
        if (m := BRK.match(line)):
            brk = int(m[1], 16)
            base_brk = brk if base_brk is None else base_brk
        elif (m := MMAP.match(line)):
            maps[m[2]] = int(m[1])
        elif (m := MREMAP.match(line)) and m[1] in maps:
            del maps[m[1]]
            maps[m[4]] = int(m[3])
        elif (m := MUNMAP.match(line)):
            maps.pop(m[1], None)
        now = (brk - base_brk if brk is not None else 0) + sum(maps.values())
        if at_open is not None:
            peak = max(peak, now)
        elif line.split("(", 1)[0].endswith("openat") and f'"{path}"' in line:
            at_open = peak = now
    if at_open is None:
        raise RuntimeError(f"{log}: no openat of {path}")
    return at_open, peak


def measure_one(mode, path, size, tmp):
    args = [WL / "readall", "-m", mode, path]
    report, res = iotrace(args, tmp / "003c.json")
    own = parse_output(res.stdout)
    (proc,) = [p for p in traced(report) if p["comm"] == "readall"]
    (entry,) = [f for f in proc["files"] if f["path"] == str(path)]
    on_file = entry["io"].get("read") or {"calls": 0, "transferred_bytes": 0}
    log = tmp / "003c.strace"
    run_redirected(["strace", "-o", log, "-e", "trace=openat,brk,mmap,mremap,munmap", *args])
    at_open, peak = anonymous_growth(log, path)
    reads, allocated, final = derived(mode, size)
    calls = proc["syscalls"]
    return {"mode": mode, "size": size, "derived_reads": reads, "derived_allocated": allocated,
            "final_buffer": final, "file_reads": on_file["calls"],
            "file_read_bytes": on_file["transferred_bytes"], "own_reads": own["reads"],
            "all_reads": calls["read"]["calls"], "returned_bytes": own["bytes"],
            "allocated": own["allocated"], "memory_growth": peak - at_open,
            "mremap_calls": calls.get("mremap", {}).get("calls", 0), "sec": own["sec"]}


def measure(ctx, sizes, reason, kernel):
    rows = []
    for size in sizes:
        path = mkinput(ctx.tmp / f"in.{size}", size, "-r")
        rows += [measure_one(m, path, size, ctx.tmp) for m in MODES]
        path.unlink()
    return {"go": None, "no_go": reason, "kernel": kernel,
            "c_rows": rows}


def render(data, out):
    plot(data, out / "003-reads.png")
    (out / "003-readall.md").write_text(page(data))


# ---- page ----------------------------------------------------------------------------------

def plot(data, path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    series = {}
    for mode, color, marker in (("grow", "tab:blue", "o"), ("stat", "tab:orange", "s")):
        pts = [r for r in data["c_rows"] if r["mode"] == mode and r["size"] > 0]
        series[f"{mode} (like {NOTE_MODE[mode]}): read() calls on the file, iotrace"] = (
            [r["size"] for r in pts], [r["file_reads"] for r in pts],
            {**UNDER, "color": color, "marker": marker})
    pts = [r for r in data["c_rows"] if r["mode"] == "grow" and r["size"] > 0]
    series["grow: derived from doubling from 512 bytes"] = (
        [r["size"] for r in pts], [r["derived_reads"] for r in pts],
        {**OVER, "color": "black", "marker": "o"})
    line_panel(ax, "Lab note 003 without Go: read() calls of the C imitation (readall)",
               "file size (log scale)", "read() calls on the file (log scale)", series,
               xbytes=True)
    plain_log_ticks(ax.yaxis)
    save(fig, path)


def table(rows):
    head = ["size B", "mode", "reads on the file: iotrace / readall's own / derived",
            "reads, all (iotrace)", "bytes read (iotrace)", "allocated B (malloc + realloc)",
            "memory growth B (brk + anonymous mmap)", "mremap calls", "seconds"]
    out = [[f"{r['size']:,}", r["mode"],
            f"{r['file_reads']:,} / {r['own_reads']:,} / {r['derived_reads']:,}",
            f"{r['all_reads']:,}", f"{r['file_read_bytes']:,}", f"{r['allocated']:,}",
            f"{r['memory_growth']:,}", f"{r['mremap_calls']:,}", f"{r['sec']:.4f}"]
           for r in rows]
    return md_table(head, out)


def note_table():
    head = ["benchmark (the note)", "ns/op", "B/op", "allocs/op"]
    return md_table(head, [[mode, f"{ns:,}", f"{bop:,}", allocs]
                           for mode, (ns, bop, allocs) in notes.N003_BENCH.items()])


def bench_table(by, big):
    head = ["note's benchmark / ours", "note ns/op", "ours ns", "note B/op",
            "ours allocated B", "ours memory growth B"]
    out = []
    for mode in MODES:
        ns, bop, _ = notes.N003_BENCH[NOTE_MODE[mode]]
        r = by[mode]
        out.append([f"{NOTE_MODE[mode]} / {mode}", f"{ns:,}", num(round(r["sec"] * 1e9)),
                    f"{bop:,}", f"{r['allocated']:,}", f"{r['memory_growth']:,}"])
    return md_table(head, out) + f"\n\n(ours: one call each on a {big:,}-byte file)"


def allocation_finding(by, big):
    grow, stat = by["grow"], by["stat"]
    note_ra, note_rf = notes.N003_BENCH["readall"][1], notes.N003_BENCH["readfile"][1]
    text = (f"- Allocation: at {big:,} bytes grow passes {grow['allocated']:,} bytes to "
            f"malloc/realloc against stat's {stat['allocated']:,} "
            f"({grow['allocated'] / max(stat['allocated'], 1):.1f}×; the note's ReadAll "
            f"against ReadFile B/op: {note_ra / note_rf:.1f}×).")
    if big == notes.N003_BENCH_BYTES:
        text += (f" Doubling from 512 bytes sums to {grow['allocated']:,} bytes for this "
                 f"file, {abs(grow['allocated'] - note_ra):,} bytes from the note's ReadAll "
                 "B/op: consistent with the note's \"doubling\" for the Go of 2019.")
    return bullet(text)


def memory_finding(by, big):
    grow = by["grow"]
    return bullet(f"- Memory: glibc's realloc grows a buffer above its mmap threshold with "
            f"`mremap`, which moves the pages instead of copying them ({grow['mremap_calls']} "
            f"mremap calls for grow at {big:,} bytes, iotrace), so the imitation's anonymous "
            f"memory grows by {grow['memory_growth']:,} bytes at its peak, "
            f"{grow['memory_growth'] / max(grow['final_buffer'], 1):.2f}× its final "
            f"{grow['final_buffer']:,}-byte buffer. Go's `append` copies into a new buffer "
            "and leaves the old ones to the garbage collector, which is what the note's "
            "B/op count; the C numbers are not a measure of Go's allocator.")


def page(data):
    rows = data["c_rows"]
    sizes = {r["size"] for r in rows}
    big = notes.N003_BENCH_BYTES if notes.N003_BENCH_BYTES in sizes else max(sizes)
    by = {r["mode"]: r for r in rows if r["size"] == big}
    agree = all(r["file_reads"] == r["own_reads"] == r["derived_reads"] for r in rows)
    exact = all(r["file_read_bytes"] == r["returned_bytes"] == r["size"] for r in rows)
    fill = {"reason": data["no_go"], "kernel": data["kernel"], "big": f"{big:,}",
            "agree": "equals" if agree else "does not always equal",
            "exact": "and" if exact else "but not always",
            "grow_reads": by["grow"]["file_reads"],
            "time_ratio": by["grow"]["sec"] / max(by["stat"]["sec"], 1e-9),
            "note_time_ratio": (notes.N003_BENCH["readall"][0]
                                / notes.N003_BENCH["readfile"][0])}
    return TEMPLATE.format(
        note=notes.N003_CLAIM, note_table=note_table(), table=table(rows),
        bench=bench_table(by, big), conditions=paragraph(CONDITIONS.format(**fill)),
        reads=bullet(READS.format(**fill)),
        allocation=allocation_finding(by, big), memory=memory_finding(by, big),
        time=bullet(TIME.format(**fill)))


READS = """- Reads: iotrace's count on the file {agree} readall's own count and the derived one in
  every row, {exact} the bytes read are the file's size. grow's count grows with the
  logarithm of the size ({grow_reads:,} reads at {big} bytes); stat's is 2 at every size,
  as the note says of ReadFile: one read of the whole file."""

TIME = """- Time: grow takes {time_ratio:.1f}× as long as stat at {big} bytes (the note's
  ReadAll against ReadFile: {note_time_ratio:.1f}×); one call each, in C, on another
  machine than the note's 2019 Mac, shown for the ratio only."""

CONDITIONS = """\
**Our conditions:** {reason}, so `workloads/readall-go` did not run and this page measures
the C imitation instead (`scripts/deps.sh` installs Debian's golang-go; after `make`, `make
experiments` measures Go itself). `workloads/readall -m grow FILE` does what the note says
ReadAll does: a 512-byte buffer, doubled with `realloc` whenever a read fills it, until
`read()` returns 0; `-m stat` what it says ReadFile does: `fstat`, one buffer of st_size + 1
bytes. Files of random bytes on vda's ext4; each size and mode run once under `iotrace
--json` (read calls on the file and in all, bytes read, mremap calls) and once under `strace
-e trace=openat,brk,mmap,mremap,munmap` (memory growth: the brk heap plus anonymous
mappings, at its peak, less what the process had when it opened the file). The program
prints its own read count, the bytes it passed to malloc and realloc, and the seconds from
open to its last read. Kernel {kernel}."""

TEMPLATE = """# Lab note 003: io.ReadAll against os.ReadFile (without Go: the C imitation)

{note}

The note's numbers (`go test -bench . -benchmem`: averages per call):

{note_table}

{conditions}

**The read count, derived:** on an S-byte regular file every read fills the buffer's free
space until the end, so grow costs one read per buffer size (512, then 512, 1,024, 2,048, …
as the buffer doubles) until S bytes are in, plus the read that returns 0; stat costs 2 (S
bytes into S + 1, then 0), 1 for an empty file. "reads, all" also counts the dynamic
loader's read of libc.

{table}

![read calls by file size](003-reads.png)

## The note's benchmark beside ours

{bench}

## Where we differ and why

- There is no Go here: the rows are the C imitation's, so they show the read pattern and
  the buffer sizes the note describes, not Go's allocator or garbage collector.
{reads}
{allocation}
{memory}
{time}
"""
