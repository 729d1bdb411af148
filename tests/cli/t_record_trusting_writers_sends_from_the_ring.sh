# SPDX-License-Identifier: MIT
# t_record_trusting_writers_sends_from_the_ring.sh - `tracebuf record --trust-writers`
# (docs/FLEET.md, "Reaching lttng-consumerd's cost"): the recorder trusts the session's writers,
# validates each complete sub-buffer in place and writes the local file and sends to the relay
# daemon straight from the ring; a sub-buffer goes back to the producers only once every output
# is done with it.  Everything the user sees (summary, accounting, exit codes) is as without it:
#   1. relay only (no -o), discard mode, a real lttng-relayd: the relay daemon's copy holds every
#      event the workload wrote (babeltrace2's count and tracebuf's reader), nothing lost, and
#      the summary says so (the default 16 MiB rings hold the whole workload: no verdict here
#      depends on how fast the recorder runs);
#   2. -o DIR and --relay together, 2 threads, small rings (16K x 8: hundreds of sub-buffers go
#      round each ring) in block mode: the local copy is whole (tb-verify --no-loss with the
#      count), the relay's copy holds the local copy's packets, packet by packet
#      (tests/lib/relay_copy.py, as t_record_relay.sh), babeltrace2 finds every event in it;
#   3. a relay that stalls (tests/tools/fake_relay.py stall: reads, never answers) with
#      --relay-timeout 2s, block mode, small rings, -o: the producers are held at most until the
#      relay is declared lost, CMD ends, the recorder exits 0, the local copy is whole
#      (--no-loss) and the summary counts the packets not sent;
#   3b. a relay that never reads its data connection (fake_relay.py noread) and never times out
#      (--relay-timeout 10min), block mode: the sub-buffers out to the relay are not given back,
#      so the producers wait until their block timeout (tracebuf stat counts "timeout"; a
#      recorder that copied packets out of the ring would free them at once: the proof that
#      sending is from the ring); the relay then killed: its queue is dropped, the rings freed,
#      CMD ends, the local copy and the summary account for every event (the timeouts included);
#   4. kill -9 of a `--trust-writers -o DIR --relay URL` recorder of a program in block mode
#      (sub-buffers written locally but held for the relay are not given back by anyone), then
#      `record --attach SESSION -o DIR --trust-writers` finishes the trace: no packet twice
#      (tb-verify), babeltrace2 reads it and written == delivered + lost by cause;
#   4b. the same with a relay that never reads (fake_relay.py noread): the recorder is killed
#      while every sub-buffer of a ring is written locally but held for the relay, and the
#      attached recorder finishes: every event once, the identity holds;
#   5. --trust-writers with neither -o nor --relay (a flight recorder: snapshots only): exit 2
#      before CMD runs, the message names --trust-writers, nothing written; a command without -o
#      (its default trace-DATE directory here) is recorded whole; overwrite mode (never drained
#      while CMD runs) accounts for every event as without the option.
# No timing is asserted: every wait is on a condition, under wait_for's hang guard.
# Skips (77) when lttng-relayd, python3 or babeltrace2's Python bindings are missing.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
command -v lttng-relayd > /dev/null || { echo "SKIP: lttng-relayd not installed (apt-get install lttng-tools)"; exit 77; }
command -v python3 > /dev/null || { echo "SKIP: no python3 for the fake relay"; exit 77; }
need_bt2
. "$(dirname "$0")/../lib/relayd.sh"
HERE=$(dirname "$0")
PIDS=
cleanup() {
	{
		touch "$T/stop4" "$T/stop4b"
		for p in $PIDS; do kill -9 "$p"; done
		kill -9 $(jobs -p)
		wait
		rm -rf "$T"
	} 2> /dev/null
}
trap cleanup EXIT
written() { sed -n 's/^written: //p' "$1" | tail -1; }
alive() { kill -0 "$1" 2> /dev/null; }
# bytes DIR: the size of DIR's stream files
bytes() { find "$1" -maxdepth 1 -name 'chan_*' -printf '%s\n' 2> /dev/null | awk '{ s += $1 } END { print s + 0 }'; }
# grew DIR N [PID]: DIR's stream files hold more than N bytes (or PID ended: a wait that cannot
# hang on a recorder that died)
grew() { [ "$(bytes "$1")" -gt "$2" ] || { [ -n "${3:-}" ] && ! alive "$3"; }; }
# timed_out SESSION PID: a producer of SESSION waited its whole block timeout (or PID ended)
timed_out() { [ "$(stat_col "$1" timeout)" -gt 0 ] 2> /dev/null || ! alive "$2"; }
session_dir() { ls -d "$OUT/$1/$2"-* 2> /dev/null | head -1; }
# stat_col SESSION COLUMN: the total of a `tracebuf stat` column (t_block_consumer_killed.sh)
stat_col() {
	"$CLI" stat "$1" 2> /dev/null | awk -v c="$2" '$1 == "cpu" { for (i = 1; i <= NF; i++) if ($i == c) k = i }
		$1 == "total" && k { print $k; exit }'
}
# started RP: RP's child (the workload) is running, or RP ended (a wait_for condition)
started() { pgrep -P "$1" > /dev/null || ! alive "$1"; }
# attach_finishes CASE DIR SESSION STOPFILE WFILE WL: after a kill -9 of SESSION's recorder, a
# second one (record --attach SESSION -o DIR --trust-writers) drains what the killed one left and
# what the program WL still writes (DIR grows 1 MiB more), ends with the program (STOPFILE), exits
# 0, and DIR accounts for every event WFILE says the program wrote, each once (tb-verify, which
# fails on an event written twice, then babeltrace2)
attach_finishes() {
	local c=$1 dir=$2 ses=$3 stop=$4 wfile=$5 wl=$6 s0 ap rc W
	s0=$(bytes "$dir")
	"$CLI" record --attach "$ses" -o "$dir" --trust-writers > /dev/null 2> "$T/$c.attach.err" &
	ap=$!
	PIDS="$PIDS $ap"
	wait_for grew "$dir" $((s0 + 1048576)) $ap || true
	alive "$ap" || { cat "$T/$c.attach.err"; fail "$c: record --attach --trust-writers ended while the program runs"; }
	grew "$dir" $((s0 + 1048576)) || { cat "$T/$c.attach.err"; fail "$c: record --attach --trust-writers does not drain"; }
	touch "$stop"
	wait_for eval "! alive $wl" || fail "$c: the workload did not stop"
	wait_for eval "! alive $ap" || { cat "$T/$c.attach.err"; fail "$c: record --attach did not end with the program"; }
	wait $ap
	rc=$?
	[ $rc = 0 ] || { cat "$T/$c.attach.err"; fail "$c: record --attach --trust-writers exited $rc"; }
	W=$(written "$wfile")
	[ -n "$W" ] || fail "$c: the workload did not say what it wrote"
	"$VERIFY" "$dir" --written "$W" > "$T/$c.verify" 2>&1 ||
		{ cat "$T/$c.verify" "$T/$c.attach.err"; fail "$c: the trace of the killed and the attached recorders does not account for every event"; }
	check_accounting "$dir" "$W"
}
OUT=$T/relay-out
start_relayd "$OUT"
URL=net://127.0.0.1:$CP:$DP

