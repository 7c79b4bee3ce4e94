#!/usr/bin/env bash
# Writes the container tests' root file system as a tarball (`make container-rootfs`):
# busybox-static with a link per applet in /bin, the workloads built -static in /bin, and
# the directories a program expects (/tmp, /data for a volume). No registry: the tests
# `podman import` it (tests/containers.py).
# Usage: container_rootfs.sh OUT.tar STATIC_PROGRAM...
set -euo pipefail
out=$1
shift
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/tmp" "$root/data" "$root/proc" "$root/sys" "$root/dev"
chmod 1777 "$root/tmp"
cp /bin/busybox "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
for prog in "$@"; do
	cp "$prog" "$root/bin/"
done
tar -C "$root" --owner=0 --group=0 --numeric-owner -cf "$out.tmp" .
mv "$out.tmp" "$out"
