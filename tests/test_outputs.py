"""Where iotrace writes, and what the command inherits (issue 36): every output checked before
the command runs and never replacing what is not a regular file; every write error one line
and exit 1; every descriptor iotrace opens close-on-exec; a -p target that cannot be traced,
or a command that cannot start, said in one line.

References: the file system before and after (stat, content), /proc/self/fd listed by the
command itself traced and untraced, the exit statuses, and the kernel's own view of a pid.
"""
import json
import os
import shlex
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import IOTRACE, ROOT, assert_no_new_bpf_objects, bpf_object_ids, run, wl

# The command lists its descriptors and where they lead (the listing's own is left out).
LIST_FDS = [sys.executable, "-c",
            "import os, json\n"
            "fds = {}\n"
            "for fd in os.listdir('/proc/self/fd'):\n"
            "    try: fds[int(fd)] = os.readlink(f'/proc/self/fd/{fd}')\n"
            "    except OSError: pass\n"
            "print(json.dumps({k: v for k, v in fds.items() if not v.startswith('/proc/')}))"]


def fds_of(argv, tmp_path, close=(), **kw):
    """The descriptors the fd-listing command had, run by argv (its output to a file)."""
    out = tmp_path / "fds"  # one path for every run: fd 1 leads to it

    def child_setup():
        for fd in close:
            os.close(fd)
    with open(out, "w") as f:
        res = subprocess.run(argv, stdout=f, stderr=subprocess.DEVNULL if 2 not in close
                             else None, stdin=subprocess.DEVNULL, preexec_fn=child_setup,
                             timeout=60, **kw)
    assert res.returncode == 0, argv
    return json.loads(out.read_text())


@pytest.mark.parametrize("close", [(), (2,), (0, 2)], ids=["all", "no-stderr", "no-stdin-stderr"])
def test_command_gets_the_descriptors_it_would_untraced(tmp_path, close):
    """The command's descriptors under iotrace with every output option are those it has
    untraced, also when iotrace itself starts without stderr (or stdin). (Before: -o's file
    was descriptor 3 in the command, writable by it even with -u; with stderr closed the
    report took descriptor 2 and the command's errors went into it.)"""
    untraced = fds_of(LIST_FDS, tmp_path, close)
    traced = fds_of([IOTRACE, "-o", tmp_path / "r.txt", "--trace", tmp_path / "t.json",
                     "--stacks", tmp_path / "s.folded", "--prom-file", tmp_path / "p.prom",
                     "--", *LIST_FDS], tmp_path, close)
    assert traced == untraced
    as_nobody = fds_of([IOTRACE, "-u", "nobody", "-o", tmp_path / "r2.txt", "--", *LIST_FDS],
                       tmp_path, close)
    assert as_nobody == untraced
    assert (tmp_path / "r.txt").read_text().startswith("iotrace: 1 process")


def test_compare_gives_each_variant_only_its_own_descriptors(tmp_path):
    """compare runs each variant with stdin and stdout on /dev/null, and nothing else of its
    own (before: its /dev/null descriptor leaked into every variant)."""
    out = tmp_path / "variant.fds"
    cmd = " ".join(shlex.quote(a) for a in LIST_FDS) + f" > {out}"
    res = run([IOTRACE, "compare", "--json", "-o", tmp_path / "c.json", "--", cmd], timeout=120)
    assert res.returncode == 0, res.stderr
    fds = json.loads(out.read_text())
    assert set(fds) <= {"0", "1", "2"}, fds
    assert fds["0"] == "/dev/null"


WRITERS = [
    (["-o", "/dev/full", "--", "true"], None),
    (["--", "true"], "stderr"),
    (["compare", "-o", "/dev/full", "--", "true"], None),
    (["compare", "--", "true"], "stdout"),
    (["compare", "--json", "--", "true"], "stdout"),
    (["top", "-b", "-n", "2", "-d", "0.3"], "stdout"),
    (["top", "-j", "-n", "1", "-d", "0.3"], "stdout"),
    (["snoop", "0.5"], "stdout"),
    (["snoop", "-j", "0.5"], "stdout"),
    (["info"], "stdout"),
    (["info", "-j"], "stdout"),
    (["fields"], "stdout"),
]


