#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# --cached-only=skip on a file that grows or shrinks while nbcat reads it:
# growth is followed to the new end (cached data written, the rest
# missing), a tail that vanished is not reported missing, and the run
# ends. The resize happens at a fixed point, inside nbcat's first write
# of a chunk to stdout (tests/helpers/resizefile.so), not after a sleep.
#
# On this host (6.12+) nbcat learns residency with cachestat or mincore
# (RESIDENCY cachestat or mincore); the RWF_NOWAIT probe path, where the
# growth made nbcat spin, is used only where a miss starts no I/O (6.1):
# tests/guest/nbcat-cached-only-resize.bats covers it there.

load "${BATS_TEST_DIRNAME}/../helpers/nbcat.bash"

RESIZE=$NBIO_BUILDDIR/tests/helpers/resizefile.so
C=$((64 * KiB))
S=$((16 * C))

setup() {
	common_setup
	require_nowait "$D"
	[[ -f $RESIZE ]] || fail "not built: $RESIZE (make check builds it)"
	F=$D/f
	make_file_bytes "$D/orig" "$S"
	PUB=
}

teardown() {
	[[ -n $PUB && $PUB == /tmp/nbcat-resize.* ]] && rm -rf "$PUB"
	common_teardown
}

# Attempts at a case: the host may reclaim a cached page during a run
# (DAMON's proactive reclaim, kdamond, runs here).
RESIZE_TRIES=3

attempts() {
	local i
	for ((i = 1; i <= RESIZE_TRIES; i++)); do
		"$@" && return 0
		echo "# $BATS_TEST_DESCRIPTION: attempt $i of $RESIZE_TRIES differed" >&3
	done
	return 1
}

# resize_run HOW TO [RUNNER...]: nbcat -b 64K --cached-only=skip over $F,
# which resizefile.so resizes (HOW, to TO bytes) once nbcat has written
# its first chunk; killed after 60 s (exit 124) if it never ends.
resize_run() {
	local how=$1 to=$2
	shift 2
	nbcat_status=0
	"$@" env NBIO_RESIZE_FD=9 NBIO_RESIZE_AFTER="$C" \
		NBIO_RESIZE_TO="$to" NBIO_RESIZE_HOW="$how" \
		LD_PRELOAD="$RESIZE" timeout 60 "$NBCAT" -J \
		--report "$D/report.json" -b 64K --cached-only=skip \
		-m "$D/missing" "$F" >"$D/out" 2>"$D/err" 9<>"$F" ||
		nbcat_status=$?
	((nbcat_status != 124)) || fail "nbcat did not end in 60 s"
	((nbcat_status != 99)) || fail "resizefile.so: $(<"$D/err")"
}

# fresh [OFFSET LENGTH]...: $F is the original file again, with exactly
# these ranges cached.
fresh() {
	cp "$D/orig" "$F" && cache_layout "$F" "$@"
}

# expect_result STATUS CACHED [MISSING-OFFSET MISSING-LENGTH]: the output
# is the first CACHED bytes of $F as it is now, and the missing range
# (at most one here) is exactly the one given.
expect_result() {
	local status=$1 cached=$2
	expect_status "$status" || return 1
	head -c "$cached" "$F" >"$D/expected"
	cmp "$D/out" "$D/expected" >&2 || return 1
	if (($# > 2)); then
		expect_lines "$D/missing" "$F\t$3\t$4" || return 1
		expect_row "$F" bytes="$cached" missing="$4" || return 1
	else
		expect_lines "$D/missing" || return 1
		expect_row "$F" bytes="$cached" missing=0 || return 1
	fi
}

grow_write() {
	fresh 0 "$S" || return 1
	resize_run write $((S + 3 * C + 100))
	expect_result 0 $((S + 3 * C + 100))
}

@test "grows by a write (cached): copied to the new end, exit 0" {
	attempts grow_write
}

grow_write_evict() {
	fresh 0 "$S" || return 1
	resize_run write-evict $((S + 3 * C + 100))
	expect_result 2 "$S" "$S" $((3 * C + 100))
}

@test "grows by a write, the new data not cached: exactly that missing" {
	attempts grow_write_evict
}

grow_hole() {
	fresh 0 "$S" || return 1
	resize_run truncate $((S + 5 * C))
	expect_result 2 "$S" "$S" $((5 * C))
}

@test "grows by truncate (a hole): the hole missing, the run ends" {
	attempts grow_hole
}

shrink_cached() {
	fresh 0 "$S" || return 1
	resize_run truncate $((S / 2 + 100))
	expect_result 0 $((S / 2 + 100))
}

@test "shrinks, the rest cached: what is left written, nothing missing" {
	# before the fix the vanished tail was listed missing (exit 2)
	attempts shrink_cached
}

# Only the first chunk cached: after the resize nbcat reads nothing, so
# only the residency query can tell it the pages past the end are gone.
# A page-aligned size: truncating within a page reads that page in (to
# zero its tail), and it would be written.
shrink_uncached() {
	fresh 0 "$C" || return 1
	resize_run truncate $((3 * S / 4))
	expect_result 2 "$C" "$C" $((3 * S / 4 - C))
}

@test "shrinks, the rest not cached: only what is still there missing" {
	# before the fix: [C, S) missing, the vanished tail included
	attempts shrink_uncached
}

# probe_hole: as grow_hole, as nobody, with the RWF_NOWAIT probe path.
probe_hole() {
	fresh 0 "$S" || return 1
	resize_run truncate $((S + 5 * C)) \
		setpriv --reuid=nobody --regid=nogroup --clear-groups
	expect_row "$F" residency=probe || return 1
	expect_result 2 "$S" "$S" $((5 * C))
}

@test "probe path (nobody, root-owned file): a hole appended, the run ends" {
	# where a RWF_NOWAIT miss reads ahead, nobody gets RESIDENCY none
	# here, not probe; a hole's miss would also read the hole in
	require_nowait_noio "nbcat does not use the RWF_NOWAIT probe path (RESIDENCY probe) here; tests/guest/nbcat-cached-only-resize.bats runs it on 6.1"
	require_root
	require_cmd setpriv
	id nobody >/dev/null 2>&1 || skip "no user nobody"
	PUB=$(mktemp -d /tmp/nbcat-resize.XXXXXX)
	chmod 0755 "$PUB"
	D=$PUB F=$PUB/f
	cp "$BATS_TEST_TMPDIR/orig" "$D/orig"
	: >"$D/missing"
	: >"$D/report.json"
	chmod 0666 "$D/missing" "$D/report.json"
	attempts probe_hole
}
