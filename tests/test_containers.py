"""Which container did the I/O (issue 39, phase 1): cgroup paths read as containers, the
runtimes' names and images, the kernel's container filter (snoop), against references that
do not come from iotrace: podman inspect and podman ps, the cgroups the test made itself in
the kubelet's shapes, lsns, and dd's own arithmetic. docs/containers.md."""
import json
import os
import re
import signal
import subprocess
import time
import uuid

import pytest

import containers
from containers import CgroupTree, Docker, Podman, kubelet_shapes, random_id
from helpers import IOTRACE, ROOT, run
from test_block import disk_of

CONTAINER_TEST = ROOT / ".output" / "tests" / "container_test"

needs_podman = pytest.mark.skipif(containers.why_not() is not None,
                                  reason=str(containers.why_not()))
needs_docker = pytest.mark.skipif(containers.docker_why_not() is not None,
                                  reason=str(containers.docker_why_not()))


def resolve(*pids, env=None):
    """iotrace containers -j: one object per pid."""
    res = run([IOTRACE, "containers", "-j", *map(str, pids)], env=env)
    assert res.returncode == 0, res.stderr
    rows = [json.loads(line) for line in res.stdout.decode().splitlines()]
    return {r["pid"]: r for r in rows}


def lsns(pid, kind):
    """lsns's namespace of pid; lsns reads every process and may print nothing when one it
    read ends under it (other tests' processes): asked again."""
    for _ in range(5):
        res = run(["lsns", "-n", "-o", "NS", "-t", kind, "-p", str(pid)])
        if res.stdout.split():
            return int(res.stdout.split()[0])
        time.sleep(0.1)
    raise AssertionError(f"lsns gave nothing for {pid}: {res.stderr!r}")


# ---- the parser: every shape (its fuzzer: test_hardening.py) ----

def test_every_cgroup_shape():
    """tests/c/container_test.c: docker, podman, containerd, CRI-O, the kubelet's two
    drivers and three QoS classes, nspawn, systemd units and sessions, the host, near
    misses; each row's runtime, ID, pod UID, QoS, name and own cgroup."""
    res = run([CONTAINER_TEST])
    lines = res.stdout.decode().splitlines()
    assert res.returncode == 0, "\n".join(l for l in lines if not l.startswith("ok"))
    assert sum(l.startswith("ok ") for l in lines) >= 45
    assert lines[-1].startswith("0 of ")


def test_resolver_never_waits_and_reads_kubernetes_state():
    """tests/c/container_resolver_test.c: a runtime that never answers leaves the caller
    waiting for nothing (its first answer is \"pending\"), containerd's and CRI-O's
    Kubernetes state give the pod's namespace and name, the container's name and image, and
    an unanswered container says which source was asked."""
    res = run([ROOT / ".output" / "tests" / "container_resolver_test"], timeout=60)
    lines = res.stdout.decode().splitlines()
    assert res.returncode == 0, "\n".join(l for l in lines if not l.startswith("ok"))
    assert sum(l.startswith("ok ") for l in lines) == 11


# ---- identity of real containers ----

def check_identity(row, c, names, image, runtime="podman"):
    assert row["runtime"] == runtime and not row["monitor"]
    assert row["container_id"] == c.id
    assert row["name"] == names[c.id] == c.name
    assert row["image"] == image
    assert row["pod_uid"] is None and row["answered"]


@needs_podman
def test_podman_identity_from_state_files():
    """Two containers and a host process: ID = podman inspect's, name = podman ps's, image =
    the imported one, read from containers/storage's containers.json (no API running);
    namespaces = lsns's."""
    host = subprocess.Popen(["sleep", "600"])
    try:
        with Podman() as pm:
            a, b = pm.run("a"), pm.run("b")
            names = pm.names()
            rows = resolve(a.pid, b.pid, host.pid)
            for c in (a, b):
                check_identity(rows[c.pid], c, names, pm.image)
                assert rows[c.pid]["source"] == "containers/storage"
                assert rows[c.pid]["mnt_ns"] == lsns(c.pid, "mnt")
                assert rows[c.pid]["pid_ns"] == lsns(c.pid, "pid")
            assert rows[a.pid]["mnt_ns"] != rows[b.pid]["mnt_ns"]
            h = rows[host.pid]
            assert h["runtime"] in ("host", "service", "scope", "session")
            assert h["container_id"] is None and h["image"] is None
            assert h["mnt_ns"] == lsns(host.pid, "mnt")
    finally:
        host.kill()
        host.wait()


