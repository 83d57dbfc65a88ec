#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl on the host: the command line itself: --help, --version, every
# command's --help, and the man page agreeing with --help.
# Run where no loop device of this host is reachable (isolated(), see
# ../helpers/loopctl-host.bash).

load "${BATS_TEST_DIRNAME}/../helpers/loopctl-host.bash"

@test "no command: usage error" {
	run -1 "$LOOPCTL"
	assert_output --partial "loopctl: no command given"
	assert_output --partial "Try 'loopctl --help' for more information."
}

@test "--help and -h list every command, exit 0, on stdout" {
	local opt cmd
	for opt in --help -h; do
		run --separate-stderr -0 "$LOOPCTL" "$opt"
		assert_line --index 0 "Usage:"
		for cmd in attach why status set detach cache; do
			assert_line --regexp "^ $cmd "
		done
		assert_output --partial "alias: list"
		[[ -z $stderr ]] || fail "stderr: $stderr"
	done
}

@test "--version and -V print the package version" {
	local want
	want=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' \
		"$NBIO_BUILDDIR/config.h")
	[[ -n $want ]] || fail "no PACKAGE_VERSION in config.h"
	run -0 "$LOOPCTL" --version
	assert_output "loopctl from nbio-utils $want"
	run -0 "$LOOPCTL" -V
	assert_output "loopctl from nbio-utils $want"
}

@test "unknown command and unknown global option: exit 1" {
	run -1 "$LOOPCTL" frobnicate
	assert_output --partial "loopctl: unknown command 'frobnicate'"
	assert_output --partial "Try 'loopctl --help'"
	run -1 "$LOOPCTL" --frobnicate
	assert_output --partial "unrecognized option '--frobnicate'"
	# commands are not abbreviated
	run -1 "$LOOPCTL" att "$F"
	assert_output --partial "unknown command 'att'"
}

@test "every command has --help (exit 0) and rejects unknown options (exit 1)" {
	local cmd
	for cmd in "${COMMANDS[@]}"; do
		run -0 "$LOOPCTL" "$cmd" --help
		assert_line --index 0 "Usage:"
		assert_output --partial " loopctl $cmd "
		run -0 "$LOOPCTL" "$cmd" -h
		assert_line --index 0 "Usage:"
		run -1 "$LOOPCTL" "$cmd" --no-such-option
		assert_output --partial "loopctl $cmd: unrecognized option '--no-such-option'"
		assert_output --partial "for more information."
	done
}

# The man page must carry every option description of every --help,
# word for word (whitespace aside), and every column description.
@test "man page matches --help word for word" {
	command -v mandoc >/dev/null || skip "no mandoc"
	local man help cmd desc opt missing=()
	man=$(mandoc -T ascii -O width=400 "$MAN" | col -bx | tr -s ' \n' '  ')
	for cmd in "" attach why status set detach cache; do
		# shellcheck disable=SC2086 # no command: the global help
		help=$("$LOOPCTL" $cmd --help)
		# option lines and their continuations, joined
		while IFS= read -r desc; do
			[[ -n $desc ]] || continue
			[[ $man == *"$desc"* ]] || missing+=("${cmd:-global}: $desc")
		done < <(awk '
			/^ (-[A-Za-z], )?--/ || /^     --/ {
				if (d != "") print d
				sub(/^ *(-[A-Za-z], )?--[^ ]*( <[^>]*>)? */, "")
				d = $0; next
			}
			/^                             / && d != "" {
				sub(/^ */, ""); d = d " " $0; next
			}
			{ if (d != "") print d; d = "" }
			END { if (d != "") print d }' <<<"$help" | tr -s ' ')
		# long option names
		while read -r opt; do
			[[ $man == *"$opt"* ]] || missing+=("${cmd:-global}: $opt")
		done < <(grep -o -- '--[a-z-]*' <<<"$help" | sort -u)
	done
	# column names and descriptions (status and cache)
	for cmd in status cache; do
		while read -r name desc; do
			[[ $man == *"$name $desc"* ]] ||
				missing+=("$cmd column: $name $desc")
		done < <("$LOOPCTL" "$cmd" --help |
			sed -n '/^Available output columns:/,$p' | tail -n +2)
	done
	if ((${#missing[@]})); then
		printf 'not in the man page: %s\n' "${missing[@]}"
		return 1
	fi
}

@test "man page is lint-clean (mandoc, groff)" {
	command -v mandoc >/dev/null || skip "no mandoc"
	run -0 mandoc -T lint -W warning "$MAN"
	assert_output ""
	command -v groff >/dev/null || skip "no groff"
	run -0 groff -ww -z -man "$MAN"
	assert_output ""
}

@test "man page lists every exit code loopctl.h defines" {
	local code n=0
	while read -r code; do
		grep -A1 '^\.TP$' "$MAN" | grep -qx "\.B $code" ||
			fail "exit code $code is not in EXIT STATUS"
		n=$((n + 1))
	done < <(sed -n 's/^\tLOOPCTL_EXIT_[A-Z_]*\t*= \([0-9]\+\),.*/\1/p' \
		"$NBIO_SRCDIR/tools/loopctl/loopctl.h")
	((n >= 6)) || fail "only $n exit codes found in loopctl.h"
}
