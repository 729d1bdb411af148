# SPDX-License-Identifier: MIT
# t_record_relay_sends_on_before_index_answers.sh - the relay sender does not wait for each
# index entry's answer before it sends the next packet (issue 27, cheaper sending: a round trip
# per packet cost the sender a wait and two context switches per 256 KiB).  A relay daemon that
# answers index entries only once 3 wait for their answer (tests/tools/fake_relay.py --mode
# batch; any other command's answer flushes them first, in order) gets the whole recording: no
# "relay lost" warning, every packet counted as sent, none as not sent, and it answered
# several at once.  A sender that waits for each answer gets none: its deadline (--relay-timeout
# 2s) loses the relay.  No timing is asserted: the fake relay never answers a lone entry.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
FAKE=$(dirname "$0")/../tools/fake_relay.py
PY=$(command -v python3) || { echo "SKIP: no python3 for the fake relay"; exit 77; }
FPID=
cleanup() {
	[ -n "$FPID" ] && kill -9 "$FPID" 2> /dev/null
	wait 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT

LOG=$T/fake.log
: > "$LOG"
"$PY" "$FAKE" --mode batch --batch 3 --ports "$T/ports" --log "$LOG" &
FPID=$!
wait_for test -s "$T/ports" || fail "the fake relay did not start"
read -r cp dp < "$T/ports"

# 1 thread, 200,000 events of 32 bytes: ~25 packets of 256 KiB on the CPUs it ran on
"$CLI" record --relay "net://127.0.0.1:$cp:$dp" --session-name batch --relay-timeout 2s --live-timer 0 \
	-o "$T/local" -- "$WL" --threads 1 --events 200000 > "$T/w.out" 2> "$T/w.err" ||
	{ cat "$T/w.err"; fail "record --relay to a relay that answers index entries in batches"; }
if grep -q "until it answers again\|the recording ended before the relay took" "$T/w.err"; then
	cat "$T/w.err"
	fail "the relay was lost: the sender waited for an index entry's answer before sending on"
fi
line=$(grep "^  relay: " "$T/w.err") || { cat "$T/w.err"; fail "no relay line in the summary"; }
echo "  $line"
case $line in *"not sent"*) fail "packets counted as not sent: $line" ;; esac
sent=$(echo "$line" | sed -n 's/^  relay: \([0-9]*\) packets\{0,1\}, .*/\1/p')
got=$(grep -c "^packet " "$LOG")
# the relay got every packet counted as sent, plus the empty packet announcing each stream
[ "$sent" -ge 20 ] || fail "only $sent packets sent: the workload should make ~25"
[ "$got" -ge "$sent" ] || fail "the fake relay received $got packets, the summary says $sent sent"
# a batch of 2 or more answers: that many entries were in flight at once (the recorder's own
# questions flush a batch early, as any command does)
multi=$(awk '$1 == "batched" && $3 >= 2' "$LOG" | wc -l)
[ "$multi" -gt 0 ] || fail "the fake relay never answered 2 index entries at once: the sender waited for each"
echo "  the fake relay received $got packets (with the announcing ones) and answered $multi batches of 2 or more"
"$VERIFY" "$T/local" --written "$(sed -n 's/^written: //p' "$T/w.out")" --no-loss > "$T/verify" 2>&1 ||
	{ cat "$T/verify"; fail "the local copy is not whole"; }
echo "PASS"
