# SPDX-License-Identifier: GPL-2.0-or-later
# guest.bash - shared by the bats tests that run inside the QEMU guest
# (tests/guest/*.bats and tests/bench/guest.bats, booted by tests/vm/run),
# on top of rc.bash (the gates, paths and file helpers): a per-test dmesg
# scan between two /dev/kmsg markers, a cleanup stack, the default setup
# and teardown, and scratch-disk, loop-device and fault helpers.
#
# In a test file:
#   load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"
#   setup()    { guest_setup; ...; }      # when it needs more than that
# guest_setup calls require_guest, so a file run on the host skips every
# test: nothing here may touch the host's loop devices or disks.

# shellcheck source=tests/helpers/rc.bash
source "${BASH_SOURCE[0]%/*}/rc.bash"

# Kernel log lines that fail the test that produced them.
GUEST_DMESG_BAD='BUG:|WARNING:|Oops|INFO: possible|INFO: task .* blocked|possible circular locking|lock held|sleeping function called from invalid context|UBSAN|KASAN|general protection fault|list_add corruption|list_del corruption'

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

# The default hooks, for a file that redefines neither. A file's own
# setup calls guest_setup first; its own teardown calls guest_teardown.
setup() {
	guest_setup
}

teardown() {
	guest_teardown
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

# scratch_file_mib MIB: a fresh ext4 on the 512-byte scratch disk
# (scratch_ext4) holding F=$SCRATCH_MNT/data, MIB MiB of random data,
# written back and not cached (make_file_mib).
scratch_file_mib() {
	scratch_ext4 512
	F=$SCRATCH_MNT/data
	make_file_mib "$F" "$1"
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

# loop_attach ARGS...: losetup --find --show ARGS; prints the device in
# LOOPDEV and detaches it in teardown.
loop_attach() {
	LOOPDEV=$(losetup --find --show "$@") || fail "losetup $* failed"
	defer losetup -d "$LOOPDEV"
}

# majmin DEV: the major:minor of a block device, in decimal ("254:16"),
# as io.stat and the block trace events print it.
majmin() {
	local t
	t=$(stat -Lc '%t %T' "$1") || fail "stat $1 failed"
	printf '%d:%d\n' "0x${t% *}" "0x${t#* }"
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

# loop_worker_frozen: a kworker sleeps uninterruptibly in a frozen file
# system's percpu rw-semaphore (sb_start_write() before a write of the
# backing file).
loop_worker_frozen() {
	local d comm stat wchan
	# A task may exit between the glob and the reads: every read is in
	# an || list, so that bats' ERR trap does not take it for a failure.
	for d in /proc/[0-9]*; do
		read -r comm 2>/dev/null <"$d/comm" || continue
		[[ $comm == kworker* ]] || continue
		read -r stat 2>/dev/null <"$d/stat" || continue
		stat=${stat##*) }
		[[ ${stat%% *} == D ]] || continue
		wchan=
		# wchan has no newline: read fails at its end, but reads it.
		read -r wchan 2>/dev/null <"$d/wchan" || [[ -n $wchan ]] || continue
		[[ $wchan == *percpu* ]] && return 0
	done
	return 1
}

# thaw DIR: unfreeze DIR if it is still frozen (teardown after a failure).
thaw() {
	fsfreeze -u "$1" 2>/dev/null || true
}

# loop_has_series: the running kernel carries this project's series. The
# probe is the file its statistics patch adds, which exists only while a
# device is bound: bind a 1 MiB file once per run and keep the answer.
loop_has_series() {
	local memo=$BATS_RUN_TMPDIR/loop-has-series img dev ans=no
	if [[ ! -f $memo ]]; then
		img=$BATS_RUN_TMPDIR/series-probe.img
		truncate -s 1M "$img" && dev=$(losetup --find --show "$img") &&
			{ [[ -e /sys/block/${dev#/dev/}/loop/stat ]] && ans=yes; losetup -d "$dev"; }
		echo "$ans" >"$memo"
	fi
	[[ $(<"$memo") == yes ]]
}

# release_at_least X.Y.Z: the running kernel's release is X.Y.Z or later
# within its X.Y stable series, or a later X.Y.
release_at_least() {
	local have want=$1 h w i
	have=$(uname -r)
	have=${have%%[!0-9.]*}
	IFS=. read -ra h <<<"$have"
	IFS=. read -ra w <<<"$want"
	for i in 0 1 2; do
		((${h[i]:-0} > ${w[i]:-0})) && return 0
		((${h[i]:-0} < ${w[i]:-0})) && return 1
	done
	return 0
}

# loop_has_fix ID: the running kernel has upstream loop fix ID (a commit
# id as in docs/loop-upstream-audit.md, or "series" for a fix only this
# project's series has): the series carries every one; a stock kernel
# has it from the releases listed here: the mainline release, and the
# first release of each stable line that took it (the stable review
# series: 6.12.25/6.14.4 reviewed 2025-04-23, 6.12.34/6.15.3 2025-06-17,
# 6.12.40/6.15.8 2025-07-22).
loop_has_fix() {
	local id=$1 r
	local -A since=(
		[39d86db34e41]="6.16 6.15.3 6.12.34"
		[c4706c5058a7]="6.16 6.15.8 6.12.40"
		[f2fed441c69b]="6.15 6.14.4 6.12.25"
		[series]=""
	)
	loop_has_series && return 0
	for r in ${since[$id]}; do
		if [[ $r == *.*.* ]]; then
			[[ $(uname -r) == "${r%.*}".* ]] && release_at_least "$r" && return 0
		else
			kernel_at_least "$r" && return 0
		fi
	done
	LOOP_FIX_SINCE=${since[$id]}
	return 1
}

# require_loop_fix ID: skip unless loop_has_fix ID. NBIO_RUN_FIX_TESTS=1
# runs the test anyway: how the regression tests are shown to fail on
# the pristine kernel.
require_loop_fix() {
	[[ ${NBIO_RUN_FIX_TESTS:-} == 1 ]] && return 0
	loop_has_fix "$1" && return 0
	skip "needs loop fix $1 (this project's kernel series${LOOP_FIX_SINCE:+, or Linux ${LOOP_FIX_SINCE// /, }}); running $(uname -r)"
}

# backing_cached FILE: bytes of FILE in the page cache (fincore, as root).
backing_cached() {
	fincore -nb -o RES "$1" | tr -d ' '
}

# read_through DEV FILE: drop the caches, read 4 MiB of the loop device
# DEV with O_DIRECT (so its own page cache does not answer), and set RES
# to the bytes of its backing FILE cached after: about 4 MiB when the
# backing file served the reads through its page cache, near 0 when it
# served them direct.
read_through() {
	drop_caches
	(($(backing_cached "$2") == 0)) || fail "$2 still cached"
	dd if="$1" of=/dev/null bs=256K count=16 iflag=direct status=none ||
		fail "read of $1 failed"
	RES=$(backing_cached "$2")
	echo "after a 4 MiB read of $1: $RES bytes of $2 cached"
}

# udev_hold: keep udevd from reading block devices behind the tests' back
# (blkid probing of each new device, and again after every close of one
# opened for writing: the "watch" option of 60-block.rules), for tests
# that count every request. Events queue up until udev_release. For
# setup_file / teardown_file; nothing to do without a running udevd.
udev_hold() {
	pgrep -x systemd-udevd >/dev/null 2>&1 || return 0
	udevadm settle --timeout=30 >/dev/null 2>&1
	udevadm control --stop-exec-queue
}

udev_release() {
	pgrep -x systemd-udevd >/dev/null 2>&1 || return 0
	udevadm control --start-exec-queue
}
