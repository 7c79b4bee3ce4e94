"""Tests for the small C workload programs in workloads/.

Each program is checked against an independent reference: coreutils tr, the input file
itself, a Python simulation of the buffer algorithm, or counts of system calls taken from
strace. Inputs are made in pytest's tmp_path with ./workloads/mkinput.

strace makes every traced system call cost tens of microseconds, so the traced runs use
small inputs; the untraced ones may be larger.
"""
import math
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from helpers import *  # noqa: F401,F403 (run, mkinput, strace_c, ... shared with other tests)

PROGRAMS = ["tr2u", "tr2b", "copy", "timewrite", "read-file", "readall", "mkinput"]


# ---------------------------------------------------------------------------------------
# Style


def test_source_style():
    sources = sorted(WORKLOADS.glob("*.c")) + sorted(WORKLOADS.glob("*.h"))
    assert {p.stem for p in WORKLOADS.glob("*.c")} >= set(PROGRAMS)
    for path in sources:
        text = path.read_text()
        assert text.startswith("/*\n * "), f"{path.name}: no header comment"
        for no, line in enumerate(text.splitlines(), 1):
            assert len(line.expandtabs(8)) <= 100, f"{path.name}:{no} is too long"
            assert line == line.rstrip(), f"{path.name}:{no} has trailing blanks"
            assert not line.startswith("    "), f"{path.name}:{no} indents with spaces"


# ---------------------------------------------------------------------------------------
# The strace -c parser itself, on the table printed in the copy lab notes (seed 000)

SEED_TABLE = """\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 57.72    0.000991           8       123           write
 19.28    0.000331           5        65           read
  2.27    0.000039          13         3         3 access
  1.34    0.000023          23         1           munmap
------ ----------- ----------- --------- --------- ----------------
100.00    0.001717                   219         3 total
"""


def test_parse_strace_c():
    t = parse_strace_c(SEED_TABLE)
    assert t == {"write": (123, 0), "read": (65, 0), "access": (3, 3), "munmap": (1, 0),
                 "total": (219, 3)}
    with pytest.raises(ValueError):
        parse_strace_c("read 1\n")


# ---------------------------------------------------------------------------------------
# mkinput


@pytest.mark.parametrize("size,expect", [("0", 0), ("1", 1), ("4095", 4095), ("1k", 1024),
                                         ("3K", 3072), ("2m", 2 * MIB), ("1M", MIB)])
def test_mkinput_size_default_byte(size, expect, tmp_path):
    f = mkinput(tmp_path / "f", size)
    data = f.read_bytes()
    assert len(data) == expect
    assert data == b"1" * expect


def test_mkinput_char_and_random(tmp_path):
    data = mkinput(tmp_path / "c", 3 * MIB + 5, "-c", "Z").read_bytes()
    assert data == b"Z" * (3 * MIB + 5)
    a = mkinput(tmp_path / "r1", MIB + 7, "-r").read_bytes()
    b = mkinput(tmp_path / "r2", MIB + 7, "-r").read_bytes()
    assert len(a) == len(b) == MIB + 7
    assert a != b
    # 1 MiB of random bytes uses every byte value.
    assert len(set(a)) == 256


def test_mkinput_truncates(tmp_path):
    f = mkinput(tmp_path / "f", "10k", "-r")
    mkinput(f, 3, "-c", "q")
    assert f.read_bytes() == b"qqq"
    assert (f.stat().st_mode & 0o777) == 0o644 & ~_umask()


def _umask():
    old = os.umask(0)
    os.umask(old)
    return old


@pytest.mark.parametrize("args", [
    [], ["1k"], ["1k", "f", "g"], ["", "f"], ["-1", "f"], ["1x", "f"], ["1kk", "f"],
    ["k", "f"], [" 5", "f"], ["0x10", "f"], ["18446744073709551616", "f"],
    ["9999999999g", "f"], ["-r", "-c", "a", "1", "f"], ["-c", "ab", "1", "f"],
    ["-c", "", "1", "f"], ["-q", "1", "f"],
])
def test_mkinput_rejects(args, tmp_path):
    res = run([wl("mkinput"), *args], cwd=tmp_path)
    assert_usage_error(res)
    assert not (tmp_path / "f").exists()