@needs_podman
def test_podman_identity_from_api(tmp_path):
    """The same answers from podman's API (docker-compatible, on its unix socket); conmon
    not in the container."""
    sock = tmp_path / "podman.sock"
    with Podman() as pm:
        a = pm.run("a")
        pm.start_service(sock)
        env = dict(containers.ENV, CONTAINER_HOST=f"unix://{sock}")
        conmon = int(run(["pgrep", "-f", f"conmon .*-c {a.id}"]).stdout.split()[0])
        rows = resolve(a.pid, conmon, env=env)
        check_identity(rows[a.pid], a, pm.names(), pm.image)
        assert rows[a.pid]["source"] == "podman API"
        # conmon is never taken for the container: podman's monitor where its cgroup says
        # so; on a hybrid host podman's cgroupfs manager leaves it in the v2 root (host).
        m = rows[conmon]
        assert m["monitor"] if m["runtime"] == "podman" else m["runtime"] == "host", m


@needs_podman
def test_podman_text_listing():
    """iotrace containers' text: the container's name and image on its process's line."""
    with Podman() as pm:
        a = pm.run("a")
        res = run([IOTRACE, "containers"])
        assert res.returncode == 0, res.stderr
        line = next(l for l in res.stdout.decode().splitlines() if l.split()[0] == str(a.pid))
        assert line.split()[2:7] == ["podman", a.name, a.id[:12], "-", pm.image]


# ---- Kubernetes pods: cgroups in the kubelet's shapes ----

def test_kubelet_shapes_resolved():
    """A process moved into each shape the kubelet makes (systemd and cgroupfs drivers,
    guaranteed, burstable and besteffort pods; containerd, CRI-O, docker): pod UID,
    container ID, QoS and runtime as the test made them. No runtime answers for these
    made-up containers: the name stays unknown, and says so."""
    pod, cid = str(uuid.uuid4()), random_id()
    with CgroupTree("kube") as tree:
        procs = {}
        for path, runtime, qos in kubelet_shapes(pod, cid):
            procs[path] = (tree.spawn_in(path, ["sleep", "600"]), runtime, qos)
        rows = resolve(*(p.pid for p, _, _ in procs.values()))
        for path, (p, runtime, qos) in procs.items():
            row = rows[p.pid]
            own = open(f"/proc/{p.pid}/cgroup").read()
            assert f"0::{tree.path(path)}\n" in own  # it is where the test put it
            assert (row["runtime"], row["container_id"], row["pod_uid"], row["qos"]) == \
                (runtime, cid, pod, qos), path
            assert row["name"] is None and not row["answered"], path


def test_kubelet_pod_cgroup_itself():
    """A process in a pod's own cgroup: the pod's UID, no container."""
    pod = str(uuid.uuid4())
    with CgroupTree("pod") as tree:
        p = tree.spawn_in(f"kubepods/burstable/pod{pod}", ["sleep", "600"])
        row = resolve(p.pid)[p.pid]
        assert (row["runtime"], row["container_id"], row["pod_uid"], row["qos"]) == \
            ("cri", None, pod, "burstable")


# ---- the kernel filter: snoop --container ----

def direct_writes(dd_out):
    """dd's own count of whole records written."""
    m = re.search(r"(\d+)\+0 records out", dd_out)
    return int(m.group(1))


