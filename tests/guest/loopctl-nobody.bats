#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl-nobody.bats - loopctl run as nobody in the QEMU guest: attach
# refused with a clear message (exit 4) and nothing attached; status finds
# the backing file by path where nobody cannot open the device.

# Each @test runs in its own subshell by design: LOOPDEV and friends are
# per test.
# shellcheck disable=SC2030,SC2031
load "${BATS_TEST_DIRNAME}/../helpers/loopctl-guest.bash"

@test "attach as nobody: clear permission message, exit 4, nothing attached" {
	command -v setpriv >/dev/null || skip "no setpriv"
	local dir
	dir=$(mktemp -d /tmp/loopctl-nobody.XXXXXX)
	defer rm -rf "$dir"
	chmod 0755 "$dir"
	truncate -s 4M "$dir/img"
	chmod 0666 "$dir/img"
	run -4 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$LOOPCTL" attach "$dir/img"
	assert_output --partial "/dev/loop-control: permission denied: attaching a loop device needs root (CAP_SYS_ADMIN)"
	assert_nothing_attached
	lc_attach --direct-io=off "$dir/img"
	run -4 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$LOOPCTL" detach "$LOOPDEV"
	assert_output --partial "permission denied"
	[[ -d $LOOPSYS/loop ]] || fail "detached by nobody"
	# status needs no privilege (sysfs)
	run -0 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$LOOPCTL" status --raw -n -O NAME,BACK-FILE "$LOOPDEV"
	assert_output "$LOOPDEV $dir/img"
}

@test "status BACK-INO and BACK-MAJ:MIN: the backing file's, as root (ioctl) and as nobody (by path)" {
	command -v setpriv >/dev/null || skip "no setpriv"
	local dir want
	dir=$(mktemp -d /tmp/lc-id.XXXXXX)
	defer rm -rf "$dir"
	chmod 0755 "$dir"
	IMG=$dir/img
	truncate -s 4M "$IMG"
	lc_attach --direct-io=off "$IMG"
	want="$(stat -c %i "$IMG") $(($(stat -c %d "$IMG") >> 8)):$(($(stat -c %d "$IMG") & 255))"
	run -0 "$LOOPCTL" status --raw -n -O BACK-INO,BACK-MAJ:MIN "$LOOPDEV"
	assert_output "$want"
	# nobody cannot open the device: the library finds the file by path
	run -0 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$LOOPCTL" status --raw -n -O BACK-INO,BACK-MAJ:MIN "$LOOPDEV"
	assert_output "$want"
}
