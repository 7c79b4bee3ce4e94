#!/usr/bin/env python3
"""Write docs/kernels.md from the kernel matrix's last run and the host's `iotrace info`.

`make test-kernels` (tests/test_kernels.py) leaves each booted flavour's results in
.output/guest/FLAVOUR/result/out/ (its `iotrace info --json`, its cost runs); this adds the
host's kernel as the first column and writes the support table (kernel x feature x hook),
the builds, and the cost measured inside each guest (TCG: only ratios mean anything).
"""
import json
import statistics
import subprocess
import sys
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import guest  # noqa: E402

GUEST = ROOT / ".output" / "guest"
DOC = ROOT / "docs" / "kernels.md"


def label(line):
    """A kernel line's column: its suite, flavour and architecture ("trixie", "bookworm
    PREEMPT_RT", "bookworm arm64")."""
    k = guest.KERNELS[line]
    ubuntu = {"noble": "Ubuntu 24.04 (noble)", "jammy": "Ubuntu 22.04 (jammy)"}
    if k.suite.split()[0] in ubuntu:  # its hardware-enablement kernels: "noble-6.17"
        return ubuntu[k.suite.split()[0]] + (" HWE" if line not in ubuntu else "")
    parts = [k.suite.split()[0]] + ([k.flavour] if k.flavour != "generic" else []) + \
        ([k.arch] if k.arch != "amd64" else [])
    return " ".join(parts)

