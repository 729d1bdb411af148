# SPDX-License-Identifier: MIT
# t_record_relay.sh - `tracebuf record --relay` streams to a real lttng-relayd (its own loopback
# ports and output directory, stopped by its pid):
#   - the relay daemon's copy of the trace is whole: babeltrace2 reads written == delivered with
#     nothing discarded, tracebuf's reader finds the same count, and its stream files hold the
#     local copy's packets after the empty packet that announced each stream, packet by packet
#     (tests/lib/relay_copy.py: the same header and content, packet_size the content rounded up
#     to 8 bytes, the index entries alike; no empty stream file for a CPU that wrote nothing);
#   - two recorders ("two hosts": other session names and host names) into one relay daemon at
#     once: both traces whole;
#   - live: babeltrace2's lttng-live source receives events while the program still runs (the
#     program is held alive until the viewer has shown some);
#   - a relay that cannot be reached: exit 1 before CMD runs, the message names the address;
#   - the relay daemon killed -9 mid-run: CMD finishes normally, the local copy is whole, the
#     summary counts what was not sent;
#   - relay only (no -o): nothing is written here, the relay daemon's copy is whole; its daemon
#     killed and back: the summary's accounting holds with the events not sent as lost to the
#     relay, and the new relay session says so; killed for good: exit 1, said;
#   - a relay daemon that stops answering (SIGSTOP): the program is never held up, the recording
#     ends by itself, the local copy is whole and exact, the stall is said.
# Skips (77) when lttng-relayd or babeltrace2's Python bindings are missing.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
command -v lttng-relayd > /dev/null || { echo "SKIP: lttng-relayd not installed (apt-get install lttng-tools)"; exit 77; }
need_bt2
RPID=
cleanup() {
	touch "$T/stop" "$T/exit" "$T/stop2" "$T/exit2" "$T/stop3" "$T/stop4" "$T/stop5" "$T/stop6" 2> /dev/null
	[ -n "$RPID" ] && kill -CONT "$RPID" 2> /dev/null && kill -9 "$RPID" 2> /dev/null
	kill -9 $(jobs -p) 2> /dev/null
	wait 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT
written() { sed -n 's/^written: //p' "$1" | tail -1; }

# three free loopback ports: bind to port 0 and read what the kernel chose
read -r CP DP LP < <("$PY" -c '
import socket
ss = [socket.socket() for _ in range(3)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
OUT=$T/relay-out
mkdir -p "$OUT"
start_relay() {
	lttng-relayd --control-port=tcp://127.0.0.1:$CP --data-port=tcp://127.0.0.1:$DP \
		--live-port=tcp://127.0.0.1:$LP --output="$OUT" > "$T/relayd.log" 2>&1 &
	RPID=$!
	# up when the control port accepts connections
	wait_for "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $CP), 1)" 2> /dev/null ||
		{ cat "$T/relayd.log"; fail "lttng-relayd did not start"; }
}
start_relay
URL=net://127.0.0.1:$CP:$DP
session_dir() { ls -d "$OUT/$1/$2"-* 2> /dev/null | head -1; }

echo "== a recording streamed to the relay daemon, and written locally"
"$CLI" record --relay "$URL" --session-name whole --hostname hosta --live-timer 0 -o "$T/local" -- \
	"$WL" --threads 2 --events 100000 > "$T/w.out" 2> "$T/w.err" || { cat "$T/w.err"; fail "record --relay"; }
grep -q "relay: .* packets\{0,1\}, .* MiB sent to hosta/whole-" "$T/w.err" || { cat "$T/w.err"; fail "the summary does not say what was sent"; }
W=$(written "$T/w.out")
R=$(session_dir hosta whole)
[ -n "$R" ] || { find "$OUT"; fail "no hosta/whole-DATE directory in the relay daemon's output"; }
line=$("$PY" "$(dirname "$0")/../lib/bt2_account.py" "$R" "$W") || { echo "$line"; fail "babeltrace2 on the relay's copy"; }
echo "  babeltrace2 (relay's copy): $line"
case $line in *"delivered=$W discarded=0"*) ;; *) fail "the relay's copy is not whole: $line (written $W)" ;; esac
n=$("$CLI" dump "$R" | wc -l)
[ "$n" = "$W" ] || fail "tracebuf dump of the relay's copy: $n events, want $W"
# each relay stream begins with the empty packet that announced it, then holds the local copy's
# packets: the same headers (packet_size aside) and content, each packet ending at its content
# (rounded up to 8 bytes: no sub-buffer padding), and an index entry per packet that says so
"$PY" "$(dirname "$0")/../lib/relay_copy.py" "$T/local" "$R" || fail "the relay's copy is not the local one, packet by packet"
for f in "$R"/chan_*; do
	[ -s "$f" ] || fail "$f: an empty stream file in the relay's copy"
done

echo "== relay only (no -o): the relay daemon holds the trace, nothing is written here"
mkdir "$T/cwd"
(cd "$T/cwd" && "$CLI" record --relay "$URL" --session-name only --hostname hosto --live-timer 0 -- \
	"$WL" --threads 2 --events 100000) > "$T/o.out" 2> "$T/o.err" || { cat "$T/o.err"; fail "record --relay without -o"; }
grep -q "events delivered to the relay daemon (no local copy)" "$T/o.err" || { cat "$T/o.err"; fail "the summary does not say relay-only"; }
grep -q "please report" "$T/o.err" && { cat "$T/o.err"; fail "relay-only: the summary's accounting does not hold"; }
[ -z "$(ls -A "$T/cwd")" ] || fail "relay-only wrote here: $(ls -A "$T/cwd")"
W=$(written "$T/o.out")
R=$(session_dir hosto only)
[ -n "$R" ] || fail "no hosto/only-DATE in the relay daemon's output"
line=$("$PY" "$(dirname "$0")/../lib/bt2_account.py" "$R" "$W") || { echo "$line"; fail "babeltrace2 on the relay-only trace"; }
echo "  babeltrace2 (relay-only): $line"
case $line in *"delivered=$W discarded=0"*) ;; *) fail "the relay-only trace is not whole: $line (written $W)" ;; esac
"$CLI" record --relay "$URL" --session-name x 2> "$T/u.err" && fail "record with neither CMD nor --attach succeeded"
"$CLI" record --attach "$T/no-session" 2> "$T/u.err"; [ $? = 2 ] || fail "record --attach with neither -o nor --relay: want exit 2"
grep -q "give -o DIR, or --relay URL" "$T/u.err" || { cat "$T/u.err"; fail "the usage error does not say what to give"; }

