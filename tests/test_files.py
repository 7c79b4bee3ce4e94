"""The per-file ledger: syscalls, page cache and block I/O of each (process, file), against
strace -ff -yy in the same run, fincore, /sys/block/*/stat and the workloads' arithmetic."""
import collections
import json
import mmap
import os
import re
import stat
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import IOTRACE, MIB, ROOT, iotrace_json, mkinput, real_processes, run, wl
from ledger import differences, pre_exec, traced_by_both
from test_block import disk_of, disk_stat
from test_task_cache import BPF_MAP_GET_FD_BY_ID, bpf, bss_var_of


@pytest.fixture(scope="module")
def pre(tmp_path_factory):
    return pre_exec(tmp_path_factory.mktemp("pre"))


def assert_same(ours, theirs, pre):
    diff = differences(ours, theirs, pre)
    assert not diff, sorted(diff.items(), key=str)[:20]
    assert theirs, "strace saw no file calls"


def test_workloads_per_file(tmp_path, pre):
    """The workloads' calls on one input, per file, equal strace -ff -yy's in the same run:
    tr2u's one-byte reads among them, more than 2**16 (100 KiB: each call costs ~0.2 ms
    under strace; 300 KiB took 145 s of `make test`)."""
    src = mkinput(tmp_path / "src", "100k", "-r")
    script = (f"{wl('copy')} -b 4096 {src} {tmp_path}/c1; {wl('copy')} -m stdio {src} "
              f"{tmp_path}/c2; {wl('tr2u')} a b < {src} > {tmp_path}/t; "
              f"{wl('read-file')} -n 64k {src}")
    ours, theirs, _ = traced_by_both(["/bin/sh", "-c", script], tmp_path)
    assert_same(ours, theirs, pre)
    assert theirs[(str(src), "read")][0] > 100 * 1024  # tr2u's one-byte reads among them


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


def test_a_program_is_named_by_the_path_it_ran_from(tmp_path):
    """A program with hard links elsewhere (perf's build-id cache keeps one of each program
    it profiled; git's commands are one file) is named by the path the exec opened: the
    name the kernel gives its inode alone may be any of them, and is here the newest link.
    Its dynamic loader, mapped by the exec too, by the path the exec opened it by."""
    prog = tmp_path / "bin" / "prog"
    prog.parent.mkdir()
    subprocess.run(["cp", "/bin/true", str(prog)], check=True)
    cache = tmp_path / ".debug" / "prog" / "0123abcd"
    cache.mkdir(parents=True)
    os.link(prog, cache / "elf")
    report, res = iotrace_json([str(prog)], tmp_path)
    assert res.returncode == 0, res.stderr
    (proc,) = real_processes(report)
    paths = [f["path"] for f in proc["files"]]
    assert str(prog) in paths and str(cache / "elf") not in paths, paths
    info = json.loads(run([IOTRACE, "info", "--json"]).stdout)
    if info["build"]["name"] != "compat":  # no bpf_find_vma: the loader by its inode there
        loader = os.path.realpath(subprocess.run(
            ["sh", "-c", "readelf -l /bin/true | sed -n 's/.*interpreter: \\(.*\\)]/\\1/p'"],
            capture_output=True, text=True, check=True).stdout.strip())
        assert loader in paths, (loader, paths)


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


