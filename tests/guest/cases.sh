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

# until_up PID CMD...: waits until CMD succeeds, or process PID (what CMD waits for) has
# ended. No limit of its own (the boot's timeout is the limit): the guests boot beside the
# host's tests, at its lowest CPU priority, and what takes seconds alone may take minutes.
until_up() {
	up_pid=$1
	shift
	until "$@"; do
		kill -0 $up_pid 2> /dev/null || return 1
		sleep 0.25
	done
}

# more_lines FILE N PID: waits until FILE has N more lines than now (a live mode's next
# refreshes), or PID has ended.
more_lines() {
	ml_want=$(($(wc -l < $1) + $2))
	until_up $3 sh -c "[ \$(wc -l < $1) -ge $ml_want ]"
}
disk_stat() { cat /sys/block/vda/stat > "$1"; }

# ---- what the kernel offers ----

case_info() {
	# a kernel iotrace cannot load on says so once (its refusal takes minutes under TCG)
	if $IOT info > info.txt 2>&1; then $IOT info --json > info.json; else : > info.json; fi
	cat /proc/version > version.txt
	# a kernel without --stacks says so in one line when asked for them
	if grep -q '^--stacks *n/a' info.txt; then
		$IOT --stacks /tmp/stacks.folded -- true > /dev/null 2> stacks.err
		echo $? > stacks.rc
	fi
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
	$NORAND $IOT --no-time --json -o notime.json -- $WL/tr2u abc xyz < $W/small.bin > /dev/null
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
	$IOT snoop -j -d vda 1200 > snoop.ndjson 2> snoop.err &
	spid=$!
	# start-up takes seconds under emulation: it says when it traces
	until_up $spid grep -q tracing snoop.err
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
	until_up $spid wget -q -O /dev/null http://127.0.0.1:9435/metrics
	sh -c "echo \$\$ > /sys/fs/cgroup/served/cgroup.procs; exec $WL/tr2b abc xyz" \
		< $W/in.bin > /dev/null
	sleep 1
	wget -q -O metrics.txt http://127.0.0.1:9435/metrics
	grep -h CapEff /proc/$spid/task/*/status > caps.txt
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
	# start-up takes seconds under emulation: the first line says it counts
	until_up $tpid test -s top.ndjson
	$WL/tr2u abc xyz < $W/small.bin > /dev/null &
	upid=$!
	wait $upid
	echo $upid > tr2u.pid
	# its exit's last counts come with the next refresh: two more lines, then stop
	more_lines top.ndjson 2 $tpid
	kill $tpid # TERM: a background job of a script may have SIGINT ignored
	wait $tpid
	echo $? > top.rc
	# (the reference is the syscalls case's strace -f -c of the same command and input: a
	# second one took 30 s of arm64's emulation)
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

# ---- thousands of processes, each exact by its own arithmetic (workloads/storm.c) ----

# (tests/test_kernels.py's STORM_CHILDREN: one in 7 exec'd, one in 4 with 3 threads)
case_storm() {
	$IOT --json -o storm.json -- $WL/storm -j 4 -t 3 -x 7 2000 > /dev/null 2> storm.err
	echo $? > storm.rc
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

# ==== disk stat (issue 37): a loop disk's own /sys/block stat beside iotrace's ====
# The host's tests/test_disk_stat.py cases on a loop disk of the guest's own: NAME.before and
# NAME.after are the disk's stat around each run, NAME.json run mode's report; top.ndjson
# and snoop.ndjson the live modes over top.before/after and snoop.before/after.

ds_quiet() { # waits until the loop disk has nothing in flight and its stat stands still
	i=0 last=
	while [ $i -lt 50 ]; do
		now=$(cat /sys/block/$DS_DISK/stat)
		# (inflight's two counts are padded: unquoted, the shell's words drop the padding;
		# compared whole, they never matched and every window waited the full 10 s)
		[ "$now" = "$last" ] && [ "$(echo $(cat /sys/block/$DS_DISK/inflight))" = "0 0" ] &&
			return 0
		last=$now
		sleep 0.2
		i=$((i + 1))
	done
}

ds_run() { # ds_run NAME CMD...
	name=$1
	shift
	sync # nothing left for the flusher to write during the window (iotrace starts slowly here)
	ds_quiet
	cat /sys/block/$DS_DISK/stat > $name.before
	$IOT --json -o $name.json -- "$@" > /dev/null 2> $name.err
	echo $? > $name.rc
	cat /sys/block/$DS_DISK/stat > $name.after
}

ds_live() { # ds_live top|snoop NAME CMD...: the mode running around one workload
	mode=$1 name=$2
	shift 2
	sync
	ds_quiet
	if [ $mode = top ]; then
		$IOT top -j -d 0.5 > $name.ndjson 2> $name.err &
	else
		$IOT snoop -j -d $DS_DISK > $name.ndjson 2> $name.err &
	fi
	lpid=$!
	# start-up takes seconds under emulation
	until_up $lpid sh -c "[ -s $name.ndjson ] || grep -q tracing $name.err"
	[ $mode = top ] && sleep 1 # top's first line is out: the next interval opens
	cat /sys/block/$DS_DISK/stat > $name.before
	"$@" > /dev/null 2>&1
	cat /sys/block/$DS_DISK/stat > $name.after
	sleep 3 # refreshes and sweeps after the last request
	[ $mode = top ] && more_lines $name.ndjson 2 $lpid # (a slow guest's two refreshes)
	kill -INT $lpid
	sleep 1
	kill $lpid 2> /dev/null # TERM: a background job of a script may have SIGINT ignored
	wait $lpid
	echo $? > $name.rc
}

DS_FIO="fio --output=/dev/null --ioengine=libaio --direct=1 --bs=4k"

case_disk_stat() {
	# a load the verifier refuses: its log, to read on the host
	$IOT -o /dev/null -- true 2> /dev/null || $IOT -v -o /dev/null -- true > verifier.log 2>&1
	dd if=/dev/zero of=/mnt/ds37.img bs=1M count=0 seek=384 2> /dev/null
	dev=$(losetup -f) # busybox's losetup: no --show
	losetup $dev /mnt/ds37.img
	DS_DISK=${dev#/dev/}
	echo $DS_DISK > disk
	echo mq-deadline > /sys/block/$DS_DISK/queue/scheduler
	mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 $dev
	mkdir -p /tmp/ds
	# No block bitmaps' prefetch, and the journal committed only when asked (fsync, sync),
	# never by its 5 s timer at a window's edge
	mount -o no_prefetch_block_bitmaps,commit=3600 $dev /tmp/ds
	# Nor the flusher's periodic writeback: a journal commit leaves metadata blocks dirty on
	# the disk's own inode, which sync writes but may leave listed as dirty since long ago;
	# the flusher's next wake (every 5 s) then wrote them at once, 6.1 once between
	# iotrace's end and the window's (5 writes of 1 KiB the disk counted, iotrace could not)
	ds_wb=$(cat /proc/sys/vm/dirty_writeback_centisecs)
	echo 0 > /proc/sys/vm/dirty_writeback_centisecs
	dd if=/dev/zero of=/tmp/ds/il bs=1M count=9 conv=fsync 2> /dev/null
	dd if=/dev/zero of=/tmp/ds/rr bs=1M count=16 conv=fsync 2> /dev/null
	il="--name=a --filename=/tmp/ds/il --size=8M --iodepth=128 --rw=write:4k
		--name=b --filename=/tmp/ds/il --size=8M --iodepth=128 --rw=write:4k --offset=4k"
	ds_run interleaved $DS_FIO $il
	# 30 writes of 4 KiB, each followed by fdatasync (busybox's dd has no conv=fdatasync)
	sync30="--name=s --filename=/tmp/ds/s --ioengine=sync --rw=write --size=120k --fdatasync=1"
	ds_run fdatasync $DS_FIO $sync30
	# again, over the same blocks: no journal commit, each fdatasync an empty flush write
	ds_run overwrite_fdatasync $DS_FIO $sync30
	ds_run buffered_fsync dd if=/dev/zero of=/tmp/ds/b bs=1M count=16 conv=fsync status=none
	ds_run randrw $DS_FIO --name=r --filename=/tmp/ds/rr --size=16M --iodepth=256 --rw=randrw \
		--runtime=2 --time_based
	ds_live top top $DS_FIO $il
	ds_live snoop snoop $DS_FIO $sync30
	umount /tmp/ds
	echo $ds_wb > /proc/sys/vm/dirty_writeback_centisecs
	# write-zeroes and discard on the bare disk
	ds_run zeroes blkdiscard -f -z -o 0 -l 8M $dev
	ds_run discard blkdiscard -f -o 0 -l 64M $dev
	losetup -d $dev
	rm -f /mnt/ds37.img
}
# ==== end of disk stat ====

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
