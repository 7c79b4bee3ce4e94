"""Block I/O against the disk's own counters, request for request, on private loop disks that
only the test uses, so the window of /sys/block/<disk>/stat holds nothing else: merges (two
O_DIRECT writers interleaved at queue depth 128), flush sequences (fdatasync on a journaled
filesystem; a loop disk has a write cache and no FUA), write-zeroes and discard (blkdiscard),
buffered writes with fsync, random reads and writes at queue depth 256; in run mode, `top -j`
and `snoop -j` (docs/block.md, "Counted as the disk counts")."""
import json
import os
import signal
import subprocess
import threading
import time
from contextlib import contextmanager

import pytest

from helpers import IOTRACE, MIB

# /sys/block/<disk>/stat's fields (the kernel's Documentation/block/stat.rst), 0-based.
STAT = {"read_ios": 0, "read_merges": 1, "read_sectors": 2, "read_ticks_ms": 3,
        "write_ios": 4, "write_merges": 5, "write_sectors": 6, "write_ticks_ms": 7,
        "discard_ios": 11, "discard_sectors": 13, "discard_ticks_ms": 14,
        "flush_ios": 15, "flush_ticks_ms": 16}
COUNTS = ["read_ios", "read_sectors", "write_ios", "write_sectors", "discard_ios",
          "discard_sectors", "flush_ios"]


def sysfs_stat(disk):
    f = [int(x) for x in open(f"/sys/block/{disk}/stat").read().split()]
    return {k: f[i] for k, i in STAT.items()}


def delta(after, before):
    return {k: after[k] - before[k] for k in after}


@contextmanager
def loop_disk(tmp_path, scheduler, fs=None, size_mb=512):
    """A loop disk of its own (its image under tmp_path), with scheduler, and fs mounted on
    tmp_path/mnt when given; everything undone on the way out, also on failure."""
    img = tmp_path / "iotrace-disk-stat.img"
    mnt = tmp_path / "mnt"
    with open(img, "wb") as f:
        f.truncate(size_mb * MIB)
    dev = subprocess.run(["losetup", "-f", "--show", str(img)], check=True,
                         capture_output=True, text=True).stdout.strip()
    mounted = False
    try:
        disk = os.path.basename(dev)
        with open(f"/sys/block/{disk}/queue/scheduler", "w") as f:
            f.write(scheduler)
        if fs:
            # No lazy init: ext4lazyinit would zero inode tables behind the test's back.
            opts = ["-f"] if fs == "xfs" else ["-E", "lazy_itable_init=0,lazy_journal_init=0"]
            subprocess.run([f"mkfs.{fs}", "-q", *opts, dev], check=True)
            mnt.mkdir()
            # Nor the block bitmaps' prefetch that ext4lazyinit starts at mount, nor a
            # journal commit by its 5 s timer at a window's edge (only fsync and sync commit).
            opts = ["-o", "no_prefetch_block_bitmaps,commit=3600"] if fs == "ext4" else []
            subprocess.run(["mount", *opts, dev, str(mnt)], check=True)
            mounted = True
        subprocess.run(["sync"], check=True)
        settle(disk)
        yield dev, disk, mnt
    finally:
        if mounted:
            subprocess.run(["umount", str(mnt)], check=False)
        subprocess.run(["losetup", "-d", dev], check=False)
        img.unlink()


def settle(disk):
    """Waits until the disk has nothing in flight and its counters stand still for 200 ms."""
    last = None
    for _ in range(50):
        now = open(f"/sys/block/{disk}/stat").read()
        if now == last and open(f"/sys/block/{disk}/inflight").read().split() == ["0", "0"]:
            return
        last = now
        time.sleep(0.2)
    pytest.fail(f"{disk} never went quiet")


def quiet(disk):
    """Nothing left for the flusher to write in the window (a retried run dirtied metadata)."""
    subprocess.run(["sync"], check=True)
    settle(disk)


def fio(*args):
    return ["fio", "--output=/dev/null", "--ioengine=libaio", "--direct=1", "--bs=4k", *args]


