#!/usr/bin/env python3
"""Where iotrace's BPF programs spend their time, by source line.

    scripts/bpf_profile.py [--top N] [--freq HZ] [--per COUNT] -- IOTRACE [ARGS...] -- CMD...

Runs the iotrace command line given, waits until its programs are attached, reads each
program's table of JIT'd addresses and source lines (BPF_OBJ_GET_INFO_BY_FD: jited_ksyms,
jited_line_info and the line strings of the program's BTF), then samples every CPU with
`perf record -a -g` until the command ends. Each sample whose call chain passes through a
BPF program is charged to the innermost BPF frame's line: the helpers and kernel functions
a line calls are charged to it. Prints the samples per program and the top lines, on stderr (stdout
is the command's); with --per COUNT, each as ns per COUNT (calls, processes) as well.

bpf_stats (BPF_ENABLE_STATS) gives a program's time per run; this says which lines of it.
Samples of the start-up (verification) and the report lie in no program. The programs'
lines are read once they are attached: the command must run for half a second or more.
Needs root and perf.
"""
import argparse
import bisect
import collections
import ctypes
import os
import platform
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_ledger  # noqa: E402

NR_BPF = {"x86_64": 321, "aarch64": 280}.get(platform.machine())
PROG_GET_FD_BY_ID, OBJ_GET_INFO_BY_FD, BTF_GET_FD_BY_ID = 13, 15, 19
LIBC = ctypes.CDLL(None, use_errno=True)

# struct bpf_prog_info (uapi linux/bpf.h): offsets of the fields read here.
PI_NAME, PI_NR_KSYMS, PI_NR_FUNC_LENS, PI_KSYMS, PI_FUNC_LENS = 64, 104, 108, 112, 120
PI_BTF_ID, PI_NR_LINE_INFO, PI_LINE_INFO, PI_JITED_LINE_INFO = 128, 148, 152, 160
PI_NR_JITED_LINE_INFO, PI_LINE_INFO_REC_SIZE, PI_JITED_LINE_INFO_REC_SIZE = 168, 172, 176
PROG_INFO_SIZE = 232
PERF_READY_S = 1.0  # perf record's start, before the command starts


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(bytes(attr), max(len(attr), 128))
    res = LIBC.syscall(NR_BPF, cmd, buf, len(buf))
    if res < 0:
        raise OSError(ctypes.get_errno(), f"bpf({cmd})")
    return res


def obj_info(fd, info):
    """BPF_OBJ_GET_INFO_BY_FD into the bytearray info (its pointers filled in by the caller)."""
    buf = (ctypes.c_char * len(info)).from_buffer(info)
    bpf(OBJ_GET_INFO_BY_FD, struct.pack("IIQ", fd, len(info), ctypes.addressof(buf)))


def btf_strings(btf_id):
    """The string section of BTF object btf_id."""
    fd = bpf(BTF_GET_FD_BY_ID, struct.pack("I", btf_id))
    try:
        info = bytearray(32)
        obj_info(fd, info)
        size = struct.unpack_from("I", info, 8)[0]
        raw = ctypes.create_string_buffer(size)
        info = bytearray(32)
        struct.pack_into("QI", info, 0, ctypes.addressof(raw), size)
        obj_info(fd, info)
        hdr_len, _, _, str_off, str_len = struct.unpack_from("IIIII", raw.raw, 4)
        return raw.raw[hdr_len + str_off:hdr_len + str_off + str_len]
    finally:
        os.close(fd)


def string_at(strings, off):
    return strings[off:strings.index(b"\0", off)].decode(errors="replace")


def prog_lines(prog_id):
    """(name, [(start, length)] of its JIT'd functions, [(address, "file:line", source)])."""
    fd = bpf(PROG_GET_FD_BY_ID, struct.pack("I", prog_id))
    try:
        info = bytearray(PROG_INFO_SIZE)
        obj_info(fd, info)
        name = info[PI_NAME:PI_NAME + 16].split(b"\0")[0].decode()
        nks, nfl = struct.unpack_from("II", info, PI_NR_KSYMS)
        nli = struct.unpack_from("I", info, PI_NR_LINE_INFO)[0]
        nji, lsz, jsz = struct.unpack_from("III", info, PI_NR_JITED_LINE_INFO)
        btf_id = struct.unpack_from("I", info, PI_BTF_ID)[0]
        ksyms, lens = (ctypes.c_uint64 * nks)(), (ctypes.c_uint32 * nfl)()
        li, jli = ctypes.create_string_buffer(nli * lsz), (ctypes.c_uint64 * nji)()
        info = bytearray(PROG_INFO_SIZE)
        struct.pack_into("IIQQ", info, PI_NR_KSYMS, nks, nfl, ctypes.addressof(ksyms),
                         ctypes.addressof(lens))
        struct.pack_into("I", info, PI_NR_LINE_INFO, nli)
        struct.pack_into("QQ", info, PI_LINE_INFO, ctypes.addressof(li), ctypes.addressof(jli))
        struct.pack_into("III", info, PI_NR_JITED_LINE_INFO, nji, lsz, jsz)
        obj_info(fd, info)
    finally:
        os.close(fd)
    strings = btf_strings(btf_id) if btf_id else b""
    lines = []
    for i in range(min(nli, nji)):
        _, file_off, line_off, line_col = struct.unpack_from("IIII", li.raw, i * lsz)
        path = string_at(strings, file_off) if strings else "?"
        src = string_at(strings, line_off).strip() if strings else ""
        lines.append((jli[i], f"{os.path.basename(path)}:{line_col >> 10}", src))
    return name, list(zip(ksyms, lens)), lines


