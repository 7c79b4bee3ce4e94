"""The build chain works on this kernel, and iotrace's own command line basics."""
import re
import subprocess
from pathlib import Path

from helpers import IOTRACE, ROOT


def test_tp_btf_probe_counts_exactly():
    """clang → bpftool skeleton → libbpf: a tp_btf program counts 1234 getppid calls."""
    res = subprocess.run([ROOT / ".output/tests/probe_test", "1234"], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "attach_type=tp_btf/sys_enter hits=1234"


def test_version_and_help():
    v = subprocess.run([IOTRACE, "--version"], capture_output=True, text=True)
    assert v.returncode == 0 and v.stdout.startswith("iotrace ")
    # In a git checkout the binary names the commit it was built from, not the first one
    # its objects were compiled at (the Makefile's version.h).
    top = subprocess.run(["git", "-C", ROOT, "rev-parse", "--show-toplevel"],
                         capture_output=True, text=True)
    if top.returncode == 0 and Path(top.stdout.strip()) == ROOT:
        name = subprocess.run(["git", "-C", ROOT, "describe", "--always"],
                              capture_output=True, text=True).stdout.strip()
        assert v.stdout.split()[1].startswith(name), (v.stdout, name)
    h = subprocess.run([IOTRACE, "--help"], capture_output=True, text=True)
    assert h.returncode == 0
    for word in ["EXAMPLES:", "--json", "--no-time", "--pid", "CMD [ARGS...]"]:
        assert word in h.stdout, word


def bpf_insns(obj):
    """(function, opcode, src_reg, imm) of each instruction of a BPF object (llvm-objdump)."""
    res = subprocess.run(["llvm-objdump", "-d", obj], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    insns, func = [], None
    for line in res.stdout.splitlines():
        m = re.match(r"^[0-9a-f]+ <(\S+)>:", line)
        if m:
            func = m.group(1)
            continue
        m = re.match(r"^\s*\d+:\s+((?:[0-9a-f]{2}\s){8})", line)
        if m:
            b = bytes.fromhex(re.sub(r"\s", "", m.group(1)))
            insns.append((func, b[0], b[1] >> 4, int.from_bytes(b[4:8], "little", signed=True)))
    return insns


def test_compat_build_has_only_what_5_10_takes():
    """The compat build (bpf/compat.bpf.h) holds no instruction 5.10 refuses before its
    verifier walks a program, dead code included (so a newer verifier, as this host's, takes
    what 5.10's would not): no atomic but the plain add (fetch, OR, AND, compare-and-swap,
    exchange: 5.12, "BPF_STX uses reserved fields"), no kfunc call, no function's address
    (bpf_loop's callbacks: 5.13), no helper past 5.10's last (155, bpf_redirect_peer: so no
    bpf_get_current_task_btf, 158, where a source forgot current_task())."""
    insns = bpf_insns(ROOT / ".output/iotrace_compat.bpf.o")
    assert len(insns) > 10000
    stx = [i for i in insns if i[1] & 7 == 3 and (i[1] & 0xe0 not in (0x60, 0xc0) or i[3])]
    kfuncs = [i for i in insns if i[1] == 0x85 and i[2] == 2]
    func_addrs = [i for i in insns if i[1] == 0x18 and i[2] == 4]
    helpers = [i for i in insns if i[1] == 0x85 and i[2] == 0 and i[3] > 155]
    assert not stx and not kfuncs and not func_addrs and not helpers, \
        (stx[:5], kfuncs[:5], func_addrs[:5], helpers[:5])
