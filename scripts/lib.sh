# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the quick-start scripts: install Debian packages, then
# bootstrap, configure and build the tree in place.

# Debian packages the build, the tests and the demo need.
NBIO_PACKAGES=(
	autoconf automake pkg-config build-essential libsmartcols-dev
	bats bats-assert bats-support bats-file jq mandoc groff-base
	util-linux e2fsprogs xfsprogs fio vmtouch
)

die() {
	echo "${0##*/}: $*" >&2
	exit 1
}

# step TITLE COMMAND: a heading of the demonstrations (scripts/demo,
# scripts/demo-guest) and the command it shows.
step() {
	printf '\n=== %s\n$ %s\n' "$1" "$2"
}

# nbio_install_packages [EXTRA...]: apt-get what is missing.
nbio_install_packages() {
	local pkgs=("${NBIO_PACKAGES[@]}" "$@") missing=() p
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || missing+=("$p")
	done
	((${#missing[@]})) || return 0
	[[ $(id -u) -eq 0 ]] ||
		die "missing packages: ${missing[*]}; run as root or install them"
	echo "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq || die "apt-get update failed"
	apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
		die "apt-get install failed"
}

# nbio_build [CONFIGURE-ARGS...]: autogen + configure (when the arguments
# changed) + make.
nbio_build() {
	local stamp=.nbio-configure-args args="$*"
	[[ -x configure ]] || ./autogen.sh >/dev/null ||
		die "autogen.sh failed"
	if [[ ! -f Makefile || ! -f $stamp || $(<"$stamp") != "$args" ]]; then
		./configure -q "$@" || die "configure failed (see config.log)"
		printf '%s' "$args" >"$stamp"
	fi
	make -s -j"$(nproc)" || die "build failed"
}
