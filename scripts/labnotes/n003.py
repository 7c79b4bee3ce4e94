"""Lab note 003: io.ReadAll against os.ReadFile, in Go, over a sweep of file sizes.

workloads/readall-go (built by make where Go is found) under iotrace and strace: read calls
(iotrace: all the process's; strace -yy: those on the file), the Go heap's own allocation
figures (the note's B/op and allocs/op), mmap bytes and peak RSS, time. Without Go the page
says so and shows the C imitation (workloads/readall) instead.
"""
import re

from . import gogrowth, notes
from .common import (KIB, MIB, iotrace, line_panel, md_table, mkinput, num, pyplot,
                     run_redirected, save, wl, write_json)

MODES = ["readall", "readfile", "readfull", "fixed"]
QUICK_SIZES = [0, 1, 511, 512, 513, 100000, 1 * MIB, 3 * MIB + 5]
SIZES = [KIB << (2 * i) for i in range(10)] + [notes.N003_FILE_BYTES]
# Calls are matched by their first line: with several threads strace may split a call into
# "<unfinished ...>" and "<... resumed>" lines. Go reserves address space with PROT_NONE
# mappings; only mappings made accessible are memory.
MMAP = re.compile(r"^\d+ +mmap\([^,]+, (\d+), PROT_(?!NONE)")
MUNMAP = re.compile(r"^\d+ +munmap\(0x[0-9a-f]+, (\d+)")
READ = re.compile(r"^\d+ +read\(\d+<([^>]*)>")


def binary():
    from .common import WL
    path = WL / "readall-go"
    return path if path.exists() else None


def parse_output(stdout):
    """readall-go's line: {key: value}."""
    fields = dict(kv.split("=", 1) for kv in stdout.decode().split())
    return {k: v if k in ("mode", "go") else float(v) if k == "sec" else int(v)
            for k, v in fields.items()}


def strace_run(args, log):
    """Read calls on the file and elsewhere, mmap/munmap bytes, from one strace -f -yy."""
    run_redirected(["strace", "-f", "-yy", "-e", "trace=read,mmap,munmap", "-o", log, *args])
    file_reads = other_reads = mapped = unmapped = 0
    for line in log.read_text(errors="replace").splitlines():
        if (m := READ.match(line)):
            if m[1] == str(args[-1]):
                file_reads += 1
            else:
                other_reads += 1
        elif (m := MMAP.match(line)):
            mapped += int(m[1])
        elif (m := MUNMAP.match(line)):
            unmapped += int(m[1])
    return {"file_reads": file_reads, "other_reads": other_reads, "mmap_bytes": mapped,
            "munmap_bytes": unmapped}


def measure(exe, mode, path, size, model, tmp):
    args = [exe, "-m", mode, path]
    report, res = iotrace(args, tmp / "003.json")
    own = parse_output(res.stdout)
    st = strace_run(args, tmp / "003.strace")
    calls = report["totals"]["syscalls"]
    return {"mode": mode, "size": size, "model_file_reads": model.file_reads(mode, size),
            "reads": calls["read"]["calls"], "read_bytes":
                report["totals"]["io"]["read"]["transferred_bytes"],
            "mmap_calls": calls.get("mmap", {}).get("calls", 0), **st,
            "returned_bytes": own["bytes"], "alloc": own["alloc"], "mallocs": own["mallocs"],
            "maxrss_kib": own["maxrss_kib"], "sec": own["sec"], "go": own["go"]}


def run(ctx):
    exe, go = binary(), gogrowth.find_go()
    if not exe or not go:
        (ctx.out / "003-readall.md").write_text(NO_GO)
        write_json(ctx.out / "003.json", {"go": None})
        return
    model, version = gogrowth.release(go)
    rows = []
    for size in QUICK_SIZES if ctx.quick else SIZES:
        path = mkinput(ctx.tmp / f"in.{size}", size, "-r")
        rows += [measure(exe, m, path, size, model, ctx.tmp) for m in MODES]
        path.unlink()
    if any(r["go"] != version for r in rows):
        raise RuntimeError(f"readall-go was built by another Go than {go} ({version})")
    data = {"go": version, "chunked_readall": model.chunked, "rows": rows}
    write_json(ctx.out / "003.json", data)
    plot(data, ctx.out / "003-reads.png")
    (ctx.out / "003-readall.md").write_text(page(data))


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
               "file size (bytes, log scale)", "read() calls on the file (log scale)",
               series)
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
        mine = [r for r in rows if r["mode"] == mode and r["size"] == notes.N003_FILE_BYTES]
        r = mine[0] if mine else None
        out.append([mode, f"{ns:,}", num(r and round(r["sec"] * 1e9)), f"{bop:,}",
                    num(r and r["alloc"]), allocs, num(r and r["mallocs"])])
    return md_table(head, out)


