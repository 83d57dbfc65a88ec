#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# guest.bats - not a test: the guest half of the benchmark, booted by
# tests/bench/run-all through tests/vm/run (which only runs bats files).
# Each "test" runs one bench script and writes under
# $NBIO_RESULTS/bench/; it fails only if the script itself fails. The
# parameters come from build/bench/guest-params.env (written by run-all,
# read through the read-only host view).

load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"

setup() {
	guest_setup
	OUT=$NBIO_RESULTS/bench
	mkdir -p "$OUT"
	BENCH_LOOP_ARGS=""
	BENCH_NBCAT_ARGS=""
	BENCH_LAT_ARGS=""
	BENCH_ONLY=""
	BENCH_LOOP_SCRIPT=""
	if [[ -r $NBIO_SRCDIR/build/bench/guest-params.env ]]; then
		# shellcheck disable=SC1091 # written by run-all
		. "$NBIO_SRCDIR/build/bench/guest-params.env"
	fi
}

@test "bench: loop table (raw / buffered loop / direct-I/O loop)" {
	[[ -z ${BENCH_ONLY:-} || $BENCH_ONLY == loop ]] || skip "BENCH_ONLY=$BENCH_ONLY"
	require_loop
	require_disk 512
	# shellcheck disable=SC2086 # a list of options
	"${BENCH_LOOP_SCRIPT:-$NBIO_SRCDIR/tests/bench/loop-bench}" $BENCH_LOOP_ARGS "$OUT/loop" \
		>"$OUT/loop-bench.out" 2>&1
}

@test "bench: nbcat strategies on ext4 on a scratch disk" {
	[[ -z ${BENCH_ONLY:-} || $BENCH_ONLY == nbcat ]] || skip "BENCH_ONLY=$BENCH_ONLY"
	require_disk 4k
	scratch_ext4 4k
	# shellcheck disable=SC2086
	NBIO_BUILDDIR=$NBIO_BUILDDIR "$NBIO_SRCDIR/tests/bench/nbcat-bench" \
		-d "$SCRATCH_MNT/tput" -o "$OUT/nbcat-bench.tsv" $BENCH_NBCAT_ARGS \
		>"$OUT/nbcat-bench.txt" 2>&1
	# shellcheck disable=SC2086
	NBIO_BUILDDIR=$NBIO_BUILDDIR "$NBIO_SRCDIR/tests/bench/nbcat-latency" \
		-d "$SCRATCH_MNT/lat" $BENCH_LAT_ARGS "$OUT/latency" \
		>"$OUT/nbcat-latency.out" 2>&1
}

@test "bench: loopctl status against losetup --list, 200 devices" {
	[[ -z ${BENCH_ONLY:-} || $BENCH_ONLY == list ]] || skip "BENCH_ONLY=$BENCH_ONLY"
	require_loop
	NBIO_BUILDDIR=$NBIO_BUILDDIR "$NBIO_SRCDIR/tests/bench/loopctl-list-bench" \
		>"$OUT/loopctl-list-bench.txt" 2>&1
}
