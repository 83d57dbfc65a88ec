#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl-devices.bats - loopctl and the device it works on, in the QEMU
# guest: a node replaced between check and open, a device name that cannot
# be printed, a device already bound, detach --remove and --all.

# Each @test runs in its own subshell by design: LOOPDEV and friends are
# per test.
# shellcheck disable=SC2030,SC2031
load "${BATS_TEST_DIRNAME}/../helpers/loopctl-guest.bash"

@test "status, cache, set, detach: a node replaced between check and open is refused" {
	local swap=$NBIO_BUILDDIR/tests/helpers/swapnode.so
	require_program "$swap"
	scratch_ext4 512
	image "$SCRATCH_MNT" 1
	lc_attach --direct-io=off "$IMG"
	local first=$LOOPDEV d=$BATS_TEST_TMPDIR/nodes cmd
	lc_attach --direct-io=off "$IMG"
	local second=$LOOPDEV
	mkdir -p "$d"
	for cmd in status cache "set --direct-io=on" detach; do
		rm -f "$d/dev" "$d/other"
		cp -a "$first" "$d/dev" && cp -a "$second" "$d/other" ||
			fail "cannot copy the device nodes"
		# $d/dev is checked as $first, then becomes $second at open
		# shellcheck disable=SC2086 # cmd: a command and its options
		run -1 env LD_PRELOAD="$swap" NBIO_SWAP_PATH="$d/dev" \
			NBIO_SWAP_WITH="$d/other" "$LOOPCTL" $cmd "$d/dev"
		assert_output --partial "$d/dev"
		assert_output --partial "the device node changed after it was checked"
		[[ ! -e $d/other ]] || fail "$cmd: the node was not swapped"
	done
	[[ -d /sys/block/${first#/dev/}/loop &&
	   -d /sys/block/${second#/dev/}/loop ]] || fail "a device was detached"
	[[ $(cat "/sys/block/${second#/dev/}/loop/dio") == 0 ]] ||
		fail "set changed the other device"
}

@test "attach whose device name cannot be printed: exit 1, detached again" {
	scratch_ext4 512
	image "$SCRATCH_MNT"
	local st=0
	"$LOOPCTL" attach --direct-io=off "$IMG" >/dev/full \
		2>"$BATS_TEST_TMPDIR/err" || st=$?
	[[ $st == 1 ]] || fail "exit $st, want 1: $(<"$BATS_TEST_TMPDIR/err")"
	grep -q 'cannot print the device name' "$BATS_TEST_TMPDIR/err" ||
		fail "no message: $(<"$BATS_TEST_TMPDIR/err")"
	grep -q 'detached again' "$BATS_TEST_TMPDIR/err" ||
		fail "not detached: $(<"$BATS_TEST_TMPDIR/err")"
	assert_nothing_attached
}

@test "attach to a bound device: exit 5, and the device is left alone" {
	scratch_ext4 512
	image "$SCRATCH_MNT"
	local first=$IMG
	lc_attach --direct-io=off "$first"
	image "$SCRATCH_MNT"
	run -5 "$LOOPCTL" attach --direct-io=off "$IMG" "$LOOPDEV"
	assert_output --partial "$LOOPDEV: device is busy"
	[[ $(attr loop/backing_file) == "$first" ]] || fail "device was touched"
}

@test "detach --remove removes the device node; --all detaches everything" {
	scratch_ext4 512
	image "$SCRATCH_MNT"
	lc_attach --direct-io=on "$IMG"
	run -0 "$LOOPCTL" detach --remove "$LOOPDEV"
	[[ ! -e $LOOPSYS ]] || fail "$LOOPSYS still exists"
	[[ ! -e $LOOPDEV ]] || fail "$LOOPDEV still exists"
	[[ -z $BOUND_BEFORE ]] || skip "other loop devices are bound: not running --all"
	lc_attach "$IMG"
	lc_attach "$IMG"
	run -0 "$LOOPCTL" detach --all
	[[ -z $(bound_devices) ]] || fail "still bound: $(bound_devices)"
}
