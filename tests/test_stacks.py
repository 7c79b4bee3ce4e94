"""--stacks FILE: the user-space call paths of I/O syscalls as folded stacks
(docs/stacks.md). References: the workload's own counts per named function, the run's
syscall counts (which the folded numbers add up to), real programs' symbols from their
libraries, and a real viewer (speedscope's static build in headless Chromium)."""
import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from helpers import IOTRACE, mkinput, real_processes, run, wl
from test_trace import SPEEDSCOPE, TRACED, viewer_page

WORKERS = {"reader_a": ("read", 1000), "writer_b": ("write", 500), "syncer_c": ("fsync", 10)}


def folded(path):
    """[(frames, weight)] of a folded file; frames root first, the syscall last."""
    out = []
    for line in Path(path).read_text().splitlines():
        stack, weight = line.rsplit(" ", 1)
        out.append((stack.split(";"), int(weight)))
    return out


def stacked(tmp_path, argv, *options, stdin=None, with_output=False):
    report_path, stacks = tmp_path / "report.json", tmp_path / "stacks.folded"
    fin = open(stdin, "rb") if stdin else None
    res = run([IOTRACE, "--json", "-o", report_path, "--stacks", stacks, *options, "--", *argv],
              stdin=fin, timeout=300)
    if fin:
        fin.close()
    assert res.returncode == 0, res.stderr
    got = json.loads(report_path.read_text()), folded(stacks)
    return (*got, res.stdout.decode()) if with_output else got


@pytest.mark.parametrize("binary, unwind", [("callsites-fp", "fp"), ("callsites-fp", "dwarf"),
                                            ("callsites", "dwarf"), ("callsites", "fp")])
def test_named_functions_get_exactly_their_calls(tmp_path, binary, unwind):
    """callsites' reader_a, writer_b and syncer_c make 1,000 reads, 500 writes and 10 fsyncs
    (it prints them): the folded file gives each function's stacks exactly those calls.
    Built with frame pointers, both modes unwind to main through middle; built without
    them (as Debian builds), DWARF does, and frame pointers still name the caller of the
    frameless libc wrapper (the word on top of the stack)."""
    src = mkinput(tmp_path / "in", 4096, "-r")
    report, lines, printed = stacked(tmp_path, [wl(binary), str(src)], "--stacks-by", "calls",
                                     "--stacks-unwind", unwind, with_output=True)
    proc = next(p for p in real_processes(report) if p["comm"] == binary)
    for fn, (call, n) in WORKERS.items():
        assert f"{fn} {call} {n}" in printed
        mine = [(f, w) for f, w in lines if f[0] == binary and fn in f]
        assert sum(w for _, w in mine) == n <= proc["syscalls"][call]["calls"], (fn, mine)
        assert all(f[-1] == call for f, _ in mine), mine
        if binary == "callsites-fp" or unwind == "dwarf":
            assert all(f.index("main") < f.index("middle") < f.index(fn) for f, _ in mine)
        if fn == "reader_a":  # read_one is inlined into it: a frame from the debug info
            assert all(f[f.index(fn) + 1] == "read_one" for f, _ in mine), mine
    assert report["stacks"]["unwind"] == ("dwarf" if unwind == "dwarf" else "frame pointers")
    assert report["stacks"]["lost_calls"] == report["drops"]["stacks"] == 0


def test_folded_calls_add_up_to_the_syscall_counts(tmp_path):
    """--stacks-by calls on a shell pipeline: for every process, the folded lines of each
    stacked syscall add up to the report's count of it (nothing lost here), in both modes."""
    script = "cat /etc/services | wc -l > /dev/null; ls -l /usr/bin > /dev/null"
    for unwind in ("fp", "dwarf"):
        report, lines = stacked(tmp_path, ["sh", "-c", script], "--stacks-by", "calls",
                                "--stacks-unwind", unwind)
        want = Counter()
        for p in real_processes(report):
            for name, row in p["syscalls"].items():
                if name in TRACED:
                    want[(p["comm"], name)] += row["calls"]
        got = Counter()
        for frames, weight in lines:
            got[(frames[0], frames[-1])] += weight
        assert got == +want, unwind
        assert report["stacks"]["stack_calls"] == sum(want.values())
        assert report["drops"]["stacks"] == 0
        # cat exited long before the report: its frames are still named (libc's).
        if unwind == "dwarf":
            assert any("__libc_start_main_impl" in f for f, _ in lines if f[0] == "cat")


