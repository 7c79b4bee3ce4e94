"""The per-file ledger: syscalls, page cache and block I/O of each (process, file), against
strace -ff -yy in the same run, fincore, /sys/block/*/stat and the workloads' arithmetic."""
import os
import subprocess
import sys

import pytest

from helpers import IOTRACE, MIB, iotrace_json, mkinput, real_processes, run, wl
from ledger import differences, pre_exec, traced_by_both


@pytest.fixture(scope="module")
def pre(tmp_path_factory):
    return pre_exec(tmp_path_factory.mktemp("pre"))


def assert_same(ours, theirs, pre):
    diff = differences(ours, theirs, pre)
    assert not diff, sorted(diff.items(), key=str)[:20]
    assert theirs, "strace saw no file calls"


def test_workloads_per_file(tmp_path, pre):
    src = mkinput(tmp_path / "src", "300k", "-r")
    script = (f"{wl('copy')} -b 4096 {src} {tmp_path}/c1; {wl('copy')} -m stdio {src} "
              f"{tmp_path}/c2; {wl('tr2u')} a b < {src} > {tmp_path}/t; "
              f"{wl('read-file')} -n 200k {src}")
    ours, theirs, _ = traced_by_both(["/bin/sh", "-c", script], tmp_path)
    assert_same(ours, theirs, pre)
    assert theirs[(str(src), "read")][0] > 300000  # tr2u's one-byte reads among them


@pytest.mark.parametrize("name", ["cp", "pipeline", "tar", "sqlite3", "git", "python"])
def test_real_programs_per_file(name, tmp_path, pre):
    data = tmp_path / "data"
    data.mkdir()
    for i in range(20):
        mkinput(data / f"f{i}", f"{(i + 1) * 7}k", "-r")
    cmds = {
        "cp": ["cp", "-r", str(data), str(tmp_path / "copy")],
        "pipeline": ["/bin/sh", "-c", f"cat {data}/* | sort | uniq -c > {tmp_path}/u; "
                     f"yes | head -c 100000 > /dev/null"],
        "tar": ["tar", "czf", str(tmp_path / "d.tgz"), "-C", str(tmp_path), "data"],
        "sqlite3": ["sqlite3", str(tmp_path / "db"), "create table t(a, b);" +
                    "".join(f"insert into t values({i}, 'row {i}');" for i in range(50))],
        "git": ["git", "-C", str(data), "status", "--short"],
        "python": ["/usr/bin/python3", "-c",
                   "import sys, threading\n"
                   "def rd(p):\n    open(p, 'rb').read()\n"
                   f"ts = [threading.Thread(target=rd, args=('{data}/f%d' % i,)) "
                   "for i in range(20)]\n[t.start() for t in ts]; [t.join() for t in ts]"],
    }
    if name == "git":  # a repository with one file changed since its commit
        subprocess.run(f"cd {data} && git init -q && git add . && git -c user.name=t "
                       "-c user.email=t@t commit -qm x", shell=True, check=True)
        (data / "f1").write_text("changed")
    ours, theirs, _ = traced_by_both(cmds[name], tmp_path)
    assert_same(ours, theirs, pre)


def test_renamed_file_keeps_its_names(tmp_path, pre):
    """A file written under one name and renamed (an editor's or git's lock file) is one
    file: its latest name, the earlier ones in other_names, and every call on it."""
    t = tmp_path / "t"
    ours, theirs, report = traced_by_both(
        ["/bin/sh", "-c", f"echo hello > {t}.tmp; mv {t}.tmp {t}; cat {t} > /dev/null"],
        tmp_path)
    assert_same(ours, theirs, pre)
    files = [f for p in real_processes(report) for f in p["files"] if f["path"] == str(t)]
    assert files and all(f["other_names"] == [f"{t}.tmp"] for f in files)
    assert ours[(str(t), "write")] == [1, 0, 6] and ours[(str(t), "read")][2] == 6
