"""Smoke test of `make bench`'s script: every tool runs and its counts are parsed (one small
workload, one run). The overhead numbers themselves belong to docs/performance.md."""
import json
import re
import resource
import subprocess
import sys

from helpers import IOTRACE, ROOT, mkinput, wl


def test_bench_script_runs_every_tool(tmp_path):
    subprocess.run([sys.executable, ROOT / "scripts/bench.py", "--quick", "--runs", "1",
                    "--only", "true (fixed cost)", "--only", "tr2b", "--out", tmp_path],
                   check=True, timeout=600)
    data = json.loads((tmp_path / "performance.json").read_text())
    row = data["results"]["tr2b"]
    assert set(row) == {"untraced", "iotrace", "iotrace --time-all", "iotrace --no-time",
                        "strace -f -c", "perf trace -s", "bpftrace hist",
                        "floor (no-op tp_btf)", "iotrace --trace", "iotrace --stacks",
                        "iotrace --stacks dwarf"}
    for tool, cell in row.items():
        assert cell["median_s"] is not None or cell["error"], tool
    reads, writes = row["strace -f -c"]["reads_writes"]
    assert reads > 10 and writes > 10
    assert row["iotrace"]["counts_equal_strace"] is True
    assert row["iotrace --no-time"]["counts_equal_strace"] is True
    assert row["iotrace --time-all"]["counts_equal_strace"] is True
    # The block percentile table: every request of the fio job with a latency seen by both
    # observers; every byte fio read (its JSON) is in a counted request, and those without a
    # latency are the run's late completions (docs/block.md, "Late completions").
    block = data["accuracy"]["block"]
    assert len(block) == 2
    for case in block.values():
        assert case["fio_ios"] == 2000, case
        assert case["requests"] == case["exact_requests"] >= 1000, case
        assert case["all_bytes"] >= case["fio_bytes"] == 2000 * 4096, case
        assert case["all_requests"] - case["requests"] <= case["late"], case
        assert all(case[q]["iotrace"] > 0 and case[q]["exact"] > 0 for q in ("p50", "p99"))
    assert data["peak_rss_kib"] > data["peak_anon_kib"] > 0 and data["bpf_map_bytes"] > 0
    # The ledger at scale (2,000 files with --quick): every file in tar's ledger, none lost.
    led = data["ledger"]
    assert led["files_in_report"] == led["files"] == 2000 and led["returncode"] == 0
    assert led["drops_files"] == 0 and led["drops_paths"] == 0 and led["bpf_map_bytes"] > 0
    text = (tmp_path / "performance.md").read_text()
    assert "| tr2b |" in text and (tmp_path / "performance.png").exists()
    # The command's own time (bench/cmdtime) lies inside the whole command line's.
    for tool, cell in row.items():
        if cell["median_s"] is not None:
            assert 0 < cell["cmd_min_s"] <= cell["cmd_median_s"] < cell["median_s"], tool
    measured = {t for t, c in row.items() if t != "untraced" and c["cmd_median_s"] is not None}
    assert set(data["command_time"]["tr2b"]) == measured
    assert {t for t in set(row) - measured - {"untraced"}} == \
        {"iotrace --trace", "iotrace --stacks", "iotrace --stacks dwarf"}  # not on tr2b
    fixed = data["results"]["true (fixed cost)"]
    assert fixed["iotrace"]["median_s"] > fixed["untraced"]["median_s"]
    # --render rebuilds the same table from the JSON alone.
    again = tmp_path / "again"
    again.mkdir()
    subprocess.run([sys.executable, ROOT / "scripts/bench.py", "--render",
                    tmp_path / "performance.json", "--out", again], check=True, timeout=120)
    assert (again / "performance.md").read_text() == text
    assert "| start-up | ≤ 50 ms |" in text and "| BPF map memory | ≤ 64 MiB |" in text



