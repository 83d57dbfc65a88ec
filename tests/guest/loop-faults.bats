#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loop-faults.bats - faults below a loop device, with direct I/O on and
# off: I/O errors from the disk under the backing file system
# (fail_make_request on the scratch disk), a full backing file system, a
# backing file truncated and extended under load, and a detach while I/O
# is in flight. In each case nothing may be acknowledged that was not
# stored, errors must reach the program that did the I/O, and the kernel
# log must stay clean (guest_teardown; on the debug kernel lockdep,
# atomic-sleep and list checks run too).

load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"

setup() {
	guest_setup
	require_loop
}

# backing_file MIB: $BACKING, MIB MiB of random data written back and
# evicted, on a fresh ext4 on the 512-byte scratch disk, mounted noatime
# so that reads leave the journal idle.
backing_file() {
	scratch_ext4 512
	mount -o remount,noatime "$SCRATCH_MNT"
	BACKING=$SCRATCH_MNT/backing.img
	make_file_mib "$BACKING" "$1"
}

# attach on|off: a loop device over $BACKING in LOOPDEV.
attach() {
	loop_attach --direct-io="$1" "$BACKING"
	local want=1
	[[ $1 == on ]] || want=0
	[[ $(<"/sys/block/${LOOPDEV#/dev/}/loop/dio") == "$want" ]] ||
		fail "$LOOPDEV: direct I/O is not $1"
}

read_error_reaches_reader() {
	backing_file 8
	attach "$1"
	fail_bios "$SCRATCH_DEV"
	run dd if="$LOOPDEV" of=/dev/null bs=64k count=1 skip=3 iflag=direct
	fail_bios_off "$SCRATCH_DEV"
	echo "dd: status $status: $output"
	assert_failure
	assert_output --partial "Input/output error"
	# The fault is gone: the same read succeeds and returns the file.
	cmp <(dd if="$LOOPDEV" bs=64k count=1 skip=3 iflag=direct status=none) \
		<(dd if="$BACKING" bs=64k count=1 skip=3 status=none) ||
		fail "after the fault: the device and the file differ"
}

write_error_reaches_writer() {
	backing_file 8
	attach "$1"
	fail_bios "$SCRATCH_DEV"
	# With direct I/O the write itself fails; buffered, it lands in the
	# backing file's page cache and the fsync (a flush request) fails.
	run dd if=/dev/urandom of="$LOOPDEV" bs=64k count=1 seek=5 \
		oflag=direct conv=fsync,notrunc
	fail_bios_off "$SCRATCH_DEV"
	echo "dd: status $status: $output"
	assert_failure
	assert_output --partial "Input/output error"
}

@test "faults: a read error under the backing file fails the read (dio on)" {
	read_error_reaches_reader on
}

@test "faults: a read error under the backing file fails the read (dio off)" {
	read_error_reaches_reader off
}

@test "faults: a write error under the backing file reaches the writer (dio on)" {
	write_error_reaches_writer on
}

@test "faults: a write error under the backing file reaches the writer (dio off)" {
	write_error_reaches_writer off
}

# enospc on|off: a sparse backing file on a full file system; 4 KiB
# writes with fsync until one fails. Every acknowledged one must read
# back, and one must fail.
enospc() {
	local i chunk=$BATS_TEST_TMPDIR/chunk acked=0 failed=
	SCRATCH_FS_SIZE=32M scratch_ext4 512 -m 0
	BACKING=$SCRATCH_MNT/backing.img
	truncate -s 8M "$BACKING"
	attach "$1"
	fill_fs "$SCRATCH_MNT" 64
	for ((i = 0; i < 64; i++)); do
		dd if=/dev/urandom of="$chunk.$i" bs=4k count=1 status=none
		if ! dd if="$chunk.$i" of="$LOOPDEV" bs=4k seek=$((i * 2)) \
			oflag=direct conv=fsync,notrunc status=none 2>"$chunk.err"; then
			failed=$i
			break
		fi
		acked=$((acked + 1))
	done
	echo "acknowledged $acked writes of 4 KiB; write $failed failed: $(<"$chunk.err")"
	[[ -n $failed ]] || fail "64 writes fit in 64 KiB of free space"
	# Direct I/O passes the backing file's ENOSPC up (BLK_STS_NOSPC); the
	# buffered path reports EIO.
	grep -qE "Input/output error|No space left on device" "$chunk.err" ||
		fail "write $failed: not an I/O or space error: $(<"$chunk.err")"
	drop_caches
	for ((i = 0; i < acked; i++)); do
		cmp "$chunk.$i" <(dd if="$BACKING" bs=4k skip=$((i * 2)) count=1 status=none) ||
			fail "write $i was acknowledged but is not in $BACKING"
	done
}

