# SPDX-License-Identifier: MIT
# t_record_relay_never_holds_the_recorder.sh - a misbehaving relay daemon
# (tests/tools/fake_relay.py: the handshake is proper, then one fault) never holds the
# program or the local copy.  Block mode with small rings (--sb-size 16K --sb-count 4) and the
# longest producer wait (--block-timeout 10s: the 100 ms default expired under valgrind's slow
# recorder and dropped an event, a verdict that depended on load), where a recorder held by its
# relay holds the producers too (a dripped reply takes 12 s, longer than any one wait):
#   drip     replies one byte every 4 s (a whole reply in 12 s; each byte within the former
#            per-recv() timeout of 5 s): CMD ends before the relay finished a single dripped
#            reply, and so does the recorder;
#   stall    never answers after the handshake (--relay-timeout 30s): CMD and the recorder end
#            while the first connection is still stalled (no reconnection: the deadline never
#            came);
#   noread   never reads the data connection (30 s deadline): the same;
#   garbage  replies with random bytes: CMD ends, the relay is said lost;
#   SIGTERM  to a recorder whose relay stalls (30 s deadline): it exits without a reconnection,
#            i.e. long before that deadline.
# Each time the local copy is whole: tb-verify --no-loss with the count CMD wrote, and the
# summary counts what the relay did not get.  No timing is asserted: every verdict is an order
# of events (CMD's end, the fake relay's log), and a hang is caught by wait_for's guard.
# RT= (empty) in the environment runs the stall/noread cases with the recorder's default
# relay deadline (for a build without --relay-timeout).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/relayd.sh" # start_fake
PY=$(command -v python3) || { echo "SKIP: no python3 for the fake relay"; exit 77; }
RT=${RT---relay-timeout 30s}
PIDS=
cleanup() {
	for p in $PIDS; do kill -9 "$p" 2> /dev/null; done
	wait 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT

# stop_fake: the fake relay of the case is killed (by its pid)
stop_fake() { kill -9 "$FPID" 2> /dev/null; wait "$FPID" 2> /dev/null; }
alive() { kill -0 "$1" 2> /dev/null; }

# run_case MODE [RECORD OPTIONS]: record with the fake relay; CMD copies the fake relay's log
# the moment it ends ($T/MODE.at-cmd-end), the recorder's exit code in $RC
run_case() {
	local mode=$1
	shift
	start_fake "$mode"
	"$CLI" record --relay "$FURL" --session-name "$mode" --mode block --block-timeout 10s --sb-size 16K --sb-count 4 "$@" \
		-o "$T/$mode" -- sh -c "\"$WL\" --threads 2 --events 50000 > \"$T/$mode.w\"; cp \"$FLOG\" \"$T/$mode.at-cmd-end\"" \
		> /dev/null 2> "$T/$mode.err" &
	local rp=$!
	PIDS="$PIDS $rp"
	wait_for eval "! alive $rp" || { cat "$T/$mode.err" "$FLOG"; fail "$mode: the recorder is still running (held by its relay)"; }
	wait "$rp"
	RC=$?
	cp "$FLOG" "$T/$mode.at-exit"
	[ -f "$T/$mode.at-cmd-end" ] || { cat "$T/$mode.err"; fail "$mode: CMD did not end"; }
	local w
	w=$(sed -n 's/^written: //p' "$T/$mode.w" | tail -1)
	[ -n "$w" ] || fail "$mode: the workload did not say what it wrote"
	"$VERIFY" "$T/$mode" --written "$w" --no-loss > "$T/$mode.verify" 2>&1 ||
		{ cat "$T/$mode.verify" "$T/$mode.err"; fail "$mode: the local copy is not whole"; }
	grep -q "relay: .*not sent" "$T/$mode.err" || { cat "$T/$mode.err"; fail "$mode: the summary does not count what the relay did not get"; }
	echo "  $mode: exit $RC, local copy whole ($w events); $(grep -c '^control' "$T/$mode.at-exit") control connection(s)"
	stop_fake
}

echo "== drip: one reply byte every 4 s"
run_case drip
grep -q '^dripping' "$T/drip.at-exit" || { cat "$T/drip.err"; fail "drip: the fake relay never dripped (the test tests nothing)"; }
grep -q '^dripped' "$T/drip.at-cmd-end" && fail "drip: CMD ended only after a whole dripped reply (held by the relay)"
grep -q '^dripped' "$T/drip.at-exit" && fail "drip: the recorder waited for a whole dripped reply before it exited"
[ "$RC" = 0 ] || { cat "$T/drip.err"; fail "drip: exit $RC, want 0 (the local copy is whole)"; }

for mode in stall noread; do
	echo "== $mode"
	# shellcheck disable=SC2086 # RT: options, split on purpose
	run_case "$mode" $RT
	[ "$(grep -c '^control' "$T/$mode.at-cmd-end")" = 1 ] ||
		{ cat "$T/$mode.at-cmd-end"; fail "$mode: CMD ended only after the recorder gave its relay up (held by it)"; }
	[ "$(grep -c '^control' "$T/$mode.at-exit")" = 1 ] ||
		{ cat "$T/$mode.at-exit"; fail "$mode: the recorder exited only after its relay deadline"; }
	[ "$RC" = 0 ] || { cat "$T/$mode.err"; fail "$mode: exit $RC, want 0"; }
done
grep -q '^packet' "$T/noread.at-exit" && fail "noread: the fake relay read a packet (the test tests nothing)"

echo "== garbage replies"
run_case garbage
grep -q "relay .*lost\|relay net://.*: " "$T/garbage.err" || { cat "$T/garbage.err"; fail "garbage: the relay's loss is not said"; }
[ "$RC" = 0 ] || { cat "$T/garbage.err"; fail "garbage: exit $RC, want 0"; }

echo "== SIGTERM while the relay stalls"
start_fake stall
"$CLI" record --relay "$FURL" --session-name term $RT -o "$T/term" -- \
	"$WL" --threads 1 --events 2000 --wait-file "$T/never" > "$T/term.w" 2> "$T/term.err" &
rp=$!
PIDS="$PIDS $rp"
# the flusher closes the first packet within a period; its stream's ADD_STREAM stalls
wait_for grep -q '^written: ' "$T/term.w" || { cat "$T/term.err"; fail "SIGTERM: the workload did not write"; }
wait_for grep -q '^stalling' "$T/stall.log" ||
	{ cat "$T/stall.log" "$T/term.err"; fail "SIGTERM: the fake relay never stalled"; }
kill -TERM "$rp"
wait_for eval "! alive $rp" || fail "SIGTERM: the recorder did not exit"
wait "$rp"
rc=$?
[ "$rc" = 143 ] || { cat "$T/term.err"; fail "SIGTERM: exit $rc, want 143 (CMD's death by SIGTERM)"; }
[ "$(grep -c '^control' "$T/stall.log")" = 1 ] ||
	{ cat "$T/stall.log"; fail "SIGTERM: the recorder exited only after its relay deadline"; }
w=$(sed -n 's/^written: //p' "$T/term.w" | tail -1)
"$VERIFY" "$T/term" --written "$w" > "$T/term.verify" 2>&1 || { cat "$T/term.verify"; fail "SIGTERM: the local copy is not whole"; }
echo "  SIGTERM: exit $rc, local copy whole ($w events)"
stop_fake
echo PASS
