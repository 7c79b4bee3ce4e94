"""io_uring: requests per opcode and on their file, against what the workload says it issued,
fio's own JSON (total_ios, io_bytes), strace -f -c in the same run (io_uring_enter), promtool
and the hooks switched off."""
import json
import os
import subprocess

import pytest

from helpers import IOTRACE, iotrace_json, mkinput, parse_strace_c, real_processes, run, wl

KIB = 1024


def issued(stdout):
    """The workload's lines: OPCODE requests bytes async errors."""
    out = {}
    for line in stdout.splitlines():
        op, requests, nbytes, forced, errors = line.split()
        out[op] = dict(requests=int(requests), bytes=int(nbytes), forced=int(forced),
                       errors=int(errors))
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
        assert g["ops"] == g["completions"] == w["requests"], op
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


def test_snoop_names_io_uring_threads(tmp_path):
    """Block requests an io-wq worker submitted (forced async O_DIRECT writes) are charged to
    the process and marked as such."""
    data = tmp_path / "data"
    snoop = subprocess.Popen([IOTRACE, "snoop", "-j"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    try:
        while b"tracing block I/O" not in snoop.stderr.readline():
            pass
        res = subprocess.run([wl("uring"), "-w", "64", "-a", "-d", data], capture_output=True)
        assert res.returncode == 0, res.stderr
        subprocess.run(["sync"], check=True)
    finally:
        snoop.send_signal(2)
        out, _ = snoop.communicate(timeout=30)
    events = [json.loads(line) for line in out.decode().splitlines()]
    ours = [e for e in events if not e.get("summary") and e["comm"].startswith("iou-wrk")
            and e["op"] == "W"]
    assert ours and all(e["via"] == "io-wq" for e in ours)
