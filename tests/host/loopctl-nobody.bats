#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl on the host as nobody: permission messages and exit 4 before
# any device is touched.
# Run where no loop device of this host is reachable (isolated(), see
# ../helpers/loopctl-host.bash).

load "${BATS_TEST_DIRNAME}/../helpers/loopctl-host.bash"

@test "attach as nobody: permission message and exit 4, before any device" {
	require_isolation
	require_nobody
	run -4 isolated --nobody --control "$LOOPCTL" attach --direct-io=off "$F"
	assert_output "loopctl: /dev/loop-control: permission denied: attaching a loop device needs root (CAP_SYS_ADMIN); run it as root, e.g. with sudo"
	refute_output --partial "Operation not permitted"
}

@test "attach as nobody: a write-protected file is planned read-only" {
	require_isolation
	require_nobody
	chmod 0444 "$F"
	run -0 --separate-stderr isolated --nobody "$LOOPCTL" attach --dry-run \
		--direct-io=off "$F"
	assert_line "read-only:   yes"
	[[ $stderr == "loopctl: $F: write-protected, attaching read-only" ]] ||
		fail "stderr: $stderr"
	chmod 0000 "$F"
	run -4 isolated --nobody "$LOOPCTL" attach --dry-run "$F"
	assert_output "loopctl: $F: Permission denied"
}

@test "set, detach and cache as nobody: exit 2 for a non-loop path" {
	require_isolation
	require_nobody
	# validation comes first: a not-a-loop path answers exit 2, not 4
	run -2 isolated --nobody "$LOOPCTL" detach /dev/null
	assert_output "loopctl: /dev/null: not a loop device"
	run -2 isolated --nobody "$LOOPCTL" set --direct-io=off /dev/null
	assert_output "loopctl: /dev/null: not a loop device"
	run -2 isolated --nobody "$LOOPCTL" cache /dev/null
	assert_output --partial "loopctl: /dev/null: not a loop device"
}

# A root-only loop node that nobody cannot open: loopctl must give the
# permission message (exit 4) before trying to open it.
@test "set, detach and cache as nobody on a loop device: exit 4" {
	require_isolation
	require_nobody
	run -4 isolated --nobody --loopnode "$LOOPCTL" set --direct-io=off /dev/loop0
	assert_output "loopctl: /dev/loop0: permission denied: changing a loop device needs root (CAP_SYS_ADMIN); run it as root, e.g. with sudo"
	run -4 isolated --nobody --loopnode "$LOOPCTL" detach /dev/loop0
	assert_output "loopctl: /dev/loop0: permission denied: detaching a loop device needs root (CAP_SYS_ADMIN); run it as root, e.g. with sudo"
	run -4 isolated --nobody --loopnode "$LOOPCTL" cache /dev/loop0
	assert_output "loopctl: /dev/loop0: permission denied: reading a loop device's cache needs root (CAP_SYS_ADMIN); run it as root, e.g. with sudo"
	run -4 isolated --nobody --loopnode "$LOOPCTL" attach --direct-io=off "$F" /dev/loop0
	assert_output "loopctl: /dev/loop0: permission denied: attaching a loop device needs root (CAP_SYS_ADMIN); run it as root, e.g. with sudo"
	# the guard itself: the nobody wrapper refuses to run with privileges
	run -0 isolated --nobody id -u
	assert_output "$(id -u nobody)"
}
