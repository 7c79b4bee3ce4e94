"""The per-file ledger: syscalls, page cache and block I/O of each (process, file), against
strace -ff -yy in the same run, fincore, /sys/block/*/stat and the workloads' arithmetic."""
import os
import re
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


def test_pipes_and_sockets(tmp_path, pre):
    """A pipeline's pipe and a socketpair's sockets are files with their /proc names."""
    echo = ("import socket\na, b = socket.socketpair()\n"
            "for i in range(100):\n    a.sendall(b'x' * 1000)\n    b.recv(1000)\n")
    ours, theirs, report = traced_by_both(
        ["/bin/sh", "-c", f"yes | head -c 1000000 > /dev/null; /usr/bin/python3 -c \"{echo}\""],
        tmp_path)
    assert_same(ours, theirs, pre)
    names = {f["path"]: f["kind"] for p in real_processes(report) for f in p["files"]}
    pipes = [n for n, k in names.items() if k == "pipe"]
    sockets = [n for n, k in names.items() if k == "socket"]
    assert pipes and all(n.startswith("pipe:[") for n in pipes)
    # python's own start-up may open NETLINK sockets; the socketpair is the two UNIX ones.
    assert all(re.fullmatch(r"socket:\[\d+\] \(\w+\)", n) for n in sockets), sockets
    assert len([n for n in sockets if n.endswith(" (UNIX)")]) == 2, sockets
    # yes wrote into the pipe what head read out of it, at least the million bytes.
    written = sum(ours[(p, "write")][2] for p in pipes)
    read = sum(ours[(p, "read")][2] for p in pipes)
    assert read >= 1000000 and written >= read


def block_of(f, op):
    return f["block"].get(op, {"requests": 0, "bytes": 0})


def entry(report, path, comm=None):
    found = [f for p in real_processes(report) if comm in (None, p["comm"])
             for f in p["files"] if f["path"] == str(path)]
    assert len(found) == 1, [f["path"] for p in real_processes(report) for f in p["files"]]
    return found[0]


def fincore_pages(path):
    res = run(["fincore", "--raw", "--noheadings", "--output", "PAGES", str(path)])
    return int(res.stdout)


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def test_cold_and_direct_reads_charge_their_file(tmp_path):
    path = mkinput(tmp_path / "cold", "64m", "-r")
    subprocess.run(["sync"], check=True)
    evict(path)
    assert fincore_pages(path) == 0
    report, res = iotrace_json([wl("read-file"), "-D", "-n", "64m", str(path)], tmp_path)
    assert res.returncode == 0, res.stderr
    f = entry(report, path)
    # Every page the read brought into the cache was read from the disk for this file.
    assert block_of(f, "read")["bytes"] == 4096 * f["added_pages"] == 4096 * fincore_pages(path)
    assert f["io"]["read"]["transferred_bytes"] == 64 * MIB
    # O_DIRECT: the pages are the process's buffer; the file is the one of its call.
    report, res = iotrace_json([wl("read-file"), "-i", "-n", "16m", str(path)], tmp_path)
    assert res.returncode == 0, res.stderr
    f = entry(report, path)
    assert block_of(f, "read")["bytes"] == f["io"]["read"]["transferred_bytes"] == 16 * MIB


def test_fsync_writes_charge_their_file(tmp_path):
    out = tmp_path / "dd.out"
    report, res = iotrace_json(["dd", "if=/dev/zero", f"of={out}", "bs=1M", "count=64",
                                "conv=fsync", "status=none"], tmp_path)
    assert res.returncode == 0, res.stderr
    f = entry(report, out, "dd")
    assert block_of(f, "write")["bytes"] >= 64 * MIB
    assert f["dirtied_pages"] == 64 * MIB // 4096
    assert f["io"]["write"]["transferred_bytes"] == 64 * MIB and f["io"]["fsync"]["calls"] == 1


