#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# demo.bats - the guest half of the README's first command
# (scripts/demo-guest) runs to the end and shows what it says it shows.

load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"

setup() {
	guest_setup
	require_loop
	require_disk 512
	require_disk 4k
	require_program "$NBCAT"
	require_program "$LOOPCTL"
	probe_readahead_on_miss
}

# probe_readahead_on_miss: READS_AHEAD=1 if a RWF_NOWAIT read that misses
# the page cache starts readahead on this kernel (6.12 and later: "mm:
# allow read-ahead with IOCB_NOWAIT set"), 0 if it starts no I/O (6.1:
# IOCB_NOIO). Probed with nowait_starts_io on an ext4
# on the 512-byte scratch disk, unmounted again: the demo formats the
# disks itself.
probe_readahead_on_miss() {
	local mnt=$BATS_TEST_TMPDIR/probe
	mkdir -p "$mnt"
	mkfs.ext4 -q -F "$NBIO_DISK512" || fail "mkfs.ext4 $NBIO_DISK512 failed"
	mount -t ext4 "$NBIO_DISK512" "$mnt" || fail "mount $NBIO_DISK512 failed"
	# shellcheck disable=SC2034 # read by nowait_starts_io (rc.bash)
	D=$mnt
	READS_AHEAD=0
	nowait_starts_io && READS_AHEAD=1
	umount "$mnt" || fail "umount $mnt failed"
}

@test "scripts/demo-guest: nbcat cold, warm and partial; loop direct I/O off and on" {
	run "$NBIO_SRCDIR/scripts/demo-guest"
	assert_success
	# the partly cached file: exit 2 and its second half listed
	assert_output --partial "exit status: 2"
	assert_output --regexp $'/data\t33554432\t33554432'
	# fincore: 16 of 64 MiB to root, all 64 to nobody (mincore's rule)
	assert_output --regexp $'\nroot: +16777216 +67108864 +/tmp/nbio-demo/data\n'
	assert_output --regexp $'\nnobody: +67108864 +67108864 +/tmp/nbio-demo/data\n'
	if ((READS_AHEAD)); then
		# a miss would load the file, and neither cachestat (6.12.12
		# and later: not to a user who may not write the file) nor
		# mincore answers nobody: nbcat reads nothing (nbcat(1))
		assert_output --partial "cannot tell what is cached without loading it"
		assert_output --partial "exit status: 2 (2: something was missing); bytes written: 0"
	else
		# nbcat as nobody writes the 16 MiB and says the rest is missing
		assert_output --regexp $'\n/tmp/nbio-demo/data +16M +48M +probe\n'
		assert_output --partial "exit status: 2 (2: something was missing); bytes written: 16777216"
	fi
	# loopctl cache: the backing file cached with direct I/O off, not on
	assert_output --regexp $'\n/dev/loop[0-9]+ +off +64M +64M .*/data +64M +64M\n'
	assert_output --regexp $'\n/dev/loop[0-9]+ +on +64M +64M .*/data +64M +0B\n'
	# the 4K-sector disk: the reason, and the sector size that fixes it
	assert_output --partial "use --sector-size 4096"
	assert_output --partial "direct I/O is on (requested: auto)"
	# nothing left behind
	[[ -z $(losetup --list --noheadings) ]] ||
		fail "loop devices left attached: $(losetup --list)"
	! grep -q ' /tmp/nbio-demo' /proc/mounts ||
		fail "demo file systems left mounted"
}
