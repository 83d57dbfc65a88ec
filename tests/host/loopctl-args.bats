#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl on the host: every argument error, all reported before any
# device is looked at (exit 1).
# Run where no loop device of this host is reachable (isolated(), see
# ../helpers/loopctl-host.bash).

load "${BATS_TEST_DIRNAME}/../helpers/loopctl-host.bash"

@test "attach: missing and extra arguments" {
	run -1 "$LOOPCTL" attach
	assert_output --partial "loopctl: attach: no file given"
	assert_output --partial "Try 'loopctl attach --help'"
	run -1 "$LOOPCTL" attach "$F" /dev/loop0 extra
	assert_output --partial "unexpected argument 'extra'"
}

@test "attach --autoclear: needs a command, and a command needs --autoclear" {
	# all refused while parsing, before the file is even opened
	run -1 "$LOOPCTL" attach --autoclear "$W/missing"
	assert_line "loopctl: attach: --autoclear needs a command (after --) to run while the device is held; for a mount use 'mount -o loop'"
	assert_line "Try 'loopctl attach --help' for more information."
	run -1 "$LOOPCTL" attach --autoclear --dry-run "$F"
	assert_output --partial "--autoclear needs a command"
	run -1 "$LOOPCTL" attach "$W/missing" -- true
	assert_line "loopctl: attach: a command (after --) needs --autoclear"
	run -1 "$LOOPCTL" attach --autoclear "$W/missing" --
	assert_line "loopctl: attach: no command given after --"
	run -1 "$LOOPCTL" attach --autoclear -- true
	assert_line "loopctl: attach: no file given"
	# operands after -- belong to the command, not to attach
	run -1 "$LOOPCTL" attach --autoclear "$F" /dev/loop0 extra -- true
	assert_line "loopctl: attach: unexpected argument 'extra'"
	# --dry-run with a command: the plan, and nothing run
	run -0 "$LOOPCTL" attach --autoclear --dry-run --direct-io=off "$F" \
		-- touch "$W/ran"
	assert_line "file:        $F"
	[[ ! -e $W/ran ]] || fail "--dry-run ran the command"
}

@test "attach/set: bad --direct-io values" {
	local v
	for v in maybe ON 1 yes ""; do
		run -1 "$LOOPCTL" attach --direct-io="$v" --dry-run "$F"
		assert_output --partial "--direct-io: '$v': not on, auto or off"
		run -1 "$LOOPCTL" set --direct-io="$v" /dev/null
		assert_output --partial "not on, auto or off"
	done
}

@test "attach: bad --sector-size values" {
	local v
	for v in 0 256 1000 3000 1M 8192 65536 abc -512 4096x "" autox; do
		run -1 "$LOOPCTL" attach --dry-run --sector-size="$v" "$F"
		assert_output --partial "--sector-size: '$v': not a power of two from 512 to $(getconf PAGESIZE), or auto"
		refute_output --partial "file:"
	done
	run -1 "$LOOPCTL" why -b 768 "$F"
	assert_output --partial "not a power of two"
}

@test "attach: bad --offset and --sizelimit values" {
	local v
	for v in abc -1 " 1" 1x 1.5K 4Kx ""; do
		run -1 "$LOOPCTL" attach --dry-run --offset="$v" "$F"
		assert_output --partial "--offset: '$v': not a size in bytes"
		run -1 "$LOOPCTL" attach --dry-run --sizelimit="$v" "$F"
		assert_output --partial "--sizelimit: '$v': not a size in bytes"
	done
	# above what loop_info64 accepts (LLONG_MAX): EOVERFLOW in the kernel
	for v in 99999999999999999999 8E 9223372036854775808; do
		run -1 "$LOOPCTL" attach --dry-run --offset="$v" "$F"
		assert_output --partial "--offset: '$v': too large"
	done
	# the largest accepted, past the end of $F: parsed, then refused
	run -6 "$LOOPCTL" attach --dry-run --direct-io=off \
		--offset=9223372036854775807 "$F"
	assert_output --partial "offset 9223372036854775807 is at or past the end"
	run -1 "$LOOPCTL" attach --dry-run --sizelimit=1000 "$F"
	assert_output --partial "--sizelimit: '1000': not a multiple of 512 bytes"
	run -1 "$LOOPCTL" why --offset=x "$F"
	assert_output --partial "--offset: 'x': not a size in bytes"
}

@test "sizes take binary suffixes" {
	run -0 "$LOOPCTL" attach --dry-run --direct-io=off --offset=4K \
		--sizelimit=1M "$F"
	assert_line "offset:      4096"
	assert_line "sizelimit:   1048576"
	run -0 "$LOOPCTL" attach --dry-run --direct-io=off --offset=2KB "$F"
	assert_line "offset:      2000"
	run -0 "$LOOPCTL" attach --dry-run --direct-io=off --offset=1KiB -b 4k "$F"
	assert_line "offset:      1024"
	assert_line "sector size: 4096"
}

@test "set: argument errors" {
	run -1 "$LOOPCTL" set
	assert_output --partial "loopctl: set: no device given"
	run -1 "$LOOPCTL" set /dev/null
	assert_output --partial "set: nothing to change: give --direct-io or --sector-size"
	run -1 "$LOOPCTL" set --direct-io=on /dev/null /dev/zero
	assert_output --partial "unexpected argument '/dev/zero'"
	run -1 "$LOOPCTL" set --sector-size=100 /dev/null
	assert_output --partial "not a power of two"
}

@test "detach: argument errors" {
	run -1 "$LOOPCTL" detach
	assert_output --partial "detach: no device given (or --all)"
	run -1 "$LOOPCTL" detach --all /dev/null
	assert_output --partial "--all and a device list are mutually exclusive"
}

@test "status and cache: output option errors" {
	local cmd
	for cmd in status list cache; do
		run -1 "$LOOPCTL" "$cmd" --json --raw
		assert_output --partial "$cmd: --json and --raw are mutually exclusive"
		run -1 "$LOOPCTL" "$cmd" --output NAME,NOSUCH
		assert_output --partial "--output: unknown column 'NOSUCH'"
		run -1 "$LOOPCTL" "$cmd" -O ''
		assert_output --partial "--output: no columns given"
	done
	run -1 "$LOOPCTL" status -O DIO-WHY,FROB
	assert_output --partial "unknown column 'FROB'"
}

@test "why: argument errors" {
	run -1 "$LOOPCTL" why
	assert_output --partial "why: no file or device given"
	run -1 "$LOOPCTL" why "$F" "$F"
	assert_output --partial "unexpected argument"
	run -1 "$LOOPCTL" why "$W/missing"
	assert_output --partial "$W/missing: No such file or directory"
	run -1 "$LOOPCTL" why /dev/null
	assert_output --partial "/dev/null: not a regular file or block device"
	run -1 "$LOOPCTL" why "$W"
	assert_output --partial "not a regular file or block device"
}
