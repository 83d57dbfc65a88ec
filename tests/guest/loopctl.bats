#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl.bats - loopctl attaching, retuning and detaching real loop
# devices in the QEMU guest (tests/vm/run): each --direct-io mode on ext4
# on the 512-byte and the 4096-byte scratch disk, the cases where direct
# I/O cannot work (nothing may stay attached with --direct-io=on), data
# integrity through the device, live retuning with dirty pages, 16
# concurrent attaches and detaches, status --json against losetup, and
# the cache report against /proc/meminfo.
#
# The rules checked are those of 6.1's __loop_update_dio() and
# loop_configure() (see loopctl(8) NOTES and tests/guest/loop-dio.bats).

# Each @test runs in its own subshell by design: LOOPDEV and friends are
# per test.
# shellcheck disable=SC2030,SC2031
bats_require_minimum_version 1.5.0
load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"

# Size of the images (MiB) and of the cache-report image.
IMG_MIB=16
CACHE_MIB=${NBIO_LOOPCTL_CACHE_MIB:-64}
# Concurrency test: processes per round, rounds.
PARALLEL=16
ROUNDS=3

setup() {
	guest_setup
	require_loop
	require_program "$LOOPCTL"
	command -v jq >/dev/null || fail "jq is not installed"
	BOUND_BEFORE=$(bound_devices)
}

# bound_devices: the bound loop devices, one name a line, sorted.
bound_devices() {
	local d
	for d in /sys/block/loop*/loop; do
		[[ -d $d ]] || continue
		d=${d%/loop}
		echo "${d##*/}"
	done | sort
}

