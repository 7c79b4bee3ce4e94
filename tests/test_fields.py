"""Every number the reports carry is declared once (user/model/fields.h) and documented:
`iotrace fields` lists them, and each one's JSON key must be in its group's page of docs/,
each Prometheus family in docs/prometheus.md."""
import re
import subprocess

import pytest

from helpers import IOTRACE, ROOT

DOCS = {"syscalls": ["json.md", "run-mode.md"], "io": ["json.md", "run-mode.md"],
        "page_cache": ["page-cache.md"], "files": ["page-cache.md", "files.md"],
        "files.io": ["files.md"], "block": ["block.md"], "disk_stat": ["block.md"],
        "io_uring": ["io_uring.md"],
        "trace": ["trace.md"], "stacks": ["stacks.md"], "stacks.sites": ["stacks.md"],
        "story": ["run-mode.md"],
        "top": ["top.md"], "top.machine": ["top.md"]}


def fields():
    out = subprocess.run([IOTRACE, "fields"], capture_output=True, text=True, check=True).stdout
    rows = [line.split("\t") for line in out.splitlines()[1:]]
    assert rows and all(len(r) == 6 for r in rows), out
    return rows


def test_fields_cover_every_table():
    groups = {r[0] for r in fields()}
    assert groups == set(DOCS)


@pytest.mark.parametrize("row", fields(), ids=lambda r: f"{r[0]}.{r[1]}")
def test_field_is_documented(row):
    group, name, column, metric, unit, meaning = row
    assert meaning and unit, row
    text = "".join((ROOT / "docs" / d).read_text() for d in DOCS[group])
    key = name.rsplit(".", 1)[-1]
    assert re.search(rf"\b{re.escape(key)}\b", text), f"{name} not in docs/{DOCS[group]}"
    for family in re.findall(r"iotrace_\w+", metric):
        assert family in (ROOT / "docs" / "prometheus.md").read_text(), family


def test_json_keys_are_the_field_names(tmp_path):
    """The JSON of a run uses the declared names: a process's page_cache object carries every
    page-cache field, and each block op object every block field but the text-only ones."""
    from helpers import iotrace_json, real_processes, wl
    report, _ = iotrace_json([wl("mkinput"), "1m", str(tmp_path / "f")], tmp_path)
    proc = real_processes(report)[0]
    rows = fields()
    for group, obj in (("page_cache", proc["page_cache"]), ("block", proc["block"]["read"])):
        names = {r[1] for r in rows if r[0] == group and "." not in r[1]
                 and "text only" not in r[5] and not r[2].startswith("p50/p99")}
        assert names <= set(obj), names - set(obj)
