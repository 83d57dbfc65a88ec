#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl-set.bats - loopctl set in the QEMU guest: live retuning of a
# bound device (direct I/O, sector size) with dirty pages, on devices
# loopctl or losetup attached, and on a device that is not bound.

# Each @test runs in its own subshell by design: LOOPDEV and friends are
# per test.
# shellcheck disable=SC2030,SC2031
load "${BATS_TEST_DIRNAME}/../helpers/loopctl-guest.bash"

@test "set: live toggle and sector-size change with dirty pages" {
	local src=$BATS_TEST_TMPDIR/src
	scratch_ext4 4k
	image "$SCRATCH_MNT"
	dd if=/dev/urandom of="$src" bs=1M count=8 status=none
	lc_attach --direct-io=off "$IMG"
	[[ $(attr loop/dio) == 0 && $(attr queue/logical_block_size) == 512 ]] ||
		fail "start: dio=$(attr loop/dio) lbs=$(attr queue/logical_block_size)"
	# dirty pages in the device's page cache, not written back
	dd if="$src" of="$LOOPDEV" bs=1M status=none
	(($(meminfo Dirty) > 0)) || fail "no dirty pages to test with"
	# direct I/O on needs 4096 here: both at once, in the kernel's order
	run -0 "$LOOPCTL" set --direct-io=on --sector-size=4096 "$LOOPDEV"
	[[ $(attr loop/dio) == 1 ]] || fail "dio=$(attr loop/dio)"
	[[ $(attr queue/logical_block_size) == 4096 ]] || fail "lbs"
	[[ $(sha "$IMG" 0 8) == "$(sha "$src")" ]] ||
		fail "data lost across the switch to direct I/O"
	# back: off, and 512 (allowed without direct I/O)
	dd if=/dev/urandom of="$src" bs=1M count=8 status=none
	dd if="$src" of="$LOOPDEV" bs=1M status=none
	run -0 "$LOOPCTL" set --direct-io=off --sector-size=512 "$LOOPDEV"
	[[ $(attr loop/dio) == 0 ]] || fail "off: dio=$(attr loop/dio)"
	[[ $(attr queue/logical_block_size) == 512 ]] || fail "off: lbs"
	sync
	[[ $(sha "$IMG" 0 8) == "$(sha "$src")" ]] ||
		fail "data lost across the switch to buffered I/O"
	# toggles alone
	run -0 "$LOOPCTL" set --direct-io=auto "$LOOPDEV"
	assert_output --partial "direct I/O stays off"
	assert_output --partial "sector size 512 is smaller than 4096"
	[[ $(attr loop/dio) == 0 ]] || fail "auto at 512: dio"
	run -3 "$LOOPCTL" set --direct-io=on "$LOOPDEV"
	assert_output --partial "direct I/O is impossible, nothing changed"
	[[ $(attr loop/dio) == 0 && $(attr queue/logical_block_size) == 512 ]] ||
		fail "changed although refused"
	run -0 "$LOOPCTL" set --sector-size=auto --direct-io=on "$LOOPDEV"
	[[ $(attr loop/dio) == 1 && $(attr queue/logical_block_size) == 4096 ]] ||
		fail "auto sector: dio=$(attr loop/dio) lbs=$(attr queue/logical_block_size)"
	# keeping direct I/O: a sector size that would turn it off is refused
	run -3 "$LOOPCTL" set --sector-size=512 "$LOOPDEV"
	assert_output --partial "would be turned off by this sector size"
	[[ $(attr loop/dio) == 1 && $(attr queue/logical_block_size) == 4096 ]] ||
		fail "changed although refused"
	# status records what was asked
	run -0 "$LOOPCTL" status -J -O NAME,DIO,DIO-REQ "$LOOPDEV"
	[[ $(jq -r '.loopdevices[0]["dio-req"]' <<<"$output") == on ]] || fail "$output"
}

@test "set on a device attached by losetup: direct I/O on, and a device that is not bound" {
	scratch_ext4 512
	image "$SCRATCH_MNT"
	LOOPDEV=$(losetup --find --show "$IMG") || fail "losetup failed"
	defer cleanup_loop "$LOOPDEV"
	# not attached by loopctl: what was requested is unknown (null), and
	# so is direct I/O off on a kernel without f2fed441c69b (null; see
	# loopctl-dio-truth.bats)
	run -0 "$LOOPCTL" status -J "$LOOPDEV"
	[[ $(jq -r '.loopdevices[0]["dio-req"]' <<<"$output") == null ]] || fail "$output"
	[[ $(jq -r '.loopdevices[0].dio' <<<"$output") == false ||
		$(jq -r '.loopdevices[0].dio' <<<"$output") == null ]] || fail "$output"
	run -0 "$LOOPCTL" set --direct-io "$LOOPDEV"
	[[ $(cat "/sys/block/${LOOPDEV#/dev/}/loop/dio") == 1 ]] || fail "dio"
	run -0 "$LOOPCTL" status -J "$LOOPDEV"
	[[ $(jq -r '.loopdevices[0]["dio-req"]' <<<"$output") == on ]] || fail "$output"
	losetup -d "$LOOPDEV"
	run -2 "$LOOPCTL" set --direct-io=off "$LOOPDEV"
	assert_output "loopctl: $LOOPDEV: not bound to a file"
	run -2 "$LOOPCTL" status "$LOOPDEV"
	assert_output "loopctl: $LOOPDEV: not bound to a file"
	run -2 "$LOOPCTL" detach "$LOOPDEV"
	assert_output "loopctl: $LOOPDEV: not bound to a file"
	run -2 "$LOOPCTL" why "$LOOPDEV"
	assert_output "loopctl: $LOOPDEV: not bound to a file"
}