# A program that uses one file of each kind and says, while they are open, what
# /proc/self/fd names each fd (readlink: the name `ls -l /proc/PID/fd` shows), its type and
# inode (fstat), and the bytes it wrote to and read from it.
KINDS = r'''
import json, os, socket, stat, sys, tty
out, path = sys.argv[1], sys.argv[2]
res = {}
def note(label, fd, wrote=0, read=0):
    st = os.fstat(fd)
    res[label] = {"name": os.readlink(f"/proc/self/fd/{fd}"), "type": stat.S_IFMT(st.st_mode),
                  "dev": f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}", "ino": st.st_ino,
                  "wrote": wrote, "read": read}
def read_all(fd, n):
    got = b""
    while len(got) < n:
        got += os.read(fd, n - len(got))
    return len(got)
m = os.memfd_create("x")
os.write(m, b"m" * 5000)
e = os.eventfd(0)
os.eventfd_write(e, 3)
os.eventfd_read(e)
master, slave = os.openpty()
tty.setraw(slave)                     # no echo, no newline translation
os.write(master, b"p" * 100)
pts_read = read_all(slave, 100)
os.write(slave, b"q" * 70)
ptmx_read = read_all(master, 70)
lst = socket.create_server(("127.0.0.1", 0))
c = socket.create_connection(lst.getsockname())
s, _ = lst.accept()
os.write(c.fileno(), b"t" * 3000)     # read/write: the ledger's calls (not sendto/recvfrom)
tcp_read = read_all(s.fileno(), 3000)
os.write(s.fileno(), b"r" * 500)
tcp_back = read_all(c.fileno(), 500)
u1 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u2 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u1.bind(("127.0.0.1", 0)); u2.bind(("127.0.0.1", 0))
u1.connect(u2.getsockname()); u2.connect(u1.getsockname())
os.write(u1.fileno(), b"u" * 1200)
udp_read = len(os.read(u2.fileno(), 4000))
f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(f, b"a" * 4000)
os.unlink(path)
os.write(f, b"b" * 2000)
p = os.open("/proc/self/status", os.O_RDONLY)
proc_read = len(os.read(p, 65536))
note("memfd", m, wrote=5000)
note("eventfd", e, wrote=8, read=8)
note("pty master", master, wrote=100, read=ptmx_read)
note("pty slave", slave, wrote=70, read=pts_read)
note("tcp listener", lst.fileno())
note("tcp client", c.fileno(), wrote=3000, read=tcp_back)
note("tcp server", s.fileno(), wrote=500, read=tcp_read)
note("udp 1", u1.fileno(), wrote=1200)
note("udp 2", u2.fileno(), read=udp_read)
note("unlinked", f, wrote=6000)
note("proc", p, read=proc_read)
# lsof's protocol of each socket: the /proc/net table that lists its inode.
res["protocols"] = {line.split()[9]: proto.upper() for proto in ("tcp", "udp")
                    for line in open(f"/proc/net/{proto}").readlines()[1:]}
res["pid"] = os.getpid()
with open(out, "w") as o:
    json.dump(res, o)
'''

KIND_OF_TYPE = {stat.S_IFSOCK: "socket", stat.S_IFCHR: "chr", stat.S_IFREG: "file", 0: "anon"}


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    """(what the program saw of each fd, {label: its entry in iotrace's ledger})."""
    tmp = tmp_path_factory.mktemp("kinds")
    (tmp / "kinds.py").write_text(KINDS)
    report, res = iotrace_json(["/usr/bin/python3", str(tmp / "kinds.py"), str(tmp / "seen.json"),
                                str(tmp / "unlinked")], tmp)
    assert res.returncode == 0, res.stderr[-2000:]
    seen = json.loads((tmp / "seen.json").read_text())
    proc = [p for p in real_processes(report) if p["pid"] == seen["pid"]]
    assert len(proc) == 1, [(p["pid"], p["comm"]) for p in report["processes"]]
    found = {}
    for label, fd in seen.items():
        if label in ("protocols", "pid"):
            continue
        # Anonymous inodes share one inode: the ledger tells them apart by their names (its
        # "ino" for them is a key of its own, not the inode).
        same = [f for f in proc[0]["files"] if f.get("dev") == fd["dev"] and
                (f["path"] == fd["name"] if fd["type"] == 0 else f.get("ino") == fd["ino"])]
        assert len(same) == 1, (label, fd, [(f["path"], f.get("dev"), f.get("ino"))
                                            for f in proc[0]["files"]])
        found[label] = same[0]
    return seen, found


