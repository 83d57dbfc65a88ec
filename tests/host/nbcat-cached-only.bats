#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# --cached-only[=stop|skip]: write only what the page cache holds, record
# what it did not (--missing, the MISSING column), exit 2 when anything
# was missing, 1 when anything failed. Layouts as in nbcat-classify.bats:
# cold ranges cold_gap() apart so readahead cannot blur them.

load "${BATS_TEST_DIRNAME}/../helpers/nbcat.bash"
# setup, teardown: nbcat.bash's ($D where RWF_NOWAIT works, $F=$D/f)

C=$((64 * KiB))
P=$PAGESIZE

# extract FILE OFFSET LENGTH: those bytes of FILE on stdout.
extract() {
	dd if="$1" iflag=skip_bytes,count_bytes skip="$2" count="$3" \
		bs=64K status=none
}

# warm_all HOW: $F (S bytes) cached whole, nbcat --cached-only$HOW
# writes all of it and misses nothing.
warm_all() {
	cache_layout "$F" 0 "$S" || return 1
	nbcat_json -b 64K --cached-only"$1" -m "$D/missing" "$F"
	expect_status 0 && expect_output "$F" && expect_lines "$D/missing" &&
		expect_row "$F" bytes="$S" missing=0 hit_bytes="$S" miss_bytes=0
}

@test "warm file: everything written, exit 0, nothing missing" {
	local how
	S=$((3 * C + 5))
	make_file_bytes "$F" "$S"
	for how in "" "=stop" "=skip"; do
		# the layout again each time, and again when the host's
		# reclaim (kdamond) took a page under the read
		retry_warm warm_all "$how"
	done
}

cold_stop() {
	cache_layout "$F" || return 1
	nbcat_json -b 64K "$@" -m "$D/missing" "$F"
	expect_status 2 && expect_row "$F" bytes=0 missing="$S" &&
		expect_lines "$D/missing" "$F\t0\t$S"
}

@test "cold file, stop: nothing written, exit 2, the whole file missing" {
	S=$((3 * C + 5))
	make_file_bytes "$F" "$S"
	retry_cold cold_stop --cached-only
	[[ ! -s $D/out ]]
	expect_row total missing="$S" bytes=0
}

@test "-c, --cached-only and --cached-only=stop are the same" {
	S=$((2 * C))
	make_file_bytes "$F" "$S"
	retry_cold cold_stop -c
	retry_cold cold_stop --cached-only=stop
	retry_cold cold_stop -cstop
}

# Cached: the first W bytes (2 chunks and 3 pages); the rest cold.
W=''
prefix_stop() {
	cache_layout "$F" 0 "$W" || return 1
	nbcat_json -b 64K --cached-only -m "$D/missing" "$F"
	expect_status 2 && expect_row "$F" bytes="$W" missing=$((S - W)) &&
		expect_lines "$D/missing" "$F\t$W\t$((S - W))"
}

@test "stop: the cached prefix is written, up to the first missing byte" {
	S=$((5 * C))
	W=$((2 * C + 3 * P))
	make_file_bytes "$F" "$S"
	retry_cold prefix_stop
	head -c "$W" "$F" >"$D/expected"
	cmp "$D/out" "$D/expected"
}

# a cold, b warm, c cached for its first 5 pages.
stop_next_file() {
	cache_layout "$D/a" || return 1
	cache_layout "$D/b" 0 $((2 * C)) || return 1
	cache_layout "$D/c" 0 $((5 * P)) || return 1
	nbcat_json -b 64K --cached-only -m "$D/missing" "$D/a" "$D/b" "$D/c"
	expect_status 2 &&
		expect_lines "$D/missing" "$D/a\t0\t$((C + 1))" \
			"$D/c\t$((5 * P))\t$((3 * C - 5 * P))"
}

@test "stop goes on with the next file" {
	make_file_bytes "$D/a" $((C + 1))
	make_file_bytes "$D/b" $((2 * C))
	make_file_bytes "$D/c" $((3 * C))
	retry_cold stop_next_file
	{
		cat "$D/b"
		head -c $((5 * P)) "$D/c"
	} >"$D/expected"
	cmp "$D/out" "$D/expected"
	expect_row "$D/a" bytes=0 missing=$((C + 1))
	expect_row "$D/b" bytes=$((2 * C)) missing=0
	expect_row "$D/c" bytes=$((5 * P)) missing=$((3 * C - 5 * P))
	expect_row total bytes=$((2 * C + 5 * P)) \
		missing=$((C + 1 + 3 * C - 5 * P))
}

