#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# completions/loopctl: its command, option and column lists agree with
# `loopctl [<command>] --help` (so they cannot drift from the code), and
# what it offers for option arguments and operands: files, and loop
# devices from a fake /sys (bound ones have loop/backing_file). Nothing
# here runs a loopctl command other than --help.

load "${BATS_TEST_DIRNAME}/../helpers/completion.bash"

setup() {
	[[ -x $LOOPCTL ]] || fail "loopctl not built: $LOOPCTL"
	completion_setup loopctl
	# loop0 and loop3 free, loop1 and loop2 bound; vda is no loop device
	SYS=$BATS_TEST_TMPDIR/sys
	mkdir -p "$SYS"/block/{loop0,loop1/loop,loop2/loop,loop3,vda}
	echo /img1 >"$SYS/block/loop1/loop/backing_file"
	echo /img2 >"$SYS/block/loop2/loop/backing_file"
	_loopctl_sysfs=$SYS
}

# help_commands: the commands `loopctl --help` lists, with their aliases
help_commands() {
	"$LOOPCTL" --help | awk '
		/^[A-Za-z].*:$/ { in_cmds = ($0 == "Commands:"); next }
		in_cmds && /^ +[a-z]/ {
			print $1
			if (match($0, /\(alias: [a-z]+\)/))
				print substr($0, RSTART + 8, RLENGTH - 9)
		}' | sort
}

@test "completion: the commands offered are those of loopctl --help" {
	run diff <(help_commands) <(complete_line loopctl '')
	assert_success
	run help_commands
	assert_line attach
	assert_line list
}

@test "completion: each command's options are those of its --help" {
	local cmd
	run diff <(help_options "$LOOPCTL") <(complete_line loopctl -)
	assert_success
	for cmd in attach why status list set detach cache; do
		run diff <(help_options "$LOOPCTL" "$cmd") \
			<(complete_line loopctl "$cmd" -)
		assert_success
	done
	run help_options "$LOOPCTL" status
	assert_line -- --stats
	assert_line -- --output-all
}

@test "completion: a completion that misses an option fails the comparison" {
	# The check above, against a copy without status --stats.
	sed 's/ -s --stats//' "$NBIO_SRCDIR/completions/loopctl" \
		>"$BATS_TEST_TMPDIR/loopctl"
	# shellcheck disable=SC1091
	source "$BATS_TEST_TMPDIR/loopctl"
	run diff <(help_options "$LOOPCTL" status) \
		<(complete_line loopctl status -)
	assert_failure
	assert_output --partial '< --stats'
}

@test "completion: --output offers the columns of status and cache" {
	local cmd
	for cmd in status list cache; do
		run diff <(help_columns "$LOOPCTL" "$cmd") \
			<(complete_line loopctl "$cmd" -O '' | sed 's/,$//')
		assert_success
	done
	run help_columns "$LOOPCTL" status
	assert_line MAJ:MIN
	assert_line MAX-BACKLOG
	run help_columns "$LOOPCTL" cache
	assert_line BACK-CACHED
}

@test "completion: --output completes the last item, after a colon too" {
	run complete_line loopctl status --output=NAME,DIO-R
	assert_output - <<-'EOF'
		NAME,DIO-READ-BYTES,
		NAME,DIO-READ-REQS,
		NAME,DIO-REQ,
	EOF
	# readline replaces only what follows the last ':' (a word break)
	run complete_line loopctl list -O NAME,BACK-MAJ:M
	assert_output 'MIN,'
	run complete_line loopctl cache -O +back-c
	assert_output '+BACK-CACHED,'
}

@test "completion: --direct-io=<mode> and sector sizes" {
	run complete_line loopctl attach --direct-io=
	assert_output $'auto\noff\non'
	run complete_line loopctl set --direct-io=of
	assert_output off
	run complete_line loopctl set --sector-size ''
	assert_line 512
	assert_line auto
	assert_line "$(getconf PAGESIZE)"
	refute_line "$(($(getconf PAGESIZE) * 2))"
	# cache's -b is --bytes: no argument, the next word is a device
	run complete_line loopctl cache -b ''
	assert_output $'/dev/loop1\n/dev/loop2'
}

@test "completion: bound devices to show, set or detach, free ones to attach" {
	local cmd
	for cmd in status list cache set detach; do
		run complete_line loopctl "$cmd" ''
		assert_output $'/dev/loop1\n/dev/loop2'
	done
	# a device is not offered twice; set takes one
	run complete_line loopctl detach /dev/loop2 ''
	assert_output /dev/loop1
	run complete_line loopctl set /dev/loop1 ''
	assert_output ''
	run complete_line loopctl detach --all ''
	assert_output ''
	# attach <file> <device>: the device is a free one, after options
	# and their arguments
	run complete_line loopctl attach -b 4096 --offset 512 img ''
	assert_output $'/dev/loop0\n/dev/loop3'
}

@test "completion: files for attach, files and bound devices for why" {
	mkdir "$BATS_TEST_TMPDIR/w" && cd "$BATS_TEST_TMPDIR/w"
	touch disk.img disk.raw
	run complete_line loopctl attach --read-only dis
	assert_output $'disk.img\ndisk.raw'
	run complete_line loopctl why -o 4096 disk.r
	assert_output disk.raw
	run complete_line loopctl why /dev/loop
	assert_output $'/dev/loop1\n/dev/loop2'
	# files and devices together, each once
	run complete_line loopctl why ''
	assert_output $'/dev/loop1\n/dev/loop2\ndisk.img\ndisk.raw'
	mkdir dev && touch dev/loop1
	run complete_line loopctl why dev/
	assert_output dev/loop1
}