echo "== 1. relay only, discard mode: the relay daemon's copy holds every event"
mkdir "$T/cwd1"
(cd "$T/cwd1" && "$CLI" record --trust-writers --relay "$URL" --session-name only --hostname host1 --live-timer 0 -- \
	"$WL" --threads 2 --events 50000) > "$T/1.out" 2> "$T/1.err" || { cat "$T/1.err"; fail "1: record --trust-writers --relay (no -o)"; }
W=$(written "$T/1.out")
[ "$W" = 100000 ] || fail "1: the workload wrote '$W' events, want 100000"
grep -q "^tracebuf record: $W events delivered to the relay daemon (no local copy)" "$T/1.err" ||
	{ cat "$T/1.err"; fail "1: the summary does not say all $W events reached the relay daemon"; }
grep -q "^  lost 0 events$" "$T/1.err" || { cat "$T/1.err"; fail "1: the summary says events were lost"; }
grep -q "please report\|does not account for" "$T/1.err" && { cat "$T/1.err"; fail "1: the summary's accounting does not hold"; }
[ -z "$(ls -A "$T/cwd1")" ] || fail "1: relay-only wrote here: $(ls -A "$T/cwd1")"
R=$(session_dir host1 only)
[ -n "$R" ] || { find "$OUT"; fail "1: no host1/only-DATE in the relay daemon's output"; }
line=$("$PY" "$HERE/../lib/bt2_account.py" "$R" "$W") || { echo "$line"; fail "1: babeltrace2 on the relay's copy"; }
echo "  babeltrace2 (relay's copy): $line"
case $line in *"delivered=$W discarded=0 "*) ;; *) fail "1: the relay's copy is not whole: $line (written $W)" ;; esac
n=$("$CLI" dump "$R" | grep -c 'workload:tick')
[ "$n" = "$W" ] || fail "1: tracebuf dump of the relay's copy: $n workload events, want $W"

