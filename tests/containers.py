"""Real containers for the tests (issue 39).

podman from Debian with runc and the project's own containers.conf (tests/containers/,
passed in CONTAINERS_CONF: the system's configuration is never changed); the image is
imported from `make container-rootfs`'s tarball (busybox-static and the workloads built
-static), no registry. Containers are named iotrace-test-PID-NAME and removed when the
`with` block ends, also on failure; those a killed run left behind are removed by the next.

Kubernetes pods are cgroups made in the shapes the kubelet makes them (both drivers, the
QoS classes) under a cgroup of the test's own in the unified hierarchy, processes moved into
them, all removed after.
"""
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

from helpers import ROOT

CONF = ROOT / "tests" / "containers" / "containers.conf"
ROOTFS = ROOT / ".output" / "container-rootfs.tar"
ENV = dict(os.environ, CONTAINERS_CONF=str(CONF))
for var in ("CONTAINER_HOST", "DOCKER_HOST"):
    ENV.pop(var, None)
PREFIX = "iotrace-test-"


def podman(*args, check=True, timeout=120):
    res = subprocess.run(["podman", *args], env=ENV, capture_output=True, text=True,
                         timeout=timeout)
    if check and res.returncode:
        raise AssertionError(f"podman {' '.join(args)}: {res.stderr.strip()}")
    return res


def why_not():
    """Why podman containers cannot run here, or None."""
    for tool in ("podman", "runc"):
        if not shutil.which(tool):
            return f"{tool} is not installed (scripts/deps.sh installs it)"
    if not ROOTFS.exists():
        return "no image tarball: make container-rootfs"
    return None


def image():
    """The image imported from the tarball, named after its contents."""
    digest = hashlib.sha256(ROOTFS.read_bytes()).hexdigest()[:12]
    name = f"localhost/iotrace-test:{digest}"
    if podman("image", "exists", name, check=False).returncode:
        podman("import", str(ROOTFS), name)
    # Earlier builds' images (one tag each) go; one in use by a container stays.
    tags = podman("images", "--format", "{{.Repository}}:{{.Tag}}", check=False).stdout
    for old in tags.split():
        if old.startswith("localhost/iotrace-test:") and old != name:
            podman("rmi", old, check=False)
    return name