@test "faults: a full backing file system fails writes, keeps every acknowledged one (dio on)" {
	enospc on
}

@test "faults: a full backing file system fails writes, keeps every acknowledged one (dio off)" {
	enospc off
}

# resize_under_load on|off: random reads of the device while the backing
# file is truncated to 4 MiB and extended back to 8 MiB, 20 times. Then
# the device must read the file's bytes up to its end and, past it, EIO
# on both paths (buffered reads end as direct ones do since f2fed441c69b,
# kernel/patches/0004; 6.1 zero-filled a request across the end, the
# data before it included, which the cmp below catches on 6.1).
resize_under_load() {
	local i pid
	backing_file 8
	attach "$1"
	(
		while :; do
			dd if="$LOOPDEV" of=/dev/null bs=4k count=8 \
				skip=$((RANDOM % 2048)) iflag=direct status=none \
				2>/dev/null || true
		done
	) &
	pid=$!
	defer stop_background "$pid"
	for ((i = 0; i < 20; i++)); do
		truncate -s 4M "$BACKING"
		sleep 0.05
		truncate -s 8M "$BACKING"
		sleep 0.05
	done
	truncate -s 4M "$BACKING"
	stop_background "$pid"
	cmp -n $((4 * MiB)) "$LOOPDEV" "$BACKING" ||
		fail "the device differs from the file below its end"
	run dd if="$LOOPDEV" bs=4k count=1 skip=1536 iflag=direct status=none
	assert_failure
}

@test "faults: the backing file truncated and extended under load (dio on)" {
	resize_under_load on
}

@test "faults: the backing file truncated and extended under load (dio off)" {
	require_loop_fix f2fed441c69b
	resize_under_load off
}

# detach_in_flight on|off: detach while fio reads at queue depth 16 and
# another reader polls the statistics file: the detach is deferred to the
# last close, fio finishes without an error, then the device is free.
detach_in_flight() {
	command -v fio >/dev/null || skip "no fio"
	local fiopid statpid name i reads0
	backing_file 8
	LOOPDEV=$(losetup --find --show --direct-io="$1" "$BACKING") ||
		fail "losetup failed"
	name=${LOOPDEV#/dev/}
	defer detach_if_bound "$LOOPDEV"
	reads0=$(awk '{ print $1 }' "/sys/block/$name/stat")
	fio --name=inflight --filename="$LOOPDEV" --thread --direct=1 \
		--ioengine=libaio --iodepth=16 --rw=randread --bs=4k \
		--time_based --runtime=6 --output=/dev/null &
	fiopid=$!
	(
		while :; do
			cat "/sys/block/$name/loop/stat" "/sys/block/$name/loop/backing_file" \
				>/dev/null 2>&1 || true
		done
	) &
	statpid=$!
	defer stop_background "$statpid"
	# fio starts slowly under TCG: detach once its reads are completing
	# (the block layer's counters outlive earlier bindings: a delta).
	for ((i = 0; i < 300; i++)); do
		(($(awk '{ print $1 }' "/sys/block/$name/stat") > reads0 + 16)) && break
		sleep 0.1
	done
	(($(awk '{ print $1 }' "/sys/block/$name/stat") > reads0 + 16)) ||
		fail "fio did not start reading $LOOPDEV"
	losetup -d "$LOOPDEV" || fail "losetup -d $LOOPDEV failed while in use"
	wait "$fiopid" || fail "fio failed after the deferred detach"
	stop_background "$statpid"
	# The last close detached it.
	[[ ! -e /sys/block/$name/loop/backing_file ]] ||
		fail "$LOOPDEV still bound after the last close"
}

@test "faults: detach while I/O is in flight (dio on)" {
	detach_in_flight on
}

@test "faults: detach while I/O is in flight (dio off)" {
	detach_in_flight off
}
