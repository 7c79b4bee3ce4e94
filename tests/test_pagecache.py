"""Page cache and readahead per process and file, against fincore and the workloads' arithmetic.

Lab note 004 read 64 MiB of a file under each posix_fadvise mode and used fincore to see the
readahead. These tests rerun it with read-file (which drops the file's cache first) and check
iotrace's per-file numbers against fincore, cachestat-independent arithmetic and each other.
"""
import os
import subprocess
import sys
import time

import pytest

from helpers import IOTRACE, MIB, iotrace_json, mkinput, real_processes, run, wl

READ = 64 * MIB
PAGES = READ // 4096
MODES = {"normal": [], "sequential": ["-s"], "random": ["-r"]}


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    path = mkinput(tmp_path_factory.mktemp("pc") / "f256", "256m", "-r")
    # Written pages must be clean before read-file's FADV_DONTNEED can drop them.
    subprocess.run(["sync"], check=True)
    return path


def fincore_pages(path):
    res = run(["fincore", "--raw", "--noheadings", "--output", "PAGES", str(path)])
    return int(res.stdout)


def settled_fincore(path, expected, timeout=5.0):
    """fincore (mincore) counts only uptodate pages: readahead still in flight at exit shows
    up a moment later, so wait for it to agree or for the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        pages = fincore_pages(path)
        if pages == expected or time.monotonic() > deadline:
            return pages
        time.sleep(0.1)


def drop_cache(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    assert fincore_pages(path) == 0


def file_entry(report, path):
    found = [f for p in real_processes(report) for f in (p["files"] or []) if f["path"] == str(path)]
    assert len(found) == 1, [f["path"] for p in real_processes(report) for f in p["files"] or []]
    return found[0]


def read_file(path, tmp_path, *opts, size="64m"):
    report, res = iotrace_json([wl("read-file"), *opts, "-n", size, str(path)], tmp_path)
    assert res.returncode == 0, res.stderr
    return report, file_entry(report, path)


def test_fadvise_modes_against_fincore(big_file, tmp_path):
    ahead = {}
    for mode, opts in MODES.items():
        report, f = read_file(big_file, tmp_path, *opts)
        if f["added_pages"] != f["resident_pages"]:
            # Something outside the run (another session's drop_caches) evicted pages while
            # it read: once more. A miscount would show on both runs.
            report, f = read_file(big_file, tmp_path, *opts)
        assert f["advice"] == mode
        assert f["dev"] and f["ino"] == big_file.stat().st_ino
        assert f["requested_pages"] == PAGES
        assert f["hit_pages"] + f["miss_pages"] == PAGES
        # The file was dropped first, so every cached page was added by this read.
        assert f["added_pages"] == f["resident_pages"]
        assert settled_fincore(big_file, f["resident_pages"]) == f["resident_pages"]
        assert f["unused_readahead_pages"] == f["resident_pages"] - PAGES
        windows = f["readahead_windows"]
        assert sum(w["pages"] for w in windows.values()) == f["readahead_window_added_pages"]
        ahead[mode] = f["readahead_pages"]
        if mode == "random":
            # No readahead: one forced window per 64 KiB read, of exactly its 16 pages.
            assert windows["forced_sync"] == {"windows": READ // (64 * 1024), "pages": PAGES}
            assert f["miss_pages"] == PAGES and f["resident_pages"] == PAGES
        else:
            assert windows["sync"]["windows"] >= 1 and windows["async"]["windows"] >= 1
        # Per-process and run totals carry the same numbers for a single file.
        totals = report["totals"]["page_cache"]
        assert totals["available"] is True
        assert totals["requested_pages"] >= f["requested_pages"]
    assert ahead["sequential"] > ahead["normal"] > ahead["random"] == 0


@pytest.mark.parametrize("size", ["8k", "3m"])
def test_unused_readahead_in_the_first_chunks(big_file, tmp_path, size):
    """A short read from the start of a cold file: what its readahead brought in beyond the
    pages read is unused, as fincore counts it. The file's first 2 MiB of page bits are kept
    in its ledger entry (file_stat.chunk0), the rest in page_bits: 8 KiB leaves its unused
    pages in the first chunk, 3 MiB across the first and the second."""
    report, f = read_file(big_file, tmp_path, size=size)
    if f["added_pages"] != f["resident_pages"]:
        report, f = read_file(big_file, tmp_path, size=size)  # evicted meanwhile: again
    read = int(size[:-1]) * (1024 if size[-1] == "k" else MIB) // 4096
    assert f["requested_pages"] == read
    assert f["added_pages"] == f["resident_pages"] > read
    assert settled_fincore(big_file, f["resident_pages"]) == f["resident_pages"]
    assert f["unused_readahead_pages"] == f["resident_pages"] - read > 0


def test_warm_read_hits_everything(big_file, tmp_path):
    read_file(big_file, tmp_path)            # cold: drops the cache, then reads
    _, f = read_file(big_file, tmp_path, "-D")  # warm: keeps it
    if f["miss_pages"]:
        # Pages gone between the two reads (16 of 16,384 now and then, here and in CI: the
        # read then read them from the disk, its block requests say so; not explained yet):
        # this read brought them back (with their readahead), and the next one hits all.
        assert f["added_pages"] >= f["miss_pages"] and f["block"] and \
            f["hit_pages"] + f["miss_pages"] == PAGES, f
        _, f = read_file(big_file, tmp_path, "-D")
    assert (f["requested_pages"], f["hit_pages"], f["miss_pages"]) == (PAGES, PAGES, 0)
    assert f["added_pages"] == 0 and f["readahead_pages"] == 0
    assert sum(w["windows"] for w in f["readahead_windows"].values()) == 0


def test_direct_io_bypasses_the_cache(big_file, tmp_path):
    _, f = read_file(big_file, tmp_path, "-i")
    assert "direct" in f["advice"]
    assert f["direct_reads"] == READ // (64 * 1024)
    assert f["direct_read_bytes"] == READ
    assert f["added_pages"] == 0 and f["requested_pages"] == 0
    assert f["resident_pages"] == 0 == fincore_pages(big_file)


MMAP_TOUCH = """
import mmap, sys
with open(sys.argv[1], 'rb') as fh:
    m = mmap.mmap(fh.fileno(), 0, prot=mmap.PROT_READ)
    total = sum(m[i] for i in range(0, 16 << 20, 4096))
