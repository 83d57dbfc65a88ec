#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl on the host: output that cannot be written (stdout or stderr
# on /dev/full, stderr closed) is a failure, exit 1, and never lands
# where it does not belong.
# Run where no loop device of this host is reachable (isolated(), see
# ../helpers/loopctl-host.bash).

load "${BATS_TEST_DIRNAME}/../helpers/loopctl-host.bash"

@test "attach --dry-run with stderr closed: the warnings do not land in the image" {
	run -0 "$LOOPCTL" why "$F"
	grep -q "logical block size" <<<"$output" ||
		skip "$F is not on a block device's file system"
	cp "$F" "$W/img.orig"
	# --offset=100: auto falls back to buffered I/O and warns why
	"$LOOPCTL" attach --dry-run --offset=100 "$F" >/dev/null 2>&- || true
	cmp "$F" "$W/img.orig" || fail "$F was written to"
}

# --------------------------------------------------------------------
# lost output is a failure

# to_full CMD...: CMD >/dev/full 2>$W/err; its status in $full_status.
to_full() {
	full_status=0
	"$@" >/dev/full 2>"$W/err" || full_status=$?
}

# expect_lost: to_full's command exited 1 and said why.
expect_lost() {
	[[ $full_status == 1 ]] ||
		fail "exit $full_status, want 1; stderr: $(<"$W/err")"
	grep -qx 'loopctl: write error: No space left on device' "$W/err" ||
		fail "no write error message: $(<"$W/err")"
}

@test "output lost (stdout is /dev/full): exit 1, not 0, for every command" {
	require_isolation
	to_full "$LOOPCTL" --help
	expect_lost
	to_full "$LOOPCTL" --version
	expect_lost
	to_full "$LOOPCTL" why "$F"
	expect_lost
	to_full isolated "$LOOPCTL" status -J
	expect_lost
	to_full isolated "$LOOPCTL" cache -J
	expect_lost
	to_full isolated --nobody --control "$LOOPCTL" attach --dry-run \
		--direct-io=off "$F"
	expect_lost
}

@test "warnings lost (stderr is /dev/full): exit 1, not 0" {
	run -0 "$LOOPCTL" why "$F"
	grep -q "logical block size" <<<"$output" ||
		skip "$F is not on a block device's file system"
	# --offset=100: auto falls back to buffered I/O and warns why
	full_status=0
	"$LOOPCTL" attach --dry-run --offset=100 "$F" >/dev/null 2>/dev/full ||
		full_status=$?
	[[ $full_status == 1 ]] || fail "exit $full_status, want 1"
}
