#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The strategies (nowait, blocking, pool) write the same bytes and report
# their mode; sparse files, files over 4 GiB, and files that grow or
# shrink while nbcat reads them (made deterministic with a FIFO that
# nbcat blocks on while the file changes).

load "${BATS_TEST_DIRNAME}/../helpers/nbcat.bash"

setup() {
	common_setup
}

teardown() {
	[[ -n ${BIG-} ]] && rm -f "$BIG"
	common_teardown
}

C=$((64 * KiB))

@test "blocking and pool: same output as cat, cold and warm, any -j/-w" {
	local s f strat opts
	for s in 0 1 $((C - 1)) $C $((C + 1)) $((MiB + 7)); do
		f=$D/f$s
		make_file_bytes "$f" "$s"
		for strat in blocking pool; do
			for opts in "-j 1 -w 1" "-j 4 -w 16" "-j 8 -w 3"; do
				"$CACHECTL" evict "$f"
				# shellcheck disable=SC2086 # word splitting wanted
				nbcat_run -q -b 64K -s $strat $opts "$f"
				expect_status 0
				cmp "$D/out" "$f" || fail "$strat $opts, size $s"
			done
		done
	done
}

# unclassified ROW MODE SIZE CHUNKS: a row of a strategy that never uses
# RWF_NOWAIT.
unclassified() {
	expect_row "$1" mode="$2" size="$3" bytes="$3" chunks="$4" \
		hit_chunks=0 partial_chunks=0 miss_chunks=0 unsup_chunks=0 \
		hit_bytes=0 partial_bytes=0 miss_bytes=0 unsup_bytes=0 \
		hit_ratio=null chunk_hit_ratio=null nowait_p50_ns=null \
		eagain_p50_ns=null
}

@test "blocking: mode blocking, nothing classified, fallback latency" {
	local s=$((3 * C + 1))
	make_file_bytes "$D/f" "$s"
	nbcat_json -s blocking -b 64K "$D/f"
	expect_status 0
	expect_output "$D/f"
	unclassified "$D/f" blocking "$s" 4
	[[ $(json_type "$D/f" fallback_p50_ns) == number ]]
	expect_row total hit_bytes=0 miss_bytes=0 bytes="$s"
}

@test "pool: mode pool, nothing classified, fallback latency" {
	local s=$((3 * C + 1))
	make_file_bytes "$D/f" "$s"
	"$CACHECTL" evict "$D/f"
	nbcat_json -s pool -b 64K "$D/f"
	expect_status 0
	expect_output "$D/f"
	unclassified "$D/f" pool "$s" 4
	[[ $(json_type "$D/f" fallback_p50_ns) == number ]]
}

@test "sparse file: holes read as zeros, every byte in exactly one class" {
	local f=$D/sparse s=$((100 * MiB + 5)) strat off
	truncate -s "$s" "$f"
	for off in 0 $((7 * MiB + 3)) $((50 * MiB)) $((s - 5000)); do
		head -c 5000 /dev/urandom |
			dd of="$f" bs=5000 seek="$off" oflag=seek_bytes conv=notrunc status=none
	done
	[[ $(stat -c %s "$f") == "$s" ]]
	for strat in nowait blocking pool; do
		"$CACHECTL" evict "$f"
		nbcat_json -s $strat "$f"
		expect_status 0
		cmp "$D/out" "$f" || fail "strategy $strat"
		expect_row "$f" mode=$strat size="$s" bytes="$s"
	done
	# nowait: which holes hit depends on the kernel (6.1 misses them,
	# newer kernels fill them at once), but the classes partition the
	# bytes read
	nbcat_json "$f"
	run -0 jq -r --arg f "$f" '.nbcat[] | select(.file == $f)
		| .hit_bytes + .partial_bytes + .miss_bytes + .unsup_bytes' \
		"$D/report.json"
	assert_output "$s"
}

# fifo_run OPTS...: start nbcat OPTS $F writing into a FIFO, open it on
# fd 5 and read one byte. nbcat then blocks once the pipe is full: with
# -b 64K -w 1 it has read at most a few chunks of $F, far from its end,
# when the test changes the file.
fifo_run() {
	mkfifo "$D/fifo"
	timeout -s KILL 120 "$NBCAT" "$@" "$F" >"$D/fifo" 2>"$D/err" 3>&- &
	NBCAT_PID=$!
	exec 5<"$D/fifo"
	# one byte out: nbcat has opened the file (SIZE is fixed) and is
	# writing its first chunk
	dd bs=1 count=1 status=none <&5 >"$D/out.head"
}

