"""Session checks shared by every test file: root, and a built tree (`make` comes first)."""
import os
import signal

import pytest

from helpers import IOTRACE, WORKLOADS


def pytest_sessionstart(session):
    missing = [p for p in [IOTRACE, WORKLOADS / "tr2u"] if not p.exists()]
    if missing:
        raise pytest.UsageError(f"not built: {missing}; run the tests with `sudo make test`")
    if os.geteuid() != 0:
        raise pytest.UsageError("the tests load BPF programs: run them as root (sudo make test)")
    # A shell without job control starts a background command with SIGINT ignored, and every
    # process the tests start would inherit that: the tests of Ctrl-C (iotrace passing it on,
    # experiments cleaning up) then wait in vain. A handler of ours is reset by exec.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config):
    config.addinivalue_line("markers", "soak: long hardening runs, for `make soak` only")
