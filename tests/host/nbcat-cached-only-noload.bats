#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# --cached-only never adds a page to the page cache of the file it
# examines (issue #13), also on kernels where a RWF_NOWAIT miss starts
# readahead (this 6.18 host; "mm: allow read-ahead with IOCB_NOWAIT
# set", 6.12 by the kernel's history): nbcat learns residency first
# (cachestat, mincore) and reads only what is cached. The pages resident after a run
# are exactly those resident before it, and --missing lists exactly the
# pages that were not resident. An unprivileged user gets the true answer
# or the documented "cannot answer" (exit 2, MODE unknown), never a
# false "fully cached".

load "${BATS_TEST_DIRNAME}/../helpers/nbcat.bash"

setup() {
	common_setup
	require_nowait "$D"
	F=$D/f
	PUB=
}

teardown() {
	[[ -n $PUB && $PUB == /tmp/nbcat-noload.* ]] && rm -rf "$PUB"
	common_teardown
}

P=$PAGESIZE
S=$((8 * MiB + 100))

# layout_then HOW CMD...: run CMD (a layout), then expect_unchanged HOW.
layout_then() {
	local how=$1
	shift
	LAYOUT_PAGES=0
	"$@" || return 1
	expect_unchanged "$how"
}

# expect_unchanged HOW: a --cached-only=HOW run over $F leaves exactly
# the pages it found, writes exactly them, and lists exactly the others.
expect_unchanged() {
	local how=$1 before after holes off len
	before=$(resident_pages "$F")
	# the host reclaimed pages after cache_layout checked them
	if ((LAYOUT_PAGES > before)); then
		echo "# $LAYOUT_PAGES pages laid out, $before at the run: retrying" >&3
		return 75
	fi
	holes=$("$CACHECTL" holes "$F")
	nbcat_json -b 64K --cached-only="$how" -m "$D/missing" "$F"
	after=$(resident_pages "$F")
	check_cache "$before" "$after" || return
	if [[ -z $holes ]]; then
		expect_status 0 || return 1
		expect_lines "$D/missing" || return 1
		expect_output "$F" || return 1
		return
	fi
	expect_status 2 || return 1
	if [[ $how == skip ]]; then
		# every hole, exactly; the output is the file without them
		assert_equal "$(cut -f2- "$D/missing")" "$holes" || return 1
		: >"$D/expected"
		off=0
		while IFS=$'\t' read -r o len; do
			head -c "$o" "$F" | tail -c +$((off + 1)) >>"$D/expected"
			off=$((o + len))
		done <<<"$holes"
		tail -c +$((off + 1)) "$F" >>"$D/expected"
	else
		# up to the first hole, then the rest of the file
		read -r off _ <<<"$holes"
		assert_equal "$(<"$D/missing")" "$(printf '%s\t%s\t%s' "$F" "$off" $((S - off)))" || return 1
		head -c "$off" "$F" >"$D/expected"
	fi
	cmp "$D/out" "$D/expected" || return 1
	expect_row "$F" bytes="$(stat -c %s "$D/expected")" \
		missing=$((S - $(stat -c %s "$D/expected"))) || return 1
}

@test "fully evicted file: nothing added, the whole file missing" {
	local how
	make_file_bytes "$F" "$S"
	for how in stop skip; do
		retry_reclaim layout_then "$how" cache_layout "$F"
		expect_row "$F" bytes=0 missing="$S" readahead_on_miss=false
		assert_equal "$(resident_pages "$F")" 0
	done
}

@test "half-cached file (pages loaded without readahead): nothing added" {
	local how
	make_file_bytes "$F" "$S"
	for how in stop skip; do
		retry_reclaim layout_then "$how" \
			cache_layout "$F" 0 $((S / 2 / P * P))
	done
}

@test "interleaved layout: --missing lists exactly the non-resident pages" {
	local how
	make_file_bytes "$F" "$S"
	for how in skip stop; do
		retry_reclaim layout_then "$how" \
			cache_layout "$F" $((3 * P)) $((MiB - 3 * P)) \
			$((3 * MiB)) $((2 * MiB + 5 * P)) $((7 * MiB)) "$MiB"
	done
}

# dd_prefix: evict $F, then read its first 4 MiB as a sequential reader.
dd_prefix() {
	"$CACHECTL" evict "$F" &&
		dd if="$F" of=/dev/null bs=1M count=4 status=none
}

@test "cached prefix read by a sequential reader (readahead marks): nothing added" {
	# dd's readahead leaves a PG_readahead mark in the cached window;
	# a RWF_NOWAIT read of that cached page starts readahead on 6.12+
	# (seen on 6.18: all 64 MiB loaded after 8 MiB were read)
	local how
	make_file_bytes "$F" $((64 * MiB))
	S=$((64 * MiB))
	for how in stop skip; do
		retry_reclaim layout_then "$how" dd_prefix
	done
}

@test "fully cached file: everything written, exit 0, nothing missing" {
	local how
	make_file_bytes "$F" "$S"
	for how in stop skip; do
		retry_reclaim layout_then "$how" cache_layout "$F" 0 "$S"
		expect_row "$F" bytes="$S" missing=0 hit_bytes="$S" miss_bytes=0
	done
}

