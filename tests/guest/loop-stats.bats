#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loop-stats.bats - /sys/block/loopN/loop/stat, added by
# kernel/patches/0005-loop-add-per-device-I-O-statistics.patch ("loop: add
# per-device I/O statistics"): every
# counter must move by exactly what a known workload implies, on a
# direct-I/O loop device and on a buffered one (guest only: util-linux
# losetup on a file on ext4 on the 512-byte scratch disk).
#
# Exact request counts rely on I/O the block layer neither merges nor
# splits: one synchronous O_DIRECT dd request at a time (dd waits for each
# one), 256 KiB at most (64 pages: below the loop queue's 128 segments and
# 1280 KiB max_sectors_kb), and nomerges=2 where requests run concurrently.
# udev's event queue is held for the file (udev_hold), so nothing else
# reads the device behind the test's back; the first test checks that.

load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"

# Field names in the documented order (Documentation/ABI/testing/
# sysfs-block-loop); max_backlog is a high-water mark, the rest counters.
# worker_runs (field 16) came with the worker-run accounting in 0005 and
# matters for 0006 (one run serves every command queued while it runs).
STAT_FIELDS=(dio_read_reqs dio_read_bytes dio_write_reqs dio_write_bytes
	buf_read_reqs buf_read_bytes buf_write_reqs buf_write_bytes
	flush_reqs discard_reqs discard_bytes errors short_io
	queued max_backlog worker_runs)

BACKING_MIB=8

