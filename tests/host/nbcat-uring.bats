#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# --strategy=uring: cat's bytes through io_uring, cached, cold, half
# cached, empty, odd sizes, a pipe, several files; a read the submit
# completed is a hit, one that waited a miss (nbcat(1) says what that
# can and cannot tell); the report's shape is the other strategies'; a
# kernel or filter that refuses io_uring is a clear error, exit 1, and a
# build without liburing says so.

load "${BATS_TEST_DIRNAME}/../helpers/nbcat.bash"

NOIOURING=$NBIO_BUILDDIR/tests/helpers/noiouring
C=$((64 * KiB))

# built_with_liburing: configure found liburing (config.h).
built_with_liburing() {
	grep -q '^#define HAVE_LIBURING 1' "$NBIO_BUILDDIR/config.h"
}

# require_uring: skip unless nbcat has the strategy and the running
# kernel lets us set up an io_uring.
require_uring() {
	built_with_liburing || skip "nbcat built without liburing (configure --without-liburing, or no liburing-dev)"
	local err
	err=$("$NBCAT" -q -s uring /dev/null 2>&1 >/dev/null) ||
		skip "io_uring unavailable on kernel $(uname -r): $err"
}

setup() {
	common_setup
	require_nowait "$D"
	F=$D/f
}

# warm_uring SIZE [NBCAT ARG]...: $F cached whole; every chunk a hit.
warm_uring() {
	local s=$1 n
	shift
	n=$(((s + C - 1) / C))
	cache_layout "$F" 0 "$s" || return 1
	nbcat_json -s uring -b 64K "$@" "$F"
	expect_status 0 && expect_output "$F" &&
		expect_row "$F" type=file mode=uring size="$s" bytes="$s" \
			chunks="$n" hit_chunks="$n" partial_chunks=0 \
			miss_chunks=0 unsup_chunks=0 hit_bytes="$s" \
			partial_bytes=0 miss_bytes=0 unsup_bytes=0
}

# cold_uring SIZE: $F evicted; some chunks waited, every byte is cat's
# and is in exactly one class.
cold_uring() {
	local s=$1 hits misses
	"$CACHECTL" evict "$F" || return 1
	nbcat_json -s uring -b 64K -m "$D/missing" "$F"
	expect_status 0 && expect_output "$F" || return 1
	expect_row "$F" mode=uring size="$s" bytes="$s" \
		chunks=$(((s + C - 1) / C)) partial_chunks=0 unsup_chunks=0 \
		partial_bytes=0 unsup_bytes=0 || return 1
	read -r hits misses < <(report_values "$F" hit_bytes miss_bytes)
	assert_equal $((hits + misses)) "$s"
	read -r misses < <(report_values "$F" miss_chunks)
	# the one outcome that depends on timing: a submit whose own
	# readahead finished before it copied completes as a hit
	((misses > 0)) || return 1
	[[ $(json_type "$F" fallback_p50_ns) == number ]]
	[[ -s $D/missing ]]
}

@test "cached file: cat's bytes, every chunk a hit, no fallback read" {
	require_uring
	local s=$((10 * C + 1000))
	make_file_bytes "$F" "$s"
	retry_warm warm_uring "$s"
	expect_ratio "$F" hit_ratio 1
	expect_row "$F" eagain_p50_ns=null fallback_p50_ns=null \
		readahead_on_miss=false
	[[ $(json_type "$F" nowait_p50_ns) == number ]]
}

@test "evicted file: cat's bytes, chunks that waited are misses" {
	require_uring
	local s=$((8 * MiB))
	make_file_mib "$F" 8
	retry "${NBIO_COLD_ATTEMPTS:-8}" \
		"the submit's own readahead may finish before it copies" \
		cold_uring "$s"
	# a miss is written like a worker's read: its range in --missing,
	# its submit under EAGAIN, its wait under FALLBACK
	[[ $(json_type "$F" eagain_p50_ns) == number ]]
	expect_row "$F" readahead_on_miss=false
}

# half_uring: every other MiB of $F cached.
half_uring() {
	local s=$((8 * MiB)) hits misses chunks
	cache_layout "$F" 0 "$MiB" $((2 * MiB)) "$MiB" $((4 * MiB)) "$MiB" \
		$((6 * MiB)) "$MiB" || return 1
	nbcat_json -s uring -b 64K "$F"
	expect_status 0 && expect_output "$F" || return 1
	read -r chunks hits misses < <(report_values "$F" chunks hit_chunks \
		miss_chunks)
	assert_equal "$chunks" $((s / C))
	assert_equal $((hits + misses)) "$chunks"
	# the cached MiBs are hits whatever the timing; some cold one waited
	((hits >= s / 2 / C && misses > 0))
}

@test "half-cached file: cat's bytes, the cached half hits, the rest partly misses" {
	require_uring
	make_file_mib "$F" 8
	retry "${NBIO_COLD_ATTEMPTS:-8}" \
		"the submit's own readahead may finish before it copies" \
		half_uring
}

@test "empty file and sizes off the chunk size: cat's bytes, cached and cold" {
	require_uring
	local s
	for s in 0 1 $((C - 1)) $((C + 1)) $((3 * C + 5)) $((MiB + 7)); do
		make_file_bytes "$F" "$s"
		"$CACHECTL" evict "$F"
		nbcat_json -s uring -b 64K "$F"
		expect_status 0
		expect_output "$F"
		expect_row "$F" mode=uring size="$s" bytes="$s" \
			chunks=$(((s + C - 1) / C))
		nbcat_json -s uring -b 64K "$F"
		expect_output "$F"
		expect_row "$F" bytes="$s" hit_bytes="$s" miss_bytes=0
	done
	# and through one slot, so each chunk is written before the next
	nbcat_json -s uring -b 64K -w 1 "$F"
	expect_output "$F"
}