# name -> (needs a filesystem, the command given (device, mount point)). Each is a case the
# kernel counts in its own way (block/blk-merge.c, blk-flush.c, blk-mq.c).
WORKLOADS = {
    # Interleaved 4 KiB blocks of two jobs, and a third writing anywhere in them (more
    # requests than the loop disk's 128 tags, so they wait in the scheduler): requests merge
    # there (block_rq_merge), and bios into waiting requests.
    "interleaved": (True, lambda dev, mnt: fio(
        "--name=a", f"--filename={mnt}/il", "--size=32M", "--iodepth=128", "--rw=write:4k",
        "--name=b", f"--filename={mnt}/il", "--size=32M", "--iodepth=128", "--rw=write:4k",
        "--offset=4k",
        "--name=c", f"--filename={mnt}/il", "--size=32M", "--iodepth=128", "--rw=randwrite",
        "--norandommap")),
    # Each fdatasync commits the journal: a write with PREFLUSH and FUA, sequenced as
    # pre-flush, data, post-flush on a disk without FUA.
    "fdatasync": (True, lambda dev, mnt: [
        "sh", "-c", f"for i in $(seq 100); do dd if=/dev/zero of={mnt}/s bs=4k count=1 "
        "oflag=append conv=notrunc,fdatasync status=none; done"]),
    "buffered_fsync": (True, lambda dev, mnt: [
        "dd", "if=/dev/zero", f"of={mnt}/b", "bs=1M", "count=32", "conv=fsync", "status=none"]),
    "randrw": (True, lambda dev, mnt: fio(
        "--name=r", f"--filename={mnt}/rr", "--size=64M", "--iodepth=256", "--rw=randrw",
        "--runtime=2", "--time_based")),
    # REQ_OP_WRITE_ZEROES: a write to the disk.
    "zeroes": (False, lambda dev, mnt: ["blkdiscard", "-z", "-o", "0", "-l", "8M", dev]),
    "discard": (False, lambda dev, mnt: ["blkdiscard", "-o", "0", "-l", "64M", dev]),
}


def prepare(name, dev, mnt):
    """The files a workload rewrites, laid out before the window opens."""
    files = {"interleaved": ("il", 33), "randrw": ("rr", 64)}
    if name in files:
        path, mib = files[name]
        subprocess.run(["dd", "if=/dev/zero", f"of={mnt}/{path}", "bs=1M", f"count={mib}",
                        "conv=fsync", "status=none"], check=True)
        settle(os.path.basename(dev))


def run_mode(cmd, disk, tmp_path):
    """(iotrace's disk_stat of the disk, the disk's delta, the report)."""
    out = tmp_path / "report.json"
    quiet(disk)
    before = sysfs_stat(disk)
    res = subprocess.run([IOTRACE, "--json", "-o", str(out), "--", *cmd],
                         capture_output=True, text=True)
    after = sysfs_stat(disk)
    assert res.returncode == 0, res.stderr
    report = json.loads(out.read_text())
    return report["totals"]["disk_stat"].get(disk, {}), delta(after, before), report


def files_match_processes(report, disk):
    """Each process's file rows (its files, its metadata, others' files) add up to its own
    block row on disk, per operation."""
    assert report["drops"]["file_blocks"] == 0
    for p in report["processes"]:
        for op, st in p["block"]["disks"].get(disk, {}).items():
            rows = [f["block"]["disks"][disk][op] for f in p["files"]
                    if f.get("block") and op in f["block"].get("disks", {}).get(disk, {})]
            assert (sum(r["requests"] for r in rows), sum(r["bytes"] for r in rows)) == \
                (st["requests"], st["bytes"]), (p["comm"], op, st["requests"], rows)


def charged_sum(report, disk):
    """Requests and bytes per operation of every process row and the other I/O, on disk."""
    sums = {}
    for p in report["processes"]:
        for op, st in p["block"]["disks"].get(disk, {}).items():
            r, b = sums.get(op, (0, 0))
            sums[op] = (r + st["requests"], b + st["bytes"])
    return sums


CASES = [(w, "mq-deadline", "ext4") for w in WORKLOADS if WORKLOADS[w][0]] + \
        [(w, "none", "ext4") for w in WORKLOADS if WORKLOADS[w][0]] + \
        [(w, "mq-deadline", "xfs") for w in ("interleaved", "fdatasync", "buffered_fsync")] + \
        [(w, s, None) for w in WORKLOADS if not WORKLOADS[w][0] for s in ("mq-deadline", "none")]