INTRO = """# Kernels

iotrace asks the running kernel what it has — its BTF (tracepoints, functions, kfuncs) and,
for fentry and kprobes, whether attaching works — and never compares version numbers
(user/kernel/tracer_hooks.c). Two choices follow:

- **The build of the programs.** The kernel side is compiled four times from one source
  (bpf/maps.bpf.h): *full* (kfuncs `bpf_rdonly_cast` and the task VMA iterator), *no task
  VMA iterator*, *no kfuncs*, and *compat* (below: kernels without `bpf_loop`). A kfunc a kernel lacks fails the load of every program
  of an object, so the loader picks the build the kernel can load. Without
  `bpf_rdonly_cast`, fields reached through a pointer that came from a number (an fd
  table's slot, a global function's argument) are read with `bpf_probe_read_kernel`, one
  helper call each; tracepoint and fentry arguments are walked directly. Without the VMA
  iterator, `--stacks` reads a process's mappings from `/proc/PID/maps` when the kernel
  says they changed, so a process must still run then for its frames to be named.
- **Each event's hook.** Every event the programs use is named after its tracepoint on
  the kernel iotrace is written against. Where the kernel lacks it, the hook is fentry or
  fexit on the function the tracepoint sits in (same task, same moment:
  bpf/fallbacks.bpf.c), a kprobe where fentry cannot attach (6.1's trampolines take at
  most six arguments, and `__iomap_dio_rw` has seven), or an older tracepoint
  (`block_getrq` for `block_io_start`, `io_uring_submit_sqe` for `io_uring_submit_req`,
  the older argument lists of `io_uring_complete` and `sched_process_exit`). A group of
  events none of whose ways works makes its numbers `n/a` with the reason; without
  syscalls, processes or block I/O iotrace does not start and says why.

`iotrace info` prints all of this for the machine it runs on; the JSON report carries it
as `"kernel"` (docs/json.md). `IOTRACE_DISABLE_TRACEPOINTS=a,b` switches events off (every
way of them), for tests; `IOTRACE_BUILD=noiter|nokfunc|compat` loads a build with fewer
kfuncs on a kernel that has them all, to measure what the older kernels' build costs on one
machine.

## The 5.x kernels: the compat build

The oldest kernel iotrace supports is 5.10 (Debian 11, Amazon Linux 2; 5.14 of RHEL 9 and
5.15 of Ubuntu 22.04 lie between): it is the oldest long-term kernel still in service, and
the oldest with everything iotrace cannot do without — BTF and `tp_btf` programs (5.5),
BPF ring buffers (5.8), map element iterators (5.9, the sweep of skipped block
completions). Older kernels lack a ring buffer, the only stream iotrace's processes and
snoop use. What the programs use that 5.10 lacks, and what the *compat* build
(bpf/compat.bpf.h) does instead, chosen where the kernel has no `bpf_rdonly_cast` and a
trial load says it has no `bpf_loop` (so a kernel with one of them keeps its build):

| kernel feature | since | on 5.10–5.16 |
| --- | --- | --- |
| `bpf_loop` (5.17), callbacks as subprograms (5.13) | 5.17 | bounded loops the verifier unrolls; a search's step over a bitmap's words (slots, free ledger entries, a range's page chunks) is a global function, verified once, so the search is calls |
| atomic fetch, OR, AND, compare-and-swap, exchange | 5.12 | read-modify-write under a lock (a hash map insert with `BPF_NOEXIST`); plain atomic adds stay, a count's value read back after its add (5.10 refuses a program holding one fetch-add, dead code included) |
| `bpf_get_current_task_btf` | 5.11 | `bpf_get_current_task`, fields read with CO-RE probe reads |
| `bpf_task_pt_regs` | 5.15 | the syscall number of a rename read from the top of the task's kernel stack |
| `bpf_find_vma` | 5.17 | none: `--stacks` n/a, the interpreter an exec mapped is not told apart |
| `block_getrq(bio)` | 5.11 | `block_getrq(q, bio, rw)` |
| `writeback_dirty_folio`, `struct folio` | 5.17 | `writeback_dirty_page` (one base page) |
| `mm_filemap_get_pages` / `filemap_get_pages`, `page_cache_ra_order`, the readahead state in `readahead_control`, `mm_filemap_add_to_page_cache(folio)` | 5.12, 5.18, after 5.10, 5.16 | on 5.10: `fexit generic_file_buffered_read` (the pages a read returned: its `ki_pos` moved past them), `fentry page_cache_sync_ra`/`page_cache_async_ra` with the state beside the control, the window from `page_cache_ra_unbounded` (`do_page_cache_ra` is inlined in `ondemand_readahead`, whose fentry tells a read's window from the mmap read-around), the tracepoint with its page; on 5.15: `fexit filemap_get_pages` with its pagevec, `fentry page_cache_async_ra` with a page, `ondemand_readahead` with a bool, the windows as on 5.10 |
| lookup-and-delete of a hash map's element | 5.14 | a lookup and a delete (the page bitmaps' chunks, read once their entry is retired) |
| `io_uring_req_failed`, `io_uring_cqe_overflow` | 5.18, 5.19 | none: io_uring n/a |
| `bpf_rdonly_cast`, the task VMA iterator | 6.2, 6.7 | as the *no kfuncs* build |

The compat build costs more per event than the others (a helper call per task field read,
a lock around the rare bit claims), and only kernels that need it load it: the other builds'
programs are the same as before it. Its lock is a hash map insert, which a program nested
on the same CPU (an interrupt's) cannot get while the interrupted one holds it: a call whose
ledger row needed it then is lost and counted (`drops.file_rows`, shown as lost; one call of
a tar's in one run of the bullseye line), never silently.

**Status (2026-11-26): loaded whole on 5.10.** Debian 11's 5.10.0-46 (`bullseye` in
scripts/guest.py) chooses the compat build, its block hooks (`block_getrq` with its queue,
`writeback_dirty_page`) and `fentry __iomap_dio_rw` for O_DIRECT; its verifier takes every
program (sys_exit 60,161 instructions, sys_enter 32,372, exec 6,720, fork 4,565; 2.8 s to
load under TCG). The matrix's bullseye line checks there: `info` (the build, each hook,
io_uring and `--stacks` n/a with their reasons), syscalls of tr2u, copy, readall, a
pipeline and tar against `strace -f -c`, files of tar, sqlite and copy against `strace -ff
-yy`, lab note 004 against `fincore` in each fadvise mode (normal 64 MiB + 128 KiB
resident, sequential + 384 KiB, random exactly 64 MiB, O_DIRECT none: iotrace's added
pages, unused readahead and requested pages equal to them; one sync window and 512 async
ones of 32 pages in the normal read, as 6.1 counts them), block bytes against the disk's
counters (the cold read's pages added = its block bytes), O_DIRECT and a dd's writeback
charged, snoop, and a storm of 2,000 processes (one in 7 exec'd, one in 4 with three
threads) each exact by its own arithmetic (`storm`: calls, name, exit status; the exit
status as wait(2) gives it, where `sched_process_exit` has no `group_dead`). In one run of
the line alone (guest time): note 004 takes 26 s, the storm 47 s, of a 193 s boot. Not yet:
io_uring (5.10's tracepoints), `--stacks` and the ELF interpreter of an exec (no
`bpf_task_pt_regs`, `bpf_find_vma`), the RT flavour's boot (Debian's mirror answers 404
for its 5.10.0-46 packages, signed and unsigned, which its lists still name; the cloud
flavour boots from its signed image, the same kernel), and top and serve, untested there
(their
`-c`/`--container` filters call `bpf_get_current_ancestor_cgroup_id`, which 5.10 may not
offer tracing programs).
What 5.10's verifier refused on the way, each now avoided in bpf/compat.bpf.h's build: the
slot search unrolled over 256 words (past a million instructions), a fetch-add anywhere in
a program ("BPF_STX uses reserved fields"), a field its BTF names otherwise (`rq_disk`, a
`refcount_t` request count, `iov_iter.type`), a variable-size read into stack not all
written. `tests/test_toolchain.py` checks the object for the instructions 5.10 refuses
unwalked, `tests/test_run.py` loads the build on the host's verifier (`IOTRACE_BUILD=compat`).

## How it is checked

`make test` boots Debian's own kernel packages, the newest of each line of
`KERNELS` in scripts/guest.py (suite, packages, architecture, flavour: adding a kernel is
one entry): bookworm's 6.1 in its generic, cloud and PREEMPT_RT flavours, trixie's 6.12,
the 7.x of sid and of trixie-backports (from 7.x the kernel is in `linux-binary-unsigned-*`
and the modules, `.ko.xz`, in `linux-modules-*`), bullseye's 5.10, on arm64 bookworm's 6.1
and trixie's 6.12, and Ubuntu 24.04's own 6.8 (`noble`: the kernel most machines between
6.1 and 6.12 run; from Ubuntu's archive, whose signing keys come from Debian's
`ubuntu-keyring` package; its modules are `.ko.zst`), and Ubuntu 22.04's 5.15 (`jammy`,
from the same archive: a kernel of the 5.11-5.16 range, with task BTF helpers and fetch
atomics but neither `bpf_loop` nor folios, where the compat build loads as on 5.10 and
bullseye's cases pass; its page cache takes ways of its own: the readahead state inside
`readahead_control` as in 6.x, but `page_cache_async_ra` with a page, `ondemand_readahead`
with a bool (its windows from `page_cache_ra_unbounded`, as on 5.10), and
`filemap_get_pages` with a pagevec). Its line also runs serve, top, compare and `--trace`:
Ubuntu's `kernel.unprivileged_bpf_disabled = 2` refuses a map read without CAP_BPF there,
so serve keeps CAP_BPF alone as nobody and says so (docs/prometheus.md, "Privileges").
They are fetched with `apt-get download` through an apt configuration of the project's own (scripts/debian.py: lists, cache and sources under `.output/apt/`, the
system's sources never read or changed) into `.output/kernels/`, and booted under
`qemu-system-x86_64 -accel tcg,thread=single` (one host thread for the vCPUs: with one each, a
vCPU ran a stale int3 of a static branch the other had patched, and the guest died) or
`qemu-system-aarch64 -M virt -cpu max` (these hosts are VMs: no KVM), two at a time from the start of `make test`, QEMU at nice 19 beside the
host's tests (their checks run last), with an initramfs holding busybox, iotrace, the workloads and
the reference tools (scripts/guest.py; arm64's from Debian's arm64 packages, unpacked into
the sysroot `make ARCH=arm64` builds against), and checks every feature against
references taken in the same guest
(tests/test_kernels.py; `make test-kernels` runs only that): syscall counts against
`strace -f -c`, per-file calls and bytes against `strace -ff -yy` (tar, sqlite3, a copy),
lab note 004's readahead on a disk at `read_ahead_kb` 128 against `fincore`, block bytes
against `/sys/block/vda/stat`, O_DIRECT bytes, writeback charged to the dirtier, io_uring
against the workload's own counts, `snoop`, `serve`'s metrics against strace, `compare`,
`--trace` against the report, `--stacks` (frame pointers and DWARF) against the
workload's named functions, and on PREEMPT_RT (where the ledger's grace period is
membarrier's) a 12,000-file tar with nothing lost (50,000 in `make soak`). Under arm64
emulation a syscall traced by strace costs ~12 ms, so the arm64 guests run the checks once each (syscalls and files
against strace, note 004, block, O_DIRECT, io_uring, snoop, top, --stacks, info) and not
serve, compare, --trace or the identity cases. What a kernel line offers (its build, each
event's way, what is n/a and why) is stated per line in tests/test_kernels.py (`FACTS`) and
checked against its `iotrace info --json`. This page is written from that run by
`make kernels-doc` (scripts/kernels_doc.py).

arm64's 6.1 has no ftrace direct calls: fentry programs load there but do not attach
(ENOTSUPP), and the page-cache events have no kprobe way yet, so on that kernel page cache
and readahead are `n/a` with that reason (`resident_pages` is still read, with mincore).
Kernels before 6.5 have no cachestat(2): a file's `resident_pages` comes from mmap and
mincore(2) there, as fincore reads it, and its other residency fields are null with that
reason (docs/json.md).

### Ubuntu's hardware-enablement kernels (5.19 to 7.0)

Most machines run a kernel between 6.2 and 6.17, and Ubuntu ships one of nearly every
release of that range as a hardware-enablement (HWE) kernel: jammy-updates 5.19, 6.2, 6.5
(and 6.8), noble-updates 6.11, 6.14, 6.17 and 7.0. Each is a line of scripts/guest.py
(`jammy-6.5`, `noble-6.17`, ...: the unsigned image and the modules of that major.minor,
the newest build Ubuntu has). Two are in `make test`, each with a short list of cases:
`noble-6.17` (info, syscalls, note 004, block: ~3 min of guest time) and `jammy-6.2` (the
same and `--stacks`: ~2.5 min; the build without the task VMA iterator, 6.1's hooks and a
verifier that refused what 6.1's and 6.5's take, below); the other five boot in
`make soak` with the LEAN cases (~3-6 min each; 6.5, 6.11, 6.14 and 7.0 were swept with
all of them but files and top, which 6.2 and 6.17 ran).
What each takes, from its `iotrace info` and checked by its line's `FACTS`
(tests/test_kernels.py), in the sweep of 2026-11-26:

- **5.19** (5.19.0-50): the *no kfuncs* build (no `bpf_rdonly_cast` yet) with 6.1's hooks
  (`block_getrq`, fentry on the readahead functions, fexit `filemap_get_pages` with its
  iterator, `__iomap_dio_rw` by kprobe: its seven arguments are more than that kernel's
  trampolines take), but io_uring's tracepoints still with their 5.x arguments (the
  request passed as `void *`): io_uring is n/a there, with that reason. Its folio has
  neither `_folio_order` nor `_flags_1` (5.16-6.0: the order is the first tail page's
  `compound_order`), which refused the load until `folio_order` (bpf/pagecache.bpf.c) read
  it there. Its soak line runs info, syscalls, note 004 and block.
- **6.2** (6.2.0-39): `bpf_rdonly_cast` but no task VMA iterator: the *no task VMA
  iterator* build, 6.1's hooks otherwise.

  Both refused `sys_exit` at first, in every build but compat ("invalid indirect read from
  stack": a variable-size `bpf_probe_read_user` of an iovec array into stack not written
  before, which 6.1's and 6.5's verifiers take); the array is now zeroed first in every
  build (bpf/syscalls.bpf.c, `iovec_bytes`).
- **6.5** (6.5.0-45): the *no task VMA iterator* build (`--stacks` reads
  `/proc/PID/maps`: frames of exited processes unnamed) with 6.8's hooks: `block_io_start`,
  `io_uring_submit_req` and the O_DIRECT tracepoints are there; the readahead functions by
  fentry, `filemap_get_pages` by fexit with its 6.5 arguments (a count, not the iterator),
  `filemap_fault`/`filemap_map_pages` by fentry/fexit, `sched_process_exit` and
  `io_uring_complete` with their older arguments. Every LEAN case passes.
- **6.11** (6.11.0-29): the full build, the same hooks as 6.8's (`ondemand_readahead` is
  gone; `page_cache_ra_order` by fentry). Every LEAN case passes.
- **6.14** (6.14.0-37): the full build; the page cache's `mm_filemap_*` tracepoints, the
  timestamp tracepoints (renamed files get their new names at once) and
  `io_uring_complete` with its cqe are there; the readahead functions by fentry and
  `sched_process_exit` without `group_dead` remain. Every LEAN case passes.
- **6.17** (6.17.0-42): as 6.14, and `sched_process_exit` with `group_dead`: only the four
  readahead events are not tracepoints (fentry with their older arguments). Every LEAN case
  passes.
- **7.0** (7.0.0-44): every tracepoint, as Debian's 7.x. Every LEAN case passes.

In every line, the counts equal their references in the same guest: tr2u's
4,044 calls, tar's ~870 and the copy's, readall's and a pipeline's equal `strace -f -c`'s
call for call; note 004 leaves 64 MiB + 128 KiB resident in NORMAL mode (fincore; iotrace's
added pages and 128 KiB of unused readahead equal it), 64 MiB in RANDOM and nothing with
O_DIRECT; SEQUENTIAL leaves 64 MiB + 384 KiB up to 6.14 and 64 MiB + 256 KiB from 6.17 (its
rounding of async windows), iotrace's added and unused pages equal to fincore's each time;
a cold read's block bytes equal `/sys/block/vda/stat`'s delta (32.1 MiB on 6.5-6.14, 40.0
MiB on 6.17 and 7.0).
"""