# ---------------------------------------------------------------------------------------
# tr2u / tr2b

TR_CASES = [
    (b"1", b"a"),
    (b"abc123xyz", b"XYZ!@#uvw"),
    # Bytes >= 0x80 catch a map indexed with a signed char.
    (b"\x80\xff\x01a", b"\x7fyx\xfe"),
]


@pytest.fixture(scope="module")
def tr_inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("tr")
    return {
        "random": mkinput(d / "random", "64k", "-r"),
        "ones": mkinput(d / "ones", 500001),
    }


@pytest.mark.parametrize("prog", ["tr2u", "tr2b"])
@pytest.mark.parametrize("kind", ["random", "ones"])
@pytest.mark.parametrize("from_,to", TR_CASES)
def test_tr_matches_coreutils(prog, kind, from_, to, tr_inputs):
    src = tr_inputs[kind]
    ref = run_stdin(["tr", from_, to], src, env={**os.environ, "LC_ALL": "C"})
    assert ref.returncode == 0, ref.stderr
    got = run_stdin([wl(prog), from_, to], src)
    assert got.returncode == 0, got.stderr
    assert got.stderr == b""
    assert got.stdout == ref.stdout
    assert len(got.stdout) == src.stat().st_size


@pytest.mark.parametrize("prog", ["tr2u", "tr2b"])
@pytest.mark.parametrize("args", [["ab", "c"], ["a", "bc"], ["aa", "bc"], ["abca", "wxyz"],
                                  ["", ""], ["a"], [], ["a", "b", "c"]])
def test_tr_rejects_bad_args(prog, args, tmp_path):
    res = run([wl(prog), *args], input=b"abc")
    assert_usage_error(res)
    assert res.stdout == b""


def test_tr2u_syscall_counts(tmp_path):
    n = 5000
    src = mkinput(tmp_path / "in", n, "-r")
    empty = mkinput(tmp_path / "empty", 0)
    base, _ = strace_c([wl("tr2u"), "a", "b"], tmp_path, empty, stdout=subprocess.DEVNULL)
    counts, _ = strace_c([wl("tr2u"), "a", "b"], tmp_path, src, stdout=subprocess.DEVNULL)
    # On empty input the program itself makes exactly one read (EOF) and no writes; the
    # rest of the baseline's reads are the dynamic loader's.
    assert base.get("write", 0) == 0
    loader_reads = base["read"] - 1
    assert counts["write"] == n
    assert counts["read"] - loader_reads == n + 1

    # The same, counted per file: every read is on stdin and every write on stdout.
    out = tmp_path / "out"
    with open(out, "wb") as f:
        by, res = strace_by_path([wl("tr2u"), "a", "b"], tmp_path, ["read", "write"], src,
                                 stdout=f)
    assert res.returncode == 0
    assert by[("read", real(src))] == n + 1
    assert by[("write", real(out))] == n
    assert sum(v for (call, _), v in by.items() if call == "write") == n


def test_tr2b_syscall_counts(tmp_path):
    n = 500001
    src = mkinput(tmp_path / "in", n)
    out = tmp_path / "out"
    with open(out, "wb") as f:
        counts, _ = strace_c([wl("tr2b"), "1", "a"], tmp_path, src, stdout=f)
    assert out.read_bytes() == b"a" * n
    assert counts["read"] <= n // 1000 + 10
    assert counts["write"] <= n // 1000 + 10
    # Buffered, but still more than one call: the data really went through read/write.
    assert counts["read"] >= n // 65536
    assert counts["write"] >= n // 65536


# ---------------------------------------------------------------------------------------
# copy

TIME_LINE = re.compile(rb"^\d+\.\d{9} sec\n$")


@pytest.fixture(scope="module")
def copy_src(tmp_path_factory):
    return mkinput(tmp_path_factory.mktemp("copy") / "src", 100 * 1024 + 3, "-r")