@test "stdin: from a pipe read() as by the other strategies; a file, through io_uring" {
	require_uring
	local s=$((3 * C + 5))
	make_file_bytes "$F" "$s"
	nbcat_status=0
	# shellcheck disable=SC2002 # the pipe is the point
	cat "$F" | "$NBCAT" -J --report "$D/report.json" -s uring -b 64K \
		>"$D/out" 2>"$D/err" || nbcat_status=$?
	expect_status 0
	expect_output "$F"
	expect_row - mode=stream bytes="$s" hit_chunks=0 miss_chunks=0
	nbcat_json -s uring -b 64K - <"$F"
	expect_status 0
	expect_output "$F"
	expect_row - mode=uring bytes="$s" chunks=4
}

@test "several files, cached, cold and empty: cat's bytes, one row each" {
	require_uring
	make_file_bytes "$D/a" $((2 * C + 3))
	make_file_mib "$D/b" 2
	: >"$D/c"
	nbcat_json -s uring -b 64K "$D/a" "$D/b" "$D/c" "$D/a"
	expect_status 0
	expect_output "$D/a" "$D/b" "$D/c" "$D/a"
	expect_row @0 mode=uring bytes=$((2 * C + 3))
	expect_row @1 mode=uring bytes=$((2 * MiB))
	expect_row @2 mode=uring bytes=0 chunks=0
	expect_row @3 mode=uring bytes=$((2 * C + 3))
	expect_row total mode=null bytes=$((2 * MiB + 4 * C + 6)) \
		chunks=$((2 * MiB / C + 6))
}

@test "report: the keys, their order and types are the other strategies'" {
	require_uring
	make_file_bytes "$F" $((4 * C))
	nbcat_json -s nowait "$F"
	jq -c '[.nbcat[] | keys_unsorted], (.nbcat[0] | map_values(type))' \
		"$D/report.json" >"$D/shape.nowait"
	nbcat_json -s uring --trace "$D/trace" "$F"
	expect_status 0
	jq -c '[.nbcat[] | keys_unsorted], (.nbcat[0] | map_values(type))' \
		"$D/report.json" >"$D/shape.uring"
	cmp "$D/shape.nowait" "$D/shape.uring" || {
		diff "$D/shape.nowait" "$D/shape.uring" >&2
		false
	}
	expect_row "$F" mode=uring
	expect_trace_wellformed "$D/trace" "$F"
	# the table: the same default columns, MODE says uring
	nbcat_run -s uring "$F"
	run -0 awk 'NR == 1 { print $1, $2, $NF } NR == 2 { print $2 }' "$D/err"
	assert_output $'FILE MODE BPS\nuring'
}

@test "file without non-blocking reads (procfs): plain reads, mode unsupported" {
	require_uring
	cat /proc/version >"$D/expected.version"
	nbcat_json -s uring /proc/version
	expect_status 0
	expect_output "$D/expected.version"
	expect_lines "$D/err" \
		"nbcat: /proc/version: non-blocking reads not supported, using plain reads"
	expect_row /proc/version mode=unsupported unsup_chunks=1 hit_chunks=0 \
		miss_chunks=0
}

@test "io_uring refused (seccomp, as kernel.io_uring_disabled): exit 1, says why" {
	require_uring
	require_program "$NOIOURING"
	local rc=0
	make_file_bytes "$F" "$C"
	echo keep >"$D/trace"
	"$NOIOURING" true || rc=$?
	((rc != 77)) || skip "no seccomp filters in kernel $(uname -r)"
	run --separate-stderr -1 "$NOIOURING" "$NBCAT" -s uring \
		--trace "$D/trace" "$F"
	assert_output ""
	assert_equal "$stderr" "nbcat: --strategy=uring: io_uring unavailable: Operation not permitted (kernel.io_uring_disabled, or a seccomp filter?)"
	# refused before the side file was opened, let alone truncated
	assert_equal "$(<"$D/trace")" keep
	# the filter takes io_uring only: the default strategy still reads
	"$NOIOURING" "$NBCAT" -q "$F" | cmp - "$F"
}

@test "uring with --cached-only or --prefetch: refused as bad usage" {
	make_file_bytes "$F" "$C"
	run --separate-stderr -1 "$NBCAT" -s uring --cached-only "$F"
	assert_output ""
	assert_equal "$stderr" "nbcat: --cached-only and --strategy=uring are mutually exclusive
Try 'nbcat --help' for more information."
	run --separate-stderr -1 "$NBCAT" --prefetch -s uring "$F"
	assert_equal "$stderr" "nbcat: --prefetch and --strategy=uring are mutually exclusive
Try 'nbcat --help' for more information."
}

@test "built without liburing: --strategy=uring says so, exit 1" {
	built_with_liburing && skip "nbcat built with liburing"
	make_file_bytes "$F" "$C"
	echo keep >"$D/trace"
	run --separate-stderr -1 "$NBCAT" -s uring --trace "$D/trace" "$F"
	assert_output ""
	assert_equal "$stderr" "nbcat: --strategy=uring: not built with liburing"
	assert_equal "$(<"$D/trace")" keep
}
