#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl why on the host: the facts and the verdict for files on ext4
# and tmpfs, with no privilege and no device.
# Run where no loop device of this host is reachable (isolated(), see
# ../helpers/loopctl-host.bash).

load "${BATS_TEST_DIRNAME}/../helpers/loopctl-host.bash"

@test "why on ext4: every fact, and exit 0" {
	local src lbs fstype
	fstype=$(findmnt -n -o FSTYPE --target "$F")
	src=$(findmnt -n -o SOURCE --target "$F")
	[[ -b $src ]] || skip "$F: file system on $src, not on a block device"
	lbs=$(lsblk -dno LOG-SEC "$src" | tr -d ' ')
	odirect_works "$F" || skip "$F: O_DIRECT does not work on $fstype"
	run -0 "$LOOPCTL" why "$F"
	assert_line --index 0 "$F: direct I/O can work with sector size $lbs and offset 0"
	assert_line "  file system:    $fstype"
	assert_line "  O_DIRECT:       accepted"
	assert_line --regexp "^  block device:   [a-z0-9]+ \([0-9]+:[0-9]+\), logical block size $lbs\$"
	assert_line "  sector size:    $lbs (what attach picks for direct I/O)"
}

@test "why on ext4: misaligned offset and too small a sector size: exit 3" {
	local src lbs
	src=$(findmnt -n -o SOURCE --target "$F")
	[[ -b $src ]] || skip "$F: not on a block device"
	lbs=$(lsblk -dno LOG-SEC "$src" | tr -d ' ')
	run -3 "$LOOPCTL" why --offset=$((lbs / 2 + lbs)) "$F"
	assert_line --index 0 "$F: direct I/O cannot work with sector size $lbs and offset $((lbs / 2 + lbs))"
	assert_output --partial "offset $((lbs / 2 + lbs)) is not a multiple of $lbs"
	run -0 "$LOOPCTL" why --offset=$((lbs * 3)) "$F"
	if ((lbs > 512)); then
		run -3 "$LOOPCTL" why --sector-size=512 "$F"
		assert_output --partial "sector size 512 is smaller than $lbs"
		assert_output --partial "use --sector-size $lbs (or auto)"
		assert_output --partial "partition table"
	else
		run -0 "$LOOPCTL" why --sector-size=512 "$F"
	fi
	run -0 "$LOOPCTL" why --sector-size=auto "$F"
	assert_line "  sector size:    $lbs"
	run -0 "$LOOPCTL" why --sector-size=4096 "$F"
	assert_line "  sector size:    4096"
}

# tmpfs gained O_DIRECT in 6.6 (shmem ->direct_IO); the guest's 6.1 says no.
@test "why on tmpfs: the answer follows the kernel version" {
	local m
	m=$(stat -f -c %T /dev/shm) || skip "no /dev/shm"
	[[ $m == tmpfs ]] || skip "/dev/shm is $m, not tmpfs"
	SHM=$(mktemp -d /dev/shm/loopctl-host.XXXXXX)
	dd if=/dev/zero of="$SHM/img" bs=64K count=4 status=none
	if kernel_at_least 6.6; then
		odirect_works "$SHM/img" ||
			fail "kernel $(uname -r) >= 6.6 but tmpfs refuses O_DIRECT"
		run -0 "$LOOPCTL" why "$SHM/img"
		assert_line --index 0 "$SHM/img: direct I/O can work with sector size 512 and offset 0"
		assert_line "  file system:    tmpfs"
		assert_line "  O_DIRECT:       accepted"
		assert_line "  block device:   none (the kernel checks no block size)"
		# no block device: the kernel checks no alignment, loopctl says so
		assert_output --partial "note: tmpfs reports no direct I/O alignment"
		run -0 "$LOOPCTL" attach --dry-run --direct-io=on "$SHM/img"
		assert_line "direct I/O:  on"
	else
		! odirect_works "$SHM/img" ||
			fail "kernel $(uname -r) < 6.6 but tmpfs accepts O_DIRECT"
		run -3 "$LOOPCTL" why "$SHM/img"
		assert_line --index 0 "$SHM/img: direct I/O cannot work with sector size 512 and offset 0"
		assert_line "  O_DIRECT:       refused (Invalid argument)"
		assert_output --partial "tmpfs does not support O_DIRECT (Invalid argument)"
		assert_output --partial "tmpfs supports O_DIRECT from Linux 6.6"
		run -3 "$LOOPCTL" attach --dry-run --direct-io=on "$SHM/img"
		assert_output --partial "direct I/O is impossible, nothing attached"
	fi
}

@test "why: an empty file or an offset past its end: nothing to attach, exit 6" {
	: >"$W/empty"
	run -6 "$LOOPCTL" why "$W/empty"
	assert_output "$W/empty: nothing to attach: the file is empty"
	run -6 "$LOOPCTL" why -o 1T "$F"
	assert_output "$F: nothing to attach: offset 1099511627776 is at or past the end of the file (1048576 bytes)"
	refute_output --partial "can work"
	run -6 "$LOOPCTL" why --offset=1M "$F"
	assert_output --partial "offset 1048576 is at or past the end"
	run -6 "$LOOPCTL" why --offset=$((1048576 - 100)) "$F"
	assert_output "$F: nothing to attach: 100 bytes from offset 1048476 to the end of the file, less than one 512-byte sector"
}

@test "why needs no privilege and no device" {
	require_isolation
	require_nobody
	run -0 isolated --nobody "$LOOPCTL" why "$F"
	assert_output --partial "$F: direct I/O"
}
