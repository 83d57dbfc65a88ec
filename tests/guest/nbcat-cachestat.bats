#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nbcat-cachestat.bats - nbcat on a kernel with cachestat(2) (6.5+; in
# CI: Debian's own 6.12 image), as root and as nobody, each answer
# checked in the same test against cachestat(2) asked directly (through
# python3's ctypes, not through nbcat's code) and against fincore(1).
#
# What changes from 6.1 (where nbcat-cached-only.bats and
# nbcat-fincore.bats document the behaviour):
# - cachestat(2) exists (mm/filemap.c, 6.5): root's residency comes from
#   it, one call for a whole range;
# - since 6.14 (6.12.12 and 6.6.y by backport, "mm/cachestat: fix page
#   cache statistics permission checking") it answers only a caller that
#   owns the file, may write it or has CAP_FOWNER: EPERM to nobody;
# - mincore(2) still reports every page resident to such a caller;
# - a RWF_NOWAIT miss starts readahead (6.12, "mm: allow read-ahead with
#   IOCB_NOWAIT set"), so probing by RWF_NOWAIT reads would load the
#   file: for nobody on a root-owned file nbcat has no way to tell, and
#   says so (mode unknown, nothing written, exit 2), adding no page.

bats_require_minimum_version 1.5.0
load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"

FILE_MIB=16

# cachestat_pages FILE [RUNNER...]: the page cache's nr_cache for FILE by
# cachestat(2) over the whole file; prints "EPERM" when refused.
cachestat_pages() {
	local f=$1
	shift
	"$@" python3 -c '
import ctypes, ctypes.util, os, sys
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
rng = (ctypes.c_uint64 * 2)(0, 0)
cs = (ctypes.c_uint64 * 5)()
fd = os.open(sys.argv[1], os.O_RDONLY)
if libc.syscall(451, fd, rng, cs, 0) < 0:
    e = ctypes.get_errno()
    print("ENOSYS" if e == 38 else "EPERM" if e == 1 else "E%d" % e)
else:
    print(cs[0])
' "$f"
}

as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

setup() {
	guest_setup
	require_program "$CACHECTL" "$NBCAT"
	require_cmd jq fincore python3
	[[ $(cachestat_pages /proc/self/exe) != ENOSYS ]] ||
		skip "needs cachestat(2) (Linux 6.5; running $(uname -r))"
	scratch_file_mib "$FILE_MIB"
	PAGE=$(getconf PAGESIZE)
}

# field KEY: one value of the first file's JSON report in $R.
field() {
	jq -r --arg k "$1" '.nbcat[0][$k] | tostring' "$R"
}

@test "root: --cached-only=skip by cachestat, exact holes, no page added" {
	local cached=$((3 * MiB)) out=$BATS_TEST_TMPDIR/out rc=0
	R=$BATS_TEST_TMPDIR/r.json
	"$CACHECTL" load "$F" $((2 * MiB)) "$cached"
	# three witnesses agree before
	assert_equal "$(cachestat_pages "$F")" $((cached / PAGE))
	assert_equal "$(fincore --bytes --noheadings --output RES "$F")" \
		"$cached"
	assert_equal "$(resident "$F")" $((cached / PAGE))
	"$NBCAT" -J -b 64K --cached-only=skip -m "$BATS_TEST_TMPDIR/missing" \
		"$F" >"$out" 2>"$R" || rc=$?
	[ "$rc" -eq 2 ]
	[ "$(field residency)" = cachestat ]
	[ "$(field bytes)" -eq "$cached" ]
	cmp "$out" <(dd if="$F" bs=1M skip=2 count=3 status=none)
	assert_equal "$(cut -f2- "$BATS_TEST_TMPDIR/missing")" \
		"$("$CACHECTL" holes "$F")"
	# and after: nothing added
	assert_equal "$(cachestat_pages "$F")" $((cached / PAGE))
}

@test "nobody, root-owned 0644 file: the answer cachestat gives nobody, no page added" {
	id nobody >/dev/null 2>&1 || skip "no user nobody"
	local cached=$((4 * MiB)) out=$BATS_TEST_TMPDIR/out rc=0 mode
	R=$BATS_TEST_TMPDIR/r.json
	open_path_to_others "$SCRATCH_MNT"
	chmod 0644 "$F"
	"$CACHECTL" load "$F" 0 "$cached"
	# mincore's rule: every page "resident" to nobody
	assert_equal "$(as_nobody fincore --bytes --noheadings --output RES "$F")" \
		$((FILE_MIB * MiB))
	as_nobody "$NBCAT" -J -b 64K --cached-only=skip "$F" \
		>"$out" 2>"$R" || rc=$?
	[ "$rc" -eq 2 ]
	mode=$(cachestat_pages "$F" as_nobody)
	if [[ $mode == EPERM ]]; then
		# no way that adds no page: unknown, nothing written
		[ "$(field mode)" = unknown ]
		[ "$(field bytes)" -eq 0 ]
		[ ! -s "$out" ]
	else
		# a kernel without the permission check tells nobody the truth
		[ "$mode" -eq $((cached / PAGE)) ]
		[ "$(field residency)" = cachestat ]
		[ "$(field bytes)" -eq "$cached" ]
		cmp "$out" <(head -c "$cached" "$F")
	fi
	assert_equal "$(cachestat_pages "$F")" $((cached / PAGE))
}

@test "default read: every chunk cached before is a hit, every hit was cached" {
	local cached=$((4 * MiB)) after
	R=$BATS_TEST_TMPDIR/r.json
	"$CACHECTL" load "$F" $((12 * MiB)) "$cached"
	"$NBCAT" -J -b 64K "$F" 2>"$R" | cmp - "$F"
	# the cached tail: 64 chunks of 64 KiB, all hits
	[ "$(field hit_bytes)" -ge "$cached" ]
	# a hit is a chunk the page cache held when nbcat asked: never more
	# than what is cached now (misses read the rest in; on a kernel that
	# reads ahead on a RWF_NOWAIT miss a later chunk may turn into a hit)
	after=$(cachestat_pages "$F")
	[ "$(field hit_bytes)" -le $((after * PAGE)) ]
	[ $(($(field hit_bytes) + $(field partial_bytes) + \
		$(field miss_bytes))) -eq $((FILE_MIB * MiB)) ]
	# exactly the cached bytes where a miss was seen to start no
	# readahead; with no miss at all (on 6.12 a probe's own readahead can
	# finish inside the call and return the data: a hit of a page that
	# was not cached before) nbcat cannot tell, and neither can the test
	if [ "$(field readahead_on_miss)" = false ] &&
		[ $(($(field miss_chunks) + $(field partial_chunks))) -gt 0 ]; then
		[ "$(field hit_bytes)" -eq "$cached" ]
	fi
}
