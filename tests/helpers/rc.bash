# SPDX-License-Identifier: GPL-2.0-or-later
# rc.bash - the one test vocabulary (blktests' common/rc): bats-support
# and bats-assert, where the programs under test live, sizes, the gates
# that skip a test with a human reason (never a silent pass), and the
# file helpers every suite uses. Host, guest and bench bats files load
# it the same way, directly or through the helper of their group
# (nbcat.bash, loopctl-host.bash, loopctl-guest.bash, guest.bash,
# completion.bash, which source it first, as blktests' tests/loop/rc
# sources common/rc):
#
#   load "${BATS_TEST_DIRNAME}/../helpers/rc.bash"
#
# Each gate is defined here once, with one meaning:
#   require_cmd CMD...        every CMD is installed
#   require_root              effective uid 0
#   require_guest             in the QEMU guest of tests/vm/run (in_guest)
#   require_kernel X.Y        kernel X.Y or newer (kernel_at_least)
#   require_kernel_series X.Y exactly the X.Y series (ground truth tests)
#   require_loop              a loop driver and losetup
#   require_disk 512|4k       the guest's scratch disk of that block size
#   require_nobody            setpriv, user nobody and group nogroup
#   require_nowait PATH       preadv2(RWF_NOWAIT) works on PATH's fs
#   require_nowait_noio WHY   a RWF_NOWAIT miss starts no I/O (6.1)
#   require_program PATH...   our built programs (missing: a failure)
#   require_udev              systemd-udevd runs and answers
#
# Environment:
#   NBIO_BUILDDIR    build tree holding ./nbcat, ./loopctl and
#                    tests/helpers/* (set by make check and tests/vm/init;
#                    default: the source tree root)
#   NBIO_SRCDIR      source tree (default: two levels above the test file)

bats_require_minimum_version 1.5.0
# Every test process loads these again, and their load.bash files find
# their sources with $(dirname ...): 15 fork+execs, 1.1 s per test in the
# TCG guest (90 ms each). While they load, dirname is a shell function.
# shellcheck disable=SC2317 # called by the libraries' load.bash
dirname() {
	local dir=${1%/*}
	[[ $1 == */* ]] || dir=.
	printf '%s\n' "${dir:-/}"
}
bats_load_library bats-support
bats_load_library bats-assert
unset -f dirname

NBIO_SRCDIR=${NBIO_SRCDIR:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
NBIO_BUILDDIR=${NBIO_BUILDDIR:-$NBIO_SRCDIR}
# shellcheck source=scripts/lib.sh
. "$NBIO_SRCDIR/scripts/lib.sh"
# shellcheck disable=SC2034 # used by the test files and group helpers
{
	NBCAT=$NBIO_BUILDDIR/nbcat
	LOOPCTL=$NBIO_BUILDDIR/loopctl
	CACHECTL=$NBIO_BUILDDIR/tests/helpers/cachectl
	NOWAIT_READ=$NBIO_BUILDDIR/tests/helpers/nowait-read
	LOOP_IOCTL=$NBIO_BUILDDIR/tests/helpers/loop-ioctl
	PAGESIZE=$(getconf PAGESIZE)
	# Sizes in bytes, for the tests' arithmetic.
	KiB=1024
	MiB=$((1024 * 1024))
	GiB=$((1024 * MiB))
}

# ---------------------------------------------------------------------
# Predicates (no skip): for a test that branches rather than skips
# ---------------------------------------------------------------------

# in_guest: this runs in the guest booted by tests/vm/run. Both the
# environment (tests/vm/init) and the kernel command line (tests/vm/run)
# must say so, so that a host that exports NBIO_GUEST=1 by mistake still
# does not count. The check is scripts/lib.sh's, which the guest-only
# scripts use too.
in_guest() {
	nbio_in_guest
}

# kernel_at_least X.Y: the running kernel is X.Y or newer.
kernel_at_least() {
	local want=$1 have hmaj hmin wmaj wmin
	have=$(uname -r)
	have=${have%%[!0-9.]*}
	hmaj=${have%%.*} hmin=${have#*.}
	wmaj=${want%%.*} wmin=${want#*.}
	hmin=${hmin%%.*}
	wmin=${wmin%%.*}
	((hmaj > wmaj || (hmaj == wmaj && hmin >= wmin)))
}

# ---------------------------------------------------------------------
# Gates: skip with a human reason, never pass silently
# ---------------------------------------------------------------------

# require_cmd CMD...: skip unless every CMD is installed.
require_cmd() {
	local c
	for c; do
		command -v "$c" >/dev/null || skip "$c is not installed"
	done
}

# require_root: skip unless the effective uid is 0.
require_root() {
	((EUID == 0)) || skip "needs root"
}

# require_guest: skip unless in_guest. Every test that touches loop
# devices, disks or the kernel's caches calls it (guest_setup does), so
# a guest file run on the host skips instead.
require_guest() {
	in_guest || skip "runs only in the QEMU guest (tests/vm/run, make check-vm)"
}

# require_kernel X.Y: skip on kernels older than X.Y.
require_kernel() {
	kernel_at_least "$1" ||
		skip "needs kernel $1 or newer (running $(uname -r))"
}

# require_kernel_series X.Y: skip unless the kernel is exactly X.Y.*: for
# ground-truth tests that document one kernel series' behaviour.
require_kernel_series() {
	local have
	have=$(uname -r)
	[[ $have == "$1".* || $have == "$1" || $have == "$1"-* ]] ||
		skip "documents $1 behaviour (running $have)"
}

# require_loop: skip without a loop driver or losetup.
require_loop() {
	[[ -c /dev/loop-control ]] || skip "no loop driver (/dev/loop-control)"
	command -v losetup >/dev/null || skip "no losetup (util-linux)"
}

# require_disk 512|4k: skip without the guest's scratch disk with that
# logical block size (NBIO_DISK512, NBIO_DISK4K: set by tests/vm/init).
require_disk() {
	local var=NBIO_DISK512
	[[ $1 == 4k ]] && var=NBIO_DISK4K
	[[ -n ${!var:-} && -b ${!var} ]] || skip "no scratch disk $var"
}

# require_nobody: skip unless a test can run a command as nobody:nogroup
# with setpriv.
require_nobody() {
	command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
	id nobody >/dev/null 2>&1 || skip "no user nobody"
	getent group nogroup >/dev/null || skip "no group nogroup"
}

# require_udev: skip unless systemd-udevd runs and answers a ping
# (tests/vm/init starts it in the guest, unless NBIO_VM_UDEV=0). In the
# guest's chroot udevadm needs SYSTEMD_IGNORE_CHROOT=1 (tests/vm/init
# exports it), or it ignores every request and succeeds: so the daemon
# must be seen too.
require_udev() {
	command -v udevadm >/dev/null || skip "no udevadm (udev is not installed)"
	pgrep -x systemd-udevd >/dev/null ||
		skip "systemd-udevd is not running (no uevent rules, no /dev/disk links)"
	udevadm control --ping --timeout=10 >/dev/null 2>&1 ||
		skip "systemd-udevd does not answer (udevadm control --ping)"
}

# require_program PATH...: our built programs; a missing one is a
# failure (make check and make check-vm build them first), not a skip.
require_program() {
	local p
	for p; do
		[[ -x $p ]] || fail "$p: not built (make check and make check-vm build it)"
	done
}

# require_nowait PATH: skip unless preadv2(RWF_NOWAIT) works on PATH (a
# file, or a directory: probed with an empty file created in it). The
# probe's exit codes are tests/helpers/probe.h's: 77 is PROBE_EXIT_SKIP.
require_nowait() {
	local p=$1 rc=0 fs
	if [[ -d $p ]]; then
		p=$1/.nowait-probe
		: >"$p"
	fi
	fs=$(stat -f -c %T "$p")
	"$CACHECTL" probe "$p" >/dev/null 2>&1 || rc=$?
	[[ $p == "$1/.nowait-probe" ]] && rm -f "$p"
	case $rc in
	0) ;;
	77) skip "$1 is on $fs: RWF_NOWAIT reads not supported there" ;;
	*) fail "cachectl probe $1 failed (exit $rc)" ;;
	esac
}

