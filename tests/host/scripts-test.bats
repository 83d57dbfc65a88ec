#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# scripts/test's distcheck step, in a copy of scripts/ with make,
# dpkg-query and configure stubbed (nothing is built, no guest runs):
# distcheck counts as one result in the closing "N passed, N failed"
# line, a failure shows the end of its log and the failed tests' logs
# (also for the host suite), NBIO_DISTCHECK=0 skips it.
# And the guest suite: a run on the debug kernel of a list (from make)
# that leaves no tests/guest file out, then one on the default kernel of
# the loop dispatch's files, then the stock list on Debian's kernels.

# shellcheck disable=SC2154 # $stderr: set by bats' run --separate-stderr
load "${BATS_TEST_DIRNAME}/../helpers/rc.bash"

setup() {
	T=$BATS_TEST_TMPDIR/tree
	STUBS=$BATS_TEST_TMPDIR/bin
	mkdir -p "$T/scripts" "$STUBS"
	cp "$NBIO_SRCDIR/scripts/test" "$NBIO_SRCDIR/scripts/lib.sh" \
		"$T/scripts/"
	printf '#!/bin/sh\ntouch Makefile\n' >"$T/configure"
	cat >"$STUBS/dpkg-query" <<-'EOF'
		#!/bin/sh
		printf 'install ok installed'
	EOF
	# make: records its arguments; check leaves one passing result,
	# distcheck fails if $STUB_DISTCHECK_FAIL is set
	cat >"$STUBS/make" <<-'EOF'
		#!/bin/bash
		echo "make $*" >>"$STUB_CALLS"
		case " $* " in
		*" check "*)
			mkdir -p tests
			if [[ -n ${STUB_CHECK_FAIL-} ]]; then
				echo ':test-result: FAIL' >tests/a.trs
				printf '%s\n' '# FAIL:  1' '' '.. contents:: :depth: 2' '' \
					'FAIL: tests/host/a.bats' '=======' \
					'not ok 3 a check that failed' >test-suite.log
				exit 2
			fi
			echo ':test-result: PASS' >tests/a.trs
			;;
		*" print-vm-default-tests "*) echo tests/guest/b.bats ;;
		*" print-vm-debug-tests "*) echo tests/guest/a.bats tests/guest/b.bats ;;
		*" print-vm-stock-tests "*) echo tests/guest/a.bats ;;
		*" distcheck "*)
			echo 'distcheck chatter'
			if [[ -n ${STUB_DISTCHECK_FAIL-} ]]; then
				echo 'ERROR: files left in build directory'
				d=nbio-utils-0.1.0/_build/sub
				mkdir -p "$d"
				printf '%s\n' '.. contents:: :depth: 2' '' \
					'FAIL: tests/host/b.bats' '=======' \
					'not ok 7 a test that failed in the tarball' \
					>"$d/test-suite.log"
				exit 2
			fi
			;;
		esac
		exit 0
	EOF
	chmod +x "$T/configure" "$STUBS"/*
	export STUB_CALLS=$BATS_TEST_TMPDIR/calls NBIO_GUEST_FLAVOURS=
	unset NBIO_DISTCHECK STUB_DISTCHECK_FAIL STUB_CHECK_FAIL
}

run_test() {
	run --separate-stderr env PATH="$STUBS:$PATH" "$T/scripts/test"
}

@test "scripts/test: distcheck is one passing result" {
	run_test
	assert_success
	assert_line '2 passed, 0 failed, 0 skipped'
	assert_line --regexp '^timing: distcheck'
	grep -qx "make -s -j$(nproc) distcheck" "$STUB_CALLS"
	grep -q 'distcheck chatter' "$T/build/distcheck.log"
}

@test "scripts/test: a failed distcheck is one failure, its log's end shown" {
	export STUB_DISTCHECK_FAIL=1
	run_test
	assert_failure
	assert_line '1 passed, 1 failed, 0 skipped'
	[[ $stderr == *'make distcheck failed'* ]]
	[[ $stderr == *'ERROR: files left in build directory'* ]]
}

@test "scripts/test: a failed distcheck names the tarball's failed test and shows its log" {
	export STUB_DISTCHECK_FAIL=1
	run_test
	assert_failure
	[[ $stderr == *'FAIL: tests/host/b.bats'* ]]
	[[ $stderr == *'not ok 7 a test that failed in the tarball'* ]]
}

@test "scripts/test: a failed host suite names the failed test and shows its log" {
	export STUB_CHECK_FAIL=1 NBIO_DISTCHECK=0
	run_test
	assert_failure
	assert_line '0 passed, 1 failed, 0 skipped'
	[[ $stderr == *'FAIL: tests/host/a.bats'* ]]
	[[ $stderr == *'not ok 3 a check that failed'* ]]
}

@test "scripts/test: NBIO_DISTCHECK=0 skips distcheck" {
	export NBIO_DISTCHECK=0
	run_test
	assert_success
	assert_line '1 passed, 0 failed, 0 skipped'
	run grep -c distcheck "$STUB_CALLS"
	assert_output 0
}

@test "scripts/test: every listed file on the debug kernel, the loop files on the default one, the stock list on Debian's kernels" {
	unset NBIO_GUEST_FLAVOURS
	run_test
	assert_success
	run grep -E 'kernel-lint|check-vm' "$STUB_CALLS"
	assert_output - <<-'EOF'
		make -s kernel-lint
		make -s check-vm FLAVOUR=debug VM_TESTS=tests/guest/a.bats tests/guest/b.bats
		make -s check-vm FLAVOUR=default VM_TESTS=tests/guest/b.bats
		make -s check-vm FLAVOUR=debian-6.1 VM_TESTS=tests/guest/a.bats
		make -s check-vm FLAVOUR=debian-6.12 VM_TESTS=tests/guest/a.bats
	EOF
}

@test "scripts/test: Debian's kernels alone need no series lint" {
	export NBIO_GUEST_FLAVOURS=debian-6.12
	run_test
	assert_success
	run grep -E 'kernel-lint|check-vm' "$STUB_CALLS"
	assert_output 'make -s check-vm FLAVOUR=debian-6.12 VM_TESTS=tests/guest/a.bats'
}

@test "scripts/test: the default kernel's list is the loop dispatch's files" {
	local listed f
	listed=$(make -s --no-print-directory -C "$NBIO_BUILDDIR" print-vm-default-tests)
	for f in loop-dispatch loop-faults loop-short-io loop-stats; do
		[[ " $listed " == *" tests/guest/$f.bats "* ]] ||
			fail "tests/guest/$f.bats is not in VM_DEFAULT_TESTS: $listed"
	done
	for f in $listed; do
		[[ -f $NBIO_SRCDIR/$f ]] || fail "VM_DEFAULT_TESTS names a missing file: $f"
	done
}

@test "scripts/test: every guest test file is in the list it runs" {
	local listed f missing=()
	# make in the build tree prints the list as srcdir-relative paths
	# (VM_DEBUG_TESTS in tests/Makemodule.am).
	listed=" $(make -s --no-print-directory -C "$NBIO_BUILDDIR" print-vm-debug-tests) "
	for f in "$NBIO_SRCDIR"/tests/guest/*.bats; do
		f=tests/guest/${f##*/}
		[[ $listed == *" $f "* ]] || missing+=("$f")
	done
	((${#missing[@]} == 0)) ||
		fail "not in VM_DEBUG_TESTS: ${missing[*]}"
}