# Three cold ranges, cold_gap() apart: the first 2 pages; 4 pages across
# the chunk boundary at A (one merged range); the last, partial page.
A='' B=''
skip_layout() {
	local s=$(($(stat -c %s "$F")))
	cache_layout "$F" $((2 * P)) $((A - 4 * P)) \
		$((A + 2 * P)) $((B + 3 * P - A - 2 * P)) || return 1
	nbcat_json -b 64K --cached-only=skip -m "$D/missing" "$F"
	expect_status 2 &&
		expect_lines "$D/missing" "$F\t0\t$((2 * P))" \
			"$F\t$((A - 2 * P))\t$((4 * P))" \
			"$F\t$((B + 3 * P))\t$((s - B - 3 * P))" &&
		expect_row "$F" missing=$((6 * P + s - B - 3 * P)) \
			bytes=$((B + 3 * P - 6 * P))
}

@test "skip: only cached pages written; missing ranges exact to the page" {
	local g
	# where a RWF_NOWAIT miss starts readahead (6.12+), nbcat learns
	# residency before it reads, so the ranges are exact there too
	g=$(cold_gap $C)
	A=$(((g + 4 * P + C - 1) / C * C))
	B=$(((A + 2 * P + g + C - 1) / C * C))
	make_file_bytes "$F" $((B + 3 * P + 100))
	retry_cold skip_layout
	{
		extract "$F" $((2 * P)) $((A - 4 * P))
		extract "$F" $((A + 2 * P)) $((B + P - A))
	} >"$D/expected"
	cmp "$D/out" "$D/expected"
}

# ranges_complement SIZE: from "PATH<tab>OFFSET<tab>LENGTH" lines on
# stdin, the "OFFSET LENGTH" ranges of [0, SIZE) they leave out; fails
# unless the ranges are sorted, disjoint, not adjacent (merged) and
# page aligned except at SIZE.
ranges_complement() {
	awk -F'\t' -v size="$1" -v p="$P" '
		BEGIN { pos = 0 }
		$2 < pos || ($2 == pos && NR > 1) || $2 % p ||
		($2 + $3 != size && ($2 + $3) % p) || $3 <= 0 {
			print "bad range: " $0 > "/dev/stderr"; bad = 1
		}
		{ if ($2 > pos) print pos, $2 - pos; pos = $2 + $3 }
		END { if (pos < size) print pos, size - pos; exit bad }'
}

@test "skip, any kernel: the output is exactly the bytes not listed missing" {
	local g a b s off len sum=0
	g=$(cold_gap $C)
	a=$(((g + 4 * P + C - 1) / C * C))
	b=$(((a + 2 * P + g + C - 1) / C * C))
	s=$((b + 3 * P + 100))
	make_file_bytes "$F" "$s"
	cache_layout "$F" $((2 * P)) $((a - 4 * P)) \
		$((a + 2 * P)) $((b + 3 * P - a - 2 * P))
	nbcat_json -b 64K --cached-only=skip -m "$D/missing" --trace "$D/trace" "$F"
	# never a blocking read
	expect_trace_wellformed "$D/trace" "$F"
	[[ $(cut -f3 "$D/trace" | sort -u | grep -v -x -e hit -e partial -e miss) == "" ]] ||
		fail "blocking reads in a cached-only run: $(cut -f3 "$D/trace" | sort | uniq -c)"
	run -0 ranges_complement "$s" <"$D/missing"
	: >"$D/expected"
	while read -r off len; do
		extract "$F" "$off" "$len" >>"$D/expected"
		sum=$((sum + len))
	done <<<"$output"
	cmp "$D/out" "$D/expected"
	expect_row "$F" bytes="$sum" missing=$((s - sum))
	if ((sum == s)); then expect_status 0; else expect_status 2; fi
}

cold_skip() {
	cache_layout "$F" || return 1
	nbcat_json -b 64K --cached-only=skip -m "$D/missing" "$F"
	expect_status 2 && expect_lines "$D/missing" "$F\t0\t$((3 * P + 5))"
}

@test "skip on a cold file: nothing written, one range" {
	make_file_bytes "$F" $((3 * P + 5))
	retry_cold cold_skip
	[[ ! -s $D/out ]]
	expect_row "$F" bytes=0 missing=$((3 * P + 5))
}

@test "exit 1 wins over 2: a missing file and a cold one" {
	make_file_bytes "$F" $C
	"$CACHECTL" evict "$F"
	nbcat_run -q -b 64K --cached-only "$D/nope" "$F"
	expect_status 1
	assert_equal "$(<"$D/err")" "nbcat: $D/nope: No such file or directory"
}

# keeps_cache HOW GAP: a cached-only run over a cached middle range
# leaves the pages it found resident (check_cache: none added; 75 when
# the host reclaimed some meanwhile).
keeps_cache() {
	local before after
	cache_layout "$F" $C $(($2 + 5 * P)) || return 1
	before=$(resident_pages "$F")
	nbcat_run -q -b 64K --cached-only="$1" "$F"
	expect_status 2 || return 1
	after=$(resident_pages "$F")
	check_cache "$before" "$after"
}

