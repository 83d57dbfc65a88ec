#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loop-dio.bats - the ground truth of loop direct I/O on 6.1, with
# util-linux's losetup (the baseline loopctl is measured against). Runs only
# in the guest: nothing here may touch the host's loop devices.
#
# What 6.1 does (linux-source-6.1, Debian 6.1.192, drivers/block/loop.c):
# - Buffered loop (lo_read_simple()): each request is a vfs_iter_read() of
#   the backing file, so the data sits in the backing file's page cache.
#   Direct I/O (lo_rw_aio(), ki_flags = IOCB_DIRECT): it does not.
# - Whatever reads the loop device through its own page cache (a buffered
#   read of /dev/loopN) keeps a second copy there. /proc/meminfo counts
#   block-device page cache as Buffers (si_meminfo(): nr_blockdev_pages())
#   and file page cache minus that as Cached (fs/proc/meminfo.c), so a
#   buffered read of /dev/loopN shows the double cache as Buffers (loop's
#   copy) + Cached (the backing file's copy), but only while the device is
#   open: the last close drops a block device's page cache (block/bdev.c,
#   blkdev_put_whole()). A file system on the loop device puts both copies
#   under Cached (its file's pages and the backing file's), with Buffers
#   holding only its metadata.
# - __loop_update_dio() turns direct I/O on only if the backing file can do
#   O_DIRECT (FMODE_CAN_ODIRECT) and lo_bdev_can_use_dio(): the loop's
#   logical block size is at least the backing device's and lo_offset is
#   a multiple of it. LOOP_CONFIGURE with LO_FLAGS_DIRECT_IO then clears
#   the flag without an error; only LOOP_SET_DIRECT_IO (loop_set_dio())
#   reports -EINVAL.

load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"

# How much to read through the loop device for the memory comparison.
LOOP_MIB=${NBIO_LOOP_MIB:-256}

setup() {
	guest_setup
	require_loop
	require_kernel_series 6.1
}

# backing_file DIR MIB: a fully written (not sparse) file of MIB MiB.
backing_file() {
	BACKING=$1/backing.img
	dd if=/dev/zero of="$BACKING" bs=1M count="$2" status=none conv=fsync ||
		fail "cannot write $BACKING"
}

# loop_attr NAME: /sys/block/loopN/NAME of $LOOPDEV.
loop_attr() {
	cat "/sys/block/${LOOPDEV#/dev/}/$1"
}

# read_delta ARGS...: drop caches, run ARGS, set DBUF and DCACHED to the
# growth of Buffers and Cached in MiB.
read_delta() {
	local b0 c0 b1 c1
	drop_caches
	b0=$(meminfo Buffers)
	c0=$(meminfo Cached)
	"$@" || fail "$* failed"
	b1=$(meminfo Buffers)
	c1=$(meminfo Cached)
	DBUF=$(((b1 - b0) / 1024))
	DCACHED=$(((c1 - c0) / 1024))
	echo "$*: Buffers +${DBUF} MiB, Cached +${DCACHED} MiB"
}

# about EXPECTED ACTUAL: ACTUAL within 10% (+ 8 MiB of noise) of EXPECTED.
about() {
	local want=$1 have=$2 slack=$(($1 / 10 + 8))
	((have >= want - slack && have <= want + slack)) ||
		fail "expected about $want MiB, got $have MiB"
}

@test "losetup --direct-io=on on ext4: dio is 1, and 0 without it" {
	scratch_ext4 512
	backing_file "$SCRATCH_MNT" 16
	loop_attach --direct-io=on "$BACKING"
	[ "$(loop_attr loop/dio)" = 1 ]
	run losetup --list --noheadings --output DIO "$LOOPDEV"
	assert_output --regexp '^ *1$'
	loop_attach --direct-io=off "$BACKING"
	[ "$(loop_attr loop/dio)" = 0 ]
}