# as_nobody ARG...: nbcat ARG... as nobody:nogroup without supplementary
# groups; stdout in $D/out, the JSON report (stderr) in $D/report.json.
as_nobody() {
	nbcat_status=0
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$NBCAT" -J "$@" >"$D/out" 2>"$D/report.json" || nbcat_status=$?
}

# pub_file MODE: a root-owned file in a directory nobody can search.
pub_file() {
	require_root
	require_cmd setpriv
	id nobody >/dev/null 2>&1 || skip "no user nobody"
	[[ -x $NBCAT ]] && setpriv --reuid=nobody --regid=nogroup \
		--clear-groups test -x "$NBCAT" ||
		skip "nobody cannot run $NBCAT"
	PUB=$(mktemp -d /tmp/nbcat-noload.XXXXXX)
	chmod 0755 "$PUB"
	F=$PUB/f
	make_file_bytes "$F" "$S"
	chmod "$1" "$F"
	require_nowait "$F"
	: >"$PUB/missing"
	chmod 0666 "$PUB/missing"
}

# nobody_0644 LAYOUT: lay $F out, run as nobody, check the answer.
nobody_0644() {
	local layout=$1 before after mode
	case $layout in
	evicted) cache_layout "$F" ;;
	half) cache_layout "$F" 0 $((S / 2 / P * P)) ;;
	full) cache_layout "$F" 0 "$S" ;;
	esac || return 1
	before=$(resident_pages "$F")
	as_nobody --cached-only=skip -m "$PUB/missing" "$F"
	after=$(resident_pages "$F")
	check_cache "$before" "$after" || return
	mode=$(report_values "$F" mode)
	if [[ $mode == unknown ]]; then
		# mincore would say "all resident" to nobody: not trusted
		expect_status 2 || return 1
		expect_row "$F" bytes=0 missing=null residency=none || return 1
		[[ ! -s $D/out ]] || return 1
		expect_lines "$PUB/missing" "$F\t0\tunknown" || return 1
		run -0 jq -r '.warnings[0]' "$D/report.json" || return 1
		assert_output "$F: cannot tell what is cached without loading it (no cachestat or mincore answer for this user, and this kernel reads ahead on RWF_NOWAIT misses); nothing read" || return 1
	else
		assert_equal "$mode" nowait || return 1
		assert_equal "$(cut -f2- "$PUB/missing")" \
			"$("$CACHECTL" holes "$F")" || return 1
		if [[ $layout == full ]]; then
			expect_status 0 || return 1
		else
			expect_status 2 || return 1
		fi
	fi
}

@test "unprivileged user, root-owned 0644 file: true answer or 'cannot answer', nothing added" {
	local layout
	pub_file 0644
	for layout in evicted half full; do
		retry_reclaim nobody_0644 "$layout"
	done
}

# nobody_0666 LAYOUT: as nobody_0644, for a file nobody may write.
nobody_0666() {
	local before after
	if [[ $1 == evicted ]]; then
		cache_layout "$F"
	else
		cache_layout "$F" 0 $((S / 2 / P * P))
	fi || return 1
	before=$(resident_pages "$F")
	as_nobody --cached-only=skip -m "$PUB/missing" "$F"
	after=$(resident_pages "$F")
	check_cache "$before" "$after" || return
	expect_status 2 || return 1
	assert_equal "$(cut -f2- "$PUB/missing")" \
		"$("$CACHECTL" holes "$F")" || return 1
	expect_row "$F" mode=nowait || return 1
}

@test "unprivileged user who may write the file: the true answer" {
	local layout
	pub_file 0666
	for layout in evicted half; do
		retry_reclaim nobody_0666 "$layout"
	done
}

@test "default mode: readahead_on_miss says whether our misses read ahead" {
	local want=false
	make_file_bytes "$F" $((1 * MiB))
	cache_layout "$F"
	nowait_starts_io && want=true
	nbcat_json -b 64K "$F"
	expect_status 0
	expect_output "$F"
	expect_row "$F" readahead_on_miss="$want"
	expect_row total readahead_on_miss="$want"
	if [[ $want == true ]]; then
		assert_equal "$(<"$D/err")" "nbcat: note: this kernel starts readahead on a RWF_NOWAIT miss (Linux 6.12+), so chunks after a miss may count as hits that nbcat's own probe read in (READAHEAD_ON_MISS)"
	else
		assert_equal "$(<"$D/err")" ""
	fi
	# a warm file: no miss, nothing read ahead by nbcat, no note
	cache_layout "$F" 0 $((1 * MiB))
	nbcat_json -b 64K "$F"
	expect_row "$F" readahead_on_miss=false
	assert_equal "$(<"$D/err")" ""
	# cached-only reads only cached pages: no readahead of ours
	cache_layout "$F"
	nbcat_json -b 64K --cached-only=skip "$F"
	expect_row "$F" readahead_on_miss=false
}
