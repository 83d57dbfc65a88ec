#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# ext4-nowait-write.bats - buffered pwritev2(RWF_NOWAIT) on ext4, with
# the series' "ext4: overwrite cached, mapped pages with IOCB_NOWAIT"
# (kernel/patches): which writes complete without blocking, and that a
# refused one returns EAGAIN having changed nothing, byte for byte and in
# size. Written with the nowait-write probe (tests/helpers/nowait-write.c).
#
# What 6.1 does without the patch (linux-source-6.1, fs/ext4/file.c):
# ext4_buffered_write_iter() returns -EOPNOTSUPP for IOCB_NOWAIT, and
# ext4_file_open() does not set FMODE_BUF_WASYNC, so io_uring hands every
# buffered ext4 write to an io-wq worker. With it, a write is tried when
# it lies inside i_size, every page it touches is cached, uptodate and
# has its blocks mapped and written, no timestamp needs updating
# (file_modified_flags() refuses that under IOCB_NOWAIT) and it is not
# O_DSYNC; else -EAGAIN. A page refused after the first one ends the
# write short.

load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"

NOWAIT_WRITE=$NBIO_BUILDDIR/tests/helpers/nowait-write
# futimens() + write attempts: the coarse clock may tick in between
TRIES=50

setup() {
	guest_setup
	require_program "$NOWAIT_WRITE"
	require_program "$CACHECTL"
	# the patch is part of the series; NBIO_RUN_FIX_TESTS=1 runs the
	# tests anyway, to show them failing on a kernel without it
	require_loop_fix series
	scratch_ext4 4k -b 4096
	F=$SCRATCH_MNT/f
	# written through the page cache and written back: every page
	# cached, uptodate, with buffer heads mapped to written blocks
	dd if=/dev/urandom of="$F" bs=64K count=16 status=none conv=fsync ||
		fail "cannot write $F"
	cp "$F" "$BATS_TEST_TMPDIR/ref" || fail "cannot copy $F"
	SIZE=$((16 * 64 * KiB))
}

teardown() {
	guest_teardown
}

# expect_bytes FILE OFF LEN BYTE: LEN bytes of value BYTE at OFF.
expect_bytes() {
	local want got
	want=$(head -c "$3" /dev/zero | tr '\0' "\\$(printf %03o "$4")" | od -An -tx1 | md5sum)
	got=$(dd if="$1" bs=1 skip="$2" count="$3" status=none | od -An -tx1 | md5sum)
	[[ $want == "$got" ]] || fail "$1: [$2, +$3) is not all $4"
}

# expect_unchanged: $F is the reference copy, byte for byte and in size.
expect_unchanged() {
	[[ $(stat -c %s "$F") == "$SIZE" ]] || fail "size changed: $(stat -c %s "$F")"
	cmp "$F" "$BATS_TEST_TMPDIR/ref" || fail "$F changed"
}

# expect_only OFF LEN BYTE: $F is the reference but for LEN bytes of
# value BYTE at OFF.
expect_only() {
	local r=$BATS_TEST_TMPDIR/ref
	head -c "$2" /dev/zero | tr '\0' "\\$(printf %03o "$3")" |
		dd of="$r" bs=1 seek="$1" conv=notrunc status=none
	[[ $(stat -c %s "$F") == "$SIZE" ]] || fail "size changed"
	cmp "$F" "$r" || fail "$F differs from the expected contents"
}

@test "an overwrite of one cached, mapped page completes without blocking" {
	run "$NOWAIT_WRITE" -t "$TRIES" "$F" 8192 4096 171
	assert_success
	assert_output 4096
	expect_only 8192 4096 171
	# and it is in the file, not only in the page cache
	drop_caches
	expect_bytes "$F" 8192 4096 171
}

@test "an unaligned overwrite across many pages completes whole" {
	run "$NOWAIT_WRITE" -t "$TRIES" "$F" 1000 300000 7
	assert_success
	assert_output 300000
	expect_only 1000 300000 7
}

@test "a write that must update mtime is refused: EAGAIN, nothing written" {
	# file_modified_flags(): under IOCB_NOWAIT a needed timestamp update
	# is -EAGAIN on 6.1
	touch -d '2001-01-01' "$F"
	run "$NOWAIT_WRITE" "$F" 0 4096 1
	assert_failure 2
	assert_output EAGAIN
	expect_unchanged
}

@test "a write past i_size is refused: EAGAIN, size and bytes unchanged" {
	run "$NOWAIT_WRITE" -t "$TRIES" "$F" $((SIZE - 100)) 4096 2
	assert_failure 2
	assert_output EAGAIN
	expect_unchanged
}

