# SPDX-License-Identifier: GPL-2.0-or-later
# nbcat.bash - shared by the host bats tests of nbcat (on top of rc.bash,
# the gates and paths): a per-test scratch directory, the default setup
# and teardown, page-cache layouts built with the cachectl helper, and
# checks on nbcat's JSON report (parsed with jq).
#
# Load it from a test file with:
#   load "${BATS_TEST_DIRNAME}/../helpers/nbcat.bash"
#
# Environment (and rc.bash's):
#   NBIO_TEST_DIR    put per-test files under this directory instead of
#                    $BATS_TEST_TMPDIR (e.g. a scratch ext4 in a guest)
#   NBIO_WARM_ATTEMPTS, NBIO_COLD_ATTEMPTS  see retry_warm, retry_cold

# shellcheck source=tests/helpers/rc.bash
source "${BASH_SOURCE[0]%/*}/rc.bash"

# ---------------------------------------------------------------------
# setup / teardown
# ---------------------------------------------------------------------

# common_setup: check the binaries exist and make $D, the per-test
# scratch directory. A missing binary fails the test: it is a build
# problem, not a reason to skip.
common_setup() {
	[[ -x $NBCAT ]] || fail "nbcat not built: $NBCAT"
	[[ -x $CACHECTL ]] ||
		fail "cachectl helper not built: $CACHECTL (make check builds it)"
	command -v jq >/dev/null ||
		fail "jq is not installed (scripts/lib.sh installs it)"
	if [[ -n ${NBIO_TEST_DIR-} ]]; then
		D=$(mktemp -d "$NBIO_TEST_DIR/nbio-test.XXXXXX")
	else
		D=$BATS_TEST_TMPDIR
	fi
}

