"""io_uring: requests per opcode and on their file, against what the workload says it issued,
fio's own JSON (total_ios, io_bytes), strace -f -c in the same run (io_uring_enter), promtool,
run mode for serve's families, and the hooks switched off."""
import ctypes
import json
import os
import subprocess
from pathlib import Path

import pytest

from helpers import IOTRACE, iotrace_json, mkinput, parse_strace_c, real_processes, run, wl
from test_prom import Serve, in_cgroup, one, parse, promtool_check, select
from test_prom import test_cgroup  # noqa: F401 (a fixture)

KIB = 1024
SYS_PIDFD_GETFD = 438  # x86_64


def issued(stdout):
    """The workload's lines: OPCODE requests bytes async errors completions."""
    out = {}
    for line in stdout.splitlines():
        op, requests, nbytes, forced, errors, completions = line.split()
        out[op] = dict(requests=int(requests), bytes=int(nbytes), forced=int(forced),
                       errors=int(errors), completions=int(completions))
    return out


def uring_run(tmp_path, *args):
    out = tmp_path / "out"
    report, res = iotrace_json(["/bin/sh", "-c", " ".join(
        [str(wl("uring")), *map(str, args), ">", str(out)])], tmp_path)
    assert res.returncode == 0, res.stderr
    proc = next(p for p in real_processes(report) if p["comm"] == "uring")
    return report, proc, issued(out.read_text())


def test_every_opcode_as_issued(tmp_path):
    """Each opcode's requests, bytes and errors equal what the workload issued; those it
    forced to io-wq (IOSQE_ASYNC) ran async; every request completed."""
    data = tmp_path / "data"
    report, proc, want = uring_run(tmp_path, "-w", 200, "-n", 300, "-b", "8k", "-f", 5,
                                   "-a", "-o", data)
    got = proc["io_uring"]
    assert set(got) == set(want) == {"WRITE", "READ", "FSYNC", "OPENAT", "STATX", "CLOSE"}
    for op, w in want.items():
        g = got[op]
        assert g["ops"] == g["completions"] == w["requests"] == w["completions"], op
        assert g["errors"] == w["errors"] == 0, op
        assert g["async_ops"] >= w["forced"], op
        assert g["inline_ops"] + g["async_ops"] + g["poll_ops"] == w["requests"], op
        assert g["in_flight"] == 0 and g["latency_ns"]["count"] == w["requests"], op
        if op in ("READ", "WRITE"):
            assert g["bytes"] == w["bytes"], op
        else:
            assert g["bytes"] is None and g["bytes_reason"], op
    assert want["READ"]["bytes"] == 300 * 8 * KIB and want["WRITE"]["bytes"] == 200 * 8 * KIB
    assert report["totals"]["io_uring"]["READ"]["ops"] == 300
    # On the file, apart from the syscalls: one call per completion, the bytes it moved.
    f = next(f for f in proc["files"] if f["path"] == str(data))
    assert f["io_uring"]["READ"]["calls"] == 300
    assert f["io_uring"]["READ"]["transferred_bytes"] == 300 * 8 * KIB
    assert f["io_uring"]["WRITE"]["transferred_bytes"] == 200 * 8 * KIB
    assert f["io_uring"]["FSYNC"]["calls"] == 5
    assert "read" not in f["io"] and "write" not in f["io"]


def test_sqpoll_thread_submits_for_its_process(tmp_path):
    report, proc, want = uring_run(tmp_path, "-w", 64, "-n", 64, "-q", tmp_path / "data")
    got = proc["io_uring"]
    for op in ("READ", "WRITE"):
        assert got[op]["ops"] == got[op]["sqpoll_ops"] == want[op]["requests"] == 64
        assert got[op]["bytes"] == want[op]["bytes"]
    # The SQPOLL thread is a thread of the process: no other process appears.
    assert [p["comm"] for p in real_processes(report)] == ["sh", "uring"]


