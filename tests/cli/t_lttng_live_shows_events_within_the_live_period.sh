# SPDX-License-Identifier: MIT
# t_lttng_live_shows_events_within_the_live_period.sh - issue 27's bound through LTTng's own
# viewer: `record --relay` into a real lttng-relayd (live period 1 s), babeltrace2's lttng-live
# source attached before the first event; every event tb-live-writer writes is printed by the
# viewer, and tb-live-latency (tests/tools/live_latency.c: each line's arrival minus the
# writer's clock read before the write, minus the stalls its per-CPU probes saw the machine
# take) finds the p99 within the live period + 0.5 s, at ~10 and ~1,000 events/s steady and in
# bursts with idle gaps longer than the live period.  The viewer must end by itself when the
# session ends, with nothing on its stderr but format 4's one line.  A recorder that keeps a
# slow ring's events until its packet fills (minutes at 10 events/s) fails it whatever the load.
# The p50/p99 it prints are docs/BENCHMARKS.md's lttng-live figures.
# Skips (77) when lttng-relayd or babeltrace2 is missing.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/relayd.sh"
command -v lttng-relayd > /dev/null || { echo "SKIP: lttng-relayd not installed (apt-get install lttng-tools)"; exit 77; }
command -v babeltrace2 > /dev/null || { echo "SKIP: babeltrace2 not installed"; exit 77; }
PY=$(command -v python3) || { echo "SKIP: no python3"; exit 77; }
LW=${TB_LIVE_WRITER:?}; LL=${TB_LIVE_LATENCY:?}
BOUND_MS=1500 # live period 1 s + 0.5 s
PIDS=
cleanup() {
	for p in $PIDS; do kill -9 "$p" 2> /dev/null; done
	wait 2> /dev/null
	[ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT

start_relayd "$T/relay-out"
export LP
sessions() { babeltrace2 query src.ctf.lttng-live sessions --params="url=\"net://127.0.0.1:$LP\"" 2> /dev/null; }
export -f sessions

# live NAME N WRITER-ARGS...: the writer waits for the viewer; the viewer's latency judged
live() {
	local name=$1 n=$2
	shift 2
	rm -f "$T/go"
	"$CLI" record -q --relay "net://127.0.0.1:$CP:$DP" --session-name "$name" --hostname hostl --live-period 1s ${EXTRA:-} -- \
		"$LW" "$@" --log "$T/$name.log" --wait-file "$T/go" > "$T/$name.w" 2> "$T/$name.rec" &
	local rp=$!
	PIDS="$PIDS $rp"
	wait_for bash -c "sessions | grep -q 'host/hostl/$name'" ||
		{ cat "$T/$name.rec"; fail "$name: the live session is not listed by the relay daemon"; }
	"$LL" --mode dump --log "$T/$name.log" --events "$n" --bound-ms $BOUND_MS -- \
		babeltrace2 --input-format=lttng-live "net://127.0.0.1:$LP/host/hostl/$name" \
		--params='session-not-found-action="end"' > "$T/$name.lat" 2> "$T/$name.viewer" &
	local lp=$!
	PIDS="$PIDS $lp"
	# attached: the relay daemon counts the viewer as a client of the session
	wait_for bash -c "sessions | grep -B8 'host/hostl/$name' | grep -q 'client-count: 1'" ||
		{ cat "$T/$name.viewer"; sessions; fail "$name: the viewer did not attach"; }
	touch "$T/go"
	wait "$rp" || { cat "$T/$name.rec" "$T/$name.w"; fail "$name: record exited $?"; }
	wait_for sh -c "! kill -0 $lp 2> /dev/null" || fail "$name: the viewer did not end after the session"
	wait "$lp"
	local rc=$?
	echo "  $name: $(cat "$T/$name.lat")"
	grep -v 'User field found in packet header: ignoring: name="tb_lost_by_cause"' "$T/$name.viewer" > "$T/$name.other"
	[ ! -s "$T/$name.other" ] || { head -20 "$T/$name.other"; fail "$name: babeltrace2's lttng-live viewer complained"; }
	[ $rc = 0 ] || fail "$name: visibility latency through lttng-live"
}

echo "== lttng-live visibility latency, live period 1 s (bound ${BOUND_MS} ms)"
live steady10 40 --rate 10 --seconds 4
live steady1k 4000 --rate 1000 --seconds 4
live bursts 3000 --burst 1000 --gap 1300 --bursts 3
echo PASS