def bpf_symbols():
    """{address: function name} of the JIT'd BPF functions in /proc/kallsyms (their BTF
    names, not cut to 15 bytes as the program's own name is)."""
    names = {}
    with open("/proc/kallsyms") as f:
        for line in f:
            if line.endswith("[bpf]\n"):
                addr, _, sym = line.split()[:3]
                if sym.startswith("bpf_prog_"):
                    names[int(addr, 16)] = sym.split("_", 3)[-1]
    return names


class LineTable:
    """The JIT'd functions of some programs (start, end, program, function) and their
    lines, by address."""

    def __init__(self, prog_ids):
        self.funcs, lines = [], []
        syms = bpf_symbols()
        for pid in prog_ids:
            name, funcs, ls = prog_lines(pid)
            main = syms.get(funcs[0][0], name) if funcs else name
            self.funcs += [(start, start + length, main, syms.get(start, "?"))
                           for start, length in funcs]
            lines += ls
        self.funcs.sort()
        lines.sort()
        self.addrs = [a for a, _, _ in lines]
        self.lines = lines

    def where(self, ip):
        """(program, function, "file:line", source) of a JIT'd address, or None."""
        k = bisect.bisect_right(self.funcs, (ip, float("inf"))) - 1
        if k < 0 or not self.funcs[k][0] <= ip < self.funcs[k][1]:
            return None
        i = bisect.bisect_right(self.addrs, ip) - 1
        return self.funcs[k][2:] + (self.lines[i][1:] if i >= 0 else ("?", ""))


def charge(script, table):
    """Samples per program and per (program, line) from `perf script -F comm,ip,sym`."""
    progs, lines, total = collections.Counter(), collections.Counter(), 0
    for block in script.split("\n\n"):
        frames = block.strip().splitlines()[1:]
        if not frames:
            continue
        total += 1
        for depth, frame in enumerate(frames):
            parts = frame.split()
            if len(parts) < 2 or not parts[1].startswith("bpf_prog_"):
                continue
            # A caller's frame holds a return address: the call is the byte before it.
            w = table.where(int(parts[0], 16) - (1 if depth else 0))
            if w:
                progs[w[0]] += 1
                lines[w] += 1
            break
    return total, progs, lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--freq", type=int, default=10000)
    ap.add_argument("--per", type=int, help="also ns per this many calls or processes")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("no iotrace command line given")
    if NR_BPF is None or os.geteuid() != 0:
        sys.exit("bpf_profile.py: needs root on x86-64 or arm64")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "perf.data"
        # perf first: the whole command is sampled, and --per counts all its calls.
        rec = subprocess.Popen(["perf", "record", "-q", "-a", "-g", "-e", "cpu-clock", "-F",
                                str(args.freq), "-o", str(data)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(PERF_READY_S)
        proc = subprocess.Popen(cmd)
        ids = bench_ledger.attached_programs(proc, settle=0.1)
        table = LineTable(sorted(ids)) if ids else None
        rc = proc.wait()
        rec.send_signal(signal.SIGINT)
        rec.wait()
        if not table:
            sys.exit("bpf_profile.py: the command attached no BPF programs, or not for long "
                     "enough to read their lines")
        script = subprocess.run(["perf", "script", "-i", str(data), "-F", "comm,ip,sym"],
                                capture_output=True, text=True).stdout
    total, progs, lines = charge(script, table)
    ns = 1e9 / args.freq  # one sample: this much of one CPU's time
    per = f", ns per {args.per:,}" if args.per else ""
    out = sys.stderr  # stdout is the command's
    print(f"{total} samples, {sum(progs.values())} in BPF programs (with what they call); "
          f"{args.freq} Hz per CPU: a sample is {ns / 1e3:.0f} µs{per}", file=out)
    for name, n in progs.most_common():
        print(f"{n:8d}" + (f" {n * ns / args.per:9.1f}" if args.per else "") + f"  {name}",
              file=out)
    print(file=out)
    for (_, func, where, src), n in lines.most_common(args.top):
        print(f"{n:8d}" + (f" {n * ns / args.per:9.1f}" if args.per else "") +
              f"  {func[:26]:26s} {where:24s} {src[:80]}", file=out)
    return rc


if __name__ == "__main__":
    sys.exit(main())
