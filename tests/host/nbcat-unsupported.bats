#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Inputs RWF_NOWAIT cannot classify: files on file systems that refuse it
# (tmpfs, procfs: EOPNOTSUPP) get one notice each, plain reads and mode
# "unsupported"; pipes and other non-seekable inputs are read with read(),
# mode "stream", no notice. The output is cat's either way.

load "${BATS_TEST_DIRNAME}/../helpers/nbcat.bash"

setup() {
	common_setup
}

teardown() {
	[[ -n ${SHM-} ]] && rm -rf "$SHM"
	common_teardown
}

C=$((64 * KiB))

# shm_dir: a scratch directory on a tmpfs that refuses RWF_NOWAIT.
shm_dir() {
	[[ -d /dev/shm && $(stat -f -c %T /dev/shm) == tmpfs ]] ||
		skip "/dev/shm is not a tmpfs"
	SHM=$(mktemp -d /dev/shm/nbio-test.XXXXXX)
	: >"$SHM/probe"
	local rc=0
	"$CACHECTL" probe "$SHM/probe" >/dev/null || rc=$?
	((rc == 77)) ||
		skip "tmpfs accepts RWF_NOWAIT on kernel $(uname -r) (probe exit $rc)"
}

notice() {
	echo "nbcat: $1: non-blocking reads not supported, using plain reads"
}

@test "tmpfs file: one notice, plain reads, mode unsupported, same output" {
	shm_dir
	local s=$((3 * C + 5))
	make_file_bytes "$SHM/f" "$s"
	nbcat_json -b 64K "$SHM/f"
	expect_status 0
	expect_output "$SHM/f"
	expect_lines "$D/err" "$(notice "$SHM/f")"
	expect_row "$SHM/f" mode=unsupported size="$s" bytes="$s" chunks=4 \
		unsup_chunks=4 unsup_bytes="$s" hit_chunks=0 partial_chunks=0 \
		miss_chunks=0 hit_bytes=0 partial_bytes=0 miss_bytes=0
	# nothing was classified
	expect_ratio "$SHM/f" hit_ratio null
	expect_ratio "$SHM/f" chunk_hit_ratio null
	expect_row "$SHM/f" nowait_p50_ns=null eagain_p50_ns=null
	[[ $(json_type "$SHM/f" fallback_p50_ns) == number ]]
}

# mixed_warm: $D/b cached whole and read between two tmpfs files.
mixed_warm() {
	cache_layout "$D/b" 0 $((2 * C)) || return 1
	nbcat_json -b 64K "$SHM/a" "$D/b" "$SHM/c"
	expect_status 0 || return 1
	expect_row "$D/b" mode=nowait hit_chunks=2 hit_bytes=$((2 * C))
}

@test "tmpfs and ext4 files mixed: a notice per tmpfs file, totals add up" {
	shm_dir
	require_nowait "$D"
	make_file_bytes "$SHM/a" $((C + 1))
	make_file_bytes "$D/b" $((2 * C))
	make_file_bytes "$SHM/c" 10
	retry_warm mixed_warm
	expect_output "$SHM/a" "$D/b" "$SHM/c"
	expect_lines "$D/err" "$(notice "$SHM/a")" "$(notice "$SHM/c")"
	expect_row total unsup_chunks=3 unsup_bytes=$((C + 11)) hit_chunks=2 \
		hit_bytes=$((2 * C)) miss_bytes=0 bytes=$((3 * C + 11))
	expect_ratio total hit_ratio 1
}

@test "tmpfs file: -q suppresses the notice" {
	shm_dir
	make_file_bytes "$SHM/f" 1000
	nbcat_run -q "$SHM/f"
	expect_status 0
	expect_output "$SHM/f"
	expect_lines "$D/err"
}

@test "tmpfs file: --trace says unsupported, one line per chunk" {
	shm_dir
	make_file_bytes "$SHM/f" $((2 * C + 1))
	nbcat_run -q -b 64K --trace "$D/trace" "$SHM/f"
	expect_status 0
	expect_trace_wellformed "$D/trace" "$SHM/f"
	[[ $(trace_lines "$D/trace" unsupported) == "0 $C"$'\n'"$C $C"$'\n'"$((2 * C)) 1" ]] ||
		fail "trace: $(<"$D/trace")"
}

@test "procfs file (st_size 0): read to EOF, mode unsupported" {
	local want
	want=$(wc -c </proc/version)
	nbcat_json /proc/version
	expect_status 0
	expect_output /proc/version
	expect_lines "$D/err" "$(notice /proc/version)"
	expect_row /proc/version mode=unsupported size=0 bytes="$want" \
		unsup_bytes="$want"
}

@test "pipe on stdin: mode stream, not classified, no notice" {
	local s=$((3 * C + 7))
	make_file_bytes "$D/a" "$s"
	nbcat_json -b 64K < <(cat "$D/a")
	expect_status 0
	expect_output "$D/a"
	expect_lines "$D/err"
	expect_row @0 type=file mode=stream size=0 bytes="$s" hit_chunks=0 \
		partial_chunks=0 miss_chunks=0 unsup_chunks=0 hit_bytes=0 \
		partial_bytes=0 miss_bytes=0 unsup_bytes=0
	expect_ratio @0 hit_ratio null
	expect_ratio @0 chunk_hit_ratio null
	expect_row @0 nowait_p50_ns=null eagain_p50_ns=null
	[[ $(json_type @0 fallback_p50_ns) == number ]]
	expect_row total bytes="$s"
}

@test "pipe as '-' and a FIFO path: mode stream, trace says stream" {
	local s=$((2 * C + 3))
	make_file_bytes "$D/a" "$s"
	mkfifo "$D/fifo"
	cat "$D/a" >"$D/fifo" 3>&- &
	nbcat_json -b 64K --trace "$D/trace" - "$D/fifo" < <(cat "$D/a")
	wait
	expect_status 0
	expect_output "$D/a" "$D/a"
	expect_row @0 mode=stream bytes="$s"
	expect_row "$D/fifo" mode=stream bytes="$s" size=0
	# only stream lines; per input, each offset is the sum of the lengths
	# before it, and the lengths add up to the input's size
	expect_trace_wellformed "$D/trace" - "$D/fifo" "$(report_values @0 file)"
	[[ $(awk -F'\t' '$3 != "stream"' "$D/trace") == "" ]]
	run -0 awk -F'\t' '
		$1 != n[$5] { print "offset " $1 " after " n[$5] " bytes of " $5 }
		{ n[$5] += $2 }
		END { for (p in n) print p, n[p] }' "$D/trace"
	assert_equal "${#lines[@]}" 2
	assert_line "$D/fifo $s"
	assert_line --regexp " $s\$"
}
