#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl-attach.bats - loopctl attach on real loop devices in the QEMU
# guest (tests/vm/run): each --direct-io mode on ext4 on the 512-byte and
# the 4096-byte scratch disk, the cases where direct I/O cannot work
# (nothing may stay attached with --direct-io=on), the legacy setup, and
# data integrity through the device.

# Each @test runs in its own subshell by design: LOOPDEV and friends are
# per test.
# shellcheck disable=SC2030,SC2031
load "${BATS_TEST_DIRNAME}/../helpers/loopctl-guest.bash"

@test "512-byte disk: --direct-io=on, auto and off on ext4" {
	scratch_ext4 512
	image "$SCRATCH_MNT"
	lc_attach --direct-io=on "$IMG"
	[[ $(attr loop/dio) == 1 ]] || fail "on: dio=$(attr loop/dio)"
	[[ $(attr queue/logical_block_size) == 512 ]] || fail "on: lbs"
	[[ -z $LC_STDERR ]] || fail "on: warned: $LC_STDERR"
	lc_attach "$IMG"
	[[ $(attr loop/dio) == 1 ]] || fail "auto (default): dio=$(attr loop/dio)"
	lc_attach --direct-io=auto "$IMG"
	[[ $(attr loop/dio) == 1 ]] || fail "auto: dio=$(attr loop/dio)"
	lc_attach --direct-io=off "$IMG"
	[[ $(attr loop/dio) == 0 ]] || fail "off: dio=$(attr loop/dio)"
	[[ $(attr queue/logical_block_size) == 512 ]] || fail "off: lbs"
	[[ $(attr loop/backing_file) == "$IMG" ]] || fail "backing_file"
}

@test "4096-byte disk: on and auto match the disk's 4096, off stays at 512" {
	scratch_ext4 4k
	image "$SCRATCH_MNT"
	lc_attach --direct-io=on "$IMG"
	[[ $(attr loop/dio) == 1 ]] || fail "on: dio=$(attr loop/dio)"
	[[ $(attr queue/logical_block_size) == 4096 ]] ||
		fail "on: loopctl should pass the disk's block size"
	lc_attach --direct-io=auto "$IMG"
	[[ $(attr loop/dio) == 1 ]] || fail "auto: dio=$(attr loop/dio)"
	lc_attach --direct-io=off "$IMG"
	[[ $(attr loop/dio) == 0 ]] || fail "off: dio=$(attr loop/dio)"
	[[ $(attr queue/logical_block_size) == 512 ]] ||
		fail "off: lbs $(attr queue/logical_block_size)"
}

@test "4096-byte disk: --sector-size=auto picks 4096 and direct I/O is effective" {
	scratch_ext4 4k
	image "$SCRATCH_MNT"
	run -0 "$LOOPCTL" attach --dry-run --sector-size=auto "$IMG"
	assert_line "sector size: 4096 (auto)"
	lc_attach --direct-io=on --sector-size=auto "$IMG"
	[[ $(attr queue/logical_block_size) == 4096 ]] || fail "lbs"
	[[ $(attr loop/dio) == 1 ]] || fail "dio=$(attr loop/dio)"
	# and on the 512-byte disk, auto is 512
	scratch_ext4 512
	image "$SCRATCH_MNT"
	lc_attach --direct-io=on --sector-size=auto "$IMG"
	[[ $(attr queue/logical_block_size) == 512 ]] || fail "512 disk: lbs"
	[[ $(attr loop/dio) == 1 ]] || fail "512 disk: dio"
}

@test "4096-byte disk, --sector-size 512: on fails (exit 3), auto attaches buffered with the reason" {
	scratch_ext4 4k
	image "$SCRATCH_MNT"
	run -3 "$LOOPCTL" attach --direct-io=on --sector-size=512 "$IMG"
	assert_output --partial "direct I/O is impossible, nothing attached"
	assert_output --partial "sector size 512 is smaller than 4096, the logical block size of ${NBIO_DISK4K#/dev/}"
	assert_output --partial "use --sector-size 4096 (or auto)"
	refute_output --partial "/dev/loop"
	assert_nothing_attached
	lc_attach --direct-io=auto --sector-size=512 "$IMG"
	[[ $(attr loop/dio) == 0 ]] || fail "auto: dio=$(attr loop/dio)"
	[[ $(attr queue/logical_block_size) == 512 ]] || fail "auto: lbs"
	[[ $LC_STDERR == *"direct I/O is off, attaching with buffered I/O"* ]] ||
		fail "no warning: $LC_STDERR"
	[[ $LC_STDERR == *"sector size 512 is smaller than 4096"* ]] ||
		fail "no reason: $LC_STDERR"
}

@test "--direct-io=on with a misaligned offset fails and leaves nothing attached" {
	scratch_ext4 512
	image "$SCRATCH_MNT"
	run -3 "$LOOPCTL" attach --direct-io=on --offset=256 "$IMG"
	assert_output --partial "offset 256 is not a multiple of 512"
	assert_nothing_attached
	scratch_ext4 4k
	image "$SCRATCH_MNT"
	run -3 "$LOOPCTL" attach --direct-io=on --offset=512 "$IMG"
	assert_output --partial "offset 512 is not a multiple of 4096"
	assert_nothing_attached
	# the prediction comes before any ioctl: the pre-5.8 path too
	LOOPCTL_LEGACY_SETUP=1 run -3 "$LOOPCTL" attach --direct-io=on --offset=512 "$IMG"
	assert_nothing_attached
	# aligned: fine
	lc_attach --direct-io=on --offset=8192 "$IMG"
	[[ $(attr loop/dio) == 1 && $(attr loop/offset) == 8192 ]] ||
		fail "dio=$(attr loop/dio) offset=$(attr loop/offset)"
}

