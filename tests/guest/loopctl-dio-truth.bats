#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl-dio-truth.bats - loopctl tells how a device's backing file is
# really served, on every kernel. Before commit f2fed441c69b ("loop:
# stop using vfs_iter_{read,write} for buffered I/O", 6.15; 6.12.25,
# 6.14.4; kernel/patches/0004 in this project's series) loop's buffered
# path inherits the backing file's O_DIRECT: after losetup --direct-io=on
# and --direct-io=off, loop/dio says 0 while every request still
# bypasses the backing file's page cache. loopctl never opens a backing
# file O_DIRECT, so its own devices are buffered when it says off; for
# others it says "unknown" where the kernel lacks the fix, and set
# refuses to turn direct I/O off there (exit 3). What is asserted is
# what the backing file served: its page cache (fincore, as root), read
# through the device with O_DIRECT so the device's own cache does not
# answer.

# Each @test runs in its own subshell by design: LOOPDEV and friends are
# per test.
# shellcheck disable=SC2030,SC2031
load "${BATS_TEST_DIRNAME}/../helpers/loopctl-guest.bash"

# losetup_dio_on: IMG on a device by losetup --direct-io=on (the backing
# file opened O_DIRECT), detached in teardown.
losetup_dio_on() {
	LOOPDEV=$(losetup --find --show --direct-io=on "$IMG") ||
		fail "losetup --direct-io=on failed"
	defer cleanup_loop "$LOOPDEV"
	LOOPSYS=/sys/block/${LOOPDEV#/dev/}
	[[ $(attr loop/dio) == 1 ]] || fail "losetup: dio=$(attr loop/dio)"
}

# dio_column CMD: the DIO cell of LOOPDEV in loopctl CMD's raw table.
dio_column() {
	"$LOOPCTL" "$1" --raw --noheadings -O DIO "$LOOPDEV"
}

@test "loopctl attach --direct-io=on, set --direct-io=off: off, and the page cache fills, on every kernel" {
	scratch_ext4 512
	image "$SCRATCH_MNT"
	lc_attach --direct-io=on "$IMG"
	[[ $(attr loop/dio) == 1 ]] || fail "on: dio=$(attr loop/dio)"
	grep -qx 'odirect=0' "/run/loopctl/${LOOPDEV#/dev/}" ||
		fail "no odirect=0 in the record: $(cat "/run/loopctl/${LOOPDEV#/dev/}")"
	run -0 "$LOOPCTL" set --direct-io=off "$LOOPDEV"
	[[ $(attr loop/dio) == 0 ]] || fail "off: dio=$(attr loop/dio)"
	grep -qx 'odirect=0' "/run/loopctl/${LOOPDEV#/dev/}" ||
		fail "set dropped odirect=0: $(cat "/run/loopctl/${LOOPDEV#/dev/}")"
	[[ $(dio_column status) == off ]] || fail "status: $(dio_column status)"
	[[ $(dio_column cache) == off ]] || fail "cache: $(dio_column cache)"
	run -0 "$LOOPCTL" status -J -O NAME,DIO "$LOOPDEV"
	[[ $(jq '.loopdevices[0].dio' <<<"$output") == false ]] || fail "$output"
	run -0 "$LOOPCTL" why "$LOOPDEV"
	assert_line --index 0 "$LOOPDEV: direct I/O is off (requested: off), backing file $IMG"
	assert_line --regexp '^  buffered for sure: '
	read_through "$LOOPDEV" "$IMG"
	((RES >= 4 * MiB)) ||
		fail "status says off, yet the reads bypassed $IMG's page cache ($RES bytes cached)"
}

@test "losetup --direct-io=on, then off: unknown without f2fed441c69b, off with it" {
	scratch_ext4 512
	image "$SCRATCH_MNT"
	losetup_dio_on
	losetup --direct-io=off "$LOOPDEV" || fail "losetup --direct-io=off failed"
	[[ $(attr loop/dio) == 0 ]] || fail "off: dio=$(attr loop/dio)"
	if loop_has_fix f2fed441c69b; then
		[[ $(dio_column status) == off ]] || fail "status: $(dio_column status)"
		[[ $(dio_column cache) == off ]] || fail "cache: $(dio_column cache)"
		run -0 "$LOOPCTL" status -J "$LOOPDEV"
		[[ $(jq '.loopdevices[0].dio' <<<"$output") == false ]] ||
			fail "$output"
		# requested: unknown, even when the device and the inode
		# number are those of an earlier test's loopctl attach (a
		# fresh ext4): the record's diskseq is another binding's
		run -0 "$LOOPCTL" why "$LOOPDEV"
		assert_line --index 0 "$LOOPDEV: direct I/O is off (requested: unknown), backing file $IMG"
		read_through "$LOOPDEV" "$IMG"
		((RES >= 4 * MiB)) ||
			fail "a kernel with the fix, yet the reads bypassed $IMG's page cache ($RES bytes cached)"
		return
	fi
	echo "kernel $(uname -r) without f2fed441c69b and without loop/stat"
	[[ $(dio_column status) == unknown ]] || fail "status: $(dio_column status)"
	[[ $(dio_column cache) == unknown ]] || fail "cache: $(dio_column cache)"
	run -0 "$LOOPCTL" status -J -O NAME,DIO,DIO-WHY "$LOOPDEV"
	[[ $(jq '.loopdevices[0].dio' <<<"$output") == null ]] || fail "$output"
	[[ $(jq -r '.loopdevices[0]["dio-why"]' <<<"$output") == "may inherit O_DIRECT" ]] ||
		fail "$output"
	run -0 "$LOOPCTL" cache -J "$LOOPDEV"
	[[ $(jq '.loopcache[0].dio' <<<"$output") == null ]] || fail "$output"
	run -0 "$LOOPCTL" why "$LOOPDEV"
	assert_line --index 0 "$LOOPDEV: direct I/O is unknown (requested: unknown), backing file $IMG"
	assert_output --partial "inherits O_DIRECT from the backing file"
	assert_output --partial "loopctl attach --direct-io=off"
	refute_output --partial "direct I/O is off"
	# and "unknown" is no caution for nothing: the file was served O_DIRECT
	read_through "$LOOPDEV" "$IMG"
	((RES < MiB)) ||
		fail "without the fix the reads should have bypassed $IMG's page cache ($RES bytes cached)"
}

@test "set --direct-io=off on a losetup --direct-io=on device: refused without f2fed441c69b, exit 3" {
	scratch_ext4 512
	image "$SCRATCH_MNT"
	losetup_dio_on
	if loop_has_fix f2fed441c69b; then
		run -0 "$LOOPCTL" set --direct-io=off "$LOOPDEV"
		[[ $(attr loop/dio) == 0 ]] || fail "dio=$(attr loop/dio)"
		[[ $(dio_column status) == off ]] || fail "status: $(dio_column status)"
		return
	fi
	run -3 "$LOOPCTL" set --direct-io=off "$LOOPDEV"
	assert_line --index 0 --partial "loopctl: $LOOPDEV: direct I/O would be off only in name, nothing changed: "
	assert_output --partial "losetup --direct-io=on does"
	assert_line --index 1 --partial "loopctl: $LOOPDEV: detach and attach again with loopctl attach --direct-io=off"
	[[ $(attr loop/dio) == 1 ]] || fail "refused, yet dio=$(attr loop/dio)"
	# no record of the refused request (a file left by an earlier
	# test's binding of this device may exist: it does not match)
	run -0 "$LOOPCTL" status --raw --noheadings -O DIO-REQ "$LOOPDEV"
	assert_output ""
	[[ $(dio_column status) == on ]] || fail "status: $(dio_column status)"
}

@test "4096-byte disk: attach --direct-io=on without a sector size gets direct I/O at 4096" {
	scratch_ext4 4k
	image "$SCRATCH_MNT"
	run -0 "$LOOPCTL" attach --dry-run --direct-io=on "$IMG"
	assert_line "sector size: 4096 (the backing device's, for direct I/O)"
	assert_line "direct I/O:  on"
	lc_attach --direct-io=on "$IMG"
	[[ $(attr loop/dio) == 1 && $(attr queue/logical_block_size) == 4096 ]] ||
		fail "dio=$(attr loop/dio) lbs=$(attr queue/logical_block_size)"
	[[ -z $LC_STDERR ]] || fail "warned: $LC_STDERR"
	run -0 "$LOOPCTL" status --raw --noheadings -O DIO,LOG-SEC "$LOOPDEV"
	assert_output "on 4096"
	# the pre-5.8 path passes it with LOOP_SET_BLOCK_SIZE
	LOOPCTL_LEGACY_SETUP=1 lc_attach --direct-io=on "$IMG"
	[[ $(attr loop/dio) == 1 && $(attr queue/logical_block_size) == 4096 ]] ||
		fail "legacy: dio=$(attr loop/dio) lbs=$(attr queue/logical_block_size)"
	# off keeps the kernel's default
	lc_attach --direct-io=off "$IMG"
	[[ $(attr loop/dio) == 0 && $(attr queue/logical_block_size) == 512 ]] ||
		fail "off: dio=$(attr loop/dio) lbs=$(attr queue/logical_block_size)"
}
