#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nbcat's command line: --help, --version, the man page agreeing with
# --help, unknown options, and every option value checked before any
# file is read (exit 1, "nbcat: invalid ...: 'VALUE'", nothing on stdout).

load "${BATS_TEST_DIRNAME}/../helpers/nbcat.bash"

setup() {
	common_setup
	F=$D/f
	make_file_bytes "$F" $((20 * KiB))
}

# The options of the interface contract, as --help prints them.
OPTIONS=(
	'-s, --strategy <name>'
	'-j, --jobs <num>'
	'-b, --chunk-size <size>'
	'-w, --window <num>'
	'-c, --cached-only[=<how>]'
	'-m, --missing <file>'
	'--prefetch'
	'-q, --quiet'
	'-J, --json'
	'-r, --report <file>'
	'-o, --output <list>'
	'--raw'
	'--bytes'
	'--noheadings'
	'--trace <file>'
	'-p, --progress'
	'-u'
	'-h, --help'
	'-V, --version'
)

COLUMNS_SPEC=(
	FILE TYPE MODE SIZE BYTES CHUNKS HIT_CHUNKS PARTIAL_CHUNKS MISS_CHUNKS
	UNSUP_CHUNKS HIT_BYTES PARTIAL_BYTES MISS_BYTES UNSUP_BYTES HIT_RATIO
	CHUNK_HIT_RATIO NOWAIT_P50 NOWAIT_P99 NOWAIT_MAX EAGAIN_P50
	EAGAIN_P99 EAGAIN_MAX FALLBACK_P50 FALLBACK_P99
	FALLBACK_MAX TIME BPS MISSING
)

# help_options: "SPEC<tab>DESCRIPTION" for each option line of --help,
# continuation lines joined.
help_options() {
	"$NBCAT" --help | awk '
		/^Options:/ { on = 1; next }
		on && /^$/ { exit }
		on && /^ +-/ {
			if (spec != "") print spec "\t" desc
			line = $0
			sub(/^ +/, "", line)
			n = match(line, /  +/)
			spec = substr(line, 1, n - 1)
			desc = substr(line, n + RLENGTH)
			next
		}
		on && /^ +[^ -]/ { l = $0; sub(/^ +/, "", l); desc = desc " " l }
		END { if (spec != "") print spec "\t" desc }'
}

@test "--help: usage on stdout, exit 0, every option of the contract" {
	run --separate-stderr -0 "$NBCAT" --help
	assert_equal "$stderr" ""
	assert_line -n 0 "Usage:"
	assert_line -n 1 " nbcat [options] [<file>...]"
	for o in "${OPTIONS[@]}"; do
		assert_line --regexp "^ +$(printf '%s' "$o" | sed 's/[][.*^$]/\\&/g')  "
	done
	run -0 "$NBCAT" -h
	assert_line -n 1 " nbcat [options] [<file>...]"
}

@test "--help: lists every report column" {
	run --separate-stderr -0 "$NBCAT" --help
	local c
	for c in "${COLUMNS_SPEC[@]}"; do
		assert_line --regexp "^ +$c( |$)"
	done
}

@test "--version and -V: version on stdout, exit 0" {
	local v
	v=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$NBIO_BUILDDIR/config.h")
	[[ -n $v ]]
	run --separate-stderr -0 "$NBCAT" --version
	assert_output --partial "nbcat"
	assert_output --partial "$v"
	assert_equal "$stderr" ""
	run --separate-stderr -0 "$NBCAT" -V
	assert_output --partial "$v"
}