# nowait_starts_io: succeed when a RWF_NOWAIT read that misses the page
# cache starts I/O on this kernel (probed with a file in $D). In 6.1 a
# user's RWF_NOWAIT also sets IOCB_NOIO: EAGAIN and nothing is read. The
# 6.18 host starts readahead instead: after one 64 KiB probe of a cold
# file, 64 pages were resident, and 1 to 2 in 100 cold probes returned
# data because that I/O completed before the page-cache lookup was
# retried. Cached per test file.
nowait_starts_io() {
	local cache=$BATS_FILE_TMPDIR/nowait-starts-io f=$D/.noio-probe n
	if [[ ! -f $cache ]]; then
		head -c $((1 * MiB)) /dev/urandom >"$f"
		if ! "$CACHECTL" evict "$f" >&2 ||
			! "$CACHECTL" nowait "$f" 0 $((64 * KiB)) >/dev/null ||
			! read -r n _ < <("$CACHECTL" resident "$f"); then
			fail "cannot tell whether RWF_NOWAIT starts I/O"
		fi
		rm -f "$f"
		echo "$n" >"$cache"
	fi
	(($(<"$cache") > 0))
}

# require_nowait_noio WHY: skip unless a RWF_NOWAIT miss starts no I/O
# (6.1 semantics); WHY says what the test needs it for.
require_nowait_noio() {
	if nowait_starts_io; then
		skip "kernel $(uname -r) starts readahead on a RWF_NOWAIT miss (6.1 does not: IOCB_NOIO), so $1"
	fi
}

# ---------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------

# make_file_bytes PATH BYTES: BYTES bytes of random data (so that cmp
# means something), left in the page cache as the write left it.
make_file_bytes() {
	head -c "$2" /dev/urandom >"$1"
}

# make_file_mib PATH MIB: MIB MiB of random data, written back and
# dropped from the page cache: blocks allocated, nothing cached (a cold
# file). Failing to write or evict fails the test.
make_file_mib() {
	dd if=/dev/urandom of="$1" bs=1M count="$2" status=none conv=fsync ||
		fail "cannot write $1"
	"$CACHECTL" evict "$1" || fail "cannot evict $1"
}

# resident PATH [OFFSET LENGTH]: number of resident pages.
resident() {
	local out
	out=$("$CACHECTL" resident "$@") || fail "cachectl resident $* failed"
	echo "${out%% *}"
}
