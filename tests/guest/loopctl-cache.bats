#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# loopctl-cache.bats - loopctl cache in the QEMU guest: the report against
# /proc/meminfo, for a buffered and a direct-I/O device.

# Each @test runs in its own subshell by design: LOOPDEV and friends are
# per test.
# shellcheck disable=SC2030,SC2031
load "${BATS_TEST_DIRNAME}/../helpers/loopctl-guest.bash"

# Size of the cache-report image (MiB).
CACHE_MIB=${NBIO_LOOPCTL_CACHE_MIB:-64}

# cache_case MODE: read the whole device, then compare the cache report
# with /proc/meminfo. A raw read of /dev/loopN caches the device's pages
# (counted as Buffers) and, with buffered loop I/O, the backing file's
# pages too (Cached); with direct I/O the backing file stays out. The
# device's own cache lives only while someone holds it open (6.1 drops
# it on the last close: blkdev_put() -> blkdev_flush_mapping()), so the
# test holds it, as a mounted file system would.
cache_case() {
	local b0 c0 b1 c1 json dev back dbuf dcached tol
	scratch_ext4 512
	image "$SCRATCH_MNT" "$CACHE_MIB"
	lc_attach --direct-io="$1" "$IMG"
	exec {LOOPFD}<"$LOOPDEV"
	defer eval 'exec {LOOPFD}<&-'
	drop_caches
	json=$("$LOOPCTL" cache --json "$LOOPDEV") || fail "cache failed"
	[[ $(jq '.loopcache[0]["back-cached"]' <<<"$json") -lt $((MiB)) ]] ||
		fail "backing file cached before the read: $json"
	b0=$(meminfo Buffers)
	c0=$(meminfo Cached)
	dd if="$LOOPDEV" of=/dev/null bs=1M status=none || fail "read failed"
	b1=$(meminfo Buffers)
	c1=$(meminfo Cached)
	json=$("$LOOPCTL" cache --json "$LOOPDEV") || fail "cache failed"
	dev=$(jq '.loopcache[0].cached' <<<"$json")
	back=$(jq '.loopcache[0]["back-cached"]' <<<"$json")
	dbuf=$(((b1 - b0) * 1024))
	dcached=$(((c1 - c0) * 1024))
	tol=$((CACHE_MIB * MiB / 10))
	# the measurement, in the TAP output whatever the verdict
	echo "# $1: device cached $dev, backing cached $back;" \
		"Buffers +$dbuf, Cached +$dcached (bytes)" >&3
	[[ $(jq '.loopcache[0].size' <<<"$json") == $((CACHE_MIB * MiB)) ]] ||
		fail "size: $json"
	[[ $(jq '.loopcache[0]["back-size"]' <<<"$json") == $((CACHE_MIB * MiB)) ]] ||
		fail "back-size: $json"
	((dev >= CACHE_MIB * MiB - tol)) || fail "device pages not cached: $json"
	# meminfo agrees with the report, within 10 %
	((dbuf > dev - tol && dbuf < dev + tol)) ||
		fail "Buffers grew by $dbuf, the report says the device has $dev cached"
	((dcached > back - tol && dcached < back + tol)) ||
		fail "Cached grew by $dcached, the report says the backing file has $back cached"
	if [[ $1 == off ]]; then
		((back >= CACHE_MIB * MiB - tol)) ||
			fail "buffered: the backing file should be cached too (double cache): $json"
	else
		((back < tol)) || fail "direct I/O: the backing file was cached: $json"
	fi
	# the human table says the same
	run -0 "$LOOPCTL" cache "$LOOPDEV"
	assert_line --index 0 --regexp '^NAME +DIO +SIZE +CACHED +BACK-FILE +BACK-SIZE +BACK-CACHED$'
	# closing the last holder drops the device's cache, not the file's
	exec {LOOPFD}<&-
	json=$("$LOOPCTL" cache --json "$LOOPDEV") || fail "cache failed"
	[[ $(jq '.loopcache[0].cached' <<<"$json") == 0 ]] ||
		fail "device cache survived the last close: $json"
	[[ $(jq '.loopcache[0]["back-cached"]' <<<"$json") == "$back" ]] ||
		fail "backing file cache changed on close: $json"
}

@test "cache report, buffered: the backing file fills the page cache too, meminfo agrees" {
	cache_case off
}

@test "cache report, direct I/O: the backing file stays out of the page cache, meminfo agrees" {
	cache_case on
}