echo "== 2. -o and --relay, small rings going round: both copies whole, packet for packet alike"
"$CLI" record --trust-writers --mode block --block-timeout 10s --sb-size 16K --sb-count 8 \
	--relay "$URL" --session-name both --hostname host2 --live-timer 0 -o "$T/l2" -- \
	"$WL" --threads 2 --events 100000 > "$T/2.out" 2> "$T/2.err" || { cat "$T/2.err"; fail "2: record --trust-writers -o --relay"; }
W=$(written "$T/2.out")
[ "$W" = 200000 ] || fail "2: the workload wrote '$W' events, want 200000"
"$VERIFY" "$T/l2" --written "$W" --no-loss > "$T/2.verify" 2>&1 || { cat "$T/2.verify" "$T/2.err"; fail "2: the local copy is not whole"; }
check_accounting "$T/l2" "$W" "$T/2.err"
npk=$(sed -n 's/.* \([0-9]*\) packets written to .*/\1/p' "$T/2.err")
[ "${npk:-0}" -gt 100 ] || { cat "$T/2.err"; fail "2: ${npk:-no} packets: the rings did not go round (the case tests little)"; }
grep -q "relay: .* packets, .* MiB sent to host2/both-" "$T/2.err" || { cat "$T/2.err"; fail "2: the summary does not say what was sent"; }
grep -q "not sent" "$T/2.err" && { cat "$T/2.err"; fail "2: packets were not sent to a relay daemon that took everything"; }
R=$(session_dir host2 both)
[ -n "$R" ] || { find "$OUT"; fail "2: no host2/both-DATE in the relay daemon's output"; }
"$PY" "$HERE/../lib/relay_copy.py" "$T/l2" "$R" > "$T/2.copy" || { cat "$T/2.copy"; fail "2: the relay's copy is not the local one, packet by packet"; }
tail -1 "$T/2.copy" | sed 's/^/  /'
line=$("$PY" "$HERE/../lib/bt2_account.py" "$R" "$W") || { echo "$line"; fail "2: babeltrace2 on the relay's copy"; }
case $line in *"delivered=$W discarded=0 "*) ;; *) fail "2: the relay's copy is not whole: $line (written $W)" ;; esac
echo "  local copy whole ($W events, $npk packets); relay's copy: $line"

# run_fake MODE WORKLOAD_EVENTS [RECORD OPTIONS]: block mode, small rings, -o, the fake relay;
# the recorder's pid in $RP, its stderr in $T/MODE.err, the workload's output in $T/MODE.w
run_fake() {
	local mode=$1 ev=$2
	shift 2
	start_fake "$mode"
	"$CLI" record --trust-writers --relay "$FURL" --session-name "$mode" --mode block --block-timeout 10s \
		--sb-size 16K --sb-count 8 --session "$T/shm/$mode.tb" "$@" -o "$T/$mode" -- \
		"$WL" --threads 2 --events "$ev" > "$T/$mode.w" 2> "$T/$mode.err" &
	RP=$!
	PIDS="$PIDS $RP"
}
# ended MODE: the recorder of run_fake ended (under the hang guard); its exit status in $RC
ended() {
	wait_for eval "! alive $RP" || { cat "$T/$1.err" "$FLOG"; fail "$1: the recorder is still running (held by its relay)"; }
	wait "$RP"
	RC=$?
}

echo "== 3. a relay that stalls (--relay-timeout 2s): held until it is lost, then CMD ends, all written"
run_fake stall 50000 --relay-timeout 2s
ended stall
W=$(written "$T/stall.w")
[ "$W" = 100000 ] || { cat "$T/stall.err"; fail "3: the workload wrote '$W' events, want 100000 (CMD did not end?)"; }
[ "$RC" = 0 ] || { cat "$T/stall.err"; fail "3: exit $RC, want 0 (CMD exited 0, the local copy is whole)"; }
grep -q '^stalling' "$FLOG" || { cat "$FLOG" "$T/stall.err"; fail "3: the fake relay never stalled (the case tests nothing)"; }
"$VERIFY" "$T/stall" --written "$W" --no-loss > "$T/stall.verify" 2>&1 ||
	{ cat "$T/stall.verify" "$T/stall.err"; fail "3: the local copy is not whole"; }