@pytest.mark.parametrize("mode", ["rw", "stdio", "stdio-unbuf"])
@pytest.mark.parametrize("bufsize", ["1", "7", "8192", "65536"])
def test_copy_identical(mode, bufsize, copy_src, tmp_path):
    dst = tmp_path / "dst"
    dst.write_bytes(b"x" * 300000)  # must be truncated, not overwritten in place
    res = run([wl("copy"), "-m", mode, "-b", bufsize, copy_src, dst])
    assert res.returncode == 0, res.stderr
    assert TIME_LINE.match(res.stdout), res.stdout
    assert res.stderr == b""
    assert dst.read_bytes() == copy_src.read_bytes()


def test_copy_defaults_and_mode(copy_src, tmp_path):
    dst = tmp_path / "new"
    res = run([wl("copy"), copy_src, dst])
    assert res.returncode == 0, res.stderr
    assert TIME_LINE.match(res.stdout)
    assert dst.read_bytes() == copy_src.read_bytes()
    assert (dst.stat().st_mode & 0o777) == 0o644 & ~_umask()


@pytest.mark.parametrize("size,bufsize", [(100 * 1024 + 3, "4096"), (65536, "64k"),
                                          (65536, "8192"), (0, "8192"), (3001, "1"),
                                          (10000, "7"), (5, "1m")])
def test_copy_rw_syscall_counts(size, bufsize, tmp_path):
    src = mkinput(tmp_path / "src", size, "-r")
    dst = tmp_path / "dst"
    b = {"64k": 65536, "1m": MIB}.get(bufsize) or int(bufsize)
    chunks = math.ceil(size / b)
    by, res = strace_by_path([wl("copy"), "-m", "rw", "-b", bufsize, src, dst], tmp_path,
                             ["read", "write"])
    assert res.returncode == 0, res.stderr
    assert by.get(("read", real(src)), 0) == chunks + 1
    assert by.get(("write", real(dst)), 0) == chunks
    assert by.get(("read", real(dst)), 0) == 0
    assert dst.read_bytes() == src.read_bytes()


def test_copy_stdio_syscall_counts(tmp_path):
    size = 3001
    src = mkinput(tmp_path / "src", size, "-r")
    dst = tmp_path / "dst"
    # Unbuffered streams: each fread/fwrite becomes one read/write, as in the lab note.
    by, res = strace_by_path([wl("copy"), "-m", "stdio-unbuf", "-b", "7", src, dst],
                             tmp_path, ["read", "write"])
    assert res.returncode == 0, res.stderr
    assert by[("write", real(dst))] == math.ceil(size / 7)
    assert by[("read", real(src))] == math.ceil(size / 7) + 1
    # Buffered streams: glibc reads and writes whole stream buffers, not 1-byte chunks.
    by, res = strace_by_path([wl("copy"), "-m", "stdio", "-b", "1", src, dst], tmp_path,
                             ["read", "write"])
    assert res.returncode == 0, res.stderr
    assert by[("read", real(src))] <= size // 1024 + 2
    assert by[("write", real(dst))] <= size // 1024 + 2
    assert dst.read_bytes() == src.read_bytes()


@pytest.mark.parametrize("args", [[], ["a"], ["a", "b", "c"], ["-b", "0", "a", "b"],
                                  ["-b", "x", "a", "b"], ["-b", "-5", "a", "b"],
                                  ["-b", "99999999999999999999", "a", "b"],
                                  ["-m", "mmap", "a", "b"], ["-z", "a", "b"]])
def test_copy_rejects_bad_args(args, tmp_path):
    res = run([wl("copy"), *args], cwd=tmp_path)
    assert_usage_error(res)
    assert not (tmp_path / "b").exists()


def test_copy_runtime_errors(copy_src, tmp_path):
    res = run([wl("copy"), tmp_path / "missing", tmp_path / "dst"])
    assert_runtime_error(res, "copy")
    assert b"No such file or directory" in res.stderr
    assert not (tmp_path / "dst").exists()
    # Copying a file onto itself must not truncate it.
    f = mkinput(tmp_path / "self", 1000, "-r")
    before = f.read_bytes()
    res = run([wl("copy"), f, f])
    assert res.returncode == 1
    assert f.read_bytes() == before
    res = run([wl("copy"), copy_src, tmp_path / "nodir" / "dst"])
    assert_runtime_error(res, "copy")