def moved(f, op):
    return (f.get("io") or {}).get(op, {}).get("transferred_bytes", 0)


def proc_name(fd, protocols):
    """The name /proc/PID/fd gave, and for a socket lsof's protocol after it."""
    m = re.fullmatch(r"socket:\[(\d+)\]", fd["name"])
    return f"{fd['name']} ({protocols[m.group(1)]})" if m else fd["name"]


def kind_of(fd):
    kind = KIND_OF_TYPE.get(fd["type"], "?")
    return "memfd" if kind == "file" and fd["name"].startswith("/memfd:") else kind


def test_every_kind_of_file_has_its_proc_name(kinds):
    """A memfd, an eventfd, a pty's two ends, TCP and UDP sockets over loopback and a file
    unlinked between two writes: each in the process's files (found by fstat's dev and inode)
    with the name /proc/PID/fd gave it while open (a socket's with lsof's protocol, from the
    /proc/net table listing its inode), the kind of its fstat type, and the bytes the program
    wrote to and read from it."""
    seen, found = kinds
    assert seen["unlinked"]["name"].endswith(" (deleted)")
    assert seen["pty slave"]["name"].startswith("/dev/pts/")
    bad = {}
    for label, f in found.items():
        fd = seen[label]
        want = {"kind": kind_of(fd), "wrote": fd["wrote"], "read": fd["read"]}
        got = {"kind": f["kind"], "wrote": moved(f, "write"), "read": moved(f, "read")}
        want["name"], got["name"] = proc_name(fd, seen["protocols"]), f["path"]
        if got != want:
            bad[label] = {"iotrace": got, "program": want}
    assert not bad, bad
    assert sorted(f["path"][-5:] for f in found.values() if f["kind"] == "socket") == \
        ["(TCP)"] * 3 + ["(UDP)"] * 2


def test_memfd_has_its_proc_name(kinds):
    """A memfd: named as /proc/PID/fd and lsof name it, "/memfd:NAME (deleted)"."""
    seen, found = kinds
    assert found["memfd"]["path"] == seen["memfd"]["name"] == "/memfd:x (deleted)"


def test_proc_file_has_its_proc_name(kinds):
    """A /proc file of a process gone by the end is not "(deleted)": its directory went too."""
    seen, found = kinds
    assert found["proc"]["path"] == seen["proc"]["name"] == f"/proc/{seen['pid']}/status"


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


class Place:
    """Where a test's files go: tmp_path, on the machine's disk that other processes share,
    or a fresh ext4 on a loop device of its own (nothing else uses that disk, and after a
    remount nothing of its filesystem is cached, metadata included)."""

    def __init__(self, root, loop=None):
        self.root, self.loop, self.disk = root, loop, disk_of(root)

    def cool(self, path):
        """path and, on the loop device, every block of its filesystem out of the cache."""
        subprocess.run(["sync"], check=True)
        if self.loop:
            subprocess.run(["umount", str(self.root)], check=True)
            subprocess.run(["mount", self.loop, str(self.root)], check=True)
        else:
            evict(path)
            assert fincore_pages(path) == 0


@pytest.fixture(params=["tmp", "loop"])
def place(request, tmp_path):
    if request.param == "tmp":
        yield Place(tmp_path)
        return
    img, mnt = tmp_path / "fs.img", tmp_path / "mnt"
    with open(img, "wb") as f:
        f.truncate(192 * MIB)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0",
                    str(img)], check=True)
    loop = subprocess.run(["losetup", "-f", "--show", str(img)], check=True,
                          capture_output=True, text=True).stdout.strip()
    try:
        mnt.mkdir()
        subprocess.run(["mount", loop, str(mnt)], check=True)
        try:
            yield Place(mnt, loop)
        finally:
            for _ in range(50):
                if subprocess.run(["umount", str(mnt)]).returncode == 0:
                    break
                time.sleep(0.1)
    finally:
        subprocess.run(["losetup", "-d", loop], check=True)


