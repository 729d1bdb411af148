# SPDX-License-Identifier: MIT
# t_record_kernel_relay.sh - `record --kernel --relay URL` (docs/KERNEL.md, "To a relay daemon"):
# the kernel's streams go to a real lttng-relayd like the program's own, with the kernel's event
# classes in the metadata it gets.
#   - relay-only (no -o): nothing is written here; the relay daemon's copy holds kernel_cpu<N>
#     streams, babeltrace2 reads it with no warning but the expected one, and finds exactly the
#     kernel events the summary says were delivered (the accounting line holds), at least N
#     switches of the two handoff threads, and the program's events (bt2_account: whole);
#   - followed live from the start by babeltrace2's lttng-live source: the viewer prints the same
#     events as the relay's copy, in order, from where it attached to the program's end (the
#     handoff threads' every switch among them), ends with the session, and says
#     nothing on stderr; the program runs on CPU 0 alone, so that the kernel streams of the
#     other CPUs have nothing to send and only their beacons keep them from holding it back;
#   - with -o too: each of the relay's streams (kernel_cpu<N> and the program's) holds the local
#     file's packets after the empty packet that announced it, packet by packet
#     (tests/lib/relay_copy.py: headers but packet_size, content, index entries).
# Skips (77) with the reason when lttng-relayd, babeltrace2 (and its Python bindings) are missing
# or perf_event_open on tracepoints is not allowed here.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/relayd.sh"
. "$(dirname "$0")/../lib/accounting.sh"
command -v lttng-relayd > /dev/null || { echo "SKIP: lttng-relayd not installed (apt-get install lttng-tools)"; exit 77; }
command -v babeltrace2 > /dev/null || { echo "SKIP: babeltrace2 not installed"; exit 77; }
need_bt2
HO=${TB_KERNEL_HANDOFF:?}
N=300
if ! out=$("$CLI" record -q --kernel -o "$T/probe" -- true 2>&1); then
	case $out in
	*"refused"*|*"not mounted"*|*"not readable"*)
		echo "SKIP: --kernel is not available here: $out"; exit 77 ;;
	esac
	fail "record --kernel -- true: $out"
fi
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
URL=net://127.0.0.1:$CP:$DP
session_dir() { ls -d "$OUT/$1/$2"-* 2> /dev/null | head -1; }
# the kernel events babeltrace2 prints: their count, and the switches of the tids in $2
kcount() {
	"$PY" - "$1" "$2" << 'EOF'
import re, sys
tids = set(map(int, open(sys.argv[2]).read().split()))
n = sw = 0
for line in open(sys.argv[1]):
    m = re.search(r"\] \(\+[^)]*\) \S+ (sched_\w+): ", line) or re.search(r" (sched_\w+): ", line)
    if not m:
        continue
    n += 1
    if m.group(1) == "sched_switch":
        t = re.search(r"prev_tid = (\d+).*next_tid = (\d+)", line)
        if t and (int(t.group(1)) in tids or int(t.group(2)) in tids):
            sw += 1
print(n, sw)
EOF
}

echo "== relay only, followed live from the start"
mkdir "$T/cwd"
# the program waits for $T/go: the viewer is attached before the first event
# (--flush-period: the program's own events flow while it runs, as for any live viewing;
# the threads linger 1 s after the handoffs, and the command 1 s after them: a viewer follows
# a running program, whose last events are sent long before the recording ends.  The program
# runs on CPU 0 only where taskset and a second CPU exist: the other CPUs' kernel streams then
# hold nothing of it, and only their beacons let the viewer go on)
PIN=
command -v taskset > /dev/null && [ "$(nproc)" -gt 1 ] && PIN="taskset -c 0"
(cd "$T/cwd" && exec "$CLI" record --kernel --kernel-pages 4096 --relay "$URL" --session-name kr --hostname hostk --live-timer 100ms \
	--flush-period 100ms -- $PIN sh -c 'while [ ! -e "$1" ]; do sleep 0.02; done; "$2" "$3" 1000; sleep 1' sh "$T/go" "$HO" $N) \
	> "$T/k.tids" 2> "$T/k.err" &
