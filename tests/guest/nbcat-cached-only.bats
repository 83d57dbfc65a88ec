#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nbcat-cached-only.bats - --cached-only on 6.1 (issue #13): which way
# nbcat learns residency there, and that it adds no page and reports the
# exact non-resident pages, on ext4 on the guest's scratch disk.
#
# What 6.1 has (linux-source-6.1, Debian 6.1.192):
# - no cachestat(2): arch/x86/entry/syscalls/syscall_64.tbl has no 451,
#   so nbcat falls back to mincore(2), which tells root (CAP_FOWNER) and
#   the owner the truth (mm/mincore.c, can_do_mincore()); to others it
#   reports every page resident.
# - kiocb_set_rw_flags() sets IOCB_NOIO for RWF_NOWAIT: a miss starts no
#   I/O, so for a user mincore would lie to, nbcat may probe (RESIDENCY
#   probe) and still adds no page.
# - filemap_readahead() returns -EAGAIN under IOCB_NOIO: a RWF_NOWAIT read
#   ends before a cached folio marked PG_readahead; nbcat copies such
#   pages from a MADV_RANDOM mapping (do_async_mmap_readahead() starts no
#   readahead for VM_RAND_READ), so they are not reported missing.

load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"

FILE_MIB=16

setup() {
	guest_setup
	require_kernel_series 6.1
	require_program "$CACHECTL" "$NBCAT"
	require_cmd jq
	scratch_file_mib "$FILE_MIB"
}

# field ROW KEY: one value of the JSON report in $BATS_TEST_TMPDIR/r.json
field() {
	jq -r --arg k "$2" --argjson i "$1" '.nbcat[$i][$k] | tostring' \
		"$BATS_TEST_TMPDIR/r.json"
}

# run_cached HOW [RUNNER...]: nbcat --cached-only=HOW over $F; checks
# that the resident pages did not change.
run_cached() {
	local how=$1 before after
	shift
	before=$(resident "$F")
	rc=0
	"$@" "$NBCAT" -J -b 64K --cached-only="$how" -m "$MISSING" "$F" \
		>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/r.json" || rc=$?
	after=$(resident "$F")
	[ "$after" -eq "$before" ] ||
		fail "--cached-only=$how: $before pages resident before, $after after"
}

@test "6.1: no cachestat, so root gets mincore; exact holes, nothing added" {
	MISSING=$BATS_TEST_TMPDIR/missing
	"$CACHECTL" load "$F" $((2 * MiB)) $((3 * MiB))
	run_cached skip
	[ "$rc" -eq 2 ]
	[ "$(field 0 residency)" = mincore ]
	[ "$(field 0 readahead_on_miss)" = false ]
	assert_equal "$(cut -f2- "$MISSING")" "$("$CACHECTL" holes "$F")"
	[ "$(field 0 bytes)" -eq $((3 * MiB)) ]
}

@test "6.1: pages read in by dd (PG_readahead marks) are not reported missing" {
	MISSING=$BATS_TEST_TMPDIR/missing
	dd if="$F" of=/dev/null bs=1M count=2 status=none
	run_cached skip
	[ "$rc" -eq 2 ]
	assert_equal "$(cut -f2- "$MISSING")" "$("$CACHECTL" holes "$F")"
}

@test "6.1: nobody on a root-owned 0644 file gets RESIDENCY probe and the truth" {
	id nobody >/dev/null 2>&1 || skip "no user nobody"
	open_path_to_others "$SCRATCH_MNT"
	chmod 0644 "$F"
	MISSING=$SCRATCH_MNT/missing
	: >"$MISSING"
	chmod 0666 "$MISSING"
	"$CACHECTL" load "$F" 0 $((4 * MiB))
	run_cached skip setpriv --reuid=nobody --regid=nogroup --clear-groups
	[ "$rc" -eq 2 ]
	[ "$(field 0 residency)" = probe ]
	assert_equal "$(cut -f2- "$MISSING")" "$("$CACHECTL" holes "$F")"
	[ "$(field 0 bytes)" -eq $((4 * MiB)) ]
}

@test "6.1: a cold default-mode run reports readahead_on_miss false" {
	drop_caches
	"$NBCAT" -J -b 64K "$F" >/dev/null 2>"$BATS_TEST_TMPDIR/r.json"
	[ "$(field 0 readahead_on_miss)" = false ]
	[ "$(field 0 miss_chunks)" -gt 0 ]
}