def on_disk(f, disk, op):
    """[requests, bytes] of one operation of a file's block records on one disk."""
    d = f["block"].get("disks", {}).get(disk, {}).get(op, {})
    return [d.get("requests", 0), d.get("bytes", 0)]


def per_disk(report, op):
    """{disk: {"data": [requests, bytes], "metadata": [...]}}: the block records of every
    file of every process and the other I/O, its metadata rows apart."""
    out = {}
    for f in (f for p in report["processes"] for f in p["files"]):
        for disk in f["block"].get("disks", {}):
            row = out.setdefault(disk, {"data": [0, 0], "metadata": [0, 0]})
            kind = "metadata" if f["kind"] == "metadata" else "data"
            row[kind] = [a + b for a, b in zip(row[kind], on_disk(f, disk, op))]
    return out


def all_rows(row):
    """[requests, bytes] of data and metadata rows together."""
    return [a + b for a, b in zip(row["data"], row["metadata"])] if row else [0, 0]


def disk_stats():
    return {d: disk_stat(d) for d in os.listdir("/sys/block")}


def test_cold_and_direct_reads_charge_their_file(place, tmp_path):
    """A cold 64 MiB read: the file's block reads are the pages it added to the cache; every
    disk's reads, over the files of all processes and the other I/O (metadata rows
    included), are its /sys/block/DISK/stat delta, and what a disk read for no file is on a
    metadata row. Exact. tmp_path's disk is shared: a read just before or after iotrace's
    window is in the disk's delta and not in iotrace (any other process's read inside it is
    on the other I/O's rows), and another session's drop_caches may evict pages of the file
    before fincore counts them, so the run is retried for a window without either (at most 5).
    On the freshly mounted loop device the inode and directory blocks are cold too:
    metadata reads are certain there, and the reader's metadata row must hold them."""
    path = mkinput(place.root / "cold", "64m", "-r")
    seen = []
    for _ in range(5):
        place.cool(path)
        before = disk_stats()
        report, res = iotrace_json([wl("read-file"), "-D", "-n", "64m", str(path)], tmp_path)
        after = disk_stats()
        assert res.returncode == 0, res.stderr
        f = entry(report, path)
        # Every page the read brought into the cache was read from the disk for this file
        # (fincore after it: below, as another session's drop_caches can evict some).
        assert block_of(f, "read")["bytes"] == 4096 * f["added_pages"] >= 64 * MIB
        assert f["io"]["read"]["transferred_bytes"] == 64 * MIB
        reader = next(p for p in real_processes(report) if f in p["files"])
        meta = [m for m in reader["files"] if m["kind"] == "metadata" and m["dev"] == place.disk]
        if place.loop:
            assert len(meta) == 1 and on_disk(meta[0], place.disk, "read")[1] > 0, meta
        charged = per_disk(report, "read")
        delta = {d: [after[d][0] - before[d][0], (after[d][1] - before[d][1]) * 512]
                 for d in after}
        wrong = {d: (charged.get(d), delta.get(d)) for d in set(charged) | set(delta)
                 if all_rows(charged.get(d)) != delta.get(d, [0, 0])}
        cached = fincore_pages(path)
        if not wrong and cached == f["added_pages"]:
            break
        seen.append((wrong, f["added_pages"], cached))
    else:
        pytest.fail("({disk: (iotrace, /sys/block/DISK/stat)} where they differ, pages added, "
                    f"fincore) never agreed: {seen}")
    for disk, (_, nbytes) in delta.items():
        if nbytes > charged.get(disk, {"data": [0, 0]})["data"][1]:  # a read of no file
            assert any(on_disk(m, disk, "read")[1] for p in report["processes"]
                       for m in p["files"] if m["kind"] == "metadata" and m["dev"] == disk)
    # O_DIRECT: the pages are the process's buffer; the file is the one of its call.
    report, res = iotrace_json([wl("read-file"), "-i", "-n", "16m", str(path)], tmp_path)
    assert res.returncode == 0, res.stderr
    f = entry(report, path)
    assert block_of(f, "read")["bytes"] == f["io"]["read"]["transferred_bytes"] == 16 * MIB


