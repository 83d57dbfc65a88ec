#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The report: JSON keys and types, the total row, where the report goes
# (stderr, --report FILE, nowhere with -q), the table options (--raw,
# --noheadings, --output), --trace lines and --progress on stderr only.
# Warm files only: every number here is exact whatever the kernel.

load "${BATS_TEST_DIRNAME}/../helpers/nbcat.bash"
# setup, teardown: nbcat.bash's ($D where RWF_NOWAIT works, $F=$D/f)

C=$((64 * KiB))

KEYS=(file type mode size bytes chunks hit_chunks partial_chunks miss_chunks
	unsup_chunks hit_bytes partial_bytes miss_bytes unsup_bytes hit_ratio
	chunk_hit_ratio nowait_p50_ns nowait_p99_ns nowait_max_ns eagain_p50_ns
	eagain_p99_ns eagain_max_ns fallback_p50_ns fallback_p99_ns
	fallback_max_ns time_ns bps missing)

COUNTS=(size bytes chunks hit_chunks partial_chunks miss_chunks unsup_chunks
	hit_bytes partial_bytes miss_bytes unsup_bytes missing)

# warm NAME SIZE: a cached file $D/NAME.
warm() {
	make_file_bytes "$D/$1" "$2"
	cache_layout "$D/$1" 0 "$2"
}

# expect_types ROW KEY=TYPE...
expect_types() {
	local row=$1 kv t rc=0
	shift
	for kv; do
		t=$(json_type "$row" "${kv%%=*}")
		[[ $t == "${kv#*=}" ]] && continue
		echo "report[$row].${kv%%=*}: type $t, want ${kv#*=}" >&2
		rc=1
	done
	return "$rc"
}

@test "JSON: one object per file and a total, every column, typed" {
	warm a $((3 * C))
	nbcat_json -b 64K "$D/a"
	expect_status 0
	run -0 jq -r '.nbcat | length' "$D/report.json"
	assert_output 2
	local k
	for k in "${KEYS[@]}"; do
		run -0 jq -r --arg k "$k" '[.nbcat[] | has($k)] | all' "$D/report.json"
		[[ $output == true ]] || fail "key $k missing"
	done
	expect_types "$D/a" file=string type=string mode=string
	expect_types total file=null type=string mode=null
	for k in "${COUNTS[@]}" time_ns bps hit_ratio chunk_hit_ratio \
		nowait_p50_ns nowait_p99_ns nowait_max_ns; do
		expect_types "$D/a" "$k=number"
		expect_types total "$k=number"
	done
	for k in eagain_p50_ns eagain_p99_ns eagain_max_ns fallback_p50_ns \
		fallback_p99_ns fallback_max_ns; do
		expect_types "$D/a" "$k=null"
	done
	expect_row @1 type=total
}

# three_files: three warm files read at once, every chunk a hit.
three_files() {
	warm a $((3 * C)) || return 1
	warm b 1 || return 1
	warm c $((C + 7)) || return 1
	nbcat_json -b 64K "$D/a" "$D/b" "$D/c"
	expect_status 0 || return 1
	expect_row total bytes=$((4 * C + 8)) chunks=6 hit_chunks=6
}

@test "JSON: the total row adds up the files" {
	retry_warm three_files
	local k
	for k in "${COUNTS[@]}"; do
		run -0 jq -r --arg k "$k" '
			([.nbcat[] | select(.type == "file") | .[$k]] | add)
			== (.nbcat[] | select(.type == "total") | .[$k])' \
			"$D/report.json"
		[[ $output == true ]] || fail "total.$k is not the sum"
	done
}

# one_mib_4k: a warm MiB read in 4 KiB chunks, every chunk a hit.
one_mib_4k() {
	warm a $((1 * MiB)) || return 1
	nbcat_json -b 4K "$D/a"
	expect_status 0 || return 1
	expect_row "$D/a" hit_chunks=256
}

@test "JSON: latencies p50 <= p99 <= max, bps > 0" {
	retry_warm one_mib_4k
	run -0 jq -r --arg f "$D/a" '.nbcat[] | select(.file == $f)
		| (.nowait_p50_ns <= .nowait_p99_ns and
		   .nowait_p99_ns <= .nowait_max_ns and .nowait_p50_ns > 0 and
		   .bps > 0 and .time_ns >= 0)' "$D/report.json"
	assert_output true
}