RP=$!
PIDS="$PIDS $RP"
export LP
sessions() { babeltrace2 query src.ctf.lttng-live sessions --params="url=\"net://127.0.0.1:$LP\"" 2> /dev/null; }
export -f sessions
wait_for bash -c "sessions | grep -q 'host/hostk/kr'" || { cat "$T/k.err"; fail "the live session is not listed"; }
babeltrace2 --input-format=lttng-live "net://127.0.0.1:$LP/host/hostk/kr" \
	--params='session-not-found-action="end"' > "$T/viewer.out" 2> "$T/viewer.err" &
VP=$!
PIDS="$PIDS $VP"
wait_for bash -c "sessions | grep -B8 'host/hostk/kr' | grep -q 'client-count: 1'" ||
	{ cat "$T/viewer.err"; fail "the viewer did not attach"; }
touch "$T/go"
wait "$RP" || { cat "$T/k.err"; fail "record --kernel --relay (no -o) exited $?"; }
[ -z "$(ls -A "$T/cwd")" ] || fail "relay-only wrote here: $(ls -A "$T/cwd")"
grep -q "NOT EQUAL\|please report" "$T/k.err" && { cat "$T/k.err"; fail "the summary's accounting"; }
D=$(sed -n 's/^  kernel: \([0-9]*\) events\{0,1\} of .*/\1/p' "$T/k.err")
[ -n "$D" ] && [ "$D" -gt 0 ] || { cat "$T/k.err"; fail "no kernel events delivered"; }
R=$(session_dir hostk kr)
[ -n "$R" ] || { find "$OUT"; fail "no hostk/kr-DATE in the relay daemon's output"; }
ls "$R"/kernel_cpu* > /dev/null 2>&1 || { ls "$R"; fail "no kernel stream in the relay's copy"; }
babeltrace2 "$R" > "$T/relay.txt" 2> "$T/relay.err" || { cat "$T/relay.err"; fail "babeltrace2 on the relay's copy"; }
# what babeltrace2 may say: the expected line, and the kernel losses the recorder reported (perf's
# silent ones: docs/KERNEL.md, "Known gap"), no other
L=$(sed -n 's/^  kernel: .* left out; lost \([0-9]*\).*/\1/p' "$T/k.err")
grep -v 'User field found in packet header: ignoring: name="tb_lost_by_cause"' "$T/relay.err" |
	grep -v 'Tracer discarded [0-9]* events\{0,1\} between .* within stream ".*/kernel_cpu[0-9]*"' |
	grep -v '^$' > "$T/relay.other"
[ -s "$T/relay.other" ] && { head "$T/relay.other"; fail "babeltrace2 warned on the relay's copy"; }
read -r n sw < <(kcount "$T/relay.txt" "$T/k.tids")
echo "  relay's copy: $n kernel events ($sw switches of the handoff threads); the summary: $D delivered"
[ "$n" = "$D" ] || fail "babeltrace2 finds $n kernel events in the relay's copy, the recorder delivered $D"
[ "$sw" -ge $N ] || fail "$sw switches of the two threads in the relay's copy, want >= $N"
line=$("$PY" "$(dirname "$0")/../lib/bt2_account.py" "$R") || { echo "$line"; fail "bt2_account on the relay's copy"; }
case $line in *"discarded=$L unknown=0"*) ;; *) fail "the relay's copy's losses: $line; the recorder reported $L" ;; esac
wait_for sh -c "! kill -0 $VP 2> /dev/null" || fail "the viewer did not end after the session"
wait "$VP"
vrc=$?
# the live viewer names streams "stream-N": the kernel's are those of stream class 2.  Since the
# end lingers (docs/FLEET.md, "The end of a live session") the viewer gets the kernel's final
# packet, which carries the losses the recorder reported; a viewer that met a kernel stream
# first at a packet with losses says "may have discarded" (it cannot know what came before).
# The exact count is checked on the relay's copy above.
grep -v 'User field found in packet header: ignoring: name="tb_lost_by_cause"' "$T/viewer.err" |
	grep -v 'Tracer \(may have \)\{0,1\}discarded \([0-9]* \)\{0,1\}events\{0,1\} between .* (stream class ID: 2, stream ID: [0-9]*)\.$' |
	grep -v '^$' > "$T/viewer.other"
