"""The shape of iotrace's outputs: every JSON key path and every Prometheus family with its
label names, with the parts that vary from run to run (syscall names, disks, pids) folded.

tests/data/*.shape hold the shapes recorded from earlier binaries: a key that disappears or
is renamed is a break for users, and a new key must be added there on purpose (and to
docs/json.md). Regenerate with `python3 tests/shapes.py record` after an intended change.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IOTRACE = ROOT / "iotrace"
WL = ROOT / "workloads"
DATA = ROOT / "tests" / "data"

# Objects whose keys are data (names of syscalls, disks, io kinds), not schema.
DATA_KEYED = {"syscalls", "io", "disks", "disk_stat", "io_uring"}


def json_paths(obj, path="", out=None):
    out = set() if out is None else out
    if path.endswith(".disks.*") or path.endswith("files[].block"):
        # A disk appears when it did I/O, a file's block operation when it had one; their
        # objects have the shape of a process's block.read etc.
        return out
    if isinstance(obj, dict) and "buckets" in obj and "count" in obj:
        # A histogram: which of min/max/p50/p99 it carries depends on the data, not schema.
        out.add(path + ":histogram")
    elif isinstance(obj, dict):
        for k, v in obj.items():
            key = "*" if path.rsplit(".", 1)[-1] in DATA_KEYED else k
            sub = f"{path}.{key}" if path else key
            if sub.endswith(".disks.*") or sub.endswith(".disk_stat.*"):
                continue  # a disk is there when it did I/O: data, not schema
            out.add(sub)
            json_paths(v, sub, out)
    elif isinstance(obj, list):
        for v in obj:
            json_paths(v, path + "[]", out)
    return out


PROM_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? ")
PROM_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"')


def prom_families(text):
    """{"TYPE name kind"} for every family, and {"LABELS name l1,l2"} with the label names
    its samples carry (a family whose samples depend on the run, such as block I/O by disk,
    has no LABELS line when it had no sample)."""
    out, labels = set(), {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            out.add(f"TYPE {name} {kind}")
            continue
        m = PROM_SAMPLE.match(line)
        if m:
            labels.setdefault(m.group(1), set()).update(PROM_LABEL.findall(m.group(2) or ""))
    out |= {f"LABELS {name} {','.join(sorted(names))}" for name, names in labels.items()}
    return out


def compare_prom(want, got):
    """(gone, new): TYPE lines must match; LABELS lines where both runs had samples."""
    def split(lines):
        types = {l for l in lines if l.startswith("TYPE ")}
        labels = {l.split()[1]: l for l in lines if l.startswith("LABELS ")}
        return types, labels
    (wt, wl), (gt, gl) = split(want), split(got)
    both = wl.keys() & gl.keys()
    return ((wt - gt) | {wl[n] for n in both if wl[n] != gl[n]},
            (gt - wt) | {gl[n] for n in both if wl[n] != gl[n]})


def scenarios(tmp):
    """(name, env, iotrace options, command) of the runs whose shapes are recorded."""
    src = tmp / "in"
    subprocess.run([WL / "mkinput", "-r", "4m", src], check=True)
    script = f"cat {src} > /dev/null; dd if=/dev/zero of={tmp}/out bs=64k count=16 " \
             f"conv=fsync 2>/dev/null; {WL}/read-file -i -n 1m {src}"
    off = {"IOTRACE_DISABLE_TRACEPOINTS":
           "mm_filemap_fault,iomap_dio_rw_begin,io_uring_complete"}
    return [
        ("pipeline", {}, ["--sync"], ["/bin/sh", "-c", script]),
        ("single", {}, [], [str(WL / "read-file"), "-n", "1m", str(src)]),
        ("notime", {}, ["--no-time"], [str(WL / "read-file"), "-n", "1m", str(src)]),
        ("hooks-off", off, [], ["/bin/sh", "-c", f"cat {src} >/dev/null; true"]),
        # a child in the overflow slot writes to the disk every time (O_DIRECT): its
        # comm-labelled block series never depend on what the page cache holds
        ("overflow", {}, ["--max-procs", "1"],
         ["/bin/sh", "-c", f"true; true; dd if=/dev/zero of={tmp}/direct bs=4k count=1 "
                           "oflag=direct 2>/dev/null"]),
        ("uring", {}, [], [str(WL / "uring"), "-w", "8", "-n", "8", "-f", "1", "-o",
                           str(tmp / "uring.dat")]),
    ]


def run_shapes(tmp):
    """{scenario: (json paths, prom families)} from the current binary."""
    shapes = {}
    for name, env, opts, cmd in scenarios(tmp):
        out, prom = tmp / f"{name}.json", tmp / f"{name}.prom"
        subprocess.run([IOTRACE, "--json", "-o", out, "--prom-file", prom, *opts, "--", *cmd],
                       env={**os.environ, **env}, check=True, stdout=subprocess.DEVNULL)
        shapes[name] = (json_paths(json.loads(out.read_text())),
                        prom_families(prom.read_text()))
    return shapes


def record():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        for name, (paths, fams) in run_shapes(Path(d)).items():
            (DATA / f"{name}.json.shape").write_text("\n".join(sorted(paths)) + "\n")
            (DATA / f"{name}.prom.shape").write_text("\n".join(sorted(fams)) + "\n")


if __name__ == "__main__" and sys.argv[1:] == ["record"]:
    record()
