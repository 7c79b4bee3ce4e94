"""Start-up (issue 7): CO-RE against the minimal BTF cut at build time (user/kernel/kbtf.h).

The minimal BTF must relocate every program exactly as the kernel's full BTF does, be used
only on the kernel it was cut from, and hand bpf_rdonly_cast the kernel's own type ids.
"""
import contextlib
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from helpers import IOTRACE, ROOT, iotrace_json, mkinput, run, run_stdin, strace_counts, wl
from test_pagecache import drop_cache, file_entry, settled_fincore

FULL = {**os.environ, "IOTRACE_FULL_BTF": "1"}
# The structs the programs cast (KERNEL_CAST_STRUCTS in bpf/iotrace.h, the one list of them).
CAST_TYPES = tuple(re.findall(r"X\((\w+)\)", re.search(
    r"#define KERNEL_CAST_STRUCTS\(X\) *(.*)",
    (ROOT / "bpf/iotrace.h").read_text().replace("\\\n", "")).group(1)))


def verbose_load(env=None):
    res = run([IOTRACE, "-v", "-o", "/dev/null", "--", "true"], env=env)
    assert res.returncode == 0, res.stderr
    return res.stderr.decode()


def kernel_struct_ids():
    """Ids of named structs in the running kernel's BTF, read by bpftool (the reference)."""
    dump = subprocess.run(["bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux"],
                          capture_output=True, text=True, check=True).stdout
    ids = {}
    for m in re.finditer(r"^\[(\d+)\] STRUCT '(\w+)'", dump, re.M):
        ids.setdefault(m.group(2), int(m.group(1)))
    return ids


def patched(log):
    """libbpf's record of each relocated instruction: {(prog, relo #): new value}."""
    out = {}
    for m in re.finditer(r"prog '(\w+)': relo #(\d+): patched insn #\d+ \((\S+)\) (?:imm|off|imm64) "
                         r"(-?\d+) -> (-?\d+)", log):
        out[(m.group(1), int(m.group(2)))] = (m.group(3), int(m.group(5)))
    return out


