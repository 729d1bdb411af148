# SPDX-License-Identifier: MIT
# t_flight_limits_keep_the_newest_snapshots.sh - --max-snapshots 3 after 10 triggers leaves the
# 3 newest (t8, t9, t10), each removal said in the log; --max-size keeps the newest within the
# size; --min-interval lets one snapshot per trigger name through and counts the others; a
# recorder started again on the same directory numbers on after the snapshots there.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
. "$(dirname "$0")/../lib/flight.sh"
need_bt2
command -v babeltrace2 > /dev/null || { echo "SKIP: babeltrace2 not installed"; exit 77; }

echo "== --max-snapshots 3, 10 triggers"
S=$T/s1
"$CLI" record --mode overwrite --sb-size 16K --sb-count 8 --snapshot-dir "$S" --max-snapshots 3 -- \
	"$FW" --dir "$S" --triggers 10 --events 100 > "$T/out" 2> "$T/err" || { rc=$?; cat "$T/err"; fail "record exited $rc"; }
mapfile -t snaps < <(snapshots "$S")
[ ${#snaps[@]} -eq 3 ] || { ls "$S"; fail "${#snaps[@]} snapshots kept (want 3)"; }
for k in 0 1 2; do
	i=$((k + 8))
	[ "$(json_field "${snaps[$k]}/trigger.json" '["trigger"]["name"]')" = "t$i" ] || fail "kept ${snaps[$k]}, not t$i's"
	case ${snaps[$k]} in */00000$i-* | */0000$i-*) ;; *) fail "${snaps[$k]} is not numbered $i" ;; esac
	snap_events "${snaps[$k]}" > /dev/null
	check_accounting "${snaps[$k]}/trace" "$(sed -n "s/^trigger $i written //p" "$T/out")"
done
[ "$(grep -c 'removed the oldest snapshot .*--max-snapshots 3' "$T/err")" -eq 7 ] || { cat "$T/err"; fail "7 removals not said"; }

echo "== started again on the same directory: numbering goes on"
"$CLI" record -q --mode overwrite --sb-size 16K --sb-count 8 --snapshot-dir "$S" --max-snapshots 3 -- \
	"$FW" --dir "$S" --triggers 1 --events 10 --name again > "$T/out" 2> "$T/err" || { rc=$?; cat "$T/err"; fail "record exited $rc"; }
mapfile -t snaps < <(snapshots "$S")
[ ${#snaps[@]} -eq 3 ] || fail "${#snaps[@]} kept after a restart (want 3)"
case ${snaps[2]} in */000011-*) ;; *) fail "the restarted recorder's snapshot is ${snaps[2]}, not number 11" ;; esac

echo "== --max-size: the newest within the size"
S=$T/s2
"$CLI" record --mode overwrite --sb-size 16K --sb-count 8 --snapshot-dir "$S" --max-size 100K -- \
	"$FW" --dir "$S" --triggers 6 --events 200 > "$T/out" 2> "$T/err" || { rc=$?; cat "$T/err"; fail "record exited $rc"; }
mapfile -t snaps < <(snapshots "$S")
# what the limit counts: the disk blocks of the snapshots' files
total=$(find "$S" -type f -printf '%b\n' | awk '{n += $1} END{print int(n * 512 / 1024)}')
[ ${#snaps[@]} -ge 1 ] && [ ${#snaps[@]} -lt 6 ] || fail "${#snaps[@]} snapshots kept under --max-size 100K"
[ "$(json_field "${snaps[-1]}/trigger.json" '["trigger"]["name"]')" = t6 ] || fail "the newest was not kept"
grep -q "removed the oldest snapshot .*--max-size" "$T/err" || fail "no removal said"
[ ${#snaps[@]} -eq 1 ] || [ "$total" -le 100 ] || fail "$total KiB kept under --max-size 100K"

echo "== --min-interval 3600s: one snapshot of 'same' for 5 calls"
S=$T/s3
"$CLI" record --mode overwrite --sb-size 16K --sb-count 8 --snapshot-dir "$S" --min-interval 3600s -- \
	"$FW" --no-wait --triggers 5 --events 10 --name same > "$T/out" 2> "$T/err" || { rc=$?; cat "$T/err"; fail "record exited $rc"; }
[ "$(snapshots "$S" | wc -l)" -eq 1 ] || { ls "$S"; fail "--min-interval let more than one snapshot through"; }
grep -q "5 triggers, 1 snapshot written, 4 suppressed" "$T/err" || { cat "$T/err"; fail "the summary does not count 4 suppressed"; }
grep -q "trigger 'same' suppressed" "$T/err" || fail "the suppression is not said"
echo PASS
