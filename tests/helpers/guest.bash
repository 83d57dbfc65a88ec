# SPDX-License-Identifier: GPL-2.0-or-later
# guest.bash - shared code for the bats tests that run inside the QEMU guest
# (tests/guest/*.bats, booted by tests/vm/run): gates that skip with a
# reason (require_guest, require_root, require_loop, require_kernel,
# require_disk), a per-test dmesg scan between two /dev/kmsg markers, a
# cleanup stack, and scratch-disk, loop-device and page-cache helpers.
#
# In a test file:
#   load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"
#   setup()    { guest_setup; ...; }
#   teardown() { guest_teardown; }
# guest_setup calls require_guest, so a file run on the host skips every
# test: nothing here may touch the host's loop devices or disks.

bats_load_library bats-support
bats_load_library bats-assert

NBIO_SRCDIR=${NBIO_SRCDIR:-$(cd "${BATS_TEST_DIRNAME}/../.." && pwd)}
NBIO_BUILDDIR=${NBIO_BUILDDIR:-$NBIO_SRCDIR}
PAGECACHE=$NBIO_BUILDDIR/tests/helpers/pagecache
NOWAIT_READ=$NBIO_BUILDDIR/tests/helpers/nowait-read
LOOP_IOCTL=$NBIO_BUILDDIR/tests/helpers/loop-ioctl
NBCAT=$NBIO_BUILDDIR/nbcat

# Sizes in bytes, for the tests' arithmetic.
KiB=1024
MiB=$((1024 * 1024))

# Kernel log lines that fail the test that produced them.
GUEST_DMESG_BAD='BUG:|WARNING:|Oops|INFO: possible|INFO: task .* blocked|possible circular locking|lock held|sleeping function called from invalid context|UBSAN|KASAN|general protection fault|list_add corruption|list_del corruption'

# require_guest: skip unless this runs in the guest booted by tests/vm/run.
# Both the environment and the kernel command line must say so.
require_guest() {
	[[ ${NBIO_GUEST:-} == 1 ]] && grep -qw 'nbio.guest=1' /proc/cmdline ||
		skip "runs only in the QEMU guest (tests/vm/run, make check-vm)"
}

require_root() {
	[[ $(id -u) -eq 0 ]] || skip "needs root"
}

require_loop() {
	[[ -c /dev/loop-control ]] || skip "no loop driver (/dev/loop-control)"
	command -v losetup >/dev/null || skip "no losetup (util-linux)"
}

