#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loop-cgroup.bats - loop charges the backing file's I/O to the cgroup
# that issued it. 6.1's loop_queue_rq() records the blkcg (and memcg) of
# each request; loop_queue_work() hands the command to a worker of its
# own for that blkcg, and loop_handle_cmd() runs it with
# kthread_associate_blkcg() and set_active_memcg(), so the I/O on the
# backing disk and the backing file's page cache are the issuing
# cgroup's, not the root's. Without that, the cgroup's io.stat would
# show the loop device and not the disk under it.
#
# This is the path that
# kernel/patches/0006-loop-let-one-worker-run-serve-every-command-queued-w.patch
# ("loop: let one worker run serve every command queued while it runs")
# changes for every per-cgroup worker: it passes on 6.1 too, and guards
# the charging and the per-worker busy flag against a change of dispatch.
# It needs CONFIG_BLK_CGROUP and CONFIG_MEMCG, which only the debug
# flavour has (kernel/config/debug.config): it is in VM_DEBUG_TESTS, skips
# on a kernel without them and fails on the debug kernel if they are off.

load "${BATS_TEST_DIRNAME}/../helpers/guest.bash"

CGROOT=/sys/fs/cgroup

setup() {
	guest_setup
	require_loop
	require_cgroup_controllers
	scratch_ext4 512
	BACKING=$SCRATCH_MNT/backing.img
	make_file_mib "$BACKING" 32
	DISK=$(majmin "$SCRATCH_DEV")
}

teardown() {
	guest_teardown
}

# require_cgroup_controllers: cgroup v2 mounted on $CGROOT with the io
# and memory controllers enabled for its children.
require_cgroup_controllers() {
	local why=
	if ! mountpoint -q "$CGROOT" &&
		! mount -t cgroup2 cgroup2 "$CGROOT" 2>/dev/null; then
		why="no cgroup v2 (CONFIG_CGROUPS)"
	elif ! grep -qw io "$CGROOT/cgroup.controllers" ||
		! grep -qw memory "$CGROOT/cgroup.controllers"; then
		why="no io or memory controller (CONFIG_BLK_CGROUP, CONFIG_MEMCG): $(<"$CGROOT/cgroup.controllers")"
	fi
	if [[ -n $why ]]; then
		[[ ${NBIO_FLAVOUR:-} != debug ]] || fail "the debug kernel has $why"
		skip "$why; the debug flavour has them"
	fi
	echo "+io +memory" >"$CGROOT/cgroup.subtree_control" ||
		fail "cannot enable the io and memory controllers"
}

# new_cgroup NAME: a child cgroup, removed in teardown; its path in CG.
new_cgroup() {
	CG=$CGROOT/nbio-$1-$$
	mkdir "$CG" || fail "cannot create cgroup $CG"
	defer rmdir "$CG"
}

# in_cgroup CG CMD [ARG...]: run CMD (a function too) as a member of
# cgroup CG, in a subshell.
in_cgroup() {
	(
		echo "$BASHPID" >"$1/cgroup.procs" || exit
		shift
		"$@"
	)
}

# io_stat CG DEV FIELD: FIELD (rbytes, wbytes, ...) of DEV in CG's
# io.stat; 0 when DEV has no line there.
io_stat() {
	awk -v d="$2" -v f="$3" '$1 == d {
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				if (kv[1] == f)
					v = kv[2]
			}
		}
		END { print v + 0 }' "$1/io.stat"
}

# memory_stat CG FIELD: a field of CG's memory.stat, in bytes.
memory_stat() {
	awk -v f="$2" '$1 == f { print $2 }' "$1/memory.stat"
}

# expect_at_least WHAT GOT WANT
expect_at_least() {
	echo "# $1: $2 (want >= $3)" >&3
	(($2 >= $3)) || fail "$1 is $2, want at least $3"
}

MiB8=$((8 << 20))

@test "cgroup: direct reads through a dio loop device are charged to the reader's cgroup on the disk below" {
	local loopdisk
	loop_attach --direct-io=on "$BACKING"
	[[ $(<"/sys/block/${LOOPDEV#/dev/}/loop/dio") == 1 ]] || fail "dio is off"
	loopdisk=$(majmin "$LOOPDEV")
	new_cgroup reader
	in_cgroup "$CG" dd if="$LOOPDEV" of=/dev/null bs=1M count=8 \
		iflag=direct status=none || fail "dd failed"
	expect_at_least "reader's rbytes on the loop device" \
		"$(io_stat "$CG" "$loopdisk" rbytes)" "$MiB8"
	expect_at_least "reader's rbytes on the backing disk ($DISK)" \
		"$(io_stat "$CG" "$DISK" rbytes)" "$MiB8"
}