check_accounting "$T/stall" "$W" "$T/stall.err"
grep -q "relay: .*packets\{0,1\} (.* events\{0,1\}) not sent" "$T/stall.err" ||
	{ cat "$T/stall.err"; fail "3: the summary does not count the packets not sent to the relay"; }
grep "relay: " "$T/stall.err" | sed 's/^/  /'
{ kill -9 "$FPID"; wait "$FPID"; } 2> /dev/null

echo "== 3b. a relay that never reads: the producers wait for their sub-buffers; the relay killed, they go on"
run_fake noread 200000 --relay-timeout 10min
S3=$T/shm/noread.tb
# 2 x 200000 events of 32 bytes (12.8 MB): far more than the rings (16K x 8 per CPU) and what the
# sockets hold.  A sub-buffer is given back only once the relay's sender handed it to TCP, which
# it cannot: the producers fill their rings and wait, in vain, for a free sub-buffer
wait_for timed_out "$S3" "$RP" || true
t3=$(stat_col "$S3" timeout)
alive "$RP" || { cat "$T/noread.err"; fail "3b: the recorder ended while its relay never read (the rings were not held)"; }
[ "${t3:-0}" -gt 0 ] ||
	{ "$CLI" stat "$S3"; cat "$T/noread.err"; fail "3b: no producer waited its block timeout: the rings were not held for the relay"; }
grep -q '^packet' "$FLOG" && { cat "$FLOG"; fail "3b: the fake relay read a packet (the case tests nothing)"; }
echo "  the producers waited for sub-buffers out to the relay: $t3 block timeouts; the relay is killed"
{ kill -9 "$FPID"; wait "$FPID"; } 2> /dev/null
ended noread
W=$(written "$T/noread.w")
[ "$W" = 400000 ] || { cat "$T/noread.err"; fail "3b: the workload wrote '$W' events, want 400000"; }
[ "$RC" = 0 ] || { cat "$T/noread.err"; fail "3b: exit $RC, want 0 (CMD exited 0)"; }
"$VERIFY" "$T/noread" --written "$W" > "$T/noread.verify" 2>&1 ||
	{ cat "$T/noread.verify" "$T/noread.err"; fail "3b: the local copy does not account for every event"; }
check_accounting "$T/noread" "$W" "$T/noread.err"
grep -q "^  lost [0-9]* events\{0,1\}.*block timeout [0-9]" "$T/noread.err" ||
	{ cat "$T/noread.err"; fail "3b: the summary does not count the block timeouts"; }
grep -q "relay: .*not sent" "$T/noread.err" || { cat "$T/noread.err"; fail "3b: the summary does not count the packets not sent"; }

echo "== 4. kill -9 of the recorder mid-run, record --attach --trust-writers finishes the trace"
S=$T/shm/k.tb
"$CLI" record -q --trust-writers --mode block --block-timeout 10s --sb-size 16K --sb-count 8 --session "$S" \
	--relay "$URL" --session-name killed --hostname host4 -o "$T/l4" -- \
	"$WL" --threads 2 --events 100000000 --sleep-us 200 --until-file "$T/stop4" > "$T/4.w" 2> "$T/4.err" &
rp=$!
PIDS="$PIDS $rp"
wait_for started $rp
wl=$(pgrep -P $rp) || { cat "$T/4.err"; fail "4: the workload did not start"; }
# mid-run: packets in the local copy and at the relay daemon (sub-buffers went round the rings)
wait_for grew "$T/l4" 1048576 $rp && alive $rp || { cat "$T/4.err"; fail "4: the recorder wrote nothing"; }
wait_for sh -c "d=\$(ls -d '$OUT'/host4/killed-* 2> /dev/null); [ -n \"\$d\" ] && [ -n \"\$(find \"\$d\" -name 'chan_*' -size +200c)\" ]" ||
	{ cat "$T/4.err"; fail "4: nothing reached the relay daemon"; }
{ kill -9 $rp; wait $rp; } 2> /dev/null
alive "$wl" || fail "4: the workload ended with its recorder"
# every packet once (a packet the killed recorder wrote but held for its relay is not written
# again), and written == delivered + lost
attach_finishes 4 "$T/l4" "$S" "$T/stop4" "$T/4.w" "$wl"
[ ! -e "$S" ] || fail "4: the drained session file was left"