def test_fsync_writes_charge_their_file(place, tmp_path):
    """dd conv=fsync: its 64 MiB written back for its file are charged to it, ≥ 64 MiB, and
    exactly the disk's writes (/sys/block/DISK/stat) less the metadata rows' of all
    processes and the other I/O: the journal and inode tables, and another process's
    writeback inside iotrace's window (the other I/O's "others' files" row). Exact; on the
    shared disk a write just before or after iotrace's window is in the disk's delta and
    not in iotrace, so the run is retried for a window without one (at most 5)."""
    out = place.root / "dd.out"
    seen = []
    for _ in range(5):
        subprocess.run(["sync"], check=True)
        before = disk_stat(place.disk)
        report, res = iotrace_json(["dd", "if=/dev/zero", f"of={out}", "bs=1M", "count=64",
                                    "conv=fsync", "status=none"], tmp_path)
        after = disk_stat(place.disk)
        assert res.returncode == 0, res.stderr
        f = entry(report, out, "dd")
        assert block_of(f, "write")["bytes"] >= 64 * MIB
        assert f["dirtied_pages"] == 64 * MIB // 4096
        assert f["io"]["write"]["transferred_bytes"] == 64 * MIB and f["io"]["fsync"]["calls"] == 1
        metadata = sum(on_disk(m, place.disk, "write")[1] for p in report["processes"]
                       for m in p["files"] if m["kind"] == "metadata")
        written = (after[3] - before[3]) * 512
        if on_disk(f, place.disk, "write")[1] == written - metadata:
            return
        seen.append((on_disk(f, place.disk, "write")[1], written, metadata))
    pytest.fail(f"(dd.out's writes, /sys/block/{place.disk}/stat's, metadata rows') "
                f"never agreed: {seen}")


def test_files_add_up_to_the_disk(tmp_path):
    """The per-file block records of every process and the other I/O (metadata rows
    included) add up to the per-disk totals, which equal the disk's own counters: on a loop
    disk of the test's own (ext4, mq-deadline), so nothing else writes in the window."""
    from test_disk_stat import loop_disk, quiet
    with loop_disk(tmp_path, "mq-deadline", "ext4") as (_, disk, mnt):
        quiet(disk)
        before = disk_stat(disk)
        report, res = iotrace_json(["dd", "if=/dev/zero", f"of={mnt / 'w'}", "bs=64k",
                                    "count=200", "oflag=direct", "status=none"], tmp_path)
        after = disk_stat(disk)
        assert res.returncode == 0, res.stderr
        files = [f for p in report["processes"] for f in p["files"]]
        per_file = [sum(block_of(f, op)[k] for f in files if disk in f["block"].get("disks", {}))
                    for op in ("read", "write") for k in ("requests", "bytes")]
        d = report["totals"]["block"]["disks"].get(disk, {})
        totals = [d.get(op, {}).get(k, 0) for op in ("read", "write")
                  for k in ("requests", "bytes")]
        delta = [a - b for a, b in zip(after, before)]
        assert per_file == totals
        assert totals[2] >= 200 and totals == [delta[0], delta[1] * 512, delta[2], delta[3] * 512]


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


