#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl-autoclear.bats - loopctl and autoclear in the QEMU guest: detach
# of a busy device (the deferred autoclear, exit 5), and attach
# --autoclear -- COMMAND: the device held while the command (or a mount it
# made) uses it, gone after, and the command's exit status passed on.

# Each @test runs in its own subshell by design: LOOPDEV and friends are
# per test.
# shellcheck disable=SC2030,SC2031
load "${BATS_TEST_DIRNAME}/../helpers/loopctl-guest.bash"

@test "detach of a busy device reports the deferred autoclear (exit 5)" {
	scratch_ext4 512
	image "$SCRATCH_MNT"
	lc_attach --direct-io=on "$IMG"
	exec {fd}<"$LOOPDEV"
	run -5 "$LOOPCTL" detach "$LOOPDEV"
	assert_output "loopctl: $LOOPDEV: in use: the kernel set autoclear instead; it detaches when the last user closes it"
	[[ -d $LOOPSYS/loop && $(attr loop/autoclear) == 1 ]] ||
		fail "expected still bound with autoclear"
	exec {fd}<&-
	[[ ! -d $LOOPSYS/loop ]] || fail "not detached after the last close"
	run -0 "$LOOPCTL" attach --direct-io=off "$IMG" "$LOOPDEV"
	defer cleanup_loop "$LOOPDEV"
	run -0 "$LOOPCTL" detach "$LOOPDEV"
	assert_output ""
	[[ ! -d $LOOPSYS/loop ]] || fail "still bound"
}

# wait_detached DEV: autoclear has run (bounded: 50 x 0.1 s).
wait_detached() {
	local i
	for ((i = 0; i < 50; i++)); do
		[[ -d /sys/block/${1#/dev/}/loop ]] || return 0
		sleep 0.1
	done
	fail "$1 still bound: autoclear did not detach it"
}

@test "attach --autoclear -- COMMAND: \$LOOPDEV and {}, held while it runs, gone after" {
	scratch_ext4 512
	image "$SCRATCH_MNT" 1
	local out=$BATS_TEST_TMPDIR/cmd.out dev st=0
	# stdout is the command's: loopctl itself prints nothing
	"$LOOPCTL" attach --autoclear --direct-io=on "$IMG" -- \
		bash -c 'echo "$LOOPDEV {}-x {} $2";
			 cat "/sys/block/${LOOPDEV#/dev/}/loop/autoclear";
			 cmp <(head -c 4096 "$LOOPDEV") <(head -c 4096 "$1") &&
			 echo same' argv0 "$IMG" "{}" >"$out" || st=$?
	[[ $st == 0 ]] || fail "exit $st"
	read -r dev _ <"$out"
	[[ $dev == /dev/loop[0-9]* ]] || fail "LOOPDEV='$dev'"
	[[ $(<"$out") == "$dev $dev-x $dev $dev"$'\n1\nsame' ]] ||
		fail "command saw: $(<"$out")"
	wait_detached "$dev"
	assert_nothing_attached
}

@test "attach --autoclear -- COMMAND: the command's exit status, signals, 126 and 127" {
	scratch_ext4 512
	image "$SCRATCH_MNT" 1
	run -0 "$LOOPCTL" attach --autoclear "$IMG" -- true
	run -3 "$LOOPCTL" attach --autoclear "$IMG" -- sh -c 'exit 3'
	run -42 "$LOOPCTL" attach --autoclear "$IMG" -- sh -c 'exit 42'
	run -143 "$LOOPCTL" attach --autoclear "$IMG" -- sh -c 'kill -TERM $$'
	run -137 "$LOOPCTL" attach --autoclear "$IMG" -- sh -c 'kill -KILL $$'
	assert_nothing_attached
	# could not start: nothing left attached, whatever holds it
	run -127 "$LOOPCTL" attach --autoclear "$IMG" -- /nonexistent/cmd {}
	assert_output "loopctl: /nonexistent/cmd: No such file or directory"
	assert_nothing_attached
	: >"$BATS_TEST_TMPDIR/noexec"
	chmod 0644 "$BATS_TEST_TMPDIR/noexec"
	run -126 "$LOOPCTL" attach --autoclear "$IMG" -- \
		"$BATS_TEST_TMPDIR/noexec"
	assert_output --partial "Permission denied"
	assert_nothing_attached
}

@test "attach --autoclear: a mount made by the command keeps the device until umount" {
	scratch_ext4 512
	IMG=$SCRATCH_MNT/fs.img
	truncate -s 16M "$IMG"
	mkfs.ext4 -q -F "$IMG" || fail "mkfs.ext4 $IMG"
	local mnt=$BATS_TEST_TMPDIR/inner dev
	mkdir -p "$mnt"
	run -0 "$LOOPCTL" attach --autoclear "$IMG" -- mount {} "$mnt"
	dev=$(findmnt -n -o SOURCE "$mnt") || fail "not mounted"
	defer bash -c 'if mountpoint -q "$1"; then umount "$1"; fi' - "$mnt"
	[[ -d /sys/block/${dev#/dev/}/loop ]] || fail "$dev detached while mounted"
	umount "$mnt"
	wait_detached "$dev"
	assert_nothing_attached
}
