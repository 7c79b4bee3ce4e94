"""The lab notes reproduced (scripts/experiments.py --quick): pages, and the numbers behind
them against their own references (fincore, the workloads' arithmetic, the Go release's
growth rule, strace -f)."""
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import ROOT, assert_runtime_error, assert_usage_error, run

sys.path.insert(0, str(ROOT / "scripts"))
from labnotes import gogrowth, machine, readahead_model  # noqa: E402

KIB, MIB = 1 << 10, 1 << 20
PYTHON = "/usr/bin/python3"  # the Makefile's: it has matplotlib
GO_BINARY = ROOT / "workloads" / "readall-go"


def experiments(out, scratch, *args):
    """scripts/experiments.py --quick writing to out, its temporary files under scratch."""
    return [PYTHON, ROOT / "scripts/experiments.py", "--quick", "--out", out, "--tmpdir",
            scratch, *args]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("scratch")


@pytest.fixture(scope="module")
def quick(tmp_path_factory, scratch):
    reason = machine.loop_devices_available()
    if reason:
        pytest.skip(f"loop devices unavailable: {reason}")
    out = tmp_path_factory.mktemp("experiments")
    res = subprocess.run(experiments(out, scratch), capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    return out


@pytest.fixture(scope="module")
def quick_no_go(tmp_path_factory, scratch):
    """Note 003 as on a machine without Go. PATH alone cannot hide Go here (Debian's
    golang-go puts `go` in /usr/bin, beside everything else the script runs), so the
    environment also says GO= (empty), as `make GO=` does; /usr/local/go/bin leaves PATH."""
    out = tmp_path_factory.mktemp("experiments-no-go")
    path = ":".join(d for d in os.environ.get("PATH", "/usr/bin:/bin").split(":")
                    if not d.startswith("/usr/local/go"))
    res = subprocess.run(experiments(out, scratch, "--only", "003"), capture_output=True,
                         text=True, timeout=300, env={**os.environ, "PATH": path, "GO": ""})
    assert res.returncode == 0, res.stderr
    return out


def load(out, key):
    return json.loads((out / f"{key}.json").read_text())


def left_behind(scratch):
    """Loop devices and mounts of ours (their files are under scratch) still present."""
    attached = subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    mounts = Path("/proc/mounts").read_text()
    return [line for line in (attached + mounts).splitlines() if str(scratch) in line]


def list_items(text):
    """The "- " items of a page, each joined from its lines."""
    items, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("- "):
            items.append(line)
        elif line.startswith("  ") and items and lines[i - 1].strip() and \
                (lines[i - 1].startswith(("- ", "  "))):
            items[-1] += " " + line.strip()
    return items


def assert_page(text, name):
    """What every page states: the note's claims, ours, where they differ, in sentences."""
    assert "**The note**" in text and "**Our conditions:**" in text, name
    assert "## Where we differ and why" in text, name
    unfinished = [item for item in list_items(text) if not item.endswith((".", ":"))]
    assert not unfinished, (name, unfinished)


def test_every_note_has_a_page_and_plots(quick):
    """Whether or not Go is here: without it page 003 is the C imitation's."""
    for name in ["000-copy", "001-tr2u-tr2b", "002-timewrite", "003-readall",
                 "004-read-file"]:
        assert_page((quick / f"{name}.md").read_text(), name)
    for png in ["000-syscalls", "002-sweep", "003-reads", "004-sweep"]:
        assert (quick / f"{png}.png").read_bytes()[:4] == b"\x89PNG", png
    index = (quick / "README.md").read_text()
    assert all(f"({n}" in index for n in ["000-", "001-", "002-", "003-", "004-"])


def test_committed_pages_state_the_note_and_the_differences():
    out = ROOT / "docs" / "experiments"
    for page in sorted(out.glob("0*.md")):
        assert_page(page.read_text(), page.name)


def test_nothing_left_attached_or_mounted(quick, scratch):
    assert left_behind(scratch) == []
    assert list(scratch.iterdir()) == []


# ---- 004 -------------------------------------------------------------------------------------

def table_004(quick):
    data = load(quick, "004")
    return data, {r["mode"]: r for r in data["table"]}


def test_004_normal_is_the_notes_one_window_more(quick):
    data, rows = table_004(quick)
    normal = rows["NORMAL"]
    assert normal["read_ahead_kb"] == 128 and normal["fs"] == "ext4"
    assert normal["requested_bytes"] == data["read_bytes"]
    assert normal["fincore_bytes"] == data["read_bytes"] + 128 * KIB
    assert normal["resident_bytes"] == normal["fincore_bytes"]
    # What is cached beyond the read is readahead nobody read: one 32-page window.
    assert normal["unused_readahead_pages"] * 4096 == 128 * KIB


def test_004_modes_in_order(quick):
    data, rows = table_004(quick)
    read = data["read_bytes"]
    for r in rows.values():
        assert r["resident_bytes"] == r["fincore_bytes"], r["mode"]
        # Every page the reader added is still cached (the script repeats a run that
        # another program's drop_caches disturbed).
        assert r["mode"] == "O_DIRECT" or r["resident_bytes"] == r["added_pages"] * 4096
    assert rows["SEQUENTIAL"]["fincore_bytes"] > rows["NORMAL"]["fincore_bytes"] > read
    assert rows["RANDOM"]["fincore_bytes"] == read
    assert rows["RANDOM"]["unused_readahead_pages"] == 0
    assert rows["RANDOM"]["windows"]["forced_sync"]["windows"] == read // (64 * KIB)
    assert rows["O_DIRECT"]["fincore_bytes"] == 0
    assert rows["O_DIRECT"]["direct_read_bytes"] == read


def test_004_sequential_matches_the_readahead_model(quick):
    """This kernel's SEQUENTIAL windows are the model's with the 6.17 alignment (which the
    model without it does not predict): one check that the page's explanation holds."""
    data, rows = table_004(quick)
    pages = data["read_bytes"] // 4096
    model = readahead_model.resident_pages(64, True, 16, pages)
    assert rows["SEQUENTIAL"]["fincore_bytes"] == model * 4096
    assert readahead_model.resident_pages(64, False, 16, pages) != model
    windows = readahead_model.windows(64, True, 16, pages)
    seen = rows["SEQUENTIAL"]["windows"]
    assert seen["sync"]["windows"] + seen["async"]["windows"] == len(windows)


def test_004_sweep_extra_resident_is_unused_readahead(quick):
    data = load(quick, "004")
    assert {r["read_ahead_kb"] for r in data["sweep"]} == {128, 512}
    for r in data["sweep"]:
        if r["mode"] in ("NORMAL", "SEQUENTIAL"):
            extra = r["fincore_bytes"] - r["requested_bytes"]
            assert extra == r["unused_readahead_pages"] * 4096, r


# ---- 002 -------------------------------------------------------------------------------------

def test_002_rows_follow_the_workload(quick):
    data = load(quick, "002")
    length = data["input_bytes"]
    for fs, modes in data["fs"].items():
        for mode, rows in modes.items():
            assert [r["buffsize"] for r in rows] == [256 << i for i in range(10)]
            for r in rows:
                assert r["write_calls"] == math.ceil(length / r["buffsize"]), (fs, mode, r)


def test_002_every_osync_write_reaches_the_disk(quick):
    data = load(quick, "002")
    sync = data["fs"]["ext4"]["sync"]
    for r in sync:
        assert r["block_writes"] >= r["write_calls"], r
        assert r["block_write_bytes"] >= data["input_bytes"], r
    # Buffered rows leave their data dirty: far fewer block writes during the run.
    buffered = sum(r["block_writes"] for r in data["fs"]["ext4"]["async"])
    assert buffered < sum(r["block_writes"] for r in sync) / 10


# ---- 003 -------------------------------------------------------------------------------------

def go_release():
    go = gogrowth.find_go()
    if not go or not GO_BINARY.exists():
        pytest.skip("no Go toolchain (workloads/readall-go not built)")
    return gogrowth.release(go)


@pytest.mark.parametrize("size", [0, 512, 513, 100000, 3 * MIB + 5])
def test_003_go_reads_follow_the_growth_rule(size, tmp_path):
    """strace -f -yy on the Go binary: io.ReadAll's reads on the file are the count derived
    from the release's growth rule, and those of the other modes theirs."""
    rel, version = go_release()
    path = tmp_path / "in"
    path.write_bytes(bytes(range(256)) * (size // 256) + bytes(size % 256))
    for mode in ("readall", "readfile", "readfull", "fixed"):
        log = tmp_path / f"strace.{mode}"
        res = run(["strace", "-f", "-yy", "-e", "trace=read", "-o", log, GO_BINARY, "-m",
                   mode, path])
        assert res.returncode == 0, res.stderr
        assert f"bytes={size if mode != 'fixed' else -(-size // 4096) * 4096}" in \
            res.stdout.decode() and f"go={version}" in res.stdout.decode()
        on_file = [line for line in log.read_text().splitlines()
                   if f"<{path}>" in line and " read(" in line]
        assert len(on_file) == rel.file_reads(mode, size), (mode, on_file[:5])


@pytest.mark.parametrize("args", [[], ["-m", "nope", "f"], ["-x", "f"], ["-m", "readall"],
                                  ["-m", "readall", "a", "b"]])
def test_003_go_workload_rejects_bad_args(args):
    go_release()
    res = run([GO_BINARY, *args])
    assert_usage_error(res)
    assert len(res.stderr.splitlines()) == 1


def test_003_go_workload_runtime_error(tmp_path):
    go_release()
    assert_runtime_error(run([GO_BINARY, "-m", "readfile", tmp_path / "missing"]),
                         "readall-go")


def test_003_iotrace_counts_the_same_reads(quick):
    if not load(quick, "003")["go"]:
        pytest.skip("no Go toolchain (workloads/readall-go not built)")
    for r in load(quick, "003")["rows"]:
        assert r["file_reads"] == r["model_file_reads"], r
        assert r["reads_under_strace"] == r["file_reads"] + r["other_reads"], r
        # Alone, iotrace counts the derived reads plus the runtime's few of its own.
        assert r["model_file_reads"] < r["reads"] <= r["model_file_reads"] + 8, r
        assert r["returned_bytes"] >= r["size"]


def test_003_without_go_states_the_note_and_measures_the_c_imitation(quick_no_go):
    data = load(quick_no_go, "003")
    assert data["go"] is None and "GO=" in data["no_go"]
    text = (quick_no_go / "003-readall.md").read_text()
    assert_page(text, "003-readall (no Go)")
    # The note's claims and numbers, and the C imitation in their place.
    for figure in ["804,335,663", "171,374,293", "536,869,438", "209,305,932", "3.6×",
                   "`workloads/readall -m grow FILE`", "## The note's benchmark beside ours",
                   "![read calls by file size](003-reads.png)"]:
        assert figure in text, figure
    assert (quick_no_go / "003-reads.png").read_bytes()[:4] == b"\x89PNG"
    assert "(003-readall.md)" in (quick_no_go / "README.md").read_text()
    rows = data["c_rows"]
    assert {(r["mode"], r["size"]) for r in rows} == \
        {(m, s) for m in ("grow", "stat") for s in (0, 1, 511, 512, 513, 100000, MIB,
                                                   3 * MIB + 5)}
    for r in rows:
        # iotrace's reads on the file = the program's own count = the doubling rule's.
        assert r["file_reads"] == r["own_reads"] == r["derived_reads"], r
        assert r["file_read_bytes"] == r["returned_bytes"] == r["size"], r
        assert r["allocated"] == r["derived_allocated"], r
        assert r["all_reads"] > r["file_reads"], r  # the loader's read of libc as well
        assert r["memory_growth"] >= (r["final_buffer"] if r["size"] >= MIB else 0), r
    by = {(r["mode"], r["size"]): r for r in rows}
    assert by[("grow", 512)]["file_reads"] == 2 and by[("grow", 513)]["file_reads"] == 3
    assert by[("stat", 0)]["file_reads"] == 1 and by[("stat", 3 * MIB + 5)]["file_reads"] == 2
    # Above glibc's mmap threshold realloc moves the buffer with mremap (one per doubling).
    assert by[("grow", 3 * MIB + 5)]["mremap_calls"] >= 3


def test_003_growth_rules_of_both_go_generations():
    """The two rules the model knows, on the figures io.ReadAll's source gives (Go 1.26:
    512, then chunks of 256, 384, 576, 864 → 896 bytes; before: 512 grown to 896, 1408)."""
    classes = [8, 16, 256, 384, 512, 576, 896, 1024, 1408, 2048, 3072, 32768]
    new, old = gogrowth.GoRelease.__new__(gogrowth.GoRelease), \
        gogrowth.GoRelease.__new__(gogrowth.GoRelease)
    new.chunked, old.chunked = True, False
    new.classes = old.classes = classes
    gen = new.readall_buffers()
    assert [next(gen) for _ in range(5)] == [512, 256, 384, 576, 896]
    gen = old.readall_buffers()
    assert [next(gen) for _ in range(3)] == [512, 384, 512]
    assert new.file_reads("readall", 512) == 2 and new.file_reads("readall", 513) == 3
    assert new.roundupsize(40000) == 40960


# ---- 000 / 001 ---------------------------------------------------------------------------------

def test_000_001_iotrace_equals_strace(quick):
    for key in ("000", "001"):
        for name, r in load(quick, key)["runs"].items():
            assert r["iotrace"] == r["strace"], (key, name)


def test_001_terminal_gets_1024_byte_writes(quick):
    data = load(quick, "001")
    n = data["input_bytes"]
    assert data["runs"]["tr2b > tty"]["iotrace"]["write"] == math.ceil(n / 1024)
    assert data["runs"]["tr2u > tty"]["iotrace"]["write"] == n


# Runs scripts/experiments.py itself with machine.attach and machine.detach wrapped, so that
# the state of each loop device at attach and just before detach is on record: the kernel
# resets read_ahead_kb when a device is detached, which would hide a setting left changed.
SPY = """
import json, runpy, sys
from pathlib import Path
sys.path.insert(0, str(Path(sys.argv[2]).parent))
from labnotes import machine
record = open(sys.argv[1], "a", buffering=1)
attach, detach = machine.attach, machine.detach

def state(event, dev):
    ra = int(Path(f"/sys/block/{Path(dev).name}/queue/read_ahead_kb").read_text())
    mounted = any(line.split()[0] == dev for line in open("/proc/mounts"))
    record.write(json.dumps({"event": event, "dev": dev, "read_ahead_kb": ra,
                             "mounted": mounted}) + "\\n")

def spy_attach(img):
    dev = attach(img)
    state("attach", dev)
    return dev

def spy_detach(dev):
    state("detach", dev)
    detach(dev)

machine.attach, machine.detach = spy_attach, spy_detach
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def read_ahead_kb():
    return {p.parent.parent.name: int(p.read_text())
            for p in Path("/sys/block").glob("*/queue/read_ahead_kb")}


def spied(record):
    return [json.loads(line) for line in record.read_text().splitlines()] \
        if record.exists() else []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_experiments_cleans_up_after_a_signal(tmp_path, sig):
    """SIGTERM to the script (`kill`), or SIGINT to its process group (Ctrl-C), once 004 has
    changed its loop device's read_ahead_kb: the setting goes back to its value at attach
    before the device is unmounted and detached; nothing stays mounted or attached, and no
    disk's read_ahead_kb changed."""
    reason = machine.loop_devices_available()
    if reason:
        pytest.skip(f"loop devices unavailable: {reason}")
    scratch, record = tmp_path / "scratch", tmp_path / "spy.jsonl"
    scratch.mkdir()
    before = read_ahead_kb()
    cmd = experiments(tmp_path / "out", scratch, "--only", "004")
    proc = subprocess.Popen([cmd[0], "-c", SPY, record, *cmd[1:]], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:  # until the experiment has changed its device's read_ahead_kb
            events = spied(record)
            if events and any("mnt" in line for line in left_behind(scratch)):
                dev = Path(events[0]["dev"]).name
                if read_ahead_kb().get(dev) != events[0]["read_ahead_kb"]:
                    break
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "read_ahead_kb was never changed"
            time.sleep(0.02)
        if sig == signal.SIGINT:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig, err.decode(errors="replace")
    assert left_behind(scratch) == []
    assert list(scratch.iterdir()) == []
    events = spied(record)
    attached = [e for e in events if e["event"] == "attach"]
    detached = {e["dev"]: e for e in events if e["event"] == "detach"}
    assert attached and {e["dev"] for e in attached} == set(detached), events
    for e in attached:
        last = detached[e["dev"]]
        assert last["read_ahead_kb"] == e["read_ahead_kb"], (e, last)
        assert not last["mounted"], last
    # Other disks are not the script's to change. (Other loop devices may be attached by
    # other programs meanwhile, and attaching sets read_ahead_kb: they are left out.)
    after = read_ahead_kb()
    changed = {d: (kb, after.get(d)) for d, kb in before.items()
               if not d.startswith("loop") and after.get(d) != kb}
    assert not changed, changed