echo "== the embedded recorder (tb_session_start_relay) streams too"
"${TB_EMBEDDED_RELAY:?}" "$URL" emb hoste "$T/emb" 30000 > "$T/e.out" 2> "$T/e.err" || { cat "$T/e.err"; fail "embedded recorder with a relay"; }
d=$(session_dir hoste emb)
[ -n "$d" ] || fail "no hoste/emb-DATE in the relay's output"
line=$("$PY" "$(dirname "$0")/../lib/bt2_account.py" "$d" 30000) || { echo "$line"; fail "babeltrace2 on the embedded recorder's relay copy"; }
case $line in *"delivered=30000 discarded=0"*) ;; *) fail "the embedded recorder's relay copy is not whole: $line" ;; esac
"${TB_EMBEDDED_RELAY:?}" "net://127.0.0.1:$LP:1" emb hoste "$T/emb2" 10 > /dev/null 2> "$T/e2.err" && fail "an unreachable relay: tb_session_start_relay succeeded"
grep -q "relay net://127.0.0.1:$LP:1" "$T/e2.err" || { cat "$T/e2.err"; fail "tb_errmsg() does not name the relay"; }

echo "== record --attach --relay: a recorder taking over a session streams from there"
S=$T/shm/att.tb
"$CLI" record -q --session "$S" -o "$T/ad" -- "$WL" --threads 1 --events 100000000 --sleep-us 1000 \
	--until-file "$T/stop3" > "$T/aw.out" 2>&1 &