# Find out once, before any per-test work, whether the kernel has the
# patch: the stat file exists only while a device is bound, so bind one.
# (bats 1.8 cannot skip from setup_file: setup() skips on the result.)
# Outside the guest this does nothing: guest_setup skips every test.
setup_file() {
	local img=$BATS_FILE_TMPDIR/probe.img dev
	export LOOP_STAT_MISSING=
	in_guest && ((EUID == 0)) && [[ -c /dev/loop-control ]] || return 0
	truncate -s 1M "$img"
	dev=$(losetup --find --show "$img") || return 1
	[[ -e /sys/block/${dev#/dev/}/loop/stat ]] || LOOP_STAT_MISSING=1
	losetup -d "$dev"
	# Counts must be exact: udev's probing would add reads.
	udev_hold
}

teardown_file() {
	in_guest || return 0
	udev_release
}

setup() {
	guest_setup
	require_loop
	[[ -z $LOOP_STAT_MISSING ]] ||
		skip "no /sys/block/loopN/loop/stat: kernel without the loop statistics patch"
	# 64 MiB: small enough for a test to fill it.
	SCRATCH_FS_SIZE=64M scratch_ext4 512
	BACKING=$SCRATCH_MNT/backing.img
	dd if=/dev/urandom of="$BACKING" bs=1M count="$BACKING_MIB" \
		status=none conv=fsync || fail "cannot write $BACKING"
}

# attach on|off [LOSETUP-ARGS...]: a loop device over $BACKING in LOOPDEV,
# with its stat file in STATFILE; skips on a kernel without the series.
attach() {
	loop_attach --direct-io="$1" "${@:2}" "$BACKING"
	STATFILE=/sys/block/${LOOPDEV#/dev/}/loop/stat
	[[ -e $STATFILE ]] ||
		skip "no $STATFILE: kernel without the loop statistics patch"
	local want=0 dio
	[[ $1 == off ]] || want=1
	dio=$(<"/sys/block/${LOOPDEV#/dev/}/loop/dio")
	[[ $dio == "$want" ]] || fail "$LOOPDEV: direct I/O is not $1 (dio=$dio)"
}

# snap NAME: read the stat file into the array NAME (16 fields, decimal).
snap() {
	local -n _s=$1
	read -ra _s <"$STATFILE" || fail "cannot read $STATFILE"
	((${#_s[@]} == ${#STAT_FIELDS[@]})) ||
		fail "$STATFILE: ${#_s[@]} fields, expected ${#STAT_FIELDS[@]}: ${_s[*]}"
}

# field NAME: index of a field name in STAT_FIELDS.
field() {
	local i
	for i in "${!STAT_FIELDS[@]}"; do
		[[ ${STAT_FIELDS[i]} == "$1" ]] && echo "$i" && return 0
	done
	return 1
}

# delta BEFORE NAME: how much field NAME grew since the snapshot BEFORE.
delta() {
	local -n _b=$1
	local -a now
	local i
	snap now
	i=$(field "$2") || fail "unknown stat field '$2'"
	echo $((now[i] - _b[i]))
}

# current NAME: the field's value now.
current() {
	local -a now
	local i
	snap now
	i=$(field "$1") || fail "unknown stat field '$1'"
	echo "${now[i]}"
}

# expect BEFORE [NAME=VALUE]...: every counter grew since the snapshot
# BEFORE by exactly VALUE (0 for the names not given); max_backlog, a
# high-water mark, must equal its VALUE if given ("any": not checked) and
# not have moved if not given. worker_runs, when not given, must lie
# between 1 and the growth of queued (0 if nothing was queued): every run
# is started by a queued command, and whether the next command finds the
# worker still busy is timing.
expect() {
	local -n _before=$1
	local -A want=()
	local -a now bad=()
	local kv i name got exp
	shift
	for kv in "$@"; do
		field "${kv%%=*}" >/dev/null || fail "unknown stat field '${kv%%=*}'"
		want[${kv%%=*}]=${kv#*=}
	done
	snap now
	for i in "${!STAT_FIELDS[@]}"; do
		name=${STAT_FIELDS[i]}
		if [[ $name == worker_runs && -z ${want[$name]:-} ]]; then
			got=$((now[i] - _before[i]))
			exp=${want[queued]:-0}
			if ((exp == 0)); then
				((got == 0)) || bad+=("$name: expected 0, got $got")
			elif ((got < 1 || got > exp)); then
				bad+=("$name: expected 1 to $exp, got $got")
			fi
			continue
		elif [[ $name == max_backlog ]]; then
			[[ ${want[$name]:-} != any ]] || continue
			got=${now[i]}
			exp=${want[$name]:-${_before[i]}}
		else
			got=$((now[i] - _before[i]))
			exp=${want[$name]:-0}
		fi
		((got == exp)) || bad+=("$name: expected $exp, got $got")
	done
	if ((${#bad[@]})); then
		printf '%s\n' "$STATFILE (deltas; max_backlog absolute):" "${bad[@]}" \
			"before: ${_before[*]}" "after:  ${now[*]}"
		return 1
	fi
}

# Test bodies shared by the dio-on and dio-off variants.

fresh_device_is_zero() {
	local -a s zero=()
	attach "$1"
	snap s
	for _ in "${STAT_FIELDS[@]}"; do zero+=(0); done
	[[ ${s[*]} == "${zero[*]}" ]] ||
		fail "fresh device: ${s[*]} (expected ${zero[*]})"
	# Opening and closing the device reads nothing (udev is held).
	dd if="$LOOPDEV" of=/dev/null bs=4k count=0 status=none
	expect s || fail "open/close moved the counters"
	# The file is read-only, even for root.
	if echo 0 2>/dev/null >"$STATFILE"; then
		fail "$STATFILE accepted a write"
	fi
}

# direct_io_workload READS-FIELD-PREFIX: O_DIRECT on the loop device, so
# its own page cache is out of the way.
direct_io_workload() {
	local p=$1
	local -a s
	snap s
	# 4 reads of 256 KiB, one request each, one at a time: the worker
	# queue never holds more than one.
	dd if="$LOOPDEV" of=/dev/null bs=256k count=4 iflag=direct status=none
	expect s "${p}_read_reqs=4" "${p}_read_bytes=$MiB" queued=4 max_backlog=1
	snap s
	dd if=/dev/zero of="$LOOPDEV" bs=64k count=8 seek=16 oflag=direct \
		status=none
	expect s "${p}_write_reqs=8" "${p}_write_bytes=$((512 * KiB))" queued=8
	# One 512-byte read at an odd sector: one request.
	snap s
	dd if="$LOOPDEV" of=/dev/null bs=512 skip=7 count=1 iflag=direct \
		status=none
	expect s "${p}_read_reqs=1" "${p}_read_bytes=512" queued=1
	# O_DIRECT write and fsync: one write, then exactly one flush
	# (blkdev_fsync -> blkdev_issue_flush; the queue has a write cache).
	snap s
	dd if=/dev/zero of="$LOOPDEV" bs=4k count=1 oflag=direct conv=fsync \
		status=none
	expect s "${p}_write_reqs=1" "${p}_write_bytes=4096" flush_reqs=1 \
		queued=2
}

# page_cache_workload PREFIX: I/O through the loop device's page cache.
page_cache_workload() {
	local p=$1 reqs keep
	local -a s
	snap s
	# 1 MiB of whole pages: each written back once (bytes exact), in 1 to
	# 256 requests depending on how writeback batches them, possibly
	# several at once (max_backlog not checked); fsync adds one flush.
	dd if=/dev/zero of="$LOOPDEV" bs=64k count=16 conv=fsync status=none
	reqs=$(delta s "${p}_write_reqs")
	echo "# $p: writeback of 1 MiB took $reqs requests" >&3
	((reqs >= 1 && reqs <= 256)) ||
		fail "$reqs write requests for 1 MiB of pages"
	expect s "${p}_write_reqs=$reqs" "${p}_write_bytes=$MiB" flush_reqs=1 \
		queued=$((reqs + 1)) max_backlog=any
	# Reads with readahead off: page_cache_sync_ra() reads exactly the
	# missing page and filemap_read() waits for it before the next one:
	# 256 requests of 4 KiB, one at a time. (The writer's close, the
	# last one, dropped the device's page cache.)
	echo 0 >"/sys/block/${LOOPDEV#/dev/}/queue/read_ahead_kb"
	exec {keep}<"$LOOPDEV"
	snap s
	dd if="$LOOPDEV" of=/dev/null bs=64k count=16 skip=32 status=none
	expect s "${p}_read_reqs=256" "${p}_read_bytes=$MiB" queued=256
	# Cached now (the open descriptor keeps the cache): nothing reaches
	# the loop device.
	snap s
	dd if="$LOOPDEV" of=/dev/null bs=64k count=16 skip=32 status=none
	exec {keep}<&-
	expect s
}

discard_workload() {
	local -a s
	snap s
	# One request each: the ranges are aligned to the discard
	# granularity (the ext4 block size) and far below the limits.
	# --force: no O_EXCL and no signature probe (which would read).
	blkdiscard --force -o 0 -l "$MiB" "$LOOPDEV"
	expect s discard_reqs=1 discard_bytes="$MiB" queued=1 max_backlog=1
	snap s
	blkdiscard --force --zeroout -o $((2 * MiB)) -l $((512 * KiB)) "$LOOPDEV"
	expect s discard_reqs=1 discard_bytes=$((512 * KiB)) queued=1
	# The punched range reads back as zeroes.
	cmp -n "$MiB" "$LOOPDEV" /dev/zero || fail "discarded range is not zero"
}

@test "loop stat: 16 fields, all zero after attaching (dio on)" {
	fresh_device_is_zero on
}

@test "loop stat: 16 fields, all zero after attaching (dio off)" {
	fresh_device_is_zero off
}

@test "loop stat: O_DIRECT I/O on a dio device counts on the dio fields" {
	attach on
	direct_io_workload dio
}

@test "loop stat: O_DIRECT I/O on a buffered device counts on the buffered fields" {
	attach off
	direct_io_workload buf
}

@test "loop stat: page-cache I/O and fsync on a dio device" {
	attach on
	page_cache_workload dio
}

@test "loop stat: page-cache I/O and fsync on a buffered device" {
	attach off
	page_cache_workload buf
}

@test "loop stat: discard and write-zeroes on a dio device" {
	attach on
	discard_workload
}

@test "loop stat: discard and write-zeroes on a buffered device" {
	attach off
	discard_workload
}

@test "loop stat: dio read across the end of a shrunk backing file: 2 short reads, 1 error" {
	local -a s
	attach on
	# The device keeps its 8 MiB; the file loses its last 2 KiB.
	truncate -s $((BACKING_MIB * MiB - 2048)) "$BACKING"
	snap s
	# The 4 KiB read gets 2 KiB (iomap clamps O_DIRECT reads to i_size);
	# lo_complete_rq() completes those and requeues the rest; the retry
	# reads 0 bytes and the request ends with EIO: one request, two
	# passes through the worker, two short reads, one error.
	run dd if="$LOOPDEV" of=/dev/null bs=4k count=1 \
		skip=$((BACKING_MIB * 256 - 1)) iflag=direct status=none
	((status != 0)) || fail "the read past the end of the file succeeded"
	expect s dio_read_reqs=1 dio_read_bytes=2048 errors=1 short_io=2 \
		queued=2 max_backlog=1
	# A read entirely beyond the end: one pass, zero bytes, EIO.
	truncate -s $((4 * MiB)) "$BACKING"
	snap s
	run dd if="$LOOPDEV" of=/dev/null bs=4k count=1 skip=1536 iflag=direct \
		status=none
	((status != 0)) || fail "the read past the end of the file succeeded"
	expect s dio_read_reqs=1 errors=1 short_io=1 queued=1
}

@test "loop stat: buffered read across the end of a shrunk backing file: 2 short reads, 1 error" {
	local -a s
	attach off
	truncate -s $((BACKING_MIB * MiB - 2048)) "$BACKING"
	snap s
	# As with direct I/O (the test above), since buffered reads go
	# through lo_rw_aio() too: 2 KiB read, the request advanced and
	# retried, the retry reads nothing and ends with EIO. 6.1 zero-
	# filled the whole request and completed it.
	run dd if="$LOOPDEV" of=/dev/null bs=4k count=1 \
		skip=$((BACKING_MIB * 256 - 1)) iflag=direct status=none
	((status != 0)) || fail "the read past the end of the file succeeded"
	expect s buf_read_reqs=1 buf_read_bytes=2048 errors=1 short_io=2 \
		queued=2 max_backlog=1
}

@test "loop stat: requests queue up behind a worker blocked on a frozen file system" {
	local -a s pids=()
	local n=4 i q=0
	attach off
	echo 2 >"/sys/block/${LOOPDEV#/dev/}/queue/nomerges"
	snap s
	# A write to the backing file takes freeze protection first and
	# sleeps while the backing file system is frozen. First one write, and wait
	# until the worker is provably asleep with it; then the other n - 1
	# can only wait in its queue: the backlog peaks at exactly n - 1.
	fsfreeze -f "$SCRATCH_MNT"
	defer thaw "$SCRATCH_MNT"
	dd if=/dev/zero of="$LOOPDEV" bs=4k count=1 oflag=direct status=none &
	pids+=($!)
	for ((i = 0; i < 300; i++)); do
		loop_worker_frozen && break
		sleep 0.1
	done
	loop_worker_frozen || fail "no kworker asleep on the frozen file system"
	for ((i = 1; i < n; i++)); do
		dd if=/dev/zero of="$LOOPDEV" bs=4k count=1 seek=$((i * 64)) \
			oflag=direct status=none &
		pids+=($!)
	done
	# Wait (bounded) until all n are queued: that happens at submission.
	for ((i = 0; i < 300; i++)); do
		q=$(delta s queued)
		((q >= n)) && break
		sleep 0.1
	done
	((q == n)) || fail "$q of $n requests queued to the worker"
	(($(delta s buf_write_reqs) == 0)) ||
		fail "a write completed on a frozen file system"
	expect s queued=$n max_backlog=$((n - 1)) worker_runs=1 ||
		fail "with the worker blocked on the first request"
	fsfreeze -u "$SCRATCH_MNT"
	for i in "${pids[@]}"; do
		wait "$i" || fail "dd (pid $i) failed"
	done
	# The blocked run serves the n - 1 commands queued behind it: one
	# run in all (6.1 queued its work again for them, so its worker ran
	# a second time and found the list empty: 2 runs).
	expect s buf_write_reqs=$n buf_write_bytes=$((n * 4096)) queued=$n \
		max_backlog=$((n - 1)) worker_runs=1
}

@test "loop stat: concurrent O_DIRECT reads (fio, 16 in flight): totals exact, backlog bounded" {
	command -v fio >/dev/null || skip "no fio"
	local -a s
	local m
	attach on
	echo 2 >"/sys/block/${LOOPDEV#/dev/}/queue/nomerges"
	snap s
	# 1024 random 4 KiB reads, each block at most once (fio's random
	# map), 16 in flight, completing on both CPUs: the per-CPU counters
	# must add up exactly.
	fio --name=stat --filename="$LOOPDEV" --thread --direct=1 \
		--ioengine=libaio --iodepth=16 --rw=randread --bs=4k \
		--size=$((BACKING_MIB * MiB)) --io_size=$((4 * MiB)) \
		--output=/dev/null || fail "fio failed"
	m=$(current max_backlog)
	echo "# max_backlog $m with 16 requests in flight" >&3
	((m >= 1 && m <= 16)) || fail "max_backlog $m with 16 requests in flight"
	expect s dio_read_reqs=1024 dio_read_bytes=$((4 * MiB)) queued=1024 \
		max_backlog="$m"
}

@test "loop stat: turning dio off at run time moves new requests, keeps the counts" {
	local -a s
	attach on
	dd if="$LOOPDEV" of=/dev/null bs=256k count=2 iflag=direct status=none
	snap s
	((s[$(field dio_read_reqs)] == 2)) || fail "dio reads: ${s[*]}"
	losetup --direct-io=off "$LOOPDEV"
	[[ $(<"/sys/block/${LOOPDEV#/dev/}/loop/dio") == 0 ]] || fail "dio still on"
	expect s || fail "LOOP_SET_DIRECT_IO reset or moved the counters"
	dd if="$LOOPDEV" of=/dev/null bs=256k count=2 iflag=direct status=none
	expect s buf_read_reqs=2 buf_read_bytes=$((512 * KiB)) queued=2
}

@test "loop stat: detaching and reattaching starts from zero" {
	local -a s
	local dev
	attach on
	dev=$LOOPDEV
	dd if="$LOOPDEV" of=/dev/null bs=256k count=2 iflag=direct status=none
	dd if=/dev/zero of="$LOOPDEV" bs=4k count=1 oflag=direct conv=fsync \
		status=none
	snap s
	# Worker runs: 1 to 4 (one per queued command unless one finds the
	# worker still busy).
	[[ ${s[*]:0:15} == "2 524288 1 4096 0 0 0 0 1 0 0 0 0 4 1" ]] &&
		((s[15] >= 1 && s[15] <= 4)) ||
		fail "before detaching: ${s[*]}"
	losetup -d "$dev" || fail "losetup -d $dev failed"
	[[ ! -e $STATFILE ]] || fail "$STATFILE still there after detaching"
	# The same device again (LOOP_CONFIGURE), the other mode.
	losetup --direct-io=off "$dev" "$BACKING" || fail "losetup $dev failed"
	snap s
	[[ ${s[*]} == "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0" ]] ||
		fail "after reattaching: ${s[*]}"
	# loop_attach's deferred detach releases it.
}

# Errors: each path's failure counts once on its request field and once
# on errors, with no bytes. The faults come from the scratch disk under
# the backing file system (fail_make_request).

# io_error_counts on|off read|write PREFIX: one 4 KiB O_DIRECT request
# while every bio to the scratch disk fails: it must fail, and count once
# on PREFIX_READ|WRITE_reqs and once on errors, with no bytes.
io_error_counts() {
	local -a s io
	require_fail_make_request
	attach "$1"
	io=(if="$LOOPDEV" of=/dev/null iflag=direct)
	[[ $2 == read ]] || io=(if=/dev/zero of="$LOOPDEV" oflag=direct conv=notrunc)
	"$CACHECTL" evict "$BACKING" || fail "cannot evict $BACKING"
	snap s
	fail_bios "$SCRATCH_DEV"
	run dd "${io[@]}" bs=4k count=1 status=none
	fail_bios_off "$SCRATCH_DEV"
	assert_failure
	expect s "${3}_${2}_reqs=1" errors=1 queued=1 max_backlog=1
}

@test "loop stat: an I/O error under a buffered read: buf_read_reqs=1 errors=1" {
	io_error_counts off read buf
}

@test "loop stat: an I/O error under a direct read: dio_read_reqs=1 errors=1" {
	io_error_counts on read dio
}

@test "loop stat: an I/O error under a direct write: dio_write_reqs=1 errors=1" {
	io_error_counts on write dio
}

@test "loop stat: writeback failing under a flush: flush_reqs=1 errors=1" {
	local -a s
	require_fail_make_request
	attach off
	snap s
	# The write lands in the backing file's page cache...
	dd if=/dev/zero of="$LOOPDEV" bs=4k count=1 oflag=direct conv=notrunc \
		status=none
	expect s buf_write_reqs=1 buf_write_bytes=4096 queued=1 max_backlog=1
	# ... and the fsync of the device (a flush request) writes it back.
	snap s
	fail_bios "$SCRATCH_DEV"
	run sync "$LOOPDEV"
	fail_bios_off "$SCRATCH_DEV"
	assert_failure
	expect s flush_reqs=1 errors=1 queued=1
}

@test "loop stat: a buffered write to a full file system: buf_write_reqs=1 errors=1" {
	local -a s
	# A sparse backing file: writing it needs blocks there are none of.
	rm -f "$BACKING"
	truncate -s "${BACKING_MIB}M" "$BACKING"
	attach off
	fill_fs "$SCRATCH_MNT"
	snap s
	run dd if=/dev/zero of="$LOOPDEV" bs=4k count=1 oflag=direct \
		conv=notrunc status=none
	assert_failure
	expect s buf_write_reqs=1 errors=1 queued=1 max_backlog=1
}

@test "loop stat: writes to a read-only device are refused above loop: no counter moves" {
	local -a s
	require_program "$LOOP_IOCTL"
	attach on --read-only
	snap s
	# 6.1 refuses them in the block layer, before a request exists:
	# blkdev_write_iter() and __blkdev_issue_discard() with EPERM,
	# blkdev_mmap() a writable shared mapping with EINVAL. (The check in
	# loop_handle_cmd() is a second line, counted as an error only if a
	# write ever gets there.)
	run dd if=/dev/zero of="$LOOPDEV" bs=4k count=1 oflag=direct conv=notrunc
	assert_failure
	assert_output --partial "Operation not permitted"
	run blkdiscard --force -o 0 -l "$MiB" "$LOOPDEV"
	assert_failure
	assert_output --partial "Operation not permitted"
	run "$LOOP_IOCTL" write-mmap "$LOOPDEV"
	assert_failure
	assert_output --partial "Invalid argument"
	expect s
}

# The ioctls that reconfigure a bound device keep the counters.
no_reset() {
	local -a s
	snap s
	"$@" || fail "$*: failed"
	expect s || fail "$* moved the counters"
}

@test "loop stat: LOOP_SET_STATUS, LOOP_SET_BLOCK_SIZE and LOOP_CHANGE_FD keep the counters" {
	local copy=$SCRATCH_MNT/copy.img
	require_program "$LOOP_IOCTL"
	cp "$BACKING" "$copy"
	attach on --read-only
	dd if="$LOOPDEV" of=/dev/null bs=256k count=2 iflag=direct status=none
	no_reset "$LOOP_IOCTL" set-status "$LOOPDEV"
	no_reset losetup --sector-size 4096 "$LOOPDEV"
	no_reset "$LOOP_IOCTL" change-fd "$LOOPDEV" "$copy"
	[[ $(<"/sys/block/${LOOPDEV#/dev/}/loop/backing_file") == "$copy" ]] ||
		fail "LOOP_CHANGE_FD did not switch to $copy"
	# Still counting, on the same fields.
	local -a s
	snap s
	dd if="$LOOPDEV" of=/dev/null bs=256k count=1 iflag=direct status=none
	expect s dio_read_reqs=1 dio_read_bytes=$((256 * KiB)) queued=1
}
