#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nbcat writes exactly what cat writes: sizes around the chunk size, cold,
# warm and mixed caches (misses completed out of order by the workers must
# come out in file order), several files, standard input.

load "${BATS_TEST_DIRNAME}/../helpers/nbcat.bash"

setup() {
	common_setup
}

C=$((64 * KiB))	# the chunk size these tests pass with -b

# same_as_cat OPTIONS FILE...: nbcat -q OPTIONS FILE... writes what cat
# FILE... writes (OPTIONS: one word-split string).
same_as_cat() {
	local opts=$1
	shift
	# shellcheck disable=SC2086 # word splitting wanted
	nbcat_run -q $opts "$@"
	expect_status 0 || return 1
	cat "$@" >"$D/expected"
	cmp "$D/out" "$D/expected" >&2
}

@test "empty file: nothing written, exit 0" {
	: >"$D/empty"
	nbcat_run -q "$D/empty"
	expect_status 0
	[[ ! -s $D/out ]]
	[[ ! -s $D/err ]]
}

@test "sizes 1, chunk-1, chunk, chunk+1, 3 chunks+1 (-b 64K): cold and warm" {
	local s f
	for s in 1 $((C - 1)) $C $((C + 1)) $((3 * C + 1)); do
		f=$D/f$s
		make_file_bytes "$f" "$s"
		"$CACHECTL" evict "$f"
		same_as_cat "-b 64K" "$f" || fail "size $s, cold"
		same_as_cat "-b 64K" "$f" || fail "size $s, warm"
	done
}

@test "sizes around the default chunk size (256 KiB)" {
	local s f
	for s in $((256 * KiB - 1)) $((256 * KiB)) $((256 * KiB + 1)); do
		f=$D/f$s
		make_file_bytes "$f" "$s"
		"$CACHECTL" evict "$f"
		same_as_cat "" "$f" || fail "size $s, cold"
		same_as_cat "" "$f" || fail "size $s, warm"
	done
}

@test "64 MiB file, default options: cold, then warm" {
	make_file_bytes "$D/big" $((64 * MiB))
	"$CACHECTL" evict "$D/big"
	same_as_cat "" "$D/big"
	same_as_cat "" "$D/big"
}

@test "mixed cache (every other 64 KiB cached), small chunks, window 1 and 1024" {
	local f=$D/f args=() off
	make_file_bytes "$f" $((4 * MiB + 123))
	for ((off = 0; off < 4 * MiB; off += 2 * C)); do
		args+=("$off" "$C")
	done
	for opts in "-b 4K -w 1 -j 1" "-b 16K -w 1024 -j 256" "-b 4K -w 3 -j 2" \
		"-b 1M -w 2 -j 4"; do
		cache_layout "$f" "${args[@]}"
		same_as_cat "$opts" "$f" || fail "options $opts"
	done
}

@test "several files in order, an empty one, the same file twice" {
	make_file_bytes "$D/a" $((C + 17))
	: >"$D/e"
	make_file_bytes "$D/b" $((5 * C))
	make_file_bytes "$D/c" 1
	"$CACHECTL" evict "$D/b"
	same_as_cat "-b 64K" "$D/a" "$D/e" "$D/b" "$D/a" "$D/c" "$D/e"
}

@test "standard input from a pipe, with no file argument" {
	make_file_bytes "$D/a" $((3 * C + 5))
	nbcat_run -q -b 64K < <(cat "$D/a")
	expect_status 0
	cmp "$D/out" "$D/a"
}

@test "'-' between files reads standard input, a second '-' gets its EOF" {
	make_file_bytes "$D/a" 1000
	make_file_bytes "$D/b" $((2 * C))
	make_file_bytes "$D/in" $((C + 3))
	nbcat_run -q -b 64K "$D/a" - "$D/b" - < <(cat "$D/in")
	expect_status 0
	cat "$D/a" "$D/in" "$D/b" >"$D/expected"
	cmp "$D/out" "$D/expected"
}

@test "standard input redirected from a file: read from its offset, like cat" {
	make_file_bytes "$D/a" $((3 * C + 100))
	{
		dd bs=1000 count=1 of=/dev/null status=none
		"$NBCAT" -q -b 64K >"$D/out" 2>"$D/err"
	} <"$D/a"
	tail -c +1001 "$D/a" >"$D/expected"
	cmp "$D/out" "$D/expected"
	[[ ! -s $D/err ]]
}

@test "standard input redirected from a file, '-' twice: second one at EOF" {
	make_file_bytes "$D/a" $((C + 1))
	nbcat_run -q -b 64K - - <"$D/a"
	expect_status 0
	cmp "$D/out" "$D/a"
}

@test "-b 2M into a pipe, above pipe-max-size: the pipe grows to the allowed maximum" {
	require_cmd python3 setpriv
	local max
	max=$(</proc/sys/fs/pipe-max-size)
	((max < 2 * MiB)) || skip "pipe-max-size $max allows a 2 MiB pipe"
	make_file_bytes "$D/a" 100
	# without CAP_SYS_RESOURCE (even as root), F_SETPIPE_SZ above the
	# maximum fails; the reader tells how large its pipe ended up
	# shellcheck disable=SC2016 # expanded by the inner shell
	run -0 bash -c 'setpriv --bounding-set=-sys_resource "$1" -q -b 2M "$2" |
		python3 -c "import fcntl, sys
sys.stdin.buffer.read()
print(fcntl.fcntl(0, 1032))"  # F_GETPIPE_SZ' _ "$NBCAT" "$D/a"
	assert_output "$max"
}
