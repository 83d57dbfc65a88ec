#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# rwf-nowait.bats - the ground truth of preadv2(RWF_NOWAIT) on 6.1, on ext4
# on the guest's scratch disk, and nbcat's classification of exactly these
# page-cache states.
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
	require_program "$PAGECACHE"
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
	"$PAGECACHE" load "$F" 0 "$cached"
	[ "$(resident "$F")" -eq $((cached / 4096)) ]
	run "$NOWAIT_READ" "$F" 0 $((FILE_MIB * MiB))
	assert_success
	assert_output "$cached"
	# ... and the short read did not read ahead into the missing part.
	[ "$(resident "$F")" -eq $((cached / 4096)) ]
}

@test "a hole in the cache: the read stops at the first missing page" {
	drop_caches
	"$PAGECACHE" load "$F" 0 $((2 * MiB))
	"$PAGECACHE" load "$F" $((3 * MiB)) $((5 * MiB))
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
	"$PAGECACHE" load "$F" $((4 * MiB)) $((4 * MiB))
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
	run "$PAGECACHE" probe "$t/data"
	assert_failure 77
}

# nbcat against the states above. Its report (--json) names every chunk
# class; chunks are 256 KiB by default.

# nbcat_run ARGS...: nbcat with stdout in $OUT, stderr in $ERR, the exit
# status in $status.
nbcat_run() {
	OUT=$BATS_TEST_TMPDIR/out
	ERR=$BATS_TEST_TMPDIR/err
	status=0
	"$NBCAT" "$@" >"$OUT" 2>"$ERR" || status=$?
	cat "$ERR"
}

# nbcat_field KEY: a key of the report's first row (--report report.json).
nbcat_field() {
	jq -r ".nbcat[0].$1" "$BATS_TEST_TMPDIR/report.json"
}

@test "nbcat --cached-only on a cold file: writes nothing, exit 2, starts no I/O" {
	require_program "$NBCAT"
	drop_caches
	nbcat_run --cached-only --json --report "$BATS_TEST_TMPDIR/report.json" \
		--missing "$BATS_TEST_TMPDIR/missing" "$F"
	cat "$BATS_TEST_TMPDIR/report.json"
	[ "$status" -eq 2 ]
	[ ! -s "$OUT" ]
	[ "$(nbcat_field mode)" = nowait ]
	[ "$(nbcat_field bytes)" -eq 0 ]
	[ "$(nbcat_field hit_bytes)" -eq 0 ]
	[ "$(nbcat_field missing)" -eq $((FILE_MIB * MiB)) ]
	[ "$(cat "$BATS_TEST_TMPDIR/missing")" = "$F"$'\t'0$'\t'$((FILE_MIB * MiB)) ]
	[ "$(resident "$F")" -eq 0 ]
}

@test "nbcat on a fully cached file: every chunk a hit" {
	require_program "$NBCAT"
	drop_caches
	cat "$F" >/dev/null
	nbcat_run --json --report "$BATS_TEST_TMPDIR/report.json" "$F"
	cat "$BATS_TEST_TMPDIR/report.json"
	[ "$status" -eq 0 ]
	cmp "$F" "$OUT"
	[ "$(nbcat_field mode)" = nowait ]
	[ "$(nbcat_field hit_bytes)" -eq $((FILE_MIB * MiB)) ]
	[ "$(nbcat_field hit_chunks)" -eq $((FILE_MIB * 4)) ]
	[ "$(nbcat_field partial_bytes)" -eq 0 ]
	[ "$(nbcat_field miss_bytes)" -eq 0 ]
	[ "$(nbcat_field hit_ratio)" = 1 ]
	nbcat_run --cached-only -q "$F"
	[ "$status" -eq 0 ]
	cmp "$F" "$OUT"
}

