# SPDX-License-Identifier: MIT
# t_snapshot_live.sh - flight recorder: `tracebuf snapshot` of an overwrite session while the
# producers write at full speed never shows a torn packet (each snapshot verifies completely:
# whole packets, valid records, no duplicates); the final snapshot `record --mode overwrite`
# writes when the command exits keeps the identity.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
trap 'touch "$T/stop"; kill $(jobs -p) 2>/dev/null; wait; rm -rf "$T"' EXIT

S=$T/shm/fr.tb
# the command loops a full-speed workload until told to stop
"$CLI" record -q --mode overwrite --session "$S" --sb-size 16K --sb-count 8 -o "$T/final" -- \
	bash -c "while [ ! -e '$T/stop' ]; do '$WL' --threads 2 --events 200000 --signals; done" > "$T/w.out" &
rp=$!
for i in $(seq 100); do "$CLI" stat "$S" > /dev/null 2>&1 && break; sleep 0.05; done
sleep 0.3
torn=0
for i in $(seq 8); do
	"$CLI" snapshot "$S" -o "$T/snap$i" 2> "$T/snap$i.err" || { cat "$T/snap$i.err"; fail "snapshot $i"; }
	"$VERIFY" "$T/snap$i" > /dev/null || fail "snapshot $i shows invalid data"
	t=$(sed -n 's/.* \([0-9]*\) sub-buffers\{0,1\} reused.*/\1/p' "$T/snap$i.err"); torn=$((torn + ${t:-0}))
	[ -f "$T/snap$i/metadata" ] || fail "snapshot $i has no metadata"
	sleep 0.1
done
echo "8 snapshots valid; $torn sub-buffers reused during a copy were dropped"
"$CLI" stat "$S" | grep -q total || fail "stat"
touch "$T/stop"
wait $rp || fail "record exited $?"
w=$(awk '/^written:/{n += $2} END{print n+0}' "$T/w.out")
"$VERIFY" --written "$w" "$T/final" || fail "final snapshot"
if command -v babeltrace2 >/dev/null 2>&1; then
	babeltrace2 "$T/snap1" > /dev/null 2> "$T/bt.err" || { head -3 "$T/bt.err"; fail "babeltrace2 on a snapshot"; }
fi
echo PASS