"""


def test_mmap_faults_are_counted(big_file, tmp_path):
    drop_cache(big_file)
    report, res = iotrace_json([sys.executable, "-c", MMAP_TOUCH, str(big_file)], tmp_path)
    assert res.returncode == 0, res.stderr
    f = file_entry(report, big_file)
    assert f["faults"] >= 1 and f["fault_around_pages"] >= 1
    # The first fault reads around it (an "mmap" window), later ones go asynchronously.
    assert f["readahead_windows"]["mmap"]["windows"] >= 1
    assert f["requested_pages"] == 0  # no read(2) calls on it
    assert 0 < f["added_pages"] <= f["resident_pages"]
    assert settled_fincore(big_file, f["resident_pages"]) == f["resident_pages"]


def test_missing_hook_is_reported_not_zero(big_file, tmp_path):
    env = {"IOTRACE_DISABLE_TRACEPOINTS": "mm_filemap_get_pages,iomap_dio_rw_begin",
           "PATH": "/usr/bin:/bin"}
    report, _ = iotrace_json([wl("read-file"), "-D", "-n", "1m", str(big_file)], tmp_path, env=env)
    pc = report["totals"]["page_cache"]
    assert pc == {"available": False,
                  "reason": "tracepoint mm_filemap_get_pages disabled by "
                            "IOTRACE_DISABLE_TRACEPOINTS"}
    # The files are still listed (their syscalls), with no page-cache number but a reason.
    f = file_entry(report, big_file)
    assert "IOTRACE_DISABLE" in f["page_cache_reason"] and "requested_pages" not in f
    assert f["io"]["read"]["transferred_bytes"] == MIB
    text = run([IOTRACE, "--", wl("read-file"), "-D", "-n", "1m", str(big_file)], env=env)
    assert b"page cache: n/a (tracepoint mm_filemap_get_pages disabled" in text.stderr
    # Only the O_DIRECT hook missing: its counters are null with a reason, the rest measured.
    env["IOTRACE_DISABLE_TRACEPOINTS"] = "iomap_dio_rw_begin"
    report, _ = iotrace_json([wl("read-file"), "-D", "-n", "1m", str(big_file)], tmp_path, env=env)
    f = file_entry(report, big_file)
    assert f["direct_read_bytes"] is None and "iomap_dio_rw_begin" in f["direct_reason"]
    assert f["requested_pages"] == 256