# fifo_finish: read everything, wait for nbcat, status in $nbcat_status.
fifo_finish() {
	cat "$D/out.head" - <&5 >"$D/out"
	exec 5<&-
	nbcat_status=0
	wait "$NBCAT_PID" || nbcat_status=$?
}

@test "file growing while read: the appended data is written too, like cat" {
	local strat
	for strat in nowait blocking pool; do
		F=$D/grow-$strat
		make_file_bytes "$F" $((2 * MiB))
		rm -f "$D/fifo"
		fifo_run -J --report "$D/report.json" -s $strat -b 64K -w 1
		head -c $((MiB + 3)) /dev/urandom >>"$F"
		fifo_finish
		expect_status 0
		cmp "$D/out" "$F" || fail "strategy $strat"
		expect_row "$F" size=$((2 * MiB)) bytes=$((3 * MiB + 3))
	done
}

@test "file shrinking while read: stops at the new end, no error, no hang" {
	local strat
	for strat in nowait blocking pool; do
		F=$D/shrink-$strat
		make_file_bytes "$F" $((4 * MiB))
		rm -f "$D/fifo"
		fifo_run -J --report "$D/report.json" -s $strat -b 64K -w 1
		truncate -s $((MiB + 5)) "$F"
		fifo_finish
		expect_status 0
		cmp "$D/out" "$F" || fail "strategy $strat"
		expect_row "$F" size=$((4 * MiB)) bytes=$((MiB + 5))
	done
}

# The first 4 GiB + 512 KiB cached, the rest (past 2^32) cold.
big_tail_cold() {
	"$CACHECTL" evict "$BIG" $((4 * GiB)) 0 || return 1
	"$CACHECTL" load "$BIG" 0 $((4 * GiB + 512 * KiB)) || return 1
	NBCAT_OUT=/dev/null nbcat_json -b 64M -w 4 --cached-only \
		-m "$D/missing" "$BIG"
	expect_status 2 &&
		expect_lines "$D/missing" \
			"$BIG\t$((4 * GiB + 512 * KiB))\t$((S - 4 * GiB - 512 * KiB))"
}

@test "file over 4 GiB (sparse): output, sizes and offsets past 2^32" {
	local last
	BIG=$D/big
	truncate -s $((4 * GiB)) "$BIG"
	printf 'first' | dd of="$BIG" conv=notrunc status=none
	printf 'edge!' | dd of="$BIG" bs=1 seek=$((4 * GiB - 2)) conv=notrunc status=none
	head -c $((1 * MiB)) /dev/urandom >>"$BIG"
	S=$((4 * GiB + MiB + 3))
	[[ $(stat -c %s "$BIG") == "$S" ]]

	# the whole file, compared byte for byte
	"$NBCAT" -J --report "$D/report.json" -b 64M -w 4 "$BIG" 2>"$D/err" |
		cmp - "$BIG" || fail "output differs"
	expect_row "$BIG" size="$S" bytes="$S" chunks=65
	run -0 jq -r --arg f "$BIG" '.nbcat[] | select(.file == $f)
		| .hit_bytes + .partial_bytes + .miss_bytes' "$D/report.json"
	assert_output "$S"

	# blocking reads: offsets in the trace go past 2^32
	NBCAT_OUT=/dev/null nbcat_run -q -s blocking -b 64M -w 4 --trace "$D/trace" "$BIG"
	expect_status 0
	last=$(awk -F'\t' '$2 > 0' "$D/trace" | tail -n1 | cut -f1,2)
	assert_equal "$last" "$((4 * GiB))"$'\t'"$((MiB + 3))"

	# --cached-only: a missing range past 2^32
	if "$CACHECTL" probe "$BIG" >/dev/null; then
		retry_cold big_tail_cold
		expect_row "$BIG" bytes=$((4 * GiB + 512 * KiB)) \
			missing=$((S - 4 * GiB - 512 * KiB))
	else
		echo "# --cached-only part skipped: no RWF_NOWAIT on $D" >&3
	fi
}
