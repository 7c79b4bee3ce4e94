"""Lab note 003: io.ReadAll against os.ReadFile, in Go, over a sweep of file sizes.

workloads/readall-go (built by make where Go is found) under iotrace and strace: read calls
(iotrace: all the process's; strace -yy: those on the file), the Go heap's own allocation
figures (the note's B/op and allocs/op), mmap bytes and peak RSS, time. Without Go (or with
GO= in the environment) the page says so and measures the C imitation, workloads/readall,
instead (n003c.py).
"""
import os
import re

from . import gogrowth, machine, n003c, notes
from .common import (KIB, MIB, WL, iotrace, line_panel, md_table, mkinput, num, pyplot, save,
                     traced)

MODES = ["readall", "readfile", "readfull", "fixed"]
QUICK_SIZES = [0, 1, 511, 512, 513, 100000, 1 * MIB, 3 * MIB + 5]
SIZES = sorted([KIB << (2 * i) for i in range(10)]
               + [notes.N003_BENCH_BYTES, notes.N003_FILE_BYTES])
# Calls are matched by their first line: with several threads strace may split a call into
# "<unfinished ...>" and "<... resumed>" lines. Go reserves address space with PROT_NONE
# mappings; only mappings made accessible are memory.
MMAP = re.compile(r"^\d+ +mmap\([^,]+, (\d+), PROT_(?!NONE)")
MUNMAP = re.compile(r"^\d+ +munmap\(0x[0-9a-f]+, (\d+)")
READ = re.compile(r"^\d+ +read\(\d+<([^>]*)>")


def binary():
    path = WL / "readall-go"
    return path if path.exists() else None


def parse_output(stdout):
    """readall-go's line: {key: value}."""
    fields = dict(kv.split("=", 1) for kv in stdout.decode().split())
    return {k: v if k in ("mode", "go") else float(v) if k == "sec" else int(v)
            for k, v in fields.items()}


def strace_counts(log, path):
    """Read calls on the file and elsewhere, mmap/munmap bytes, from a strace -f -yy log."""
    file_reads = other_reads = mapped = unmapped = 0
    for line in log.read_text(errors="replace").splitlines():
        if (m := READ.match(line)):
            if m[1] == str(path):
                file_reads += 1
            else:
                other_reads += 1
        elif (m := MMAP.match(line)):
            mapped += int(m[1])
        elif (m := MUNMAP.match(line)):
            unmapped += int(m[1])
    return {"file_reads": file_reads, "other_reads": other_reads, "mmap_bytes": mapped,
            "munmap_bytes": unmapped}


def go_process(report):
    (proc,) = [p for p in traced(report) if p["comm"] == "readall-go"]
    return proc


def measure_one(exe, mode, path, size, model, tmp):
    """Two runs: under iotrace alone (its counts, the program's own figures), then under
    iotrace and strace together, so that both count the same process's reads."""
    args = [exe, "-m", mode, path]
    report, res = iotrace(args, tmp / "003.json")
    own = parse_output(res.stdout)
    log = tmp / "003.strace"
    both, _ = iotrace(["strace", "-f", "-yy", "-e", "trace=read,mmap,munmap", "-o", log,
                       *args], tmp / "003-strace.json")
    calls = report["totals"]["syscalls"]
    return {"mode": mode, "size": size, "model_file_reads": model.file_reads(mode, size),
            "reads": calls["read"]["calls"],
            "read_bytes": report["totals"]["io"]["read"]["transferred_bytes"],
            "reads_under_strace": go_process(both)["syscalls"]["read"]["calls"],
            **strace_counts(log, path),
            "returned_bytes": own["bytes"], "alloc": own["alloc"], "mallocs": own["mallocs"],
            "maxrss_kib": own["maxrss_kib"], "sec": own["sec"], "go": own["go"]}


def no_go_reason(exe, go):
    """Why readall-go cannot run here, or None if it can."""
    if not go and "GO" in os.environ:
        return "`GO=` in the environment says there is no Go toolchain (as `make GO=` does)"
    if not go:
        return "no Go toolchain was found (`command -v go`, `/usr/local/go/bin/go`)"
    if not exe:
        return f"Go was found ({go}) but `workloads/readall-go` was not built"
    return None