def test_files_add_up_to_the_disk(tmp_path):
    """The per-file block records of every process and the other I/O (metadata rows
    included) add up to the per-disk totals, which equal the disk's own counters (retried:
    the disk is shared, a background write may land outside iotrace's window)."""
    from test_block import disk_of, disk_stat
    disk, out = disk_of(tmp_path), tmp_path / "w"
    seen = []
    for _ in range(3):
        subprocess.run(["sync"], check=True)
        before = disk_stat(disk)
        report, res = iotrace_json(["dd", "if=/dev/zero", f"of={out}", "bs=64k", "count=200",
                                    "oflag=direct", "status=none"], tmp_path)
        after = disk_stat(disk)
        assert res.returncode == 0, res.stderr
        files = [f for p in report["processes"] for f in p["files"]]
        per_file = [sum(block_of(f, op)[k] for f in files if disk in f["block"].get("disks", {}))
                    for op in ("read", "write") for k in ("requests", "bytes")]
        d = report["totals"]["block"]["disks"].get(disk, {})
        totals = [d.get(op, {}).get(k, 0) for op in ("read", "write") for k in ("requests", "bytes")]
        delta = [a - b for a, b in zip(after, before)]
        assert per_file == totals
        disk_counts = [delta[0], delta[1] * 512, delta[2], delta[3] * 512]
        if totals == disk_counts:
            return
        seen.append((totals, disk_counts))
    pytest.fail(f"(iotrace, /sys/block/{disk}/stat) never agreed: {seen}")


def test_text_table_fits_and_folds(tmp_path):
    """≤ 100 columns; the top 10 files, the rest in one line; long names cut in the
    middle with the file name whole."""
    deep = tmp_path / ("d" * 40) / ("e" * 40)
    deep.mkdir(parents=True)
    for i in range(14):
        mkinput(deep / f"file{i:02}", "8k", "-r")
    res = run([IOTRACE, "--", "/bin/sh", "-c", f"cat {deep}/* > /dev/null"])
    text = res.stderr.decode()
    assert res.returncode == 0, text
    assert all(len(line) <= 100 for line in text.splitlines()), \
        max(text.splitlines(), key=len)
    cat = text[text.index(" cat: cat "):]
    assert "files: 10 of " in cat and "\n+ " in cat and " more files" in cat
    rows = [l for l in cat.splitlines() if "/file" in l and "…" in l]
    assert rows and all(l.split()[0].endswith(f"/file{l.split()[0][-2:]}") for l in rows)
    res = run([IOTRACE, "--files", "all", "--", "/bin/sh", "-c", f"cat {deep}/* > /dev/null"])
    text = res.stderr.decode()
    assert "\n+ " not in text[text.index(" cat: cat "):].split("% time")[0]


def test_many_files_nothing_lost(tmp_path):
    """20,000 files read by tar: each in tar's ledger, with its read, nothing dropped."""
    tree = tmp_path / "tree"
    for d in range(20):
        (tree / f"d{d}").mkdir(parents=True)
        for i in range(1000):
            (tree / f"d{d}" / f"f{i}").write_bytes(b"x" * (i % 7 * 300 + 1))
    report, res = iotrace_json(["/bin/sh", "-c", f"tar cf - -C {tmp_path} tree | cat > /dev/null"],
                               tmp_path, timeout=600)
    assert res.returncode == 0, res.stderr
    assert report["drops"]["files"] == 0 and report["drops"]["paths"] == 0
    tar = next(p for p in real_processes(report) if p["comm"] == "tar")
    read = {f["path"]: f["io"]["read"]["transferred_bytes"] for f in tar["files"]
            if f["kind"] == "file" and "read" in f["io"] and f["path"].startswith(str(tree))}
    assert len(read) == 20000
    assert all(read[str(tree / f"d{d}" / f"f{i}")] == i % 7 * 300 + 1
               for d in range(20) for i in range(1000))