@test "an empty file, or an offset at or past the end: exit 6, nothing attached" {
	scratch_ext4 512
	image "$SCRATCH_MNT" 1
	: >"$SCRATCH_MNT/empty"
	local mode
	for mode in off auto on; do
		run -6 "$LOOPCTL" attach --direct-io=$mode "$SCRATCH_MNT/empty"
		assert_output "loopctl: $SCRATCH_MNT/empty: nothing to attach: the file is empty (the device would have 0 bytes)"
		assert_nothing_attached
		run -6 "$LOOPCTL" attach --direct-io=$mode --offset=1M "$IMG"
		assert_output --partial "offset 1048576 is at or past the end of the file (1048576 bytes)"
		assert_nothing_attached
		LOOPCTL_LEGACY_SETUP=1 run -6 "$LOOPCTL" attach \
			--direct-io=$mode --offset=1T "$IMG"
		assert_nothing_attached
	done
	run -6 "$LOOPCTL" why -o 1T "$IMG"
	assert_output "$IMG: nothing to attach: offset 1099511627776 is at or past the end of the file (1048576 bytes)"
	# one sector before the end is a device of one sector
	lc_attach --direct-io=on --offset=$((MiB - 512)) "$IMG"
	[[ $(attr size) == 1 ]] || fail "size $(attr size) sectors, want 1"
}

@test "tmpfs (6.1: no O_DIRECT): on fails with nothing attached, auto attaches buffered and says why" {
	require_kernel_series 6.1
	local shm
	[[ $(stat -f -c %T /dev/shm) == tmpfs ]] || skip "/dev/shm is not tmpfs"
	shm=$(mktemp -d /dev/shm/loopctl.XXXXXX)
	defer rm -rf "$shm"
	dd if=/dev/urandom of="$shm/img" bs=1M count=4 status=none
	run -3 "$LOOPCTL" attach --direct-io=on "$shm/img"
	assert_output --partial "tmpfs does not support O_DIRECT (Invalid argument)"
	assert_output --partial "tmpfs supports O_DIRECT from Linux 6.6"
	assert_nothing_attached
	run -3 "$LOOPCTL" why "$shm/img"
	assert_line "  O_DIRECT:       refused (Invalid argument)"
	lc_attach --direct-io=auto "$shm/img"
	[[ $(attr loop/dio) == 0 ]] || fail "dio=$(attr loop/dio)"
	[[ $LC_STDERR == *"$shm/img: direct I/O is off, attaching with buffered I/O:"* ]] ||
		fail "no warning: $LC_STDERR"
	[[ $LC_STDERR == *"tmpfs does not support O_DIRECT"* ]] ||
		fail "no reason: $LC_STDERR"
	# status says it too
	run -0 "$LOOPCTL" status --json "$LOOPDEV"
	[[ $(jq -r '.loopdevices[0]["dio-req"]' <<<"$output") == auto ]] ||
		fail "dio-req: $output"
	[[ $(jq -r '.loopdevices[0].dio' <<<"$output") == false ]] || fail "dio: $output"
	[[ $(jq -r '.loopdevices[0]["dio-why"]' <<<"$output") == "tmpfs: no O_DIRECT" ]] ||
		fail "dio-why: $output"
}

@test "the legacy setup (no LOOP_CONFIGURE) gives the same device" {
	scratch_ext4 4k
	image "$SCRATCH_MNT"
	LOOPCTL_LEGACY_SETUP=1 lc_attach --direct-io=on --sector-size=4096 \
		--offset=1M --sizelimit=4M "$IMG"
	[[ $(attr loop/dio) == 1 ]] || fail "dio=$(attr loop/dio)"
	[[ $(attr queue/logical_block_size) == 4096 ]] || fail "lbs"
	[[ $(attr loop/offset) == "$MiB" ]] || fail "offset"
	[[ $(attr loop/sizelimit) == $((4 * MiB)) ]] || fail "sizelimit"
	[[ $(blockdev --getsize64 "$LOOPDEV") == $((4 * MiB)) ]] || fail "size"
	LOOPCTL_LEGACY_SETUP=1 lc_attach --read-only --direct-io=off "$IMG"
	[[ $(attr ro) == 1 && $(attr loop/dio) == 0 ]] || fail "ro/dio"
}

# check_data MODE DISK: write through the device at an offset, compare
# with the backing file; read back through the device.
check_data() {
	local src=$BATS_TEST_TMPDIR/src
	scratch_ext4 "$2"
	image "$SCRATCH_MNT"
	dd if=/dev/urandom of="$src" bs=1M count=4 status=none
	lc_attach --direct-io="$1" --offset=2M --sizelimit=8M "$IMG"
	[[ $(attr loop/dio) == "$([[ $1 == on ]] && echo 1 || echo 0)" ]] ||
		fail "dio=$(attr loop/dio)"
	dd if="$src" of="$LOOPDEV" bs=1M seek=1 status=none conv=fsync ||
		fail "write through $LOOPDEV failed"
	# the backing file holds it at offset 2M + 1M
	[[ $(sha "$IMG" 3 4) == "$(sha "$src")" ]] ||
		fail "$1: backing file differs from what was written"
	drop_caches
	[[ $(sha "$LOOPDEV" 1 4) == "$(sha "$src")" ]] ||
		fail "$1: device reads back different data"
	# and the whole device is the backing file's window
	[[ $(sha "$LOOPDEV") == "$(sha "$IMG" 2 8)" ]] ||
		fail "$1: device and backing window differ"
}

@test "data through a direct-I/O device equals the backing file (512-byte disk)" {
	check_data on 512
}

@test "data through a direct-I/O device equals the backing file (4096-byte disk)" {
	check_data on 4k
}

@test "data through a buffered device equals the backing file" {
	check_data off 512
}