def test_dwarf_counts_every_call_beyond_the_warmup(tmp_path):
    """tr2u's 100,000 reads and writes: DWARF mode unwinds each syscall's first 1,024 and
    then about one in 64, and each sample carries the calls since the one before, so the
    folded numbers still add up to every call."""
    src = mkinput(tmp_path / "in", 50000, "-r")
    report, lines = stacked(tmp_path, [wl("tr2u"), "a", "b"], "--stacks-by", "calls",
                            "--stacks-unwind", "dwarf", stdin=src)
    tr2u = next(p for p in real_processes(report) if p["comm"] == "tr2u")
    for call in ("read", "write"):
        got = sum(w for f, w in lines if f[0] == "tr2u" and f[-1] == call)
        assert got == tr2u["syscalls"][call]["calls"], call
    samples = report["stacks"]["samples"]
    assert 2 * 1024 < samples < 2 * 1024 + 2 * 50000 / 64 * 1.3 + 200, samples
    assert any("main" in f for f, _ in lines if f[0] == "tr2u")


def libc_path():
    """The C library this interpreter runs with (its mapping's path)."""
    with open("/proc/self/maps") as f:
        return next(line.split()[-1] for line in f if line.rstrip().endswith("/libc.so.6"))


def test_dwarf_unwinds_a_library_named_by_its_loader_only(tmp_path):
    """The C library on a ramfs, whose files cannot be opened by handle (as the kernel
    matrix guests' initramfs): its name is the loader's openat's, which reaches iotrace on
    the names' ring, while the mappings and samples come on the stacks' ring. Every sample
    after the mappings is unwound with the library's call-frame information, through
    reader_a to main, in each of five runs (before the names sent ahead of the mappings
    were read ahead of the samples, one run in two lost the library and its callers)."""
    lib, src = tmp_path / "lib", mkinput(tmp_path / "in", 4096, "-r")
    lib.mkdir()
    subprocess.run(["mount", "-t", "ramfs", "iotrace-test-stacks", lib], check=True)
    try:
        shutil.copy(libc_path(), lib / "libc.so.6")
        for _ in range(5):
            report, lines = stacked(tmp_path, ["env", f"LD_LIBRARY_PATH={lib}",
                                               wl("callsites"), str(src)],
                                    "--stacks-by", "calls", "--stacks-unwind", "dwarf")
            proc = next(p for p in real_processes(report) if p["comm"] == "callsites")
            libc = [f for f in proc["files"] if f["path"] == str(lib / "libc.so.6")]
            assert libc, [f["path"] for f in proc["files"]]
            for fn, (call, n) in WORKERS.items():
                mine = [(f, w) for f, w in lines if f[0] == "callsites" and fn in f]
                assert sum(w for _, w in mine) == n, (fn, lines)
                assert all(f.index("main") < f.index("middle") < f.index(fn)
                           for f, _ in mine), mine
    finally:
        subprocess.run(["umount", lib], check=False)


def test_real_programs_have_their_libraries_symbols(tmp_path):
    """python3 reading a file and git status (no frame pointers, stripped executables):
    DWARF mode gives stacks through their libraries' named functions (libc's, libpython's)."""
    report, lines = stacked(tmp_path, ["/usr/bin/python3", "-c",
                                       "open('/etc/services').read()"],
                            "--stacks-unwind", "dwarf", "--stacks-by", "calls")
    py = [f for f, _ in lines if f[0] == "python3"]
    assert py and any("_PyEval_EvalFrameDefault" in f or "_PyEval_EvalFrame" in f
                      for f in py), py[:3]
    assert any(any(n.startswith("__libc_") for n in f) for f in py)
    report, lines = stacked(tmp_path, ["git", "-C", str(Path(__file__).parent), "status",
                                       "--short"], "--stacks-unwind", "dwarf")
    git = [f for f, _ in lines if f[0] == "git"]
    assert git and any("__libc_start_main_impl" in f for f in git)
    # Its own functions have no symbol (a stripped executable): named by their module.
    assert any("[unknown] (git)" in f for f in git)
    sites = next(p for p in real_processes(report) if p["comm"] == "git")["stack_sites"]
    assert 1 <= len(sites) <= 5 and all(s["calls"] > 0 for s in sites)


