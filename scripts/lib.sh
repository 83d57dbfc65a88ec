# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Shared by the quick-start scripts, the benchmarks (tests/bench), the
# guest runner (tests/vm/run) and kernel/build-kernel: die(), the guest
# check, the demonstrations' step(), and the build (install the Debian
# packages, then bootstrap, configure and build the tree in place). Each
# script finds this file from its own path, so that works the same in the
# source tree, in a tarball and in the guest's view of the host.

# Debian packages the build, the tests and the demo need.
NBIO_PACKAGES=(
	autoconf automake pkg-config build-essential libsmartcols-dev
	liburing-dev bats bats-assert bats-support bats-file bash-completion
	jq mandoc groff-base util-linux e2fsprogs xfsprogs fio vmtouch
	shellcheck time strace
)

# die MESSAGE...: "script: MESSAGE" on stderr, exit 1.
die() {
	echo "${0##*/}: $*" >&2
	exit 1
}

# nbio_in_guest: true in the QEMU guest of tests/vm/run only, where its
# init exports NBIO_GUEST=1 and the kernel command line has nbio.guest=1.
# Scripts that format disks or attach loop devices refuse to run anywhere
# else.
nbio_in_guest() {
	[[ ${NBIO_GUEST:-} == 1 ]] && grep -qw 'nbio.guest=1' /proc/cmdline
}

# step TITLE COMMAND: a heading of the demonstrations (scripts/demo,
# scripts/demo-guest) and the command it shows.
step() {
	printf '\n=== %s\n$ %s\n' "$1" "$2"
}

# nbio_install_packages [EXTRA...]: apt-get what is missing. Prints one
# line (what it installs); apt's whole output goes to $NBIO_APT_LOG
# (default build/apt.log), and its last lines to stderr if it fails. apt
# reads nothing from the terminal (stdin is /dev/null).
nbio_install_packages() {
	local pkgs=("${NBIO_PACKAGES[@]}" "$@") missing=() p
	local log=${NBIO_APT_LOG:-build/apt.log}
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || missing+=("$p")
	done
	((${#missing[@]})) || return 0
	[[ $(id -u) -eq 0 ]] ||
		die "missing packages: ${missing[*]}; run as root or install them"
	echo "installing: ${missing[*]} (apt-get, log: $log)"
	{ mkdir -p "$(dirname "$log")" && : >"$log"; } ||
		die "cannot write $log"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get update </dev/null >>"$log" 2>&1 ||
		! apt-get install -y --no-install-recommends "${missing[@]}" \
			</dev/null >>"$log" 2>&1; then
		echo "apt-get failed; the end of $log:" >&2
		tail -n 20 "$log" >&2
		die "cannot install: ${missing[*]}"
	fi
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

# nbio_kworker_snapshot [PROC]: one line per kworker thread in PROC
# (default /proc): TID NAME SWITCHES (voluntary + involuntary).
nbio_kworker_snapshot() {
	local proc=${1:-/proc} f name n k v
	for f in "$proc"/[0-9]*/task/[0-9]*/status; do
		name='' n=0
		while read -r k v; do
			case $k in
			Name:) name=$v ;;
			voluntary_ctxt_switches: | nonvoluntary_ctxt_switches:)
				n=$((n + v)) ;;
			esac
		done 2>/dev/null <"$f" || continue
		[[ $name == kworker/* ]] || continue
		f=${f%/status}
		echo "${f##*/} $name $n"
	done
}

# nbio_kworker_delta BEFORE AFTER REGEX: the switches between two
# snapshots of the kworkers whose name matches REGEX (awk), summed over
# AFTER's threads by TID (a kworker's name changes with its work). A
# thread gone by AFTER is left out: subtracting its whole count made sums
# negative. A new thread, or a reused TID whose count went down, counts
# whole.
nbio_kworker_delta() {
	awk -v re="$3" 'FILENAME == ARGV[1] { before[$1] = $3; next }
	     $2 ~ re { d = $3 - before[$1]; sum += d < 0 ? $3 : d }
	     END { print sum + 0 }' "$1" "$2"
}

# nbio_perf_record DATA CMD [ARG...]: run CMD while perf records the whole
# system into DATA: call graphs, sampled on the cpu-clock software event
# (a guest under TCG has no PMU).
nbio_perf_record() {
	local data=$1
	shift
	perf record -q -a -g -e cpu-clock -F 1000 --no-buildid-cache \
		-o "$data" -- "$@"
}

# nbio_perf_report DATA PREFIX REPORT...: each REPORT, NAME:LINES, into
# PREFIX.NAME.txt, its first LINES entries: comm (by command), sym (by
# symbol, self time), children (by symbol, callees' time included). awk
# reads all of perf's output: an early close (head) would kill perf with
# SIGPIPE. A failed report is a warning, not an error.
nbio_perf_report() {
	local data=$1 prefix=$2 report name max flag sort
	shift 2
	for report; do
		IFS=: read -r name max <<<"$report"
		flag=--no-children sort=$name
		case $name in
		comm | sym) ;;
		children) flag=--children sort=sym ;;
		*) die "nbio_perf_report: unknown report '$name'" ;;
		esac
		perf report -i "$data" --stdio "$flag" --sort "$sort" -g none \
			2>/dev/null | awk -v max="$max" '!/^#/ && NF && n++ < max' \
			>"$prefix.$name.txt" ||
			echo "warning: perf report ($name) failed for $data" >&2
	done
}
