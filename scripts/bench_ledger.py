"""Measurements of `make bench` beyond wall time (imported by scripts/bench.py):

- program_ns: the kernel's own accounting of the time iotrace's syscall programs take per
  run (kernel.bpf_stats_enabled: run_time_ns / run_cnt), for this build and a baseline, in
  alternation. It is steadier than wall time on a shared machine and names the program
  that costs; it includes the two clock reads the accounting itself adds, the same for
  every binary.
- memory_watch: a run's peak RSS, split into iotrace's own memory (RssAnon) and the rest
  (mostly BPF maps mapped from the kernel: ring buffers, the counter arrays, the ledger's
  entries and rows), sampled from /proc/PID/status, and the BPF map memory of its programs.
- ledger_scale: `tar cf - TREE | cat` over a generated tree of 50,000 files under iotrace:
  peak memory, BPF map memory, and what the ledger lost (drops.files, drops.paths).
"""
import json
import statistics
import subprocess
import time
from pathlib import Path

PROGRAMS = ("handle_sys_enter", "handle_sys_exit")


def bpf_programs():
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True,
                         text=True).stdout
    return json.loads(out or "[]")


def map_bytes(progs):
    """BPF map memory (bytes_memlock) of the maps the given programs use."""
    maps = json.loads(subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True,
                                     text=True).stdout or "[]")
    ids = {m for p in progs for m in p.get("map_ids", [])}
    return sum(m.get("bytes_memlock", 0) for m in maps if m["id"] in ids)


def new_programs(before, prefix):
    """Programs loaded since `before` (a set of ids) whose name starts with prefix: the
    bench runs one tool at a time, so these are the traced run's."""
    return [p for p in bpf_programs() if p["id"] not in before
            and p.get("name", "").startswith(prefix)]


def status_kib(pid, field):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def memory_watch(argv, stdin=None, interval=0.02):
    """Runs argv (an iotrace command line); returns (returncode, peak VmHWM KiB, peak
    RssAnon KiB, BPF map bytes of its handle_* programs)."""
    before = {p["id"] for p in bpf_programs()}
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
    proc = subprocess.Popen(argv, stdin=fin, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    hwm = anon = maps = 0
    next_maps = time.monotonic()
    while proc.poll() is None:
        hwm = max(hwm, status_kib(proc.pid, "VmHWM") or 0)
        anon = max(anon, status_kib(proc.pid, "RssAnon") or 0)
        if not maps or time.monotonic() >= next_maps:  # bpftool is slow: now and then
            maps = max(maps, map_bytes(new_programs(before, "handle_")))
            next_maps = time.monotonic() + 0.2
        time.sleep(interval)
    if stdin:
        fin.close()
    return proc.returncode, hwm, anon, maps


def program_ns(variants, argv, stdin, rounds):
    """variants: {label: iotrace command prefix}. Returns {label: {program: median ns per
    run}}; each round runs every variant once, in turn."""
    samples = {label: {p: [] for p in PROGRAMS} for label in variants}
    Path("/proc/sys/kernel/bpf_stats_enabled").write_text("1")
    try:
        for _ in range(rounds):
            for label, prefix in variants.items():
                for prog, ns in one_program_run(prefix + ["--"] + argv, stdin).items():
                    samples[label][prog].append(ns)
    finally:
        Path("/proc/sys/kernel/bpf_stats_enabled").write_text("0")
    return {label: {p: statistics.median(v) for p, v in progs.items() if v}
            for label, progs in samples.items()}


def one_program_run(argv, stdin):
    """ns per run of each syscall program during one traced command (last sample before it
    detached)."""
    before = {p["id"] for p in bpf_programs()}
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
    proc = subprocess.Popen(argv, stdin=fin, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    last = {}
    while proc.poll() is None:
        for p in new_programs(before, "handle_sys_"):
            if p.get("name") in PROGRAMS and p.get("run_cnt"):
                last[p["name"]] = p["run_time_ns"] / p["run_cnt"]
        time.sleep(0.05)
    if stdin:
        fin.close()
    return last


def make_tree(root, files=50000, per_dir=1000):
    for i in range(files):
        d = root / f"d{i // per_dir}"
        if i % per_dir == 0:
            d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i % per_dir}").write_bytes(b"x" * (i % 7 * 300 + 1))


def ledger_scale(iotrace, tmp, files=50000):
    """tar over a tree of `files` files under iotrace: memory and losses."""
    tree = tmp / "tree"
    make_tree(tree, files)
    out = tmp / "ledger.json"
    rc, hwm, anon, maps = memory_watch(
        [str(iotrace), "--json", "-o", str(out), "--", "/bin/sh", "-c",
         f"tar cf - -C {tmp} tree | cat > /dev/null"])
    report = json.loads(out.read_text()) if rc == 0 else {}
    drops = report.get("drops", {})
    tar = [p for p in report.get("processes", []) if p.get("comm") == "tar"]
    seen = sum(1 for p in tar for f in p["files"] if f["path"].startswith(str(tree) + "/")
               and f["kind"] == "file")
    return {"files": files, "files_in_report": seen, "peak_rss_kib": hwm,
            "peak_anon_kib": anon, "bpf_map_bytes": maps,
            "drops_files": drops.get("files"), "drops_paths": drops.get("paths"),
            "returncode": rc}
