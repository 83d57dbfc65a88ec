#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nbcat-fincore.bats - what fincore(1) cannot tell an unprivileged user,
# and nbcat --cached-only can, on 6.1.
#
# fincore asks mincore(2) about a shared mapping of the file. In 6.1,
# mm/mincore.c do_mincore() answers for a file mapping only if
# can_do_mincore(vma): file_owner_or_capable(vma->vm_file) (the caller's
# fsuid owns the inode, or it has CAP_FOWNER) or
# file_permission(vma->vm_file, MAY_WRITE) == 0 (it could open the file
# for writing); otherwise it fills the vector with 1 for every page of
# the range ("resident") without looking at the page cache (the kernel's
# history dates the rule to 5.0, "mm/mincore.c: make mincore() more
# conservative"). 6.1 has no cachestat(2). So nobody, reading a
# root-owned 0644 file, is told by fincore that all of it is cached. nbcat does not take mincore's answer
# for such a user (RESIDENCY probe: RWF_NOWAIT reads, which start no I/O
# on 6.1) and writes only the cached bytes.

bats_require_minimum_version 1.5.0
load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"

FILE_MIB=64
CACHED_MIB=16

setup() {
	guest_setup
	require_kernel_series 6.1
	require_program "$CACHECTL" "$NBCAT"
	require_cmd jq fincore
	id nobody >/dev/null 2>&1 || skip "no user nobody"
	scratch_file_mib "$FILE_MIB"
	open_path_to_others "$SCRATCH_MNT"
	chmod 0644 "$F"
	"$CACHECTL" load "$F" 0 $((CACHED_MIB * MiB))
}

as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

# fincore_bytes [RUNNER...]: fincore's RES of $F, in bytes.
fincore_bytes() {
	"$@" fincore --bytes --noheadings --output RES "$F"
}

@test "6.1: fincore says ${CACHED_MIB}M to root, ${FILE_MIB}M to nobody; nbcat tells nobody the truth" {
	local size=$((FILE_MIB * MiB)) cached=$((CACHED_MIB * MiB)) rc=0
	local out=$BATS_TEST_TMPDIR/out json=$SCRATCH_MNT/report.json
	[[ $(stat -c %U "$F") == root ]]
	# the page cache, as the owner sees it
	assert_equal "$(resident "$F")" $((cached / $(getconf PAGESIZE)))
	run -0 fincore_bytes
	assert_output "$cached"
	# mincore's side-channel rule: every page "resident" for nobody
	run -0 fincore_bytes as_nobody
	assert_output "$size"
	# nbcat as nobody: only the cached bytes, the rest missing, exit 2
	: >"$json"
	chmod 0666 "$json"
	as_nobody "$NBCAT" -J --report "$json" --cached-only "$F" \
		>"$out" || rc=$?
	[[ $rc == 2 ]] || fail "nbcat exited $rc, want 2"
	assert_equal "$(stat -c %s "$out")" "$cached"
	cmp "$out" <(head -c "$cached" "$F")
	assert_equal "$(jq -r '.nbcat[0].residency' "$json")" probe
	assert_equal "$(jq -r '.nbcat[0].bytes' "$json")" "$cached"
	assert_equal "$(jq -r '.nbcat[0].missing' "$json")" $((size - cached))
	# and it added nothing to the cache
	assert_equal "$(resident "$F")" $((cached / $(getconf PAGESIZE)))
	run -0 fincore_bytes
	assert_output "$cached"
}