@pytest.mark.parametrize("unwind", ["fp", "dwarf"])
def test_the_dynamic_loaders_call_sites_are_its_functions(tmp_path, unwind):
    """/bin/true's I/O is all the dynamic loader's (opening and reading the C library): no
    frame of the program's own code, so each site starts at the loader's innermost function
    past the syscall wrappers (open_verify ← _dl_map_object ...), not at its outermost
    frame (_start) nor at frames with no name; the site's frames are a stack's, in order."""
    report, lines = stacked(tmp_path, ["/bin/true"], "--stacks-unwind", unwind,
                            "--stacks-by", "calls")
    sites = next(p for p in real_processes(report) if p["comm"] == "true")["stack_sites"]
    assert sites
    for site in sites:
        names = site["where"].split(" ← ")
        assert names[0] not in ("_start", "[unknown]") and not names[0].startswith("__"), site
        inner_first = [list(reversed(f[:-1])) for f, _ in lines]
        assert any(f[i:i + len(names)] == names for f in inner_first for i in range(len(f))), \
            (site, lines)


def test_top_call_sites_in_the_reports(tmp_path):
    """Each process's top five call sites, by I/O time: in JSON and as text lines. The
    dynamic loader's own reads and opens (a few µs each) may make the fifth, before or after
    one another as the machine's load has it: each call's site is its busiest one."""
    src = mkinput(tmp_path / "in", 4096, "-r")
    report, _ = stacked(tmp_path, [wl("callsites-fp"), str(src)])
    sites = next(p for p in real_processes(report) if p["comm"] == "callsites-fp")["stack_sites"]
    assert len(sites) <= 5
    busiest = {s["syscall"]: max((t for t in sites if t["syscall"] == s["syscall"]),
                                 key=lambda t: t["calls"]) for s in sites}
    assert busiest["read"]["where"] == "read_one ← reader_a ← middle"  # read_one: inlined
    assert busiest["read"]["calls"] == 1000
    assert busiest["fsync"]["where"] == "syncer_c ← middle ← main"
    assert busiest["fsync"]["calls"] == 10
    times = [s["time_ns"] for s in sites]
    assert times == sorted(times, reverse=True)
    text = run([IOTRACE, "--stacks", tmp_path / "s", "--", wl("callsites-fp"), str(src)])
    out = text.stderr.decode()
    assert re.search(r"^call sites, by I/O time", out, re.M), out
    assert re.search(r"^ +\S+ +1000 +\S+ read +read_one ← reader_a ← middle$", out, re.M), out


@pytest.mark.parametrize("options, message", [
    (["--stacks", "/nonexistent/dir/s"], "cannot write the stacks"),
    (["--stacks-by", "calls"], "need --stacks"),
    (["--stacks", "{tmp}/s", "--stacks-by", "pages"], "invalid --stacks-by"),
    (["--stacks", "{tmp}/s", "--stacks-unwind", "lbr"], "invalid --stacks-unwind"),
    (["--stacks", "{tmp}/s", "--stacks-by", "time", "--no-time"], "contradicts --no-time"),
])
def test_bad_stacks_options(tmp_path, options, message):
    res = run([IOTRACE, *[o.format(tmp=tmp_path) for o in options], "--", "true"])
    assert res.returncode == 1 and message in res.stderr.decode(), res.stderr


@pytest.mark.skipif(not SPEEDSCOPE.exists() or not Path("/usr/bin/chromium").exists(),
                    reason="speedscope (npm, scripts/deps.sh) or chromium is not installed")
def test_speedscope_opens_the_folded_stacks(tmp_path):
    """speedscope's own build opens the folded file without an import error and names it."""
    src = mkinput(tmp_path / "in", 4096, "-r")
    stacked(tmp_path, [wl("callsites"), str(src)], "--stacks-unwind", "dwarf")
    page = viewer_page(tmp_path, tmp_path / "stacks.folded")
    assert "profile.json" in page["dom"], page["dom"][-2000:]
    assert "Unrecognized format" not in page["dom"]
    assert page["shot"].stat().st_size > 5000
