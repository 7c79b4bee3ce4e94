"""A file is a file (issue 27): one row per file when a new file gets the inode number of an
earlier one, names that follow renames of every kind, the calls under the name they were
made under, and --files-by path. Checked against strace -ff -yy in the same run (each call
under the name strace gives it: no renaming of either side), and against the workloads' own
arithmetic (file i of a run writes i % 100 + 1 bytes)."""
import collections
import json
import re
import shutil
import subprocess

import pytest

from helpers import IOTRACE, run
from ledger import differences, normal, pre_exec, traced_by_both

PY = "/usr/bin/python3"

# N files created, written (file i: i % 100 + 1 bytes), closed and deleted one after the
# other, in one directory or spread over DIRS (ext4 gives the freed inode number to the
# next file); with SAME, all under one path.
REUSE = r"""
import os, sys
top, n, dirs, same = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "same"
for d in range(dirs):
    os.makedirs(f"{top}/d{d}", exist_ok=True)
for i in range(n):
    p = f"{top}/d{i % dirs}/" + ("f" if same else f"f{i}")
    fd = os.open(p, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    print(os.fstat(fd).st_ino)
    os.write(fd, b"x" * (i % 100 + 1))
    os.close(fd)
    os.unlink(p)
"""

# Renames of each kind, with calls on the file before and after each, some while it is open:
# rename, renameat (dirfd-relative), renameat2 RENAME_EXCHANGE, link + unlink, O_TMPFILE +
# linkat, and mv (another process) renaming a file this one keeps writing.
KINDS = r"""
import ctypes, os, subprocess, sys
d = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE, AT_SYMLINK_FOLLOW = -100, 2, 0x400
def new(path, data):
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.write(fd, data)
    return fd
def read(path):
    fd = os.open(path, os.O_RDONLY); os.read(fd, 1000); os.close(fd)
a = new(f"{d}/a.tmp", b"1" * 11); os.rename(f"{d}/a.tmp", f"{d}/a"); os.write(a, b"2" * 12)
os.close(a)
x, y = new(f"{d}/x", b"x" * 13), new(f"{d}/y", b"y" * 14)
assert libc.renameat2(AT_FDCWD, f"{d}/x".encode(), AT_FDCWD, f"{d}/y".encode(),
                      RENAME_EXCHANGE) == 0, ctypes.get_errno()
os.write(x, b"X" * 15); os.write(y, b"Y" * 16); os.close(x); os.close(y)
l = new(f"{d}/l.old", b"l" * 17); os.link(f"{d}/l.old", f"{d}/l.new"); os.unlink(f"{d}/l.old")
os.write(l, b"L" * 18); os.close(l); read(f"{d}/l.new")
t = os.open(d, os.O_TMPFILE | os.O_WRONLY, 0o644); os.write(t, b"t" * 19)
assert libc.linkat(AT_FDCWD, f"/proc/self/fd/{t}".encode(), AT_FDCWD,
                   f"{d}/t.final".encode(), AT_SYMLINK_FOLLOW) == 0, ctypes.get_errno()
os.write(t, b"T" * 20); os.close(t); read(f"{d}/t.final")
dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
os.close(new(f"{d}/c.1", b"c" * 21))
os.rename("c.1", "c.2", src_dir_fd=dfd, dst_dir_fd=dfd); os.close(dfd); read(f"{d}/c.2")
m = new(f"{d}/m.part", b"m" * 22)
subprocess.run(["mv", f"{d}/m.part", f"{d}/m"], check=True)
os.write(m, b"M" * 23); os.close(m)
"""


@pytest.fixture(scope="module")
def pre(tmp_path_factory):
    return pre_exec(tmp_path_factory.mktemp("pre"))


def assert_same(ours, theirs, pre):
    diff = differences(ours, theirs, pre)
    assert not diff, sorted(diff.items(), key=str)[:20]
    assert theirs, "strace saw no file calls"


def files_of(report, below, comm="python3"):
    """The rows of comm's files whose path is below the directory `below`."""
    return [f for p in report["processes"] if p["comm"] == comm for f in p["files"]
            if (f["path"] or "").startswith(f"{below}/")]