rp=$!
wait_for pgrep -P $rp > /dev/null || fail "the workload did not start"
wait_for sh -c "[ -n \"\$(find '$T/ad' -name 'chan_*' -size +200c)\" ]" || fail "the first recorder wrote nothing"
kill -9 $rp
wait $rp 2> /dev/null
"$CLI" record --attach "$S" --relay "$URL" --session-name att --hostname hostatt -o "$T/ad" > /dev/null 2> "$T/att.err" &
ap=$!
wait_for sh -c "d=\$(ls -d '$OUT'/hostatt/att-* 2> /dev/null); [ -n \"\$d\" ] && [ -n \"\$(find \"\$d\" -name 'chan_*' -size +200c)\" ]" ||
	{ cat "$T/att.err"; fail "record --attach --relay sent nothing"; }
touch "$T/stop3"
wait $ap || { cat "$T/att.err"; fail "record --attach --relay"; }
d=$(session_dir hostatt att)
line=$("$PY" "$(dirname "$0")/../lib/bt2_account.py" "$d") || { echo "$line"; fail "babeltrace2 on the attached recorder's relay copy"; }
echo "  babeltrace2 (relay copy from --attach): $line"
case $line in *"unknown=0"*) ;; *) fail "the relay copy from --attach has losses of unknown size: $line" ;; esac

echo "== two recorders (two hosts) into one relay daemon at once"
"$CLI" record -q --relay "$URL" --session-name one --hostname host1 -o "$T/l1" -- \
	"$WL" --threads 1 --events 50000 > "$T/1.out" 2> "$T/1.err" &
p1=$!
"$CLI" record -q --relay "$URL" --session-name two --hostname host2 -o "$T/l2" -- \
	"$WL" --threads 1 --events 70000 > "$T/2.out" 2> "$T/2.err" &
p2=$!
wait $p1 || { cat "$T/1.err"; fail "recorder 1"; }
wait $p2 || { cat "$T/2.err"; fail "recorder 2"; }
for h in "host1 one 1" "host2 two 2"; do
	set -- $h
	d=$(session_dir "$1" "$2")
	[ -n "$d" ] || fail "no $1/$2-DATE in the relay's output"
	w=$(written "$T/$3.out")
	line=$("$PY" "$(dirname "$0")/../lib/bt2_account.py" "$d" "$w") || { echo "$line"; fail "babeltrace2 on $d"; }
	case $line in *"delivered=$w discarded=0"*) ;; *) fail "$1/$2 is not whole: $line (written $w)" ;; esac
done

echo "== live: events reach a viewer while the program runs"
# the program writes (slowly) until $T/stop exists, then stays alive until $T/exit exists
"$CLI" record -q --relay "$URL" --session-name live --hostname hostl --live-timer 200ms -o "$T/ll" -- \
	"$WL" --threads 1 --events 100000000 --sleep-us 2000 --until-file "$T/stop" --wait-file "$T/exit" \
	> "$T/l.out" 2> "$T/l.err" &
pl=$!
# the session is listed once created; a viewer sees what is indexed after it attached
wait_for sh -c "babeltrace2 query src.ctf.lttng-live sessions --params='url=\"net://127.0.0.1:$LP\"' 2> /dev/null |
	grep -q 'host/hostl/live'" || fail "the live session is not listed by the relay daemon"
# attach once the relay daemon holds a packet of the session: a viewer attached before the first
# stream exists worked 10 times of 10 here, but once (valgrind stage, loaded CI) saw nothing for
# 150 s; the diagnostics below say what each party saw if the viewer ever receives nothing
wait_for sh -c "[ -n \"\$(find '$OUT/hostl' -name 'chan_*' -size +200c 2> /dev/null)\" ]" ||
	{ cat "$T/l.err"; fail "nothing of the live session reached the relay daemon"; }
babeltrace2 --input-format=lttng-live "net://127.0.0.1:$LP/host/hostl/live" \
	--params='session-not-found-action="end"' > "$T/viewer.out" 2> "$T/viewer.err" &