def snoop_json(args, seconds, env=None):
    return subprocess.Popen([str(IOTRACE), "snoop", "-j", *args, str(seconds)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def snoop_events(proc):
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    rows = [json.loads(l) for l in out.decode().splitlines()]
    assert rows[-1].get("summary") and rows[-1]["lost_events"] == 0, rows[-1]
    return rows[:-1]


DD = "while [ ! -e /data/go ]; do usleep 10000; done; " \
     "exec dd if=/dev/zero of=/data/out.{n} bs=64k count={n} oflag=direct"


def cgroup_procs(pid):
    """The host pids in the cgroup v2 of process pid."""
    rel = next(l[3:].strip() for l in open(f"/proc/{pid}/cgroup") if l.startswith("0::"))
    procs = containers.cgroup2_root() / rel.lstrip("/") / "cgroup.procs"
    return {int(p) for p in procs.read_text().split()}


def gate_shell(pid):
    """Whether host pid is a gated writer's shell (its command line names /data/go): not a
    usleep it forks every 10 ms, nor the runtime's setns helpers on their way in."""
    try:
        argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
    except OSError:
        return False
    return argv[0].endswith(b"sh") and b"/data/go" in b" ".join(argv)


def gated_writers(pm_containers, vol, tool="podman", env=containers.ENV):
    """In each (container, count): a shell that waits for /data/go, then execs dd; returns
    the execs and each container's writer pid on the host (the shell that becomes dd: the
    one process of its cgroup whose command line is the gate's, once it is there)."""
    execs, writers = [], {}
    for c, n in pm_containers:
        execs.append(subprocess.Popen([tool, "exec", c.name, "sh", "-c", DD.format(n=n)],
                                      env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    deadline = time.monotonic() + 60
    for c, n in pm_containers:
        while time.monotonic() < deadline:
            shells = {p for p in cgroup_procs(c.pid) - {c.pid} if gate_shell(p)}
            if len(shells) == 1:
                writers[c.name] = shells.pop()
                break
            time.sleep(0.02)
    assert len(writers) == len(pm_containers), (writers, [p.poll() for p in execs])
    return execs, writers


def check_snoop_filter(a, b, vol, tmp_path, tool="podman", env=containers.ENV):
    """Two containers and the host write with O_DIRECT at once (different counts); snoop
    --container A (by name, then by ID prefix) shows A's requests only: every event's pid is
    A's dd (the host pid its cgroup holds), and its 64 KiB writes are as many as dd says."""
    for sel in (a.name, a.id[:10]):
        (vol / "go").unlink(missing_ok=True)
        execs, writers = gated_writers([(a, 23), (b, 17)], vol, tool, env)
        snoop = snoop_json(["--container", sel], 8, env)
        assert b"tracing block I/O" in snoop.stderr.readline()
        (vol / "go").touch()
        host = run(["dd", "if=/dev/zero", f"of={tmp_path}/host.out", "bs=64k", "count=11",
                    "oflag=direct"])
        outs = [p.communicate(timeout=60)[0] for p in execs]
        events = snoop_events(snoop)
        assert [direct_writes(o) for o in outs] == [23, 17] and host.returncode == 0
        assert {e["pid"] for e in events} == {writers[a.name]}, (writers, events[:3])
        # the column: the name podman gives it, from the first line (asked at snoop's start)
        assert {(e["container"], e["container_id"]) for e in events} == {(a.name, a.id)}
        data = [e for e in events if e["op"] == "W" and e["bytes"] == 65536]
        assert len(data) == 23


def check_snoop_column(a, b, vol, tmp_path, tool="podman", env=containers.ENV):
    """Unfiltered, two containers and the host writing at once: each request's container
    is its writer's (name and ID as podman inspect and podman ps give them; the host's dd in
    none), and the text column says the same."""
    for fmt in ("-j", None):
        (vol / "go").unlink(missing_ok=True)
        execs, writers = gated_writers([(a, 13), (b, 7)], vol, tool, env)
        snoop = subprocess.Popen([str(IOTRACE), "snoop", *([fmt] if fmt else []), "-d",
                                  disk_of(vol), "8"], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        assert b"tracing block I/O" in snoop.stderr.readline()
        (vol / "go").touch()
        host = subprocess.Popen(["dd", "if=/dev/zero", f"of={tmp_path}/host.out", "bs=64k",
                                 "count=5", "oflag=direct"], stderr=subprocess.DEVNULL)
        assert host.wait(timeout=60) == 0
        [p.communicate(timeout=60) for p in execs]
        if fmt:
            events = snoop_events(snoop)
            seen = {(e["pid"], e["container"], e["container_id"]) for e in events
                    if e["op"] == "W" and e["bytes"] == 65536}
            assert (writers[a.name], a.name, a.id) in seen and \
                (writers[b.name], b.name, b.id) in seen, seen
            assert {x for x in seen if x[0] == host.pid} == {(host.pid, "host", None)} or \
                all(x[2] is None for x in seen if x[0] == host.pid), seen
            # one container each (another process of the machine may write 64 KiB on the
            # disk meanwhile: a kworker's writeback once did)
            mine = {writers[a.name], writers[b.name], host.pid}
            assert len({x for x in seen if x[0] in mine}) == 3, seen
        else:
            out, err = snoop.communicate(timeout=120)
            lines = out.decode().splitlines()
            assert lines[0].split()[:4] == ["TIME(s)", "COMM", "PID", "CONTAINER"], lines[0]
            by_pid = {}
            for line in lines[1:]:
                f = line.split()
                by_pid.setdefault(int(f[2]), set()).add(f[3])
            for c in (a, b):
                (cell,) = by_pid[writers[c.name]]
                assert cell == c.name or (len(c.name) > 20 and cell[0] == "…" and
                                          c.name.endswith(cell[1:])), (cell, c.name)


@needs_podman
def test_snoop_container_filter(tmp_path):
    """snoop --container on podman's containers (check_snoop_filter)."""
    vol = tmp_path / "vol"
    vol.mkdir()
    with Podman() as pm:
        check_snoop_filter(pm.run("a", volume=vol), pm.run("b", volume=vol), vol, tmp_path)


@needs_podman
def test_snoop_container_column(tmp_path):
    """snoop's container column, unfiltered, on podman's containers (check_snoop_column)."""
    vol = tmp_path / "vol"
    vol.mkdir()
    with Podman() as pm:
        check_snoop_column(pm.run("a", volume=vol), pm.run("b", volume=vol), vol, tmp_path)


# ---- docker: a daemon of the test's own ----

@needs_docker
def test_docker(tmp_path):
    """docker's containers (cgroupfs driver: /docker/<id>): ID = docker inspect's, name =
    docker ps's, image = the imported one, from docker's API and, with no daemon asked, from
    its state files (config.v2.json) below IOTRACE_HOST_ROOT; snoop --container as with
    podman."""
    vol = tmp_path / "vol"
    vol.mkdir()
    with Docker(tmp_path / "docker") as d:
        a, b = d.run("a", volume=vol), d.run("b", volume=vol)
        names = d.names()
        rows = resolve(a.pid, b.pid, env=d.env)
        for c in (a, b):
            check_identity(rows[c.pid], c, names, d.image, "docker")
            assert rows[c.pid]["source"] == "docker API"
        root = tmp_path / "host-root"
        (root / "var" / "lib").mkdir(parents=True)
        (root / "var" / "lib" / "docker").symlink_to(d.data)
        rows = resolve(a.pid, env=dict(containers.ENV, IOTRACE_HOST_ROOT=str(root)))
        check_identity(rows[a.pid], a, names, d.image, "docker")
        assert rows[a.pid]["source"] == "docker state"
        check_snoop_filter(a, b, vol, tmp_path, "docker", d.env)


def test_snoop_pod_filter_by_cgroup_and_uid(tmp_path):
    """A pod's containers by the pod's cgroup (-c, at any depth below it) and by its UID
    (--container): a writer in the pod's container is shown, one in another pod is not."""
    pod, other = str(uuid.uuid4()), str(uuid.uuid4())
    with CgroupTree("snoop") as tree:
        pod_path = f"kubepods/besteffort/pod{pod}"
        tree.make(pod_path)
        for args in (["-c", tree.path(pod_path)], ["--container", pod]):
            snoop = snoop_json(args, 6)
            assert b"tracing block I/O" in snoop.stderr.readline()
            # The writers' cgroups are made after snoop started: the filter is on the pod's.
            ws = [tree.spawn_in(f"{p}/{random_id()}",
                                ["dd", "if=/dev/zero", f"of={tmp_path}/{n}", "bs=64k",
                                 f"count={n}", "oflag=direct"])
                  for p, n in ((pod_path, 9), (f"kubepods/besteffort/pod{other}", 5))]
            for w in ws:
                assert w.wait(timeout=60) == 0
            events = snoop_events(snoop)
            assert {e["pid"] for e in events} == {ws[0].pid}
            assert len([e for e in events if e["op"] == "W" and e["bytes"] == 65536]) == 9


@pytest.mark.parametrize("args,words", [
    (["--container", "no-such-container-39"], "no running container"),
    (["--container", "a/b"], "--cgroup"),
    (["--container", ""], "expected a container"),
    (["-c", "/no/such/cgroup"], "cgroup '/no/such/cgroup'"),
])
def test_snoop_bad_filter(args, words):
    res = run([IOTRACE, "snoop", *args, "1"])
    lines = res.stderr.decode().splitlines()
    assert res.returncode != 0 and len(lines) == 1 and words in lines[0], lines


def test_ambiguous_id_prefix():
    """An ID prefix two containers share names neither: one line asks for more of it."""
    pod, a, b = str(uuid.uuid4()), random_id(), random_id()
    b = a[:6] + ("1" if a[6] == "0" else "0") + b[7:]
    with CgroupTree("ambiguous") as tree:
        for cid in (a, b):
            tree.spawn_in(f"kubepods/pod{pod}/{cid}", ["sleep", "600"])
        res = run([IOTRACE, "snoop", "--container", a[:6], "1"])
        assert res.returncode != 0 and b"give more of the ID" in res.stderr
        res = run([IOTRACE, "snoop", "--container", a[:7], "0.5"])
        assert res.returncode == 0, res.stderr


# ---- top by container (phase 2) ----

def top_json_lines(args, env=containers.ENV):
    """top -j started, returned once its first line is out (it is attached)."""
    proc = subprocess.Popen([str(IOTRACE), "top", "-j", "-d", "1", *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.first = proc.stdout.readline()
    assert proc.first, proc.stderr.read()
    return proc


def top_lines_of(proc):
    """Its lines up to the first whose block_until_ns is after now (every request completed
    before now is in it or an earlier one: docs/json.md), and one more (a completion the
    kernel skipped is counted a line late), then ^C."""
    done = time.monotonic_ns()
    lines = [json.loads(proc.first)]
    while len(lines) < 2 or lines[-2]["block_until_ns"] <= done:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        lines.append(json.loads(line))
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    lines += [json.loads(l) for l in out.decode().splitlines()]
    # counted late, and calls in flight as top attached (no timestamp): nothing lost
    late = ("block_completions_unseen", "untimed_calls")
    lost = [{k: v for k, v in l["drops"].items() if v and k not in late} for l in lines]
    assert lines and not any(lost), lost
    return lines


def group_sums(lines, key):
    """Each group's counter summed over every line (a group has one row a line)."""
    sums = {}
    for line in lines:
        for g in line["groups"]:
            sums[g["group"]] = sums.get(g["group"], 0) + g[key]
    return sums


@needs_podman
def test_top_group_by_container(tmp_path):
    """top -j --group container while two containers and the host write with O_DIRECT at
    once (31, 19 and 11 x 64 KiB): over the run, each container's row has exactly its dd's
    disk writes (count and bytes, dd's own arithmetic), under the name podman ps gives it
    and the ID podman inspect gives it; the host's dd is in neither."""
    vol = tmp_path / "vol"
    vol.mkdir()
    with Podman() as pm:
        a, b = pm.run("a", volume=vol), pm.run("b", volume=vol)
        names = pm.names()
        top = top_json_lines(["--group", "container"])
        execs, writers = gated_writers([(a, 31), (b, 19)], vol)
        (vol / "go").touch()
        host = run(["dd", "if=/dev/zero", f"of={tmp_path}/host.out", "bs=64k", "count=11",
                    "oflag=direct"])
        outs = [p.communicate(timeout=60)[0] for p in execs]
        assert [direct_writes(o) for o in outs] == [31, 19] and host.returncode == 0
        lines = top_lines_of(top)
    assert all(l["group_by"] == "container" for l in lines)
    ids = {g["group"]: g["container_id"] for l in lines for g in l["groups"]}
    for c, n in ((a, 31), (b, 19)):
        row = f"{c.name} ({c.id[:12]})"  # a name is not unique (pods): its short ID too
        assert names[c.id] == c.name and ids[row] == c.id, ids
        assert group_sums(lines, "disk_writes").get(row) == n, lines[-1]["groups"]
        assert group_sums(lines, "disk_write_bytes")[row] == n * 65536


@needs_podman
def test_top_container_filter_and_process_identity(tmp_path):
    """top -j --container A (by name): every process row is in A (its container_id is A's
    podman inspect ID), A's dd is among them with exactly its 64 KiB writes; B's dd and the
    host's are not shown. Unfiltered, each process row carries its container's name and ID
    (B's dd: B's)."""
    vol = tmp_path / "vol"
    vol.mkdir()
    with Podman() as pm:
        a, b = pm.run("a", volume=vol), pm.run("b", volume=vol)
        for args in (["--container", a.name], []):
            (vol / "go").unlink(missing_ok=True)
            top = top_json_lines(args)
            execs, writers = gated_writers([(a, 23), (b, 17)], vol)
            (vol / "go").touch()
            host = subprocess.Popen(["dd", "if=/dev/zero", f"of={tmp_path}/host.out",
                                     "bs=64k", "count=5", "oflag=direct"],
                                    stderr=subprocess.DEVNULL)
            assert host.wait(timeout=60) == 0
            [p.communicate(timeout=60) for p in execs]
            rows = [p for l in top_lines_of(top) for p in l["processes"]]
            by_pid = {}
            for p in rows:
                by_pid.setdefault(p["pid"], []).append(p)
            dd_a = by_pid[writers[a.name]]
            assert sum(p["disk_writes"] for p in dd_a) == 23
            assert {(p["container"], p["container_id"]) for p in dd_a} == {(a.name, a.id)}
            if args:
                assert {p["container_id"] for p in rows} == {a.id}, \
                    {(p["comm"], p["container_id"]) for p in rows}
                assert writers[b.name] not in by_pid and host.pid not in by_pid
            else:
                dd_b = by_pid[writers[b.name]]
                assert {(p["container"], p["container_id"]) for p in dd_b} == {(b.name, b.id)}
                assert sum(p["disk_writes"] for p in dd_b) == 17
                assert {p["container_id"] for p in by_pid[host.pid]} == {None}


# ---- serve's container labels (phase 2) ----

@needs_podman
def test_serve_container_labels(tmp_path):
    """serve while container A (running before serve: named as podman ps names it), B
    (started after: its short ID, runtimes are not asked once serve dropped its privileges)
    and the host write with O_DIRECT (29, 13 and 7 x 64 KiB): the block write series
    labelled container=A add up to A's dd's 29 requests of 64 KiB, B's to 13, and every
    series of A's cgroup carries A's label; promtool accepts the scrape."""
    from test_prom import Serve, parse, promtool_check, select
    vol = tmp_path / "vol"
    vol.mkdir()
    with Podman() as pm:
        a = pm.run("a", volume=vol)
        serve = Serve()
        try:
            b = pm.run("b", volume=vol)
            execs, writers = gated_writers([(a, 29), (b, 13)], vol)
            (vol / "go").touch()
            host = run(["dd", "if=/dev/zero", f"of={tmp_path}/host.out", "bs=64k",
                        "count=7", "oflag=direct"])
            outs = [p.communicate(timeout=60)[0] for p in execs]
            assert [direct_writes(o) for o in outs] == [29, 13] and host.returncode == 0
            text = serve.scrape()
        finally:
            assert serve.stop() == 0
    (tmp_path / "scrape.prom").write_text(text)
    promtool_check(tmp_path / "scrape.prom")
    samples = parse(text)
    for c, label, n in ((a, a.name, 29), (b, b.id[:12], 13)):
        assert sum(select(samples, "iotrace_block_io_requests_total", container=label,
                          op="write")) == n
        assert sum(select(samples, "iotrace_block_io_bytes_total", container=label,
                          op="write")) == n * 65536
        cgroups = {l["cgroup"] for _, l, _ in samples if l.get("container") == label}
        assert len(cgroups) == 1 and c.id in cgroups.pop()
    assert not [l for _, l, _ in samples for c in (a, b)
                if c.id in l.get("cgroup", "") and l.get("container") is None]


# ---- run mode (phase 2) ----

@needs_podman
def test_run_mode_names_each_process_container(tmp_path):
    """iotrace --json -- podman exec A dd ... (O_DIRECT, 9 x 64 KiB): the dd process's
    container is A (podman ps's name, podman inspect's ID) with exactly its 9 writes; podman,
    conmon and runc are in none; its mount and pid namespaces are A's (lsns); the run's
    containers list A once with its count of processes; the text report's first screen says
    so."""
    vol = tmp_path / "vol"
    vol.mkdir()
    dd = ["dd", "if=/dev/zero", "of=/data/x", "bs=64k", "count=9", "oflag=direct"]
    with Podman() as pm:
        a = pm.run("a", volume=vol)
        names = pm.names()
        mnt_a, pid_a = lsns(a.pid, "mnt"), lsns(a.pid, "pid")
        res = run([IOTRACE, "--json", "-o", tmp_path / "r.json", "--", "podman", "exec",
                   a.name, *dd], env=containers.ENV)
        assert res.returncode == 0, res.stderr
        txt = run([IOTRACE, "-o", tmp_path / "r.txt", "--", "podman", "exec", a.name, *dd],
                  env=containers.ENV)
        assert txt.returncode == 0, txt.stderr
    d = json.loads((tmp_path / "r.json").read_text())
    (c,) = d["containers"]
    assert (c["container"], c["container_id"], c["name"]) == (names[a.id], a.id, a.name)
    assert c["runtime"] == "podman" and c["image"] == a.image and a.id in c["cgroup"]
    procs = d["processes"][:-1]  # the last is "(other I/O)"
    inside = [p for p in procs if p["container_id"] == a.id]
    assert [p["comm"] for p in inside] == ["dd"] and inside[0]["container"] == a.name
    assert inside[0]["block"]["write"]["requests"] == 9
    # its namespaces: the container's (lsns of its main process), not the host's
    assert (inside[0]["mnt_ns"], inside[0]["pid_ns"]) == (mnt_a, pid_a) != \
        (lsns(os.getpid(), "mnt"), lsns(os.getpid(), "pid"))
    assert inside[0]["block"]["write"]["bytes"] == 9 * 65536
    assert c["processes"] == 1 and d["host_processes"] == len(procs) - 1
    assert all(p["container"] is None for p in procs if p["container_id"] != a.id)
    assert {p["comm"] for p in procs} >= {"podman", "conmon"}
    lines = (tmp_path / "r.txt").read_text().splitlines()
    assert f"containers: {a.name} (1 process), host (" in "\n".join(lines[:4]), lines[:4]


@pytest.mark.parametrize("shape", [0, 4])  # systemd's driver (burstable), cgroupfs (guaranteed)
def test_top_group_by_pod(tmp_path, shape):
    """top -j --group pod while a writer in each of two kubelet-shaped pods and one on the
    host write with O_DIRECT (21 and 12 x 64 KiB, and 5): each pod's row ("pod:" and its
    UID's first 8, no runtime knowing these made-up pods) has exactly its writer's requests
    over the run; --group container the same under the container IDs' first 12 digits."""
    gate = tmp_path / "go"
    wait = f"while [ ! -e {gate} ]; do sleep 0.01; done; exec dd if=/dev/zero " \
           f"of={tmp_path}/out.$$ bs=64k count=$0 oflag=direct status=none"
    for group in ("pod", "container"):
        gate.unlink(missing_ok=True)
        pods = [(str(uuid.uuid4()), random_id(), n) for n in (21, 12)]
        with CgroupTree(f"pods-{group}") as tree:
            top = top_json_lines(["--group", group])
            writers = [tree.spawn_in(kubelet_shapes(pod, cid)[shape][0],
                                     ["sh", "-c", wait, str(n)]) for pod, cid, n in pods]
            gate.touch()
            host = run(["dd", "if=/dev/zero", f"of={tmp_path}/host.out", "bs=64k",
                        "count=5", "oflag=direct", "status=none"])
            assert [w.wait(timeout=60) for w in writers] == [0, 0] and host.returncode == 0
            lines = top_lines_of(top)
        sums = group_sums(lines, "disk_writes")
        for pod, cid, n in pods:
            name = f"pod:{pod[:8]}" if group == "pod" else cid[:12]
            assert sums.get(name) == n, (name, sums)


@needs_podman
def test_run_mode_follows_a_containers_main_process(tmp_path):
    """iotrace -p on a container's main process (podman inspect's State.Pid): its children
    are followed; every process is in the container (its ID); its dd's 7 writes of 64 KiB
    are dd's own count."""
    vol = tmp_path / "vol"
    vol.mkdir()
    script = "while [ ! -e /data/go ]; do usleep 20000; done; " \
             "dd if=/dev/zero of=/data/x bs=64k count=7 oflag=direct; sleep 1"
    with Podman() as pm:
        a = pm.run("a", "sh", "-c", script, volume=vol)
        it = subprocess.Popen([str(IOTRACE), "--json", "-o", str(tmp_path / "r.json"), "-p",
                               str(a.pid)], stderr=subprocess.PIPE)
        assert b"attached" in it.stderr.readline()
        (vol / "go").touch()
        assert it.wait(timeout=60) == 0, it.stderr.read()
    d = json.loads((tmp_path / "r.json").read_text())
    procs = d["processes"][:-1]
    assert [c["container_id"] for c in d["containers"]] == [a.id] and d["host_processes"] == 0
    assert {p["container_id"] for p in procs} == {a.id} and procs[0]["pid"] == a.pid
    (dd,) = [p for p in procs if p["comm"] == "dd"]
    assert (dd["block"]["write"]["requests"], dd["block"]["write"]["bytes"]) == (7, 7 * 65536)


@needs_podman
def test_run_mode_names_a_removed_container(tmp_path):
    """iotrace --json -- podman run --rm --name N ... cat: the container is gone by the
    report, yet it is named N (the name podman was given), not by its short ID: its runtime
    is asked while the run sees it. Its cat is its only process; the rest are the host's."""
    with Podman() as pm:
        name = f"{containers.PREFIX}{os.getpid()}-rm"
        pm.started.append(name)  # removed at the end if --rm did not
        res = run([IOTRACE, "--json", "-o", tmp_path / "r.json", "--", "podman", "run",
                   "--rm", "--name", name, "--network", "none", pm.image, "cat", "/bin/sh"],
                  env=containers.ENV)
        assert res.returncode == 0, res.stderr
        assert name not in pm.names().values()
    d = json.loads((tmp_path / "r.json").read_text())
    (c,) = d["containers"]
    assert (c["container"], c["name"], c["runtime"]) == (name, name, "podman"), c
    procs = d["processes"][:-1]
    inside = [p for p in procs if p["container_id"] == c["container_id"]]
    assert "cat" in [p["comm"] for p in inside] and all(p["container"] == name for p in inside)
    assert d["host_processes"] + c["processes"] == len(procs)
    assert d["unknown_container_processes"] == 0


def test_top_filter_above_containers_keeps_them_apart(tmp_path):
    """top -j -c <a cgroup above two kubelet-shaped containers> --group container (as -c
    system.slice holds docker's scopes, or -c kubepods.slice every pod): each container's
    row (its ID's first 12 digits, no runtime knowing them) has exactly its writer's 17 and
    9 x 64 KiB O_DIRECT writes, not one "host" row (the filter's cgroup read as the
    container)."""
    gate = tmp_path / "go"
    wait = f"while [ ! -e {gate} ]; do sleep 0.01; done; exec dd if=/dev/zero " \
           f"of={tmp_path}/out.$$ bs=64k count=$0 oflag=direct status=none"
    pods = [(str(uuid.uuid4()), random_id(), n) for n in (17, 9)]
    with CgroupTree("above") as tree:
        top = top_json_lines(["-c", tree.path(""), "--group", "container"])
        writers = [tree.spawn_in(kubelet_shapes(pod, cid)[4][0], ["sh", "-c", wait, str(n)])
                   for pod, cid, n in pods]
        gate.touch()
        assert [w.wait(timeout=60) for w in writers] == [0, 0]
        lines = top_lines_of(top)
    sums = group_sums(lines, "disk_writes")
    for pod, cid, n in pods:
        assert sums.get(cid[:12]) == n, (cid[:12], sums)
    assert "host" not in sums, sums


def test_run_mode_container_gone_before_read_is_not_host(tmp_path):
    """iotrace --json -- sh: the shell stops iotrace, runs cat in a container-shaped cgroup
    (libpod-<id>.scope) of its own, removes it, then lets iotrace go on: the cgroup is gone
    before iotrace reads cat's row, so cat's container is not known, and it is counted as
    such (unknown_container_processes), never as the host's."""
    with CgroupTree("gone") as tree:
        cg = tree.base / f"libpod-{random_id()}.scope"
        back = tree.base / "back"
        script = f"""kill -STOP $PPID; mkdir {back} {cg}; echo $$ > {back}/cgroup.procs
sh -c 'echo $$ > {cg}/cgroup.procs; exec cat /etc/hostname' > /dev/null
rmdir {cg}; kill -CONT $PPID"""
        res = run([IOTRACE, "--json", "-o", tmp_path / "r.json", "--", "sh", "-c", script])
        assert res.returncode == 0, res.stderr
    d = json.loads((tmp_path / "r.json").read_text())
    procs = d["processes"][:-1]
    assert "cat" in [p["comm"] for p in procs] and d["containers"] == []
    assert d["unknown_container_processes"] >= 1
    assert d["host_processes"] + d["unknown_container_processes"] == len(procs)