@pytest.mark.parametrize("name,scheduler,fs", CASES, ids=lambda x: str(x))
def test_run_mode_equals_the_disk(tmp_path, name, scheduler, fs):
    """Run mode's disk_stat equals the disk's own stat delta in every counted field, the
    process rows with the other I/O add up to it, and each one's file rows to it. The interleaved writers on mq-deadline are
    run until the disk saw merges (retried up to 6 times; each run must be exact)."""
    with loop_disk(tmp_path, scheduler, fs) as (dev, disk, mnt):
        prepare(name, dev, mnt)
        cmd = WORKLOADS[name][1](dev, mnt)
        for attempt in range(6):
            ours, theirs, report = run_mode(cmd, disk, tmp_path)
            assert {k: ours.get(k, 0) for k in COUNTS} == {k: theirs[k] for k in COUNTS}, \
                (attempt, ours, theirs, report["drops"])
            files_match_processes(report, disk)
            sums = charged_sum(report, disk)
            for op in ("read", "write", "discard", "flush"):
                want = (theirs[f"{op}_ios"], theirs[f"{op}_sectors"] * 512 if op != "flush" else 0)
                assert sums.get(op, (0, 0)) == want, (op, sums, theirs)
            merged = theirs["read_merges"] + theirs["write_merges"]
            if name != "interleaved" or scheduler != "mq-deadline" or merged:
                break
        else:
            pytest.fail("the interleaved writers never merged on mq-deadline in 6 runs")
        if name == "fdatasync":
            assert theirs["flush_ios"] >= 100 and theirs["write_ios"] >= 200, theirs
        if name == "zeroes":
            assert theirs["write_ios"] >= 1 and theirs["write_sectors"] == 8 * MIB // 512
        if name == "discard":
            assert theirs["discard_ios"] >= 1 and theirs["discard_sectors"] == 64 * MIB // 512


def test_run_mode_ticks_follow_the_disk(tmp_path):
    """The ms columns are the disk's own clock (its requests' start stamps): within 5% + 5 ms
    of the disk's ticks for the random reads and writes."""
    with loop_disk(tmp_path, "mq-deadline", "ext4") as (dev, disk, mnt):
        for _ in range(3):
            prepare("randrw", dev, mnt)
            ours, theirs, report = run_mode(WORKLOADS["randrw"][1](dev, mnt), disk, tmp_path)
            # A completion the kernel skipped adds no time (docs/block.md, "Late
            # completions"; the count is every disk's): such a run bounds the ticks from
            # above only, and runs again, at most twice.
            skipped = report["drops"]["block_completions_unseen"]
            for k in ("read_ticks_ms", "write_ticks_ms"):
                assert theirs[k] > 0
                assert ours[k] <= 1.05 * theirs[k] + 5, (k, ours, theirs)
                assert skipped or ours[k] >= 0.95 * theirs[k] - 5, (k, ours, theirs)
            if not skipped:
                break