# Each file its own mix of the ledger's calls (bits of a hash of its number), so that an
# entry's next file seldom makes the calls its last one made; the workload counts its own.
MIXED_CALLS = r"""
import collections, json, os, sys
d, n = sys.argv[1], int(sys.argv[2])
done = collections.Counter()
ops = [("write", lambda fd: os.write(fd, b"x" * 64)), ("pwrite64", lambda fd: os.pwrite(fd, b"y", 9)),
       ("lseek", lambda fd: os.lseek(fd, 0, 0)), ("read", lambda fd: os.read(fd, 8)),
       ("pread64", lambda fd: os.pread(fd, 8, 0)), ("fsync", os.fsync), ("fdatasync", os.fdatasync),
       ("ftruncate", lambda fd: os.ftruncate(fd, 100)),
       ("fadvise64", lambda fd: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)),
       ("readv", lambda fd: os.readv(fd, [bytearray(4)])), ("writev", lambda fd: os.writev(fd, [b"z"])),
       ("fallocate", lambda fd: os.posix_fallocate(fd, 0, 200))]
for i in range(n):
    fd = os.open(f"{d}/f{i}", os.O_CREAT | os.O_RDWR, 0o644)
    m = i * 2654435761 % 4096
    for bit, (name, call) in enumerate(ops):
        if m >> bit & 1:
            call(fd)
            done[name] += 1
    os.close(fd)
    os.unlink(f"{d}/f{i}")
done["openat"] = done["close"] = n
print(json.dumps(done))
"""


def test_files_of_mixed_calls_keep_their_rows(tmp_path):
    """12,000 files, each with its own mix of 2 to 14 ledger calls: a recycled entry gives
    its rows back, so the table's rows hold the files in use, not every call an entry's
    earlier files made (33,269 of 96,000 calls were lost before). Every call is in its
    file's row, or counted lost; under a loader starved by other work a few may be, never
    more than 1%."""
    d = tmp_path / "mixed"
    d.mkdir()
    script = tmp_path / "mixed.py"
    script.write_text(MIXED_CALLS)
    report, res = iotrace_json([sys.executable, str(script), str(d), "12000"], tmp_path,
                               timeout=600)
    assert res.returncode == 0, res.stderr
    done = json.loads(res.stdout)
    ours = collections.Counter()
    for p in real_processes(report):
        for f in p["files"]:
            if (f["path"] or "").startswith(f"{d}/"):
                for name, row in (f.get("io") or {}).items():
                    ours[name.split(" ")[0]] += row["calls"]
    lost = report["drops"]["file_rows"]
    total = sum(done.values())
    assert total > 90000
    assert lost <= total // 100, (lost, total)
    short = {k: (ours[k], v) for k, v in done.items() if ours[k] != v}
    assert all(ours[k] <= v for k, v in done.items()) and \
        sum(v - ours[k] for k, v in done.items()) <= lost, (short, lost)
    assert set(ours) <= set(done), set(ours) - set(done)


# ---- the text table, read back ----

NAME_COLUMN = 22
READS = {"read", "pread64", "readv", "preadv", "preadv2"}
WRITES = {"write", "pwrite64", "writev", "pwritev", "pwritev2"}
DETAIL = re.compile(r"^    (\d+:\d+) ino (\d+), (\w+), advice \w+, windows .*; opens (\d+), ")
FOLD = re.compile(r"^\+ ([\d,]+) more files?\b.*?: (?:no reads|([\d,]+) reads (\S+)), "
                  r"(?:no writes|([\d,]+) writes (\S+)), ")


def section(text, comm):
    """The report's section of the one process named comm."""
    parts = [p for p in re.split(r"\n(?=== pid )", text)
             if re.match(rf"== pid \d+ .*\) {comm}:", p)]
    assert len(parts) == 1, text[:3000]
    return parts[0]


def files_table(sec):
    """(shown, total, by, rows, fold) of a section's files table; rows: [name, cells,
    detail line or None], the metadata rows left out."""
    lines = sec.splitlines()
    i = next(i for i, l in enumerate(lines) if l.startswith("files: "))
    shown, total, by = re.fullmatch(r"files: (\d+) of (\d+), by (.+)", lines[i]).groups()
    rows, fold, name = [], None, None
    for line in lines[i + 3:]:
        if not line:
            break
        if fold:
            continue  # metadata rows, after the fold
        if line.startswith("+ "):
            fold = FOLD.match(line)
            assert fold, line
        elif DETAIL.match(line):
            assert rows and rows[-1][2] is None, line
            rows[-1][2] = line
        elif line.startswith(" " * NAME_COLUMN):  # --wide: a long name has a line of its own
            rows.append([name, line.split(), None])
            name = None
        elif len(line[NAME_COLUMN:].split()) == 12:
            rows.append([line[:NAME_COLUMN].rstrip(), line[NAME_COLUMN:].split(), None])
        else:
            name = line
    return int(shown), int(total), by, rows, fold