def fio(tmp_path, *args, size="8m"):
    target = mkinput(tmp_path / "fio.dat", size, "-r")
    out = tmp_path / "fio.json"
    report, res = iotrace_json(
        ["fio", "--name=j", f"--filename={target}", "--ioengine=io_uring", "--bs=4k",
         f"--size={size}", "--iodepth=16", "--output-format=json", f"--output={out}", *args],
        tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr
    return report, json.loads(out.read_text())["jobs"][0]


@pytest.mark.parametrize("args", [
    ["--rw=randread", "--direct=1"],
    ["--rw=randread", "--direct=0"],
    ["--rw=randread", "--direct=1", "--sqthread_poll=1"],
    ["--rw=randwrite", "--direct=1"],
    ["--rw=write", "--direct=0", "--fsync=16"],
], ids=["randread-direct", "randread-buffered", "randread-sqpoll", "randwrite-direct",
        "write-fsync"])
def test_fio_counts_equal_fios_own(tmp_path, args):
    """fio's total_ios and io_bytes equal iotrace's READ/WRITE ops and bytes, summed over
    fio's processes; fsyncs equal fio's sync count; O_DIRECT block I/O is charged to fio."""
    report, job = fio(tmp_path, *args)
    procs = [p for p in real_processes(report) if p["comm"] == "fio"]
    for op, name in (("read", "READ"), ("write", "WRITE")):
        ops = sum(p["io_uring"].get(name, {}).get("ops", 0) for p in procs)
        nbytes = sum(p["io_uring"].get(name, {}).get("bytes", 0) for p in procs)
        assert (ops, nbytes) == (job[op]["total_ios"], job[op]["io_bytes"]), op
    fsyncs = sum(p["io_uring"].get("FSYNC", {}).get("ops", 0) for p in procs)
    assert fsyncs == job.get("sync", {}).get("total_ios", 0)
    if "--direct=1" in args:
        op = "read" if "--rw=randread" in args else "write"
        charged = sum(p["block"].get(op, {}).get("bytes", 0) for p in procs)
        assert charged >= job[op]["io_bytes"]
    assert report["drops"]["uring_inflight"] == report["drops"]["uring_keys"] == 0


def syscalls_under_strace(args, tmp_path):
    """One run, two observers: iotrace's syscall counts of the command's processes (strace's
    own aside) and strace -f -c's, as {syscall: (calls, errors)}."""
    log = tmp_path / f"strace-c.{len(list(tmp_path.glob('strace-c.*')))}"
    report, res = iotrace_json(["strace", "-f", "-c", "-o", str(log), *map(str, args)],
                               tmp_path)
    assert res.returncode == 0, res.stderr
    ours = {}
    for p in real_processes(report):
        if p["comm"] == "strace":
            continue
        for name, row in p["syscalls"].items():
            calls, errors = ours.get(name, (0, 0))
            ours[name] = (calls + row["calls"], errors + row["errors"])
    theirs = parse_strace_c(log.read_text())
    del theirs["total"]
    return ours, theirs


def test_syscalls_still_equal_strace(tmp_path):
    """The io_uring programs leave the syscall counts alone: in the same run, every syscall of
    the workload, io_uring_enter and io_uring_setup included, equals strace -f -c's, once
    the calls of strace's child before its execve (measured on `true`) are taken off."""
    ours, theirs = syscalls_under_strace([wl("uring"), "-w", 40, "-n", 40, "-f", 2, "-a",
                                          tmp_path / "data"], tmp_path)
    pre_ours, pre_theirs = syscalls_under_strace(["true"], tmp_path)
    pre = {k: (v[0] - pre_theirs.get(k, (0, 0))[0], v[1] - pre_theirs.get(k, (0, 0))[1])
           for k, v in pre_ours.items()}
    mine = {k: (v[0] - pre.get(k, (0, 0))[0], v[1] - pre.get(k, (0, 0))[1])
            for k, v in ours.items()}
    mine = {k: v for k, v in mine.items() if v != (0, 0)}
    assert mine == theirs
    assert theirs["io_uring_enter"][0] > 0 and theirs["io_uring_setup"][0] == 1


def test_prometheus_families(tmp_path):
    prom = tmp_path / "u.prom"
    res = run([IOTRACE, "--prom-file", prom, "-o", "/dev/null", "--", wl("uring"), "-w", "8",
               "-n", "12", tmp_path / "data"])
    assert res.returncode == 0, res.stderr
    text = prom.read_text()
    assert subprocess.run(["promtool", "check", "metrics"], input=text.encode(),
                          capture_output=True).returncode == 0
    assert 'iotrace_io_uring_ops_total{run="u",comm="uring",opcode="READ"} 12' in text
    assert 'iotrace_io_uring_bytes_total{run="u",comm="uring",opcode="WRITE"} 32768' in text
    assert 'iotrace_io_uring_latency_seconds_count{run="u",comm="uring",opcode="READ"} 12' \
        in text
    assert 'iotrace_hook_up{run="u",hook="io_uring",reason=""} 1' in text


def test_hooks_off_say_why(tmp_path):
    env = {**os.environ, "IOTRACE_DISABLE_TRACEPOINTS": "io_uring_complete"}
    report, res = iotrace_json([wl("uring"), "-w", "4", tmp_path / "data"], tmp_path, env=env)
    assert res.returncode == 0, res.stderr
    proc = real_processes(report)[0]
    assert proc["io_uring"] is None and "io_uring_complete" in proc["io_uring_reason"]
    assert report["totals"]["io_uring"] is None
    res = run([IOTRACE, "--", wl("uring"), "-w", "4", tmp_path / "data"], env=env)
    assert "io_uring: n/a (tracepoint io_uring_complete disabled by " in res.stderr.decode()


@pytest.mark.parametrize("args, thread, op, via", [
    (["-w", "64", "-a", "-d"], "iou-wrk", "W", "io-wq"),
    (["-n", "64", "-q", "-d"], "iou-sqp", "R", "sqpoll"),
], ids=["io-wq", "sqpoll"])
def test_snoop_names_io_uring_threads(tmp_path, args, thread, op, via):
    """Block requests an io-wq worker submitted (forced async O_DIRECT writes), or the SQPOLL
    thread (O_DIRECT reads it issues inline), are charged to the process that owns the ring
    (the thread is named after it: iou-wrk-PID, iou-sqp-PID) and marked as such."""
    data = tmp_path / "data"
    # The reads' file, written with O_DIRECT: no dirty page cache to flush, which would send
    # the SQPOLL thread's reads (IOCB_NOWAIT) to an io-wq worker.
    res = run([wl("uring"), "-w", "64", "-d", data])
    assert res.returncode == 0, res.stderr
    snoop = subprocess.Popen([IOTRACE, "snoop", "-j"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    try:
        while b"tracing block I/O" not in snoop.stderr.readline():
            pass
        proc = subprocess.Popen([wl("uring"), *args, data], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        subprocess.run(["sync"], check=True)
    finally:
        snoop.send_signal(2)
        out, _ = snoop.communicate(timeout=30)
    events = [json.loads(line) for line in out.decode().splitlines()]
    ours = [e for e in events if not e.get("summary") and e["comm"] == f"{thread}-{proc.pid}"
            and e["op"] == op]
    assert ours and all(e["via"] == via and e["pid"] == proc.pid for e in ours), ours[:3]


# ---- linked and multishot requests, requests left in flight ----

def test_linked_chain_head_fails_followers_cancelled(tmp_path):
    """A chain of linked requests whose head fails (READ on fd -1: -EBADF): every follower
    (WRITE) completes with -ECANCELED. Each is one op, one completion and one error of its
    opcode, next to the successful READs and WRITEs; the workload checked each result."""
    data = tmp_path / "data"
    report, proc, want = uring_run(tmp_path, "-w", 8, "-n", 8, "-l", 6, data)
    assert (want["READ"]["errors"], want["WRITE"]["errors"]) == (1, 5)
    got = proc["io_uring"]
    assert set(got) == set(want) == {"READ", "WRITE"}
    for op, w in want.items():
        g = got[op]
        assert g["ops"] == g["completions"] == w["requests"] == w["completions"], op
        assert (g["errors"], g["bytes"]) == (w["errors"], w["bytes"]), op
        assert g["in_flight"] == 0 and g["latency_ns"]["count"] == w["requests"], op
    assert (want["READ"]["bytes"], want["WRITE"]["bytes"]) == (8 * 4 * KIB, 8 * 4 * KIB)
    assert report["totals"]["io_uring"]["WRITE"]["errors"] == 5


def test_multishot_is_one_request(tmp_path):
    """A multishot RECV is one submission: one op, nothing left in flight after its last
    CQE (end of file, without IORING_CQE_F_MORE), one latency (to its first CQE)."""
    report, proc, want = uring_run(tmp_path, "-m", 5, "-b", "1k", tmp_path / "data")
    assert want["RECV"] == dict(requests=1, bytes=5 * KIB, forced=0, errors=0, completions=6)
    g = proc["io_uring"]["RECV"]
    assert (g["ops"], g["errors"], g["in_flight"], g["unseen"]) == (1, 0, 0, 0)
    assert g["inline_ops"] + g["async_ops"] + g["poll_ops"] == 1
    assert g["latency_ns"]["count"] == 1


def test_multishot_counts_every_completion(tmp_path):
    """One submission, SHOTS+1 completions: each message's bytes, then end of file. The
    kernel posts a multishot request's CQEs but the last without the request (req NULL in
    io_uring_complete): iotrace matches them by (ring, user_data)."""
    report, proc, want = uring_run(tmp_path, "-m", 5, "-b", "1k", tmp_path / "data")
    g = proc["io_uring"]["RECV"]
    assert (g["ops"], g["completions"], g["bytes"]) == (1, 6, 5 * KIB) == \
        (want["RECV"]["requests"], want["RECV"]["completions"], want["RECV"]["bytes"])


def children(pid):
    return [int(c) for t in Path(f"/proc/{pid}/task").iterdir()
            for c in (t / "children").read_text().split()]


def test_request_pending_at_exit_is_in_flight(tmp_path):
    """The workload exits with a READ still pending (an empty eventfd). The test holds a copy
    of its ring (pidfd_getfd) until the report is written, so the kernel cannot cancel the
    request meanwhile: it is reported in flight, not dropped and not completed."""
    out = tmp_path / "r.json"
    cmd = [IOTRACE, "--json", "-o", out, "--", wl("uring"), "-w", "4", "-n", "4", "-p", "-k",
           tmp_path / "data"]
    libc = ctypes.CDLL(None, use_errno=True)
    held = -1
    iot = subprocess.Popen(list(map(str, cmd)), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    try:
        lines = []
        while not lines or not lines[-1].startswith("READ "):  # READ is printed last here
            line = iot.stdout.readline().decode()
            assert line, iot.stderr.read()
            lines.append(line)
        (pid,) = children(iot.pid)
        fds = [int(f.name) for f in Path(f"/proc/{pid}/fd").iterdir()
               if os.readlink(f) == "anon_inode:[io_uring]"]
        assert len(fds) == 1, fds
        pidfd = os.pidfd_open(pid)
        try:
            held = libc.syscall(SYS_PIDFD_GETFD, pidfd, fds[0], 0)
        finally:
            os.close(pidfd)
        assert held >= 0, os.strerror(ctypes.get_errno())
        iot.stdin.close()  # the workload exits
        err = iot.stderr.read()
        assert iot.wait(timeout=60) == 0, err
        report = json.loads(out.read_text())
    finally:
        if iot.poll() is None:
            iot.kill()
            iot.wait()
        if held >= 0:
            os.close(held)  # now the kernel cancels the request
    want = issued("".join(lines))
    assert want["READ"] == dict(requests=5, bytes=4 * 4 * KIB, forced=0, errors=0,
                                completions=4)
    (proc,) = real_processes(report)
    g = proc["io_uring"]["READ"]
    assert (g["ops"], g["completions"], g["errors"], g["in_flight"]) == (5, 4, 0, 1)
    assert g["latency_ns"]["count"] == 4
    assert proc["io_uring"]["WRITE"]["in_flight"] == 0
    assert report["totals"]["io_uring"]["READ"]["in_flight"] == 1
    assert report["drops"]["uring_inflight"] == 0


def test_request_pending_at_exit_not_dropped(tmp_path):
    """Without a copy of the ring held, the kernel cancels the pending READ once the process
    has gone (-ECANCELED from a kworker): iotrace reports it in flight or as a failed
    completion, whichever came first, but every request is accounted for."""
    report, proc, want = uring_run(tmp_path, "-w", 4, "-n", 4, "-p", tmp_path / "data")
    assert (want["READ"]["requests"], want["READ"]["completions"]) == (5, 4)
    g = proc["io_uring"]["READ"]
    assert g["ops"] == want["READ"]["requests"]
    assert g["ops"] == g["completions"] + g["in_flight"]
    assert g["in_flight"] + g["errors"] == 1
    assert g["bytes"] == want["READ"]["bytes"]


# ---- the text report's table, serve ----

def test_text_table_under_syscalls(tmp_path):
    """The text report's io_uring table, under the process's syscall table: its header, and
    one row per opcode with the workload's own counts."""
    data, out, text = tmp_path / "data", tmp_path / "out", tmp_path / "report.txt"
    with open(out, "wb") as f:
        res = run([IOTRACE, "-H", "-o", text, "--", wl("uring"), "-w", "64", "-n", "65",
                   "-f", "2", "-o", "-l", "3", data], stdout=f)
    assert res.returncode == 0, res.stderr
    want = issued(out.read_text())
    lines = text.read_text().splitlines()
    syscalls = next(i for i, l in enumerate(lines) if l.startswith("% time"))
    # (The first screen's "io_uring" layer line comes before; the table is the process's.)
    head = next(i for i, l in enumerate(lines) if l.startswith("io_uring ") and i > syscalls)
    assert lines[head].split() == ["io_uring", "ops", "errors", "bytes", "p50", "usecs", "p99",
                                   "usecs", "async%", "sqpoll%", "in", "flight"]
    rows = {}
    for line in lines[head + 1:]:
        if not line.strip():
            break
        name, *cells = line.split()
        rows[name] = cells
    assert set(rows) == set(want) == {"READ", "WRITE", "FSYNC", "OPENAT", "STATX", "CLOSE"}
    for op, (ops, errors, nbytes, p50, p99, async_pct, sqpoll_pct, in_flight) in rows.items():
        assert (int(ops), int(errors)) == (want[op]["requests"], want[op]["errors"]), op
        assert nbytes == (str(want[op]["bytes"]) if op in ("READ", "WRITE") else "n/a"), op
        assert float(p50) <= float(p99) and sqpoll_pct == "0%" and in_flight == "0", op
    # The known mix: 65 reads of 4 KiB and the chain's head (fd -1), which moved nothing.
    assert rows["READ"][:3] == ["66", "1", str(65 * 4 * KIB)]
    assert rows["WRITE"][:3] == ["66", "2", str(64 * 4 * KIB)]


def test_serve_families_equal_run_mode(tmp_path, test_cgroup):
    """serve's io_uring families for the workload run in a test cgroup equal run mode's JSON
    for the same command, and the workload's own counts."""
    rel = "/" + test_cgroup.name
    args = [wl("uring"), "-w", "16", "-n", "16", "-f", "2", "-a", "-o", "-l", "4",
            tmp_path / "data"]
    serve = Serve("-c", rel, "--comm")
    try:
        res = run(in_cgroup(test_cgroup, list(map(str, args))))
        assert res.returncode == 0, res.stderr
        want = issued(res.stdout.decode())
        text = serve.scrape()
    finally:
        assert serve.stop() == 0
    prom = tmp_path / "serve.prom"
    prom.write_text(text)
    promtool_check(prom)
    samples = parse(text)
    report, res = iotrace_json(args, tmp_path)
    assert res.returncode == 0, res.stderr
    (proc,) = real_processes(report)
    got = proc["io_uring"]
    assert set(got) == set(want) == {"READ", "WRITE", "FSYNC", "OPENAT", "STATX", "CLOSE"}
    labels = dict(cgroup=rel, comm="uring")
    assert {l["opcode"] for n, l, v in samples
            if n == "iotrace_io_uring_ops_total" and l.get("cgroup") == rel} == set(want)
    for op, g in got.items():
        def metric(name, **more):
            return one(samples, f"iotrace_io_uring_{name}", opcode=op, **labels, **more)
        assert metric("ops_total") == g["ops"] == want[op]["requests"], op
        assert metric("completions_total") == g["completions"] == want[op]["completions"], op
        assert metric("errors_total") == g["errors"] == want[op]["errors"], op
        assert metric("sqpoll_ops_total") == g["sqpoll_ops"] == 0, op
        assert metric("in_flight") == g["in_flight"] == 0, op
        ran = sum(select(samples, "iotrace_io_uring_requests_total", opcode=op, **labels))
        assert ran == g["inline_ops"] + g["async_ops"] + g["poll_ops"], op
        assert metric("requests_total", how="async") >= want[op]["forced"], op
        assert metric("latency_seconds_count") == g["latency_ns"]["count"], op
        if op in ("READ", "WRITE"):
            assert metric("bytes_total") == g["bytes"] == want[op]["bytes"], op
        else:
            assert not select(samples, "iotrace_io_uring_bytes_total", opcode=op, **labels)
