#!/usr/bin/env bash
# Runs every test (pytest; the C probe runs from tests/test_toolchain.py). `make test` calls
# this after installing dependencies and building. Extra arguments go to pytest. The long
# runs marked "soak" are left out here: `make soak` runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "test.sh: the tests load BPF programs; run: sudo make test" >&2
	exit 1
fi
# --durations: the slowest tests in every log, to keep `make test` within its time.
exec /usr/bin/python3 -m pytest -p no:cacheprovider -ra --durations=25 -m "not soak" "${@:-tests}"
