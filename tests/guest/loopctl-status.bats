#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl-status.bats - loopctl why and status on bound devices in the
# QEMU guest: what the kernel did, status --json against losetup --list
# --json, and the series' loop statistics.

# Each @test runs in its own subshell by design: LOOPDEV and friends are
# per test.
# shellcheck disable=SC2030,SC2031
load "${BATS_TEST_DIRNAME}/../helpers/loopctl-guest.bash"

@test "why on a bound device explains what the kernel did" {
	scratch_ext4 4k
	image "$SCRATCH_MNT"
	lc_attach --direct-io=auto --sector-size=512 "$IMG"
	run -3 "$LOOPCTL" why "$LOOPDEV"
	assert_line --index 0 "$LOOPDEV: direct I/O is off (requested: auto), backing file $IMG"
	assert_output --partial "sector size 512 is smaller than 4096"
	lc_attach --direct-io=off "$IMG"
	run -3 "$LOOPCTL" why "$LOOPDEV"
	lc_attach --direct-io=off --sector-size=4096 "$IMG"
	run -0 "$LOOPCTL" why "$LOOPDEV"
	assert_line --index 0 "$LOOPDEV: direct I/O is off (requested: off), backing file $IMG"
	assert_output --partial "direct I/O is off only because it was not asked for"
	lc_attach --direct-io=on "$IMG"
	run -0 "$LOOPCTL" why "$LOOPDEV"
	assert_line --index 0 "$LOOPDEV: direct I/O is on (requested: on), backing file $IMG"
}

@test "status --json agrees with losetup --list --json" {
	local devs=() d ours theirs diff
	scratch_ext4 4k
	image "$SCRATCH_MNT"
	lc_attach --direct-io=on "$IMG"
	devs+=("$LOOPDEV")
	lc_attach --direct-io=off --offset=1M --sizelimit=2M "$IMG"
	devs+=("$LOOPDEV")
	lc_attach --direct-io=auto --sector-size=512 --read-only "$IMG"
	devs+=("$LOOPDEV")
	lc_attach --direct-io=on --sector-size=4096 --offset=64K "$IMG"
	devs+=("$LOOPDEV")
	for d in "${devs[@]}"; do
		ours=$("$LOOPCTL" status --json "$d") || fail "status $d"
		theirs=$(losetup --list --json -O NAME,BACK-FILE,OFFSET,SIZELIMIT,DIO,LOG-SEC,RO,AUTOCLEAR "$d") ||
			fail "losetup $d"
		# one jq per device (each exec is slow under TCG): the keys on
		# which the two disagree, and the types of ours (numbers and
		# booleans, not strings)
		diff=$(jq -nr --argjson a "$ours" --argjson b "$theirs" '
			($a.loopdevices[0]) as $x | ($b.loopdevices[0]) as $y |
			([ "name", "back-file", "offset", "sizelimit", "dio",
			   "log-sec", "ro", "autoclear" ][] |
			 select($x[.] != $y[.]) |
			 "\(.): loopctl \($x[.] | tojson), losetup \($y[.] | tojson)"),
			([($x.offset|type), ($x["log-sec"]|type), ($x.dio|type),
			  ($x.ro|type)] | join(",") |
			 select(. != "number,number,boolean,boolean") |
			 "JSON types \(.)")') || fail "$d: jq failed on: $ours / $theirs"
		[[ -z $diff ]] || fail "$d: $diff"
	done
	# all of them at once: status without arguments lists them all
	run -0 "$LOOPCTL" status --json
	for d in "${devs[@]}"; do
		jq -e --arg d "$d" '.loopdevices | map(.name) | index($d) != null' <<<"$output" >/dev/null ||
			fail "$d missing from status --json"
	done
	# --raw --noheadings --output
	run -0 "$LOOPCTL" status --raw --noheadings -O NAME,DIO,LOG-SEC "${devs[0]}"
	assert_output "${devs[0]} on 4096"
}

@test "status --stats: the series' loop statistics, or empty columns" {
	# The statistics of kernel/patches/0005-loop-add-per-device-I-O-statistics.patch
	# ("loop: add per-device I/O statistics").
	scratch_ext4 512
	image "$SCRATCH_MNT"
	lc_attach --direct-io=on "$IMG"
	dd if="$LOOPDEV" of=/dev/null bs=1M count=4 iflag=direct status=none
	run -0 "$LOOPCTL" status -J --stats "$LOOPDEV"
	if [[ -e $LOOPSYS/loop/stat ]]; then
		[[ $(jq '.loopdevices[0]["dio-read-bytes"]' <<<"$output") -ge $((4 * MiB)) ]] ||
			fail "dio-read-bytes: $output"
		[[ $(jq '.loopdevices[0]["buf-read-bytes"]' <<<"$output") == 0 ]] ||
			fail "buf-read-bytes: $output"
		read -ra f <"$LOOPSYS/loop/stat"
		[[ $(jq '.loopdevices[0]["dio-read-bytes"]' <<<"$output") == "${f[1]}" ]] ||
			fail "differs from $LOOPSYS/loop/stat: ${f[*]}"
	else
		[[ $(jq '.loopdevices[0]["dio-read-bytes"]' <<<"$output") == null ]] ||
			fail "no stat file, yet: $output"
		skip "no loop/stat: kernel without the statistics patch (empty columns checked)"
	fi
}