class Lines:
    """A process's stdout lines, read by a thread as they come."""

    def __init__(self, proc):
        self.proc, self.lines = proc, []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)

    def wait_for(self, n, timeout=10):
        end = time.monotonic() + timeout
        while len(self.lines) < n and time.monotonic() < end:
            time.sleep(0.02)
        assert len(self.lines) >= n, self.proc.stderr.read()

    def wait_past(self, ns, timeout=30):
        """Waits for a line of top -j whose block_until_ns is past ns (CLOCK_MONOTONIC): every
        request completed before ns is in it or an earlier line (docs/json.md), however late
        a loaded machine lets top refresh."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.lines and json.loads(self.lines[-1])["block_until_ns"] > ns:
                return
            time.sleep(0.02)
        pytest.fail(f"no line of top past {ns} ns within {timeout} s")

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        assert self.proc.wait(timeout=20) == 0, self.proc.stderr.read()
        self.thread.join(timeout=5)
        return self.lines


def top_window(cmd, disk):
    """top -j's disk counts of every interval that can hold the workload's requests, and the
    disk's delta over the workload: top starts first, ends after a line whose
    block_until_ns is past the workload's end."""
    quiet(disk)
    top = subprocess.Popen([IOTRACE, "top", "-j", "-d", "0.25"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    lines = Lines(top)
    lines.wait_for(1)
    first = len(lines.lines)
    before = sysfs_stat(disk)
    subprocess.run(cmd, check=True, capture_output=True)
    after = sysfs_stat(disk)
    lines.wait_past(time.clock_gettime_ns(time.CLOCK_MONOTONIC))
    objs = [json.loads(x) for x in lines.stop()[first:]]
    return objs, delta(after, before)


TOP_CASES = ["interleaved", "fdatasync", "zeroes", "randrw", "buffered_fsync"]


@pytest.mark.parametrize("name", TOP_CASES)
def test_top_equals_the_disk(tmp_path, name):
    """top -j's machine.disks, summed over the intervals, equals the disk's delta: reads and
    writes, requests and bytes (top shows those two directions)."""
    with loop_disk(tmp_path, "mq-deadline", "ext4" if WORKLOADS[name][0] else None) as \
            (dev, disk, mnt):
        prepare(name, dev, mnt)
        objs, theirs = top_window(WORKLOADS[name][1](dev, mnt), disk)
        ours = {"read_ios": 0, "read_sectors": 0, "write_ios": 0, "write_sectors": 0}
        for o in objs:
            d = next((x for x in o["machine"]["disks"] if x["disk"] == disk), None)
            if d:
                ours["read_ios"] += d["disk_reads"]
                ours["read_sectors"] += d["disk_read_bytes"] // 512
                ours["write_ios"] += d["disk_writes"]
                ours["write_sectors"] += d["disk_write_bytes"] // 512
        assert ours == {k: theirs[k] for k in ours}, (ours, theirs)


def snoop_window(cmd, disk):
    quiet(disk)
    snoop = subprocess.Popen([IOTRACE, "snoop", "-j", "-d", disk], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    # snoop says on stderr when it traces; its header goes to stdout only in text mode
    assert "tracing block I/O" in snoop.stderr.readline()
    lines = Lines(snoop)
    before = sysfs_stat(disk)
    subprocess.run(cmd, check=True, capture_output=True)
    after = sysfs_stat(disk)
    time.sleep(0.5)  # two of snoop's sweeps
    events = [json.loads(x) for x in lines.stop()]
    return events, delta(after, before)


def snoop_counts(events):
    """snoop -j's events as the disk's counters: requests and sectors per operation."""
    ours = {k: 0 for k in COUNTS}
    for e in events:
        op = {"R": "read", "W": "write", "D": "discard", "F": "flush"}.get(e["op"])
        assert op, e
        ours[f"{op}_ios"] += 1
        if op != "flush":
            ours[f"{op}_sectors"] += e["bytes"] // 512
    return ours


@pytest.mark.parametrize("name", TOP_CASES + ["discard"])
def test_snoop_equals_the_disk(tmp_path, name):
    """snoop -j's events, per operation, equal the disk's delta in requests and bytes; the
    summary counts every event and loses none."""
    with loop_disk(tmp_path, "mq-deadline", "ext4" if WORKLOADS[name][0] else None) as \
            (dev, disk, mnt):
        prepare(name, dev, mnt)
        events, theirs = snoop_window(WORKLOADS[name][1](dev, mnt), disk)
        summary = events.pop()
        assert summary["summary"] and summary["events"] == len(events)
        assert summary["lost_events"] == 0
        ours = snoop_counts(events)
        assert ours == {k: theirs[k] for k in COUNTS}, (ours, theirs)


@contextmanager
def frozen(mnt):
    """mnt's filesystem frozen (fsfreeze): writes to it wait; thawed on the way out."""
    subprocess.run(["fsfreeze", "-f", str(mnt)], check=True)
    try:
        yield
    finally:
        subprocess.run(["fsfreeze", "-u", str(mnt)], check=False)


def test_snoop_counts_a_request_issued_before_it(tmp_path):
    """A journal-like write (O_DIRECT, O_DSYNC: FUA, on a disk without FUA a data step and a
    post-flush) issued before snoop attaches and completed after: its data step's bytes
    are counted with it, as the disk counts them, though no program saw it begin. The
    request is held in flight by a loop disk whose image is on a frozen filesystem (the
    loop's worker waits to write it), snoop starts, the filesystem thaws."""
    with loop_disk(tmp_path, "mq-deadline", "ext4") as (_, _, outer), \
            loop_disk(outer, "mq-deadline", size_mb=64) as (dev, disk, _):
        writer = snoop = None
        try:
            with frozen(outer):
                writer = subprocess.Popen(["dd", "if=/dev/zero", f"of={dev}", "bs=4k",
                                           "count=1", "oflag=direct,dsync", "status=none"])
                end = time.monotonic() + 10
                while open(f"/sys/block/{disk}/inflight").read().split()[1] == "0":
                    assert time.monotonic() < end, "the write never reached the disk"
                    time.sleep(0.02)
                snoop = subprocess.Popen([IOTRACE, "snoop", "-j", "-d", disk],
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True)
                assert "tracing block I/O" in snoop.stderr.readline()
                lines = Lines(snoop)
                before = sysfs_stat(disk)
            assert writer.wait(timeout=30) == 0
            settle(disk)
            theirs = delta(sysfs_stat(disk), before)
            time.sleep(0.5)  # two of snoop's sweeps
            events = [json.loads(x) for x in lines.stop()]
            snoop = None
        finally:
            for p in (writer, snoop):
                if p and p.poll() is None:
                    p.kill()
                    p.wait()
    summary = events.pop()
    assert summary["events"] == len(events) and summary["lost_events"] == 0, summary
    # Its 4 KiB, and the empty write with a pre-flush of O_DSYNC's fsync after it.
    assert theirs["write_sectors"] == 8, (theirs, events)
    held = [e for e in events if e["op"] == "W" and e["bytes"]]
    assert len(held) == 1 and held[0]["charged_by"] is None and held[0]["pid"] == 0, events
    ours = snoop_counts(events)
    assert ours == {k: theirs[k] for k in COUNTS}, (ours, theirs, events)


def fio_log(path):
    """fio's per-I/O completion log: (unix ms, bytes) of every I/O."""
    out = []
    for line in open(path):
        f = [x.strip() for x in line.split(",")]
        out.append((int(f[0]), int(f[3])))
    return out


def test_top_against_fio_per_io_log(tmp_path):
    """top -j against fio's log of each of its reads (random 4 KiB O_DIRECT at queue depth
    64, full speed, 1 s; times on CLOCK_MONOTONIC), 10 runs. After every line, the reads top
    has shown so far for fio's file, fio's process and the header's disk include every read
    fio reaped before the line's block_until_ns. fio stamps a read when it reaps it, after the
    kernel completed it and iotrace counted it; a stamp t is the job's start in whole
    milliseconds plus the whole milliseconds since (fio 3.33's stat.c, add_log_sample: two
    values rounded down, each by up to 1 ms), so the read was reaped before t + 2 ms: the
    bound below, sound and no looser. fio measures the time since its start on
    CLOCK_MONOTONIC too (clocksource=clock_gettime, not its own TSC calibration). All lines
    together hold every read, in the file's row and the header's disk (which equals the
    disk's own delta); fio's process rows hold them too (and whatever fio read from other
    disks)."""
    with loop_disk(tmp_path, "mq-deadline", "ext4") as (dev, disk, mnt):
        prepare("randrw", dev, mnt)
        for run in range(10):
            log = tmp_path / f"lat{run}"
            top = subprocess.Popen([IOTRACE, "top", "-j", "-d", "0.2"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
            lines = Lines(top)
            lines.wait_for(1)
            first = len(lines.lines)
            before = sysfs_stat(disk)
            subprocess.run(fio("--name=r", f"--filename={mnt}/rr", "--size=64M",
                               "--iodepth=64", "--rw=randread", "--runtime=1", "--time_based",
                               f"--write_lat_log={log}", "--log_avg_msec=0",
                               "--log_alternate_epoch=1", "--log_alternate_epoch_clock_id=1",
                               "--clocksource=clock_gettime"),
                           check=True)
            theirs = delta(sysfs_stat(disk), before)
            lines.wait_past(time.clock_gettime_ns(time.CLOCK_MONOTONIC))
            objs = [json.loads(x) for x in lines.stop()[first:]]
            reads = fio_log(f"{log}_clat.1.log")
            per_proc = file_reads = head_reads = head_bytes = 0
            for i, o in enumerate(objs):
                file_reads += sum(f["disk_reads"] for f in o["files"] if f["file"] == f"{mnt}/rr")
                per_proc += sum(p["disk_reads"] for p in o["processes"] if p["comm"] == "fio")
                d = next((x for x in o["machine"]["disks"] if x["disk"] == disk), None)
                head_reads += d["disk_reads"] if d else 0
                head_bytes += d["disk_read_bytes"] if d else 0
                until_ms = o["block_until_ns"] / 1e6
                done = sum(1 for t, _ in reads if t + 2 <= until_ms)
                assert done <= min(file_reads, per_proc, head_reads), \
                    str((run, i, until_ms, done, file_reads, per_proc, head_reads,
                         [(p.get("pid"), p["comm"], p["disk_reads"]) for p in o["processes"]
                          if p["disk_reads"]]))
            assert file_reads == len(reads) and per_proc >= len(reads), \
                (run, file_reads, per_proc, len(reads))
            assert (head_reads, head_bytes // 512) == (theirs["read_ios"], theirs["read_sectors"])
            assert head_bytes == sum(b for _, b in reads), (run, head_bytes)
