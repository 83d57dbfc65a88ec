#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl on the host: attach up to the first device access: backing
# file errors, direct I/O impossible (exit 3), nothing to attach (exit
# 6), and the --dry-run plan.
# Run where no loop device of this host is reachable (isolated(), see
# ../helpers/loopctl-host.bash).

load "${BATS_TEST_DIRNAME}/../helpers/loopctl-host.bash"

@test "attach: backing file errors" {
	require_isolation
	mkfifo "$W/fifo"
	run -1 isolated "$LOOPCTL" attach "$W/missing"
	assert_output "loopctl: $W/missing: No such file or directory"
	run -1 isolated "$LOOPCTL" attach /dev/null
	assert_output "loopctl: /dev/null: not a regular file or block device"
	run -1 isolated "$LOOPCTL" attach "$W"
	assert_output --partial "loopctl: $W: Is a directory"
	# a FIFO is refused at once, not waited on
	run -1 timeout 20 "$LOOPCTL" attach --dry-run "$W/fifo"
	assert_output "loopctl: $W/fifo: not a regular file or block device"
	run -1 timeout 20 "$LOOPCTL" why "$W/fifo"
	assert_output "loopctl: $W/fifo: not a regular file or block device"
}

@test "attach: validation done, the first device access is /dev/loop-control" {
	require_isolation
	# everything is valid: loopctl gets as far as the loop driver, which
	# this namespace does not have
	run -1 isolated "$LOOPCTL" attach --direct-io=off "$F"
	assert_output "loopctl: /dev/loop-control: does not exist: is the loop driver loaded? (modprobe loop)"
}

@test "attach --direct-io=on with a misaligned offset: exit 3, nothing attached" {
	require_isolation
	local lbs label off
	run -0 "$LOOPCTL" why "$F"
	lbs=$(sed -n 's/.*logical block size \([0-9]*\)$/\1/p' <<<"$output")
	label=$(sed -n 's/^  block device: *\([^,]*\),.*/\1/p' <<<"$output")
	[[ -n $lbs ]] || skip "$F is not on a block device's file system"
	off=$((lbs + lbs / 2))
	# --control: were the check wrong, loopctl would stop at the fake
	# control file instead of reaching anything real
	run -3 isolated --control "$LOOPCTL" attach --direct-io=on \
		--offset=$off "$F"
	assert_line "loopctl: $F: direct I/O is impossible, nothing attached:"
	assert_line "loopctl: $F: offset $off is not a multiple of $lbs, the logical block size of $label; use an offset aligned to $lbs bytes"
	refute_output --partial "/dev/loop"
	# the same with the sector size given explicitly
	run -3 isolated --control "$LOOPCTL" attach --direct-io=on \
		--sector-size=4096 --offset=$off "$F"
	assert_output --partial "offset $off is not a multiple of $lbs"
}

@test "attach: an empty file or an offset at or past its end: exit 6" {
	require_isolation
	: >"$W/empty"
	# --control: had the check been skipped, loopctl would stop at the
	# fake control file (exit 1), not reach anything real
	run -6 isolated --control "$LOOPCTL" attach --direct-io=off "$W/empty"
	assert_output "loopctl: $W/empty: nothing to attach: the file is empty (the device would have 0 bytes)"
	run -6 isolated --control "$LOOPCTL" attach --dry-run "$W/empty"
	refute_output --partial "file:"
	# $F has 1 MiB: 1M is its end, 1T far past it
	local off
	for off in 1M 1T; do
		run -6 isolated --control "$LOOPCTL" attach --direct-io=off \
			--offset=$off "$F"
		assert_output --regexp "^loopctl: $F: nothing to attach: offset [0-9]+ is at or past the end of the file \(1048576 bytes\)"
	done
	run -6 isolated --control "$LOOPCTL" attach --dry-run --offset=1T "$F"
	# the last byte is still something to attach
	run -0 isolated --control "$LOOPCTL" attach --dry-run \
		--direct-io=off --offset=$((1048576 - 512)) "$F"
	assert_line "offset:      1048064"
	# the kernel counts whole 512-byte sectors: 511 bytes are 0 of them
	head -c 511 /dev/zero >"$W/tiny"
	run -6 isolated --control "$LOOPCTL" attach --direct-io=off "$W/tiny"
	assert_output "loopctl: $W/tiny: nothing to attach: 511 bytes from offset 0 to the end of the file, less than one 512-byte sector (the device would have 0 bytes)"
	head -c 512 /dev/zero >"$W/tiny"
	run -0 isolated --control "$LOOPCTL" attach --dry-run --direct-io=off "$W/tiny"
}

@test "attach --dry-run prints the plan and touches no device" {
	require_isolation
	# --control: a fake /dev/loop-control only root could open
	run -0 isolated --nobody --control "$LOOPCTL" attach --dry-run \
		--direct-io=off "$F"
	assert_line "file:        $F"
	assert_line "device:      first free"
	assert_line "direct I/O:  off"
	assert_line "sector size: kernel default"
	assert_line "read-only:   no"
}

@test "attach --dry-run: auto falls back to buffered and says why" {
	run -0 "$LOOPCTL" why "$F"
	grep -q "logical block size" <<<"$output" ||
		skip "$F is not on a block device's file system"
	run -0 --separate-stderr "$LOOPCTL" attach --dry-run --offset=100 "$F"
	assert_line "direct I/O:  off"
	[[ $stderr == *"$F: direct I/O is off, attaching with buffered I/O:"* ]] ||
		fail "no fallback warning: $stderr"
	[[ $stderr == *"offset 100 is not a multiple of"* ]] ||
		fail "no reason: $stderr"
	# --quiet drops the warning, not the decision
	run -0 --separate-stderr "$LOOPCTL" attach --dry-run -q --offset=100 "$F"
	assert_line "direct I/O:  off"
	[[ -z $stderr ]] || fail "--quiet still warned: $stderr"
}

@test "attach --dry-run: auto and on pick direct I/O on ext4, sector-size auto" {
	local lbs
	run -0 "$LOOPCTL" why "$F"
	lbs=$(sed -n 's/.*logical block size \([0-9]*\)$/\1/p' <<<"$output")
	[[ -n $lbs ]] || skip "$F is not on a block device's file system"
	odirect_works "$F" || skip "$F: O_DIRECT does not work here"
	run -0 "$LOOPCTL" attach --dry-run "$F"
	assert_line "direct I/O:  on"
	run -0 "$LOOPCTL" attach --dry-run --direct-io "$F"
	assert_line "direct I/O:  on"
	run -0 "$LOOPCTL" attach --dry-run --direct-io=on --sector-size=auto "$F"
	assert_line "direct I/O:  on"
	assert_line "sector size: $lbs (auto)"
}
