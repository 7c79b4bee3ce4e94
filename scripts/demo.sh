#!/usr/bin/env bash
# A short tour: the lab notes' tr2u vs tr2b (seed 001) under iotrace, on a bundled input.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "demo.sh: iotrace loads BPF programs; run: sudo make demo" >&2
	exit 1
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
./workloads/mkinput -c 1 500001 "$dir/input.txt"

echo "== tr2u (one read and one write syscall per byte) on 500,001 bytes"
./iotrace -H -- ./workloads/tr2u 1 a < "$dir/input.txt" > "$dir/out.u"
echo
echo "== tr2b (getchar/putchar: stdio buffers) on the same input"
./iotrace -- ./workloads/tr2b 1 a < "$dir/input.txt" > "$dir/out.b"
cmp -s "$dir/out.u" "$dir/out.b" && echo && echo "outputs identical ($(wc -c < "$dir/out.u") bytes)"
