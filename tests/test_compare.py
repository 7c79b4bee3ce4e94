"""iotrace compare: variants side by side (it was tested through the lab notes until they
moved to their own conditions, scripts/labnotes)."""
import json
import re
import subprocess
import time

import pytest

from helpers import IOTRACE, MIB, mkinput, page_cache_evictions, real_processes, run, wl


def test_compare_carries_the_run_mode_numbers(tmp_path):
    src = mkinput(tmp_path / "in", 20001, "-c", "1")
    out = tmp_path / "cmp.json"
    res = run([IOTRACE, "compare", "--json", "-o", out, "-l", "tr2u", "-l", "tr2b", "--",
               f"{wl('tr2u')} 1 a < {src} > /dev/null", f"{wl('tr2b')} 1 a < {src} > /dev/null"])
    assert res.returncode == 0, res.stderr
    variants = {v["label"]: v for v in json.loads(out.read_text())["variants"]}
    for v in variants.values():
        report = v["runs"][0]
        calls = sum(r["calls"] for r in report["totals"]["syscalls"].values())
        assert v["summary"]["syscalls"] == calls
        assert v["summary"]["wall_s"] == report["wall_ns"] / 1e9
        assert v["summary"]["write_bytes"] == report["totals"]["io"]["write"][
            "transferred_bytes"]
    assert variants["tr2u"]["summary"]["syscalls"] > 50 * variants["tr2b"]["summary"]["syscalls"]


def test_compare_table_and_errors():
    res = run([IOTRACE, "compare", "-l", "one", "--", "true", "sh -c 'exit 0'"])
    assert res.returncode == 0, res.stderr
    lines = res.stdout.decode().splitlines()
    assert lines[0].split()[:3] == ["variant", "one", "sh"]
    assert any(line.startswith("syscalls ") for line in lines)
    for args, message in [([], "no commands"), (["--repeat", "0", "--", "true"], "--repeat"),
                          (["-l", "a", "-l", "b", "--", "true"], "2 labels for 1 commands")]:
        bad = run([IOTRACE, "compare", *args])
        assert bad.returncode == 1 and message in bad.stderr.decode().splitlines()[0]


def test_compare_names_variants_by_what_differs(tmp_path):
    src = mkinput(tmp_path / "in", "256k", "-r")
    cmds = [f"{wl('read-file')}{opt} -n 256k {src}" for opt in ("", " -s", " -r")]
    res = run([IOTRACE, "compare", "--", *cmds])
    assert res.returncode == 0, res.stderr
    lines = res.stdout.decode().splitlines()
    assert lines[0].split() == ["variant", "(none)", "-s", "-r"]
    # One wall row; the legend gives each command in full.
    assert [l.split()[0] for l in lines].count("wall_s") == 1
    assert lines[-3:] == [f"{label}: {cmd}" for label, cmd in zip(["(none)", "-s", "-r"], cmds)]
    assert all(len(l) <= 100 for l in lines[:-3])  # the legend gives the commands whole
    # Differences too wide for a column: A, B with the legend.
    long = [f"{wl('read-file')} -n 256k {src}", f"/bin/sh -c 'cat {src} > /dev/null'"]
    res = run([IOTRACE, "compare", "--", *long])
    lines = res.stdout.decode().splitlines()
    assert lines[0].split() == ["variant", "A", "B"] and lines[-2:] == [f"A: {long[0]}",
                                                                       f"B: {long[1]}"]


def fincore_pages(path):
    return int(run(["fincore", "--raw", "--noheadings", "--output", "PAGES", str(path)]).stdout)


