# The kernel matrix's scenarios, run inside a booted guest (scripts/guest.py) by busybox sh.
# tests/test_kernels.py prepends CASES="name ..." and checks what each case leaves in
# $OUT/NAME/ on the host, against references taken here in the same guest (strace, fincore,
# /sys/block/vda/stat, the workloads' own output). Inputs come on the work disk: $W.
IOT=/iotrace/iotrace
WL=/iotrace/workloads
BENCH=/iotrace/bench
W=/mnt/work
OUT=/mnt/out

drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }
disk_stat() { cat /sys/block/vda/stat > "$1"; }

# ---- what the kernel offers ----

case_info() {
	$IOT info > info.txt 2>&1
	$IOT info --json > info.json
	cat /proc/version > version.txt
}

# ---- syscalls: strace -f -c of a separate run of the same deterministic command ----

# Both runs without address-space randomization: the dynamic loader maps a library whose
# segments align to more than a page (arm64's 64 KiB) larger and unmaps the excess, zero,
# one or two munmaps as the random placement falls, which made two runs differ.
NORAND="setarch $(uname -m) -R"

counted() { # counted NAME STDIN -- CMD...: the report and strace's table; $FRESH removed first
	name=$1 stdin=$2
	shift 3
	rm -f $FRESH
	$NORAND $IOT --json -o "$name.json" -- "$@" < "$stdin" > /dev/null 2> "$name.err"
	echo $? > "$name.rc"
	rm -f $FRESH
	$NORAND strace -f -c -o "$name.strace" "$@" < "$stdin" > /dev/null 2>&1
	echo $? > "$name.strace-rc"
}

# (strace is slow under emulation: ~2 ms a syscall; the inputs are small.)
case_syscalls() {
	counted tr2u $W/small.bin -- $WL/tr2u abc xyz
	FRESH=/tmp/copy.out counted copy /dev/null -- $WL/copy -m rw -b 4k $W/in.bin /tmp/copy.out
	counted readall /dev/null -- $WL/readall -m grow $W/in.bin
	counted pipeline /dev/null -- /bin/sh -c "cat $W/in.bin | wc -c"
	counted tar /dev/null -- tar cf /tmp/t.tar -C $W tree
	$IOT --no-time --json -o notime.json -- $WL/tr2u abc xyz < $W/small.bin > /dev/null
}

# ---- files: strace -ff -yy in the same run ----

case_files() {
	$IOT --json -o true.json -- strace -f -ff -s0 -yy -e trace=$FILE_CALLS -o true.st true
	$IOT --json -o tar.json -- strace -f -ff -s0 -yy -e trace=$FILE_CALLS -o tar.st \
		tar czf /tmp/f.tgz -C $W tree
	$IOT --json -o sqlite.json -- strace -f -ff -s0 -yy -e trace=$FILE_CALLS -o sqlite.st \
		sqlite3 /tmp/db.sqlite "create table t(x); insert into t values (1), (2);
		select count(*) from t;"
	$IOT --json -o copy.json -- strace -f -ff -s0 -yy -e trace=$FILE_CALLS -o copy.st \
		$WL/copy -m rw -b 8k $W/in.bin /tmp/copied
}

# ---- file identity: inode numbers that come back, renames of every kind (ext4 disk) ----

case_identity() {
	mkdir -p $W/id/n
	$IOT --json --files-by file -o reuse.json -- strace -f -ff -s0 -yy -e trace=$FILE_CALLS \
		-o reuse.st $WL/reuse reuse $W/id/r 20 1 > reuse.inos
	$IOT --json -o renames.json -- strace -f -ff -s0 -yy -e trace=$FILE_CALLS \
		-o renames.st $WL/reuse renames $W/id/n
	$IOT --json --files-by file -o many.json -- $WL/reuse reuse $W/id/m 2000 10 > many.inos
	$IOT --json -o true.json -- strace -f -ff -s0 -yy -e trace=$FILE_CALLS -o true.st true
}

# ---- page cache and readahead: lab note 004 with read_ahead_kb 128 ----