def page(data):
    rows = data["rows"]
    other = sorted({r["other_reads"] for r in rows})
    big = max(r["size"] for r in rows)
    by = {r["mode"]: r for r in rows if r["size"] == big}
    rule = ("chunks of 256, 384, 576, … bytes (next += next/2) after the first 512, each "
            "rounded up to a size class" if data["chunked_readall"] else
            "one buffer grown by append: doubled below 256 bytes, then by (cap + 768)/4, "
            "rounded up to a size class")
    return TEMPLATE.format(
        go=data["go"], rule=rule, other=", ".join(map(str, other)), table=table(rows),
        bench=bench_table(rows), big=f"{big:,}",
        ra=by["readall"], rf=by["readfile"],
        ratio=by["readall"]["alloc"] / max(by["readfile"]["alloc"], 1),
        time_ratio=by["readall"]["sec"] / max(by["readfile"]["sec"], 1e-9))


TEMPLATE = """# Lab note 003: io.ReadAll against os.ReadFile, in Go

**The note** (2019) benchmarked four ways to read an 804,335,663-byte file in Go on
darwin/amd64: a fixed 4 KiB buffer appended to a slice, `ioutil.ReadAll`, `ioutil.ReadFile`
and `io.ReadFull` into a buffer sized by `Stat`. ReadFile was 3.6× faster than ReadAll and
allocated 209 MB per call against 537 MB, because ReadFile sizes its buffer from the file
size once, while ReadAll starts at 512 bytes and grows (the note: doubling), copying as it
goes.

**Our conditions:** `workloads/readall-go`, built with {go} from the standard library only
(`io.ReadAll` and `os.ReadFile` are the modern names of the `ioutil` functions; the modes
are the note's four benchmarks), reading files of random bytes on vda's ext4; each size and
mode run once under `iotrace --json` (read calls, bytes) and once under
`strace -f -yy -e trace=read,mmap,munmap` (which reads were on the file, mapped bytes). The
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
`/proc/self/mountinfo`: {other} here).

{table}

![read calls by file size](003-reads.png)

## The note's benchmark beside ours (one call each on a file of the note's size)

{bench}

## Where we differ and why

- The ordering holds: ReadAll allocates {ratio:.1f}× what ReadFile does at {big} bytes
  ({ra[alloc]:,} B against {rf[alloc]:,} B) and takes {time_ratio:.1f}× as long; ReadFile
  and ReadFull allocate the file's size once (5 objects, as in the note).
- Read calls: ReadAll's count grows with the logarithm of the size ({ra[file_reads]:,} reads
  at {big} bytes), ReadFile's is 2 at every size; the note measured time and memory, not
  calls, and its "doubling" describes the Go of 2019 (append's growth). Go 1.26 changed
  `io.ReadAll` to collect chunks growing by half and copy them once into an exactly-sized
  result, so it now allocates roughly twice the file rather than the note's 2.6×.
- Our times are one call, not `go test -bench` averages, on a different machine (the note:
  a 2019 Mac); they are shown for the ratio only.
"""

NO_GO = """# Lab note 003: io.ReadAll against os.ReadFile, in Go

No Go toolchain was found (`command -v go`, `/usr/local/go/bin/go`), so
`workloads/readall-go` was not built and this page has no measurements. `scripts/deps.sh`
installs Debian's golang-go; run `make` and `make experiments` again. The C imitation,
`workloads/readall -m grow|stat FILE`, shows the same read pattern without Go.
"""
