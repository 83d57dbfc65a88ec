#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loop-dio-off.bats - "direct I/O off" must mean that the backing file
# is read and written through its page cache, however the device was
# attached. The regression test of
#   kernel/patches/0004-loop-stop-using-vfs_iter_-read-write-for-buffered-I-.patch
# (commit f2fed441c69b upstream): 6.1's buffered path calls
# vfs_iter_read()/vfs_iter_write(), which do direct I/O whenever the
# backing file was opened O_DIRECT (losetup --direct-io=on and loopctl
# attach --direct-io=on open it so), so after LOOP_SET_DIRECT_IO(0)
# loop/dio says 0 while every request still bypasses the page cache.
# What is asserted is what the backing file really served: its page
# cache (fincore, as root), not the flag.

load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"

setup() {
	guest_setup
	require_loop
	scratch_ext4 512
	BACKING=$SCRATCH_MNT/backing.img
	dd if=/dev/urandom of="$BACKING" bs=1M count=8 status=none conv=fsync
}

# dio_is DEV 0|1: loop/dio of DEV is the value given.
dio_is() {
	[[ $(<"/sys/block/${1#/dev/}/loop/dio") == "$2" ]] ||
		fail "$1: loop/dio is $(<"/sys/block/${1#/dev/}/loop/dio"), want $2"
}

# reads_fill_cache: 4 MiB read from LOOPDEV must land in BACKING's page
# cache.
reads_fill_cache() {
	read_through "$LOOPDEV" "$BACKING"
	((RES >= 4 * MiB)) ||
		fail "direct I/O is off, yet the reads bypassed $BACKING's page cache ($RES bytes cached)"
}

@test "losetup --direct-io=on, then off: reads go through the backing file's page cache" {
	require_loop_fix f2fed441c69b
	loop_attach --direct-io=on "$BACKING"
	dio_is "$LOOPDEV" 1
	losetup --direct-io=off "$LOOPDEV" || fail "losetup --direct-io=off failed"
	dio_is "$LOOPDEV" 0
	reads_fill_cache
}

@test "losetup --direct-io=on, then off: writes go through the backing file's page cache" {
	require_loop_fix f2fed441c69b
	local res
	loop_attach --direct-io=on "$BACKING"
	losetup --direct-io=off "$LOOPDEV" || fail "losetup --direct-io=off failed"
	dio_is "$LOOPDEV" 0
	drop_caches
	dd if=/dev/urandom of="$LOOPDEV" bs=256K count=4 oflag=direct \
		conv=notrunc status=none || fail "write to $LOOPDEV failed"
	res=$(backing_cached "$BACKING")
	echo "after a 1 MiB write: $res bytes of $BACKING cached"
	((res >= MiB)) ||
		fail "direct I/O is off, yet the writes bypassed $BACKING's page cache ($res bytes cached)"
}

@test "loopctl attach --direct-io=on, then set --direct-io=off: reads go through the page cache" {
	# On every kernel: loopctl never opens the backing file O_DIRECT,
	# so the fix above is not needed for its own devices.
	LOOPDEV=$("$LOOPCTL" attach --direct-io=on "$BACKING") ||
		fail "loopctl attach failed"
	defer "$LOOPCTL" detach "$LOOPDEV"
	dio_is "$LOOPDEV" 1
	"$LOOPCTL" set --direct-io=off "$LOOPDEV" || fail "loopctl set failed"
	dio_is "$LOOPDEV" 0
	reads_fill_cache
}

@test "direct I/O on: reads bypass the backing file's page cache" {
	# The other side: the check above can tell the two paths apart.
	loop_attach --direct-io=on "$BACKING"
	dio_is "$LOOPDEV" 1
	read_through "$LOOPDEV" "$BACKING"
	((RES < MiB)) || fail "direct I/O is on, yet $RES bytes of $BACKING were cached"
}