def remove_leftovers():
    """Containers of earlier runs whose process is gone (a killed pytest)."""
    res = podman("ps", "-a", "--format", "{{.Names}}", check=False)
    for name in res.stdout.split():
        if not name.startswith(PREFIX):
            continue
        owner = name[len(PREFIX):].split("-", 1)[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            podman("rm", "-f", "-t", "0", name, check=False)


def run_args(short, image, volume, cmd):
    """`run` arguments (podman's and docker's alike) of a detached container named after
    this test run, with no network, volume on /data, running cmd (default: sleep)."""
    name = f"{PREFIX}{os.getpid()}-{short}"
    args = ["run", "-d", "--name", name, "--network", "none"]
    if volume:
        args += ["-v", f"{volume}:/data"]
    return name, args + [image, *(cmd or ["sleep", "3600"])]


class Container:
    """A running container: its name, ID, main process (host pid) and image."""

    def __init__(self, name, short, cid, pid, image):
        self.name, self.short, self.id, self.pid, self.image = name, short, cid, pid, image


class Podman:
    """Named containers started in a `with` block and removed at its end."""

    def __init__(self):
        self.started, self.service = [], None

    def __enter__(self):
        remove_leftovers()
        self.image = image()
        return self

    def run(self, short, *cmd, volume=None):
        name, args = run_args(short, self.image, volume, cmd)
        self.started.append(name)
        podman(*args)
        info = json.loads(podman("inspect", name).stdout)[0]
        return Container(name, short, info["Id"], info["State"]["Pid"], info["ImageName"])

    def names(self):
        """podman ps's names by full ID: the reference for the names iotrace shows."""
        out = podman("ps", "--no-trunc", "--format", "{{.ID}} {{.Names}}").stdout
        return dict(line.split() for line in out.splitlines() if line.strip())

    def start_service(self, sock):
        """podman's API (docker-compatible) on a socket of the test's own."""
        self.service = subprocess.Popen(["podman", "system", "service", "--time=0",
                                         f"unix://{sock}"], env=ENV,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(200):
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(str(sock))
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("podman system service did not start")

    def __exit__(self, *exc):
        if self.service:
            self.service.terminate()
            self.service.wait(timeout=30)
        if self.started:
            podman("rm", "-f", "-t", "0", *self.started, check=False)
        return False


def cgroup2_root():
    for line in open("/proc/self/mounts"):
        dev, mnt, fstype = line.split()[:3]
        if fstype == "cgroup2":
            return Path(mnt)
    return None


def random_id():
    return hashlib.sha256(uuid.uuid4().bytes).hexdigest()


def kubelet_shapes(pod, cid):
    """The cgroup paths a kubelet makes for a container of pod (UID) with ID cid, by driver
    and QoS class, with what they stand for: (path, runtime, qos)."""
    u = pod.replace("-", "_")
    sd = "kubepods.slice"
    return [
        (f"{sd}/kubepods-pod{u}.slice/cri-containerd-{cid}.scope", "containerd", "guaranteed"),
        (f"{sd}/kubepods-burstable.slice/kubepods-burstable-pod{u}.slice/"
         f"cri-containerd-{cid}.scope", "containerd", "burstable"),
        (f"{sd}/kubepods-besteffort.slice/kubepods-besteffort-pod{u}.slice/crio-{cid}.scope",
         "cri-o", "besteffort"),
        (f"{sd}/kubepods-burstable.slice/kubepods-burstable-pod{u}.slice/docker-{cid}.scope",
         "docker", "burstable"),
        (f"kubepods/pod{pod}/{cid}", "cri", "guaranteed"),
        (f"kubepods/burstable/pod{pod}/{cid}", "cri", "burstable"),
        (f"kubepods/besteffort/pod{pod}/{cid}", "cri", "besteffort"),
        (f"kubepods/besteffort/pod{pod}/crio-{cid}", "cri-o", "besteffort"),
    ]


class CgroupTree:
    """cgroups made below ROOT/iotrace-test-PID-NAME in the unified hierarchy, processes
    moved into them; everything killed and removed at the end of the `with` block."""

    def __init__(self, name):
        self.root = cgroup2_root()
        self.base = self.root / f"{PREFIX}{os.getpid()}-{name}"
        self.procs = []

    def __enter__(self):
        self.base.mkdir()
        return self

    def path(self, rel):
        """rel's path below the cgroup v2 root, as /proc/PID/cgroup shows it."""
        return "/" + str((self.base / rel).relative_to(self.root))

    def make(self, rel):
        (self.base / rel).mkdir(parents=True, exist_ok=True)

    def spawn_in(self, rel, argv, **kw):
        """Makes the cgroup (and its parents) and starts argv in it: the shell moves itself
        in, then execs argv, so argv does all it does there."""
        cg = self.base / rel
        cg.mkdir(parents=True, exist_ok=True)
        kw.setdefault("stdout", subprocess.DEVNULL)
        kw.setdefault("stderr", subprocess.DEVNULL)
        p = subprocess.Popen(["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(cg),
                              *argv], stdin=subprocess.DEVNULL, start_new_session=True, **kw)
        self.procs.append(p)
        want = f"0::{self.path(rel)}\n"
        for _ in range(500):  # until the shell has moved itself (or argv has finished)
            try:
                if want in open(f"/proc/{p.pid}/cgroup").read():
                    break
            except OSError:
                break
            time.sleep(0.01)
        return p

    def __exit__(self, *exc):
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        # Deepest first; a cgroup empties a moment after its last process is reaped.
        dirs = sorted((d for d in self.base.rglob("*") if d.is_dir()),
                      key=lambda d: len(d.parts), reverse=True) + [self.base]
        for d in dirs:
            for _ in range(100):
                try:
                    d.rmdir()
                    break
                except OSError:
                    time.sleep(0.02)
        return False


# ---- docker: a daemon of the test's own ----

def docker_why_not():
    for tool in ("dockerd", "docker", "containerd", "runc"):
        if not shutil.which(tool):
            return f"{tool} is not installed (scripts/deps.sh installs docker.io)"
    if not ROOTFS.exists():
        return "no image tarball: make container-rootfs"
    return None


class Docker:
    """dockerd with its own data root, exec root and socket below tmp (the system's
    /var/lib/docker and /run/docker.sock are never used), no iptables and no bridge, the
    cgroupfs driver (/docker/<id>); containers and the daemon removed at the end."""

    def __init__(self, tmp):
        self.tmp = Path(tmp)
        self.sock = self.tmp / "docker.sock"
        self.data = self.tmp / "data"
        self.env = dict(ENV, DOCKER_HOST=f"unix://{self.sock}")
        self.daemon, self.started = None, []

    def docker(self, *args, check=True, timeout=120):
        res = subprocess.run(["docker", *args], env=self.env, capture_output=True, text=True,
                             timeout=timeout)
        if check and res.returncode:
            raise AssertionError(f"docker {' '.join(args)}: {res.stderr.strip()}")
        return res

    def __enter__(self):
        ns = f"{PREFIX}{os.getpid()}"
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.log = open(self.tmp / "dockerd.log", "wb")
        self.daemon = subprocess.Popen(
            ["dockerd", "--data-root", str(self.data), "--exec-root", str(self.tmp / "exec"),
             "-H", f"unix://{self.sock}", "--pidfile", str(self.tmp / "dockerd.pid"),
             "--iptables=false", "--ip-masq=false", "--bridge=none",
             "--exec-opt", "native.cgroupdriver=cgroupfs", "--containerd-namespace", ns,
             "--containerd-plugins-namespace", ns + "-plugins"],
            stdout=self.log, stderr=subprocess.STDOUT, env=self.env)
        try:
            for _ in range(600):
                if self.docker("version", check=False, timeout=30).returncode == 0:
                    break
                if self.daemon.poll() is not None:
                    raise AssertionError("dockerd exited: " +
                                         (self.tmp / "dockerd.log").read_text()[-1500:])
                time.sleep(0.05)
            else:
                raise AssertionError("dockerd did not answer")
            self.image = "iotrace-test:" + hashlib.sha256(ROOTFS.read_bytes()).hexdigest()[:12]
            self.docker("import", str(ROOTFS), self.image)
        except BaseException:
            self.__exit__()
            raise
        return self

    def run(self, short, *cmd, volume=None):
        name, args = run_args(short, self.image, volume, cmd)
        self.started.append(name)
        self.docker(*args)
        info = json.loads(self.docker("inspect", name).stdout)[0]
        return Container(name, short, info["Id"], info["State"]["Pid"], info["Config"]["Image"])

    def names(self):
        out = self.docker("ps", "--no-trunc", "--format", "{{.ID}} {{.Names}}").stdout
        return dict(line.split() for line in out.splitlines() if line.strip())

    def __exit__(self, *exc):
        if self.started:
            self.docker("rm", "-f", *self.started, check=False)
        if self.daemon and self.daemon.poll() is None:
            self.daemon.terminate()
            try:
                self.daemon.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait()
        self.log.close()
        # Whatever the daemon left mounted below its roots (it unmounts on a clean stop).
        for line in reversed(open("/proc/self/mounts").read().splitlines()):
            mnt = line.split()[1]
            if mnt.startswith(str(self.tmp) + "/"):
                subprocess.run(["umount", "-l", mnt], check=False)
        return False
