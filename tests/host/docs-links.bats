#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# docs-links.bats - the front page and the documents it leads to keep
# their links: every relative link in README.md, HACKING.md,
# kernel/README.md, docs/*.md and the studies in docs/measurements/*.md
# points to a file or directory that exists. distcheck runs this from
# the tarball, so a link to a file that is not distributed fails too.
# Web links and links within a page (#...) are not checked; links in
# code (fenced blocks, `spans`) are not links.

load "${BATS_TEST_DIRNAME}/../helpers/rc.bash"

# links FILE: the relative link targets of the markdown FILE, one a
# line, without their #fragment: [text](target) and ![alt](target),
# outside code.
links() {
	awk '
		/^[ \t]*```/ { fenced = !fenced; next }
		fenced { next }
		{
			line = $0
			gsub(/`[^`]*`/, "", line)
			while (match(line, /\]\([^) \t]+/)) {
				t = substr(line, RSTART + 2, RLENGTH - 2)
				line = substr(line, RSTART + RLENGTH)
				if (t ~ /^[a-z]+:/ || t ~ /^#/)
					continue
				sub(/#.*/, "", t)
				print t
			}
		}' "$1"
}

# broken_links FILE...: "FILE: TARGET" for each link that points to
# nothing, relative to the file's directory; false if there is one.
broken_links() {
	local f t dir rc=0
	for f; do
		dir=.
		[[ $f == */* ]] && dir=${f%/*}
		while IFS= read -r t; do
			[[ -e $dir/$t ]] && continue
			echo "$f: $t"
			rc=1
		done < <(links "$f")
	done
	return "$rc"
}

@test "every relative link in the docs points to a file that exists" {
	cd "$NBIO_SRCDIR"
	local -a docs=(README.md HACKING.md kernel/README.md docs/*.md
		docs/measurements/*.md)
	local f
	for f in "${docs[@]}"; do
		[[ -f $f ]] || fail "$f is missing"
	done
	run broken_links "${docs[@]}"
	assert_success
	assert_output ''
}

@test "README.md links the documents its sections moved to" {
	cd "$NBIO_SRCDIR"
	run links README.md
	assert_success
	assert_line HACKING.md
	assert_line kernel/README.md
	assert_line docs/measurements.md
}

@test "the check finds a broken link, and skips web links and code" {
	cd "$BATS_TEST_TMPDIR"
	mkdir -p sub
	touch sub/there.md
	cat >sub/page.md <<-'EOF'
		[here](there.md) and [gone](missing.md#part) and [web](https://example.org/x)
		[anchor](#top) `[in code](nowhere.md)`, ![plot](gone.png)
		```
		[fenced](nowhere-either.md)
		```
	EOF
	run broken_links sub/page.md
	assert_failure
	assert_output "$(printf '%s\n' 'sub/page.md: missing.md' \
		'sub/page.md: gone.png')"
}