case_readahead() {
	old=$(cat /sys/block/vda/queue/read_ahead_kb)
	echo 128 > /sys/block/vda/queue/read_ahead_kb
	for mode in normal sequential random direct; do
		case $mode in
		normal) opt= ;; sequential) opt=-s ;; random) opt=-r ;; direct) opt=-i ;;
		esac
		drop_caches
		$IOT --json -o $mode.json -- $WL/read-file $opt -n 64m $W/big.bin > $mode.out
		fincore -b -n -o RES $W/big.bin > $mode.fincore
	done
	echo "$old" > /sys/block/vda/queue/read_ahead_kb
}

# ---- block I/O: /sys/block/vda/stat deltas, O_DIRECT, writeback to the dirtier ----

case_block() {
	drop_caches
	disk_stat cold.before
	$IOT --json -o cold.json -- $WL/read-file -n 32m $W/big.bin > /dev/null
	disk_stat cold.after
	$IOT --json -o direct.json -- $WL/read-file -i -b 64k -n 8m $W/big.bin > /dev/null
	$IOT --json --sync -o dirty.json -- dd if=/dev/zero of=/mnt/dirty bs=1M count=16 \
		2> /dev/null
	rm -f /mnt/dirty
}

# ---- io_uring: the workload prints what it issued ----

case_uring() {
	$IOT --json -o uring.json -- $WL/uring -n 64 -w 32 -b 4k -f 2 /mnt/uring.dat > uring.out
	$IOT --json -o async.json -- $WL/uring -w 16 -a -d /mnt/uring.dat > async.out
	rm -f /mnt/uring.dat
}

# ---- snoop, serve, compare ----

case_snoop() {
	$IOT snoop -j -d vda 120 > snoop.ndjson 2> snoop.err &
	spid=$!
	i=0 # start-up takes seconds under emulation: it says when it traces
	until grep -q tracing snoop.err || [ $i -ge 240 ]; do sleep 0.25; i=$((i + 1)); done
	dd if=$W/big.bin of=/dev/null bs=64k count=64 iflag=direct 2> dd.err
	dd if=/dev/zero of=/mnt/snoop.dat bs=64k count=16 oflag=direct 2>> dd.err
	sync
	kill -INT $spid
	wait $spid
	echo $? > snoop.rc
	rm -f /mnt/snoop.dat
}

case_serve() {
	mkdir -p /sys/fs/cgroup/served
	$IOT serve --listen 127.0.0.1:9435 -c /sys/fs/cgroup/served > serve.out 2>&1 &
	spid=$!
	i=0
	until wget -q -O /dev/null http://127.0.0.1:9435/metrics 2>/dev/null || [ $i -ge 120 ]; do
		sleep 0.5
		i=$((i + 1))
	done
	sh -c "echo \$\$ > /sys/fs/cgroup/served/cgroup.procs; exec $WL/tr2b abc xyz" \
		< $W/in.bin > /dev/null
	sleep 1
	wget -q -O metrics.txt http://127.0.0.1:9435/metrics
	kill $spid
	wait $spid
	echo $? > serve.rc
	strace -f -c -o tr2b.strace $WL/tr2b abc xyz < $W/in.bin > /dev/null
	rmdir /sys/fs/cgroup/served
}

# top: tr2u's calls summed over its rows (by pid) against strace -f -c of the same input.
case_top() {
	$IOT top -j -d 1 > top.ndjson 2> top.err &
	tpid=$!
	i=0 # start-up takes seconds under emulation: the first line says it counts
	until [ -s top.ndjson ] || [ $i -ge 480 ]; do sleep 0.25; i=$((i + 1)); done
	$WL/tr2u abc xyz < $W/small.bin > /dev/null &
	upid=$!
	wait $upid
	echo $upid > tr2u.pid
	sleep 5 # its exit's last counts come with the next refresh
	kill $tpid # TERM: a background job of a script may have SIGINT ignored
	wait $tpid
	echo $? > top.rc
	strace -f -c -o tr2u.strace $WL/tr2u abc xyz < $W/small.bin > /dev/null 2>&1
}

