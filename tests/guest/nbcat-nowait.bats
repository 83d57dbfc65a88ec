#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nbcat-nowait.bats - nbcat on 6.1 on the page-cache states whose
# RWF_NOWAIT ground truth rwf-nowait-kernel.bats establishes (a cold
# file, a cached one, a cached prefix, a hole, tmpfs), on ext4 on the
# guest's scratch disk: its classification of every chunk is exact.

load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"

FILE_MIB=8

setup() {
	guest_setup
	require_kernel_series 6.1
	require_program "$CACHECTL"
	scratch_file_mib "$FILE_MIB"
	PAGES=$((FILE_MIB * MiB / 4096))
}

# nbcat's report (--json) names every chunk class; chunks are 256 KiB by
# default.

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
	"$CACHECTL" load "$F" 0 "$cached"

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
	"$CACHECTL" load "$F" 0 $((2 * MiB))
	"$CACHECTL" load "$F" $((3 * MiB)) $((5 * MiB))
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

@test "nbcat on a cold stretch: --jobs misses to the workers, then read inline" {
	local dev ra
	require_program "$NBCAT"
	# no readahead on the scratch disk: each read brings in only its own
	# pages, so every chunk's probe misses
	dev=$(basename "$(readlink -f "$SCRATCH_DEV")")
	ra=/sys/block/$dev/queue/read_ahead_kb
	defer eval "echo $(<"$ra") >$ra"
	echo 0 >"$ra"
	drop_caches
	nbcat_run -j 2 --trace "$BATS_TEST_TMPDIR/trace" "$F"
	[ "$status" -eq 0 ]
	cmp "$F" "$OUT"
	run awk -F '\t' '$3 == "miss"' "$BATS_TEST_TMPDIR/trace"
	[ "${#lines[@]}" -eq 32 ]
	# the first two misses go to the two workers; from the third on,
	# every worker has one and nothing cached follows: the main thread
	run awk -F '\t' '$3 == "fallback" { print $1 }' "$BATS_TEST_TMPDIR/trace"
	assert_output "$(printf '0\n262144')"
	run awk -F '\t' '$3 == "inline" { n++; s += $2 } END { print n, s }' \
		"$BATS_TEST_TMPDIR/trace"
	assert_output "30 $((30 * 256 * KiB))"
}