def held_open():
    """iotrace tracing `read` of a pipe: runs until the pipe is closed."""
    return subprocess.Popen([IOTRACE, "-o", "/dev/null", "--", "/bin/sh", "-c", "read x"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def test_process_program_time_is_the_runs_own():
    """bench's bpf_stats figures read the programs of the iotrace it started, found through
    that process's descriptors: another iotrace loaded beside it (as other runs on a shared
    machine are) has programs of the same names, never read. The per-process window holds
    the loop's processes' exec and exit hooks."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_ledger
    first, second = held_open(), held_open()
    try:
        ids = [bench_ledger.attached_programs(p) for p in (first, second)]
        names = [set(bench_ledger.program_stats(i)) for i in ids]
    finally:
        for p in (first, second):
            p.communicate(b"\n", timeout=60)
    assert ids[0] and ids[1] and not ids[0] & ids[1]
    assert "handle_sys_exit" in names[0] and names[0] == names[1]
    result = bench_ledger.process_program_us({"iotrace": IOTRACE}, 1, processes=20)
    progs = result["iotrace"]["programs"]
    assert {"handle_sys_enter", "handle_sys_exit", "handle_sched_process_exec",
            "handle_sched_process_exit"} <= set(progs)
    assert all(progs[p] > 0 for p in ("handle_sys_exit", "handle_sched_process_exec"))


def test_report_latency_gives_iotrace_own_cpu(tmp_path):
    """bench_latency's run: the report's latency, and iotrace's own CPU per process (its
    rusage less the command's, which the shell's `times` gives): more than nothing, and less
    than all of it (the command's own share is out)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_latency
    ms, own_us = bench_latency.once(IOTRACE, [], 200, tmp_path)
    whole = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert 0 < ms < 60_000
    assert 0 < own_us * 200 / 1e6 < whole.ru_utime + whole.ru_stime
    assert bench_latency.once(IOTRACE, ["--no-such-option"], 10, tmp_path) is None


def test_bpf_profile_charges_samples_to_program_lines(tmp_path):
    """scripts/bpf_profile.py on tr2u: its samples in BPF programs go to the syscall hooks'
    source lines (a sample's innermost BPF frame), the per-call figures follow from the
    counts, and the command's own output and exit status are left alone."""
    n = 300_000
    data = mkinput(tmp_path / "in", n)
    with open(data, "rb") as stdin, open(tmp_path / "out", "wb") as out:
        res = subprocess.run([sys.executable, ROOT / "scripts/bpf_profile.py", "--top", "40",
                              "--per", str(2 * n + 1), "--", IOTRACE, "-o", "/dev/null", "--",
                              wl("tr2u"), "a", "b"], stdin=stdin, stdout=out,
                             stderr=subprocess.PIPE, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "out").stat().st_size == n  # tr2u's output, not the profile
    head = re.match(r"(\d+) samples, (\d+) in BPF programs", res.stderr)
    assert head and 0 < int(head[2]) < int(head[1]), res.stderr
    progs = dict((m[2], int(m[1])) for m in
                 re.finditer(r"^ +(\d+) +[\d.]+  (handle_\w+)$", res.stderr, re.M))
    assert {"handle_sys_enter", "handle_sys_exit"} <= set(progs), res.stderr
    assert sum(progs.values()) == int(head[2])
    lines = re.findall(r"^ +(\d+) +([\d.]+)  \S+ +([\w.]+\.[ch]):(\d+) ", res.stderr, re.M)
    assert any(f == "syscalls.bpf.c" for _, _, f, _ in lines), res.stderr
    # ns per call: count x 100 us / calls; line 0 is code the compiler made (no source line)
    for count, ns, _, line in lines:
        assert abs(float(ns) - int(count) * 1e5 / (2 * n + 1)) < 0.06 and int(line) >= 0
    bad = subprocess.run([sys.executable, ROOT / "scripts/bpf_profile.py"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "no iotrace command line" in bad.stderr
