# SPDX-License-Identifier: MIT
# t_record_relay_live_is_monotonic.sh - what the relay daemon is told never goes back in time,
# per stream (issue 27): a random schedule (tests/tools/live_schedule.py: bursts of short-lived
# processes, idle gaps longer than the flush period, writers pinned or moving between CPUs with
# sched_setaffinity, slow writers living across gaps) recorded with `record --relay` into a real
# lttng-relayd, followed from the start by babeltrace2's lttng-live source.  The viewer must
# print every event once, in each thread's order (its `seq`), exactly the events the local copy
# holds and the program wrote, with nothing on its stderr ("Message's timestamp is less than
# lttng-live's message iterator's last returned timestamp" was the failure).
# SEED=N replays a run (the seed is printed); SECONDS_=N sets the schedule's length (12).
# Skips (77) when lttng-relayd or babeltrace2 is missing.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/relayd.sh"
command -v lttng-relayd > /dev/null || { echo "SKIP: lttng-relayd not installed (apt-get install lttng-tools)"; exit 77; }
command -v babeltrace2 > /dev/null || { echo "SKIP: babeltrace2 not installed"; exit 77; }
PY=$(command -v python3) || { echo "SKIP: no python3"; exit 77; }
SCHED=$(dirname "$0")/../tools/live_schedule.py
SEED=${SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
LEN=${SECONDS_:-12}
echo "seed $SEED (replay: SEED=$SEED)"
PIDS=
cleanup() {
	touch "$T/go"
	for p in $PIDS; do kill -9 "$p" 2> /dev/null; done
	wait 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT

OUT=$T/relay-out
start_relayd "$OUT"

# the schedule waits for $T/go: the viewer is attached before the first event
"$CLI" record --relay "net://127.0.0.1:$CP:$DP" --session-name mono --hostname hostm --vtid \
	--live-timer 100ms --flush-period 250ms -o "$T/local" -- "$PY" "$SCHED" "$WL" "$SEED" "$LEN" "$T/go" \
	> "$T/sched.out" 2> "$T/rec.err" &
RP=$!
PIDS="$PIDS $RP"
export LP
sessions() { babeltrace2 query src.ctf.lttng-live sessions --params="url=\"net://127.0.0.1:$LP\"" 2> /dev/null; }
export -f sessions
wait_for bash -c "sessions | grep -q 'host/hostm/mono'" ||
	{ cat "$T/rec.err"; fail "the live session is not listed by the relay daemon"; }
babeltrace2 --input-format=lttng-live "net://127.0.0.1:$LP/host/hostm/mono" \
	--params='session-not-found-action="end"' > "$T/viewer.out" 2> "$T/viewer.err" &
VP=$!
PIDS="$PIDS $VP"
# attached: the relay daemon counts it as a client of the session
wait_for bash -c "sessions | grep -B8 'host/hostm/mono' | grep -q 'client-count: 1'" ||
	{ cat "$T/viewer.err"; sessions; fail "the viewer did not attach"; }
touch "$T/go"
wait "$RP" || { cat "$T/rec.err" "$T/sched.out"; fail "record exited $?"; }
wait_for sh -c "! kill -0 $VP 2> /dev/null" || fail "the viewer did not end after the session"
wait "$VP"
vrc=$?
W=$(sed -n 's/^written: //p' "$T/sched.out" | tail -1)
[ -n "$W" ] && [ "$W" -gt 0 ] || { cat "$T/sched.out"; fail "the schedule wrote nothing"; }
echo "  schedule: $(grep -c start "$T/sched.out") processes, $(grep -c idle "$T/sched.out") idle gaps, $W events"
# the one line babeltrace2 prints for every trace of format 4 (the loss causes
# in the packet header, docs/CTF.md "Losses by cause") is expected; any other is not
grep -v 'User field found in packet header: ignoring: name="tb_lost_by_cause"' "$T/viewer.err" > "$T/viewer.other"
if [ -s "$T/viewer.other" ] || [ "$vrc" != 0 ]; then
	echo "-- viewer (exit $vrc):"; head -20 "$T/viewer.other"; echo "-- schedule:"; cat "$T/sched.out"
	fail "babeltrace2's lttng-live viewer failed (seed $SEED)"
fi
"$VERIFY" "$T/local" --written "$W" --no-loss > "$T/verify.out" 2>&1 || { cat "$T/verify.out"; fail "the local copy"; }
babeltrace2 "$T/local" > "$T/local.txt" 2> "$T/local.err" || { cat "$T/local.err"; fail "babeltrace2 on the local copy"; }
"$PY" - "$T/viewer.out" "$T/local.txt" "$W" << 'EOF' || fail "the viewer's events are not the program's (seed $SEED)"
import re, sys
pat = re.compile(r"workload:tick: .*\{ vtid = (\d+) \}, \{ thread = \d+, seq = (\d+),")
def events(path):
    out = []
    for line in open(path):
        m = pat.search(line)
        if m:
            out.append((int(m.group(1)), int(m.group(2))))
    return out
view, local, written = events(sys.argv[1]), events(sys.argv[2]), int(sys.argv[3])
bad = 0
nxt = {}
for tid, seq in view:  # once each, in each thread's order
    if seq != nxt.get(tid, 0):
        if bad < 5:
            print(f"thread {tid}: seq {seq} where {nxt.get(tid, 0)} was due")
        bad += 1
    nxt[tid] = seq + 1
if len(view) != written or sorted(view) != sorted(local):
    print(f"viewer {len(view)} events, local copy {len(local)}, written {written}")
    bad += 1
print(f"  the viewer printed {len(view)} events of {len(nxt)} threads, in order, once each" if not bad else "")
sys.exit(1 if bad else 0)
EOF
echo PASS
