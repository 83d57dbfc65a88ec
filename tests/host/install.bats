#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# make install with DESTDIR: the tools, the man pages and the bash
# completions land under DESTDIR, where configure said, and nothing else
# is installed; make uninstall removes them again.

load "${BATS_TEST_DIRNAME}/../helpers/rc.bash"

setup() {
	[[ -f $NBIO_BUILDDIR/Makefile ]] ||
		fail "no Makefile in $NBIO_BUILDDIR: run configure"
	R=$BATS_TEST_TMPDIR/root
}

# mk TARGET VAR=VALUE...: make in the build tree, on its own (not as a
# job of the make running this test)
mk() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -s -C "$NBIO_BUILDDIR" --no-print-directory "$@"
}

# installed: the files under $R, relative to it, sorted
installed() {
	(cd "$R" && find . ! -type d | sed 's|^\.||' | sort)
}

@test "install: DESTDIR gets the tools, man pages and completions, only" {
	run mk install DESTDIR="$R" prefix=/p bashcompletiondir=/bc
	assert_success
	run installed
	assert_output - <<-'EOF'
		/bc/loopctl
		/bc/nbcat
		/p/bin/nbcat
		/p/sbin/loopctl
		/p/share/man/man1/nbcat.1
		/p/share/man/man8/loopctl.8
	EOF
	# what is installed is what the tree has, and runs
	cmp "$R/bc/nbcat" "$NBIO_SRCDIR/completions/nbcat"
	cmp "$R/bc/loopctl" "$NBIO_SRCDIR/completions/loopctl"
	cmp "$R/p/share/man/man8/loopctl.8" "$NBIO_SRCDIR/man/loopctl.8"
	run "$R/p/bin/nbcat" --version
	assert_success
	run "$R/p/sbin/loopctl" --version
	assert_success

	run mk uninstall DESTDIR="$R" prefix=/p bashcompletiondir=/bc
	assert_success
	run installed
	assert_output ''
}

@test "install: the completions go to the directory configure chose" {
	local dir
	dir=$(sed -n 's/^bashcompletiondir = //p' "$NBIO_BUILDDIR/Makefile")
	[[ -n $dir ]] || skip "configured --without-bashcompletiondir"
	run mk install-bashcompletionDATA DESTDIR="$R"
	assert_success
	# the Makefile's value, with $(datadir) and $(prefix) expanded
	# shellcheck disable=SC2016 # make expands it
	local print='nbio-print-dir: ; @echo $(bashcompletiondir)'
	dir=$(mk -f Makefile -f - nbio-print-dir <<<"$print")
	[[ -f $R$dir/nbcat && -f $R$dir/loopctl ]] ||
		fail "not in $R$dir: $(installed)"
}
