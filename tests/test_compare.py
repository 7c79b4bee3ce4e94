"""iotrace compare: variants side by side (it was tested through the lab notes until they
moved to their own conditions, scripts/labnotes)."""
import json

from helpers import IOTRACE, mkinput, run, wl


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
