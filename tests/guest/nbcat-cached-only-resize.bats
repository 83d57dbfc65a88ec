#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nbcat-cached-only-resize.bats - --cached-only=skip on a file that grows
# or shrinks while nbcat reads it, on 6.1, ext4 on the scratch disk, as
# root (RESIDENCY mincore) and as nobody on a root-owned 0644 file
# (RESIDENCY probe: RWF_NOWAIT reads, a miss starts no I/O).
#
# Before the fix, on the probe path, a file that grew past the size nbcat
# knew with an uncached tail (a hole, or data written back and evicted)
# made nbcat probe one offset for ever at 100% CPU: full-chunk hits never
# re-read the size, and neither did the EAGAIN at the old end. Every run
# here has a timeout, so a spin fails (status 124) instead of hanging.
# A file that shrank had its vanished tail reported missing.
#
# The resize happens at a fixed point: inside nbcat's first write of a
# chunk to stdout (tests/helpers/resizefile.so), through a descriptor the
# test opened for writing, so nobody can run nbcat on a file nobody may
# not write (which is what makes mincore lie to nobody, see
# nbcat-fincore.bats).

load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"

RESIZE=$NBIO_BUILDDIR/tests/helpers/resizefile.so
C=$((64 * KiB))
S=$((16 * C))
RUN_TIMEOUT=30

setup() {
	guest_setup
	require_kernel_series 6.1
	require_program "$CACHECTL" "$NBCAT"
	[[ -f $RESIZE ]] || fail "$RESIZE: not built (make check builds it)"
	require_cmd jq
	id nobody >/dev/null 2>&1 || skip "no user nobody"
	scratch_ext4 512
	open_path_to_others "$SCRATCH_MNT"
	F=$SCRATCH_MNT/f
	O=$SCRATCH_MNT/out
	make_file_mib "$SCRATCH_MNT/orig" 1
}

# fresh [OFFSET LENGTH]...: $F is the original 1 MiB again, root-owned,
# 0644, with exactly these ranges cached; side files nobody may write.
fresh() {
	local got
	cp "$SCRATCH_MNT/orig" "$F"
	chmod 0644 "$F"
	"$CACHECTL" evict "$F" || fail "cannot evict $F"
	while (($# >= 2)); do
		"$CACHECTL" load "$F" "$1" "$2" || fail "cannot load $F"
		shift 2
	done
	: >"$O.missing"
	: >"$O.json"
	chmod 0666 "$O.missing" "$O.json"
}

# resize_run WHO HOW TO: nbcat -b 64K --cached-only=skip over $F as WHO
# (root or nobody); resizefile.so resizes $F (HOW, to TO bytes) once
# nbcat has written its first chunk. Status in $rc.
resize_run() {
	local who=$1 how=$2 to=$3 runner=()
	[[ $who == nobody ]] &&
		runner=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	rc=0
	"${runner[@]}" env NBIO_RESIZE_FD=9 NBIO_RESIZE_AFTER="$C" \
		NBIO_RESIZE_TO="$to" NBIO_RESIZE_HOW="$how" \
		LD_PRELOAD="$RESIZE" timeout "$RUN_TIMEOUT" "$NBCAT" -J \
		--report "$O.json" -b 64K --cached-only=skip \
		-m "$O.missing" "$F" >"$O" 2>"$O.err" 9<>"$F" || rc=$?
	((rc != 124)) ||
		fail "$who, $how to $to: nbcat still running after ${RUN_TIMEOUT}s (spinning)"
	((rc != 99)) || fail "resizefile.so: $(<"$O.err")"
}

# field KEY: the file's row of the JSON report.
field() {
	jq -r --arg k "$1" '.nbcat[0][$k] | tostring' "$O.json"
}

# expect WHO STATUS CACHED [MISSING-OFFSET MISSING-LENGTH]: the output is
# the first CACHED bytes of $F as it is now; the one missing range, if
# any, is exactly the one given; the way residency was learned fits WHO.
expect() {
	local who=$1 status=$2 cached=$3 res=mincore
	[[ $who == nobody ]] && res=probe
	[[ $rc == "$status" ]] ||
		fail "$who: nbcat exited $rc, want $status: $(<"$O.err")"
	[[ $(field residency) == "$res" ]] ||
		fail "$who: residency $(field residency), want $res"
	head -c "$cached" "$F" >"$O.expected"
	cmp "$O" "$O.expected" || fail "$who: output differs"
	assert_equal "$(field bytes)" "$cached"
	if (($# > 3)); then
		assert_equal "$(<"$O.missing")" "$(printf '%s\t%s\t%s' "$F" "$4" "$5")"
		assert_equal "$(field missing)" "$5"
	else
		assert_equal "$(<"$O.missing")" ""
		assert_equal "$(field missing)" 0
	fi
}

@test "6.1: grows by a write (cached): copied to the new end" {
	local who to=$((S + 3 * C + 100))
	for who in root nobody; do
		fresh 0 "$S"
		resize_run "$who" write "$to"
		expect "$who" 0 "$to"
	done
}

@test "6.1: grows by a write, written back and evicted: that range missing, the run ends" {
	local who to=$((S + 3 * C + 100))
	for who in root nobody; do
		fresh 0 "$S"
		resize_run "$who" write-evict "$to"
		expect "$who" 2 "$S" "$S" $((to - S))
	done
}

@test "6.1: grows by truncate (a hole): the hole missing, the run ends" {
	local who to=$((S + 5 * C))
	for who in root nobody; do
		fresh 0 "$S"
		resize_run "$who" truncate "$to"
		expect "$who" 2 "$S" "$S" $((to - S))
	done
}

@test "6.1: shrinks, the rest cached: what is left written, nothing missing" {
	local who to=$((S / 2))
	for who in root nobody; do
		fresh 0 "$S"
		resize_run "$who" truncate "$to"
		expect "$who" 0 "$to"
	done
}

@test "6.1: shrinks, the rest not cached: only what is still there missing" {
	# page aligned: a truncation within a page reads that page in
	local who to=$((3 * S / 4))
	for who in root nobody; do
		fresh 0 "$C"
		resize_run "$who" truncate "$to"
		expect "$who" 2 "$C" "$C" $((to - C))
	done
}
