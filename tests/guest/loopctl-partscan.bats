#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl-partscan.bats - loopctl attach --partscan on an image with a
# partition table, with udev running as on a real machine (tests/vm/init
# starts systemd-udevd in the guest): the kernel scans the table
# (LO_FLAGS_PARTSCAN), the partition's node appears, udev's rules give it
# its /dev/disk/by-partuuid link, and both go away with the device.
# udevadm settle is the only wait: no sleep loops.

load "${BATS_TEST_DIRNAME}/../helpers/loopctl-guest.bash"

# GPT's type for "Linux filesystem data"
LINUX_DATA=0FC63DAF-8483-4772-8E79-3D69D8477DE4

setup() {
	guest_setup
	require_loop
	require_program "$LOOPCTL"
	require_cmd sfdisk
	require_udev
	scratch_ext4 512
	# One partition of 4 MiB at 1 MiB in an 8 MiB image, with a known
	# partition UUID (lower case, as blkid and udev print it).
	PARTUUID=$(</proc/sys/kernel/random/uuid)
	IMG=$SCRATCH_MNT/parted.img
	truncate -s 8M "$IMG"
	sfdisk -q "$IMG" <<-EOT || fail "sfdisk $IMG failed"
		label: gpt
		start=2048, size=8192, type=$LINUX_DATA, uuid=$PARTUUID
	EOT
}

teardown() {
	guest_teardown
}

# settle: wait until udev has handled every event queued so far.
settle() {
	udevadm settle --timeout=60 || fail "udevadm settle timed out"
}

@test "attach --partscan: udev makes the partition's node and its by-partuuid link" {
	LOOPDEV=$("$LOOPCTL" attach --partscan "$IMG") || fail "loopctl attach --partscan failed"
	defer detach_if_bound "$LOOPDEV"
	settle
	assert_equal "$(<"/sys/block/${LOOPDEV#/dev/}/loop/partscan")" 1
	[[ -b ${LOOPDEV}p1 ]] || fail "no ${LOOPDEV}p1 after udevadm settle"
	assert_equal "$(<"/sys/class/block/${LOOPDEV#/dev/}p1/size")" 8192
	assert_equal "$(<"/sys/class/block/${LOOPDEV#/dev/}p1/start")" 2048
	link=/dev/disk/by-partuuid/$PARTUUID
	[[ -L $link ]] || fail "no $link after udevadm settle: $(ls /dev/disk/by-partuuid 2>&1)"
	assert_equal "$(readlink -f "$link")" "${LOOPDEV}p1"
	run udevadm info --query=property "${LOOPDEV}p1"
	assert_success
	assert_line "ID_PART_ENTRY_UUID=$PARTUUID"
}

@test "detach: the partition's node and its link go away" {
	LOOPDEV=$("$LOOPCTL" attach --partscan "$IMG") || fail "loopctl attach --partscan failed"
	defer detach_if_bound "$LOOPDEV"
	settle
	[[ -L /dev/disk/by-partuuid/$PARTUUID ]] || fail "no by-partuuid link to start with"
	run "$LOOPCTL" detach "$LOOPDEV"
	assert_success
	settle
	[[ ! -e /sys/block/${LOOPDEV#/dev/}/loop/backing_file ]] ||
		fail "$LOOPDEV still bound after detach (an opener left?)"
	[[ ! -e ${LOOPDEV}p1 ]] || fail "${LOOPDEV}p1 still there"
	[[ ! -e /dev/disk/by-partuuid/$PARTUUID ]] ||
		fail "/dev/disk/by-partuuid/$PARTUUID still there"
}

@test "attach without --partscan: no partition node, no link" {
	LOOPDEV=$("$LOOPCTL" attach "$IMG") || fail "loopctl attach failed"
	defer detach_if_bound "$LOOPDEV"
	settle
	assert_equal "$(<"/sys/block/${LOOPDEV#/dev/}/loop/partscan")" 0
	[[ ! -e ${LOOPDEV}p1 ]] || fail "${LOOPDEV}p1 exists without --partscan"
	[[ ! -e /dev/disk/by-partuuid/$PARTUUID ]] ||
		fail "a by-partuuid link without --partscan"
}
