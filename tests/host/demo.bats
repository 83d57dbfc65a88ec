#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's first command, scripts/demo: its host part runs on the tools
# this tree built (NBIO_DEMO_BUILD=0, NBIO_DEMO_GUEST=0) and shows what it
# says it shows. The guest part runs in the guest suite
# (tests/guest/demo.bats).

load ../helpers/common

setup() {
	common_setup
	require_nowait "$D"
}

teardown() {
	common_teardown
}

@test "scripts/demo, host part: cold, warm, half-evicted, completed" {
	local mib=8 ranges end=0 total=0 path off len
	NBIO_DEMO_BUILD=0 NBIO_DEMO_GUEST=0 NBIO_DEMO_MIB=$mib TMPDIR=$D \
		NBIO_BUILDDIR=$NBIO_BUILDDIR \
		run --separate-stderr "$NBIO_SRCDIR/scripts/demo"
	assert_success
	assert_output --partial "exit status: 2; missing ranges"
	# one report per nbcat run: cold, warm, --cached-only, completed
	[[ $(grep -c '^FILE ' <<<"$stderr") -eq 4 ]] ||
		fail "expected 4 reports on stderr, got: $stderr"
	# The second half was evicted: a missing range ends at the end of the
	# file, and at least half the file is listed (the host may reclaim
	# more under us, never less).
	ranges=$(grep -P '^/\S+/data\t[0-9]+\t[0-9]+$' <<<"$output") ||
		fail "no missing ranges in: $output"
	while IFS=$'\t' read -r path off len; do
		total=$((total + len))
		((off + len != mib * MiB)) || end=1
	done <<<"$ranges"
	((end == 1)) || fail "no missing range ends at $((mib * MiB)): $ranges"
	((total >= mib * MiB / 2)) || fail "only $total bytes missing: $ranges"
	# the completed read equals the file
	[[ $(grep -cE '^[0-9a-f]{64}  -$' <<<"$output") -eq 2 &&
		$(grep -E '^[0-9a-f]{64}  -$' <<<"$output" | sort -u | wc -l) -eq 1 ]] ||
		fail "nbcat's and the file's sha256 differ: $output"
}
