#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl-concurrency.bats - concurrent loopctl attaches and detaches in
# the QEMU guest: PARALLEL processes at once, ROUNDS rounds; no device
# leaked, none used twice.

# Each @test runs in its own subshell by design: LOOPDEV and friends are
# per test.
# shellcheck disable=SC2030,SC2031
load "${BATS_TEST_DIRNAME}/../helpers/loopctl-guest.bash"

# Processes per round, rounds.
PARALLEL=16
ROUNDS=3

@test "16 concurrent attaches, then 16 concurrent detaches, 3 rounds: no leak, no double use" {
	local round i dir=$BATS_TEST_TMPDIR/par devs names uniq pids rc
	scratch_ext4 512
	mkdir -p "$dir"
	for ((i = 0; i < PARALLEL; i++)); do
		truncate -s 4M "$SCRATCH_MNT/p$i.img"
	done
	for ((round = 1; round <= ROUNDS; round++)); do
		pids=()
		for ((i = 0; i < PARALLEL; i++)); do
			"$LOOPCTL" attach --direct-io=on "$SCRATCH_MNT/p$i.img" \
				>"$dir/out$i" 2>"$dir/err$i" &
			pids+=($!)
		done
		rc=0
		for i in "${!pids[@]}"; do
			wait "${pids[i]}" || {
				rc=1
				echo "round $round attach $i: $(<"$dir/err$i")"
			}
		done
		for ((i = 0; i < PARALLEL; i++)); do
			[[ -s $dir/out$i ]] && defer cleanup_loop "$(<"$dir/out$i")"
		done
		((rc == 0)) || fail "round $round: an attach failed"
		devs=$(cat "$dir"/out* | sort)
		uniq=$(sort -u <<<"$devs")
		[[ $(wc -l <<<"$uniq") == "$PARALLEL" ]] ||
			fail "round $round: $(wc -l <<<"$uniq") distinct devices for $PARALLEL attaches: $devs"
		# each device holds the file its attach was given, with direct I/O
		for ((i = 0; i < PARALLEL; i++)); do
			names=/sys/block/$(basename "$(<"$dir/out$i")")/loop
			[[ $(<"$names/backing_file") == "$SCRATCH_MNT/p$i.img" ]] ||
				fail "round $round: $(<"$dir/out$i") holds $(<"$names/backing_file"), not p$i.img"
			[[ $(<"$names/dio") == 1 ]] || fail "round $round: p$i: dio off"
		done
		pids=()
		for ((i = 0; i < PARALLEL; i++)); do
			"$LOOPCTL" detach "$(<"$dir/out$i")" 2>"$dir/err$i" &
			pids+=($!)
		done
		for i in "${!pids[@]}"; do
			wait "${pids[i]}" || {
				rc=1
				echo "round $round detach $i: $(<"$dir/err$i")"
			}
		done
		((rc == 0)) || fail "round $round: a detach failed"
		assert_nothing_attached
		for ((i = 0; i < PARALLEL; i++)); do
			[[ -z $(losetup -j "$SCRATCH_MNT/p$i.img") ]] ||
				fail "round $round: p$i.img still attached"
		done
	done
}