@test "man page: OPTIONS match --help word for word" {
	require_cmd mandoc
	local man=$NBIO_SRCDIR/man/nbcat.1 text spec desc long n=0
	[[ -f $man ]] || fail "$man is missing"
	text=$(mandoc -T ascii -O width=1000 "$man" | col -bx | tr -s ' \t\n' ' ')
	while IFS=$'\t' read -r spec desc; do
		n=$((n + 1))
		long=$(grep -o -- '--[a-z-]*' <<<"$spec") || long=${spec%% *}
		[[ $text == *"$long"* ]] || fail "man page lacks $long"
		desc=$(tr -s ' ' <<<"$desc")
		[[ $text == *"$desc"* ]] ||
			fail "man page lacks the --help text of $long: '$desc'"
	done < <(help_options)
	((n == ${#OPTIONS[@]})) || fail "--help has $n option lines, want ${#OPTIONS[@]}"
}

# GNU cat's short options that change the data (a cat user's -t once
# emptied the file after it, taken as --trace's argument): refused with
# what cat means by them, before any file is opened, so none is written.
CAT_OPTIONS=(
	"-A:-A is cat's 'show all', which nbcat does not do"
	"-e:-e is cat's 'show ends and nonprinting', which nbcat does not do"
	"-E:-E is cat's 'show ends', which nbcat does not do"
	"-n:-n is cat's 'number lines', which nbcat does not do; use --noheadings for a report without headings"
	"-t:-t is cat's 'show tabs', which nbcat does not do; use --trace FILE for the chunk trace"
	"-T:-T is cat's 'show tabs', which nbcat does not do; use --trace FILE for the chunk trace"
	"-v:-v is cat's 'show nonprinting', which nbcat does not do"
)

@test "cat's -t, -n, -A, -e, -E, -T, -v: refused, the file untouched, exit 1" {
	local o opt msg
	printf 'a\tb\n' >"$D/notes.txt"
	cp "$D/notes.txt" "$D/notes.orig"
	for o in "${CAT_OPTIONS[@]}"; do
		opt=${o%%:*} msg=${o#*:}
		run --separate-stderr -1 "$NBCAT" "$opt" "$D/notes.txt"
		assert_output ""
		assert_equal "$stderr" "nbcat: $msg
Try 'nbcat --help' for more information."
		cmp "$D/notes.txt" "$D/notes.orig" || fail "$opt: notes.txt changed"
	done
	# also inside a group, and before -q
	run --separate-stderr -1 "$NBCAT" -qt "$D/notes.txt"
	cmp "$D/notes.txt" "$D/notes.orig" || fail "-qt: notes.txt changed"
	# the long options still work
	nbcat_run --noheadings --trace "$D/trace" "$D/notes.txt"
	expect_status 0
	expect_output "$D/notes.txt"
	[[ -s $D/trace ]] || fail "--trace wrote nothing"
}

@test "cat's -u: ignored, as by cat; -s and -b with a file: the error names cat's meaning" {
	expect_valid -u
	run --separate-stderr -1 "$NBCAT" -s "$F"
	assert_output ""
	assert_equal "$stderr" "nbcat: invalid strategy: '$F': must be nowait, blocking, pool or uring; -s is --strategy, not cat's 'squeeze blank lines'"
	run --separate-stderr -1 "$NBCAT" -b "$F"
	assert_equal "$stderr" "nbcat: invalid chunk size: '$F': must be a multiple of 512 between 4K and 64M; -b is --chunk-size, not cat's 'number nonblank lines'"
	# the long forms do not mention cat
	run --separate-stderr -1 "$NBCAT" --strategy=x "$F"
	assert_equal "$stderr" "nbcat: invalid strategy: 'x': must be nowait, blocking, pool or uring"
}

@test "getopt's errors name the program, not the path it was run by" {
	cd "$NBIO_BUILDDIR"
	[[ -x ./nbcat ]] || skip "nbcat is not in the build directory"
	run --separate-stderr -1 ./nbcat --bogus "$F"
	assert_equal "$stderr" "nbcat: unrecognized option '--bogus'
Try 'nbcat --help' for more information."
	run --separate-stderr -1 ./nbcat -Z "$F"
	assert_equal "$stderr" "nbcat: invalid option -- 'Z'
Try 'nbcat --help' for more information."
	run --separate-stderr -1 ./nbcat --trace
	assert_equal "$stderr" "nbcat: option '--trace' requires an argument
Try 'nbcat --help' for more information."
}

@test "unknown options: 'Try' line, exit 1, nothing on stdout" {
	local o
	for o in --bogus -Z; do
		run --separate-stderr -1 "$NBCAT" "$o" "$F"
		assert_output ""
		[[ ${stderr##*$'\n'} == "Try 'nbcat --help' for more information." ]] ||
			fail "$o: last stderr line: ${stderr##*$'\n'}"
	done
}

# expect_invalid WHAT VALUE ARGS...: nbcat ARGS refuses VALUE.
expect_invalid() {
	local what=$1 v=$2
	shift 2
	run --separate-stderr "$NBCAT" "$@" "$F"
	[[ $status == 1 ]] || fail "$* : exit $status, want 1"
	[[ -z $output ]] || fail "$* : wrote to stdout"
	[[ $stderr == "nbcat: invalid $what"*"'$v'"* ]] ||
		fail "$* : stderr '$stderr', want \"nbcat: invalid $what...: '$v'\""
}

# expect_valid ARGS...: nbcat ARGS copies the file, exit 0.
expect_valid() {
	nbcat_run -q "$@" "$F"
	expect_status 0 || fail "$* : refused"
	cmp -s "$D/out" "$F" || fail "$* : output differs from the file"
}

@test "chunk size: malformed or out of range (4KiB..64MiB, multiple of 512)" {
	local v
	for v in 3x '' 0 1000 4095 2K 3584 4097 64M1 67109376 65M 1T -1 ' 4K' 4K_; do
		expect_invalid "chunk size" "$v" -b "$v"
		expect_invalid "chunk size" "$v" --chunk-size="$v"
	done
	# the error states the rule
	run --separate-stderr -1 "$NBCAT" --chunk-size 1 "$F"
	assert_equal "$stderr" "nbcat: invalid chunk size: '1': must be a multiple of 512 between 4K and 64M"
}

@test "jobs and window: the error states the range" {
	run --separate-stderr -1 "$NBCAT" -j 0 "$F"
	assert_equal "$stderr" "nbcat: invalid number of jobs: '0': must be between 1 and 256"
	run --separate-stderr -1 "$NBCAT" -w 1025 "$F"
	assert_equal "$stderr" "nbcat: invalid window size: '1025': must be between 1 and 1024"
}

@test "window x chunk size above 256M: refused with the rule; a default window shrinks" {
	# -s pool -w 1024 -b 64M reached 3.1 GiB of RSS before the cap
	run --separate-stderr -1 "$NBCAT" -s pool -w 1024 -b 64M "$F"
	assert_output ""
	assert_equal "$stderr" "nbcat: --window 1024 with --chunk-size 64M: window x chunk size must be at most 256M (here at most 4 chunks)
Try 'nbcat --help' for more information."
	run --separate-stderr -1 "$NBCAT" -w 5 --chunk-size 64M "$F"
	[[ $stderr == *"must be at most 256M"* ]] || fail "-w 5 -b 64M: $stderr"
	# at the cap: accepted; no -w: the window shrinks to 4, no error
	expect_valid -w 4 -b 64M
	expect_valid -b 64M
	expect_valid -w 1024 -b 256K
	# bounded in fact: -s pool -b 32M on a 512M file within 400M of data
	# segment (the window's buffers are private writable mappings); the
	# default window of 16 would take 512M of buffers
	truncate -s 512M "$D/sparse"
	run -0 bash -c 'prlimit --data=$((400 * 1024 * 1024)) "$1" -q -s pool \
		-b 32M "$2" >/dev/null' _ "$NBCAT" "$D/sparse"
}

@test "chunk size: the limits and suffixes are accepted" {
	local v
	for v in 4K 4096 4608 4KiB 8KB 128K 256KiB 1M 64M 67108864; do
		# 8KB is 8000 bytes: not a multiple of 512
		if [[ $v == 8KB ]]; then
			expect_invalid "chunk size" "$v" -b "$v"
			continue
		fi
		expect_valid -b "$v"
	done
}

@test "jobs: 1..256" {
	local v
	for v in 0 257 x '' -1 1K; do
		expect_invalid "" "$v" -j "$v"
	done
	for v in 1 256; do
		expect_valid -j "$v"
	done
}

@test "window: 1..1024" {
	local v
	for v in 0 1025 x '' -1; do
		expect_invalid "" "$v" -w "$v"
	done
	for v in 1 1024; do
		expect_valid -w "$v"
	done
}

@test "strategy: nowait, blocking, pool; anything else refused" {
	local v
	for v in nowait blocking pool; do
		expect_valid -s "$v"
		expect_valid --strategy="$v"
	done
	for v in bogus '' Pool; do
		run --separate-stderr -1 "$NBCAT" -s "$v" "$F"
		assert_output ""
		[[ $stderr == "nbcat: "*"'$v'"* ]] || fail "-s '$v': stderr: $stderr"
	done
}

@test "--cached-only=<how>: stop or skip; anything else refused" {
	run --separate-stderr -1 "$NBCAT" --cached-only=bogus "$F"
	assert_output ""
	[[ $stderr == "nbcat: "*"'bogus'"* ]] || fail "stderr: $stderr"
}

@test "--cached-only and --prefetch conflict, in either order" {
	local args
	for args in "--cached-only --prefetch" "--prefetch --cached-only" \
		"--prefetch --cached-only=skip" "-cstop --prefetch"; do
		# shellcheck disable=SC2086 # word splitting wanted
		run --separate-stderr -1 "$NBCAT" $args "$F"
		assert_output ""
		assert_equal "$stderr" "nbcat: --prefetch and --cached-only are mutually exclusive
Try 'nbcat --help' for more information."
	done
}

@test "--cached-only and the blocking or pool strategy: the same shape of error" {
	local s
	for s in blocking pool; do
		run --separate-stderr -1 "$NBCAT" --cached-only -s "$s" "$F"
		assert_output ""
		assert_equal "$stderr" "nbcat: --cached-only and --strategy=$s are mutually exclusive
Try 'nbcat --help' for more information."
	done
}

@test "--json and --raw conflict, in either order, like loopctl's" {
	local args
	for args in "--json --raw" "--raw -J"; do
		# shellcheck disable=SC2086 # word splitting wanted
		run --separate-stderr -1 "$NBCAT" $args "$F"
		assert_output ""
		assert_equal "$stderr" "nbcat: --json and --raw are mutually exclusive
Try 'nbcat --help' for more information."
	done
}

@test "--missing -: refused, data already goes to stdout" {
	run --separate-stderr -1 "$NBCAT" --missing - "$F"
	assert_output ""
	[[ $stderr == "nbcat: "* ]] || fail "stderr: $stderr"
}

@test "--output: an unknown column is refused" {
	run --separate-stderr -1 "$NBCAT" -o FILE,BOGUS "$F"
	assert_output ""
	[[ $stderr == "nbcat: "*BOGUS* ]] || fail "stderr: $stderr"
}

@test "--help, --version and the report: lost output is exit 1, not 0" {
	local opt st
	for opt in --help --version; do
		st=0
		"$NBCAT" "$opt" >/dev/full 2>"$D/err" || st=$?
		[[ $st == 1 ]] || fail "$opt >/dev/full: exit $st"
		expect_lines "$D/err" "nbcat: write error: No space left on device"
	done
	# the report on stderr, lost: the data is there, the result is not
	make_file_bytes "$D/a" 100
	st=0
	"$NBCAT" -J "$D/a" >"$D/out" 2>/dev/full || st=$?
	[[ $st == 1 ]] || fail "-J 2>/dev/full: exit $st"
	expect_output "$D/a"
}