@test "JSON: an empty file has 0 chunks and null ratios" {
	: >"$D/e"
	nbcat_json "$D/e"
	expect_status 0
	expect_row "$D/e" mode=nowait size=0 bytes=0 chunks=0 hit_bytes=0 \
		miss_bytes=0 hit_ratio=null chunk_hit_ratio=null
}

@test "human report on stderr by default: a row per file, total with several" {
	warm a 100
	warm b 200
	nbcat_run "$D/a"
	expect_status 0
	expect_output "$D/a"
	run -0 cat "$D/err"
	assert_equal "${#lines[@]}" 2
	assert_line -n 0 --partial FILE
	assert_line -n 1 --partial "$D/a"
	nbcat_run "$D/a" "$D/b"
	run -0 cat "$D/err"
	assert_equal "${#lines[@]}" 4
	assert_line -n 3 --partial total
}

@test "-q: no report at all" {
	warm a 100
	nbcat_run -q "$D/a"
	expect_status 0
	expect_output "$D/a"
	expect_lines "$D/err"
	nbcat_run -q -J "$D/a"
	expect_lines "$D/err"
}

@test "--raw, --noheadings, --output" {
	warm a 100
	warm b 200
	nbcat_run --raw -o TYPE,BYTES "$D/a" "$D/b"
	expect_status 0
	expect_lines "$D/err" "TYPE BYTES" "file 100B" "file 200B" "total 300B"
	nbcat_run --raw --noheadings -o FILE,BYTES,HIT_BYTES,MODE "$D/a"
	expect_lines "$D/err" "$D/a 100B 100B nowait"
	nbcat_run --noheadings -o BYTES "$D/a" "$D/b"
	run -0 cat "$D/err"
	assert_equal "${#lines[@]}" 3
	assert_line -n 0 --regexp '^ *100B$'
	assert_line -n 2 --regexp '^ *300B$'
}

# people_and_bytes SIZE: $D/a (SIZE bytes) cached whole; the table's
# numbers for people, --bytes and JSON all say so.
people_and_bytes() {
	local s=$1 cols want got
	cols=SIZE,BYTES,HIT_BYTES,MISS_BYTES,HIT_RATIO,CHUNK_HIT_RATIO
	cols+=,NOWAIT_P50,NOWAIT_MAX,TIME,BPS,MISSING
	cache_layout "$D/a" 0 "$s" || return 1
	nbcat_run --raw --noheadings -o "$cols" "$D/a"
	expect_status 0 || return 1
	run -0 cat "$D/err" || return 1
	assert_output --regexp '^3\.5M 3\.5M 3\.5M 0B 100\.0% 100\.0% [0-9.]+(ns|us|ms) [0-9.]+(ns|us|ms|s) [0-9.]+(ns|us|ms|s) [0-9.]+[BKMGT]/s 0B$' ||
		return 1
	# --bytes: what JSON has, in the same order
	nbcat_run --raw --noheadings --bytes -o "$cols" "$D/a"
	expect_status 0 || return 1
	read -ra got <"$D/err"
	assert_equal "${got[*]:0:6}" "$s $s $s 0 1.000000 1.000000" || return 1
	assert_equal "${got[10]}" 0 || return 1
	# durations in nanoseconds (TIME too), the rate in bytes per second
	[[ ${got[6]} =~ ^[0-9]+$ && ${got[7]} =~ ^[0-9]+$ &&
	   ${got[8]} =~ ^[0-9]+$ && ${got[9]} =~ ^[0-9]+$ ]] ||
		fail "duration or rate not an integer: ${got[*]}" || return 1
	# JSON ignores neither --bytes nor its absence: always exact
	for want in "" --bytes; do
		nbcat_json $want -o FILE,SIZE,HIT_RATIO,NOWAIT_P50 "$D/a"
		expect_row "$D/a" size="$s" hit_ratio=1 || return 1
		[[ $(json_type "$D/a" nowait_p50_ns) == number ]] || return 1
	done
}