def test_kbtf_identity_check():
    """Fake kernel notes and BTF files: only the build kernel's ID and BTF size pass."""
    res = subprocess.run([ROOT / ".output/tests/kbtf_test"], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 9 and all(line.startswith("ok ") for line in lines), lines


def test_minimal_btf_on_the_build_kernel():
    log = verbose_load()
    m = re.search(r"CO-RE against the minimal BTF cut from this kernel at build time; "
                  r"kernel BTF ids: (.*)", log)
    assert m, log
    given = dict((k, int(v)) for k, v in (kv.split("=") for kv in m.group(1).split()))
    ref = kernel_struct_ids()
    assert given == {name: ref[name] for name in CAST_TYPES}


def test_full_btf_on_request():
    assert "CO-RE against /sys/kernel/btf/vmlinux: IOTRACE_FULL_BTF is set" in verbose_load(FULL)


def test_minimal_and_full_btf_relocate_alike():
    """Every field offset, size and enum value is the same; only cast type ids differ."""
    small, full = patched(verbose_load()), patched(verbose_load(FULL))
    assert len(small) > 200 and small.keys() == full.keys()
    ids = set(kernel_struct_ids()[name] for name in CAST_TYPES)
    differ = {k for k in small if small[k] != full[k]}
    # The type-id relocations: against the full BTF they are the kernel's ids; against the
    # minimal one they hold its renumbered ids, in code the verifier drops (maps.bpf.h).
    assert differ and all(full[k][0] == "LDIMM64" and full[k][1] in ids for k in differ)


def test_both_btfs_count_page_cache_and_direct_io_alike(tmp_path):
    """Cast-based programs (get_pages, add_to_page_cache, dio) under either BTF: exact."""
    path = mkinput(tmp_path / "f", 8 << 20)
    os.sync()  # dirty pages would stay cached
    for env in (None, FULL):
        drop_cache(path)
        report, res = iotrace_json([wl("read-file"), "-r", "-n", "8m", str(path)], tmp_path,
                                   env=env)
        assert res.returncode == 0, res.stderr
        f = file_entry(report, path)
        assert (f["requested_pages"], f["miss_pages"], f["added_pages"]) == (2048, 2048, 2048)
        assert f["readahead_windows"]["forced_sync"] == {"windows": 128, "pages": 2048}
        assert settled_fincore(path, 2048) == f["resident_pages"] == 2048
        report, res = iotrace_json([wl("read-file"), "-i", "-n", "8m", str(path)], tmp_path,
                                   env=env)
        assert res.returncode == 0, res.stderr
        f = file_entry(report, path)
        assert (f["direct_reads"], f["direct_read_bytes"]) == (128, 8 << 20)


SERIAL = {**os.environ, "IOTRACE_LOAD_THREADS": "1"}
TWO = {**os.environ, "IOTRACE_LOAD_THREADS": "2"}


def loaded_programs(log):
    """{program: (instructions processed, loaded by the second thread)} from -v."""
    return {m.group(1): (int(m.group(2)), bool(m.group(3))) for m in re.finditer(
        r"^iotrace: (\w+): verification time \d+ usec, processed (\d+) insns ?"
        r"(\(second thread\))?$", log, re.M)}


def counts_equal_strace(tmp_path, envs):
    """tr2u traced under each environment counts every syscall as strace -f -c does."""
    stdin = mkinput(tmp_path / "in.bin", 20000, "-r")
    args = [wl("tr2u"), "abc", "xyz"]
    for env in envs:
        report, res = iotrace_json(args, tmp_path, stdin, env=env)
        ref, sres = strace_counts(args, tmp_path, stdin)
        assert res.returncode == sres.returncode == 0, (res.stderr, sres.stderr)
        iot = {name: (v["calls"], v["errors"]) for name, v in report["totals"]["syscalls"].items()}
        assert iot == ref, (env is TWO, iot, ref)


def test_two_loader_threads_load_every_program_once(tmp_path):
    """With two CPUs (whatever the load, or IOTRACE_LOAD_THREADS=2) the programs are verified
    in two threads, split by the verifier's work
    (tracer_objects.c, "Loading in two threads"): the same programs as the one-thread load
    (IOTRACE_LOAD_THREADS=1), each once, with the same instructions processed (the second
    instance reuses the first's frozen .rodata: the verifier sees the same constants), each
    thread a part of the work; and a run traced by a two-thread load counts as strace -f -c
    from the command's first syscall (its programs attached before the exec)."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: iotrace loads in one thread")
    two, one = loaded_programs(verbose_load(TWO)), loaded_programs(verbose_load(SERIAL))
    assert one and {p: n for p, (n, _) in two.items()} == {p: n for p, (n, _) in one.items()}
    assert not any(second for _, second in one.values())
    share = sum(n for n, second in two.values() if second) / sum(n for n, _ in two.values())
    assert 0.25 < share < 0.75, two
    counts_equal_strace(tmp_path, (TWO, SERIAL))


def test_verifier_walk_log_and_its_reader(tmp_path):
    """IOTRACE_VERIFIER_LOG=PROG:FILE writes PROG's whole verifier log (docs/startup.md,
    "What the verifier walks more than once") and scripts/verifier_walk.py reads it: the
    visits it counts are the walk the verifier reports as `processed` for that program in
    -v (within the calls and exits the kernel counts on top), and its global functions are
    named. A setting that names no program, or a FILE that cannot be written, is one line
    and exit 1."""
    log = tmp_path / "walk.txt"
    res = run([IOTRACE, "-o", "/dev/null", "--", "true"],
              env={**os.environ, "IOTRACE_VERIFIER_LOG": f"handle_sys_enter:{log}"})
    assert res.returncode == 0, res.stderr
    text = log.read_text()
    processed = int(re.search(r"^processed (\d+) insns", text, re.M).group(1))
    assert processed == loaded_programs(verbose_load(SERIAL))["handle_sys_enter"][0]
    walk = subprocess.run([ROOT / "scripts/verifier_walk.py", log, "--top", "3"],
                          capture_output=True, text=True)
    assert walk.returncode == 0, walk.stderr
    visits = int(re.match(r"(\d+) instruction visits", walk.stdout).group(1))
    assert 0.8 * processed <= visits <= processed, walk.stdout
    assert "note_closing_file" in walk.stdout and "record_name" in walk.stdout, walk.stdout
    for spec in ("no_such_program:" + str(log), "handle_sys_enter",
                 f"handle_sys_enter:{tmp_path}/missing/walk.txt"):
        res = run([IOTRACE, "-o", "/dev/null", "--", "true"],
                  env={**os.environ, "IOTRACE_VERIFIER_LOG": spec})
        err = res.stderr.decode().strip()
        assert res.returncode == 1 and len(err.splitlines()) == 1, (spec, err)
        assert err.startswith("iotrace: IOTRACE_VERIFIER_LOG:"), err


def test_masks_equal_the_branches_they_replace():
    """bpf/masks.h: the masks sys_exit and the page cache's programs compute instead of
    branches (so that the verifier walks what follows once) give what the branches gave,
    over the edges of each range and ten million random values (tests/c/masks_test.c)."""
    res = subprocess.run([ROOT / ".output/tests/masks_test"], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 6 and all(re.match(r".*: 0 of \d{6,} differ$", l) for l in lines), lines


NO_BY_ID = {**os.environ, "IOTRACE_BY_ID": "0"}


def opens_kernel_btf(env, tmp_path):
    """Whether a traced `true` opened /sys/kernel/btf/vmlinux (strace -f of iotrace's openat)."""
    out = tmp_path / "openat.st"
    res = run(["strace", "-f", "-qq", "-e", "trace=openat", "-o", str(out), IOTRACE, "-o",
               "/dev/null", "--", "true"], env=env)
    assert res.returncode == 0, res.stderr
    return "/sys/kernel/btf/vmlinux" in out.read_text()


def test_by_id_build_needs_no_kernel_btf(tmp_path):
    """On the build kernel the full build loads as its by-id build (user/kernel/by_id.c): no
    read of the kernel's BTF at all, the same programs verified with the same instructions
    processed as the usual load (kfunc calls and attach targets as libbpf would set them),
    and counts equal to strace -f -c, in one thread and in two."""
    assert "libbpf parses no kernel BTF" in verbose_load()
    assert "libbpf parses no kernel BTF" not in verbose_load(NO_BY_ID)
    assert not opens_kernel_btf(None, tmp_path)
    assert opens_kernel_btf(NO_BY_ID, tmp_path)  # the check above can fail
    for env, said in ((None, True), (NO_BY_ID, False)):  # the report says how it loaded
        report, res = iotrace_json(["true"], tmp_path, env=env)
        assert res.returncode == 0, res.stderr
        assert ("kfuncs by their ids" in report["kernel"]["btf"]["core"]) == said
    for env in (SERIAL, TWO):
        by_id = loaded_programs(verbose_load(env))
        usual = loaded_programs(verbose_load({**env, "IOTRACE_BY_ID": "0"}))
        assert by_id and {p: n for p, (n, _) in by_id.items()} == \
            {p: n for p, (n, _) in usual.items()}
    counts_equal_strace(tmp_path, (SERIAL, TWO))


def test_by_id_falls_back_when_an_id_is_missing(tmp_path):
    """A program whose attach target the build did not record fails its by-id load, and the
    loader loads the usual way (tracer_load.c): here a copy of iotrace whose record of
    sys_enter's tracepoint is renamed. Loaded so, one thread or two (the second thread's
    load fails after the first's attached its hooks and mapped the counters: all undone),
    it holds the same maps mapped as iotrace does, its report does not say the ids were
    used, and it counts tr2u's calls as strace -f -c does."""
    data = IOTRACE.read_bytes()
    old = b"typedef:btf_trace_sys_enter\0"
    assert data.count(old) == 1
    patched = tmp_path / "iotrace"
    patched.write_bytes(data.replace(old, b"typedef:btf_trace_sys_entex\0"))
    patched.chmod(0o755)

    def mapped(binary):
        with waiting_iotrace(TWO, tmp_path, binary) as proc:
            return sum("bpf-map" in line
                       for line in Path(f"/proc/{proc.pid}/maps").read_text().splitlines())

    assert mapped(patched) == mapped(IOTRACE) > 5
    stdin = mkinput(tmp_path / "in.bin", 20000, "-r")
    args = [wl("tr2u"), "abc", "xyz"]
    ref, sres = strace_counts(args, tmp_path, stdin)
    assert sres.returncode == 0, sres.stderr
    for env in (SERIAL, TWO):
        out = tmp_path / "report.json"
        res = run_stdin([patched, "--json", "-o", out, "--", *args], stdin, env=env)
        assert res.returncode == 0, res.stderr
        report = json.loads(out.read_text())
        assert "by their ids" not in report["kernel"]["btf"]["core"]
        iot = {name: (v["calls"], v["errors"]) for name, v in report["totals"]["syscalls"].items()}
        assert iot == ref, (env is TWO, iot, ref)


def test_by_id_ids_are_the_kernels():
    """The ids the build recorded for the by-id build (.output/min_btf.c) are the running
    kernel's, by bpftool: every tracepoint the programs attach to, the map iterator and
    every kfunc they call."""
    table = dict(re.findall(r'\{ "((?:typedef|func):\w+)", (\d+) \}',
                            (ROOT / ".output/min_btf.c").read_text()))
    dump = subprocess.run(["bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux"],
                          capture_output=True, text=True, check=True).stdout
    ref = {}
    for m in re.finditer(r"^\[(\d+)\] (TYPEDEF|FUNC) '(\w+)'", dump, re.M):
        ref.setdefault(f"{m.group(2).lower()}:{m.group(3)}", m.group(1))
    assert {"func:bpf_rdonly_cast", "func:bpf_iter_bpf_map_elem",
            "typedef:btf_trace_sys_enter", "typedef:btf_trace_sys_exit"} <= table.keys()
    assert all(ref.get(k) == v for k, v in table.items()), \
        {k: (v, ref.get(k)) for k, v in table.items() if ref.get(k) != v}


@contextlib.contextmanager
def waiting_iotrace(env, tmp_path, binary=IOTRACE):
    """A running iotrace, its programs loaded and attached, whose command waits on a FIFO
    until the block ends; it must then exit 0."""
    ready, go = tmp_path / "ready", tmp_path / "go"
    ready.unlink(missing_ok=True)
    go.unlink(missing_ok=True)
    os.mkfifo(go)
    proc = subprocess.Popen([binary, "-o", "/dev/null", "--", "sh", "-c",
                             f"touch {ready}; read x < {go}"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(600):
            if ready.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert ready.exists(), proc.stderr.read()
        yield proc
    finally:
        with open(go, "w") as f:
            f.write("\n")
        proc.wait(timeout=60)
    assert proc.returncode == 0


def fdinfo(pid):
    """{fd: {field: value}} of process pid's file descriptors."""
    out = {}
    for info in Path(f"/proc/{pid}/fdinfo").glob("*"):
        out[int(info.name)] = {k: v.strip() for k, v in (
            line.split(":\t", 1) for line in info.read_text().splitlines() if ":\t" in line)}
    return out


def held_maps(env, tmp_path):
    """{name: fdinfo fields} of the maps a running iotrace holds: what the kernel made of
    each map's definition."""
    fields = {}
    with waiting_iotrace(env, tmp_path) as proc:
        for kv in fdinfo(proc.pid).values():
            if "map_type" in kv:
                fields[int(kv["map_id"])] = {k: kv[k] for k in
                                             ("map_type", "key_size", "value_size",
                                              "max_entries", "map_flags", "memlock")}
                if int(kv["map_flags"], 16) & 1:  # BPF_F_NO_PREALLOC: grows with use
                    del fields[int(kv["map_id"])]["memlock"]
        names = {m["id"]: m.get("name", "") for m in json.loads(subprocess.run(
            ["bpftool", "-j", "map", "show"], capture_output=True, text=True).stdout)}
    return {names[i]: v for i, v in fields.items() if i in names}


def test_maps_made_beforehand_are_libbpfs(tmp_path):
    """With two loader threads the largest maps are made beforehand in two threads
    (user/kernel/tracer_premake.c): each the same map as libbpf makes in one thread (type,
    sizes, entries, flags, and the memory of those allocated whole), none missing; -v says
    how many."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: iotrace loads in one thread")
    m = re.search(r"; (\d+) maps made beforehand", verbose_load(TWO))
    assert m and int(m.group(1)) >= 5, m
    two, one = held_maps(TWO, tmp_path), held_maps(SERIAL, tmp_path)
    assert len(one) > 30 and two == one, {k: (two.get(k), one.get(k)) for k in one.keys()
                                          | two.keys() if two.get(k) != one.get(k)}


def attached_programs(env, tmp_path):
    """{program name: links} of a running iotrace (the links among its fds), and the hooks
    `info --json` reports under the same environment."""
    links = {}
    with waiting_iotrace(env, tmp_path) as proc:
        linked = [int(kv["prog_id"]) for kv in fdinfo(proc.pid).values() if "link_id" in kv]
        names = {p["id"]: p.get("name") for p in json.loads(subprocess.run(
            ["bpftool", "-j", "prog", "show"], capture_output=True, text=True).stdout)}
        for prog in linked:
            links[names[prog]] = links.get(names[prog], 0) + 1
    info = run([IOTRACE, "info", "--json"], env=env)
    assert info.returncode == 0, info.stderr
    return links, json.loads(info.stdout)["hooks"]


@pytest.mark.parametrize("disabled", ["", "mm_filemap_get_pages"])
def test_hooks_attached_alike_by_one_or_two_threads(tmp_path, disabled):
    """With two loader threads each attaches the hooks of the programs it loaded as soon as
    it has, beside the other's load (attach_own_hooks), and the rest are attached after
    both: the same programs end up attached, each once (bpftool's links of the running
    iotrace), and every event has the same way, kind and target, as when one thread loads
    and attaches them all; so too when a page-cache hook is missing and its group's other
    hooks are detached after they were attached."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: iotrace loads in one thread")
    off = {"IOTRACE_DISABLE_TRACEPOINTS": disabled} if disabled else {}
    two_links, two_hooks = attached_programs({**TWO, **off}, tmp_path)
    one_links, one_hooks = attached_programs({**SERIAL, **off}, tmp_path)
    assert two_links == one_links and set(two_links.values()) == {1}, (two_links, one_links)
    assert two_hooks == one_hooks
    page_cache = [h for h in one_hooks if h["event"].startswith("mm_filemap")]
    assert page_cache and all((h["way"] < 0) == bool(disabled) for h in page_cache), page_cache
    assert ("handle_mm_filemap_fault" in one_links) != bool(disabled)


def test_command_never_runs_when_tracing_cannot_start(tmp_path):
    """CMD's process is forked before the programs load (a small process forks and execs
    faster than one with the counters mapped) and waits to be let go: when tracing cannot
    start (a required tracepoint disabled) CMD never runs, iotrace says one line, exits 1 and
    reaps the waiting process, which ends without an exec (strace -f)."""
    mark, log = tmp_path / "ran", tmp_path / "strace.txt"
    res = run(["strace", "-f", "-q", "-e", "trace=execve,wait4", "-o", log, IOTRACE, "-o",
               "/dev/null", "--", "sh", "-c", f"touch {mark}"],
              env={**os.environ, "IOTRACE_DISABLE_TRACEPOINTS": "sys_enter"})
    lines = res.stderr.decode().splitlines()
    assert res.returncode == 1 and len(lines) == 1 and "sys_enter" in lines[0], lines
    assert not mark.exists()
    trace = log.read_text()
    assert trace.count("execve(") == 1, trace  # iotrace's own
    child = re.search(r"^(\d+)\s+\+\+\+ exited with 127 \+\+\+$", trace, re.M)
    assert child and re.search(rf"wait4\({child.group(1)},", trace), trace