# ---------------------------------------------------------------------------------------
# timewrite

BUFFSIZES = [256 << i for i in range(10)]


def parse_timewrite(stdout):
    rows = []
    for line in stdout.decode().splitlines():
        fields = line.split("\t")
        assert len(fields) == 5, line
        for t in fields[1:4]:
            assert re.fullmatch(r" *\d+\.\d{4}", t) and len(t) >= 7, line
            assert float(t) >= 0
        rows.append((int(fields[0]), int(fields[4])))
    return rows


# Lengths with and without remainders: MIB + 777 leaves one for every BUFFSIZE, 20480 for
# some, and MIB (the O_SYNC case, kept small so it stays quick) for none.
@pytest.mark.parametrize("sync,length", [(False, MIB + 777), (False, 20480), (True, MIB)])
def test_timewrite_rows_and_output(sync, length, tmp_path):
    src = mkinput(tmp_path / "in", length, "-r")
    out = tmp_path / "out"
    out.write_bytes(b"z" * (2 * MIB))  # O_TRUNC must drop the old tail
    res = run_stdin([wl("timewrite"), out] + (["sync"] if sync else []), src)
    assert res.returncode == 0, res.stderr
    rows = parse_timewrite(res.stdout)
    assert rows == [(b, math.ceil(length / b)) for b in BUFFSIZES]
    assert out.read_bytes() == src.read_bytes()


def test_timewrite_syscall_counts(tmp_path):
    length = 200 * 1024  # a multiple of 256..8192 but not of 16384..131072
    src = mkinput(tmp_path / "in", length, "-r")
    out = tmp_path / "out"
    by, res = strace_by_path([wl("timewrite"), out], tmp_path, ["read", "write", "lseek"],
                             src)
    assert res.returncode == 0, res.stderr
    rows = parse_timewrite(res.stdout)
    assert by[("write", real(out))] == sum(loops for _, loops in rows)
    assert by[("write", real(out))] == sum(math.ceil(length / b) for b in BUFFSIZES)
    assert by[("lseek", real(out))] == 10
    # Input: one read for the whole regular file; two lseeks (end, then start).
    assert by[("read", real(src))] == 1
    assert by[("lseek", real(src))] == 2


def test_timewrite_fork_rows(tmp_path):
    """-f: the same rows and output, each row's writes made by its own child process."""
    length = 20000
    src = mkinput(tmp_path / "in", length, "-r")
    out = tmp_path / "out"
    by, res = strace_by_path([wl("timewrite"), "-f", out, "sync"], tmp_path, ["write"], src)
    assert res.returncode == 0, res.stderr
    assert parse_timewrite(res.stdout) == [(b, math.ceil(length / b)) for b in BUFFSIZES]
    assert out.read_bytes() == src.read_bytes()
    writers = {}
    for line in res.trace.splitlines():
        m = re.match(r"^(\d+) +write\((\d+)<([^>]*)>", line)
        if m and m[3] == real(out):
            writers[m[1]] = writers.get(m[1], 0) + 1
    # One process per row; in row order the pids grow (each child exits before the next).
    counts = [writers[pid] for pid in sorted(writers, key=int)]
    assert counts == [math.ceil(length / b) for b in BUFFSIZES]


@pytest.mark.parametrize("sync", [False, True])
def test_timewrite_open_flags(sync, tmp_path):
    src = mkinput(tmp_path / "in", 4096, "-r")
    out = tmp_path / "out"
    _, res = strace_by_path([wl("timewrite"), out] + (["sync"] if sync else []), tmp_path,
                            ["openat"], src)
    assert res.returncode == 0, res.stderr
    opens = [l for l in res.trace.splitlines() if f'"{out}"' in l]
    assert len(opens) == 1, opens
    flags = re.search(r'", ([A-Z_|]+), 0644\)', opens[0])[1].split("|")
    assert set(flags) == {"O_RDWR", "O_CREAT", "O_TRUNC"} | ({"O_SYNC"} if sync else set())


