#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/bench/loop-ab's option handling, through -D (print the resolved
# settings and exit: nothing is built or booted): -q's presets fill only
# what was not given, so -q -c CELL runs that cell alone; bad numbers
# are refused with the option's name and exit 1.

# shellcheck disable=SC2154 # $stderr: set by bats' run --separate-stderr
load "${BATS_TEST_DIRNAME}/../helpers/rc.bash"

LOOP_AB=${LOOP_AB:-$NBIO_SRCDIR/tests/bench/loop-ab}

@test "no options: the full matrix, two rounds, pristine against default" {
	run --separate-stderr "$LOOP_AB" -D
	assert_success
	assert_output "a=pristine
b=default
rounds=2
guest_args=-t 8 -p 25,50,80,95 -s raw,buf,dio -n 1"
}

@test "-q alone: its presets" {
	run --separate-stderr "$LOOP_AB" -D -q
	assert_success
	assert_line 'rounds=1'
	assert_line 'guest_args=-t 6 -p 80,95 -s raw,dio -n 2 -c libaio-randread,psync-randwrite'
}

@test "-q with -c, -p, -t, -n, -s, -r: every option given wins over -q" {
	# before the fix -q overwrote all but -r, so both cells ran
	run --separate-stderr "$LOOP_AB" -D -q -c psync-randwrite -p 95 \
		-t 3 -n 4 -s raw,buf,dio -r 3 A B
	assert_success
	assert_output "a=A
b=B
rounds=3
guest_args=-t 3 -p 95 -s raw,buf,dio -n 4 -c psync-randwrite"
	# order does not matter: the option before -q wins just the same
	run --separate-stderr "$LOOP_AB" -D -c psync-randwrite -q
	assert_success
	assert_line 'guest_args=-t 6 -p 80,95 -s raw,dio -n 2 -c psync-randwrite'
}

@test "-I: one vCPU under -icount; -P: perf in the guest" {
	run --separate-stderr "$LOOP_AB" -D -I -P -p 0
	assert_success
	assert_line 'vm_env=NBIO_VM_SMP=1 NBIO_VM_ICOUNT=shift=0,sleep=on'
	# shellcheck disable=SC2016 # the guest expands it
	assert_line 'guest_args=-t 8 -p 0 -s raw,buf,dio -n 1 -P $NBIO_RESULTS/perf'
}

@test "-w: the loop workqueue's nice goes to the guest, -20 to 19" {
	run --separate-stderr "$LOOP_AB" -D -w 10 -p 0
	assert_success
	assert_line 'guest_args=-t 8 -p 0 -s raw,buf,dio -n 1 -w 10'
	run --separate-stderr "$LOOP_AB" -D -w -20 -p 0
	assert_success
	assert_line 'guest_args=-t 8 -p 0 -s raw,buf,dio -n 1 -w -20'
	run --separate-stderr "$LOOP_AB" -D -w 19 -p 0
	assert_success
}

@test "-D creates no results directory" {
	run --separate-stderr "$LOOP_AB" -D -o "$BATS_TEST_TMPDIR/out"
	assert_success
	[[ ! -e $BATS_TEST_TMPDIR/out ]]
}

@test "bad numbers: the option, the value, exit 1, nothing printed" {
	local opt val
	for args in '-r 0' '-t 0' '-t 2s' '-n x' '-p 0,80' '-p 101' '-p 80,' \
		'-q -r -1' '-w 20' '-w -21' '-w x' '-w 1.5'; do
		opt=${args% *} opt=${opt##* } val=${args##* }
		# shellcheck disable=SC2086 # options and their values
		run --separate-stderr "$LOOP_AB" -D $args
		assert_failure 1
		assert_output ''
		[[ $stderr == "loop-ab"*": $opt: not a "*"'$val'" ]] ||
			fail "$args: $stderr"
	done
}

@test "more than two kernels: usage on stderr, exit 1" {
	run --separate-stderr "$LOOP_AB" -D a b c
	assert_failure 1
	assert_output ''
	[[ $stderr == Usage:* ]]
}
