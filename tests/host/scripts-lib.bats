#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# scripts/lib.sh's nbio_install_packages, against stubs of dpkg-query,
# apt-get and id on PATH (no real apt run): one line of output, apt's
# output in the log, its tail on failure, stdin from /dev/null.

load "${BATS_TEST_DIRNAME}/../helpers/rc.bash"

setup() {
	STUBS=$BATS_TEST_TMPDIR/bin
	CALLS=$BATS_TEST_TMPDIR/calls
	mkdir -p "$STUBS" "$BATS_TEST_TMPDIR/work"
	: >"$CALLS"
	# dpkg-query: every package installed but those in $STUB_MISSING
	cat >"$STUBS/dpkg-query" <<-'EOF'
		#!/bin/bash
		p=${!#}
		[[ " $STUB_MISSING " == *" $p "* ]] && exit 1
		printf 'install ok installed'
	EOF
	# apt-get: records its arguments and its stdin, chatters on stdout
	# and stderr like apt, fails if $STUB_APT_FAIL is its first argument
	cat >"$STUBS/apt-get" <<-'EOF'
		#!/bin/bash
		echo "apt-get $* <$(readlink /proc/self/fd/0)" >>"$STUB_CALLS"
		for i in $(seq 1 40); do
			echo "Get:$i http://deb.debian.org/debian progress $1"
		done
		echo "W: a warning of $1" >&2
		if [[ $1 == "${STUB_APT_FAIL-}" ]]; then
			echo "E: Unable to locate package ${!#}" >&2
			exit 100
		fi
		echo "done $1"
	EOF
	cat >"$STUBS/id" <<-'EOF'
		#!/bin/bash
		echo "${STUB_UID:-0}"
	EOF
	chmod +x "$STUBS"/*
	export STUB_CALLS=$CALLS STUB_MISSING='' STUB_APT_FAIL='' STUB_UID=0
	unset NBIO_APT_LOG
}

# install_packages ARG...: nbio_install_packages ARG... in a new bash with the
# stubs first on PATH, in $BATS_TEST_TMPDIR/work
install_packages() {
	(cd "$BATS_TEST_TMPDIR/work" && PATH=$STUBS:$PATH bash -c \
		'. "$1"; shift; nbio_install_packages "$@"' \
		bash "$NBIO_SRCDIR/scripts/lib.sh" "$@")
}

@test "install packages: nothing missing, nothing said, no apt" {
	run --separate-stderr install_packages
	assert_success
	assert_output ''
	[[ -z $stderr ]]
	[[ ! -s $CALLS ]]
}

@test "install packages: one line; apt's output in build/apt.log" {
	STUB_MISSING='jq extra-pkg'
	run --separate-stderr install_packages extra-pkg
	assert_success
	assert_output 'installing: jq extra-pkg (apt-get, log: build/apt.log)'
	[[ -z $stderr ]]
	local log=$BATS_TEST_TMPDIR/work/build/apt.log
	# both runs, stdout and stderr, in the log
	run grep -c 'progress' "$log"
	assert_output 80
	grep -q '^W: a warning of install$' "$log"
	grep -q '^done install$' "$log"
	# what apt-get was asked, with stdin from /dev/null
	run cat "$CALLS"
	assert_line --index 0 'apt-get update </dev/null'
	assert_line --index 1 \
		'apt-get install -y --no-install-recommends jq extra-pkg </dev/null'
}

@test "install packages: NBIO_APT_LOG names the log" {
	STUB_MISSING=fio
	export NBIO_APT_LOG=$BATS_TEST_TMPDIR/logs/my-apt.log
	run --separate-stderr install_packages
	assert_success
	assert_output "installing: fio (apt-get, log: $NBIO_APT_LOG)"
	grep -q '^done install$' "$NBIO_APT_LOG"
	[[ ! -e $BATS_TEST_TMPDIR/work/build ]]
}

@test "install packages: a failure shows the log's tail and fails" {
	STUB_MISSING=vmtouch STUB_APT_FAIL=install
	run --separate-stderr install_packages
	assert_failure
	assert_output 'installing: vmtouch (apt-get, log: build/apt.log)'
	# the end of the log, not all of it
	[[ $stderr == *'E: Unable to locate package vmtouch'* ]]
	[[ $stderr == *'cannot install: vmtouch'* ]]
	[[ $stderr != *'Get:1 '* ]]
	[[ $stderr == *'Get:40 '* ]]
}

@test "install packages: a failed update stops before the install" {
	STUB_MISSING=vmtouch STUB_APT_FAIL=update
	run --separate-stderr install_packages
	assert_failure
	[[ $stderr == *'progress update'* ]]
	run cat "$CALLS"
	assert_output 'apt-get update </dev/null'
}

@test "install packages: not root, it names what is missing and stops" {
	STUB_MISSING=jq STUB_UID=1000
	run --separate-stderr install_packages
	assert_failure
	[[ $stderr == *'missing packages: jq; run as root'* ]]
	[[ ! -s $CALLS ]]
}

# A fake /proc with one kworker thread's status file.
fake_kworker() { # ROOT PID NAME VOLUNTARY NONVOLUNTARY
	mkdir -p "$1/$2/task/$2"
	printf 'Name:\t%s\nState:\tI (idle)\nvoluntary_ctxt_switches:\t%s\nnonvoluntary_ctxt_switches:\t%s\n' \
		"$3" "$4" "$5" >"$1/$2/task/$2/status"
}

@test "kworker switches: a thread that exits between snapshots is left out, not subtracted" {
	. "$BATS_TEST_DIRNAME/../../scripts/lib.sh"
	root=$BATS_TEST_TMPDIR/proc
	fake_kworker "$root" 10 kworker/u4:1-loop0 1000 0
	fake_kworker "$root" 11 kworker/u4:2 500 20
	fake_kworker "$root" 12 kworker/0:1H-kblockd 300 0
	fake_kworker "$root" 13 jbd2/vdb-8 900 0
	nbio_kworker_snapshot "$root" >"$BATS_TEST_TMPDIR/s0"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/s0")" -eq 3 ]
	# 10: +40; 11 exits (its 520 must not count); 12: +5;
	# 14 is new: all of its 7; 13 is no kworker
	fake_kworker "$root" 10 kworker/u4:1-loop0 1030 10
	rm -r "$root/11"
	fake_kworker "$root" 12 kworker/0:1H-kblockd 305 0
	fake_kworker "$root" 13 jbd2/vdb-8 5000 0
	fake_kworker "$root" 14 kworker/u4:3 7 0
	nbio_kworker_snapshot "$root" >"$BATS_TEST_TMPDIR/s1"
	run nbio_kworker_delta "$BATS_TEST_TMPDIR/s0" "$BATS_TEST_TMPDIR/s1" '^kworker/u'
	[ "$status" -eq 0 ]
	[ "$output" = 47 ]
	run nbio_kworker_delta "$BATS_TEST_TMPDIR/s0" "$BATS_TEST_TMPDIR/s1" '^kworker/'
	[ "$output" = 52 ]
	run nbio_kworker_delta "$BATS_TEST_TMPDIR/s0" "$BATS_TEST_TMPDIR/s1" '^kworker/[0-9]+:[0-9]+H'
	[ "$output" = 5 ]
}

@test "kworker switches: a reused TID counts as a new thread; no snapshot before: everything" {
	. "$BATS_TEST_DIRNAME/../../scripts/lib.sh"
	root=$BATS_TEST_TMPDIR/proc
	fake_kworker "$root" 20 kworker/u4:5 800 0
	nbio_kworker_snapshot "$root" >"$BATS_TEST_TMPDIR/s0"
	rm -r "$root/20"
	fake_kworker "$root" 20 kworker/u4:9 3 0
	nbio_kworker_snapshot "$root" >"$BATS_TEST_TMPDIR/s1"
	run nbio_kworker_delta "$BATS_TEST_TMPDIR/s0" "$BATS_TEST_TMPDIR/s1" '^kworker/'
	[ "$output" = 3 ]
	: >"$BATS_TEST_TMPDIR/empty"
	run nbio_kworker_delta "$BATS_TEST_TMPDIR/empty" "$BATS_TEST_TMPDIR/s1" '^kworker/'
	[ "$output" = 3 ]
}