def test_timewrite_empty_input(tmp_path):
    src = mkinput(tmp_path / "in", 0)
    res = run_stdin([wl("timewrite"), tmp_path / "out"], src)
    assert res.returncode == 0, res.stderr
    assert parse_timewrite(res.stdout) == [(b, 0) for b in BUFFSIZES]
    assert (tmp_path / "out").read_bytes() == b""


@pytest.mark.parametrize("args", [[], ["out", "nosync"], ["out", "sync", "x"],
                                  ["out", "SYNC"], ["-x", "out"], ["-f"]])
def test_timewrite_rejects_bad_args(args, tmp_path):
    src = mkinput(tmp_path / "in", 10)
    res = run_stdin([wl("timewrite"), *args], src, cwd=tmp_path)
    assert_usage_error(res)
    assert res.stdout == b""
    assert not (tmp_path / "out").exists()


def test_timewrite_runtime_errors(tmp_path):
    # A pipe cannot be measured with lseek.
    res = run([wl("timewrite"), tmp_path / "out"], input=b"abc")
    assert_runtime_error(res, "timewrite")
    assert b"lseek" in res.stderr
    src = mkinput(tmp_path / "in", 10)
    res = run_stdin([wl("timewrite"), tmp_path / "nodir" / "out"], src)
    assert_runtime_error(res, "timewrite")


# ---------------------------------------------------------------------------------------
# read-file

RF_LINE = re.compile(r"^(\d+\.\d{3}) MB/s (\d+) bytes (\d+\.\d{6}) sec (.+)$")


def parse_read_file(stdout):
    """{path: bytes}, checking that MB/s is bytes / 2**20 / sec as printed."""
    result = {}
    for line in stdout.decode().splitlines():
        m = RF_LINE.match(line)
        assert m, line
        rate, nbytes, sec, path = float(m[1]), int(m[2]), float(m[3]), m[4]
        if sec > 0:
            # sec is rounded to 1 us and the rate to 0.001: allow exactly that much.
            lo = nbytes / MIB / (sec + 5e-7) - 5e-4
            hi = nbytes / MIB / max(sec - 5e-7, 1e-9) + 5e-4
            assert lo <= rate <= hi, line
        result[path] = nbytes
    return result


def test_read_file_limit(tmp_path):
    f = mkinput(tmp_path / "f", 3 * MIB, "-r")
    res = run([wl("read-file"), "-n", "1m", f])
    assert res.returncode == 0, res.stderr
    assert parse_read_file(res.stdout) == {str(f): MIB}
    # A limit that is not a multiple of the buffer size is honoured exactly.
    res = run([wl("read-file"), "-b", "4k", "-n", "10000", f])
    assert res.returncode == 0, res.stderr
    assert parse_read_file(res.stdout) == {str(f): 10000}


def test_read_file_whole_files(tmp_path):
    a = mkinput(tmp_path / "a", MIB + 12345, "-r")
    b = mkinput(tmp_path / "b", 777, "-c", "b")
    e = mkinput(tmp_path / "e", 0)
    res = run([wl("read-file"), a, b, e])
    assert res.returncode == 0, res.stderr
    assert parse_read_file(res.stdout) == {str(a): MIB + 12345, str(b): 777, str(e): 0}
    # A limit beyond the end of the file stops at EOF; g is a valid suffix.
    res = run([wl("read-file"), "-n", "1g", b])
    assert res.returncode == 0, res.stderr
    assert parse_read_file(res.stdout) == {str(b): 777}


@pytest.mark.parametrize("opts", [["-s"], ["-r"], ["-D"], ["-D", "-s", "-b", "1"],
                                  ["-r", "-b", "1m"]])
def test_read_file_options(opts, tmp_path):
    f = mkinput(tmp_path / "f", 256 * 1024 + 1, "-r")
    res = run([wl("read-file"), *opts, f])
    assert res.returncode == 0, res.stderr
    assert parse_read_file(res.stdout) == {str(f): 256 * 1024 + 1}


