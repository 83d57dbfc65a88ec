#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# rwf-nowait-kernel.bats - the ground truth of preadv2(RWF_NOWAIT) on 6.1,
# on ext4 on the guest's scratch disk, read with the nowait-read probe
# (no nbcat): what a miss, a partial hit, a hole and a readahead marker
# return. nbcat on exactly these page-cache states: nbcat-nowait.bats.
#
# What 6.1 does (linux-source-6.1, Debian 6.1.192):
# - include/linux/fs.h, kiocb_set_rw_flags(): RWF_NOWAIT on a file without
#   FMODE_NOWAIT fails with -EOPNOTSUPP; otherwise it also sets IOCB_NOIO.
#   ext4_file_open() sets FMODE_NOWAIT (fs/ext4/file.c); shmem (tmpfs) has
#   no open method that does.
# - mm/filemap.c, filemap_get_pages(): when filemap_get_read_batch() finds
#   no page at the read position, IOCB_NOIO returns -EAGAIN before
#   page_cache_sync_readahead(): a miss reads nothing, not even ahead.
# - filemap_get_read_batch() stops at the first missing page, so
#   filemap_read() copies the cached prefix and returns it: a short read.
#   It also stops after a folio marked PG_readahead, and
#   filemap_readahead() returns -EAGAIN under IOCB_NOIO, so the read ends
#   before that folio even though the pages behind it are cached.

load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"

FILE_MIB=8

setup() {
	guest_setup
	require_kernel_series 6.1
	require_program "$CACHECTL"
	require_program "$NOWAIT_READ"
	scratch_file_mib "$FILE_MIB"
	PAGES=$((FILE_MIB * MiB / 4096))
}

@test "after drop_caches, a RWF_NOWAIT read fails with EAGAIN" {
	drop_caches
	[ "$(resident "$F")" -eq 0 ]
	run "$NOWAIT_READ" "$F" 0 "$MiB"
	assert_failure 2
	assert_output EAGAIN
}

@test "a RWF_NOWAIT miss starts no readahead (IOCB_NOIO), a blocking read does" {
	drop_caches
	run "$NOWAIT_READ" "$F" 0 "$MiB"
	assert_output EAGAIN
	run "$NOWAIT_READ" "$F" $((4 * MiB)) 4096
	assert_output EAGAIN
	[ "$(resident "$F")" -eq 0 ]

	# The same 4 KiB read without RWF_NOWAIT brings in a readahead window:
	# the check above can see readahead when there is some.
	dd if="$F" of=/dev/null bs=4k count=1 status=none
	run resident "$F"
	[ "$output" -gt 1 ]
}

@test "after a normal read, RWF_NOWAIT reads the whole file" {
	drop_caches
	cat "$F" >/dev/null
	[ "$(resident "$F")" -eq "$PAGES" ]
	run "$NOWAIT_READ" "$F" 0 $((FILE_MIB * MiB))
	assert_success
	assert_output $((FILE_MIB * MiB))
}

@test "partially cached: RWF_NOWAIT returns the cached prefix (a short read)" {
	local cached=$((3 * MiB + 8192))
	drop_caches
	"$CACHECTL" load "$F" 0 "$cached"
	[ "$(resident "$F")" -eq $((cached / 4096)) ]
	run "$NOWAIT_READ" "$F" 0 $((FILE_MIB * MiB))
	assert_success
	assert_output "$cached"
	# ... and the short read did not read ahead into the missing part.
	[ "$(resident "$F")" -eq $((cached / 4096)) ]
}

@test "a hole in the cache: the read stops at the first missing page" {
	drop_caches
	"$CACHECTL" load "$F" 0 $((2 * MiB))
	"$CACHECTL" load "$F" $((3 * MiB)) $((5 * MiB))
	run "$NOWAIT_READ" "$F" 0 $((FILE_MIB * MiB))
	assert_success
	assert_output $((2 * MiB))
	run "$NOWAIT_READ" "$F" $((2 * MiB)) "$MiB"
	assert_failure 2
	assert_output EAGAIN
	run "$NOWAIT_READ" "$F" $((3 * MiB)) $((5 * MiB))
	assert_success
	assert_output $((5 * MiB))
	[ "$(resident "$F")" -eq $((7 * MiB / 4096)) ]
}

@test "only the tail cached: a read from the start fails with EAGAIN" {
	drop_caches
	"$CACHECTL" load "$F" $((4 * MiB)) $((4 * MiB))
	run "$NOWAIT_READ" "$F" 0 $((FILE_MIB * MiB))
	assert_failure 2
	assert_output EAGAIN
	[ "$(resident "$F")" -eq $((4 * MiB / 4096)) ]
}

@test "a readahead marker ends a RWF_NOWAIT read before cached pages" {
	local res
	drop_caches
	# A 4 KiB blocking read at 0: the initial readahead window (mm/readahead.c,
	# get_init_ra_size(): 1 page -> 4 pages), PG_readahead on the second.
	dd if="$F" of=/dev/null bs=4k count=1 status=none
	res=$(resident "$F")
	[ "$res" -ge 2 ]
	run "$NOWAIT_READ" "$F" 0 "$MiB"
	assert_success
	[ "$output" -lt $((res * 4096)) ]
	assert_output 4096
	# Still stuck there: RWF_NOWAIT never triggers the async readahead
	# that would clear the mark.
	run "$NOWAIT_READ" "$F" 4096 "$MiB"
	assert_failure 2
	assert_output EAGAIN
	[ "$(resident "$F")" -eq "$res" ]
}

@test "RWF_NOWAIT at end of file returns 0" {
	run "$NOWAIT_READ" "$F" $((FILE_MIB * MiB)) 4096
	assert_success
	assert_output 0
}

@test "tmpfs refuses RWF_NOWAIT with EOPNOTSUPP" {
	local t=$BATS_TEST_TMPDIR/tmpfs
	mkdir -p "$t"
	mount -t tmpfs -o size=16m tmpfs "$t"
	defer umount "$t"
	dd if=/dev/urandom of="$t/data" bs=1M count=1 status=none
	run "$NOWAIT_READ" "$t/data" 0 4096
	assert_failure 77
	assert_output EOPNOTSUPP
	run "$CACHECTL" probe "$t/data"
	assert_failure 77
}