@test "raw read of /dev/loopN: Buffers + Cached with buffered loop, Buffers only with direct I/O" {
	local mode
	scratch_ext4 512
	backing_file "$SCRATCH_MNT" "$LOOP_MIB"

	for mode in off on; do
		loop_attach --direct-io="$mode" "$BACKING"
		[ "$(loop_attr loop/dio)" = "$([[ $mode == on ]] && echo 1 || echo 0)" ]
		# The loop device's own page cache lives only while it is open:
		# the last close drops it (block/bdev.c, blkdev_put_whole() ->
		# blkdev_flush_mapping() -> kill_bdev()). Hold it open on fd 7.
		exec 7<"$LOOPDEV"
		read_delta dd if="$LOOPDEV" of=/dev/null bs=1M count="$LOOP_MIB" status=none
		about "$LOOP_MIB" "$DBUF"
		if [[ $mode == off ]]; then
			about "$LOOP_MIB" "$DCACHED"
		else
			about 0 "$DCACHED"
		fi
		exec 7<&-
		# Closed: the device's copy is gone from Buffers.
		[ $(($(meminfo Buffers) / 1024)) -lt 8 ]
	done
}

@test "ext4 on /dev/loopN: the double cache shows in Cached, not in Buffers" {
	local mib=$((LOOP_MIB / 2)) mode upper
	scratch_ext4 512
	backing_file "$SCRATCH_MNT" $((mib + 64))
	for mode in off on; do
		loop_attach --direct-io="$mode" "$BACKING"
		mkfs.ext4 -q -F "$LOOPDEV"
		upper=$BATS_TEST_TMPDIR/upper-$mode
		mkdir -p "$upper"
		mount -t ext4 -o noinit_itable "$LOOPDEV" "$upper"
		defer umount "$upper"
		dd if=/dev/zero of="$upper/file" bs=1M count="$mib" status=none conv=fsync
		read_delta dd if="$upper/file" of=/dev/null bs=1M status=none
		about 0 "$DBUF"
		if [[ $mode == off ]]; then
			about $((2 * mib)) "$DCACHED"
		else
			about "$mib" "$DCACHED"
		fi
	done
}

@test "4K-sector disk, 512-byte loop blocks: direct I/O silently stays off" {
	scratch_ext4 4k
	[ "$(cat "/sys/block/${SCRATCH_DEV#/dev/}/queue/logical_block_size")" = 4096 ]
	backing_file "$SCRATCH_MNT" 16

	# LOOP_CONFIGURE with LO_FLAGS_DIRECT_IO: no error, dio 0.
	run losetup --find --show --direct-io=on --sector-size 512 "$BACKING"
	assert_success
	LOOPDEV=${lines[-1]}
	defer losetup -d "$LOOPDEV"
	[ "$(loop_attr queue/logical_block_size)" = 512 ]
	[ "$(loop_attr loop/dio)" = 0 ]

	# Asking again on the bound device (LOOP_SET_DIRECT_IO) is refused.
	run losetup --direct-io=on "$LOOPDEV"
	assert_failure
	[ "$(loop_attr loop/dio)" = 0 ]

	# With 4096-byte loop blocks the same file gets direct I/O.
	loop_attach --direct-io=on --sector-size 4096 "$BACKING"
	[ "$(loop_attr queue/logical_block_size)" = 4096 ]
	[ "$(loop_attr loop/dio)" = 1 ]
}

@test "4K-sector disk, offset not a multiple of 4096: direct I/O stays off" {
	scratch_ext4 4k
	backing_file "$SCRATCH_MNT" 16
	loop_attach --direct-io=on --sector-size 4096 --offset 512 "$BACKING"
	[ "$(loop_attr loop/dio)" = 0 ]
	loop_attach --direct-io=on --sector-size 4096 --offset 8192 "$BACKING"
	[ "$(loop_attr loop/dio)" = 1 ]
}

@test "4K-sector disk, --direct-io=on without --sector-size" {
	scratch_ext4 4k
	backing_file "$SCRATCH_MNT" 16
	loop_attach --direct-io=on "$BACKING"
	echo "logical_block_size $(loop_attr queue/logical_block_size), dio $(loop_attr loop/dio)"
	# util-linux 2.38 opens the backing file with O_DIRECT for
	# --direct-io=on, so loop_configure() picks the backing device's
	# logical block size (4096) and direct I/O stays on.
	[ "$(loop_attr queue/logical_block_size)" = 4096 ]
	[ "$(loop_attr loop/dio)" = 1 ]
}
