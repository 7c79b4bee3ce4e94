"""Measurements of `make bench` beyond wall time (imported by scripts/bench.py):

- program_ns: the kernel's own accounting of the time iotrace's syscall programs take per
  run (BPF_ENABLE_STATS: run_time_ns / run_cnt), for this build and a baseline, in
  alternation. It is steadier than wall time on a shared machine and names the program
  that costs; it includes the two clock reads the accounting itself adds, the same for
  every binary. The programs are the ones the traced run's iotrace holds descriptors of
  (/proc/PID/fdinfo), never "any program loaded meanwhile": other iotraces run beside the
  bench on a shared machine.
- process_program_us: the same accounting summed over all of iotrace's programs while a
  shell starts 300 short processes, divided by 300: the kernel time each short process
  costs, by program.
- memory_watch: a run's peak RSS, split into iotrace's own memory (RssAnon) and the rest
  (mostly BPF maps mapped from the kernel: ring buffers, the counter arrays, the ledger's
  entries and rows), sampled from /proc/PID/status, and the BPF map memory of its programs.
- ledger_scale: `tar cf - TREE | cat` over a generated tree of 50,000 files under iotrace:
  peak memory, BPF map memory, and what the ledger lost (drops.files, drops.paths).
"""
import contextlib
import ctypes
import json
import os
import statistics
import struct
import subprocess
import tempfile
import time
from pathlib import Path

PROGRAMS = ("handle_sys_enter", "handle_sys_exit")
BPF_ENABLE_STATS, BPF_STATS_RUN_TIME = 32, 0  # uapi linux/bpf.h
NR_BPF = {"x86_64": 321, "aarch64": 280}


@contextlib.contextmanager
def run_time_stats():
    """Programs' run time accounted while in the block: BPF_ENABLE_STATS's descriptor, which
    the kernel counts per holder, not the kernel.bpf_stats_enabled switch that one writer's
    0 turns off for every other (benches beside each other on a shared machine)."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.create_string_buffer(struct.pack("I", BPF_STATS_RUN_TIME), 16)
    fd = libc.syscall(NR_BPF[os.uname().machine], BPF_ENABLE_STATS, attr, 16)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "BPF_ENABLE_STATS")
    try:
        yield
    finally:
        os.close(fd)


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


def own_program_ids(pid):
    """Ids of the BPF programs process pid holds a descriptor of (a program's or a link's)."""
    ids = set()
    for info in Path(f"/proc/{pid}/fdinfo").glob("*"):
        try:
            ids.update(int(line.split()[1]) for line in info.read_text().splitlines()
                       if line.startswith("prog_id:"))
        except (OSError, ValueError, IndexError):
            pass
    return ids


def program_stats(ids):
    """{name: (run_time_ns, run_cnt)} of the programs with these ids that still exist (one
    bpftool for all: each process it starts runs the measured programs too)."""
    return {p.get("name", str(p["id"])): (p.get("run_time_ns", 0), p.get("run_cnt", 0))
            for p in bpf_programs() if p["id"] in ids}


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
    with run_time_stats():
        for _ in range(rounds):
            for label, prefix in variants.items():
                for prog, ns in one_program_run(prefix + ["--"] + argv, stdin).items():
                    samples[label][prog].append(ns)
    return {label: {p: statistics.median(v) for p, v in progs.items() if v}
            for label, progs in samples.items()}


def one_program_run(argv, stdin):
    """ns per run of each syscall program during one traced command (last sample before it
    detached)."""
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
    proc = subprocess.Popen(argv, stdin=fin, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    ids, last = set(), {}
    while proc.poll() is None:
        ids |= own_program_ids(proc.pid)
        for name, (ns, runs) in program_stats(ids).items():
            # the floor's programs are floor_sys_enter/_exit: counted as the same hooks
            hook = "handle_" + name.split("_", 1)[1] if name.startswith("floor_") else name
            if hook in PROGRAMS and runs:
                last[hook] = ns / runs
        time.sleep(0.05)
    if stdin:
        fin.close()
    return last


def process_program_us(variants, rounds, processes=300):
    """variants: {label: iotrace binary}. Kernel time of each build's programs per short
    process, while `sh` runs /bin/true `processes` times: {label: {"total_us": median,
    "min_us", "max_us", "programs": {name: median us}}}. The window opens once the
    programs are attached (the command waits on a FIFO) and closes before the shell
    exits, so start-up and the report fall outside it; the programs run for every task of
    the machine, and other tasks' syscalls meanwhile count too (about 80 ns each)."""
    samples = {label: [] for label in variants}
    with run_time_stats():
        for _ in range(rounds):
            for label, binary in variants.items():
                samples[label].append(one_process_window(binary, processes))
    out = {}
    for label, runs in samples.items():
        totals = [sum(r.values()) for r in runs if r]
        names = {n for r in runs for n in r}
        out[label] = {"total_us": statistics.median(totals) if totals else None,
                      "min_us": min(totals, default=None), "max_us": max(totals, default=None),
                      "programs": {n: statistics.median(r.get(n, 0) for r in runs)
                                   for n in sorted(names)}}
    return out


def one_process_window(binary, processes):
    """{program: us per process} of one run (process_program_us). The shell waits on FIFOs
    (its built-in read), so it starts no process of its own outside the loop."""
    with tempfile.TemporaryDirectory() as tmp:
        go, done = Path(tmp) / "go", Path(tmp) / "done"
        os.mkfifo(go)
        os.mkfifo(done)
        script = (f"read x < {go}; i=0; while [ $i -lt {processes} ]; do /bin/true; "
                  f"i=$((i+1)); done; echo > {done}; read x < {go}")
        proc = subprocess.Popen([str(binary), "-o", "/dev/null", "--", "/bin/sh", "-c", script],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            ids = attached_programs(proc)
            if not ids:
                return {}
            before = program_stats(ids)
            with open(go, "w") as f:  # the loop starts ...
                f.write("\n")
            with open(done) as f:  # ... and ends
                f.read()
            after = program_stats(ids)
            with open(go, "w") as f:
                f.write("\n")
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return {n: (ns - before.get(n, (0, 0))[0]) / processes / 1000
            for n, (ns, _) in after.items()}


def attached_programs(proc, settle=0.5, timeout=60):
    """The program ids proc holds once they have stayed the same for `settle` seconds."""
    ids, since, deadline = set(), time.monotonic(), time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        now = own_program_ids(proc.pid)
        if not now or now != ids:
            ids, since = now, time.monotonic()
        elif time.monotonic() - since >= settle:
            return ids
        time.sleep(0.1)
    return set()


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