@test "a page not in the page cache is refused and not read in" {
	"$CACHECTL" evict "$F" || fail "cannot evict $F"
	run "$NOWAIT_WRITE" -t "$TRIES" "$F" 65536 4096 3
	assert_failure 2
	assert_output EAGAIN
	[[ $(resident "$F") == 0 ]] || fail "the refused write read pages in"
	expect_unchanged
}

@test "a hole is refused: a block would have to be allocated" {
	local h=$SCRATCH_MNT/hole
	truncate -s "$SIZE" "$h" || fail "truncate failed"
	cat "$h" >/dev/null	# cached, uptodate zero pages
	run "$NOWAIT_WRITE" -t "$TRIES" "$h" 4096 4096 4
	assert_failure 2
	assert_output EAGAIN
	[[ $(stat -c %s "$h") == "$SIZE" && $(stat -c %b "$h") == 0 ]] ||
		fail "the hole changed: $(stat -c '%s bytes, %b blocks' "$h")"
	cmp "$h" <(head -c "$SIZE" /dev/zero) || fail "the hole's bytes changed"
}

@test "RWF_DSYNC is refused: EAGAIN, nothing written" {
	run "$NOWAIT_WRITE" -d -t "$TRIES" "$F" 0 4096 5
	assert_failure 2
	assert_output EAGAIN
	expect_unchanged
}

@test "data=journal: EOPNOTSUPP at once, so io_uring punts without trying" {
	# the same file takes the write under data=ordered
	run "$NOWAIT_WRITE" -t "$TRIES" "$F" 0 4096 6
	assert_success
	assert_output 4096
	# (chattr +j would not do: with delalloc on, 6.1's
	# ext4_inode_journal_mode() ignores the inode's flag)
	umount "$SCRATCH_MNT" || fail "umount failed"
	mount -t ext4 -o noinit_itable,data=journal "$SCRATCH_DEV" "$SCRATCH_MNT" ||
		fail "mount -o data=journal failed"
	cp "$F" "$BATS_TEST_TMPDIR/ref" || fail "cannot copy $F"
	cat "$F" >/dev/null	# cached, so only the data mode can refuse it
	run "$NOWAIT_WRITE" -t "$TRIES" "$F" 0 4096 60
	assert_failure 77
	assert_output EOPNOTSUPP
	expect_unchanged
}

@test "the second page not cached: a short write of the first, POSIX-style" {
	"$CACHECTL" evict "$F" 12288 4096 || fail "cannot evict a page"
	run "$NOWAIT_WRITE" -t "$TRIES" "$F" 8192 8192 8
	assert_success
	assert_output 4096
	expect_only 8192 4096 8
}

@test "a frozen file system: the write waits for the thaw, never writes into it" {
	local pid out=$BATS_TEST_TMPDIR/out
	require_cmd fsfreeze
	fsfreeze -f "$SCRATCH_MNT" || fail "fsfreeze -f failed"
	defer thaw "$SCRATCH_MNT"
	# pwritev2() waits in file_start_write(), sb_start_write(); no -t:
	# futimens() would wait there first
	"$NOWAIT_WRITE" "$F" 0 4096 9 >"$out" &
	pid=$!
	sleep 1
	kill -0 "$pid" 2>/dev/null || fail "the write did not wait: $(<"$out")"
	expect_unchanged
	fsfreeze -u "$SCRATCH_MNT" || fail "fsfreeze -u failed"
	wait "$pid" || :
	# after the thaw: written, or refused for its mtime update
	case $(<"$out") in
	4096) expect_only 0 4096 9 ;;
	EAGAIN) expect_unchanged ;;
	*) fail "after the thaw: $(<"$out")" ;;
	esac
}

# thaw MNT: fsfreeze -u, for teardown; a thawed MNT is not an error.
thaw() {
	fsfreeze -u "$1" 2>/dev/null || :
}

@test "fio io_uring random overwrites of a cached file verify, also after write-back" {
	local g=$SCRATCH_MNT/g job
	require_cmd fio
	dd if=/dev/zero of="$g" bs=1M count=32 status=none conv=fsync ||
		fail "cannot write $g"
	# invalidate=0: fio's default would drop the cache, and every write
	# would be refused and punted; this way most go the new path
	job=(--name=v --filename="$g" --size=32M --bs=4k --rw=randwrite
		--ioengine=io_uring --iodepth=8 --direct=0 --invalidate=0
		--verify=crc32c --verify_fatal=1 --thread --output=/dev/null)
	run fio "${job[@]}"
	assert_success
	drop_caches
	run fio "${job[@]}" --verify_only
	assert_success
}