pv=$!
wait_for grep -q 'workload:tick' "$T/viewer.out" || {
	echo "-- viewer:"; cat "$T/viewer.err"; echo "-- recorder:"; cat "$T/l.err"
	echo "-- relay daemon:"; tail -20 "$T/relayd.log"; echo "-- its output:"; find "$OUT/hostl" -ls
	fail "the viewer received no event"; }
kill -0 $pl 2> /dev/null || fail "the program ended before the viewer showed events: not a live view"
[ ! -e "$T/exit" ] || fail "test bug"
echo "  the viewer shows $(grep -c 'workload:tick' "$T/viewer.out") events while the program runs"
touch "$T/stop"
wait_for grep -q '^written: ' "$T/l.out" || fail "the program did not stop writing"
touch "$T/exit"
wait $pl || { cat "$T/l.err"; fail "record (live)"; }
# the viewer ends once the session is gone (session-not-found-action=end)
wait_for sh -c "! kill -0 $pv 2> /dev/null" || fail "the viewer did not end after the session"
wait $pv 2> /dev/null

echo "== a relay that cannot be reached: refused before CMD runs"
"$CLI" record --relay "net://127.0.0.1:$LP:1" -o "$T/nr" -- sh -c "touch '$T/ran'" > /dev/null 2> "$T/nr.err"
rc=$?
[ $rc = 1 ] || fail "exit $rc, want 1"
grep -q "relay net://127.0.0.1:$LP:1: " "$T/nr.err" || { cat "$T/nr.err"; fail "the message does not name the relay"; }
[ ! -e "$T/ran" ] || fail "CMD ran although the relay could not be reached"

echo "== the relay daemon killed -9 mid-run: the local copy goes on whole; it comes back: a new session"
"$CLI" record --relay "$URL" --session-name killed --hostname hostk -o "$T/lk" -- \
	"$WL" --threads 2 --events 100000000 --sleep-us 1000 --until-file "$T/stop2" > "$T/k.out" 2> "$T/k.err" &
pk=$!
wait_for sh -c "d=\$(ls -d '$OUT'/hostk/killed-* 2> /dev/null); [ -n \"\$d\" ] && [ -n \"\$(find \"\$d\" -name 'chan_*' -size +200c 2> /dev/null)\" ]" ||
	fail "nothing reached the relay daemon"
first=$(ls -d "$OUT"/hostk/killed-*)
kill -9 "$RPID"
wait "$RPID" 2> /dev/null
RPID=
# packets written while the relay is gone: the local copy grows by 1 MiB more
s0=$(du -sb "$T/lk" | cut -f1)
wait_for sh -c "[ \$(du -sb '$T/lk' | cut -f1) -ge $((s0 + 1048576)) ]" || fail "the recording stopped when the relay died"
wait_for grep -q "until it answers again" "$T/k.err" || { cat "$T/k.err"; fail "no warning that the relay was lost"; }
# the relay daemon back on the same ports: the recorder reconnects (back-off 1 s, 2 s, ...)
start_relay
wait_for sh -c "[ \$(ls -d '$OUT'/hostk/killed-* | wc -l) -ge 2 ] && [ -n \"\$(find '$OUT'/hostk -newer '$first' -name 'chan_*' -size +200c)\" ]" ||
	{ cat "$T/k.err"; fail "no new relay session after the relay daemon came back"; }
