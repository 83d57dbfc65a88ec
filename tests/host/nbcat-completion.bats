#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# completions/nbcat: its option and column lists agree with `nbcat
# --help` (so they cannot drift from the code), and what it offers for
# option arguments, lists of columns and operands.

load "${BATS_TEST_DIRNAME}/../helpers/completion.bash"

setup() {
	[[ -x $NBCAT ]] || fail "nbcat not built: $NBCAT"
	completion_setup nbcat
}

# offered_options: the options completed for "nbcat -"
offered_options() {
	complete_line nbcat -
}

@test "completion: the options offered are those of nbcat --help" {
	run diff <(help_options "$NBCAT") <(offered_options)
	assert_success
	# and the comparison sees options at all
	run help_options "$NBCAT"
	assert_line --index 0 --regexp '^-'
	assert_line -- --cached-only
	assert_line -- --prefetch
}

@test "completion: a completion that misses an option fails the comparison" {
	# The check above, against a copy without --prefetch.
	sed 's/ --prefetch//' "$NBIO_SRCDIR/completions/nbcat" \
		>"$BATS_TEST_TMPDIR/nbcat"
	# shellcheck disable=SC1091
	source "$BATS_TEST_TMPDIR/nbcat"
	run diff <(help_options "$NBCAT") <(offered_options)
	assert_failure
	assert_output --partial '< --prefetch'
}

@test "completion: --output offers the columns of nbcat --help" {
	run diff <(help_columns "$NBCAT") \
		<(complete_line nbcat -o '' | sed 's/,$//')
	assert_success
	run help_columns "$NBCAT"
	assert_line FILE
	assert_line RESIDENCY
}

@test "completion: --output completes the last item of a list" {
	run complete_line nbcat --output=FILE,MO
	assert_success
	assert_output 'FILE,MODE,'
	# an item already in the list is not offered again
	run complete_line nbcat -o HIT_RATIO,HIT_
	assert_output $'HIT_RATIO,HIT_BYTES,\nHIT_RATIO,HIT_CHUNKS,'
	# + (add to the default columns) is kept; names are case insensitive
	run complete_line nbcat -o +resid
	assert_output '+RESIDENCY,'
}

@test "completion: --strategy offers the strategies" {
	run complete_line nbcat --strategy ''
	assert_output $'blocking\nnowait\npool\nuring'
	run complete_line nbcat -s p
	assert_output pool
	# grouped short options: the last one takes the next word
	run complete_line nbcat -qs p
	assert_output pool
	run complete_line nbcat -qo HIT_R
	assert_output 'HIT_RATIO,'
}

@test "completion: in a group, an option that took the rest as its argument leaves an operand" {
	cd "$BATS_TEST_TMPDIR"
	touch pool.txt
	# -so: -s with the argument "o" (not -s and -o), so the next word
	# is a file, not a column list
	run complete_line nbcat -so poo
	assert_output pool.txt
}

@test "completion: --cached-only=<how> and -c<how> offer stop and skip" {
	run complete_line nbcat --cached-only=
	assert_output $'skip\nstop'
	run complete_line nbcat --cached-only=st
	assert_output stop
	run complete_line nbcat -csk
	assert_output -cskip
}

@test "completion: operands and side files are files, sizes are not" {
	cd "$BATS_TEST_TMPDIR"
	touch data.bin data.txt other
	run complete_line nbcat data
	assert_output $'data.bin\ndata.txt'
	# --cached-only's argument must be attached: a separate word is a file
	run complete_line nbcat --cached-only ot
	assert_output other
	run complete_line nbcat --missing data.t
	assert_output data.txt
	run complete_line nbcat --trace ot
	assert_output other
	run complete_line nbcat -b ''
	assert_output ''
	run complete_line nbcat --jobs ''
	assert_output ''
}
