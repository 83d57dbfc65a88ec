#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl on the host: the command line (--help, --version, the man page
# agreeing with --help, every argument error), device-path validation,
# non-root behaviour, and `why` on ext4 and tmpfs files. Nothing here may
# touch a loop device of this machine: every run that could get that far
# happens in a private mount namespace whose /dev is an empty tmpfs (see
# isolated()), and what attaches is tested in tests/guest/loopctl.bats.

load "${BATS_TEST_DIRNAME}/../helpers/rc.bash"

MAN=$NBIO_SRCDIR/man/loopctl.8

# Exit codes (loopctl(8) EXIT STATUS), as `run -N` checks them: 1 usage or
# other error, 2 not a loop device / not bound, 3 direct I/O impossible,
# 4 permission denied, 5 busy, 6 nothing to attach (empty file or offset
# at or past its end).

COMMANDS=(attach why status list set detach cache)

setup() {
	[[ -x $LOOPCTL ]] || fail "loopctl not built: $LOOPCTL"
	# A directory nobody can reach too (BATS_TEST_TMPDIR is 0700).
	W=$(mktemp -d /tmp/loopctl-host.XXXXXX)
	chmod 0755 "$W"
	F=$W/img
	dd if=/dev/zero of="$F" bs=64K count=16 status=none ||
		fail "cannot create $F"
	chmod 0666 "$F"
}

teardown() {
	[[ -n ${W-} && $W == /tmp/loopctl-host.* ]] && rm -rf "$W"
	[[ -n ${SHM-} && $SHM == /dev/shm/loopctl-host.* ]] && rm -rf "$SHM"
	return 0
}

