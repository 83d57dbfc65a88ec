#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loop-short-io.bats - what a loop device does when the backing file
# returns fewer bytes than a request asked for. Each test is the
# regression test of one fix of the series and fails on the pristine 6.1
# kernel (the patch's Fixes: tag names the upstream commit that brought
# the bug):
#   kernel/patches/0003-loop-fail-a-short-direct-I-O-write-instead-of-comple.patch
#   kernel/patches/0004-loop-stop-using-vfs_iter_-read-write-for-buffered-I-.patch
# I/O to the loop device is O_DIRECT, so the device's own page cache never
# answers for the backing file.

load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"

setup() {
	guest_setup
	require_loop
}

# bytes FILE OFFSET LENGTH: LENGTH bytes of FILE from OFFSET, as hex.
bytes() {
	od -An -v -tx1 -j "$2" -N "$3" "$1" | tr -d ' \n'
}

@test "buffered loop: a read across the backing file's new end fails, and never returns zeroes for its data" {
	require_loop_fix f2fed441c69b
	# Regression test for the buffered path of
	# kernel/patches/0004-loop-stop-using-vfs_iter_-read-write-for-buffered-I-.patch
	# (commit f2fed441c69b upstream): 6.1's lo_read_simple() zero-filled
	# the whole request, the bytes before the end included, and
	# reported success. Now a buffered read ends as a direct one does:
	# what the file holds is read, the rest fails with EIO.
	local img out end=$((4 * MiB + 2 * KiB)) off=$((4 * MiB - 4 * KiB))
	scratch_ext4 512
	img=$SCRATCH_MNT/backing.img
	out=$BATS_TEST_TMPDIR/read
	dd if=/dev/urandom of="$img" bs=1M count=8 status=none conv=fsync
	loop_attach --direct-io=off "$img"
	[[ $(<"/sys/block/${LOOPDEV#/dev/}/loop/dio") == 0 ]]
	truncate -s "$end" "$img"

	# 8 KiB, two pages: the first lies before the new end, the second
	# straddles it (2 KiB of data, then 2 KiB past the end).
	run dd if="$LOOPDEV" of="$out" bs=8K count=1 iflag=direct,skip_bytes \
		skip="$off" status=none
	if ((status == 0)); then
		echo "the read succeeded; nonzero bytes: $(tr -d '\0' <"$out" | wc -c) of $((end - off)) in the file"
		fail "a read across the end of the backing file reported success"
	fi
	assert_output --partial "Input/output error"
	# What lies before the end still reads, and is the file's.
	dd if="$LOOPDEV" of="$out" bs=2K count=3 iflag=direct,skip_bytes \
		skip="$off" status=none || fail "the 6 KiB before the end do not read"
	[[ $(bytes "$out" 0 $((6 * KiB))) == "$(bytes "$img" "$off" $((6 * KiB)))" ]] ||
		fail "the 6 KiB before the end differ from the file"
}

@test "direct-I/O loop: a short write of the backing file fails the request" {
	require_loop_fix series
	# Regression test for kernel/patches/0003-loop-fail-a-short-direct-I-O-write-instead-of-comple.patch
	# ("loop: fail a short direct I/O write instead of completing it").
	local img data written
	# ext4 without extents: a direct write into a hole falls back to a
	# buffered write, which stops short when the file system is full.
	SCRATCH_FS_SIZE=16M scratch_ext4 512 -O ^extent,^64bit -b 4096 -m 0
	img=$SCRATCH_MNT/backing.img
	data=$BATS_TEST_TMPDIR/data
	truncate -s 4M "$img"
	loop_attach --direct-io=on "$img"
	[[ $(<"/sys/block/${LOOPDEV#/dev/}/loop/dio") == 1 ]]

	# Fill the file system, then free 32 KiB: less than the write needs.
	fill_fs "$SCRATCH_MNT" 32

	dd if=/dev/urandom of="$data" bs=64K count=1 status=none
	run dd if="$data" of="$LOOPDEV" bs=64K count=1 oflag=direct conv=notrunc
	echo "dd: status $status: $output"
	drop_caches
	written=$(cmp -l "$data" "$img" 2>/dev/null | head -n 1 | awk '{ print $1 - 1 }')
	echo "the backing file holds the first ${written:-65536} bytes of the write"
	if ((status == 0)); then
		[[ -z $written ]] ||
			fail "the write was acknowledged, but only $written of 65536 bytes reached $img"
	fi
	# The fill must have left too little room: otherwise this test
	# proves nothing.
	[[ -n $written ]] || fail "the whole write fit: the test did not produce a short write"
	assert_failure
	assert_output --partial "Input/output error"
}