def _read_file_direct(directory):
    f = mkinput(Path(directory) / "direct", MIB + 100, "-r")
    return f, run([wl("read-file"), "-i", "-b", "64k", f])


def test_read_file_o_direct(tmp_path):
    f, res = _read_file_direct(tmp_path)
    if res.returncode != 0 and b"Invalid argument" in res.stderr:
        # tmp_path's file system refuses O_DIRECT (tmpfs); / is ext4 here.
        d = tempfile.mkdtemp(dir="/var/tmp")
        try:
            f, res = _read_file_direct(d)
        finally:
            shutil.rmtree(d)
    assert res.returncode == 0, res.stderr
    assert parse_read_file(res.stdout) == {str(f): MIB + 100}


def test_read_file_o_direct_syscalls(tmp_path):
    f = mkinput(tmp_path / "f", 256 * 1024, "-r")
    by, res = strace_by_path([wl("read-file"), "-i", "-n", "128k", "-b", "32k", f],
                             tmp_path, ["openat", "read"])
    if res.returncode != 0 and b"Invalid argument" in res.stderr:
        pytest.skip("tmp_path does not support O_DIRECT")
    assert res.returncode == 0, res.stderr
    assert by[("read", real(f))] == 4
    # One open to drop the cache, then the one that reads, with O_DIRECT.
    opens = [l for l in res.trace.splitlines() if "openat(" in l and f'"{f}"' in l]
    assert len(opens) == 2, opens
    assert "O_DIRECT" not in opens[0] and "O_DIRECT" in opens[1], opens


def test_read_file_timestamps(tmp_path):
    a = mkinput(tmp_path / "a", 200 * 1024 + 1, "-r")
    b = mkinput(tmp_path / "b", 4096, "-r")
    proc = subprocess.Popen([wl("read-file"), "-t", "-b", "64k", a, b], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=limit_file_size)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert parse_read_file(out) == {str(a): 200 * 1024 + 1, str(b): 4096}
    names = sorted(p.name for p in tmp_path.glob("time.*"))
    assert names == [f"time.{proc.pid}.0", f"time.{proc.pid}.1"]
    for num, size in [(0, 200 * 1024 + 1), (1, 4096)]:
        lines = (tmp_path / f"time.{proc.pid}.{num}").read_text().splitlines()
        stamps = [(float(s), int(n)) for s, n in (l.split() for l in lines)]
        # One line per read(): the full chunks, the tail, and the read that saw EOF.
        assert len(stamps) == math.ceil(size / 65536) + 1
        assert stamps[-1][1] == size and stamps[-2][1] == size
        assert [n for _, n in stamps[:-1]] == [min(size, (i + 1) * 65536)
                                               for i in range(len(stamps) - 1)]
        times = [t for t, _ in stamps]
        assert times == sorted(times) and times[0] >= 0


def test_read_file_syscalls(tmp_path):
    f = mkinput(tmp_path / "f", MIB + 1, "-r")
    by, res = strace_by_path([wl("read-file"), "-n", "1m", "-b", "64k", f], tmp_path,
                             ["read"])
    assert res.returncode == 0, res.stderr
    assert by[("read", real(f))] == 16
    by, res = strace_by_path([wl("read-file"), "-b", "64k", f], tmp_path, ["read"])
    assert res.returncode == 0, res.stderr
    assert by[("read", real(f))] == 17 + 1  # 16 full, the 1-byte tail, EOF


@pytest.mark.parametrize("opts,advice", [([], ["POSIX_FADV_DONTNEED"]), (["-D"], []),
                                         (["-s"], ["POSIX_FADV_DONTNEED",
                                                   "POSIX_FADV_SEQUENTIAL"]),
                                         (["-D", "-r"], ["POSIX_FADV_RANDOM"])])
def test_read_file_fadvise(opts, advice, tmp_path):
    f = mkinput(tmp_path / "f", 8192, "-r")
    trace = tmp_path / "trace"
    res = run(["strace", "-f", "-y", "-e", "trace=fadvise64", "-o", trace,
               wl("read-file"), *opts, f])
    assert res.returncode == 0, res.stderr
    calls = re.findall(r"fadvise64\(\d+<([^>]*)>, 0, 0, (\w+)\) = 0",
                       trace.read_text())
    assert calls == [(real(f), a) for a in advice]