# isolated [--nobody] [--control] [--loopnode] CMD...: run CMD in a new
# mount namespace where /dev is an empty tmpfs holding only null and zero,
# so that no loop device of this host is reachable whatever CMD does.
#   --control   add a fake, root-only /dev/loop-control (a regular file)
#   --nobody    run CMD as nobody:nogroup, no supplementary groups, no
#               capabilities (checked before CMD runs)
#   --loopnode  add /dev/loop0, root-only (0600): a real node, so only
#               with --nobody, who cannot open it (permission tests)
isolated() {
	local priv=() control=0 loopnode=0 who=root
	while [[ $1 == --* ]]; do
		case $1 in
		--nobody)
			who=nobody
			priv=(setpriv --reuid=nobody --regid=nogroup
				--clear-groups --inh-caps=-all --bounding-set=-all)
			;;
		--control) control=1 ;;
		--loopnode) loopnode=1 ;;
		esac
		shift
	done
	((!loopnode || ${#priv[@]})) || fail "isolated: --loopnode needs --nobody"
	# shellcheck disable=SC2016 # expanded by the inner shells
	unshare --mount --propagation private -- bash -c '
		control=$1 loopnode=$2
		shift 2
		mount -t tmpfs -o mode=0755,size=1m loopctl-test /dev || exit 99
		mknod -m 0666 /dev/null c 1 3 || exit 99
		mknod -m 0666 /dev/zero c 1 5 || exit 99
		if ((control)); then
			: >/dev/loop-control && chmod 0600 /dev/loop-control ||
				exit 99
		fi
		if ((loopnode)); then
			mknod -m 0600 /dev/loop0 b 7 0 || exit 99
		fi
		exec "$@"' isolated "$control" "$loopnode" \
		"${priv[@]}" bash -c '
			# never run CMD with privileges when asked to drop them
			if [[ $1 == nobody ]]; then
				[[ $(id -u) != 0 ]] || exit 98
				grep -q "^CapEff:[[:space:]]*0*$" /proc/self/status ||
					exit 98
			fi
			shift
			exec "$@"' drop "$who" "$@"
}

require_isolation() {
	command -v unshare >/dev/null || skip "no unshare (util-linux)"
	isolated true ||
		skip "cannot make a private mount namespace (needs root)"
}

# odirect_works FILE: ground truth, independent of loopctl.
odirect_works() {
	dd if="$1" of=/dev/null bs=4096 count=1 iflag=direct status=none 2>/dev/null
}

# --------------------------------------------------------------------
# --help, --version, commands

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

# --------------------------------------------------------------------
# argument errors (all before any device is looked at)

@test "attach: missing and extra arguments" {
	run -1 "$LOOPCTL" attach
	assert_output --partial "loopctl: attach: no file given"
	assert_output --partial "Try 'loopctl attach --help'"
	run -1 "$LOOPCTL" attach "$F" /dev/loop0 extra
	assert_output --partial "unexpected argument 'extra'"
}

@test "attach --autoclear: needs a command, and a command needs --autoclear" {
	# all refused while parsing, before the file is even opened
	run -1 "$LOOPCTL" attach --autoclear "$W/missing"
	assert_line "loopctl: attach: --autoclear needs a command (after --) to run while the device is held; for a mount use 'mount -o loop'"
	assert_line "Try 'loopctl attach --help' for more information."
	run -1 "$LOOPCTL" attach --autoclear --dry-run "$F"
	assert_output --partial "--autoclear needs a command"
	run -1 "$LOOPCTL" attach "$W/missing" -- true
	assert_line "loopctl: attach: a command (after --) needs --autoclear"
	run -1 "$LOOPCTL" attach --autoclear "$W/missing" --
	assert_line "loopctl: attach: no command given after --"
	run -1 "$LOOPCTL" attach --autoclear -- true
	assert_line "loopctl: attach: no file given"
	# operands after -- belong to the command, not to attach
	run -1 "$LOOPCTL" attach --autoclear "$F" /dev/loop0 extra -- true
	assert_line "loopctl: attach: unexpected argument 'extra'"
	# --dry-run with a command: the plan, and nothing run
	run -0 "$LOOPCTL" attach --autoclear --dry-run --direct-io=off "$F" \
		-- touch "$W/ran"
	assert_line "file:        $F"
	[[ ! -e $W/ran ]] || fail "--dry-run ran the command"
}

@test "attach/set: bad --direct-io values" {
	local v
	for v in maybe ON 1 yes ""; do
		run -1 "$LOOPCTL" attach --direct-io="$v" --dry-run "$F"
		assert_output --partial "--direct-io: '$v': not on, auto or off"
		run -1 "$LOOPCTL" set --direct-io="$v" /dev/null
		assert_output --partial "not on, auto or off"
	done
}

@test "attach: bad --sector-size values" {
	local v
	for v in 0 256 1000 3000 1M 8192 65536 abc -512 4096x "" autox; do
		run -1 "$LOOPCTL" attach --dry-run --sector-size="$v" "$F"
		assert_output --partial "--sector-size: '$v': not a power of two from 512 to $(getconf PAGESIZE), or auto"
		refute_output --partial "file:"
	done
	run -1 "$LOOPCTL" why -b 768 "$F"
	assert_output --partial "not a power of two"
}

@test "attach: bad --offset and --sizelimit values" {
	local v
	for v in abc -1 " 1" 1x 1.5K 4Kx ""; do
		run -1 "$LOOPCTL" attach --dry-run --offset="$v" "$F"
		assert_output --partial "--offset: '$v': not a size in bytes"
		run -1 "$LOOPCTL" attach --dry-run --sizelimit="$v" "$F"
		assert_output --partial "--sizelimit: '$v': not a size in bytes"
	done
	# above what loop_info64 accepts (LLONG_MAX): EOVERFLOW in the kernel
	for v in 99999999999999999999 8E 9223372036854775808; do
		run -1 "$LOOPCTL" attach --dry-run --offset="$v" "$F"
		assert_output --partial "--offset: '$v': too large"
	done
	# the largest accepted, past the end of $F: parsed, then refused
	run -6 "$LOOPCTL" attach --dry-run --direct-io=off \
		--offset=9223372036854775807 "$F"
	assert_output --partial "offset 9223372036854775807 is at or past the end"
	run -1 "$LOOPCTL" attach --dry-run --sizelimit=1000 "$F"
	assert_output --partial "--sizelimit: '1000': not a multiple of 512 bytes"
	run -1 "$LOOPCTL" why --offset=x "$F"
	assert_output --partial "--offset: 'x': not a size in bytes"
}

@test "sizes take binary suffixes" {
	run -0 "$LOOPCTL" attach --dry-run --direct-io=off --offset=4K \
		--sizelimit=1M "$F"
	assert_line "offset:      4096"
	assert_line "sizelimit:   1048576"
	run -0 "$LOOPCTL" attach --dry-run --direct-io=off --offset=2KB "$F"
	assert_line "offset:      2000"
	run -0 "$LOOPCTL" attach --dry-run --direct-io=off --offset=1KiB -b 4k "$F"
	assert_line "offset:      1024"
	assert_line "sector size: 4096"
}

@test "set: argument errors" {
	run -1 "$LOOPCTL" set
	assert_output --partial "loopctl: set: no device given"
	run -1 "$LOOPCTL" set /dev/null
	assert_output --partial "set: nothing to change: give --direct-io or --sector-size"
	run -1 "$LOOPCTL" set --direct-io=on /dev/null /dev/zero
	assert_output --partial "unexpected argument '/dev/zero'"
	run -1 "$LOOPCTL" set --sector-size=100 /dev/null
	assert_output --partial "not a power of two"
}

@test "detach: argument errors" {
	run -1 "$LOOPCTL" detach
	assert_output --partial "detach: no device given (or --all)"
	run -1 "$LOOPCTL" detach --all /dev/null
	assert_output --partial "--all and a device list are mutually exclusive"
}

@test "status and cache: output option errors" {
	local cmd
	for cmd in status list cache; do
		run -1 "$LOOPCTL" "$cmd" --json --raw
		assert_output --partial "$cmd: --json and --raw are mutually exclusive"
		run -1 "$LOOPCTL" "$cmd" --output NAME,NOSUCH
		assert_output --partial "--output: unknown column 'NOSUCH'"
		run -1 "$LOOPCTL" "$cmd" -O ''
		assert_output --partial "--output: no columns given"
	done
	run -1 "$LOOPCTL" status -O DIO-WHY,FROB
	assert_output --partial "unknown column 'FROB'"
}

@test "why: argument errors" {
	run -1 "$LOOPCTL" why
	assert_output --partial "why: no file or device given"
	run -1 "$LOOPCTL" why "$F" "$F"
	assert_output --partial "unexpected argument"
	run -1 "$LOOPCTL" why "$W/missing"
	assert_output --partial "$W/missing: No such file or directory"
	run -1 "$LOOPCTL" why /dev/null
	assert_output --partial "/dev/null: not a regular file or block device"
	run -1 "$LOOPCTL" why "$W"
	assert_output --partial "not a regular file or block device"
}

# --------------------------------------------------------------------
# device-path validation (exit 2), in isolation

@test "a path that is not a loop device: exit 2 for every command" {
	require_isolation
	local dev cmd
	for dev in /dev/null "$F" "$W"; do
		run -2 isolated "$LOOPCTL" attach --direct-io=off "$F" "$dev"
		assert_output "loopctl: $dev: not a loop device"
		run -2 isolated "$LOOPCTL" set --direct-io=on "$dev"
		assert_output "loopctl: $dev: not a loop device"
		run -2 isolated "$LOOPCTL" detach "$dev"
		assert_output "loopctl: $dev: not a loop device"
		for cmd in status list cache; do
			run -2 isolated "$LOOPCTL" "$cmd" "$dev"
			assert_output --partial "loopctl: $dev: not a loop device"
		done
	done
}

@test "a device that does not exist: exit 2" {
	require_isolation
	run -2 isolated "$LOOPCTL" detach /dev/loop12345
	assert_output --partial "/dev/loop12345: No such file or directory"
	run -2 isolated "$LOOPCTL" set --direct-io=off loop12345
	assert_output --partial "loop12345: No such file or directory"
	run -2 isolated "$LOOPCTL" attach --direct-io=off "$F" /dev/loop12345
	assert_output --partial "No such file or directory"
}

@test "an empty name is named '' in the message, never ': reason'" {
	require_isolation
	local cmd
	for cmd in status list cache detach "set --direct-io=on"; do
		# shellcheck disable=SC2086 # word splitting wanted
		run -2 isolated "$LOOPCTL" $cmd ""
		assert_output "loopctl: '': not a loop device"
	done
	run -2 isolated "$LOOPCTL" attach --dry-run "$F" ""
	assert_output "loopctl: '': not a loop device"
	run -1 isolated "$LOOPCTL" attach --dry-run ""
	assert_output "loopctl: '': No such file or directory"
	run -1 "$LOOPCTL" why ""
	assert_output "loopctl: '': No such file or directory"
}

@test "detach validates every device before detaching any, naming each bad one" {
	require_isolation
	run -2 isolated "$LOOPCTL" detach /dev/null /dev/loop12345
	assert_output "loopctl: /dev/null: not a loop device
loopctl: /dev/loop12345: No such file or directory"
}

@test "cache and status: every bad operand named, JSON still printed (empty)" {
	require_isolation
	local cmd key
	for cmd in cache status; do
		key=loopcache
		[[ $cmd == status ]] && key=loopdevices
		run -2 --separate-stderr isolated "$LOOPCTL" "$cmd" -J \
			/dev/null "$W/missing"
		assert_equal "$stderr" "loopctl: /dev/null: not a loop device
loopctl: $W/missing: No such file or directory"
		# valid JSON, the list empty: nothing could be read
		[[ $(jq -c ".$key" <<<"$output") == "[]" ]] ||
			fail "$cmd -J: not an empty list: $output"
		# as a table: no table at all, same messages
		run -2 --separate-stderr isolated "$LOOPCTL" "$cmd" \
			"$W/missing" /dev/null
		assert_output ""
		assert_equal "$stderr" "loopctl: $W/missing: No such file or directory
loopctl: /dev/null: not a loop device"
	done
}

# --------------------------------------------------------------------
# the backing file

@test "attach: backing file errors" {
	require_isolation
	mkfifo "$W/fifo"
	run -1 isolated "$LOOPCTL" attach "$W/missing"
	assert_output "loopctl: $W/missing: No such file or directory"
	run -1 isolated "$LOOPCTL" attach /dev/null
	assert_output "loopctl: /dev/null: not a regular file or block device"
	run -1 isolated "$LOOPCTL" attach "$W"
	assert_output --partial "loopctl: $W: Is a directory"
	# a FIFO is refused at once, not waited on
	run -1 timeout 20 "$LOOPCTL" attach --dry-run "$W/fifo"
	assert_output "loopctl: $W/fifo: not a regular file or block device"
	run -1 timeout 20 "$LOOPCTL" why "$W/fifo"
	assert_output "loopctl: $W/fifo: not a regular file or block device"
}

@test "attach: validation done, the first device access is /dev/loop-control" {
	require_isolation
	# everything is valid: loopctl gets as far as the loop driver, which
	# this namespace does not have
	run -1 isolated "$LOOPCTL" attach --direct-io=off "$F"
	assert_output "loopctl: /dev/loop-control: does not exist: is the loop driver loaded? (modprobe loop)"
}

@test "attach --direct-io=on with a misaligned offset: exit 3, nothing attached" {
	require_isolation
	local lbs label off
	run -0 "$LOOPCTL" why "$F"
	lbs=$(sed -n 's/.*logical block size \([0-9]*\)$/\1/p' <<<"$output")
	label=$(sed -n 's/^  block device: *\([^,]*\),.*/\1/p' <<<"$output")
	[[ -n $lbs ]] || skip "$F is not on a block device's file system"
	off=$((lbs + lbs / 2))
	# --control: were the check wrong, loopctl would stop at the fake
	# control file instead of reaching anything real
	run -3 isolated --control "$LOOPCTL" attach --direct-io=on \
		--offset=$off "$F"
	assert_line "loopctl: $F: direct I/O is impossible, nothing attached:"
	assert_line "loopctl: $F: offset $off is not a multiple of $lbs, the logical block size of $label; use an offset aligned to $lbs bytes"
	refute_output --partial "/dev/loop"
	# the same with the sector size given explicitly
	run -3 isolated --control "$LOOPCTL" attach --direct-io=on \
		--sector-size=4096 --offset=$off "$F"
	assert_output --partial "offset $off is not a multiple of $lbs"
}

@test "attach: an empty file or an offset at or past its end: exit 6" {
	require_isolation
	: >"$W/empty"
	# --control: had the check been skipped, loopctl would stop at the
	# fake control file (exit 1), not reach anything real
	run -6 isolated --control "$LOOPCTL" attach --direct-io=off "$W/empty"
	assert_output "loopctl: $W/empty: nothing to attach: the file is empty (the device would have 0 bytes)"
	run -6 isolated --control "$LOOPCTL" attach --dry-run "$W/empty"
	refute_output --partial "file:"
	# $F has 1 MiB: 1M is its end, 1T far past it
	local off
	for off in 1M 1T; do
		run -6 isolated --control "$LOOPCTL" attach --direct-io=off \
			--offset=$off "$F"
		assert_output --regexp "^loopctl: $F: nothing to attach: offset [0-9]+ is at or past the end of the file \(1048576 bytes\)"
	done
	run -6 isolated --control "$LOOPCTL" attach --dry-run --offset=1T "$F"
	# the last byte is still something to attach
	run -0 isolated --control "$LOOPCTL" attach --dry-run \
		--direct-io=off --offset=$((1048576 - 512)) "$F"
	assert_line "offset:      1048064"
	# the kernel counts whole 512-byte sectors: 511 bytes are 0 of them
	head -c 511 /dev/zero >"$W/tiny"
	run -6 isolated --control "$LOOPCTL" attach --direct-io=off "$W/tiny"
	assert_output "loopctl: $W/tiny: nothing to attach: 511 bytes from offset 0 to the end of the file, less than one 512-byte sector (the device would have 0 bytes)"
	head -c 512 /dev/zero >"$W/tiny"
	run -0 isolated --control "$LOOPCTL" attach --dry-run --direct-io=off "$W/tiny"
}

@test "attach --dry-run prints the plan and touches no device" {
	require_isolation
	# --control: a fake /dev/loop-control only root could open
	run -0 isolated --nobody --control "$LOOPCTL" attach --dry-run \
		--direct-io=off "$F"
	assert_line "file:        $F"
	assert_line "device:      first free"
	assert_line "direct I/O:  off"
	assert_line "sector size: kernel default"
	assert_line "read-only:   no"
}

@test "attach --dry-run: auto falls back to buffered and says why" {
	run -0 "$LOOPCTL" why "$F"
	grep -q "logical block size" <<<"$output" ||
		skip "$F is not on a block device's file system"
	run -0 --separate-stderr "$LOOPCTL" attach --dry-run --offset=100 "$F"
	assert_line "direct I/O:  off"
	[[ $stderr == *"$F: direct I/O is off, attaching with buffered I/O:"* ]] ||
		fail "no fallback warning: $stderr"
	[[ $stderr == *"offset 100 is not a multiple of"* ]] ||
		fail "no reason: $stderr"
	# --quiet drops the warning, not the decision
	run -0 --separate-stderr "$LOOPCTL" attach --dry-run -q --offset=100 "$F"
	assert_line "direct I/O:  off"
	[[ -z $stderr ]] || fail "--quiet still warned: $stderr"
}

@test "attach --dry-run: auto and on pick direct I/O on ext4, sector-size auto" {
	local lbs
	run -0 "$LOOPCTL" why "$F"
	lbs=$(sed -n 's/.*logical block size \([0-9]*\)$/\1/p' <<<"$output")
	[[ -n $lbs ]] || skip "$F is not on a block device's file system"
	odirect_works "$F" || skip "$F: O_DIRECT does not work here"
	run -0 "$LOOPCTL" attach --dry-run "$F"
	assert_line "direct I/O:  on"
	run -0 "$LOOPCTL" attach --dry-run --direct-io "$F"
	assert_line "direct I/O:  on"
	run -0 "$LOOPCTL" attach --dry-run --direct-io=on --sector-size=auto "$F"
	assert_line "direct I/O:  on"
	assert_line "sector size: $lbs (auto)"
}

# --------------------------------------------------------------------
# why

@test "why on ext4: every fact, and exit 0" {
	local src lbs fstype
	fstype=$(findmnt -n -o FSTYPE --target "$F")
	src=$(findmnt -n -o SOURCE --target "$F")
	[[ -b $src ]] || skip "$F: file system on $src, not on a block device"
	lbs=$(lsblk -dno LOG-SEC "$src" | tr -d ' ')
	odirect_works "$F" || skip "$F: O_DIRECT does not work on $fstype"
	run -0 "$LOOPCTL" why "$F"
	assert_line --index 0 "$F: direct I/O can work with sector size $lbs and offset 0"
	assert_line "  file system:    $fstype"
	assert_line "  O_DIRECT:       accepted"
	assert_line --regexp "^  block device:   [a-z0-9]+ \([0-9]+:[0-9]+\), logical block size $lbs\$"
	assert_line "  sector size:    $lbs (what the kernel picks by default)"
}

@test "why on ext4: misaligned offset and too small a sector size: exit 3" {
	local src lbs
	src=$(findmnt -n -o SOURCE --target "$F")
	[[ -b $src ]] || skip "$F: not on a block device"
	lbs=$(lsblk -dno LOG-SEC "$src" | tr -d ' ')
	run -3 "$LOOPCTL" why --offset=$((lbs / 2 + lbs)) "$F"
	assert_line --index 0 "$F: direct I/O cannot work with sector size $lbs and offset $((lbs / 2 + lbs))"
	assert_output --partial "offset $((lbs / 2 + lbs)) is not a multiple of $lbs"
	run -0 "$LOOPCTL" why --offset=$((lbs * 3)) "$F"
	if ((lbs > 512)); then
		run -3 "$LOOPCTL" why --sector-size=512 "$F"
		assert_output --partial "sector size 512 is smaller than $lbs"
		assert_output --partial "use --sector-size $lbs (or auto)"
		assert_output --partial "partition table"
	else
		run -0 "$LOOPCTL" why --sector-size=512 "$F"
	fi
	run -0 "$LOOPCTL" why --sector-size=auto "$F"
	assert_line "  sector size:    $lbs"
	run -0 "$LOOPCTL" why --sector-size=4096 "$F"
	assert_line "  sector size:    4096"
}

# tmpfs gained O_DIRECT in 6.6 (shmem ->direct_IO); the guest's 6.1 says no.
@test "why on tmpfs: the answer follows the kernel version" {
	local m
	m=$(stat -f -c %T /dev/shm) || skip "no /dev/shm"
	[[ $m == tmpfs ]] || skip "/dev/shm is $m, not tmpfs"
	SHM=$(mktemp -d /dev/shm/loopctl-host.XXXXXX)
	dd if=/dev/zero of="$SHM/img" bs=64K count=4 status=none
	if kernel_at_least 6.6; then
		odirect_works "$SHM/img" ||
			fail "kernel $(uname -r) >= 6.6 but tmpfs refuses O_DIRECT"
		run -0 "$LOOPCTL" why "$SHM/img"
		assert_line --index 0 "$SHM/img: direct I/O can work with sector size 512 and offset 0"
		assert_line "  file system:    tmpfs"
		assert_line "  O_DIRECT:       accepted"
		assert_line "  block device:   none (the kernel checks no block size)"
		# no block device: the kernel checks no alignment, loopctl says so
		assert_output --partial "note: tmpfs reports no direct I/O alignment"
		run -0 "$LOOPCTL" attach --dry-run --direct-io=on "$SHM/img"
		assert_line "direct I/O:  on"
	else
		! odirect_works "$SHM/img" ||
			fail "kernel $(uname -r) < 6.6 but tmpfs accepts O_DIRECT"
		run -3 "$LOOPCTL" why "$SHM/img"
		assert_line --index 0 "$SHM/img: direct I/O cannot work with sector size 512 and offset 0"
		assert_line "  O_DIRECT:       refused (Invalid argument)"
		assert_output --partial "tmpfs does not support O_DIRECT (Invalid argument)"
		assert_output --partial "tmpfs supports O_DIRECT from Linux 6.6"
		run -3 "$LOOPCTL" attach --dry-run --direct-io=on "$SHM/img"
		assert_output --partial "direct I/O is impossible, nothing attached"
	fi
}

@test "why: an empty file or an offset past its end: nothing to attach, exit 6" {
	: >"$W/empty"
	run -6 "$LOOPCTL" why "$W/empty"
	assert_output "$W/empty: nothing to attach: the file is empty"
	run -6 "$LOOPCTL" why -o 1T "$F"
	assert_output "$F: nothing to attach: offset 1099511627776 is at or past the end of the file (1048576 bytes)"
	refute_output --partial "can work"
	run -6 "$LOOPCTL" why --offset=1M "$F"
	assert_output --partial "offset 1048576 is at or past the end"
	run -6 "$LOOPCTL" why --offset=$((1048576 - 100)) "$F"
	assert_output "$F: nothing to attach: 100 bytes from offset 1048476 to the end of the file, less than one 512-byte sector"
}

@test "why needs no privilege and no device" {
	require_isolation
	require_nobody
	run -0 isolated --nobody "$LOOPCTL" why "$F"
	assert_output --partial "$F: direct I/O"
}

# --------------------------------------------------------------------
# non-root

@test "attach as nobody: permission message and exit 4, before any device" {
	require_isolation
	require_nobody
	run -4 isolated --nobody --control "$LOOPCTL" attach --direct-io=off "$F"
	assert_output "loopctl: /dev/loop-control: permission denied: attaching a loop device needs root (CAP_SYS_ADMIN); run it as root, e.g. with sudo"
	refute_output --partial "Operation not permitted"
}

@test "attach as nobody: a write-protected file is planned read-only" {
	require_isolation
	require_nobody
	chmod 0444 "$F"
	run -0 --separate-stderr isolated --nobody "$LOOPCTL" attach --dry-run \
		--direct-io=off "$F"
	assert_line "read-only:   yes"
	[[ $stderr == "loopctl: $F: write-protected, attaching read-only" ]] ||
		fail "stderr: $stderr"
	chmod 0000 "$F"
	run -4 isolated --nobody "$LOOPCTL" attach --dry-run "$F"
	assert_output "loopctl: $F: Permission denied"
}

@test "set, detach and cache as nobody: exit 2 for a non-loop path" {
	require_isolation
	require_nobody
	# validation comes first: a not-a-loop path answers exit 2, not 4
	run -2 isolated --nobody "$LOOPCTL" detach /dev/null
	assert_output "loopctl: /dev/null: not a loop device"
	run -2 isolated --nobody "$LOOPCTL" set --direct-io=off /dev/null
	assert_output "loopctl: /dev/null: not a loop device"
	run -2 isolated --nobody "$LOOPCTL" cache /dev/null
	assert_output --partial "loopctl: /dev/null: not a loop device"
}

# A root-only loop node that nobody cannot open: loopctl must give the
# permission message (exit 4) before trying to open it.
@test "set, detach and cache as nobody on a loop device: exit 4" {
	require_isolation
	require_nobody
	run -4 isolated --nobody --loopnode "$LOOPCTL" set --direct-io=off /dev/loop0
	assert_output "loopctl: /dev/loop0: permission denied: changing a loop device needs root (CAP_SYS_ADMIN); run it as root, e.g. with sudo"
	run -4 isolated --nobody --loopnode "$LOOPCTL" detach /dev/loop0
	assert_output "loopctl: /dev/loop0: permission denied: detaching a loop device needs root (CAP_SYS_ADMIN); run it as root, e.g. with sudo"
	run -4 isolated --nobody --loopnode "$LOOPCTL" cache /dev/loop0
	assert_output "loopctl: /dev/loop0: permission denied: reading a loop device's cache needs root (CAP_SYS_ADMIN); run it as root, e.g. with sudo"
	run -4 isolated --nobody --loopnode "$LOOPCTL" attach --direct-io=off "$F" /dev/loop0
	assert_output "loopctl: /dev/loop0: permission denied: attaching a loop device needs root (CAP_SYS_ADMIN); run it as root, e.g. with sudo"
	# the guard itself: the nobody wrapper refuses to run with privileges
	run -0 isolated --nobody id -u
	assert_output "$(id -u nobody)"
}

# --------------------------------------------------------------------
# closed standard descriptors

@test "attach --dry-run with stderr closed: the warnings do not land in the image" {
	run -0 "$LOOPCTL" why "$F"
	grep -q "logical block size" <<<"$output" ||
		skip "$F is not on a block device's file system"
	cp "$F" "$W/img.orig"
	# --offset=100: auto falls back to buffered I/O and warns why
	"$LOOPCTL" attach --dry-run --offset=100 "$F" >/dev/null 2>&- || true
	cmp "$F" "$W/img.orig" || fail "$F was written to"
}

# --------------------------------------------------------------------
# lost output is a failure

# to_full CMD...: CMD >/dev/full 2>$W/err; its status in $full_status.
to_full() {
	full_status=0
	"$@" >/dev/full 2>"$W/err" || full_status=$?
}

# expect_lost: to_full's command exited 1 and said why.
expect_lost() {
	[[ $full_status == 1 ]] ||
		fail "exit $full_status, want 1; stderr: $(<"$W/err")"
	grep -qx 'loopctl: write error: No space left on device' "$W/err" ||
		fail "no write error message: $(<"$W/err")"
}

@test "output lost (stdout is /dev/full): exit 1, not 0, for every command" {
	require_isolation
	to_full "$LOOPCTL" --help
	expect_lost
	to_full "$LOOPCTL" --version
	expect_lost
	to_full "$LOOPCTL" why "$F"
	expect_lost
	to_full isolated "$LOOPCTL" status -J
	expect_lost
	to_full isolated "$LOOPCTL" cache -J
	expect_lost
	to_full isolated --nobody --control "$LOOPCTL" attach --dry-run \
		--direct-io=off "$F"
	expect_lost
}

@test "warnings lost (stderr is /dev/full): exit 1, not 0" {
	run -0 "$LOOPCTL" why "$F"
	grep -q "logical block size" <<<"$output" ||
		skip "$F is not on a block device's file system"
	# --offset=100: auto falls back to buffered I/O and warns why
	full_status=0
	"$LOOPCTL" attach --dry-run --offset=100 "$F" >/dev/null 2>/dev/full ||
		full_status=$?
	[[ $full_status == 1 ]] || fail "exit $full_status, want 1"
}