if [ -s "$T/viewer.other" ] || [ "$vrc" != 0 ]; then
	echo "-- viewer (exit $vrc):"; head -20 "$T/viewer.other"
	fail "babeltrace2's lttng-live viewer failed"
fi
read -r vn vsw < <(kcount "$T/viewer.out" "$T/k.tids")
echo "  live viewer: $vn kernel events ($vsw switches of the handoff threads)"
# the viewer starts at what the streams held when it attached (lttng-live: the latest packet
# then), before the program ran: its events are the relay copy's from there on, in order, up to
# the switch that took the last handoff thread off its CPU at its exit at least (every event of
# the program, kernel and user).  (The kernel packet of the recorder's final pass, sent at its
# very end, reaches the viewer since the end lingers with final beacons on every stream
# (docs/KERNEL.md, "The end of a live recording"); the tail is printed, not judged.)
"$PY" - "$T/viewer.out" "$T/relay.txt" "$T/k.tids" << 'EOF' || fail "the live viewer's events are not the relay copy's"
import re, sys
def events(path):
    # the delta to the previous event depends on where the viewer began
    return [re.sub(r"\(\+[^)]*\) ", "", l.strip()) for l in open(path) if re.search(r" (sched_\w+|kh:\w+): ", l)]
v, r = events(sys.argv[1]), events(sys.argv[2])
tids = set(map(int, open(sys.argv[3]).read().split()))
mine = [i for i, l in enumerate(r) if " kh:" in l or any(f"tid = {t}," in l or f"tid = {t} " in l for t in tids)]
if not v or v[0] not in r:
    sys.exit(f"viewer: {len(v)} events, its first not in the relay's copy")
i = r.index(v[0])
cut = mine[-1] + 1
if i > mine[0]:
    sys.exit(f"the viewer began at event {i} of the relay's copy, after the program's first ({mine[0]})")
if v[:cut - i] != r[i:cut]:
    k = next(k for k in range(cut - i) if k >= len(v) or v[k] != r[i + k])
    sys.exit(f"viewer event {k}: {v[k] if k < len(v) else 'none'!r}; the relay's copy: {r[i + k]!r}")
print(f"  the viewer shows the relay copy's events {i}..{cut - 1} (the program's) in order; {len(r) - i - len(v)} of its tail missing")
EOF
[ "$vsw" = "$sw" ] || fail "the live viewer printed $vsw switches of the handoff threads, the relay's copy holds $sw"

echo "== with -o too: the relay's streams hold the local ones' packets"
"$CLI" record --kernel --kernel-pages 4096 --relay "$URL" --session-name kl --hostname hostk --live-timer 0 -o "$T/local" -- \
	"$HO" $N > "$T/l.tids" 2> "$T/l.err" || { cat "$T/l.err"; fail "record --kernel --relay -o"; }
R=$(session_dir hostk kl)
[ -n "$R" ] || fail "no hostk/kl-DATE in the relay daemon's output"
nk=$(ls "$T"/local | grep -c '^kernel_cpu')
[ "$nk" -gt 0 ] || fail "no kernel stream in the local copy"
# after the empty packet that announced each stream, packet by packet: the same headers
# (packet_size aside) and content, packet_size the content rounded up to 8 bytes (the kernel's
# packets are that size already), the index entries alike; the program's streams too
"$PY" "$(dirname "$0")/../lib/relay_copy.py" "$T/local" "$R" || fail "the relay's copy is not the local one, packet by packet"
echo "  $nk kernel streams and the program's, packet by packet"
echo PASS