def test_compare_per_file_view(tmp_path):
    """The file named on the commands gets its own rows: its entries summed over the
    run's processes; cold, every page of it is read from the disk for it; the table shows
    the same medians with thousands separators. Its pages resident at the end are fincore's
    after the run, unless the kernel evicted some meanwhile (reclaim, or a drop_caches of
    another session on the machine: /proc/vmstat counts both): then the run is repeated, at
    most 3 times; without an eviction a difference fails at once."""
    src = mkinput(tmp_path / "in", "4m", "-r")
    subprocess.run(["sync"], check=True)
    out = tmp_path / "cmp.json"
    cmds = [f"{wl('read-file')}{opt} -n 4m {src} > /dev/null" for opt in ("", " -s")]
    seen = []
    for _ in range(3):
        evictions = page_cache_evictions()
        res = run([IOTRACE, "compare", "--drop-caches", "--json", "-o", out, "--", *cmds])
        assert res.returncode == 0, res.stderr
        variants = json.loads(out.read_text())["variants"]
        resident = variants[-1]["summary"]["files"][str(src)]["resident_pages_at_end"]
        cached = fincore_pages(src)
        if resident == cached:
            break
        time.sleep(1)  # a drop_caches still walking the file systems is counted when done
        assert page_cache_evictions() > evictions + 2, (resident, cached)  # ours: 2 drops
        seen.append((resident, cached))
    else:
        pytest.fail(f"evictions in every run: (resident at the end, fincore) {seen}")
    assert [v["label"] for v in variants] == ["(none)", "-s"]
    for v in variants:
        assert list(v["summary"]["files"]) == [str(src)]  # not the program, not /dev/null
        f = v["summary"]["files"][str(src)]
        entries = [e for p in real_processes(v["runs"][0]) for e in p["files"]
                   if e["path"] == str(src)]
        assert f["calls"] == sum(r["calls"] for e in entries for r in e["io"].values())
        assert f["read_bytes"] == 4 * MIB and f["write_bytes"] == 0
        assert f["block_read_bytes"] == 4 * MIB
        assert f["page_cache_hit_pages"] + f["page_cache_miss_pages"] == 1024
    res = run([IOTRACE, "compare", "--", *cmds])
    text = res.stdout.decode()
    assert re.search(r"^  read_bytes +4,194,304 +4,194,304$", text, re.M), text
    assert f"\nfile {src}\n" in text


def test_compare_file_rows_say_what_each_variant_did_with_the_file(tmp_path):
    """A file named on the commands that one variant reads (cat: data) and the other only
    loads (true runs with libc mapped: code) gets a `use` row: each variant's, as strace
    -ff -yy of the same command sees it by run-mode.md's rule."""
    from ledger import FILE_CALLS
    from test_story import strace_uses
    libc = subprocess.run(["sh", "-c", "ldd /bin/true | awk '/libc.so/ {print $3}'"],
                          capture_output=True, text=True).stdout.strip()
    libc = subprocess.run(["realpath", libc], capture_output=True, text=True).stdout.strip()
    cmds = [f"cat {libc} > /dev/null", f"/bin/true {libc}"]
    out = tmp_path / "cmp.json"
    res = run([IOTRACE, "compare", "--json", "-o", out, "-l", "cat", "-l", "true", "--", *cmds])
    assert res.returncode == 0, res.stderr
    variants = json.loads(out.read_text())["variants"]
    for i, (v, cmd) in enumerate(zip(variants, cmds)):
        log = tmp_path / f"st{i}"
        subprocess.run(["strace", "-f", "-ff", "-s0", "-yy", "-e", "trace=" + ",".join(FILE_CALLS),
                        "-o", str(log), "sh", "-c", cmd], check=True, capture_output=True)
        want = strace_uses(str(log))[libc][0]
        assert v["summary"]["files"][libc]["use"] == want, (v["label"], want)
        assert [f["use"] for f in v["runs"][0]["totals"]["files"] if f["path"] == libc] == [want]
    assert [v["summary"]["files"][libc]["use"] for v in variants] == ["data", "code"]
    text = run([IOTRACE, "compare", "-l", "cat", "-l", "true", "--", *cmds]).stdout.decode()
    assert re.search(r"^  use +data +code$", text, re.M), text
