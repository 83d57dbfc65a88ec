#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loop-dispatch.bats - data integrity through loop's worker dispatch
# under load, for
# kernel/patches/0006-loop-let-one-worker-run-serve-every-command-queued-w.patch
# ("loop: let one worker run serve every command queued while it runs"):
# verified random writes at queue depth 32 while direct I/O is switched
# off and on and LOOP_SET_STATUS64 is issued, data kept across a
# sector-size change, flushes and discards ordered with the writes
# around them. None of this is specific to the patch: 6.1 passes it too;
# it guards what a change of dispatch could break. Tests 4 and 5 guard
# against plugging the worker's batches, which earlier versions of 0006
# did: a plugged buffered batch costs a kblockd wake-up for every read
# that misses the page cache (the first version: 0.973 per read; 6.1 and
# the current 0006: 0.000), and a plugged direct I/O batch holds its
# first request back until the last one is submitted (the second
# version). Test 6 checks that commands complete where the backing
# file's I/O completes, without a block softirq each (0007), test 7 that
# a synchronous direct write reaches loop without a kblockd run (0008).
# On the debug kernel, lockdep, atomic-sleep and list debugging run
# under the same load (guest_teardown fails a test on any splat).

load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"
# nbio_kworker_snapshot, nbio_kworker_delta
. "${BATS_TEST_DIRNAME}/../../scripts/lib.sh"

setup() {
	guest_setup
	require_loop
	command -v fio >/dev/null || skip "no fio"
	scratch_ext4 512
	mount -o remount,noatime "$SCRATCH_MNT"
	BACKING=$SCRATCH_MNT/backing.img
	make_file_mib "$BACKING" 32
}

# verified_writes DEV SECS [FIO-ARGS...]: random 4 KiB writes at queue
# depth 32 for SECS seconds, each block with a checksum and a header
# naming its offset, then every written block read back and checked.
verified_writes() {
	local dev=$1 secs=$2
	shift 2
	fio --name=verify --filename="$dev" --thread --direct=1 \
		--ioengine=libaio --iodepth=32 --rw=randwrite --bs=4k \
		--size=24M --time_based --runtime="$secs" \
		--verify=crc32c --verify_fatal=1 --verify_backlog=256 \
		--do_verify=1 --output=/dev/null "$@"
}

# same_as_backing: after a flush, the device and the backing file (read
# around the page cache) hold the same 24 MiB.
same_as_backing() {
	blockdev --flushbufs "$LOOPDEV"
	cmp <(dd if="$LOOPDEV" bs=1M count=24 iflag=direct status=none) \
		<(dd if="$BACKING" bs=1M count=24 iflag=direct status=none) ||
		fail "device and backing file differ"
}