@pytest.mark.parametrize("args,stream", WRITERS, ids=[" ".join(a) for a, _ in WRITERS])
def test_write_errors_are_said_and_fail(args, stream):
    """A full disk under any output: one line that says so, exit 1 (before: exit 0 and no
    message for compare, top -b/-j, snoop, info and fields)."""
    kw = {}
    full = open("/dev/full", "w")
    if stream == "stdout":
        kw["stdout"] = full
    elif stream == "stderr":
        kw["stderr"] = full
    res = subprocess.run([str(IOTRACE), *args], capture_output=not kw, timeout=120,
                         **({"stderr": subprocess.PIPE} if stream == "stdout" else {}), **kw)
    full.close()
    assert res.returncode == 1, (res.returncode, res.stderr)
    if stream != "stderr":  # with stderr full, nothing can be said
        lines = res.stderr.decode().splitlines()
        said = [l for l in lines if "No space left on device" in l]
        assert len(said) == 1 and said[0].startswith("iotrace") and "writing" in said[0], lines


@pytest.mark.parametrize("form", [[], ["--json"]], ids=["text", "json"])
def test_a_report_file_on_a_full_filesystem_fails_with_one_line(tmp_path, form):
    """-o's regular file is written by a thread of its own (user/util/async_write.c): a
    filesystem that fills up in the middle of a report of 300 processes (40 KB of text,
    1.5 MB of JSON; 16 KiB left) still gives one line that says so and exit 1, and the
    file keeps what fit."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], check=True)
    try:
        subprocess.run(["dd", "if=/dev/zero", f"of={mnt}/fill", "bs=16k", "count=3",
                        "status=none"], check=True)
        res = subprocess.run([str(IOTRACE), *form, "-o", str(mnt / "r"), "--", "sh", "-c",
                              "for i in $(seq 300); do /bin/true; done"],
                             capture_output=True, timeout=120)
        size = (mnt / "r").stat().st_size
    finally:
        subprocess.run(["umount", str(mnt)], check=True)
    assert res.returncode == 1, (res.returncode, res.stderr)
    lines = res.stderr.decode().splitlines()
    said = [l for l in lines if "No space left on device" in l]
    assert len(said) == 1 and said[0].startswith("iotrace: writing "), lines
    assert 0 < size <= 16 * 1024


def make_node(path, kind):
    if kind == "char device":
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null of the test's own
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "symlink":
        (path.parent / "target.prom").write_text("# target\n")
        path.symlink_to("target.prom")


@pytest.mark.parametrize("kind", ["char device", "fifo", "directory", "symlink"])
def test_prom_file_never_replaces_what_is_not_a_regular_file(tmp_path, kind):
    """--prom-file replaces the file at its path whole: anything else there is refused in one
    line before the command runs, and left as it was (before: a device node became a 42 KB
    regular file, exit 0; a directory was refused only after the command ran)."""
    path, marker = tmp_path / "x.prom", tmp_path / "ran"
    make_node(path, kind)
    before = os.lstat(path)
    res = run([IOTRACE, "-o", "/dev/null", "--prom-file", path, "--", "touch", marker])
    assert res.returncode == 1
    lines = res.stderr.decode().splitlines()
    assert len(lines) == 1 and "--prom-file" in lines[0] and "regular file" in lines[0], lines
    assert not marker.exists()  # the command never ran
    after = os.lstat(path)
    assert (stat.S_IFMT(after.st_mode), after.st_ino) == (stat.S_IFMT(before.st_mode),
                                                          before.st_ino)


def test_report_file_is_kept_when_the_command_cannot_run(tmp_path):
    """-o FILE -- a command that cannot run: FILE is left as it was (before: emptied), and a
    file iotrace made for the report is removed again."""
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    old.write_text("an earlier report\n")
    for out in (old, new):
        res = run([IOTRACE, "-o", out, "--", "no-such-command-iotrace"])
        assert res.returncode == 127
    assert old.read_text() == "an earlier report\n"
    assert not new.exists()
    res = run([IOTRACE, "-o", old, "--", "true"])
    assert res.returncode == 0 and old.read_text().startswith("iotrace: 1 process")
    # A block device is never a report's output.
    dev = tmp_path / "blk"
    os.mknod(dev, stat.S_IFBLK | 0o600, os.makedev(7, 255))
    res = run([IOTRACE, "-o", dev, "--", "true"])
    assert res.returncode == 1 and b"block device" in res.stderr


def test_dash_is_standard_output(tmp_path):
    """-o - writes the report to standard output (as tar, perf and curl read "-"), after
    what the command wrote there, and makes no file named "-"; ./- is that file."""
    res = subprocess.run([IOTRACE, "--json", "-o", "-", "--", "/bin/echo", "hello"],
                         capture_output=True, cwd=tmp_path, timeout=60)
    assert res.returncode == 0, res.stderr
    first, rest = res.stdout.split(b"\n", 1)
    assert first == b"hello" and json.loads(rest)["command"] == ["/bin/echo", "hello"]
    assert b'"command"' not in res.stderr and not (tmp_path / "-").exists()
    res = subprocess.run([IOTRACE, "-o", "./-", "--", "true"], capture_output=True,
                         cwd=tmp_path, timeout=60)
    assert res.returncode == 0 and (tmp_path / "-").read_text().startswith("iotrace: 1 process")


def test_a_script_without_its_interpreter_says_so(tmp_path):
    script = tmp_path / "script.sh"
    script.write_text("#!/nonexistent/interpreter-iotrace\necho hi\n")
    script.chmod(0o755)
    res = run([IOTRACE, "--", script])
    assert res.returncode == 127
    lines = res.stderr.decode().splitlines()
    assert lines == [f"iotrace: cannot execute {script}: its interpreter "
                     "/nonexistent/interpreter-iotrace: not found"], lines


def test_the_command_line_is_escaped_once(tmp_path):
    """A backslash shows as strace writes it, \\\\ (before: \\\\\\\\, escaped twice)."""
    out = tmp_path / "r.txt"
    res = run([IOTRACE, "-s", "-o", out, "--", "/bin/echo", "back\\slash", "tab\there"])
    assert res.returncode == 0
    (line,) = [l for l in out.read_text().splitlines() if l.startswith("command: ")]
    assert line == "command: /bin/echo back\\\\slash tab\\there", line


def test_numeric_user_is_taken_by_run_mode_as_by_serve(tmp_path):
    res = run([IOTRACE, "-u", "65534", "-o", tmp_path / "r.txt", "--", "id", "-u"])
    assert res.returncode == 0 and res.stdout.strip() == b"65534"


# ---- -p on what cannot be traced ----

def assert_refused(args, words):
    before = bpf_object_ids()
    res = run([IOTRACE, *args], timeout=30)
    assert res.returncode == 1, res.stderr
    lines = res.stderr.decode().splitlines()
    assert len(lines) == 1 and words in lines[0], lines
    assert b"attached" not in res.stderr
    assert_no_new_bpf_objects(before)


def test_pid_that_is_a_zombie_is_refused():
    """(Before: "attached", exit unknown, ≈0 in syscalls, exit 0.)"""
    parent = subprocess.Popen([sys.executable, "-c",
                               "import os, time, sys\n"
                               "pid = os.fork()\n"
                               "if pid == 0: os._exit(0)\n"
                               "print(pid, flush=True); time.sleep(30)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        zombie = int(parent.stdout.readline())
        deadline = time.monotonic() + 10
        while Path(f"/proc/{zombie}/stat").read_text().split(")")[1].split()[0] != "Z":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert_refused(["-p", str(zombie)], "zombie")
    finally:
        parent.kill()
        parent.wait()


def test_pid_of_a_thread_names_its_process():
    """(Before: "no process N: No such file or directory".)"""
    proc = subprocess.Popen([sys.executable, "-c",
                             "import threading, time, os\n"
                             "t = threading.Thread(target=lambda: (print(threading.get_native_id(),"
                             " flush=True), time.sleep(30)))\n"
                             "t.start(); t.join()"], stdout=subprocess.PIPE, text=True)
    try:
        tid = int(proc.stdout.readline())
        assert tid != proc.pid
        assert_refused(["-p", str(tid)], f"thread of process {proc.pid}")
        assert_refused(["snoop", "-p", str(tid)], f"thread of process {proc.pid}")
    finally:
        proc.kill()
        proc.wait()


def test_json_counts_are_their_digits_over_64_bits():
    """The JSON report's counts (json_cells.c, add_u64) against printf's digits, 2^53 + 1 and
    2^64 - 1 included, each read back as a number (tests/c/json_cells_test.c)."""
    res = subprocess.run([ROOT / ".output/tests/json_cells_test"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.strip() == "all passed", res.stdout + res.stderr


def test_json_printer_writes_what_libcjson_would(tmp_path):
    """The report's own printer (json_text.c) against cJSON_Print, byte for byte: trees made
    and random ones (tests/c/json_text_test.c), and the tree of a real report whose files have
    names of every kind of byte (quotes, backslashes, control bytes, invalid UTF-8) and whose
    run files have shares (fractions)."""
    names = ["plain", 'quo"te', "back\\slash", "new\nline", "tab\tctl\x01\x1f", "del\x7f",
             "caf\u00e9", "bad\udcff\udcfe"]
    paths = [tmp_path / n for n in names]
    for p in paths:
        p.write_bytes(b"x" * 100)
    out = tmp_path / "report.json"
    script = "for f in \"$@\"; do cat \"$f\" > /dev/null; done; cat \"$1\" > /dev/null"
    res = run([IOTRACE, "--json", "-o", out, "--", "sh", "-c", script, "sh", *paths])
    assert res.returncode == 0, res.stderr
    text = out.read_bytes()
    assert b"quo\\\"te" in text and b"\\u0001" in text and b'"share"' in text
    res = subprocess.run([ROOT / ".output/tests/json_text_test", out],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "all passed", res.stdout + res.stderr


@pytest.mark.parametrize("cpus", ["0", "0,1"], ids=["one-cpu", "two-cpus"])
def test_json_processes_and_files_stay_in_order_through_the_printer(tmp_path, cpus):
    """The processes and their files, then the run's files, are printed by a thread of their
    own in batches of 256 trees when iotrace may run on two CPUs, in its own thread on one
    (json_print.c): 700 processes, ~16,000 trees, each process's files under it, each
    /bin/echo with the same files as the others and one of its own (its stdout), and each
    of those once among the run's files."""
    if len(os.sched_getaffinity(0)) < 2 and cpus != "0":
        pytest.skip("one CPU here")
    out, own = tmp_path / "r.json", tmp_path / "own"
    own.mkdir()
    res = subprocess.run(["taskset", "-c", cpus, str(IOTRACE), "--json", "-o", str(out), "--",
                          "sh", "-c", f"for i in $(seq 700); do /bin/echo > {own}/$i; done"],
                         capture_output=True, timeout=300)
    assert res.returncode == 0, res.stderr
    report = json.loads(out.read_text())
    procs = report["processes"]
    assert [p["comm"] for p in procs] == ["sh", "seq"] + ["echo"] * 700 + ["(other I/O)"]
    mine = {p["pid"]: [f["path"] for f in p["files"] if f["path"].startswith(f"{own}/")]
            for p in procs[2:-1]}
    assert all(len(m) == 1 for m in mine.values()), mine
    assert sorted(m[0] for m in mine.values()) == sorted(f"{own}/{i}" for i in range(1, 701))
    paths = {tuple(sorted(f["path"] for f in p["files"] if not f["path"].startswith(f"{own}/")))
             for p in procs[2:-1]}
    assert len(paths) == 1 and "/usr/bin/echo" in next(iter(paths)), paths
    run_files = [f["path"] for f in report["totals"]["files"]]
    assert len(run_files) == len(set(run_files))
    assert {f"{own}/{i}" for i in range(1, 701)} <= set(run_files)
    users = {f["path"]: [u["pid"] for u in f["processes"]] for f in report["totals"]["files"]}
    # the shell opened each for its child: both used it
    assert all(sorted(users[m[0]]) == sorted([procs[0]["pid"], pid]) for pid, m in mine.items())
    assert all(f["path"] != "/usr/bin/true" for f in procs[0]["files"])
