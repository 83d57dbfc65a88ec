#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's first command, scripts/demo: its host part runs on the tools
# this tree built (NBIO_DEMO_BUILD=0, NBIO_DEMO_GUEST=0) and shows what it
# says it shows. The guest part runs in the guest suite
# (tests/guest/demo.bats).

load "${BATS_TEST_DIRNAME}/../helpers/nbcat.bash"
# setup, teardown: nbcat.bash's ($D where RWF_NOWAIT works, $F=$D/f)

# run_demo MIB: the host part of the demo on a MIB MiB file.
run_demo() {
	NBIO_DEMO_BUILD=0 NBIO_DEMO_GUEST=0 NBIO_DEMO_MIB=$1 TMPDIR=$D \
		NBIO_BUILDDIR=$NBIO_BUILDDIR \
		run --separate-stderr "$NBIO_SRCDIR/scripts/demo"
}

@test "scripts/demo, host part: runs to the end, the completed read equals the file" {
	run_demo 8
	assert_success
	# exit 2 when the cached-only run missed something; 0 is possible on
	# kernels whose RWF_NOWAIT miss starts readahead (this host's)
	assert_output --regexp "exit status: [02]; missing ranges"
	# one report per nbcat run: cold, warm, --cached-only, completed
	[[ $(grep -c '^FILE ' <<<"$stderr") -eq 4 ]] ||
		fail "expected 4 reports on stderr, got: $stderr"
	[[ $(grep -cE '^[0-9a-f]{64}  -$' <<<"$output") -eq 2 &&
		$(grep -E '^[0-9a-f]{64}  -$' <<<"$output" | sort -u | wc -l) -eq 1 ]] ||
		fail "nbcat's and the file's sha256 differ: $output"
}

@test "scripts/demo, host part: the evicted second half is reported missing" {
	local mib=8 ranges total=0 path off len
	require_nowait_noio "the cached-only run would bring part of the evicted half back"
	run_demo "$mib"
	assert_success
	assert_output --partial "exit status: 2; missing ranges"
	# exactly [half, end), unless the host reclaimed more under us
	ranges=$(grep -P '^/\S+/data\t[0-9]+\t[0-9]+$' <<<"$output") ||
		fail "no missing ranges in: $output"
	while IFS=$'\t' read -r path off len; do
		((off + len <= mib * MiB)) || fail "range beyond the end: $ranges"
		total=$((total + len))
	done <<<"$ranges"
	grep -qP "\t$((mib * MiB / 2))\t$((mib * MiB / 2))\$" <<<"$ranges" ||
		((total > mib * MiB / 2)) ||
		fail "expected [$((mib * MiB / 2)), $((mib * MiB))) missing: $ranges"
}
