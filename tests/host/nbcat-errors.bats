#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Run-time errors, the way cat users expect them: "nbcat: PATH: reason"
# and go on with the next file (exit 1 at the end); write errors on stdout
# reported once (exit 1); a reader that goes away stops nbcat at once and
# silently (SIGPIPE, or EPIPE when SIGPIPE is ignored).

load "${BATS_TEST_DIRNAME}/../helpers/nbcat.bash"

setup() {
	common_setup
	PUB=
}

teardown() {
	[[ -n $PUB && $PUB == /tmp/nbcat-errors.* ]] && rm -rf "$PUB"
	common_teardown
}

C=$((64 * KiB))

@test "missing file: message, the other files still written, exit 1" {
	make_file_bytes "$D/a" $((C + 3))
	make_file_bytes "$D/b" 7
	nbcat_run -q -b 64K "$D/a" "$D/nope" "$D/b"
	expect_status 1
	expect_output "$D/a" "$D/b"
	assert_equal "$(<"$D/err")" "nbcat: $D/nope: No such file or directory"
}

@test "empty file name: named '' like cat does, exit 1" {
	make_file_bytes "$D/a" 100
	nbcat_run -q "" "$D/a"
	expect_status 1
	expect_output "$D/a"
	assert_equal "$(<"$D/err")" "nbcat: '': No such file or directory"
	nbcat_run -q --trace "" "$D/a"
	expect_status 1
	assert_equal "$(<"$D/err")" "nbcat: --trace: '': No such file or directory"
}

@test "directory: refused like cat, the other files still written, exit 1" {
	mkdir "$D/dir"
	make_file_bytes "$D/a" 100
	nbcat_run -q "$D/dir" "$D/a"
	expect_status 1
	expect_output "$D/a"
	assert_equal "$(<"$D/err")" "nbcat: $D/dir: Is a directory"
}

@test "a file that cannot be opened has a row with mode error" {
	make_file_bytes "$D/a" 100
	nbcat_json "$D/nope" "$D/a"
	expect_status 1
	expect_output "$D/a"
	expect_row "$D/nope" type=file mode=error bytes=0
	expect_row "$D/a" mode=nowait bytes=100
	expect_row total bytes=100
}

# run_without_dac ARG...: nbcat ARG... unable to bypass file permissions
# (as root: without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH).
run_without_dac() {
	nbcat_status=0
	if [[ $EUID -eq 0 ]]; then
		setpriv --bounding-set=-dac_override,-dac_read_search \
			"$NBCAT" "$@" >"$D/out" 2>"$D/err" || nbcat_status=$?
	else
		"$NBCAT" "$@" >"$D/out" 2>"$D/err" || nbcat_status=$?
	fi
}

@test "permission denied: message, the other files still written, exit 1" {
	if [[ $EUID -eq 0 ]]; then
		require_cmd setpriv
		setpriv --bounding-set=-dac_override true 2>/dev/null ||
			skip "setpriv cannot drop CAP_DAC_OVERRIDE here"
	fi
	make_file_bytes "$D/secret" 100
	chmod 000 "$D/secret"
	make_file_bytes "$D/a" 100
	run_without_dac -q "$D/secret" "$D/a"
	expect_status 1
	expect_output "$D/a"
	assert_equal "$(<"$D/err")" "nbcat: $D/secret: Permission denied"
}

@test "read error (EIO from /proc/self/mem): message, go on, exit 1" {
	make_file_bytes "$D/a" 100
	nbcat_run -q /proc/self/mem "$D/a"
	expect_status 1
	expect_output "$D/a"
	assert_equal "$(<"$D/err")" "nbcat: /proc/self/mem: Input/output error"
}

@test "read error mid-file: everything before it is written, like cat, exit 1" {
	local so=$NBIO_BUILDDIR/tests/helpers/faultread.so bad=$((10 * C)) s
	[[ -f $so ]] || fail "fault injection helper not built: $so"
	make_file_bytes "$D/f" $((16 * C))
	head -c "$bad" "$D/f" >"$D/before"
	# a cold file (every probe misses) with slow blocking reads, so
	# that chunks before the bad byte are still in flight when the
	# probe that reaches it fails
	for s in nowait pool blocking; do
		NBIO_FAULT_FILE=$D/f NBIO_FAULT_EIO_AT=$bad \
			NBIO_FAULT_DELAY_MS=20 LD_PRELOAD=$so \
			nbcat_run -q -s "$s" -b 64K -w 16 "$D/f"
		expect_status 1
		cmp "$D/out" "$D/before" || fail "strategy $s: not the data before the error"
		expect_lines "$D/err" "nbcat: $D/f: Input/output error"
	done
}

