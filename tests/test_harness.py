"""The harness's own guards (helpers.py, conftest.py): every iotrace a test starts runs under
a data cap, and one left running after its test is killed and fails that test. Once, an
iotrace left behind by a test traced a shell's endless loop of `head` through the rest of
the suite and grew to 22.9 GB before the OOM killer took it."""
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from helpers import IOTRACE, IOTRACE_DATA_LIMIT, MIB, iotrace_processes, kill_tree, run

# bytearray(n) takes its zeroed memory from calloc (fresh mappings: untouched, so the
# allocation that succeeds costs no RAM); past the cap, Python raises MemoryError.
GRAB = "import sys; bytearray(int(sys.argv[1])); print('allocated')"


def limit_of(pid, name):
    """A soft limit of pid from /proc/PID/limits ("Max data size"...; None: unlimited)."""
    for line in open(f"/proc/{pid}/limits"):
        if line.startswith(name):
            soft = line[len(name):].split()[0]
            return None if soft == "unlimited" else int(soft)
    raise AssertionError(f"no {name} in /proc/{pid}/limits")


def test_iotrace_and_its_command_run_under_the_data_cap():
    """A command under iotrace (it inherits iotrace's limits) cannot allocate past the cap,
    and can allocate what legitimate runs need."""
    over = run([IOTRACE, "-o", "/dev/null", "--", sys.executable, "-c", GRAB,
                str(IOTRACE_DATA_LIMIT + 256 * MIB)])
    assert over.returncode == 1 and b"MemoryError" in over.stderr, over.stderr[-2000:]
    under = run([IOTRACE, "-o", "/dev/null", "--", sys.executable, "-c", GRAB,
                 str(IOTRACE_DATA_LIMIT // 2)])
    assert under.returncode == 0 and under.stdout == b"allocated\n", under.stderr[-2000:]


def set_msgqueue_limit():
    hard = resource.getrlimit(resource.RLIMIT_MSGQUEUE)[1]
    resource.setrlimit(resource.RLIMIT_MSGQUEUE, (12345, hard))


def started(argv, **kw):
    """Starts argv, waits until iotrace runs (a wrapper execs it), returns its limits."""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    try:
        deadline = time.monotonic() + 10
        while os.readlink(f"/proc/{p.pid}/exe") != os.path.realpath(IOTRACE):
            assert time.monotonic() < deadline, f"{argv[0]} did not exec iotrace"
            time.sleep(0.02)
        return limit_of(p.pid, "Max data size"), limit_of(p.pid, "Max msgqueue size")
    finally:
        kill_tree(p.pid)
        p.wait()


def test_a_started_iotrace_has_the_cap_however_started():
    """Through Popen with a preexec_fn of the test's own (which still runs), and through a
    wrapper that execs it."""
    sleeper = ["-o", "/dev/null", "--", "sleep", "30"]
    assert started([IOTRACE, *sleeper], preexec_fn=set_msgqueue_limit) == (
        IOTRACE_DATA_LIMIT, 12345)
    assert started(["taskset", "-c", "0", str(IOTRACE), *sleeper])[0] == IOTRACE_DATA_LIMIT


LEAKY = '''
import subprocess
from helpers import IOTRACE

def test_leaves_iotrace_running(tmp_path):
    subprocess.Popen([str(IOTRACE), "-o", "/dev/null", "--", "sh", "-c",
                      "while :; do sleep 0.1; done"], stderr=subprocess.DEVNULL)
'''


def test_an_iotrace_left_running_is_killed_and_fails_its_test(tmp_path):
    """A test that leaves iotrace tracing an endless command fails, and neither iotrace nor
    its command survives it."""
    (tmp_path / "test_leaky.py").write_text(LEAKY)
    before = iotrace_processes()
    res = run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "conftest",
               "-q", "--rootdir", tmp_path, tmp_path / "test_leaky.py"], cwd=tmp_path,
              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent)}, timeout=120)
    # Found by their command line and their directory (the inner session's).
    left = pids_running("while :; do sleep 0.1; done", tmp_path)
    for pid in left:
        kill_tree(pid)
    out = res.stdout.decode(errors="replace")
    assert res.returncode == 1 and "iotrace left running after the test (killed)" in out, out
    assert not left, f"still running after the session: {left}"
    assert iotrace_processes().keys() <= before.keys()


def pids_running(command, cwd):
    """Pids in directory cwd whose command line holds `command`."""
    pids = []
    for proc in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = open(f"/proc/{proc}/cmdline", "rb").read().replace(b"\0", b" ")
            here = os.readlink(f"/proc/{proc}/cwd")
        except OSError:
            continue
        if command.encode() in argv and here == str(cwd):
            pids.append(int(proc))
    return pids