# cleanup_loop DEV: teardown: detach DEV if still bound (with losetup,
# independent of the tool under test).
cleanup_loop() {
	[[ -d /sys/block/${1#/dev/}/loop ]] || return 0
	losetup -d "$1"
}

# lc_attach ARGS...: loopctl attach ARGS; the device in LOOPDEV, detached
# in teardown. stderr is kept in LC_STDERR.
lc_attach() {
	local err=$BATS_TEST_TMPDIR/attach.err
	LOOPDEV=$("$LOOPCTL" attach "$@" 2>"$err") ||
		fail "loopctl attach $* failed ($?): $(<"$err")"
	LC_STDERR=$(<"$err")
	[[ $LOOPDEV == /dev/loop[0-9]* ]] || fail "attach printed '$LOOPDEV'"
	defer cleanup_loop "$LOOPDEV"
	LOOPSYS=/sys/block/${LOOPDEV#/dev/}
}

# attr NAME: sysfs attribute of $LOOPDEV (loop/dio, queue/logical_block_size...)
attr() {
	cat "$LOOPSYS/$1"
}

# image DIR [MIB]: a written, evicted image file in IMG.
image() {
	IMG=$1/img-$RANDOM.img
	make_file_mib "$IMG" "${2:-$IMG_MIB}"
}

# assert_nothing_attached: no loop device more than before the test, and
# losetup agrees.
assert_nothing_attached() {
	local now
	now=$(bound_devices)
	[[ $now == "$BOUND_BEFORE" ]] ||
		fail "bound loop devices changed: before [${BOUND_BEFORE//$'\n'/ }], now [${now//$'\n'/ }]"
	[[ $(losetup -l -n -O NAME | sort) == "$(bound_devices | sed 's#^#/dev/#')" ]] ||
		fail "losetup -l disagrees with sysfs: $(losetup -l)"
}

# sha FILE [SKIP-MIB COUNT-MIB]: sha256 of a file or a range of it,
# read with O_DIRECT when possible so no page cache answers.
sha() {
	local f=$1 args=(bs=1M status=none)
	(($# > 1)) && args+=(skip="$2" count="$3")
	dd if="$f" "${args[@]}" | sha256sum | cut -d' ' -f1
}

# ---------------------------------------------------------------------
# each --direct-io mode, each disk

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
		fail "on: the kernel should match the disk's block size"
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

# ---------------------------------------------------------------------
# data

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

# ---------------------------------------------------------------------
# set

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
	# not attached by loopctl: what was requested is unknown (null)
	run -0 "$LOOPCTL" status -J "$LOOPDEV"
	[[ $(jq -r '.loopdevices[0]["dio-req"]' <<<"$output") == null ]] || fail "$output"
	[[ $(jq -r '.loopdevices[0].dio' <<<"$output") == false ]] || fail "$output"
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

# ---------------------------------------------------------------------
# why, status

@test "why on a bound device explains what the kernel did" {
	scratch_ext4 4k
	image "$SCRATCH_MNT"
	lc_attach --direct-io=auto --sector-size=512 "$IMG"
	run -3 "$LOOPCTL" why "$LOOPDEV"
	assert_line --index 0 "$LOOPDEV: direct I/O is off (requested: auto), backing file $IMG"
	assert_output --partial "sector size 512 is smaller than 4096"
	lc_attach --direct-io=off "$IMG"
	run -3 "$LOOPCTL" why "$LOOPDEV"
	lc_attach --direct-io=off --sector-size=4096 "$IMG"
	run -0 "$LOOPCTL" why "$LOOPDEV"
	assert_line --index 0 "$LOOPDEV: direct I/O is off (requested: off), backing file $IMG"
	assert_output --partial "direct I/O is off only because it was not asked for"
	lc_attach --direct-io=on "$IMG"
	run -0 "$LOOPCTL" why "$LOOPDEV"
	assert_line --index 0 "$LOOPDEV: direct I/O is on (requested: on), backing file $IMG"
}

@test "status --json agrees with losetup --list --json" {
	local devs=() d ours theirs diff
	scratch_ext4 4k
	image "$SCRATCH_MNT"
	lc_attach --direct-io=on "$IMG"
	devs+=("$LOOPDEV")
	lc_attach --direct-io=off --offset=1M --sizelimit=2M "$IMG"
	devs+=("$LOOPDEV")
	lc_attach --direct-io=auto --sector-size=512 --read-only "$IMG"
	devs+=("$LOOPDEV")
	lc_attach --direct-io=on --sector-size=4096 --offset=64K "$IMG"
	devs+=("$LOOPDEV")
	for d in "${devs[@]}"; do
		ours=$("$LOOPCTL" status --json "$d") || fail "status $d"
		theirs=$(losetup --list --json -O NAME,BACK-FILE,OFFSET,SIZELIMIT,DIO,LOG-SEC,RO,AUTOCLEAR "$d") ||
			fail "losetup $d"
		# one jq per device (each exec is slow under TCG): the keys on
		# which the two disagree, and the types of ours (numbers and
		# booleans, not strings)
		diff=$(jq -nr --argjson a "$ours" --argjson b "$theirs" '
			($a.loopdevices[0]) as $x | ($b.loopdevices[0]) as $y |
			([ "name", "back-file", "offset", "sizelimit", "dio",
			   "log-sec", "ro", "autoclear" ][] |
			 select($x[.] != $y[.]) |
			 "\(.): loopctl \($x[.] | tojson), losetup \($y[.] | tojson)"),
			([($x.offset|type), ($x["log-sec"]|type), ($x.dio|type),
			  ($x.ro|type)] | join(",") |
			 select(. != "number,number,boolean,boolean") |
			 "JSON types \(.)")') || fail "$d: jq failed on: $ours / $theirs"
		[[ -z $diff ]] || fail "$d: $diff"
	done
	# all of them at once: status without arguments lists them all
	run -0 "$LOOPCTL" status --json
	for d in "${devs[@]}"; do
		jq -e --arg d "$d" '.loopdevices | map(.name) | index($d) != null' <<<"$output" >/dev/null ||
			fail "$d missing from status --json"
	done
	# --raw --noheadings --output
	run -0 "$LOOPCTL" status --raw --noheadings -O NAME,DIO,LOG-SEC "${devs[0]}"
	assert_output "${devs[0]} 1 4096"
}

@test "status --stats: the series' loop statistics, or empty columns" {
	scratch_ext4 512
	image "$SCRATCH_MNT"
	lc_attach --direct-io=on "$IMG"
	dd if="$LOOPDEV" of=/dev/null bs=1M count=4 iflag=direct status=none
	run -0 "$LOOPCTL" status -J --stats "$LOOPDEV"
	if [[ -e $LOOPSYS/loop/stat ]]; then
		[[ $(jq '.loopdevices[0]["dio-read-bytes"]' <<<"$output") -ge $((4 * MiB)) ]] ||
			fail "dio-read-bytes: $output"
		[[ $(jq '.loopdevices[0]["buf-read-bytes"]' <<<"$output") == 0 ]] ||
			fail "buf-read-bytes: $output"
		read -ra f <"$LOOPSYS/loop/stat"
		[[ $(jq '.loopdevices[0]["dio-read-bytes"]' <<<"$output") == "${f[1]}" ]] ||
			fail "differs from $LOOPSYS/loop/stat: ${f[*]}"
	else
		[[ $(jq '.loopdevices[0]["dio-read-bytes"]' <<<"$output") == null ]] ||
			fail "no stat file, yet: $output"
		skip "no loop/stat: kernel without the statistics patch (empty columns checked)"
	fi
}

# ---------------------------------------------------------------------
# detach

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

@test "status, cache, set, detach: a node replaced between check and open is refused" {
	local swap=$NBIO_BUILDDIR/tests/helpers/swapnode.so
	require_program "$swap"
	scratch_ext4 512
	image "$SCRATCH_MNT" 1
	lc_attach --direct-io=off "$IMG"
	local first=$LOOPDEV d=$BATS_TEST_TMPDIR/nodes cmd
	lc_attach --direct-io=off "$IMG"
	local second=$LOOPDEV
	mkdir -p "$d"
	for cmd in status cache "set --direct-io=on" detach; do
		rm -f "$d/dev" "$d/other"
		cp -a "$first" "$d/dev" && cp -a "$second" "$d/other" ||
			fail "cannot copy the device nodes"
		# $d/dev is checked as $first, then becomes $second at open
		# shellcheck disable=SC2086 # cmd: a command and its options
		run -1 env LD_PRELOAD="$swap" NBIO_SWAP_PATH="$d/dev" \
			NBIO_SWAP_WITH="$d/other" "$LOOPCTL" $cmd "$d/dev"
		assert_output --partial "$d/dev"
		assert_output --partial "the device node changed after it was checked"
		[[ ! -e $d/other ]] || fail "$cmd: the node was not swapped"
	done
	[[ -d /sys/block/${first#/dev/}/loop &&
	   -d /sys/block/${second#/dev/}/loop ]] || fail "a device was detached"
	[[ $(cat "/sys/block/${second#/dev/}/loop/dio") == 0 ]] ||
		fail "set changed the other device"
}

@test "attach whose device name cannot be printed: exit 1, detached again" {
	scratch_ext4 512
	image "$SCRATCH_MNT"
	local st=0
	"$LOOPCTL" attach --direct-io=off "$IMG" >/dev/full \
		2>"$BATS_TEST_TMPDIR/err" || st=$?
	[[ $st == 1 ]] || fail "exit $st, want 1: $(<"$BATS_TEST_TMPDIR/err")"
	grep -q 'cannot print the device name' "$BATS_TEST_TMPDIR/err" ||
		fail "no message: $(<"$BATS_TEST_TMPDIR/err")"
	grep -q 'detached again' "$BATS_TEST_TMPDIR/err" ||
		fail "not detached: $(<"$BATS_TEST_TMPDIR/err")"
	assert_nothing_attached
}

@test "attach to a bound device: exit 5, and the device is left alone" {
	scratch_ext4 512
	image "$SCRATCH_MNT"
	local first=$IMG
	lc_attach --direct-io=off "$first"
	image "$SCRATCH_MNT"
	run -5 "$LOOPCTL" attach --direct-io=off "$IMG" "$LOOPDEV"
	assert_output --partial "$LOOPDEV: device is busy"
	[[ $(attr loop/backing_file) == "$first" ]] || fail "device was touched"
}

@test "detach --remove removes the device node; --all detaches everything" {
	scratch_ext4 512
	image "$SCRATCH_MNT"
	lc_attach --direct-io=on "$IMG"
	run -0 "$LOOPCTL" detach --remove "$LOOPDEV"
	[[ ! -e $LOOPSYS ]] || fail "$LOOPSYS still exists"
	[[ ! -e $LOOPDEV ]] || fail "$LOOPDEV still exists"
	[[ -z $BOUND_BEFORE ]] || skip "other loop devices are bound: not running --all"
	lc_attach "$IMG"
	lc_attach "$IMG"
	run -0 "$LOOPCTL" detach --all
	[[ -z $(bound_devices) ]] || fail "still bound: $(bound_devices)"
}

# ---------------------------------------------------------------------
# concurrency

@test "16 concurrent attaches, then 16 concurrent detaches, 3 rounds: no leak, no double use" {
	local round i dir=$BATS_TEST_TMPDIR/par devs names uniq pids rc
	scratch_ext4 512
	mkdir -p "$dir"
	for ((i = 0; i < PARALLEL; i++)); do
		truncate -s 4M "$SCRATCH_MNT/p$i.img"
	done
	for ((round = 1; round <= ROUNDS; round++)); do
		pids=()
		for ((i = 0; i < PARALLEL; i++)); do
			"$LOOPCTL" attach --direct-io=on "$SCRATCH_MNT/p$i.img" \
				>"$dir/out$i" 2>"$dir/err$i" &
			pids+=($!)
		done
		rc=0
		for i in "${!pids[@]}"; do
			wait "${pids[i]}" || {
				rc=1
				echo "round $round attach $i: $(<"$dir/err$i")"
			}
		done
		for ((i = 0; i < PARALLEL; i++)); do
			[[ -s $dir/out$i ]] && defer cleanup_loop "$(<"$dir/out$i")"
		done
		((rc == 0)) || fail "round $round: an attach failed"
		devs=$(cat "$dir"/out* | sort)
		uniq=$(sort -u <<<"$devs")
		[[ $(wc -l <<<"$uniq") == "$PARALLEL" ]] ||
			fail "round $round: $(wc -l <<<"$uniq") distinct devices for $PARALLEL attaches: $devs"
		# each device holds the file its attach was given, with direct I/O
		for ((i = 0; i < PARALLEL; i++)); do
			names=/sys/block/$(basename "$(<"$dir/out$i")")/loop
			[[ $(<"$names/backing_file") == "$SCRATCH_MNT/p$i.img" ]] ||
				fail "round $round: $(<"$dir/out$i") holds $(<"$names/backing_file"), not p$i.img"
			[[ $(<"$names/dio") == 1 ]] || fail "round $round: p$i: dio off"
		done
		pids=()
		for ((i = 0; i < PARALLEL; i++)); do
			"$LOOPCTL" detach "$(<"$dir/out$i")" 2>"$dir/err$i" &
			pids+=($!)
		done
		for i in "${!pids[@]}"; do
			wait "${pids[i]}" || {
				rc=1
				echo "round $round detach $i: $(<"$dir/err$i")"
			}
		done
		((rc == 0)) || fail "round $round: a detach failed"
		assert_nothing_attached
		for ((i = 0; i < PARALLEL; i++)); do
			[[ -z $(losetup -j "$SCRATCH_MNT/p$i.img") ]] ||
				fail "round $round: p$i.img still attached"
		done
	done
}

# ---------------------------------------------------------------------
# cache report

# cache_case MODE: read the whole device, then compare the cache report
# with /proc/meminfo. A raw read of /dev/loopN caches the device's pages
# (counted as Buffers) and, with buffered loop I/O, the backing file's
# pages too (Cached); with direct I/O the backing file stays out. The
# device's own cache lives only while someone holds it open (6.1 drops
# it on the last close: blkdev_put() -> blkdev_flush_mapping()), so the
# test holds it, as a mounted file system would.
cache_case() {
	local b0 c0 b1 c1 json dev back dbuf dcached tol
	scratch_ext4 512
	image "$SCRATCH_MNT" "$CACHE_MIB"
	lc_attach --direct-io="$1" "$IMG"
	exec {LOOPFD}<"$LOOPDEV"
	defer eval 'exec {LOOPFD}<&-'
	drop_caches
	json=$("$LOOPCTL" cache --json "$LOOPDEV") || fail "cache failed"
	[[ $(jq '.loopcache[0]["back-cached"]' <<<"$json") -lt $((MiB)) ]] ||
		fail "backing file cached before the read: $json"
	b0=$(meminfo Buffers)
	c0=$(meminfo Cached)
	dd if="$LOOPDEV" of=/dev/null bs=1M status=none || fail "read failed"
	b1=$(meminfo Buffers)
	c1=$(meminfo Cached)
	json=$("$LOOPCTL" cache --json "$LOOPDEV") || fail "cache failed"
	dev=$(jq '.loopcache[0].cached' <<<"$json")
	back=$(jq '.loopcache[0]["back-cached"]' <<<"$json")
	dbuf=$(((b1 - b0) * 1024))
	dcached=$(((c1 - c0) * 1024))
	tol=$((CACHE_MIB * MiB / 10))
	# the measurement, in the TAP output whatever the verdict
	echo "# $1: device cached $dev, backing cached $back;" \
		"Buffers +$dbuf, Cached +$dcached (bytes)" >&3
	[[ $(jq '.loopcache[0].size' <<<"$json") == $((CACHE_MIB * MiB)) ]] ||
		fail "size: $json"
	[[ $(jq '.loopcache[0]["back-size"]' <<<"$json") == $((CACHE_MIB * MiB)) ]] ||
		fail "back-size: $json"
	((dev >= CACHE_MIB * MiB - tol)) || fail "device pages not cached: $json"
	# meminfo agrees with the report, within 10 %
	((dbuf > dev - tol && dbuf < dev + tol)) ||
		fail "Buffers grew by $dbuf, the report says the device has $dev cached"
	((dcached > back - tol && dcached < back + tol)) ||
		fail "Cached grew by $dcached, the report says the backing file has $back cached"
	if [[ $1 == off ]]; then
		((back >= CACHE_MIB * MiB - tol)) ||
			fail "buffered: the backing file should be cached too (double cache): $json"
	else
		((back < tol)) || fail "direct I/O: the backing file was cached: $json"
	fi
	# the human table says the same
	run -0 "$LOOPCTL" cache "$LOOPDEV"
	assert_line --index 0 --regexp '^NAME +DIO +SIZE +CACHED +BACK-FILE +BACK-SIZE +BACK-CACHED$'
	# closing the last holder drops the device's cache, not the file's
	exec {LOOPFD}<&-
	json=$("$LOOPCTL" cache --json "$LOOPDEV") || fail "cache failed"
	[[ $(jq '.loopcache[0].cached' <<<"$json") == 0 ]] ||
		fail "device cache survived the last close: $json"
	[[ $(jq '.loopcache[0]["back-cached"]' <<<"$json") == "$back" ]] ||
		fail "backing file cache changed on close: $json"
}

@test "cache report, buffered: the backing file fills the page cache too, meminfo agrees" {
	cache_case off
}

@test "cache report, direct I/O: the backing file stays out of the page cache, meminfo agrees" {
	cache_case on
}

# ---------------------------------------------------------------------
# permission

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