def measure(ctx):
    exe, go = binary(), gogrowth.find_go()
    sizes = QUICK_SIZES if ctx.quick else SIZES
    reason = no_go_reason(exe, go)
    if reason:
        return n003c.measure(ctx, sizes, reason, machine.kernel())
    model, version = gogrowth.release(go)
    rows = []
    for size in sizes:
        path = mkinput(ctx.tmp / f"in.{size}", size, "-r")
        rows += [measure_one(exe, m, path, size, model, ctx.tmp) for m in MODES]
        path.unlink()
    if any(r["go"] != version for r in rows):
        raise RuntimeError(f"readall-go was built by another Go than {go} ({version})")
    data = {"go": version, "chunked_readall": model.chunked, "rows": rows}
    return data


def render(data, out):
    if not data["go"]:
        n003c.render(data, out)
        return
    plot(data, out / "003-reads.png")
    (out / "003-readall.md").write_text(page(data))


# ---- page ----------------------------------------------------------------------------------

def plot(data, path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    series = {}
    for mode in MODES:
        pts = [r for r in data["rows"] if r["mode"] == mode and r["size"] > 0]
        series[f"{mode}: read() calls on the file"] = ([r["size"] for r in pts],
                                                       [r["file_reads"] for r in pts])
    pts = [r for r in data["rows"] if r["mode"] == "readall" and r["size"] > 0]
    series["readall: derived from the growth rule"] = ([r["size"] for r in pts],
                                                       [r["model_file_reads"] for r in pts])
    line_panel(ax, f"Lab note 003: read() calls to read a whole file ({data['go']})",
               "file size (log scale)", "read() calls on the file (log scale)",
               series, xbytes=True)
    save(fig, path)


def table(rows):
    head = ["size B", "mode", "reads (iotrace, all)", "on the file (strace) / derived",
            "Go heap alloc B", "mallocs", "mmap B, readable (strace)", "peak RSS KiB", "seconds"]
    out = [[f"{r['size']:,}", r["mode"], f"{r['reads']:,}",
            f"{r['file_reads']:,} / {r['model_file_reads']:,}", f"{r['alloc']:,}",
            f"{r['mallocs']:,}", f"{r['mmap_bytes'] - r['munmap_bytes']:,}",
            f"{r['maxrss_kib']:,}", f"{r['sec']:.4f}"] for r in rows]
    return md_table(head, out)


def bench_table(rows):
    head = ["mode", "note ns/op", "ours ns", "note B/op", "ours B", "note allocs/op",
            "ours mallocs"]
    out = []
    for mode in MODES:
        ns, bop, allocs = notes.N003_BENCH[mode]
        mine = [r for r in rows if r["mode"] == mode and r["size"] == notes.N003_BENCH_BYTES]
        r = mine[0] if mine else None
        out.append([mode, f"{ns:,}", num(r and round(r["sec"] * 1e9)), f"{bop:,}",
                    num(r and r["alloc"]), allocs, num(r and r["mallocs"])])
    return md_table(head, out)


def page(data):
    rows = data["rows"]
    other = sorted({r["other_reads"] for r in rows})
    sizes = {r["size"] for r in rows}
    big = notes.N003_BENCH_BYTES if notes.N003_BENCH_BYTES in sizes else max(sizes)
    by = {r["mode"]: r for r in rows if r["size"] == big}
    small = [r["mallocs"] for r in rows if r["mode"] == "readfile" and r["size"] <= MIB]
    rule = ("chunks of 256, 384, 576, … bytes (next += next/2) after the first 512, each "
            "rounded up to a size class" if data["chunked_readall"] else
            "one buffer grown by append: doubled below 256 bytes, then by (cap + 768)/4, "
            "rounded up to a size class")
    return TEMPLATE.format(
        note=notes.N003_CLAIM, go=data["go"], rule=rule, other=", ".join(map(str, other)),
        table=table(rows),
        bench=bench_table(rows), big=f"{big:,}",
        ra=by["readall"], rf=by["readfile"],
        ratio=by["readall"]["alloc"] / max(by["readfile"]["alloc"], 1),
        per_byte=by["readall"]["alloc"] / max(big, 1),
        note_per_byte=notes.N003_BENCH["readall"][1] / notes.N003_BENCH_BYTES,
        time_ratio=by["readall"]["sec"] / max(by["readfile"]["sec"], 1e-9),
        note_time_ratio=notes.N003_BENCH["readall"][0] / notes.N003_BENCH["readfile"][0],
        small_mallocs="–".join(str(m) for m in sorted(set(small))) or "—",
        rf_mallocs=by["readfile"]["mallocs"])


TEMPLATE = """# Lab note 003: io.ReadAll against os.ReadFile, in Go

{note}

**Our conditions:** `workloads/readall-go`, built with {go} from the standard library only
(`io.ReadAll` and `os.ReadFile` are the modern names of the `ioutil` functions; the modes
are the note's four benchmarks), reading files of random bytes on vda's ext4; each size and
mode run once under `iotrace --json` (read calls, bytes) and once under iotrace and
`strace -f -yy -e trace=read,mmap,munmap` together (which reads were on the file, mapped
bytes; iotrace's count for the Go process equals strace's in that run, every row). The
program prints the Go heap's own `TotalAlloc` and `Mallocs` growth over the call (the
note's B/op and allocs/op), its peak RSS and the call's time.

**The read count, derived:** {go}'s `io.ReadAll` (read from its $GOROOT/src/io/io.go)
grows by {rule}; a regular file fills every buffer offered, so an S-byte file costs the
number of buffers needed to hold S bytes plus the read that returns 0.
`os.ReadFile` costs 2 reads (S bytes into a buffer of S+1, then 0), `io.ReadFull` 1, the
fixed loop ceil(S/4096) + 1. The "derived" column is that count
(scripts/labnotes/gogrowth.py); "on the file" is strace's; iotrace's count is the whole
process's, which also includes the Go runtime's own reads at start-up
(`/sys/kernel/mm/transparent_hugepage/hpage_pmd_size`, `/proc/self/cgroup`,
`/proc/self/mountinfo`, and a few more as the heap grows: {other} here).

{table}

![read calls by file size](003-reads.png)

## The note's benchmark beside ours

The note's code comment says 804,335,663 bytes, but its own B/op say the file it measured
was about 209.3 MB: ReadFile (Go of 2019: a buffer of the file's size + 512 bytes) and
ReadFull (exactly the file's size) allocated 209,305,932 and 209,305,966 bytes per call.
So the rows below are one call each on a {big}-byte file (the table above also has the
commented size).

{bench}

## Where we differ and why

- The ordering holds: at {big} bytes ReadAll allocates {ratio:.1f}× what ReadFile does
  ({ra[alloc]:,} B against {rf[alloc]:,} B) and takes {time_ratio:.1f}× as long (the
  note: {note_time_ratio:.1f}×). ReadFile and ReadFull allocate the file's size once:
  {small_mallocs} heap objects per call up to 1 MiB, as the note's 5; {rf_mallocs} at this
  size, because `MemStats.Mallocs` counts every object the process allocated meanwhile, the
  runtime's own included (the garbage collector runs during such a call).
- Read calls: ReadAll's count grows with the logarithm of the size ({ra[file_reads]:,} reads
  at {big} bytes), ReadFile's is 2 at every size; the note measured time and memory, not
  calls, and its "doubling" describes the Go of 2019 (`bytes.Buffer` growth). Go 1.26
  changed `io.ReadAll` to collect chunks growing by half and copy them once into an
  exactly-sized result: it allocates {per_byte:.2f} bytes per byte of file here, against
  the note's {note_per_byte:.2f}.
- Our times are one call, not `go test -bench` averages, on a different machine (the note:
  a 2019 Mac); they are shown for the ratio only.
"""