common_teardown() {
	if [[ -n ${NBIO_TEST_DIR-} && -n ${D-} && $D == "$NBIO_TEST_DIR"/* ]]; then
		rm -rf "$D"
	fi
}

# The default hooks, for a file that redefines neither: $D on a file
# system where RWF_NOWAIT reads work, $F a file name in it. A file that
# needs more defines its own setup and calls common_setup (and
# common_teardown from its teardown).
setup() {
	common_setup
	require_nowait "$D"
	# shellcheck disable=SC2034 # used by the test files
	F=$D/f
}

teardown() {
	common_teardown
}

# require_utf8_locale: a UTF-8 locale (C.UTF-8) is installed; sets
# UTF8_LOCALE to its name as locale -a spells it.
require_utf8_locale() {
	# shellcheck disable=SC2034 # used by the test files
	UTF8_LOCALE=$(locale -a 2>/dev/null | grep -m1 -ix 'c\.utf-\?8') ||
		skip "no C.UTF-8 locale (locale -a)"
}

# ---------------------------------------------------------------------
# Files and page-cache layouts
# ---------------------------------------------------------------------

# Attempts at laying out the cache: the host may reclaim a page between
# load and check (this one runs DAMON's proactive reclaim, kdamond).
CACHE_LAYOUT_TRIES=3

# cache_layout FILE [OFFSET LENGTH]...: evict FILE from the page cache,
# then load exactly the given page-aligned, non-overlapping ranges (LENGTH
# may run past EOF), and check with mincore() that the cache holds those
# pages and no others (no readahead crept in). The whole layout is redone
# up to CACHE_LAYOUT_TRIES times before giving up.
cache_layout() {
	local try
	for ((try = 1; try <= CACHE_LAYOUT_TRIES; try++)); do
		cache_layout_once "$@" && return 0
		echo "# cache_layout: attempt $try of $CACHE_LAYOUT_TRIES differed" >&3
	done
	return 1
}

cache_layout_once() {
	local f=$1 size off len end want=0 got total
	shift
	size=$(stat -c %s "$f")
	"$CACHECTL" evict "$f" || return 1
	while (($# >= 2)); do
		off=$1 len=$2
		shift 2
		"$CACHECTL" load "$f" "$off" "$len" || return 1
		end=$((off + len > size ? size : off + len))
		((end > off)) &&
			want=$((want + (end + PAGESIZE - 1) / PAGESIZE - off / PAGESIZE))
	done
	read -r got total < <("$CACHECTL" resident "$f")
	if [[ $got != "$want" ]]; then
		echo "cache_layout $f: $got of $total pages resident, want $want" >&2
		return 1
	fi
	# shellcheck disable=SC2034 # read by the tests' layout_then
	LAYOUT_PAGES=$want
}

# readahead_bytes PATH: the largest window the kernel reads ahead in one
# go on PATH's device for a reader that asked for POSIX_FADV_SEQUENTIAL
# (nbcat does, like cat; it doubles the window): 2 x max(read_ahead_kb,
# max_sectors_kb). 64 MiB when the device cannot be found (stacked or
# anonymous devices).
readahead_bytes() {
	local mm q kb=0 io
	mm=$(stat -c '%Hd:%Ld' "$1")
	for q in "/sys/dev/block/$mm/queue" "/sys/dev/block/$mm/../queue"; do
		[[ -r $q/read_ahead_kb ]] && break
	done
	if [[ -r $q/read_ahead_kb ]]; then
		kb=$(<"$q/read_ahead_kb")
		io=$(<"$q/max_sectors_kb")
		((io > kb)) && kb=$io
	elif [[ -r /sys/class/bdi/$mm/read_ahead_kb ]]; then
		kb=$(<"/sys/class/bdi/$mm/read_ahead_kb")
	fi
	((kb > 0)) || kb=32768
	echo $((2 * kb * KiB))
}

# cold_gap CHUNK: bytes of cached data to put between two cold ranges so
# that no readahead started at one (a worker's read, or on newer kernels
# the RWF_NOWAIT miss itself) reaches the other: two readahead windows
# (a window and its async successor) plus a PMD-sized folio, plus a
# chunk, rounded up to a multiple of CHUNK. Files laid out this way get
# the same classification whatever the timing of nbcat's threads.
cold_gap() {
	local c=$1 g
	g=$((2 * $(readahead_bytes "$D") + 2 * MiB + c))
	echo $(((g + c - 1) / c * c))
}

# retry N WHY FN [ARG]...: run FN, which sets up a page-cache layout,
# runs nbcat and returns non-zero when the outcome is not the one the
# layout implies, up to N times; each retry is a TAP comment giving WHY
# the outcome may differ without a bug (a bug differs every time).
retry() {
	local n=$1 why=$2 i
	shift 2
	for ((i = 1; i <= n; i++)); do
		"$@" && return 0
		((i < n)) &&
			echo "# $BATS_TEST_DESCRIPTION: attempt $i of $n differed, retrying ($why)" >&3
	done
	echo "$1: $n attempt(s), outcome never matched the layout" >&2
	return 1
}

# retry_warm FN [ARG]...: FN caches a whole file and expects every chunk
# a hit. A page can be reclaimed between the layout and the read (the
# host's memory is not ours, and DAMON's proactive reclaim runs here: 2
# chunks of 9 missed in 1 run of 12), so
# NBIO_WARM_ATTEMPTS (3) attempts.
retry_warm() {
	retry "${NBIO_WARM_ATTEMPTS:-3}" "a page reclaimed under the test?" "$@"
}

# resident_pages FILE: pages of FILE in the page cache.
resident_pages() {
	local n
	read -r n _ < <("$CACHECTL" resident "$1")
	echo "$n"
}

# Attempts at a layout when the host reclaimed one of its pages during
# the run (DAMON's proactive reclaim, kdamond, runs here).
RECLAIM_TRIES=3

# check_cache BEFORE AFTER: fail if pages were added; return 75 if some
# went away (reclaim by the host, not nbcat's doing: retry the layout).
check_cache() {
	# callers test its status, so fail's status must end it here
	(($2 <= $1)) ||
		{ fail "--cached-only: $1 pages resident before, $2 after"; return 1; }
	(($2 == $1)) && return 0
	echo "# $1 pages resident before, $2 after: reclaimed meanwhile, retrying" >&3
	return 75
}

# retry_reclaim FN [ARG]...: FN sets up a layout and checks a run; again
# when it returns 75 (see check_cache), up to RECLAIM_TRIES times.
retry_reclaim() {
	local i rc
	for ((i = 1; i <= RECLAIM_TRIES; i++)); do
		rc=0
		"$@" || rc=$?
		((rc == 75)) || return "$rc"
	done
	fail "the host reclaimed pages in each of $RECLAIM_TRIES attempts"
}

# retry_cold FN [ARG]...: FN lays out cold ranges. Once where a
# RWF_NOWAIT miss starts no I/O (6.1): the outcome is exact. Where it
# does (see nowait_starts_io), a cold probe now and then finds its page
# already read (1 to 2 in 100 probes on the 6.18 host), so
# NBIO_COLD_ATTEMPTS (8) attempts.
retry_cold() {
	local n=1
	nowait_starts_io && n=${NBIO_COLD_ATTEMPTS:-8}
	retry "$n" "kernel $(uname -r) reads ahead on RWF_NOWAIT misses" "$@"
}

# ---------------------------------------------------------------------
# Running nbcat and checking what it did
# ---------------------------------------------------------------------

# nbcat_run ARG...: nbcat ARG... >$D/out 2>$D/err; exit status in
# $nbcat_status (never fails itself). NBCAT_OUT=/dev/null skips writing
# big outputs to a file.
nbcat_run() {
	nbcat_status=0
	"$NBCAT" "$@" >"${NBCAT_OUT:-$D/out}" 2>"$D/err" || nbcat_status=$?
}

# nbcat_json ARG...: nbcat_run with the JSON report in $D/report.json.
nbcat_json() {
	rm -f "$D/report.json"
	nbcat_run -J --report "$D/report.json" "$@"
}

# expect_status N: nbcat_run's exit status was N.
expect_status() {
	[[ $nbcat_status == "$1" ]] && return 0
	echo "nbcat exited $nbcat_status, want $1; stderr:" >&2
	cat "$D/err" >&2
	return 1
}

# expect_output FILE...: nbcat's stdout is the concatenation of FILE...
expect_output() {
	cat "$@" >"$D/expected" || return 1
	cmp "$D/out" "$D/expected" >&2
}

# jq filter selecting the report row $row: "total", "@N" (the Nth row,
# from 0) or a file path as given to nbcat.
# shellcheck disable=SC2016 # jq variables, not shell ones
JQ_ROW='
	.nbcat | to_entries[]
	| select(if $row == "total" then .value.type == "total"
		 elif ($row | startswith("@")) then .key == ($row[1:] | tonumber)
		 else .value.file == $row end)
	| .value'

# report_values ROW KEY...: the KEYs of one row of $D/report.json, space
# separated (null, numbers, strings as jq -r prints them); ROW as for
# JQ_ROW.
report_values() {
	local row=$1
	shift
	jq -r --arg row "$row" --arg keys "$*" "$JQ_ROW"'
		| [($keys | split(" "))[] as $k | .[$k] | tostring]
		| join(" ")' "$D/report.json"
}

# expect_row ROW KEY=VALUE...: the row has these exact values.
expect_row() {
	local row=$1 kv keys=() want=() got=() i rc=0
	shift
	for kv; do
		keys+=("${kv%%=*}")
		want+=("${kv#*=}")
	done
	read -ra got < <(report_values "$row" "${keys[@]}")
	for i in "${!keys[@]}"; do
		[[ ${got[i]-<no row>} == "${want[i]}" ]] && continue
		echo "report[$row].${keys[i]}: got ${got[i]-<no row>}, want ${want[i]}" >&2
		rc=1
	done
	return "$rc"
}

# expect_ratio ROW KEY VALUE: a ratio, equal to VALUE within 0.005 (the
# report may round to two decimals); VALUE "null" means null.
expect_ratio() {
	local got
	got=$(report_values "$1" "$2")
	if [[ $3 == null || $got == null ]]; then
		[[ $got == "$3" ]] && return 0
	elif awk -v g="$got" -v w="$3" 'BEGIN { d = g - w; exit !(d <= 0.005 && d >= -0.005) }'; then
		return 0
	fi
	echo "report[$1].$2: got $got, want $3" >&2
	return 1
}

# expect_lines FILE LINE...: FILE holds exactly these lines, each ending
# in a newline ("\t" in a LINE is a tab); no LINE: FILE is empty.
expect_lines() {
	local f=$1
	shift
	[[ -f $f ]] || {
		echo "$f: no such file" >&2
		return 1
	}
	if (($#)); then
		printf '%b\n' "$@" >"$D/lines.want"
	else
		: >"$D/lines.want"
	fi
	cmp -s "$f" "$D/lines.want" && return 0
	echo "$f: got:" >&2
	cat -A "$f" >&2
	echo "want:" >&2
	cat -A "$D/lines.want" >&2
	return 1
}

# trace_lines FILE OUTCOME: "OFFSET LENGTH" of each --trace line with
# OUTCOME, in file order.
trace_lines() {
	awk -F'\t' -v o="$2" '$3 == o { print $1, $2 }' "$1"
}

# expect_trace_wellformed FILE PATH...: every line of the --trace FILE is
# OFFSET<tab>LENGTH<tab>OUTCOME<tab>NS<tab>PATH, numbers in decimal, a
# known outcome, and one of the PATHs.
expect_trace_wellformed() {
	local f=$1
	shift
	[[ -s $f ]] || {
		echo "$f: empty or missing" >&2
		return 1
	}
	awk -F'\t' -v paths="$*" '
		BEGIN { n = split(paths, p, " "); for (i = 1; i <= n; i++) ok[p[i]] = 1 }
		NF != 5 || $1 !~ /^[0-9]+$/ || $2 !~ /^[0-9]+$/ || $4 !~ /^[0-9]+$/ ||
		$3 !~ /^(hit|partial|miss|unsupported|blocking|fallback|inline|stream)$/ ||
		!($5 in ok) { print FILENAME ":" NR ": malformed: " $0; bad = 1 }
		END { exit bad }' "$f" >&2
}

# json_type ROW KEY: jq's type of a report field (number, string, null...)
json_type() {
	jq -r --arg row "$1" --arg k "$2" "$JQ_ROW"' | .[$k] | type' \
		"$D/report.json"
}