def read_write_table(sec):
    """{syscall: (calls, transferred bytes)} from the section's read/write table."""
    lines = sec.splitlines()
    i = next(i for i, l in enumerate(lines) if l.startswith("read/write "))
    out = {}
    for line in lines[i + 1:]:
        if not line.strip():
            break
        name, calls, _errors, _req, xfer = line.split()[:5]
        out[name] = (int(calls), int(xfer))
    assert set(out) <= READS | WRITES, out  # no copies: their bytes count on two files
    return out


def cell_bytes(v):
    """user/report/cells.c cell_bytes."""
    x, unit = float(v), -1
    while x >= 1024 and unit < 4:
        x, unit = x / 1024, unit + 1
    return str(v) if unit < 0 else ("%.1f%s" if x < 10 else "%.0f%s") % (x, "KMGTP"[unit])


def cell_ns(cell):
    """The time a cell of the time column shows (user/report/cells.c cell_time), in ns."""
    if cell == "0":
        return 0
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", cell).groups()
    return float(value) * {"us": 1e3, "ms": 1e6, "s": 1e9}[unit]


def number(s):
    return int(s.replace(",", "")) if s else 0


def assert_fold_adds_up(sec, rows, fold, exact=False):
    """The listed rows and the fold line hold every read and write of the process's
    read/write table (its per-syscall counters, not the ledger's): calls, and bytes when
    the rows show them exactly (--wide)."""
    table = read_write_table(sec)
    for family, (calls_i, bytes_i), (fcalls, fbytes) in (
            (READS, (0, 1), fold.group(2, 3)), (WRITES, (2, 3), fold.group(4, 5))):
        calls = sum(c for n, (c, _) in table.items() if n in family)
        assert sum(number(r[1][calls_i]) for r in rows) + number(fcalls) == calls, (rows, fold[0])
        if exact:
            rest = sum(b for n, (_, b) in table.items() if n in family) - \
                sum(int(r[1][bytes_i]) for r in rows)
            assert fbytes == cell_bytes(rest) if fcalls else rest == 0, (rest, fold[0])