def host_info():
    out = subprocess.run([str(ROOT / "iotrace"), "info", "--json"], capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)


def guest_info(flavour):
    path = GUEST / flavour / "result" / "out" / "info" / "info.json"
    return json.loads(path.read_text()) if path.exists() else None


def hook_cell(info, event):
    h = next((h for h in info["hooks"] if h["event"] == event), None)
    if not h or not h["kind"]:
        return "n/a"
    kind = {"tp_btf": "tracepoint"}.get(h["kind"], h["kind"])
    if h["target"] == event:
        return kind + (", its older arguments" if h.get("way", 0) > 0 else "")
    return f"{kind} `{h['target']}`"


def feature_cell(info, key):
    f = info["features"][key]
    if key == "stacks" and f["available"]:
        return "yes" if f["exited_processes"] else "yes, frames of exited processes unnamed"
    return "yes" if f["available"] else f"n/a: {f['reason']}"


def cost(flavour):
    """tr2u's own time under each tracer in the guest, × untraced (medians of three)."""
    d = GUEST / f"{flavour}-cost" / "result" / "out" / "cost"  # make soak: booted alone
    if not d.exists():
        return None
    ns = {k: statistics.median(int((d / f"{k}.{i}").read_text().split()[0]) for i in (1, 2, 3))
          for k in ("plain", "floor", "iotrace", "notime")}
    startup = [float(p.read_text().split("open+load")[1].split()[0])
               for p in sorted(d.glob("startup.*")) if "open+load" in p.read_text()]
    return {k: v / ns["plain"] for k, v in ns.items()} | {
        "plain_ms": ns["plain"] / 1e6, "startup": statistics.median(startup) if startup else None}