@test "a cached-only run leaves the page cache as it was (any kernel)" {
	local g how
	g=$(cold_gap $C)
	make_file_bytes "$F" $((2 * C + g))
	for how in stop skip; do
		retry_reclaim keeps_cache "$how" "$g"
	done
}

@test "no RWF_NOWAIT (procfs, sysfs): nothing written, exit 2, missing unknown" {
	local how f files=(/proc/version)
	[[ -r /sys/kernel/uevent_seqnum ]] && files+=(/sys/kernel/uevent_seqnum)
	for f in "${files[@]}"; do
		"$CACHECTL" probe "$f" >/dev/null 2>&1 &&
			skip "$f supports RWF_NOWAIT on this kernel"
	done
	make_file_bytes "$F" 100
	"$CACHECTL" load "$F" 0 100
	for how in stop skip; do
		# st_size is 0 (procfs) or 4096 (sysfs): neither says what is
		# missing, so nothing is claimed, and the answer is "not all"
		nbcat_json --cached-only=$how -m "$D/missing" "${files[@]}" "$F"
		expect_status 2
		expect_output "$F"
		for f in "${files[@]}"; do
			expect_row "$f" mode=unsupported bytes=0 missing=null
		done
		expect_row "$F" mode=nowait bytes=100 missing=0
		expect_row total missing=null
		local want=()
		for f in "${files[@]}"; do
			want+=("$f\t0\tunknown")
		done
		expect_lines "$D/missing" "${want[@]}"
	done
	# quiet, and every file unsupported: still exit 2, not 0
	nbcat_run -c -q /proc/version
	expect_status 2
	expect_lines "$D/out"
}

# one_page_layout: $F (20 MiB) cached but for one page at 10 MiB; the
# table shows it as it is.
one_page_layout() {
	local m=$((10 * MiB))
	cache_layout "$F" 0 "$m" $((m + P)) $((m - P)) || return 1
	nbcat_run --cached-only=skip -b 64K --raw \
		-o BYTES,PARTIAL_CHUNKS,MISS_CHUNKS,HIT_RATIO,MISSING "$F"
	expect_status 2 || return 1
	check_cache "$LAYOUT_PAGES" "$(resident_pages "$F")" || return
	expect_lines "$D/err" "BYTES PARTIAL_CHUNKS MISS_CHUNKS HIT_RATIO MISSING" \
		"20M 1 0 99.9% 4K"
}

@test "skip, one page of 20 MiB missing: HIT_RATIO 99.9%, never 100%; a partial chunk" {
	# printed "HIT_RATIO 100.0%" with MISSING 4K; the chunk
	# with the missing page is partial, not a miss (MISS_CHUNKS 0)
	make_file_bytes "$F" $((20 * MiB))
	retry_reclaim one_page_layout
}

# cpu_run ARG...: nbcat_run ARG..., its CPU time (user + system, in
# milliseconds) in $cpu_ms.
cpu_run() {
	local TIMEFORMAT='%3U %3S' u s
	{ time nbcat_run "$@"; } 2>"$D/time"
	read -r u s <"$D/time"
	cpu_ms=$(((10#${u/./} + 10#${s/./})))
}

@test "skip over a 1 TiB sparse file: under 1 s of CPU, nothing read in, MISSING 1T" {
	# one cachestat() and one fstat() per chunk cost 15-18 s; the
	# uncached stretch is now asked about as one
	truncate -s 1T "$F" || skip "$D: no 1 TiB sparse file here"
	NBCAT_OUT=$D/out cpu_run --cached-only=skip -m "$D/missing" \
		--raw -o MISSING,MISS_CHUNKS "$F"
	expect_status 2
	((cpu_ms < 1000)) || fail "CPU time ${cpu_ms} ms"
	expect_lines "$D/err" "MISSING MISS_CHUNKS" "1T 4194304"
	expect_lines "$D/missing" "$F\t0\t$((1 << 40))"
	[[ ! -s $D/out ]] || fail "wrote data"
	[[ $(resident_pages "$F") == 0 ]] || fail "pages read in"
	# 1 MiB cached in the middle: found, and only it written
	local m=$((512 << 30))
	make_file_bytes "$D/mid" "$MiB"
	dd if="$D/mid" of="$F" bs=1M seek=$((m / MiB)) conv=notrunc status=none
	cpu_run --cached-only=skip -m "$D/missing" --bytes --raw \
		-o MISSING "$F"
	expect_status 2
	((cpu_ms < 1000)) || fail "CPU time ${cpu_ms} ms, 1 MiB cached"
	expect_output "$D/mid"
	expect_lines "$D/missing" "$F\t0\t$m" \
		"$F\t$((m + MiB))\t$(((1 << 40) - m - MiB))"
}