@test "nbcat on a partially cached file: hits, one partial chunk, then misses" {
	local cached=$((4 * MiB + 128 * 1024)) sum
	require_program "$NBCAT"
	drop_caches
	"$PAGECACHE" load "$F" 0 "$cached"

	# --cached-only stops at the first missing byte: exactly the prefix.
	nbcat_run --cached-only --json --report "$BATS_TEST_TMPDIR/report.json" \
		--missing "$BATS_TEST_TMPDIR/missing" "$F"
	cat "$BATS_TEST_TMPDIR/report.json"
	[ "$status" -eq 2 ]
	head -c "$cached" "$F" | cmp - "$OUT"
	[ "$(nbcat_field hit_chunks)" -eq 16 ]
	[ "$(nbcat_field hit_bytes)" -eq $((4 * MiB)) ]
	[ "$(nbcat_field partial_chunks)" -eq 1 ]
	[ "$(nbcat_field partial_bytes)" -eq $((128 * 1024)) ]
	[ "$(nbcat_field missing)" -eq $((FILE_MIB * MiB - cached)) ]
	[ "$(cat "$BATS_TEST_TMPDIR/missing")" = "$F"$'\t'"$cached"$'\t'$((FILE_MIB * MiB - cached)) ]
	[ "$(resident "$F")" -eq $((cached / 4096)) ]

	# The default strategy completes the misses with worker threads; the
	# first 17 chunks are classified from the state set up above (what
	# follows depends on the workers' readahead).
	nbcat_run --json --report "$BATS_TEST_TMPDIR/report.json" \
		--trace "$BATS_TEST_TMPDIR/trace" "$F"
	cat "$BATS_TEST_TMPDIR/report.json"
	[ "$status" -eq 0 ]
	cmp "$F" "$OUT"
	run awk -F '\t' 'NR <= 17 { print $3 }' "$BATS_TEST_TMPDIR/trace"
	assert_output "$(printf 'hit\n%.0s' {1..16})"$'\n'partial
	[ "$(nbcat_field hit_bytes)" -ge $((4 * MiB)) ]
	[ "$(nbcat_field miss_bytes)" -gt 0 ]
	sum=$(($(nbcat_field hit_bytes) + $(nbcat_field partial_bytes) + $(nbcat_field miss_bytes)))
	[ "$sum" -eq $((FILE_MIB * MiB)) ]
	[ "$(resident "$F")" -eq "$PAGES" ]
}

@test "nbcat --cached-only=skip on a hole: the exact missing range" {
	require_program "$NBCAT"
	drop_caches
	"$PAGECACHE" load "$F" 0 $((2 * MiB))
	"$PAGECACHE" load "$F" $((3 * MiB)) $((5 * MiB))
	nbcat_run --cached-only=skip --json --report "$BATS_TEST_TMPDIR/report.json" \
		--missing "$BATS_TEST_TMPDIR/missing" "$F"
	cat "$BATS_TEST_TMPDIR/report.json"
	[ "$status" -eq 2 ]
	[ "$(cat "$BATS_TEST_TMPDIR/missing")" = "$F"$'\t'$((2 * MiB))$'\t'"$MiB" ]
	[ "$(nbcat_field bytes)" -eq $((7 * MiB)) ]
	[ "$(nbcat_field missing)" -eq "$MiB" ]
	{ head -c $((2 * MiB)) "$F"; tail -c $((5 * MiB)) "$F"; } | cmp - "$OUT"
	[ "$(resident "$F")" -eq $((7 * MiB / 4096)) ]
}

@test "nbcat on tmpfs: unsupported, read with plain reads" {
	local t=$BATS_TEST_TMPDIR/tmpfs
	require_program "$NBCAT"
	mkdir -p "$t"
	mount -t tmpfs -o size=16m tmpfs "$t"
	defer umount "$t"
	dd if=/dev/urandom of="$t/data" bs=1M count=2 status=none
	nbcat_run --json --report "$BATS_TEST_TMPDIR/report.json" "$t/data"
	cat "$BATS_TEST_TMPDIR/report.json"
	[ "$status" -eq 0 ]
	cmp "$t/data" "$OUT"
	grep -q "nbcat: $t/data: non-blocking reads not supported" "$ERR"
	[ "$(nbcat_field mode)" = unsupported ]
	[ "$(nbcat_field unsup_bytes)" -eq $((2 * MiB)) ]
	[ "$(nbcat_field hit_bytes)" -eq 0 ]
}
