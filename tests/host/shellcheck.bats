#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The shell code passes shellcheck: the quick-start scripts, the bench and
# guest runners, build-kernel, CI's entry point and the test helpers. A
# finding that is not a bug is silenced where it stands, with its reason.

load "${BATS_TEST_DIRNAME}/../helpers/rc.bash"

SCRIPTS=(
	scripts/lib.sh scripts/demo scripts/demo-guest scripts/test
	tests/bench/loop-ab tests/bench/loop-ab-guest tests/bench/loop-bench
	tests/bench/nbcat-bench tests/bench/nbcat-latency tests/bench/run-all
	tests/bench/stat-overhead tests/bench/loopctl-list-bench
	tests/bench/ext4-nowait-ab tests/bench/ext4-nowait-guest tests/vm/init
	tests/vm/run tests/vm/debian-kernel
	kernel/build-kernel .ci/run
)

@test "the scripts pass shellcheck" {
	require_cmd shellcheck
	cd "$NBIO_SRCDIR"
	run shellcheck -x "${SCRIPTS[@]}"
	assert_success
	assert_output ''
}

@test "the bats helpers pass shellcheck" {
	require_cmd shellcheck
	cd "$NBIO_SRCDIR"
	run shellcheck -s bash -x tests/helpers/*.bash
	assert_success
	assert_output ''
}