case_compare() {
	$IOT compare --json -o compare.json -l u -l b -- "$WL/tr2u a b < $W/in.bin" \
		"$WL/tr2b a b < $W/in.bin" > compare.out 2> compare.err
	echo $? > compare.rc
}

# ---- --trace and --stacks ----

case_trace() {
	$IOT --json -o report.json --trace trace.json --trace-min 0 -- $WL/tr2u a b \
		< $W/in.bin > /dev/null 2> trace.err
}

# The binaries on the work disk (ext4): a file the kernel maps at exec is named from its
# handle at the end (open_by_handle_at), which the initramfs's tmpfs does not take in the
# form iotrace asks for; with the task VMA iterator (6.7+) that is the only way to its name.
case_stacks() {
	mkdir -p /mnt/bin
	cp $WL/callsites $WL/callsites-fp /mnt/bin/
	for b in callsites-fp:fp callsites-fp:dwarf callsites:dwarf; do
		bin=${b%%:*} unwind=${b##*:}
		$IOT --json -o $bin-$unwind.json --stacks $bin-$unwind.folded --stacks-by calls \
			--stacks-unwind $unwind -- /mnt/bin/$bin $W/in.bin > $bin-$unwind.out \
			2> $bin-$unwind.err
	done
	rm -rf /mnt/bin
}

# ---- the ledger at scale (membarrier's grace period on PREEMPT_RT) ----

case_many_files() {
	# (not to /dev/null: GNU tar then skips reading the files)
	$IOT --json -o many.json -- tar cf /tmp/many.tar -C $W many > /dev/null 2> many.err
	rm -f /tmp/many.tar
	echo $? > many.rc
	find $W/many -type f | wc -l > many.count
}

# ---- every live process its own counters (run with 64 CPUs): strace -f in the same run ----

case_crowd() {
	$IOT --json -o crowd.json -- strace -f -o crowd.strace sh -c 'for i in $(seq 200); do
		(sleep 8; exec dd if=/dev/zero of=/dev/null bs=1 count=$((i % 10 + 1)) \
			status=none) &
	done; wait' > /dev/null 2> crowd.err
	echo $? > crowd.rc
	nproc > cpus
}

# ---- cost: the program's own time, untraced, with the no-op floor and with iotrace ----

case_cost() {
	for run in 1 2 3; do
		$BENCH/cmdtime plain.$run -- $WL/tr2u a b < $W/in.bin > /dev/null
		$BENCH/floor -- $BENCH/cmdtime floor.$run -- $WL/tr2u a b < $W/in.bin > /dev/null
		$IOT -o /dev/null -- $BENCH/cmdtime iotrace.$run -- $WL/tr2u a b \
			< $W/in.bin > /dev/null
		$IOT --no-time -o /dev/null -- $BENCH/cmdtime notime.$run -- $WL/tr2u a b \
			< $W/in.bin > /dev/null
	done
	# start-up: from iotrace's exec to the command's (the command records its start)
	for run in 1 2 3; do
		$IOT -v -o /dev/null -- true 2>&1 | grep "open+load" > startup.$run
	done
}

FILE_CALLS=read,write,pread64,pwrite64,readv,writev,preadv,pwritev,preadv2,pwritev2,sendfile,copy_file_range,splice,fsync,fdatasync,sync_file_range,fallocate,ftruncate,open,openat,openat2,creat,close,mmap,lseek,getdents64,fadvise64,readahead
# "?": a name this architecture has no such call for (arm64: open, creat) is not an error.
FILE_CALLS="?$(echo $FILE_CALLS | sed 's/,/,?/g')"

for c in $CASES; do
	mkdir -p $OUT/$c
	cd $OUT/$c || exit 1
	start=$(cut -d' ' -f1 /proc/uptime)
	echo "== case $c"
	case_$c > case.log 2>&1
	echo $? > case.rc
	end=$(cut -d' ' -f1 /proc/uptime)
	echo "$start $end" > case.time
done