@test "numbers for people by default; --bytes and JSON exact" {
	local s=$((3 * MiB + MiB / 2))
	make_file_bytes "$D/a" "$s"
	retry_warm people_and_bytes "$s"
}

@test "durations: no unit in the column names, the former names still accepted" {
	# NOWAIT_P50_NS printed "9.5us", not nanoseconds: the name lost
	# its unit, the JSON key keeps it, since JSON is always nanoseconds
	warm a 100
	nbcat_run --raw -o NOWAIT_P50,nowait_p99_ns,SECONDS "$D/a"
	expect_status 0
	run -0 head -n1 "$D/err"
	assert_output "NOWAIT_P50 NOWAIT_P99 TIME"
	run -0 tail -n1 "$D/err"
	assert_output --regexp '^[0-9.]+(ns|us|ms) [0-9.]+(ns|us|ms) [0-9.]+(ns|us|ms|s)$'
	nbcat_json -o NOWAIT_P50_NS,TIME "$D/a"
	run -0 jq -c '[.nbcat[] | keys] | .[0]' "$D/report.json"
	assert_output '["nowait_p50_ns","time_ns","type"]'
	[[ $(json_type @0 time_ns) == number ]]
	run -0 jq -r '.nbcat[0].time_ns | tostring | test("^[0-9]+$")' \
		"$D/report.json"
	assert_output true
}

@test "--json --output: the chosen keys, and every row its type" {
	warm a 100
	nbcat_json -o FILE,BYTES "$D/a"
	expect_status 0
	run -0 jq -c '[.nbcat[] | keys]' "$D/report.json"
	assert_output '[["bytes","file","type"],["bytes","file","type"]]'
	# the man page's example finds the total row
	run -0 jq -c '.nbcat[] | select(.type == "total") | .bytes' \
		"$D/report.json"
	assert_output 100
	# TYPE asked for: once, where asked
	nbcat_json -o TYPE,BYTES "$D/a"
	run -0 jq -c '[.nbcat[] | keys_unsorted]' "$D/report.json"
	assert_output '[["type","bytes"],["type","bytes"]]'
}

@test "UTF-8 locale: a UTF-8 file name is printed as it is, as lsblk does" {
	# without setlocale() the table escaped it: \xc3\xbcn\xc3\xaf
	require_utf8_locale
	local name=$D/ünï
	printf 'x\n' >"$name"
	# (not --raw, which hex-escapes every unsafe byte, as lsblk --raw)
	LC_ALL=$UTF8_LOCALE nbcat_run --noheadings -o FILE "$name"
	expect_status 0
	expect_lines "$D/err" "$name"
	# bytes that are not UTF-8 are still escaped
	printf 'x\n' >"$D/bad"$'\xff'
	LC_ALL=$UTF8_LOCALE nbcat_run --noheadings -o FILE "$D/bad"$'\xff'
	expect_lines "$D/err" "$D/bad\\\\xff"
}

@test "--report FILE: the report goes there, stderr stays empty" {
	warm a 100
	nbcat_run --report "$D/r.txt" --raw -o TYPE,BYTES "$D/a"
	expect_status 0
	expect_output "$D/a"
	expect_lines "$D/err"
	expect_lines "$D/r.txt" "TYPE BYTES" "file 100B"
	nbcat_run -r "$D/r.json" -J "$D/a"
	expect_lines "$D/err"
	run -0 jq -r '.nbcat[0].bytes' "$D/r.json"
	assert_output 100
}

@test "--trace: one line per chunk, hit outcomes on a warm file" {
	warm a $((2 * C + 1))
	nbcat_run -q -b 64K --trace "$D/trace" "$D/a"
	expect_status 0
	expect_trace_wellformed "$D/trace" "$D/a"
	[[ $(cut -f1-3,5 "$D/trace") == \
		"0"$'\t'"$C"$'\t'"hit"$'\t'"$D/a"$'\n'"$C"$'\t'"$C"$'\t'"hit"$'\t'"$D/a"$'\n'"$((2 * C))"$'\t'"1"$'\t'"hit"$'\t'"$D/a" ]] ||
		fail "trace: $(cat -A "$D/trace")"
}

