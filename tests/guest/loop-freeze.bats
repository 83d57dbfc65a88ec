#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loop-freeze.bats - a write to a loop device must not reach a frozen
# backing file system (fsfreeze, as snapshots and backups use it): it
# waits for the thaw, on the buffered path and with direct I/O alike.
# The direct I/O case is the regression test of
#   kernel/patches/0001-loop-add-file_start_write-and-file_end_write.patch
#   kernel/patches/0002-loop-use-kiocb-helpers-to-fix-lockdep-warning.patch
# (commits 39d86db34e41 and c4706c5058a7 upstream): 6.1's lo_rw_aio()
# writes without freeze protection, so the write completes, the backing
# file changes while frozen, and ext4 warns in ext4_journal_check_start()
# (the WARNING fails the test in teardown); with lockdep, releasing the
# protection in the completion without the kiocb helpers is reported too.
# The buffered case passes on 6.1 (lo_write_bvec() takes the protection)
# and must keep passing once buffered writes go through lo_rw_aio().

load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"

setup() {
	guest_setup
	require_loop
	command -v fsfreeze >/dev/null || skip "no fsfreeze"
	scratch_ext4 512
	BACKING=$SCRATCH_MNT/backing.img
	DATA=$BATS_TEST_TMPDIR/data
	dd if=/dev/urandom of="$DATA" bs=64K count=1 status=none
}

# disk_bytes FILE: the first 64 KiB of FILE as stored (O_DIRECT: not an
# answer from the page cache), as a checksum.
disk_bytes() {
	dd if="$1" bs=64K count=1 iflag=direct status=none | md5sum
}

# write_waits_for_thaw on|off: attach BACKING with direct I/O on or off,
# freeze its file system, write 64 KiB to the device, and check that
# the write neither completes nor changes the file until the thaw, and
# lands whole after it.
write_waits_for_thaw() {
	local before pid i
	loop_attach --direct-io="$1" "$BACKING"
	[[ $(<"/sys/block/${LOOPDEV#/dev/}/loop/dio") == "$([[ $1 == on ]] && echo 1 || echo 0)" ]] ||
		fail "losetup --direct-io=$1: loop/dio is not what was asked"
	before=$(disk_bytes "$BACKING")

	fsfreeze -f "$SCRATCH_MNT"
	defer thaw "$SCRATCH_MNT"
	dd if="$DATA" of="$LOOPDEV" bs=64K count=1 oflag=direct \
		conv=notrunc status=none &
	pid=$!
	# Bounded wait until the write either sleeps in the worker or ends.
	for ((i = 0; i < 300; i++)); do
		loop_worker_frozen && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if ! kill -0 "$pid" 2>/dev/null; then
		wait "$pid"
		echo "dd ended with status $? while $SCRATCH_MNT was frozen"
		[[ $(disk_bytes "$BACKING") == "$before" ]] ||
			echo "and $BACKING changed under the frozen file system"
		fail "a write completed on a frozen file system"
	fi
	loop_worker_frozen || fail "the write neither completed nor waits for the thaw"
	[[ $(disk_bytes "$BACKING") == "$before" ]] ||
		fail "$BACKING changed while its file system was frozen"

	fsfreeze -u "$SCRATCH_MNT"
	wait "$pid" || fail "the write failed after the thaw"
	[[ $(disk_bytes "$BACKING") == $(md5sum <"$DATA") ]] ||
		fail "$BACKING does not hold the write after the thaw"
}

@test "direct-I/O loop: a write to an allocated backing file waits for the thaw" {
	require_loop_fix c4706c5058a7
	dd if=/dev/zero of="$BACKING" bs=1M count=4 status=none conv=fsync
	write_waits_for_thaw on
}

@test "direct-I/O loop: a write into a sparse backing file waits for the thaw" {
	require_loop_fix c4706c5058a7
	truncate -s 4M "$BACKING"
	write_waits_for_thaw on
}

@test "buffered loop: a write waits for the thaw" {
	dd if=/dev/zero of="$BACKING" bs=1M count=4 status=none conv=fsync
	write_waits_for_thaw off
}