touch "$T/stop2"
wait $pk
rc=$?
[ $rc = 0 ] || { cat "$T/k.err"; fail "record exited $rc after the relay died (CMD exited 0)"; }
cat "$T/k.err" | grep -E "relay|lost" | sed 's/^/  /'
grep -q "reconnected; new relay session hostk/killed-" "$T/k.err" || fail "the reconnection is not said"
grep -q "packets\{0,1\} (.* events\{0,1\}) not sent" "$T/k.err" || fail "the summary does not count what was not sent"
W=$(written "$T/k.out")
check_accounting "$T/lk" "$W" "$T/k.err"
# the new relay session: whole from where it starts, what was not sent counted as lost to the relay
second=$(ls -d "$OUT"/hostk/killed-* | grep -v "^$first\$" | tail -1)
line=$("$PY" "$(dirname "$0")/../lib/bt2_account.py" "$second") || { echo "$line"; fail "babeltrace2 on the new relay session"; }
echo "  babeltrace2 (new relay session): $line"
case $line in *"unknown=0"*"causes="*"relay:"*) ;; *) fail "the new relay session does not count the events not sent as lost_relay: $line" ;; esac
line1=$("$PY" "$(dirname "$0")/../lib/bt2_account.py" "$first") || { echo "$line1"; fail "babeltrace2 on the first relay session"; }
d1=$(echo "$line1" | sed -n 's/.*delivered=\([0-9]*\).*/\1/p')
d2=$(echo "$line" | sed -n 's/.*delivered=\([0-9]*\).*/\1/p')
x2=$(echo "$line" | sed -n 's/.* discarded=\([0-9]*\).*/\1/p')
# What the relay daemon had not written when it was killed is in neither session.  A packet
# whose bytes reached the daemon but whose confirmation its death cut off is counted as not
# sent (the recorder cannot know the daemon wrote it: it says so conservatively), and may also
# be in the first session: at most TB_RELAY_WINDOW (8) such packets in all, the packets in flight
# unconfirmed (src/consumer/engine_relay_impl.h), so the sum may exceed what was written by at
# most 8 packets' events (seen: 8186 under valgrind with 4 streams; 2,000-2,500 events of 16 KiB
# packets, 4-5 of them, in t_record_trusting_writers' runs).
# packet_size: at byte 128 of a packet (docs/FORMAT.md, section 2)
pkt_bits=$("${PY:-python3}" -c 'import struct,sys; f=open(sys.argv[1],"rb"); f.seek(128); print(struct.unpack("<Q", f.read(8))[0])' \
	"$(ls -d "$T/lk"/chan_* | head -1)")
per_pkt=$(((pkt_bits / 8 - 160) / 32)) # the workload's records are 32 bytes (4-byte header, 28-byte payload)
[ $((d1 + d2 + x2)) -le $((W + 8 * per_pkt)) ] && [ $((d2 + x2)) -gt 0 ] ||
	fail "first $d1 + second $d2 + not sent $x2 > written $W + the window's 8 packets (8 x $per_pkt)"
echo "  written $W: first relay session $d1, second $d2 + $x2 counted as not sent" \
	"($((d1 + d2 + x2 > W ? d1 + d2 + x2 - W : 0)) of them in the first session too: unconfirmed when it died)"

echo "== relay only, its daemon killed -9 and back: the events not sent are lost to the relay, counted"
"$CLI" record --relay "$URL" --session-name konly --hostname hostko -- \
	"$WL" --threads 2 --events 100000000 --sleep-us 1000 --until-file "$T/stop4" > "$T/ko.out" 2> "$T/ko.err" &
pk=$!
wait_for sh -c "d=\$(ls -d '$OUT'/hostko/konly-* 2> /dev/null); [ -n \"\$d\" ] && [ -n \"\$(find \"\$d\" -name 'chan_*' -size +200c 2> /dev/null)\" ]" ||
	fail "relay-only: nothing reached the relay daemon"
first=$(ls -d "$OUT"/hostko/konly-*)
kill -9 "$RPID"
wait "$RPID" 2> /dev/null
RPID=
wait_for grep -q "until it answers again" "$T/ko.err" || { cat "$T/ko.err"; fail "relay-only: no warning that the relay was lost"; }
grep -q "packets are lost (no -o DIR" "$T/ko.err" || { cat "$T/ko.err"; fail "relay-only: the warning does not say the packets are lost"; }
start_relay
wait_for sh -c "[ \$(ls -d '$OUT'/hostko/konly-* | wc -l) -ge 2 ] && [ -n \"\$(find '$OUT'/hostko -newer '$first' -name 'chan_*' -size +200c)\" ]" ||
	{ cat "$T/ko.err"; fail "relay-only: no new relay session after the relay daemon came back"; }
