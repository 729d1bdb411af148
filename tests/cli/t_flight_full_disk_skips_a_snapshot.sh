# SPDX-License-Identifier: MIT
# t_flight_full_disk_skips_a_snapshot.sh - a flight recorder whose disk is full skips that
# snapshot (says so, leaves no partial directory) and carries on: once room is made, the next
# trigger's snapshot is whole (babeltrace2, exact accounting); record exits 1 (a snapshot lost).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
. "$(dirname "$0")/../lib/flight.sh"
need_bt2
command -v babeltrace2 > /dev/null || { echo "SKIP: babeltrace2 not installed"; exit 77; }
M=$T/small
mkdir "$M"
# a file system of its own (as t_record_disk_full.sh): 2 MB, of which a ballast file takes all
# but ~100 KB; a snapshot of 20,000 events (~300 KB) cannot fit until the ballast goes
if ! mount -t tmpfs -o size=2048k tmpfs "$M" 2> "$T/mount.err"; then
	echo "SKIP: cannot mount a small tmpfs to fill ($(cat "$T/mount.err")); run as root"
	exit 77
fi
trap 'umount "$M" 2> /dev/null; rm -rf "$T"' EXIT
dd if=/dev/zero of="$M/ballast" bs=4k count=490 2> /dev/null
S=$M/snaps
"$CLI" record --mode overwrite --sb-size 16K --sb-count 64 --snapshot-dir "$S" -- \
	"$FW" --dir "$S" --wait-from 2 --gate "$T/go" --triggers 2 --events 20000 > "$T/out" 2> "$T/err" &
rp=$!
wait_for grep -q "snapshot 1 for program 't1' skipped" "$T/err" || { cat "$T/err"; fail "no skip said"; }
grep "skipped" "$T/err"
grep -q "No space left\|disk is full" "$T/err" || fail "the skip does not say the disk is full"
[ -z "$(ls -A "$S")" ] || { ls -la "$S"; fail "the skipped snapshot left something"; }
rm "$M/ballast"
touch "$T/go.2"
wait $rp
rc=$?
[ $rc -eq 1 ] || { cat "$T/err"; fail "record exited $rc after a skipped snapshot (want 1)"; }
mapfile -t snaps < <(snapshots "$S")
[ ${#snaps[@]} -eq 1 ] || { ls "$S"; cat "$T/err"; fail "${#snaps[@]} snapshots (want t2's)"; }
[ "$(json_field "${snaps[0]}/trigger.json" '["trigger"]["name"]')" = t2 ] || fail "the snapshot is not t2's"
snap_events "${snaps[0]}" > /dev/null
check_accounting "${snaps[0]}/trace" "$(sed -n 's/^trigger 2 written //p' "$T/out")"
grep -q "2 triggers, 1 snapshot written, .* 1 skipped" "$T/err" || { cat "$T/err"; fail "the summary"; }
echo PASS