def test_text_table_sorts_lists_folds_and_details(tmp_path):
    """The files table of cat reading nine files of known sizes into /dev/null. With
    --no-time it is sorted by bytes: /dev/null (all of them written), then the files by
    size; `--files 4 --wide` lists 4 rows, each with exact numbers (the files' sizes) and
    its detail line (device and inode as stat gives them, kind, one open), and folds the
    rest into one "+ K more files" line, K = total - 4. Timed, `--files 3`: 3 rows in the
    order of their own time column (the table's order against the table's numbers, no
    expectation of any duration), ≤ 100 columns. Either way the rows and the fold line add
    up to the process's read/write table (calls; bytes exactly with --wide)."""
    sizes = {tmp_path / f"f{i}": (7 * i % 9 + 1) * 5000 for i in range(9)}
    for path, size in sizes.items():
        path.write_bytes(os.urandom(size))
    env = dict(os.environ, LC_ALL="C")
    cat = ["cat", *map(str, sizes)]

    res = run([IOTRACE, "-T", "--wide", "--files", "4", "--", *cat], stdout=subprocess.DEVNULL,
              env=env)
    text = res.stderr.decode()
    assert res.returncode == 0, text
    sec = section(text, "cat")
    shown, total, by, rows, fold = files_table(sec)
    assert (shown, by, len(rows)) == (4, "bytes", 4), rows
    biggest = sorted(sizes, key=sizes.get, reverse=True)[:3]
    assert [r[0] for r in rows] == ["/dev/null"] + [str(p) for p in biggest]
    assert [int(r[1][3]) for r in rows[:1]] == [sum(sizes.values())]
    assert [int(r[1][1]) for r in rows[1:]] == [sizes[p] for p in biggest]
    for (name, _, detail), path in zip(rows, ["/dev/null"] + biggest):
        st = os.stat(path)
        want = (f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}", str(st.st_ino),
                "chr" if name == "/dev/null" else "file")
        assert detail and DETAIL.match(detail).groups()[:3] == want, (name, detail)
        assert name == "/dev/null" or DETAIL.match(detail).group(4) == "1", detail
    assert fold and number(fold.group(1)) == total - 4 > 0, (total, fold and fold[0])
    assert_fold_adds_up(sec, rows, fold, exact=True)

    res = run([IOTRACE, "--files", "3", "--", *cat], stdout=subprocess.DEVNULL, env=env)
    text = res.stderr.decode()
    assert res.returncode == 0, text
    assert all(len(line) <= 100 for line in text.splitlines()), max(text.splitlines(), key=len)
    sec = section(text, "cat")
    # (Timed, closes count per file too: cat's close of stderr, a pipe, makes it a file.)
    shown, total, by, rows, fold = files_table(sec)
    assert (shown, by, len(rows)) == (3, "I/O time", 3), rows
    assert all(r[2] is None for r in rows)
    times = [cell_ns(r[1][5]) for r in rows]
    assert times == sorted(times, reverse=True), rows
    assert fold and number(fold.group(1)) == total - 3, fold and fold[0]
    assert_fold_adds_up(sec, rows, fold)


def test_an_exited_process_leaves_the_table(tmp_path):
    """Each exited process's entries leave the kernel's table at its exit, found through the
    owners' array beside it (file_owners): while the shell that ran 400 cats of two files
    waits, the table holds its own entries only, every owner left in the array is alive, and
    the report still has each cat's two files with their bytes."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"a" * 3000)
    b.write_bytes(b"b" * 5000)
    go = tmp_path / "go"
    os.mkfifo(go)
    out = tmp_path / "r.json"
    n = 400
    max_files = int(re.search(r"#define MAX_FILES (\d+)", (ROOT / "bpf/iotrace.h").read_text())[1])
    proc = subprocess.Popen(
        [str(IOTRACE), "--json", "-o", str(out), "--", "/bin/sh", "-c",
         f"for i in $(seq {n}); do cat {a} {b} > /dev/null; done; read x < {go}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        live = owners = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            found = [bss_var_of(proc.pid, v) for v in ("files_live", "file_owners")]
            if None in found:
                time.sleep(0.1)
                continue
            fd = bpf(BPF_MAP_GET_FD_BY_ID, found[0][0].to_bytes(4, "little") + bytes(8))
            size = (found[0][1] + mmap.PAGESIZE - 1) // mmap.PAGESIZE * mmap.PAGESIZE
            with mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ) as mem:
                live = struct.unpack_from("I", mem, found[0][2])[0]
                owners = set(struct.unpack_from(f"{max_files}I", mem, found[1][2])) - {0}
            os.close(fd)
            if owners and all(Path(f"/proc/{o}").exists() for o in owners) and live < 40:
                break
            time.sleep(0.2)
        assert live is not None and live < 40, live
        assert owners and all(Path(f"/proc/{o}").exists() for o in owners), owners
    finally:
        with open(go, "w") as f:
            f.write("\n")
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    report = json.loads(out.read_text())
    assert report["drops"]["files"] == 0
    cats = [p for p in real_processes(report) if p["comm"] == "cat"]
    assert len(cats) == n
    for p in cats:
        read = {f["path"]: f["io"]["read"]["transferred_bytes"] for f in p["files"]
                if f["path"] in (str(a), str(b))}
        assert read == {str(a): 3000, str(b): 5000}, p["files"]
