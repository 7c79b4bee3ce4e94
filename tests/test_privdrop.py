"""serve, least privileged (issue 21): once attached, serve runs as --user with no
capability, no_new_privs and a seccomp allow-list, in every thread (user/cmd/privdrop.c).

References: the kernel's own view of each thread (/proc/PID/task/*/status), the passwd
database (pwd), run mode's JSON for the counts, and the kernel's verdict on a syscall
outside the list (the process dies of SIGSYS).
"""
import os
import pwd
import signal
import subprocess
from pathlib import Path

import pytest

from helpers import (IOTRACE, assert_no_new_bpf_objects, bpf_object_ids, mkinput,
                     real_processes, run, run_stdin, wl)
from test_prom import Serve, free_port, in_cgroup, one, parse, run_json, test_cgroup  # noqa: F401

NOBODY = pwd.getpwnam("nobody")


def thread_status(pid):
    """{tid: {field: value}} from /proc/PID/task/*/status."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        fields = {}
        for line in (task / "status").read_text().splitlines():
            key, _, value = line.partition(":")
            fields[key] = value.split()
        out[int(task.name)] = fields
    return out


def own_caps(name):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split()[1]


def assert_confined(status, uid, gid, caps="0000000000000000"):
    # The main thread and libmicrohttpd's: a filter on the main thread alone would show here.
    assert len(status) >= 2, status
    for tid, f in status.items():
        assert f["Uid"] == [str(uid)] * 4 and f["Gid"] == [str(gid)] * 4, (tid, f["Uid"])
        for cap in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
            want = "0000000000000000" if cap in ("CapInh", "CapAmb") else caps
            assert f[cap] == [want], (tid, cap, f[cap])
        assert f["NoNewPrivs"] == ["1"] and f["Seccomp"] == ["2"], (tid, f)
        assert f["Seccomp_filters"] == ["1"], (tid, f["Seccomp_filters"])


def test_serve_drops_to_nobody_in_every_thread():
    serve = Serve()
    try:
        status = thread_status(serve.proc.pid)
        assert "iotrace_build_info" in serve.scrape()
    finally:
        assert serve.stop() == 0
    assert_confined(status, NOBODY.pw_uid, NOBODY.pw_gid)
    for f in status.values():
        assert f["Groups"] == [], f["Groups"]  # no supplementary groups


def test_serve_user_option():
    other = pwd.getpwnam("daemon")
    serve = Serve("--user", "daemon")
    try:
        status = thread_status(serve.proc.pid)
    finally:
        assert serve.stop() == 0
    assert_confined(status, other.pw_uid, other.pw_gid)
    # root keeps root and its capabilities; the filter and no_new_privs still apply.
    serve = Serve("--user", "0")
    try:
        status = thread_status(serve.proc.pid)
        assert "iotrace_build_info" in serve.scrape()
    finally:
        assert serve.stop() == 0
    assert_confined(status, 0, 0, caps=own_caps("CapEff"))


def test_serve_counts_stay_exact_after_the_drop(tmp_path, test_cgroup):
    """Counts read without any capability equal run mode's, over a scrape of 32 labels
    (hundreds of KiB: malloc's mmap and mremap paths run under the filter too). Not more:
    slots past 38 of a 64-slot bitmap word are shared (alloc_slot in bpf/proc.bpf.c takes
    the lowest clear bit through log2_bucket, which stops at bucket 39)."""
    small = mkinput(tmp_path / "in", 20_001)
    names = [f"c{i:03d}" for i in range(30)]
    for n in names:
        os.symlink("/bin/true", tmp_path / n)
    rel = "/" + test_cgroup.name
    serve = Serve("-c", rel, "--comm", "--max-labels", "1000")
    try:
        res = run_stdin(in_cgroup(test_cgroup, [wl("tr2b"), "a", "b"]), small,
                        stdout=subprocess.DEVNULL)
        assert res.returncode == 0
        script = "; ".join(str(tmp_path / n) for n in names)
        assert run(in_cgroup(test_cgroup, ["sh", "-c", script])).returncode == 0
        text = serve.scrape()
        status = thread_status(serve.proc.pid)
    finally:
        assert serve.stop() == 0
    assert_confined(status, NOBODY.pw_uid, NOBODY.pw_gid)
    assert len(text) > 256 << 10, len(text)
    samples = parse(text)
    for n in names:
        assert one(samples, "iotrace_syscalls_total", cgroup=rel, comm=n, syscall="execve") == 1
    report, _ = run_json(tmp_path, [wl("tr2b"), "a", "b"], small)
    (proc,) = real_processes(report)
    for name in ("read", "write", "close", "execve"):
        assert one(samples, "iotrace_syscalls_total", cgroup=rel, comm="tr2b",
                   syscall=name) == proc["syscalls"][name]["calls"], name


def serve_with_test_call(name):
    port = free_port()
    env = dict(os.environ, IOTRACE_TEST_FORBIDDEN_SYSCALL=name)
    return subprocess.Popen([str(IOTRACE), "serve", "--listen", f"127.0.0.1:{port}"],
                            stderr=subprocess.PIPE, text=True, env=env)


@pytest.mark.parametrize("call", ["getppid", "execve", "setuid", "socket"])
def test_syscall_outside_the_list_kills_serve(call):
    """getppid would succeed and setuid(0) would fail quietly if they ran; they do not."""
    before = bpf_object_ids()
    proc = serve_with_test_call(call)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGSYS, (proc.returncode, err)
    assert "metrics on" not in err, err
    assert_no_new_bpf_objects(before)


@pytest.mark.parametrize("call", ["getpid", "sched_yield", "shutdown"])
def test_syscall_on_the_list_runs(call):
    """The control: the hook itself does not kill serve; nor do the calls its paths make
    rarely (sched_yield: a scrape waiting while a CPU moves a row; shutdown: a slow client
    cut), which a run may not meet (tests/test_serve_load.py drives them all)."""
    proc = serve_with_test_call(call)
    try:
        assert "metrics on" in proc.stderr.readline()
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0


def test_unknown_user_is_refused():
    before = bpf_object_ids()
    res = run([IOTRACE, "serve", "--user", "no-such-user-here"], timeout=20)
    assert res.returncode == 1
    err = res.stderr.decode()
    assert err.count("\n") == 1 and err.startswith("iotrace serve: ") and "--user" in err, err
    assert_no_new_bpf_objects(before)


def test_drop_failure_cleans_up():
    """Without CAP_SETUID the switch fails after the programs are attached: one line, exit 1,
    nothing left behind."""
    before = bpf_object_ids()
    res = run(["setpriv", "--bounding-set=-all,+bpf,+perfmon", str(IOTRACE), "serve",
               "--listen", f"127.0.0.1:{free_port()}"], timeout=30)
    err = res.stderr.decode()
    assert res.returncode == 1, err
    assert err.count("\n") == 1 and "iotrace serve: dropping privileges: switching to uid" in err
    assert_no_new_bpf_objects(before)