# full_disk ARG...: nbcat -q ARG... >/dev/full must say it once, exit 1.
full_disk() {
	nbcat_status=0
	timeout 120 "$NBCAT" -q "$@" >/dev/full 2>"$D/err" || nbcat_status=$?
	expect_status 1 &&
		expect_lines "$D/err" "nbcat: write error: No space left on device"
}

@test "write error (/dev/full): one message, exit 1, on every read path" {
	make_file_bytes "$D/a" $((3 * C))
	make_file_bytes "$D/b" $((3 * C))
	full_disk -b 64K "$D/a" "$D/b" || fail "warm files (hits)"
	"$CACHECTL" evict "$D/a"
	full_disk -b 64K "$D/a" "$D/b" || fail "cold file (workers)"
	full_disk -s blocking "$D/a" "$D/b" || fail "strategy blocking"
	full_disk -s pool "$D/a" "$D/b" || fail "strategy pool"
	full_disk - < <(cat "$D/a") || fail "standard input (stream)"
}

@test "reader goes away (| head -c1): SIGPIPE, nothing on stderr" {
	make_file_bytes "$D/big" $((64 * MiB))
	local cold
	for cold in no yes; do
		[[ $cold == yes ]] && "$CACHECTL" evict "$D/big"
		run -0 bash -c 'env --default-signal=PIPE timeout -s KILL 120 \
			"$1" -q "$2" 2>"$3" | head -c1 | wc -c
			echo "${PIPESTATUS[0]}"' _ "$NBCAT" "$D/big" "$D/err"
		# timeout passes the child's signal status on as 128 + 13
		assert_output $'1\n141'
		expect_lines "$D/err"
	done
}

@test "endless input (/dev/zero | head): stops at EPIPE instead of reading on" {
	run -0 bash -c 'env --default-signal=PIPE timeout -s KILL 120 \
		"$1" -q /dev/zero 2>"$2" | head -c 1M | wc -c
		echo "${PIPESTATUS[0]}"' _ "$NBCAT" "$D/err"
	assert_output $'1048576\n141'
	expect_lines "$D/err"
}

@test "SIGPIPE ignored: EPIPE stops nbcat quietly, not exit 0" {
	make_file_bytes "$D/big" $((64 * MiB))
	local src
	for src in "$D/big" /dev/zero; do
		run -0 bash -c 'env --ignore-signal=PIPE timeout -s KILL 120 \
			"$1" -q "$2" 2>"$3" | head -c1 | wc -c
			echo "${PIPESTATUS[0]}"' _ "$NBCAT" "$src" "$D/err"
		# 1 (not everything written) or 141 (nbcat restored SIGPIPE)
		[[ $output == $'1\n1' || $output == $'1\n141' ]] ||
			fail "$src: output/status: $output"
		expect_lines "$D/err"
	done
}

@test "unwritable --missing, --report, --trace files: message, exit 1" {
	make_file_bytes "$D/a" 100
	local opt
	for opt in --missing --report --trace; do
		# no -q: with -q there is no report to write
		nbcat_run "$opt" "$D/no/such/dir/file" "$D/a"
		expect_status 1
		grep -q "^nbcat: .*$D/no/such/dir/file.*No such file or directory" "$D/err" ||
			fail "$opt: $(<"$D/err")"
	done
}

# no_threads_run STRATEGY: nbcat -s STRATEGY over a cold $F as nobody,
# who may not create a thread (RLIMIT_NPROC 1).
no_threads_run() {
	"$CACHECTL" evict "$F"
	nbcat_status=0
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		prlimit --nproc=1 "$NBCAT" -s "$1" -o BYTES "$F" \
		>"$D/out" 2>"$D/err" || nbcat_status=$?
}

@test "no worker thread can be started: read in the main thread, as cat, exit 0" {
	# where no thread could be started (RLIMIT_NPROC) nbcat said "r3m:
	# Resource temporarily unavailable", exit 1, 0 bytes of a 3 MB file
	# that cat copies
	require_root	# to switch to nobody
	require_nobody
	require_cmd prlimit
	PUB=$(mktemp -d /tmp/nbcat-errors.XXXXXX)
	chmod 0755 "$PUB"
	F=$PUB/r3m
	make_file_bytes "$F" 3000000
	chmod 0644 "$F"
	local s
	for s in nowait pool; do
		no_threads_run "$s"
		expect_status 0
		expect_output "$F"
		# the warning once, naming the cause; the report after it
		grep -qx "nbcat: cannot start a worker thread: Resource temporarily unavailable; reading in the main thread" "$D/err" ||
			fail "-s $s: stderr: $(<"$D/err")"
		[[ $(grep -c 'cannot start a worker thread' "$D/err") == 1 ]] ||
			fail "-s $s: the warning more than once"
	done
}