@test "--trace with strategy blocking: contiguous blocking reads" {
	warm a $((3 * C + 10))
	nbcat_run -q -s blocking -b 64K --trace "$D/trace" "$D/a"
	expect_status 0
	expect_trace_wellformed "$D/trace" "$D/a"
	[[ $(awk -F'\t' '$3 != "blocking"' "$D/trace") == "" ]]
	run -0 awk -F'\t' '$2 > 0 { if ($1 != n) print "gap at " $1; n += $2 }
		END { print n }' "$D/trace"
	assert_output $((3 * C + 10))
}

# warm_run ARG...: warm $D/a, then nbcat ARG... $D/a; fails when a page
# was reclaimed in between (the only note a warm file gets, on 6.12+, is
# the one about readahead on a miss), for retry_warm.
warm_run() {
	warm a $((16 * MiB))
	nbcat_run "$@" "$D/a"
	! grep -q 'readahead on a RWF_NOWAIT miss' "$D/err"
}

@test "--progress: one line on stderr, stdout untouched" {
	retry_warm warm_run --report "$D/r" -p
	expect_status 0
	expect_output "$D/a"
	[[ -s $D/err ]]
	# updates are separated by \r; exactly one newline, at the end
	[[ $(tr -cd '\n' <"$D/err" | wc -c) == 1 ]]
	[[ $(tail -c1 "$D/err" | od -An -c | tr -d ' ') == '\n' ]]
	retry_warm warm_run --report "$D/r"
	expect_lines "$D/err"
}

@test "--trace and --missing: tab, newline and backslash in a path escaped" {
	local name=$'a\tb\nc\\d' esc='a\tb\nc\\d' f
	f=$D/$name
	make_file_bytes "$f" $((1 * MiB))
	"$CACHECTL" evict "$f"
	nbcat_run -q -b 64K --trace "$D/trace" -m "$D/missing" "$f"
	expect_status 0
	expect_output "$f"
	# one record a line, the path as its last (trace) or first field
	# (through ENVIRON: awk -v would undo the escapes)
	P=$D/$esc awk -F'\t' '$NF != ENVIRON["P"] || NF != 5 { bad = 1 }
		END { exit bad || NR == 0 }' "$D/trace" ||
		fail "trace: $(cat -A "$D/trace")"
	P=$D/$esc awk -F'\t' '$1 != ENVIRON["P"] || NF != 3 { bad = 1 }
		END { exit bad || NR == 0 }' "$D/missing" ||
		fail "missing: $(cat -A "$D/missing")"
}

@test "JSON: a file name that is not valid UTF-8 is escaped, strict parsers accept it" {
	require_cmd python3
	local name
	name=$(printf 'caf\303\251-\377\376-\355\240\200-\360\237\230\200')
	make_file_bytes "$D/$name" 100
	nbcat_json "$D/$name"
	expect_status 0
	# python's json rejects invalid UTF-8 (jq would replace it)
	run -0 python3 -c 'import json, sys
r = json.loads(open(sys.argv[1], "rb").read())
print(r["nbcat"][0]["file"])' "$D/report.json"
	# valid sequences kept, every invalid byte as \xNN
	assert_output "$D/"$'caf\u00e9-\\xff\\xfe-\\xed\\xa0\\x80-\U0001F600'
}

@test "JSON report on stderr: warnings go into its \"warnings\" array, one document" {
	make_file_bytes "$D/a" 100
	nbcat_run -J /proc/version "$D/nope" "$D/a"
	expect_status 1
	expect_output /proc/version "$D/a"
	run -0 jq -c '.warnings' "$D/err"
	assert_output "[\"/proc/version: non-blocking reads not supported, using plain reads\",\"$D/nope: No such file or directory\"]"
	run -0 jq -r '.nbcat[] | "\(.file) \(.mode)"' "$D/err"
	assert_output "/proc/version unsupported
$D/nope error
$D/a nowait
null null"
	# no warning: an empty array; with --report FILE: warnings on stderr
	nbcat_run -J "$D/a"
	run -0 jq -c '.warnings' "$D/err"
	assert_output "[]"
	nbcat_run -J --report "$D/report.json" "$D/nope"
	expect_lines "$D/err" "nbcat: $D/nope: No such file or directory"
	run -0 jq -c 'has("warnings")' "$D/report.json"
	assert_output "false"
}