@pytest.mark.parametrize("args", [
    [], ["-b", "0"], ["-n", "0"], ["-n", "-1"], ["-b", "-1"], ["-n", "1x"], ["-b", "1.5k"],
    ["-n", "99999999999999999999"], ["-n", "9999999999g"], ["-b", "k"], ["-s", "-r"],
    ["-i", "-b", "1000"], ["-i", "-b", "6k"], ["-i", "-n", "5000"], ["-x"],
])
def test_read_file_rejects_bad_args(args, tmp_path):
    f = mkinput(tmp_path / "f", 4096)
    res = run([wl("read-file"), *args] + ([f] if args else []))
    assert_usage_error(res)
    assert res.stdout == b""


def test_read_file_missing_file(tmp_path):
    f = mkinput(tmp_path / "f", 5000)
    res = run([wl("read-file"), tmp_path / "missing", f])
    assert_runtime_error(res, "read-file")
    assert parse_read_file(res.stdout) == {str(f): 5000}


# ---------------------------------------------------------------------------------------
# readall

RA_LINE = re.compile(r"^mode=(grow|stat) reads=(\d+) allocated=(\d+) bytes=(\d+) "
                     r"sec=\d+\.\d+$")


def simulate_readall(size, mode):
    """Reads and allocated bytes for reading a regular file of `size` bytes.

    A regular file's read() fills all the free space it is given until EOF, so the
    sequence is fully determined by the size: start with 512 bytes (grow) or size + 1
    (stat), double whenever the buffer is full before the next read, stop at a read of 0.
    """
    cap = 512 if mode == "grow" else size + 1
    allocated, length, reads = cap, 0, 0
    while True:
        if length == cap:
            cap *= 2
            allocated += cap
        n = min(cap - length, size - length)
        reads += 1
        if n == 0:
            return reads, allocated
        length += n


def test_simulate_readall():
    # Worked by hand: 512 bytes fill the first buffer; the EOF read needs a 1024 one.
    assert simulate_readall(512, "grow") == (2, 512 + 1024)
    assert simulate_readall(0, "grow") == (1, 512)
    assert simulate_readall(513, "grow") == (3, 512 + 1024)
    assert simulate_readall(100, "stat") == (2, 101)


@pytest.mark.parametrize("mode", ["grow", "stat"])
@pytest.mark.parametrize("size", [0, 1, 511, 512, 513, 1024, 4097, 100000, MIB, 3 * MIB + 7])
def test_readall(mode, size, tmp_path):
    f = mkinput(tmp_path / "f", size, "-r")
    exp_reads, exp_alloc = simulate_readall(size, mode)
    if mode == "stat":
        assert exp_reads == (2 if size else 1)
    args = [wl("readall"), "-m", mode, f]
    # grow is also the default mode.
    for cmd in [args] + ([[wl("readall"), f]] if mode == "grow" else []):
        res = run(cmd)
        assert res.returncode == 0, res.stderr
        m = RA_LINE.match(res.stdout.decode().rstrip("\n"))
        assert m, res.stdout
        assert (m[1], int(m[2]), int(m[3]), int(m[4])) == (mode, exp_reads, exp_alloc, size)
    by, res = strace_by_path(args, tmp_path, ["read"])
    assert res.returncode == 0
    assert by[("read", real(f))] == exp_reads


@pytest.mark.parametrize("args", [[], ["-m", "mmap", "f"], ["-m"], ["f", "g"], ["-x", "f"]])
def test_readall_rejects_bad_args(args, tmp_path):
    mkinput(tmp_path / "f", 10)
    res = run([wl("readall"), *args], cwd=tmp_path)
    assert_usage_error(res)
    assert res.stdout == b""


def test_readall_missing_file(tmp_path):
    res = run([wl("readall"), tmp_path / "missing"])
    assert_runtime_error(res, "readall")