def table(columns, rows):
    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def main():
    host = host_info()
    infos = [(f"this host: {host['kernel']['release']} ({host['kernel']['machine']})", host)]
    lines = [line for line in guest.KERNELS if guest_info(line) is not None]
    if not lines:
        print("kernels_doc: no results of the kernel matrix: run `make test-kernels` first",
              file=sys.stderr)
        return 1
    for line in guest.KERNELS:  # lines booted outside `make test` (bullseye's cloud, RT)
        if line not in lines:
            print(f"kernels_doc: no results for {line}: left out", file=sys.stderr)
    for line in lines:
        info = guest_info(line)
        infos.append((f"{label(line)} ({info['kernel']['release']})", info))
    cols = ["", *[name for name, _ in infos]]
    keys = ["syscalls", "page_cache", "direct_io", "block", "io_uring", "stacks"]
    names = {"syscalls": "syscalls, processes, files", "page_cache": "page cache, readahead",
             "direct_io": "O_DIRECT", "block": "block I/O, writeback, snoop",
             "io_uring": "io_uring", "stacks": "--stacks"}
    out = [INTRO, f"## Support (matrix run of {date.today()})", "",
           table(cols, [[names[k], *[feature_cell(i, k) for _, i in infos]] for k in keys]),
           "", "Builds of the programs:", "",
           table(cols, [["build", *[f"{i['build']['name']}" for _, i in infos]],
                        ["why", *[i["build"]["why"] for _, i in infos]]]),
           "", "## Hooks, event by event", "",
           "Each event by the tracepoint it is named after; where a kernel lacks it, the hook "
           "that gives it there.", ""]
    events = [h["event"] for h in infos[0][1]["hooks"]]
    out.append(table(["event", *cols[1:]],
                     [[f"`{e}`", *[hook_cell(i, e) for _, i in infos]] for e in events]))
    out += ["", "## Cost in the x86_64 guests", "",
            "Measured inside each x86_64 line's generic guest: tr2u on 20,000 bytes (40,002 read and write "
            "calls), the program's own time (bench/cmdtime) as a multiple of its untraced "
            "time, median of three runs; start-up is iotrace's `-v` \"open+load\" "
            "(verification, CO-RE, map creation), median of three. Under TCG every "
            "instruction and every clock read is emulated, each at its own price: a no-op "
            "hook costs almost nothing next to an emulated syscall, and a clock read a lot, "
            "so these ratios say how iotrace behaves there, not what it costs on such a "
            "machine (the host's figures: [performance.md](performance.md)). `make soak` boots "
            "each line alone for these runs (the matrix of `make test` boots two guests at "
            "once, whose timings would share the host's two cores).", ""]
    rows = []
    for line in guest.KERNELS:
        c = cost(line)
        if c:
            rows.append([f"{label(line)} ({guest_info(line)['kernel']['release']})",
                         f"{c['plain_ms']:.0f} ms", f"×{c['floor']:.2f}",
                         f"×{c['notime']:.2f}", f"×{c['iotrace']:.2f}",
                         f"{c['startup']:.0f} ms" if c["startup"] else "-"])
    out.append(table(["kernel", "untraced", "floor (no-op hooks)", "--no-time",
                      "default (sampled timing)", "start-up"], rows))
    DOC.write_text("\n".join(out) + "\n")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
