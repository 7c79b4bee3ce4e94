"""The build chain works on this kernel, and iotrace's own command line basics."""
import subprocess

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
    h = subprocess.run([IOTRACE, "--help"], capture_output=True, text=True)
    assert h.returncode == 0
    for word in ["EXAMPLES:", "--json", "--no-time", "--pid", "CMD [ARGS...]"]:
        assert word in h.stdout, word
