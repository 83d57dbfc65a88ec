#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Per-chunk classification with strategy nowait, asserted exactly from
# page-cache layouts built with the cachectl helper: warm chunks are
# hits, a chunk whose first page is cold is a miss, a chunk cached only
# at its start is partial. Cold ranges are at most one chunk and kept
# cold_gap() bytes apart, so readahead from one never reaches another and
# the numbers do not depend on thread timing (see nbcat.bash).

load "${BATS_TEST_DIRNAME}/../helpers/nbcat.bash"
# setup, teardown: nbcat.bash's ($D where RWF_NOWAIT works, $F=$D/f)

C=$((64 * KiB))
P=$PAGESIZE

# warm_file SIZE [NBCAT ARG]...: $F cached whole, every chunk a hit.
warm_file() {
	local s=$1
	shift
	cache_layout "$F" 0 "$s" || return 1
	nbcat_json "$@" "$F"
	expect_row "$F" type=file mode=nowait size="$s" bytes="$s" \
		hit_bytes="$s" partial_chunks=0 miss_chunks=0 missing=0
}

@test "warm file: every chunk a hit, ratios 1, no EAGAIN or fallback latency" {
	local s=$((10 * C + 1000))
	make_file_bytes "$F" "$s"
	retry_warm warm_file "$s" -b 64K -m "$D/missing"
	expect_status 0
	expect_output "$F"
	expect_row "$F" type=file mode=nowait size="$s" bytes="$s" chunks=11 \
		hit_chunks=11 partial_chunks=0 miss_chunks=0 unsup_chunks=0 \
		hit_bytes="$s" partial_bytes=0 miss_bytes=0 unsup_bytes=0 missing=0
	expect_ratio "$F" hit_ratio 1
	expect_ratio "$F" chunk_hit_ratio 1
	expect_row "$F" eagain_p50_ns=null eagain_p99_ns=null eagain_max_ns=null \
		fallback_p50_ns=null fallback_p99_ns=null fallback_max_ns=null
	[[ $(json_type "$F" nowait_p50_ns) == number ]]
	[[ $(json_type "$F" nowait_max_ns) == number ]]
	expect_lines "$D/missing"
}

