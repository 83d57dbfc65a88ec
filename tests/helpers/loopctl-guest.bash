# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl-guest.bash - shared by the guest bats tests of loopctl
# (tests/guest/loopctl-*.bats), on top of guest.bash: the setup (a loop
# driver, loopctl built, the devices bound before the test), images on
# the scratch disks, attaching with loopctl and detaching in teardown,
# and checks that nothing stayed attached.
#
# Load it from a test file with:
#   load "${BATS_TEST_DIRNAME}/../helpers/loopctl-guest.bash"
#
# The rules these files check are those of 6.1's __loop_update_dio() and
# loop_configure() (see loopctl(8) NOTES and tests/guest/loop-dio.bats).

# shellcheck source=tests/helpers/guest.bash
source "${BASH_SOURCE[0]%/*}/guest.bash"

# Size of the images (MiB).
IMG_MIB=16

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
	# shellcheck disable=SC2034 # read by the test files
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
