#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Side files (--missing, --trace, --report) never destroy data: one that
# is an input, standard output or another side file is refused before it
# is truncated; and closed standard descriptors are never taken by a side
# file, so neither the data nor the warnings can land in one.

# shellcheck disable=SC2034,SC2154 # variables shared with ../helpers/nbcat.bash
load "${BATS_TEST_DIRNAME}/../helpers/nbcat.bash"

setup() {
	common_setup
}

# expect_untouched FILE: FILE still holds what $D/FILE.orig holds.
expect_untouched() {
	cmp "$1" "$1.orig" >&2 || {
		echo "$1 was modified" >&2
		return 1
	}
}

@test "a side file that is an input: refused, the input untouched, exit 1" {
	make_file_bytes "$D/victim" 1000
	cp "$D/victim" "$D/victim.orig"
	local opt
	for opt in --missing --trace --report; do
		nbcat_run "$opt" "$D/victim" "$D/victim"
		expect_status 1
		expect_untouched "$D/victim"
		expect_lines "$D/err" "nbcat: $opt: $D/victim: is an input file; refusing to overwrite it"
		expect_lines "$D/out"
	done
	# through another name (a hard link), and as standard input
	ln "$D/victim" "$D/link"
	nbcat_run -q -m "$D/link" "$D/victim"
	expect_status 1
	expect_untouched "$D/victim"
	# shellcheck disable=SC2094 # reading and naming it is the point
	nbcat_run -q --trace "$D/victim" <"$D/victim"
	expect_status 1
	expect_untouched "$D/victim"
	# shellcheck disable=SC2094 # same
	nbcat_run -q --trace "$D/victim" - <"$D/victim"
	expect_status 1
	expect_untouched "$D/victim"
}

@test "a side file that is standard output: refused, nothing truncated, exit 1" {
	make_file_bytes "$D/big" $((256 * KiB))
	printf 'keep me\n' >"$D/o.txt"
	cp "$D/o.txt" "$D/o.txt.orig"
	nbcat_status=0
	# shellcheck disable=SC2094 # writing to it twice is the point
	"$NBCAT" -r "$D/o.txt" "$D/big" >>"$D/o.txt" 2>"$D/err" || nbcat_status=$?
	expect_status 1
	expect_untouched "$D/o.txt"
	expect_lines "$D/err" "nbcat: --report: $D/o.txt: is standard output; refusing to overwrite it"
}

@test "a side file that is standard error: refused, the warnings kept, exit 1" {
	# nbcat -r log.txt nonexist small 2>>log.txt: the report overwrote
	# the "No such file" warning
	make_file_bytes "$D/small" 100
	printf 'earlier line\n' >"$D/log.txt"
	local opt
	for opt in --report --missing --trace; do
		cp "$D/log.txt" "$D/log.txt.orig"
		nbcat_status=0
		# shellcheck disable=SC2094 # naming it twice is the point
		"$NBCAT" "$opt" "$D/log.txt" "$D/nonexist" "$D/small" \
			>"$D/out" 2>>"$D/log.txt" || nbcat_status=$?
		expect_status 1
		expect_lines "$D/out"
		expect_lines "$D/log.txt" "earlier line" \
			"nbcat: $opt: $D/log.txt: is standard error; refusing to overwrite it"
		printf 'earlier line\n' >"$D/log.txt"
	done
	# stderr and stdout the same file: still refused, as standard output
	nbcat_status=0
	# shellcheck disable=SC2094 # same
	"$NBCAT" -r "$D/o" "$D/small" >"$D/o" 2>&1 || nbcat_status=$?
	expect_status 1
	expect_lines "$D/o" "nbcat: --report: $D/o: is standard output; refusing to overwrite it"
}

@test "two side files that are the same file: refused, exit 1" {
	make_file_bytes "$D/a" 100
	printf 'keep me\n' >"$D/side"
	nbcat_run -m "$D/side" --trace "$D/side" "$D/a"
	expect_status 1
	expect_lines "$D/err" "nbcat: --trace: $D/side: is the --missing file; refusing to overwrite it"
}

@test "side files that are not inputs: still created and truncated" {
	make_file_bytes "$D/a" 100
	printf 'old line\n' >"$D/trace"
	nbcat_run -q --trace "$D/trace" "$D/a"
	expect_status 0
	expect_output "$D/a"
	expect_trace_wellformed "$D/trace" "$D/a"
	# /dev/null as a side file and as stdout: not a regular file, fine
	nbcat_status=0
	"$NBCAT" -q --trace /dev/null -m /dev/null "$D/a" >/dev/null 2>"$D/err" ||
		nbcat_status=$?
	expect_status 0
	expect_lines "$D/err"
}

@test "closed stdout: the data does not land in a side file, exit 1" {
	make_file_bytes "$D/small" 100
	nbcat_status=0
	"$NBCAT" -q -m "$D/m.tsv" "$D/small" >&- 2>"$D/err" || nbcat_status=$?
	expect_status 1
	expect_lines "$D/m.tsv"
	expect_lines "$D/err" "nbcat: write error: Bad file descriptor"
}

@test "closed stderr: the warnings do not land in a side file" {
	make_file_bytes "$D/small" 100
	nbcat_status=0
	"$NBCAT" -q -m "$D/m.tsv" "$D/nope" "$D/small" >"$D/out" 2>&- ||
		nbcat_status=$?
	expect_status 1
	expect_lines "$D/m.tsv"
	expect_output "$D/small"
}
