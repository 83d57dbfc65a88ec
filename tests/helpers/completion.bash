# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the completion tests (tests/host/*-completion.bats): load
# bash-completion and one of completions/*, call its function the way
# bash does, and read a tool's --help the way the completion's lists
# must match it.
#
# Load it from a test file with:
#   load "${BATS_TEST_DIRNAME}/../helpers/completion.bash"

# shellcheck source=tests/helpers/rc.bash
source "${BASH_SOURCE[0]%/*}/rc.bash"

BASH_COMPLETION=${BASH_COMPLETION:-/usr/share/bash-completion/bash_completion}

# completion_setup FILE: source bash-completion and completions/FILE. A
# missing bash-completion fails the test: scripts/lib.sh installs it.
completion_setup() {
	[[ -r $BASH_COMPLETION ]] ||
		fail "bash-completion is missing (scripts/lib.sh installs it)"
	# shellcheck disable=SC1090
	source "$BASH_COMPLETION" || fail "cannot source $BASH_COMPLETION"
	# shellcheck disable=SC1090
	source "$NBIO_SRCDIR/completions/$1" ||
		fail "cannot source completions/$1"
	complete -p "$1" >/dev/null || fail "completions/$1 registers nothing"
	# compopt works only while bash runs a completion function: here it
	# would fail (and stop a test under set -e); what it sets (nospace,
	# filenames) is a matter of the display, not of the words offered.
	# shellcheck disable=SC2317 # called by the completion functions
	compopt() { :; }
}

# complete_line WORD...: the command line WORD... with the cursor at its
# end (the last WORD is the one completed; "" for a new word). Sets
# COMP_LINE, COMP_POINT, COMP_WORDS (split as bash splits them: at
# blanks, and at the word-break characters = and :, which become words
# of their own) and COMP_CWORD, calls the function `complete -p` names
# for the command with the arguments bash gives it, and prints COMPREPLY
# sorted, one a line.
complete_line() {
	local w rest words=() n=$#
	for w; do
		n=$((n - 1))
		rest=$w
		while [[ $rest =~ ^([^=:]*)([=:])(.*)$ ]]; do
			[[ -z ${BASH_REMATCH[1]} ]] ||
				words+=("${BASH_REMATCH[1]}")
			words+=("${BASH_REMATCH[2]}")
			rest=${BASH_REMATCH[3]}
		done
		if [[ -n $rest ]] || { ((n == 0)) && [[ -z $w ]]; }; then
			words+=("$rest")
		fi
	done
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMP_WORDS=("${words[@]}")
	COMP_CWORD=$((${#words[@]} - 1))
	COMPREPLY=()
	local spec fn
	spec=$(complete -p "$1") || return 1
	fn=${spec#*-F }
	fn=${fn%% *}
	"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" \
		"${COMP_WORDS[COMP_CWORD - 1]}"
	((${#COMPREPLY[@]} == 0)) || printf '%s\n' "${COMPREPLY[@]}" | sort
}

# help_options CMD...: the options `CMD... --help` lists (the words
# starting with - before the argument placeholder, of every line of its
# "Options:" section), sorted, one a line.
help_options() {
	"$@" --help | awk '
		/^[A-Za-z].*:$/ { in_opts = ($0 == "Options:"); next }
		in_opts && /^ +-/ {
			for (i = 1; i <= NF; i++) {
				w = $i
				sub(/,$/, "", w)
				sub(/\[=.*/, "", w)
				if (w !~ /^-/)
					break
				print w
			}
		}' | sort
}

# help_columns CMD...: the column names `CMD... --help` lists (the first
# word of each line of its "Available ... columns" section), sorted.
help_columns() {
	"$@" --help | awk '
		/^[A-Za-z].*:$/ { in_cols = /^Available .*columns/; next }
		in_cols && /^ +[A-Z]/ { print $1 }' | sort
}

# words_of LIST: the words of LIST, sorted, one a line (trailing commas
# of list completions removed).
words_of() {
	local w
	for w in $1; do
		echo "${w%,}"
	done | sort
}