@test "-b sets the chunk, 256 KiB by default" {
	local s=$((1 * MiB + 1)) b want
	make_file_bytes "$F" "$s"
	for b in default:5 4K:257 128K:9 1M:2 64M:1; do
		want=${b#*:}
		if [[ ${b%:*} == default ]]; then
			retry_warm warm_file "$s"
		else
			retry_warm warm_file "$s" -b "${b%:*}"
		fi
		expect_status 0
		expect_row "$F" chunks="$want" hit_chunks="$want" hit_bytes="$s" ||
			fail "-b ${b%:*}"
	done
}

# cold_file SIZE: the whole file (at most one chunk) is one miss.
cold_file() {
	cache_layout "$F" || return 1
	nbcat_json -b 64K -m "$D/missing" --trace "$D/trace" "$F"
	expect_row "$F" chunks=1 hit_chunks=0 partial_chunks=0 miss_chunks=1 \
		hit_bytes=0 partial_bytes=0 miss_bytes="$1" unsup_bytes=0 bytes="$1"
}

@test "cold file of one chunk: one miss, ratios 0, EAGAIN and fallback latency" {
	local s
	for s in 1 $((C - 1000)) $C; do
		make_file_bytes "$F" "$s"
		retry_cold cold_file "$s"
		expect_status 0
		expect_output "$F"
		expect_ratio "$F" hit_ratio 0
		expect_ratio "$F" chunk_hit_ratio 0
		expect_row "$F" nowait_p50_ns=null nowait_p99_ns=null nowait_max_ns=null
		[[ $(json_type "$F" eagain_p50_ns) == number ]]
		[[ $(json_type "$F" fallback_p50_ns) == number ]]
		# default mode: the ranges missed, then completed by workers
		expect_lines "$D/missing" "$F\t0\t$s"
		# the trace: the chunk (its bytes, up to EOF) missed, then read
		expect_trace_wellformed "$D/trace" "$F"
		assert_equal "$(trace_lines "$D/trace" miss)" "0 $s"
		assert_equal "$(trace_lines "$D/trace" fallback | awk '{ n += $2 } END { print n }')" "$s"
	done
}

cold_files() {
	local f
	for f in "$D/a" "$D/b" "$D/c"; do
		cache_layout "$f" || return 1
	done
	nbcat_json -b 64K "$D/a" "$D/b" "$D/c"
	expect_row "$D/a" miss_chunks=1 miss_bytes=1 hit_bytes=0 &&
		expect_row "$D/b" miss_chunks=1 miss_bytes=$((C - 1)) hit_bytes=0 &&
		expect_row "$D/c" miss_chunks=1 miss_bytes=$C hit_bytes=0 &&
		expect_row total type=total file=null mode=null chunks=3 \
			hit_chunks=0 partial_chunks=0 miss_chunks=3 hit_bytes=0 \
			partial_bytes=0 miss_bytes=$((2 * C)) bytes=$((2 * C))
}

@test "cold files: every chunk of every file a miss, per file and in total" {
	make_file_bytes "$D/a" 1
	make_file_bytes "$D/b" $((C - 1))
	make_file_bytes "$D/c" $C
	retry_cold cold_files
	expect_status 0
	expect_output "$D/a" "$D/b" "$D/c"
	expect_ratio total hit_ratio 0
}

# warm_stdin SIZE: $F cached whole and read from stdin: every chunk a hit.
warm_stdin() {
	cache_layout "$F" 0 "$1" || return 1
	nbcat_json -b 64K <"$F"
	expect_row @0 hit_bytes="$1" miss_bytes=0
}

@test "regular file on stdin: classified like a named file (mode nowait)" {
	local s=$((4 * C + P))
	make_file_bytes "$F" "$s"
	retry_warm warm_stdin "$s"
	expect_status 0
	expect_output "$F"
	expect_row @0 type=file mode=nowait size="$s" bytes="$s" chunks=5 \
		hit_chunks=5 hit_bytes="$s" miss_bytes=0
}

# Chunk 0 cold, then G bytes cached, then a last chunk cached only for
# its first 5 pages: miss, G/C hits, partial.
G=''
middle_layout() {
	cache_layout "$F" $C $((G + 5 * P)) || return 1
	nbcat_json -b 64K -m "$D/missing" --trace "$D/trace" "$@" "$F"
	expect_row "$F" chunks=$((G / C + 2)) hit_chunks=$((G / C)) \
		partial_chunks=1 miss_chunks=1 hit_bytes="$G" \
		partial_bytes=$((5 * P)) miss_bytes=$((2 * C - 5 * P)) \
		unsup_bytes=0 bytes=$((2 * C + G))
}

@test "cached middle range: hits exactly there, a miss before, partial after" {
	G=$(cold_gap $C)
	local s=$((2 * C + G)) want
	make_file_bytes "$F" "$s"
	retry_cold middle_layout
	expect_status 0
	expect_output "$F"
	expect_ratio "$F" hit_ratio "$(awk -v a=$((G + 5 * P)) -v b="$s" 'BEGIN { print a / b }')"
	expect_ratio "$F" chunk_hit_ratio "$(awk -v a=$((G / C)) -v b=$((G / C + 2)) 'BEGIN { print a / b }')"
	expect_lines "$D/missing" "$F\t0\t$C" "$F\t$((C + G + 5 * P))\t$((C - 5 * P))"
	# the trace: one hit line per cached chunk, in order, a miss at the
	# start, the partial chunk last, and fallback reads for what was missed
	expect_trace_wellformed "$D/trace" "$F"
	want=$(for ((o = C; o < C + G; o += C)); do echo "$o $C"; done)
	[[ $(trace_lines "$D/trace" hit) == "$want" ]] || fail "hit lines differ"
	[[ $(trace_lines "$D/trace" miss | cut -d' ' -f1) == 0 ]]
	[[ $(trace_lines "$D/trace" partial | cut -d' ' -f1) == $((C + G)) ]]
	[[ $(trace_lines "$D/trace" fallback | awk '{ s += $2 } END { print s }') == $((2 * C - 5 * P)) ]]
}

@test "same layout with -w 1 -j 1 and with -w 1024 -j 256: same classes" {
	G=$(cold_gap $C)
	make_file_bytes "$F" $((2 * C + G))
	retry_cold middle_layout -w 1 -j 1
	expect_status 0
	expect_output "$F"
	retry_cold middle_layout -w 1024 -j 256
	expect_status 0
	expect_output "$F"
}

# A partial chunk followed by EOF: 1.5 chunks cached of 2.
partial_layout() {
	cache_layout "$F" 0 $((C + C / 2)) || return 1
	nbcat_json -b 64K -m "$D/missing" "$F"
	expect_row "$F" chunks=2 hit_chunks=1 partial_chunks=1 miss_chunks=0 \
		hit_bytes=$C partial_bytes=$((C / 2)) miss_bytes=$((C / 2))
}

@test "cached range ending mid-chunk: that chunk is partial, the rest a miss" {
	make_file_bytes "$F" $((2 * C))
	retry_cold partial_layout
	expect_status 0
	expect_output "$F"
	expect_ratio "$F" hit_ratio 0.75
	expect_ratio "$F" chunk_hit_ratio 0.5
	expect_lines "$D/missing" "$F\t$((C + C / 2))\t$((C / 2))"
}

# The first chunk cached from its middle on: its first page is cold, so
# RWF_NOWAIT fails and the whole chunk is a miss.
late_start_layout() {
	cache_layout "$F" $((C / 2)) $((4 * C)) || return 1
	nbcat_json -b 64K -m "$D/missing" "$F"
	expect_row "$F" chunks=4 hit_chunks=3 partial_chunks=0 miss_chunks=1 \
		hit_bytes=$((3 * C)) partial_bytes=0 miss_bytes=$C
}

@test "cached range starting mid-chunk: that chunk is a miss as a whole" {
	make_file_bytes "$F" $((4 * C))
	retry_cold late_start_layout
	expect_status 0
	expect_output "$F"
	expect_lines "$D/missing" "$F\t0\t$C"
}

prefetch_layout() {
	cache_layout "$F" || return 1
	nbcat_json -b 64K --prefetch "$F"
	expect_row "$F" chunks=1 miss_chunks=1 miss_bytes=$C hit_bytes=0
}

@test "--prefetch: a cold chunk is still one miss, output unchanged" {
	make_file_bytes "$F" $C
	retry_cold prefetch_layout
	expect_status 0
	expect_output "$F"
}