@test "cgroup: direct writes through a dio loop device are charged to the writer's cgroup on the disk below" {
	loop_attach --direct-io=on "$BACKING"
	new_cgroup writer
	in_cgroup "$CG" dd if=/dev/zero of="$LOOPDEV" bs=1M count=8 \
		oflag=direct conv=fsync status=none || fail "dd failed"
	expect_at_least "writer's wbytes on the backing disk ($DISK)" \
		"$(io_stat "$CG" "$DISK" wbytes)" "$MiB8"
}

@test "cgroup: a buffered loop device puts the backing file's page cache in the reader's memory cgroup" {
	local file0
	loop_attach --direct-io=off "$BACKING"
	new_cgroup cache
	file0=$(memory_stat "$CG" file)
	in_cgroup "$CG" dd if="$LOOPDEV" of=/dev/null bs=1M count=8 \
		iflag=direct status=none || fail "dd failed"
	# The reader's O_DIRECT reads leave no page cache of the loop
	# device; what its cgroup holds is the backing file's, read by
	# loop's worker on the reader's behalf.
	expect_at_least "reader's file memory" \
		"$(($(memory_stat "$CG" file) - file0))" "$MiB8"
	expect_at_least "reader's rbytes on the backing disk ($DISK)" \
		"$(io_stat "$CG" "$DISK" rbytes)" "$MiB8"
}

@test "cgroup: verified writes from two cgroups and the root at once, direct I/O flipping" {
	local a b i cgs pids=() pid togglepid rc=0
	loop_attach --direct-io=on "$BACKING"
	new_cgroup a
	a=$CG
	new_cgroup b
	b=$CG
	(
		while :; do
			losetup --direct-io=off "$LOOPDEV"
			losetup --direct-io=on "$LOOPDEV"
			sleep 0.3
		done
	) &
	togglepid=$!
	defer stop_background "$togglepid"
	# Three writers on separate 8 MiB ranges: two per-cgroup workers and
	# the root worker busy at once, each block checked when read back.
	cgs=("$a" "$b" "$CGROOT")
	for i in 0 1 2; do
		in_cgroup "${cgs[i]}" fio --name=w --filename="$LOOPDEV" \
			--direct=1 --ioengine=libaio --iodepth=16 --rw=randwrite \
			--bs=4k --offset=$((i * 8))M --size=8M --verify=crc32c \
			--verify_fatal=1 --verify_state_save=0 --do_verify=1 \
			--output=/dev/null &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || rc=1
	done
	stop_background "$togglepid"
	((rc == 0)) || fail "a writer failed (data corrupted or I/O error)"
	expect_at_least "cgroup a's wbytes on the backing disk" \
		"$(io_stat "$a" "$DISK" wbytes)" 1
	expect_at_least "cgroup b's wbytes on the backing disk" \
		"$(io_stat "$b" "$DISK" wbytes)" 1
}

# dying_cgroups: removed cgroups still held by a reference.
dying_cgroups() {
	awk '$1 == "nr_dying_descendants" { print $2 }' "$CGROOT/cgroup.stat"
}

@test "cgroup: a removed cgroup's worker holds it until the device is detached" {
	local dying0 cg i
	LOOPDEV=$(losetup --find --show --direct-io=on "$BACKING") ||
		fail "losetup failed"
	defer detach_if_bound "$LOOPDEV"
	dying0=$(dying_cgroups)
	cg=$CGROOT/nbio-gone-$$
	mkdir "$cg" || fail "cannot create cgroup $cg"
	in_cgroup "$cg" dd if="$LOOPDEV" of=/dev/null bs=1M count=1 \
		iflag=direct status=none || fail "dd failed"
	rmdir "$cg" || fail "cannot remove $cg"
	# The worker that served the cgroup keeps a reference to it; it is
	# freed from the idle list, 60 s after its last run or at detach.
	# A worker left off that list would hold the cgroup for good.
	sleep 2
	echo "# dying cgroups: $dying0 before, $(dying_cgroups) after rmdir" >&3
	(($(dying_cgroups) > dying0)) ||
		fail "the removed cgroup was released while its worker lived"
	losetup -d "$LOOPDEV" || fail "detach failed"
	# Released through RCU and a work item: give it 30 s under TCG.
	for ((i = 0; i < 150; i++)); do
		(($(dying_cgroups) > dying0)) || break
		sleep 0.2
	done
	echo "# dying cgroups after detach: $(dying_cgroups), $((i / 5)) s after it" >&3
	(($(dying_cgroups) == dying0)) ||
		fail "the removed cgroup is still held after the detach"
}
