"""Session checks shared by every test file: root, and a built tree (`make` comes first)."""
import os
import signal

import pytest

from helpers import (IOTRACE, WORKLOADS, cap_iotrace_data, end_leaked_iotrace,
                     iotrace_processes)


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
    # A runaway iotrace fails its test with ENOMEM instead of exhausting the machine.
    cap_iotrace_data()


@pytest.fixture(autouse=True)
def no_iotrace_left_running():
    """An iotrace a test started and left running (its command never ended and the test
    gave up waiting) would trace on, its memory growing with every process its command
    starts, through every later test: one took 22.9 GB that way. It is killed, with its
    command, and its test fails."""
    before = iotrace_processes()
    yield
    leaked = end_leaked_iotrace(before)
    if leaked:
        pytest.fail(f"iotrace left running after the test (killed): {leaked}")


def pytest_collection_modifyitems(session, config, items):
    """The kernel matrix's tests last (in their own order), after every host test: they wait
    for the guests, which boot from the session's start (below) beside the host's tests."""
    items.sort(key=lambda item: item.module.__name__ == "test_kernels")


@pytest.fixture(scope="session", autouse=True)
def kernel_boots_from_the_start(request, tmp_path_factory):
    """The kernel matrix's guests (tests/test_kernels.py) boot from the session's start, at
    the lowest CPU priority, beside the host's tests: tests run in file order, and waiting
    for test_kernels' first test left ~25 min of TCG after ~20 min of host tests. At the
    end, boots not yet begun are cancelled (a session stopped early does not wait for
    them)."""
    kernels = next((item.module for item in request.session.items
                    if item.module.__name__ == "test_kernels"), None)
    pool = kernels and kernels.start_boots(request.session.items, tmp_path_factory)[0]
    yield
    if pool:
        pool.shutdown(wait=True, cancel_futures=True)


def pytest_sessionfinish(session):
    """What a fixture of a module or of the session left running dies with the session."""
    leaked = end_leaked_iotrace({})
    if leaked:
        print(f"\nconftest: iotrace left running at the end of the session (killed): {leaked}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_configure(config):
    config.addinivalue_line("markers", "soak: long hardening runs, for `make soak` only")