# require_kernel X.Y: skip on kernels older than X.Y.
require_kernel() {
	local want=$1 have
	have=$(uname -r)
	have=${have%%[!0-9.]*}
	local hmaj=${have%%.*} hmin=${have#*.}
	local wmaj=${want%%.*} wmin=${want#*.}
	hmin=${hmin%%.*}
	wmin=${wmin%%.*}
	if ((hmaj < wmaj || (hmaj == wmaj && hmin < wmin))); then
		skip "needs kernel $want or newer (running $(uname -r))"
	fi
}

# require_kernel_series X.Y: skip unless the kernel is exactly X.Y.*: for
# ground-truth tests that document one kernel series' behaviour.
require_kernel_series() {
	local have
	have=$(uname -r)
	[[ $have == "$1".* || $have == "$1" || $have == "$1"-* ]] ||
		skip "documents $1 behaviour (running $have)"
}

# require_disk 512|4k: the scratch disk with that logical block size.
require_disk() {
	local var=NBIO_DISK512
	[[ $1 == 4k ]] && var=NBIO_DISK4K
	[[ -n ${!var:-} && -b ${!var} ]] || skip "no scratch disk $var"
}

# require_program PATH: one of our built programs; a missing one is a
# failure (the guest suite runs after the build), not a skip.
require_program() {
	[[ -x $1 ]] || fail "$1: not built (make all check-vm builds it)"
}

# defer CMD [ARG...]: run CMD in teardown, last deferred first.
defer() {
	local q
	printf -v q '%q ' "$@"
	GUEST_DEFERRED+=("$q")
}

# guest_setup: check the gates, then mark the kernel log.
guest_setup() {
	require_guest
	require_root
	GUEST_DEFERRED=()
	GUEST_MARKER="nbio-test-begin $$-$RANDOM-${BATS_SUITE_TEST_NUMBER:-0}: ${BATS_TEST_NAME}"
	echo "<5>$GUEST_MARKER" >/dev/kmsg
}

# guest_teardown: undo what the test set up, then fail the test if the
# kernel logged anything bad since guest_setup's marker.
guest_teardown() {
	local i rc=0 end lines
	[[ -n ${GUEST_MARKER:-} ]] || return 0
	for ((i = ${#GUEST_DEFERRED[@]} - 1; i >= 0; i--)); do
		eval "${GUEST_DEFERRED[i]}" || rc=1
	done
	GUEST_DEFERRED=()
	end="nbio-test-end ${GUEST_MARKER#nbio-test-begin }"
	echo "<5>$end" >/dev/kmsg
	lines=$(dmesg | awk -v b="$GUEST_MARKER" -v e="$end" '
		index($0, e) { on = 0 }
		on
		index($0, b) { on = 1 }' | grep -E -A 25 "$GUEST_DMESG_BAD")
	if [[ -n $lines ]]; then
		echo "# the kernel logged, during ${BATS_TEST_NAME}:" >&3
		printf '# %s\n' "${lines//$'\n'/$'\n'# }" >&3
		echo "kernel log during the test:"
		printf '%s\n' "$lines"
		return 1
	fi
	((rc == 0)) || echo "cleanup failed (see above)"
	return "$rc"
}

# drop_caches: write back, then drop the clean page cache, dentries and
# inodes of the whole guest.
drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# scratch_ext4 512|4k [MKFS-ARGS...]: mkfs.ext4 the scratch disk and mount
# it on a fresh per-test directory, printed in SCRATCH_MNT; unmounted in
# teardown. noinit_itable keeps the lazy inode-table initialisation thread
# from writing behind the test's back. SCRATCH_FS_SIZE (e.g. 16M) makes
# the file system smaller than the disk, for tests that fill it.
scratch_ext4() {
	local which=$1 var=NBIO_DISK512
	shift
	[[ $which == 4k ]] && var=NBIO_DISK4K
	require_disk "$which"
	SCRATCH_DEV=${!var}
	SCRATCH_MNT=$BATS_TEST_TMPDIR/mnt-$which
	mkdir -p "$SCRATCH_MNT"
	# shellcheck disable=SC2086 # SCRATCH_FS_SIZE: one word or none
	mkfs.ext4 -q -F "$@" "$SCRATCH_DEV" ${SCRATCH_FS_SIZE:-} ||
		fail "mkfs.ext4 $SCRATCH_DEV failed"
	mount -t ext4 -o noinit_itable "$SCRATCH_DEV" "$SCRATCH_MNT" ||
		fail "mount $SCRATCH_DEV failed"
	defer umount "$SCRATCH_MNT"
}

# make_file PATH MIB: a file of MIB MiB of non-zero data, written back
# and dropped from the page cache (blocks allocated, nothing cached).
make_file() {
	dd if=/dev/urandom of="$1" bs=1M count="$2" status=none conv=fsync ||
		fail "cannot write $1"
	"$PAGECACHE" evict "$1" || fail "cannot evict $1"
}

# open_path_to_others DIR: o+x on DIR and every directory above it, so
# that a test's unprivileged user (nobody) can reach files in DIR.
open_path_to_others() {
	local d=$1
	while [[ $d != / ]]; do
		chmod o+x "$d" || fail "chmod o+x $d failed"
		d=$(dirname "$d")
	done
}

# resident PATH [OFFSET LENGTH]: number of resident pages.
resident() {
	local out
	out=$("$PAGECACHE" resident "$@") || fail "pagecache resident $* failed"
	echo "${out%% *}"
}

# loop_attach ARGS...: losetup --find --show ARGS; prints the device in
# LOOPDEV and detaches it in teardown.
loop_attach() {
	LOOPDEV=$(losetup --find --show "$@") || fail "losetup $* failed"
	defer losetup -d "$LOOPDEV"
}

# meminfo FIELD: a /proc/meminfo value in KiB.
meminfo() {
	awk -v f="$1:" '$1 == f { print $2 }' /proc/meminfo
}

# require_fail_make_request: skip unless bios can be made to fail
# (CONFIG_FAIL_MAKE_REQUEST and debugfs, mounted by tests/vm/init).
require_fail_make_request() {
	[[ -d /sys/kernel/debug/fail_make_request ]] ||
		skip "no /sys/kernel/debug/fail_make_request (CONFIG_FAIL_MAKE_REQUEST, debugfs)"
}

# fail_bios DEV: from now on every bio to the whole disk DEV fails with
# EIO (one line in the kernel log each, no stack), until fail_bios_off
# DEV or teardown.
fail_bios() {
	local dbg=/sys/kernel/debug/fail_make_request disk=${1#/dev/}
	require_fail_make_request
	echo 100 >"$dbg/probability"
	echo 1 >"$dbg/interval"
	echo -1 >"$dbg/times"
	echo 1 >"$dbg/verbose"
	echo 1 >"/sys/block/$disk/make-it-fail"
	defer fail_bios_off "$1"
}

fail_bios_off() {
	echo 0 >"/sys/block/${1#/dev/}/make-it-fail"
}

# fill_fs DIR [KEEP-KIB]: fill the file system of DIR with a file "fill",
# then free KEEP-KIB (default 0) of it.
fill_fs() {
	dd if=/dev/zero of="$1/fill" bs=64K status=none 2>/dev/null || true
	sync
	truncate -s $(($(stat -c %s "$1/fill") - ${2:-0} * 1024)) "$1/fill"
	sync
}

# stop_background PID: kill a background loop of the test's and reap it;
# one that has already ended is fine.
stop_background() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# detach_if_bound DEV: losetup -d, unless DEV was already detached (by a
# deferred detach at its last close, for example).
detach_if_bound() {
	[[ -e /sys/block/${1#/dev/}/loop/backing_file ]] || return 0
	losetup -d "$1"
}