def traced(cmd, tmp_path, *opts):
    out = tmp_path / "report.json"
    res = run([str(IOTRACE), "--json", *opts, "-o", str(out), "--", *cmd], timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(out.read_text()), res.stdout.decode()


def reused(stdout, n):
    """The workload printed its inode numbers: enough came back for the test to mean it."""
    inos = stdout.split()
    assert len(inos) == n and len(set(inos)) <= n // 2, (len(inos), len(set(inos)))


@pytest.mark.parametrize("n, dirs", [(20, 1), (10000, 1), (10000, 100)],
                         ids=["20-one-dir", "10000-one-dir", "10000-across-dirs"])
def test_reused_inode_numbers_are_new_files(n, dirs, tmp_path):
    top = tmp_path / "reuse"
    report, out = traced([PY, "-c", REUSE, str(top), str(n), str(dirs), "no"], tmp_path,
                         "--files-by", "file")
    reused(out, n)
    rows = files_of(report, top)
    assert report["drops"]["files"] == 0 and report["drops"]["paths"] == 0
    assert len(rows) == n, (len(rows), [f["path"] for f in rows[:5]])
    want = {f"{top}/d{i % dirs}/f{i} (deleted)": i % 100 + 1 for i in range(n)}
    got = {f["path"]: f["io"]["write"]["transferred_bytes"] for f in rows}
    assert got == want
    assert all(f["io"]["write"]["calls"] == f["io"]["openat"]["calls"] == 1 for f in rows)
    assert all(f["io"]["close"]["calls"] == 1 for f in rows)


def test_one_path_made_anew_is_one_row_of_versions(tmp_path):
    """The same path created and deleted 10,000 times: by path one row of 10,000 versions
    (the default), by file 10,000 rows."""
    n, top = 10000, tmp_path / "same"
    total = sum(i % 100 + 1 for i in range(n))
    by_path, out = traced([PY, "-c", REUSE, str(top), str(n), "1", "same"], tmp_path)
    reused(out, n)
    [row] = files_of(by_path, top)
    assert row["path"] == f"{top}/d0/f (deleted)" and row["versions"] == n
    assert (row["io"]["write"]["calls"], row["io"]["write"]["transferred_bytes"]) == (n, total)
    by_file, _ = traced([PY, "-c", REUSE, str(top), str(n), "1", "same"], tmp_path,
                        "--files-by", "file")
    rows = files_of(by_file, top)
    assert len(rows) == n and all("versions" not in f for f in rows)
    assert sorted(f["io"]["write"]["transferred_bytes"] for f in rows) == \
        sorted(i % 100 + 1 for i in range(n))


SAME_GEN = r"""
import fcntl, os, struct, sys
d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
for i in range(n):
    p = f"{d}/g{i}"
    fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)
    fcntl.ioctl(fd, 0x40087602, struct.pack("l", 12345))  # FS_IOC_SETVERSION
    os.close(fd)
    fd = os.open(p, os.O_WRONLY)
    os.write(fd, b"x" * (i + 1)); os.close(fd)
    print(os.stat(p).st_ino)
    os.unlink(p)
"""


def test_number_and_generation_both_reused(tmp_path):
    """ext4's generations are random 32-bit numbers: among 10,000 files that had one inode
    number in turn, two share one in about one run in a hundred. Forced here (the
    generation set with FS_IOC_SETVERSION, then the file written): a row each still."""
    top = tmp_path / "g"
    report, out = traced([PY, "-c", SAME_GEN, str(top), "20"], tmp_path, "--files-by", "file")
    reused(out, 20)
    written = {f["path"]: f["io"]["write"] for f in files_of(report, top) if "write" in f["io"]}
    assert {p: (w["calls"], w["transferred_bytes"]) for p, w in written.items()} == \
        {f"{top}/g{i} (deleted)": (1, i + 1) for i in range(20)}


def test_reuse_against_strace(tmp_path, pre):
    top = tmp_path / "reuse"
    for opts in ((), ("--files-by", "file")):
        shutil.rmtree(top, ignore_errors=True)
        ours, theirs, report = traced_by_both([PY, "-c", REUSE, str(top), "20", "1", "no"],
                                              tmp_path, exact=True, opts=opts)
        assert_same(ours, theirs, pre)
        assert len(files_of(report, top)) == 20


def renamed(rows):
    """{row path: (other names, {name: bytes written under it})} of these file rows."""
    out = {}
    for f in rows:
        by_name = f.get("io_by_name") or {f["path"]: f["io"]}
        out[normal(f["path"])] = (sorted(f.get("other_names", [])),
                                  {n: (io.get("write") or {}).get("transferred_bytes", 0)
                                   for n, io in by_name.items()})
    return out


def assert_renames_followed(got, top):
    """renamed() of KINDS (or workloads/reuse renames) run in directory top."""
    tmp = next(n for n in got[f"{top}/t.final"][0])  # O_TMPFILE's name: "#INODE"
    assert re.fullmatch(rf"{top}/#\d+", tmp), tmp
    assert got == {
        f"{top}/a": ([f"{top}/a.tmp"], {f"{top}/a.tmp": 11, f"{top}/a": 12}),
        f"{top}/y": ([f"{top}/x"], {f"{top}/x": 13, f"{top}/y": 15}),
        f"{top}/x": ([f"{top}/y"], {f"{top}/y": 14, f"{top}/x": 16}),
        # link + unlink: the fd's name stays the unlinked one (as /proc/PID/fd says)
        f"{top}/l.new": ([f"{top}/l.old"], {f"{top}/l.old": 35, f"{top}/l.new": 0}),
        f"{top}/t.final": ([tmp], {tmp: 39, f"{top}/t.final": 0}),
        f"{top}/c.2": ([f"{top}/c.1"], {f"{top}/c.1": 21, f"{top}/c.2": 0}),
        f"{top}/m": ([f"{top}/m.part"], {f"{top}/m.part": 22, f"{top}/m": 23}),
    }


def test_renames_of_every_kind(tmp_path, pre):
    top = tmp_path / "k"
    top.mkdir()
    ours, theirs, report = traced_by_both([PY, "-c", KINDS, str(top)], tmp_path, exact=True)
    assert_same(ours, theirs, pre)
    assert_renames_followed(renamed(files_of(report, top)), top)


def real_program(name, w):
    """A shell command that creates, deletes and renames files in w (the kinds of programs
    the issue names: databases, git, archivers, compilers, editors, package tools)."""
    commit = "git -c user.name=t -c user.email=t@t commit -q"
    return {
        "sqlite3-wal": f"sqlite3 {w}/wal.db 'pragma journal_mode=wal; create table t(a, b);' &&"
                       f" for i in 1 2 3 4 5; do sqlite3 {w}/wal.db \"insert into t values($i,"
                       f" 'x');\"; done && sqlite3 {w}/wal.db 'select count(*) from t'",
        "sqlite3-journal": f"sqlite3 {w}/j.db 'pragma journal_mode=delete; create table t(a);"
                           f"' && for i in 1 2 3 4 5; do sqlite3 {w}/j.db \"insert into t "
                           f"values($i);\"; done && sqlite3 {w}/j.db vacuum",
        "git": f"mkdir {w}/repo && cd {w}/repo && git init -q && for i in 1 2 3; do echo $i > "
               f"f$i; done && git add . && {commit} -m one && echo x >> f1 && {commit} -am "
               f"two && git gc -q && cd .. && git clone -q repo clone",
        "tar-gzip-mv": f"cd {w} && mkdir src && for i in 1 2 3; do head -c 20000 /dev/urandom "
                       f"> src/f$i; done && tar czf out.tgz.tmp src && mv out.tgz.tmp out.tgz "
                       f"&& gzip -c out.tgz > o.gz.tmp && mv o.gz.tmp o.gz && zip -qr z.zip src"
                       f" && echo b > src/b && zip -qr z.zip src",
        "sed-perl-inplace": f"seq 1 1000 > {w}/s && sed -i 's/1/one/' {w}/s && sed -i.bak "
                            f"'s/2/two/' {w}/s && perl -pi -e 's/3/three/' {w}/s",
        "cc": f"cd {w} && printf 'int f(int x){{return x+1;}}\\n' > a.c && cc -c a.c -o a.o && "
              f"cc -O2 -pipe -c a.c -o b.o && ar rcs lib.a a.o && ar rcs lib.a b.o",
        "python-tempfile": f"cd {w} && {PY} -c \"import tempfile, os\nfor i in range(5):\n"
                           f"  f = tempfile.NamedTemporaryFile('w', dir='.', delete=False)\n"
                           f"  f.write('x' * i); f.close(); os.replace(f.name, 'final')\n\"",
        "rsync": f"cd {w} && mkdir rs && for i in 1 2 3; do head -c 5000 /dev/urandom > rs/f$i;"
                 f" done && rsync -a rs/ rs2/ && echo y >> rs/f1 && rsync -a rs/ rs2/",
        "compressors": f"cd {w} && for i in 1 2 3; do seq 1 $((i * 3000)) > c$i; done && gzip "
                       f"c1 && gunzip c1.gz && xz -k c2 && bzip2 c3 && bunzip2 -k c3.bz2 && "
                       f"gzip -f c1",
        "make-compileall": f"cd {w} && printf 'int main(void){{return 0;}}\\n' > m.c && "
                           f"printf 'int g(void){{return 1;}}\\n' > g.c && printf 'p: m.o "
                           f"g.o\\n\\tcc -o p m.o g.o\\n' > Makefile && make -s && mkdir py "
                           f"&& echo 'x = 1' > py/a.py && echo 'y = 2' > py/b.py && {PY} -m "
                           f"compileall -q py && touch py/a.py && {PY} -m compileall -q py",
        "cp-install": f"cd {w} && echo 1 > a && cp --backup=numbered a b && echo 2 > a && "
                      f"cp --backup=numbered a b && install -m 644 a c && install -C -m 644 a "
                      f"c && cp -r . ../copy",
        "dpkg-deb": f"cd {w} && mkdir -p pkg/DEBIAN pkg/usr/share/x && printf 'Package: x\\n"
                    f"Version: 1\\nArchitecture: all\\nMaintainer: a <a@b>\\nDescription: x\\n'"
                    f" > pkg/DEBIAN/control && echo hi > pkg/usr/share/x/a && dpkg-deb -b pkg"
                    f" x.deb > /dev/null && dpkg-deb -x x.deb out",
    }[name]


PROGRAMS = ["sqlite3-wal", "sqlite3-journal", "git", "tar-gzip-mv", "compressors",
            "sed-perl-inplace", "cc", "make-compileall", "python-tempfile", "cp-install",
            "rsync", "dpkg-deb"]
NEEDS = {"rsync": "rsync", "dpkg-deb": "dpkg-deb", "tar-gzip-mv": "zip", "compressors": "xz",
         "make-compileall": "make"}


@pytest.mark.parametrize("name", PROGRAMS)
def test_real_programs_each_call_under_its_name(name, tmp_path, pre):
    if name in NEEDS and not shutil.which(NEEDS[name]):
        pytest.skip(f"{NEEDS[name]} is not installed")
    w = tmp_path / "w"
    w.mkdir()
    ours, theirs, _ = traced_by_both(["/bin/sh", "-c", real_program(name, w)], tmp_path,
                                     exact=True)
    assert_same(ours, theirs, pre)


PIPES = r"""
import os, socket
for i in range(200):
    r, w = os.pipe()
    os.write(w, b"p" * (i + 1)); os.read(r, 1000); os.close(r); os.close(w)
    a, b = socket.socketpair()
    a.send(b"s" * (i + 1)); b.recv(1000); a.close(); b.close()
"""


def test_pipes_and_sockets_made_in_turn(tmp_path):
    """200 pipes and 200 socket pairs made, used and closed in turn: their fds and struct
    files come back, their inode numbers do not (get_next_ino): a row each."""
    report, _ = traced([PY, "-c", PIPES], tmp_path)
    rows = [f for p in report["processes"] if p["comm"] == "python3" for f in p["files"]]
    # (its stdout and stderr are the test's pipes: only seeked)
    pipes = [f["io"] for f in rows if f["kind"] == "pipe" and "read" in f["io"]]
    socks = [f["io"] for f in rows if f["kind"] == "socket"]
    assert sorted(io["write"]["transferred_bytes"] for io in pipes) == list(range(1, 201))
    assert all(io["read"]["calls"] == io["write"]["calls"] == 1 for io in pipes)
    assert all(io["close"]["calls"] == 2 for io in pipes)  # both ends: one pipe
    # send and recv are not counted per file (FILE_OPS): each socket's close is
    assert len(socks) == 400 and all(io["close"]["calls"] == 1 for io in socks)


def test_renamed_after_its_writer_exited(tmp_path):
    """An archive written under a temporary name by one process and renamed by another
    (mv) after the first exited: the writer's row has the final name."""
    report, _ = traced(["/bin/sh", "-c", f"cd {tmp_path} && tar cf a.tar.tmp /etc/hostname "
                        "2>/dev/null && mv a.tar.tmp a.tar"], tmp_path)
    rows = files_of(report, tmp_path, comm="tar")
    assert [(f["path"], f["other_names"]) for f in rows] == \
        [(f"{tmp_path}/a.tar", [f"{tmp_path}/a.tar.tmp"])]
    assert rows[0]["io_by_name"][f"{tmp_path}/a.tar.tmp"]["write"]["calls"] >= 1


CONFIG = r"""
import os, sys
d = sys.argv[1]
for i in range(6):
    fd = os.open(f"{d}/config.lock", os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.write(fd, b"v%d\n" % i); os.close(fd)
    os.rename(f"{d}/config.lock", f"{d}/config")
    fd = os.open(f"{d}/config", os.O_RDONLY); os.read(fd, 100); os.close(fd)
"""


def test_versions_of_a_path(tmp_path):
    """git's config, replaced six times by a renamed lock file: one row "config (6
    versions)" by path, six by file (five deleted), each named config (was config.lock)."""
    d = tmp_path / "g"
    d.mkdir()
    by_path, _ = traced([PY, "-c", CONFIG, str(d)], tmp_path)
    [row] = files_of(by_path, d)
    assert (row["path"], row["versions"], row["other_names"]) == \
        (f"{d}/config", 6, [f"{d}/config.lock"])
    assert row["io_by_name"][f"{d}/config.lock"]["write"]["calls"] == 6
    assert row["io_by_name"][f"{d}/config"]["read"]["calls"] == 6
    by_file, _ = traced([PY, "-c", CONFIG, str(d)], tmp_path, "--files-by", "file")
    rows = files_of(by_file, d)
    assert collections.Counter(f["path"] for f in rows) == \
        {f"{d}/config (deleted)": 5, f"{d}/config": 1}
    assert all(f["other_names"] == [f"{d}/config.lock"] for f in rows)
    text = run([str(IOTRACE), "-H", "--files", "all", "--", PY, "-c", CONFIG, str(d)]).stderr
    assert re.search(r"/config \(6 versions\)", text.decode()), text.decode()[-3000:]


@pytest.fixture
def overlay(tmp_path):
    """An overlayfs (no inode generations: the kernel side counts files per number)."""
    for sub in ("lower", "upper", "work", "merged"):
        (tmp_path / "ov" / sub).mkdir(parents=True)
    ov = tmp_path / "ov"
    res = run(["mount", "-t", "overlay", "overlay", "-o", f"lowerdir={ov}/lower,upperdir="
               f"{ov}/upper,workdir={ov}/work", str(ov / "merged")])
    if res.returncode:
        pytest.skip(f"no overlayfs: {res.stderr.decode().strip()}")
    yield ov / "merged"
    subprocess.run(["umount", str(ov / "merged")], check=False)


def test_overlay_reuse_and_versions(overlay, tmp_path):
    top = overlay / "reuse"
    report, out = traced([PY, "-c", REUSE, str(top), "200", "1", "no"], tmp_path,
                         "--files-by", "file")
    reused(out, 200)
    got = {f["path"]: f["io"]["write"]["transferred_bytes"] for f in files_of(report, top)}
    assert got == {f"{top}/d0/f{i} (deleted)": i % 100 + 1 for i in range(200)}
    (overlay / "g").mkdir()
    by_file, _ = traced([PY, "-c", CONFIG, str(overlay / "g")], tmp_path, "--files-by", "file")
    assert collections.Counter(f["path"] for f in files_of(by_file, overlay / "g")) == \
        {f"{overlay}/g/config (deleted)": 5, f"{overlay}/g/config": 1}
