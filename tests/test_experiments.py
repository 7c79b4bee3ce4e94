"""iotrace compare and the lab notes reproduced (scripts/experiments.py in quick mode)."""
import json
import subprocess
import sys

import pytest

from helpers import IOTRACE, ROOT, real_processes, run, wl


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("experiments")
    subprocess.run([sys.executable, ROOT / "scripts/experiments.py", "--quick", "--out", out],
                   check=True, timeout=600)
    return out


def summaries(out, key):
    data = json.loads((out / f"{key}.json").read_text())
    return {v["label"]: v for v in data["variants"]}


def test_every_note_has_a_page(quick):
    for name in ["000-copy", "001-tr2u-tr2b", "002-timewrite", "003-readall",
                 "004-read-file"]:
        text = (quick / f"{name}.md").read_text()
        assert "**The note**" in text and "**Our command:**" in text
        assert "| metric |" in text or "| variant |" in text
    assert (quick / "000-syscalls.png").read_bytes()[:4] == b"\x89PNG"


def test_compare_carries_the_run_mode_numbers(quick):
    for v in summaries(quick, "001").values():
        run_report = v["runs"][0]
        calls = sum(r["calls"] for r in run_report["totals"]["syscalls"].values())
        assert v["summary"]["syscalls"] == calls
        assert v["summary"]["wall_s"] == run_report["wall_ns"] / 1e9
        assert v["summary"]["write_bytes"] == run_report["totals"]["io"]["write"][
            "transferred_bytes"]


def test_tr2u_makes_far_more_syscalls_than_tr2b(quick):
    s = summaries(quick, "001")
    assert s["tr2u"]["summary"]["syscalls"] > 50 * s["tr2b"]["summary"]["syscalls"]


def test_readahead_ordering(quick):
    s = summaries(quick, "004")

    def file_value(label, key):
        run_report = s[label]["runs"][0]
        (value,) = [f[key] for p in real_processes(run_report) for f in p["files"] or []
                    if f["path"].endswith("/in004")]
        return value
    ahead = {label: file_value(label, "readahead_pages") for label in s}
    assert ahead["SEQUENTIAL"] > ahead["NORMAL"] > ahead["RANDOM"] == 0
    assert file_value("O_DIRECT", "resident_pages") == 0


def test_sync_writes_reach_the_disk_during_the_run(quick):
    s = summaries(quick, "002")
    data = 131072 * 10  # ten rows, each rewriting the whole quick input
    assert s["sync"]["summary"]["block_write_bytes"] >= data
    assert s["async"]["summary"]["block_write_bytes"] < s["sync"]["summary"]["block_write_bytes"]


def test_compare_table_and_errors(tmp_path):
    res = run([IOTRACE, "compare", "-l", "one", "--", "true", "sh -c 'exit 0'"])
    assert res.returncode == 0, res.stderr
    lines = res.stdout.decode().splitlines()
    assert lines[0].split()[:3] == ["variant", "one", "sh"]
    assert any(line.startswith("syscalls ") for line in lines)
    for args, message in [([], "no commands"), (["--repeat", "0", "--", "true"], "--repeat"),
                          (["-l", "a", "-l", "b", "--", "true"], "2 labels for 1 commands")]:
        bad = run([IOTRACE, "compare", *args])
        assert bad.returncode == 1 and message in bad.stderr.decode().splitlines()[0]