touch "$T/stop4"
wait $pk
rc=$?
# exit 1 is the design when some ring's last packets all fell in the outage (a thread that ran on
# a CPU only then: no later packet of that stream can carry its losses to the relay's copy), and
# the summary says so; seen under valgrind's slow recorder.  Anything else fails.
[ $rc = 0 ] || { [ $rc = 1 ] && grep -q "misses [0-9]* events at its end that it cannot tell" "$T/ko.err"; } ||
	{ cat "$T/ko.err"; fail "relay-only record after a reconnection: exit $rc"; }
grep -q "please report" "$T/ko.err" && { cat "$T/ko.err"; fail "relay-only: written != delivered + lost"; }
grep -E "lost [0-9]+ events.*relay [0-9]+" "$T/ko.err" > /dev/null || { cat "$T/ko.err"; fail "relay-only: the summary does not count the events lost to the relay"; }
grep -E "lost [0-9]+ events" "$T/ko.err" | sed 's/^/  /'
second=$(ls -d "$OUT"/hostko/konly-* | grep -v "^$first\$" | tail -1)
line=$("$PY" "$(dirname "$0")/../lib/bt2_account.py" "$second") || { echo "$line"; fail "babeltrace2 on the relay-only new session"; }
echo "  babeltrace2 (relay-only, new relay session): $line"
case $line in *"unknown=0"*"causes="*"relay:"*) ;; *) fail "relay-only: the new relay session does not count what was not sent: $line" ;; esac

echo "== relay only, its daemon killed for good: exit 1, said"
"$CLI" record --relay "$URL" --session-name gone --hostname hostg -- \
	"$WL" --threads 1 --events 100000000 --sleep-us 1000 --until-file "$T/stop5" > /dev/null 2> "$T/g.err" &
pg=$!
wait_for sh -c "d=\$(ls -d '$OUT'/hostg/gone-* 2> /dev/null); [ -n \"\$d\" ] && [ -n \"\$(find \"\$d\" -name 'chan_*' -size +200c 2> /dev/null)\" ]" ||
	fail "relay-only (gone): nothing reached the relay daemon"
kill -9 "$RPID"
wait "$RPID" 2> /dev/null
RPID=
wait_for grep -q "until it answers again" "$T/g.err" || { cat "$T/g.err"; fail "relay-only (gone): no warning"; }
touch "$T/stop5"
wait $pg
rc=$?
[ $rc = 1 ] || { cat "$T/g.err"; fail "relay-only with the relay gone at the end: exit $rc, want 1"; }
grep -q "did not come back before the end" "$T/g.err" || { cat "$T/g.err"; fail "relay-only (gone): not said"; }
grep "did not come back" "$T/g.err" | sed 's/^/  /'

echo "== a relay daemon that stops answering (SIGSTOP): nothing waits for it but the relay copy"
start_relay
"$CLI" record --relay "$URL" --session-name stalled --hostname hosts -o "$T/ls" -- \
	"$WL" --threads 1 --events 100000000 --sleep-us 1000 --until-file "$T/stop6" > "$T/s.out" 2> "$T/s.err" &
ps_=$!
wait_for sh -c "d=\$(ls -d '$OUT'/hosts/stalled-* 2> /dev/null); [ -n \"\$d\" ] && [ -n \"\$(find \"\$d\" -name 'chan_*' -size +200c 2> /dev/null)\" ]" ||
	fail "stalled: nothing reached the relay daemon"
kill -STOP "$RPID"
# the recorder notices (its send or the index answer times out: 5 s) and goes on locally
wait_for grep -q "until it answers again" "$T/s.err" || { cat "$T/s.err"; fail "stalled: the stall is not said"; }
s0=$(du -sb "$T/ls" | cut -f1)
wait_for sh -c "[ \$(du -sb '$T/ls' | cut -f1) -gt $s0 ]" || fail "stalled: the local copy stopped growing"
touch "$T/stop6"
wait $ps_
rc=$?
[ $rc = 0 ] || { cat "$T/s.err"; fail "stalled: record exited $rc (CMD exited 0)"; }
W=$(written "$T/s.out")
check_accounting "$T/ls" "$W" "$T/s.err"
kill -CONT "$RPID" 2> /dev/null
echo PASS