echo "== 4b. kill -9 while every sub-buffer is held for a relay that never reads; record --attach finishes"
# the killed recorder wrote each held sub-buffer into DIR but gave none back: the ring's tail is
# behind every packet of the ring; the attached recorder must not write them again (tb-verify
# fails on a duplicate event) nor lose any
start_fake noread
S=$T/shm/kh.tb
"$CLI" record -q --trust-writers --mode block --block-timeout 10s --sb-size 16K --sb-count 8 --session "$S" \
	--relay "$FURL" --session-name killheld --relay-timeout 10min -o "$T/l4b" -- \
	"$WL" --threads 2 --events 100000000 --sleep-us 200 --until-file "$T/stop4b" > "$T/4b.w" 2> "$T/4b.err" &
rp=$!
PIDS="$PIDS $rp"
wait_for started $rp
wl=$(pgrep -P $rp) || { cat "$T/4b.err"; fail "4b: the workload did not start"; }
# a producer waited its whole block timeout: its ring was full of held sub-buffers
wait_for timed_out "$S" $rp || true
alive $rp || { cat "$T/4b.err"; fail "4b: the recorder ended"; }
[ "$(stat_col "$S" timeout)" -gt 0 ] || { "$CLI" stat "$S"; fail "4b: no producer waited: the sub-buffers were not held"; }
{ kill -9 $rp; wait $rp; } 2> /dev/null
alive "$wl" || fail "4b: the workload ended with its recorder"
{ kill -9 "$FPID"; wait "$FPID"; } 2> /dev/null
attach_finishes 4b "$T/l4b" "$S" "$T/stop4b" "$T/4b.w" "$wl"

echo "== 5. --trust-writers with no output but snapshots: a usage error; its default local copy and overwrite mode"
# a flight recorder (snapshots only, neither -o nor --relay) has nothing to take in place
(cd "$T" && "$CLI" record --trust-writers --mode overwrite --snapshot-dir "$T/snaps5" -- sh -c "touch '$T/ran5'") > /dev/null 2> "$T/5.err"
rc=$?
[ $rc = 2 ] || { cat "$T/5.err"; fail "5: --snapshot-dir without -o or --relay: exit $rc, want 2 (usage)"; }
# (an unknown option also exits 2 naming it: the message must say what to give)
grep -- "--trust-writers" "$T/5.err" | grep -- "-o DIR" | grep -q -- "--relay" ||
	{ cat "$T/5.err"; fail "5: the message does not name --trust-writers and what to give (-o DIR, --relay URL)"; }
[ ! -e "$T/ran5" ] || fail "5: CMD ran after a usage error"
[ -z "$(ls -A "$T/snaps5" 2> /dev/null)" ] || fail "5: a snapshot was written after a usage error"
sed 's/^/  /' "$T/5.err" | head -2
# a command without -o writes its default trace-DATE here, from the ring
mkdir "$T/cwd5"
(cd "$T/cwd5" && "$CLI" record --trust-writers -- "$WL" --threads 2 --events 20000) > "$T/5d.out" 2> "$T/5d.err" ||
	{ cat "$T/5d.err"; fail "5: record --trust-writers with its default output"; }
W=$(written "$T/5d.out")
d=$(ls -d "$T/cwd5"/trace-* 2> /dev/null | head -1)
[ -n "$d" ] || { cat "$T/5d.err"; fail "5: no default trace-DATE directory"; }
"$VERIFY" "$d" --written "$W" --no-loss > "$T/5d.verify" 2>&1 || { cat "$T/5d.verify" "$T/5d.err"; fail "5: the default output is not whole"; }
check_accounting "$d" "$W" "$T/5d.err"
# overwrite mode (nothing drained while CMD runs: the final snapshot) is unaffected
"$CLI" record --trust-writers --mode overwrite --sb-size 16K --sb-count 4 -o "$T/ow5" -- \
	"$WL" --threads 2 --events 50000 > "$T/5o.out" 2> "$T/5o.err" || { cat "$T/5o.err"; fail "5: record --trust-writers --mode overwrite"; }
W=$(written "$T/5o.out")
"$VERIFY" "$T/ow5" --written "$W" > "$T/5o.verify" 2>&1 || { cat "$T/5o.verify" "$T/5o.err"; fail "5: overwrite mode: the trace does not account for every event"; }
check_accounting "$T/ow5" "$W" "$T/5o.err"
echo PASS