@test "dispatch: verified writes at depth 32 while direct I/O flips and LOOP_SET_STATUS64 runs" {
	local name togglepid s0 s1
	require_program "$LOOP_IOCTL"
	loop_attach --direct-io=on "$BACKING"
	name=${LOOPDEV#/dev/}
	read -ra s0 <"/sys/block/$name/loop/stat" 2>/dev/null || s0=()
	(
		while :; do
			losetup --direct-io=off "$LOOPDEV"
			"$LOOP_IOCTL" set-status "$LOOPDEV"
			losetup --direct-io=on "$LOOPDEV"
			sleep 0.2
		done
	) &
	togglepid=$!
	defer stop_background "$togglepid"
	verified_writes "$LOOPDEV" 8 || fail "fio verify failed (data corrupted or I/O error)"
	stop_background "$togglepid"
	# Both paths served writes during the run, when the kernel counts
	# them (loop/stat, 0005): the flips happened under load.
	if ((${#s0[@]})); then
		read -ra s1 <"/sys/block/$name/loop/stat"
		echo "# dio writes $((s1[2] - s0[2])), buffered writes $((s1[6] - s0[6]))" >&3
		((s1[2] > s0[2] && s1[6] > s0[6])) ||
			fail "writes did not go through both paths: ${s0[*]} -> ${s1[*]}"
	fi
	# The backing file holds what the device returns.
	same_as_backing
}

@test "dispatch: data written with 512-byte sectors reads back the same after a change to 4096, idle" {
	local sum0 sum1
	loop_attach --direct-io=on --sector-size 512 "$BACKING"
	verified_writes "$LOOPDEV" 4 || fail "fio verify failed"
	sum0=$(dd if="$LOOPDEV" bs=1M count=24 iflag=direct status=none | sha256sum)
	losetup --sector-size 4096 "$LOOPDEV" || fail "LOOP_SET_BLOCK_SIZE failed"
	[[ $(blockdev --getss "$LOOPDEV") == 4096 ]] || fail "sector size not 4096"
	sum1=$(dd if="$LOOPDEV" bs=1M count=24 iflag=direct status=none | sha256sum)
	[[ $sum0 == "$sum1" ]] || fail "contents changed with the sector size"
	verified_writes "$LOOPDEV" 4 || fail "fio verify failed at 4096"
}

@test "dispatch: flushes and discards keep their order with the writes around them" {
	local zeroes
	loop_attach --direct-io=on "$BACKING"
	# Writes with an fsync every 8, and trims of blocks the writer
	# does not touch, at depth 16 each, at once.
	fio --thread --direct=1 --ioengine=libaio --bs=4k --output=/dev/null \
		--filename="$LOOPDEV" \
		--name=w --rw=randwrite --iodepth=16 --offset=0 --size=16M \
		--fsync=8 --verify=crc32c --verify_fatal=1 --do_verify=1 \
		--name=t --rw=randtrim --iodepth=16 --offset=16M --size=8M ||
		fail "fio failed"
	# Every trimmed block reads back as zeroes (punched in the backing
	# file), the writer's blocks were verified by fio.
	zeroes=$(dd if="$LOOPDEV" bs=1M skip=16 count=8 iflag=direct status=none |
		cmp - <(head -c 8M /dev/zero) && echo yes)
	[[ $zeroes == yes ]] || fail "the trimmed range is not all zeroes"
	same_as_backing
}

# kblockd_per_io RW SIZE: kblockd's switches per I/O (printed) while one
# psync job does 2048 4 KiB I/Os of kind RW (fio --rw) within the first
# SIZE of $LOOPDEV; the counts go to the TAP log.
kblockd_per_io() {
	local ios=2048 k0 k1 d
	k0=$(nbio_kworker_snapshot /proc)
	fio --name=kblockd --filename="$LOOPDEV" --thread --direct=1 \
		--ioengine=psync --rw="$1" --bs=4k --size="$2" \
		--number_ios="$ios" --randrepeat=0 --output=/dev/null || return 1
	k1=$(nbio_kworker_snapshot /proc)
	# kblockd's work runs on the bound high-priority kworkers
	# (kworker/N:MH): a queue run not done in the submitter's context
	d=$(nbio_kworker_delta <(echo "$k0") <(echo "$k1") \
		'^kworker/[0-9]+:[0-9]+H')
	echo "# kblockd kworker switches in $ios I/Os ($1): $d" >&3
	awk -v d="$d" -v n="$ios" 'BEGIN { printf "%.3f", d / n }'
}

@test "dispatch: buffered reads that miss the page cache do not wake kblockd for each request" {
	# Regression test for
	# kernel/patches/0006-loop-let-one-worker-run-serve-every-command-queued-w.patch
	# ("loop: let one worker run serve every command queued while it
	# runs"), whose first version plugged every batch: a buffered read then
	# slept in the page cache with the plug held, the scheduler flushed
	# it through kblockd (blk_flush_plug(plug, true)), and read_pages()'
	# own plug, nested in loop's, flushed nothing: one kworker wake-up
	# per request (about 1.0 per I/O, measured; 6.1 and this version:
	# none). Each 4 KiB read of the cold backing file is a miss.
	local per
	loop_attach --direct-io=off "$BACKING"
	drop_caches
	per=$(kblockd_per_io randread 32M) || fail "fio failed"
	echo "# kblockd kworker switches per read: $per" >&3
	awk -v p="$per" 'BEGIN { exit !(p < 0.3) }' ||
		fail "kblockd woke $per times per buffered read (want < 0.3)"
}

# trace_off KB: stop the block events the plug test traces, restore the
# trace buffer's size.
trace_off() {
	local tr=/sys/kernel/debug/tracing ev
	echo 0 >"$tr/tracing_on"
	echo "$1" >"$tr/buffer_size_kb"
	for ev in block_plug block_rq_issue; do
		echo 0 >"$tr/events/block/$ev/enable"
		echo 0 >"$tr/events/block/$ev/filter"
	done
}

@test "dispatch: the worker sends each direct read to the backing disk at once, not held in a plug" {
	# Regression test for the second version of
	# kernel/patches/0006-loop-let-one-worker-run-serve-every-command-queued-w.patch,
	# which held each batch of direct I/O in a plug until its last
	# command was submitted: on one CPU the backing disk then idled
	# while the worker prepared the rest of the batch (loop DIO IOPS
	# 0.72-0.94 of 6.1 under loop-ab -I; docs/measurements.md A10).
	# Unplugged, each command's direct read starts and flushes its own
	# plug (__iomap_dio_rw()), so the worker starts one plug per read it
	# issues; a held batch starts one per batch. Counted with the
	# block_plug event (the first request added to a plug) of unbound
	# kworkers, which on this guest only loop's worker is, against the
	# reads issued to the scratch disk. Measured on the debug kernel:
	# 1.000 (4096 for 4096) with this version in two runs, 0.947 and
	# 0.719 with the plugged one, whose batches are small at this depth.
	local tr=/sys/kernel/debug/tracing dev plugs reads per
	[[ -e $tr/events/block/block_plug/enable ]] ||
		skip "no block trace events (CONFIG_EVENT_TRACING, debugfs)"
	loop_attach --direct-io=on "$BACKING"
	[[ $(<"/sys/block/${LOOPDEV#/dev/}/loop/dio") == 1 ]] ||
		skip "direct I/O did not take effect on $LOOPDEV"
	# The filter takes the kernel's dev_t: major << 20 | minor.
	dev=$(majmin "$SCRATCH_DEV")
	dev=$(((${dev%:*} << 20) | ${dev#*:}))
	echo 0 >"$tr/tracing_on"
	# buffer_size_kb reads "7 (expanded: 1408)" until tracing first runs.
	defer trace_off "$(grep -o '[0-9]\+' "$tr/buffer_size_kb" | tail -n 1)"
	echo 8192 >"$tr/buffer_size_kb"
	echo >"$tr/trace"
	echo 'comm ~ "kworker/u*"' >"$tr/events/block/block_plug/filter"
	echo "dev == $dev" >"$tr/events/block/block_rq_issue/filter"
	echo 1 >"$tr/events/block/block_plug/enable"
	echo 1 >"$tr/events/block/block_rq_issue/enable"
	echo 1 >"$tr/tracing_on"
	fio --name=plug --filename="$LOOPDEV" --thread --direct=1 \
		--ioengine=libaio --iodepth=16 --rw=randread --bs=4k --size=24M \
		--number_ios=4096 --randrepeat=0 --output=/dev/null ||
		fail "fio failed"
	echo 0 >"$tr/tracing_on"
	plugs=$(grep -c ' block_plug: ' "$tr/trace")
	reads=$(grep -Ec ' block_rq_issue: [0-9]+,[0-9]+ R[A-Z]* ' "$tr/trace")
	((reads >= 4096)) || fail "only $reads reads reached $SCRATCH_DEV (trace lost events?)"
	per=$(awk -v p="$plugs" -v r="$reads" 'BEGIN { printf "%.3f", p / r }')
	echo "# worker plugs per read issued: $per ($plugs for $reads)" >&3
	awk -v p="$per" 'BEGIN { exit !(p >= 0.99) }' ||
		fail "the worker held reads in a plug: $per plugs per read (want >= 0.99)"
}

# block_softirqs: BLOCK softirqs run so far, all CPUs.
block_softirqs() {
	awk '$1 == "BLOCK:" { for (i = 2; i <= NF; i++) s += $i } END { print s }' \
		/proc/softirqs
}

@test "completion: direct I/O commands complete in place, without a block softirq each" {
	require_loop_fix series
	# Test for
	# kernel/patches/0007-loop-complete-commands-directly-not-through-the-bloc.patch
	# ("loop: complete commands directly, not through the block
	# softirq"). 6.1 completes each command with
	# blk_mq_complete_request(), which for a single-queue device on
	# more than one CPU raises BLOCK_SOFTIRQ; from the backing file
	# system's completion work (direct writes) that wakes ksoftirqd.
	# Measured on this guest, two vCPUs, 6.1: 0.87-0.91 block softirqs
	# and 0.56-0.63 ksoftirqd switches per 4 KiB direct write, 0.61-0.65
	# softirqs per read; with the patch 0 and 0. The raw disk raises
	# none, so any left here are loop's.
	local rw s0 s1 per ios=4096
	(($(nproc) >= 2)) ||
		skip "one CPU: blk-mq completes a single-queue device's requests in place anyway"
	loop_attach --direct-io=on "$BACKING"
	[[ $(<"/sys/block/${LOOPDEV#/dev/}/loop/dio") == 1 ]] ||
		skip "direct I/O did not take effect on $LOOPDEV"
	for rw in randwrite randread; do
		s0=$(block_softirqs)
		fio --name=complete --filename="$LOOPDEV" --thread --direct=1 \
			--ioengine=psync --numjobs=4 --rw="$rw" --bs=4k --size=24M \
			--number_ios=$((ios / 4)) --randrepeat=0 --output=/dev/null ||
			fail "fio $rw failed"
		s1=$(block_softirqs)
		per=$(awk -v d=$((s1 - s0)) -v n="$ios" 'BEGIN { printf "%.3f", d / n }')
		echo "# $rw: block softirqs per I/O $per ($((s1 - s0)) for $ios)" >&3
		awk -v p="$per" 'BEGIN { exit !(p < 0.05) }' ||
			fail "$rw: $per block softirqs per I/O (want < 0.05)"
	done
}

@test "submission: a synchronous direct write reaches loop from the writer, not from kblockd" {
	require_loop_fix series
	# Test for
	# kernel/patches/0008-block-do-not-plug-in-blkdev_write_iter.patch
	# ("block: do not plug in blkdev_write_iter()"). 6.1's
	# blkdev_write_iter() holds a plug around the whole write, and a
	# synchronous direct write waits for its bio inside it: the
	# scheduler then flushes the plug as from_schedule, and blk-mq runs
	# loop's queue from kblockd, one more hand-off per write before
	# loop's own. One writer at queue depth 1, so nothing batches the
	# kblockd runs.
	local per
	loop_attach --direct-io=on "$BACKING"
	per=$(kblockd_per_io randwrite 24M) || fail "fio failed"
	echo "# kblockd kworker switches per synchronous write: $per" >&3
	awk -v p="$per" 'BEGIN { exit !(p < 0.1) }' ||
		fail "kblockd ran loop's queue $per times per write (want < 0.1)"
}
