#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl on the host: device-path validation: a path that is not a loop
# device, or none at all, is exit 2 for every command, each bad operand
# named.
# Run where no loop device of this host is reachable (isolated(), see
# ../helpers/loopctl-host.bash).

load "${BATS_TEST_DIRNAME}/../helpers/loopctl-host.bash"

@test "a path that is not a loop device: exit 2 for every command" {
	require_isolation
	local dev cmd
	for dev in /dev/null "$F" "$W"; do
		run -2 isolated "$LOOPCTL" attach --direct-io=off "$F" "$dev"
		assert_output "loopctl: $dev: not a loop device"
		run -2 isolated "$LOOPCTL" set --direct-io=on "$dev"
		assert_output "loopctl: $dev: not a loop device"
		run -2 isolated "$LOOPCTL" detach "$dev"
		assert_output "loopctl: $dev: not a loop device"
		for cmd in status list cache; do
			run -2 isolated "$LOOPCTL" "$cmd" "$dev"
			assert_output --partial "loopctl: $dev: not a loop device"
		done
	done
}

@test "a device that does not exist: exit 2" {
	require_isolation
	run -2 isolated "$LOOPCTL" detach /dev/loop12345
	assert_output --partial "/dev/loop12345: No such file or directory"
	run -2 isolated "$LOOPCTL" set --direct-io=off loop12345
	assert_output --partial "loop12345: No such file or directory"
	run -2 isolated "$LOOPCTL" attach --direct-io=off "$F" /dev/loop12345
	assert_output --partial "No such file or directory"
}

@test "an empty name is named '' in the message, never ': reason'" {
	require_isolation
	local cmd
	for cmd in status list cache detach "set --direct-io=on"; do
		# shellcheck disable=SC2086 # word splitting wanted
		run -2 isolated "$LOOPCTL" $cmd ""
		assert_output "loopctl: '': not a loop device"
	done
	run -2 isolated "$LOOPCTL" attach --dry-run "$F" ""
	assert_output "loopctl: '': not a loop device"
	run -1 isolated "$LOOPCTL" attach --dry-run ""
	assert_output "loopctl: '': No such file or directory"
	run -1 "$LOOPCTL" why ""
	assert_output "loopctl: '': No such file or directory"
}

@test "detach validates every device before detaching any, naming each bad one" {
	require_isolation
	run -2 isolated "$LOOPCTL" detach /dev/null /dev/loop12345
	assert_output "loopctl: /dev/null: not a loop device
loopctl: /dev/loop12345: No such file or directory"
}

@test "cache and status: every bad operand named, JSON still printed (empty)" {
	require_isolation
	local cmd key
	for cmd in cache status; do
		key=loopcache
		[[ $cmd == status ]] && key=loopdevices
		run -2 --separate-stderr isolated "$LOOPCTL" "$cmd" -J \
			/dev/null "$W/missing"
		assert_equal "$stderr" "loopctl: /dev/null: not a loop device
loopctl: $W/missing: No such file or directory"
		# valid JSON, the list empty: nothing could be read
		[[ $(jq -c ".$key" <<<"$output") == "[]" ]] ||
			fail "$cmd -J: not an empty list: $output"
		# as a table: no table at all, same messages
		run -2 --separate-stderr isolated "$LOOPCTL" "$cmd" \
			"$W/missing" /dev/null
		assert_output ""
		assert_equal "$stderr" "loopctl: $W/missing: No such file or directory
loopctl: /dev/null: not a loop device"
	done
}
