# SPDX-License-Identifier: MIT
# t_flight_scan_survives_live_corruption.sh - another process of the same uid writes garbage
# into a live session (tests/tools/corrupt_live.c) while `record --snapshot-on` scans it, in
# each area: ring data, sub-buffer descriptors, control blocks, registry, map header.  For each,
# the recorder does not crash or hang, ends with the program, and its summary's counts stay
# bounded, the snapshots it wrote are whole directories.  Bounded: with the data damaged,
# scanned + unscanned never exceed what the program wrote (+1 %); with a descriptor, control
# block or header forged, an event count read from shared memory is only believed up to what
# the skipped bytes could hold (flight_scan.c: a record is at least a 4-byte header, the
# workload's are at most 64 bytes), so the bound is 16x what was written; with a control block
# or the header forged, the head itself is forged, and the skipped bytes are believed only up to
# what a ring can physically take in the time since the previous visit: the bound is 2^40.  What
# this catches is a count made up from nothing (5 x 10^18 and 1.1 x 10^12 once), not the
# forger's exact effect.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
CORRUPT=${TB_CORRUPT:?}
trap 'touch "$T/stop"; kill $(jobs -p) 2> /dev/null; wait; rm -rf "$T"' EXIT

for area in data desc ctl registry header; do
	echo "== $area"
	S=$T/shm/$area.tb
	rm -f "$T/stop"
	"$CLI" record --session "$S" --mode overwrite --sb-size 16K --sb-count 16 --snapshot-dir "$T/snaps-$area" \
		--snapshot-on 'workload:request_end[status>=450 && route=="/ok"]' --snapshot-on 'workload:request>5ms' \
		--min-interval 200ms --max-snapshots 3 -- \
		"$WL" --requests --threads 2 --events 100000000 --rate 100000 --until-file "$T/stop" \
		> "$T/out" 2> "$T/err" &
	rec=$!
	wait_for test -e "$S" || fail "no session"
	"$CORRUPT" "$S" $area 7 300 > /dev/null 2>&1 || true
	touch "$T/stop"
	wait $rec
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 3 ] || { tail -5 "$T/err"; fail "$area: record exited $rc"; }
	line=$(grep "snapshot-on scanned" "$T/err") || { tail -5 "$T/err"; fail "$area: no summary"; }
	echo "  $line"
	written=$(sed -n 's/^written: //p' "$T/out")
	scanned=$(sed -n 's/.*scanned \([0-9]*\) events.*/\1/p' <<< "$line")
	unscanned=$(sed -n 's/.* \([0-9]*\) unscanned .*/\1/p' <<< "$line")
	[ -n "$written" ] && [ -n "$scanned" ] && [ -n "$unscanned" ] || fail "$area: cannot read the counts"
	bound=$((written + written / 100 + 1000))
	[ $area = data ] || bound=$((16 * written + 1000))
	# a forged control block or header moves the head itself: the skipped bytes are then believed
	# only up to what the ring could physically have taken since the previous visit (64 bytes/ns,
	# flight_scan.c TB_SCAN_MAX_BYTES_PER_NS): bounded by time, not by what was written; what
	# this catches is arithmetic gone wild (1.1 x 10^12 from a forged head once), not the forger
	case $area in ctl|header) bound=$((1 << 40)) ;; esac
	[ $((scanned + unscanned)) -le $bound ] ||
		fail "$area: scanned $scanned + unscanned $unscanned > $bound (written $written)"
	! ls "$T/snaps-$area" | grep -q partial || fail "$area: a partial snapshot left"
done
echo PASS
