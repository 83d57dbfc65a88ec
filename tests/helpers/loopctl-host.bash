# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl-host.bash - shared by the host bats tests of loopctl
# (tests/host/loopctl-*.bats), on top of rc.bash: a scratch image $F in a
# directory $W that nobody can reach too, and isolated(), which runs a
# command where no loop device of this machine is reachable. Nothing in
# these files may touch a loop device of the host: every run that could
# get that far happens in a private mount namespace whose /dev is an
# empty tmpfs, and what attaches is tested in the guest
# (tests/guest/loopctl-*.bats).
#
# Load it from a test file with:
#   load "${BATS_TEST_DIRNAME}/../helpers/loopctl-host.bash"

# shellcheck source=tests/helpers/rc.bash
source "${BASH_SOURCE[0]%/*}/rc.bash"

# shellcheck disable=SC2034 # used by the test files
MAN=$NBIO_SRCDIR/man/loopctl.8


# Exit codes (loopctl(8) EXIT STATUS), as `run -N` checks them: 1 usage or
# other error, 2 not a loop device / not bound, 3 direct I/O impossible,
# 4 permission denied, 5 busy, 6 nothing to attach (empty file or offset
# at or past its end).

# shellcheck disable=SC2034 # used by the test files
COMMANDS=(attach why status list set detach cache)

setup() {
	[[ -x $LOOPCTL ]] || fail "loopctl not built: $LOOPCTL"
	# A directory nobody can reach too (BATS_TEST_TMPDIR is 0700).
	W=$(mktemp -d /tmp/loopctl-host.XXXXXX)
	chmod 0755 "$W"
	F=$W/img
	dd if=/dev/zero of="$F" bs=64K count=16 status=none ||
		fail "cannot create $F"
	chmod 0666 "$F"
}

teardown() {
	[[ -n ${W-} && $W == /tmp/loopctl-host.* ]] && rm -rf "$W"
	[[ -n ${SHM-} && $SHM == /dev/shm/loopctl-host.* ]] && rm -rf "$SHM"
	return 0
}

# isolated [--nobody] [--control] [--loopnode] CMD...: run CMD in a new
# mount namespace where /dev is an empty tmpfs holding only null and zero,
# so that no loop device of this host is reachable whatever CMD does.
#   --control   add a fake, root-only /dev/loop-control (a regular file)
#   --nobody    run CMD as nobody:nogroup, no supplementary groups, no
#               capabilities (checked before CMD runs)
#   --loopnode  add /dev/loop0, root-only (0600): a real node, so only
#               with --nobody, who cannot open it (permission tests)
isolated() {
	local priv=() control=0 loopnode=0 who=root
	while [[ $1 == --* ]]; do
		case $1 in
		--nobody)
			who=nobody
			priv=(setpriv --reuid=nobody --regid=nogroup
				--clear-groups --inh-caps=-all --bounding-set=-all)
			;;
		--control) control=1 ;;
		--loopnode) loopnode=1 ;;
		esac
		shift
	done
	((!loopnode || ${#priv[@]})) || fail "isolated: --loopnode needs --nobody"
	# shellcheck disable=SC2016 # expanded by the inner shells
	unshare --mount --propagation private -- bash -c '
		control=$1 loopnode=$2
		shift 2
		mount -t tmpfs -o mode=0755,size=1m loopctl-test /dev || exit 99
		mknod -m 0666 /dev/null c 1 3 || exit 99
		mknod -m 0666 /dev/zero c 1 5 || exit 99
		if ((control)); then
			: >/dev/loop-control && chmod 0600 /dev/loop-control ||
				exit 99
		fi
		if ((loopnode)); then
			mknod -m 0600 /dev/loop0 b 7 0 || exit 99
		fi
		exec "$@"' isolated "$control" "$loopnode" \
		"${priv[@]}" bash -c '
			# never run CMD with privileges when asked to drop them
			if [[ $1 == nobody ]]; then
				[[ $(id -u) != 0 ]] || exit 98
				grep -q "^CapEff:[[:space:]]*0*$" /proc/self/status ||
					exit 98
			fi
			shift
			exec "$@"' drop "$who" "$@"
}

require_isolation() {
	command -v unshare >/dev/null || skip "no unshare (util-linux)"
	isolated true ||
		skip "cannot make a private mount namespace (needs root)"
}

# odirect_works FILE: ground truth, independent of loopctl.
odirect_works() {
	dd if="$1" of=/dev/null bs=4096 count=1 iflag=direct status=none 2>/dev/null
}
