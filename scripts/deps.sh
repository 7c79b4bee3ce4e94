#!/usr/bin/env bash
# Install every Debian package iotrace needs to build, test, benchmark and plot.
# Idempotent and quiet: packages already present are skipped, and apt runs only
# when something is missing. Run as root (or through sudo).
set -euo pipefail

PKGS=(
	# build: BPF compiler, skeleton generator, libbpf and its dependencies
	clang llvm make gcc pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
	libcjson-dev libseccomp-dev libmicrohttpd-dev libncurses-dev
	# user/'s one hash table (uthash, headers only: user/util/hash.h)
	uthash-dev
	# io_uring workload (liburing) and user-space stack symbolization (libdw)
	liburing-dev libdw-dev elfutils
	# tests and references (jq: a second JSON reader of the reports)
	strace util-linux coreutils python3 python3-pytest jq
	# real programs the per-file tests trace (besides tar, cp, git, python3); PostgreSQL's
	# server, client and pgbench (tests/test_postgres.py)
	sqlite3 git rsync zip xz-utils tmux postgresql-15 postgresql-client-15
	# Prometheus export: promtool checks the format, a real server scrapes `iotrace serve`
	prometheus
	# benchmarks and experiments (xfs loop devices, the Go workload of lab note 003)
	bpftrace fio linux-perf python3-matplotlib time xfsprogs golang-go
	# a real trace viewer in tests: speedscope (from npm, which this machine kind has) in
	# headless Chromium
	chromium
	# install, man page and Debian package (dpkg-buildpackage wants build-essential, which
	# dpkg-dev only recommends)
	scdoc man-db debhelper dpkg-dev fakeroot lintian build-essential
	# fuzzing (libFuzzer runtime for clang)
	libclang-rt-14-dev
	# real containers in the tests (tests/containers.py): podman with runc (Debian's crun
	# refuses hybrid cgroup v1/v2 hosts), conmon comes with podman; images are imported
	# from a tarball of busybox-static and the static workloads (no registry)
	podman runc
	# ... and docker's daemon, run by the tests with a data root and socket of their own
	docker.io
	# the kernel matrix: Debian's kernels booted under QEMU (TCG) with a busybox
	# initramfs and an ext4 work disk made and read without mounting (scripts/guest.py);
	# arm64: its QEMU, and binutils for `make ARCH=arm64` (clang compiles for it); zstd:
	# Ubuntu's kernel modules (.ko.zst)
	qemu-system-x86 busybox-static cpio e2fsprogs qemu-system-arm binutils-aarch64-linux-gnu zstd
)

# npm (for speedscope) only where no Node.js came with the machine.
command -v npm >/dev/null || PKGS+=(npm)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps.sh: missing packages (${missing[*]}); run as root: sudo scripts/deps.sh" >&2
		exit 1
	fi
	echo "  DEPS   ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# speedscope's static build, which the timeline and flame-graph tests open in Chromium:
# from the npm registry, into the build directory (never committed).
SPEEDSCOPE_DIR="$(cd "$(dirname "$0")/.." && pwd)/.output/speedscope"
if [ ! -f "$SPEEDSCOPE_DIR/node_modules/speedscope/dist/release/index.html" ]; then
	echo "  NPM    speedscope"
	mkdir -p "$SPEEDSCOPE_DIR"
	npm install --prefix "$SPEEDSCOPE_DIR" --no-audit --no-fund --silent speedscope@1 ||
		echo "deps.sh: npm could not install speedscope; the viewer tests will be skipped" >&2
fi
