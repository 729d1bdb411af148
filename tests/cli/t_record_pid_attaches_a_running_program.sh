# SPDX-License-Identifier: MIT
# t_record_pid_attaches_a_running_program.sh - `tracebuf record --pid` of a program linked with
# libtracebuf and started without tracebuf (no TRACEBUF_SESSION): it attaches at the program's
# next event; every event written after the attach is in the trace or counted lost, exactly
# (tb-verify, babeltrace2); the recorder killed -9 while attached leaves the program running,
# its output as without tracebuf, and a second `record --pid` takes the session over and gets
# the later events, the identity holding over both recorders; threads and signal handlers
# racing to attach, into a fallback session, leave a whole trace; a C++ program's spans are
# traced from the attach on; a normal stop switches the
# program's events off and a third `record --pid` switches them on again.  Refused, clearly:
# no such process, a process without libtracebuf, a program traced under `record`, a recorder
# without ptrace permission.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
# quiet FILE: the program printed nothing to stderr (the sanitizer runtime's own line when
# it symbolizes a stack for a suppression, "LLVMSymbolizer: error reading file", is not the program's)
quiet() { ! grep -v '^LLVMSymbolizer: ' "$1" | grep -q .; }
trap 'touch "$T/stop1" "$T/stop1b" "$T/stop2" "$T/stop3" "$T/stop4" "$T/stop5" "$T/stop6" "$T/stop7" 2>/dev/null; kill -9 $(jobs -p) 2>/dev/null; wait; rm -rf "$T"' EXIT

# the first seq, the last seq and the count of workload:tick events in trace DIR
seqs() { "$CLI" dump "$1" | sed -n 's/.*workload:tick: { thread = 0, seq = \([0-9]*\),.*/\1/p' |
	awk 'NR == 1 { lo = $1; hi = $1 } { if ($1 < lo) lo = $1; if ($1 > hi) hi = $1; n++ } END { print lo, hi, n + 0 }'; }
written_of() { awk '/^written:/{print $2}' "$1"; }
# the program's events written so far in session $1 (tracebuf stat: the total of "written")
session_written() { "$CLI" stat "$1" 2>/dev/null | awk '$1 == "total" { print $2; exit } END { if (NR == 0) print 0 }'; }
written_at_least() { [ "$(session_written "$1")" -ge "$2" ]; } # (re-evaluated by wait_for)
# until ERRFILE says PATTERN, or the recorder RPID ended (then fails, saying ERRFILE)
loaded() { grep -q libtracebuf /proc/$1/maps 2>/dev/null; }
bt2_check() { # DIR WRITTEN: babeltrace2 reads delivered + discarded == WRITTEN, says nothing else
	command -v babeltrace2 > /dev/null || { echo "  (babeltrace2 absent: not checked)"; return 0; }
	babeltrace2 "$1" > "$T/bt.out" 2> "$T/bt.err" || { cat "$T/bt.err"; fail "babeltrace2 on $1"; }
	# stderr: its discarded-events warnings and the one line about the loss array (docs/CTF.md)
	local bad n d
	bad=$(grep -v -E '^WARNING: Tracer discarded [0-9]+ events? between|^$' "$T/bt.err" |
		grep -v -c 'User field found in packet header: ignoring: name="tb_lost_by_cause"')
	[ "$bad" -eq 0 ] || { cat "$T/bt.err"; fail "babeltrace2 warned on $1"; }
	n=$(grep -c 'workload:tick:' "$T/bt.out")
	d=$(babeltrace2 -c sink.text.details -p 'with-metadata=no,color="never"' "$1" 2> /dev/null |
		sed -n 's/.*Discarded events (\([0-9,]*\) events\{0,1\}).*/\1/p' | tr -d , | awk '{ s += $1 } END { print s + 0 }')
	echo "  babeltrace2: delivered $n, discarded $d"
	[ $((n + d)) = "$2" ] || fail "babeltrace2 finds $n + $d events in $1, written after the attach $2"
}

# ---- 1. one attach, until the program ends --------------------------------------------------
env -u TRACEBUF_SESSION "$WL" --rate 2000 --events 100000000 --until-file "$T/stop1" > "$T/w1.out" 2> "$T/w1.err" &
w1=$!
wait_for loaded $w1 || fail "workload not started"
"$CLI" record --pid $w1 -o "$T/d1" 2> "$T/r1.err" &
r1=$!
wait_said "process $w1 .* attached" "$T/r1.err" $r1 "no attach"
S=$(sed -n 's/.*(session \([^;]*\);.*/\1/p' "$T/r1.err")
[ -f "$S" ] || { cat "$T/r1.err"; fail "no session file named"; }
case $S in "$TRACEBUF_SHM_DIR"/tracebuf-pid-$w1-*) ;; *) fail "session $S not named after the pid in the shm dir";; esac
# some events after the attach, then the program stops writing and exits
wait_for written_at_least "$S" 500 || fail "no event written after the attach"
touch "$T/stop1"
wait $w1 || fail "workload failed"
wait $r1 || { cat "$T/r1.err"; fail "record --pid did not end well with its program"; }
quiet "$T/w1.err" || { cat "$T/w1.err"; fail "the program printed to stderr"; }
N=$(written_of "$T/w1.out")
read -r lo hi n <<< "$(seqs "$T/d1")"
echo "run 1: written $N, trace seq $lo..$hi ($n events)"
[ "$n" -gt 0 ] && [ "$lo" -gt 0 ] || fail "the trace holds no events, or events from before the attach ($lo)"
[ "$hi" = $((N - 1)) ] || fail "the last event written ($((N - 1))) is not in the trace (last $hi)"
# written after the attach = delivered + counted lost, exactly
"$VERIFY" --written $((N - lo)) "$T/d1" || fail "identity after the attach"
bt2_check "$T/d1" $((N - lo))
[ ! -e "$S" ] || fail "the session file of an ended program was left"

# ---- 1b. threads and signal handlers racing to attach, a fallback (no rseq) session --------
# 4 threads and their SIGALRM handlers (every 200 us) all write while the attach runs: one
# attaches, the others drop their event; the trace is whole (tb-verify: no duplicate, every
# payload checks), the program's own count goes on to the end
env -u TRACEBUF_SESSION "$WL" --threads 4 --signals --signal-us 200 --rate 2000 --events 100000000 \
	--until-file "$T/stop1b" > "$T/w1b.out" 2> "$T/w1b.err" &
w1b=$!
wait_for loaded $w1b || fail "workload 1b not started"
TRACEBUF_NO_RSEQ=1 "$CLI" record --pid $w1b -o "$T/d1b" 2> "$T/r1b.err" &
r1b=$!
wait_said "process $w1b .* attached" "$T/r1b.err" $r1b "no attach (threads, signals, fallback)"
S1b=$(sed -n 's/.*(session \([^;]*\);.*/\1/p' "$T/r1b.err")
"$CLI" stat "$S1b" | grep -q "protocol fallback" || fail "TRACEBUF_NO_RSEQ=1: not a fallback session"
wait_for written_at_least "$S1b" 2000 || fail "no event written after the attach (1b)"
touch "$T/stop1b"
wait $w1b || fail "workload 1b failed"
wait $r1b || { cat "$T/r1b.err"; fail "record --pid (1b)"; }
quiet "$T/w1b.err" || { cat "$T/w1b.err"; fail "the program printed to stderr (1b)"; }
[ -n "$(written_of "$T/w1b.out")" ] || fail "the program did not finish its count (1b)"
"$VERIFY" "$T/d1b" || fail "trace of a program attached by threads and signal handlers"
[ "$("$CLI" dump "$T/d1b" | grep -c 'workload:signal:')" -gt 0 ] || fail "no event of a signal handler after the attach"

# ---- 2. recorder killed -9; a second record --pid takes over ---------------------------------
env -u TRACEBUF_SESSION "$WL" --rate 2000 --events 100000000 --until-file "$T/stop2" > "$T/w2.out" 2> "$T/w2.err" &
w2=$!
wait_for loaded $w2 || fail "workload 2 not started"
"$CLI" record --pid $w2 -o "$T/d2" 2> "$T/r2.err" &
r2=$!
wait_said "process $w2 .* attached" "$T/r2.err" $r2 "no attach (2)"
S2=$(sed -n 's/.*(session \([^;]*\);.*/\1/p' "$T/r2.err")
wait_for written_at_least "$S2" 300 || fail "no event written after attach (2)"
kill -9 $r2; wait $r2 2>/dev/null
# the program goes on without a recorder: its events still count up
at_kill=$(session_written "$S2")
wait_for written_at_least "$S2" $((at_kill + 300)) || { "$CLI" stat "$S2"; fail "the program stopped writing when its recorder was killed"; }
kill -0 $w2 || fail "the program died with its recorder"
# a second record --pid: a busy recorder is refused while the first runs, a dead one is taken over
"$CLI" record --pid $w2 -o "$T/d2" 2> "$T/r2b.err" &
r2b=$!
wait_said "taken over" "$T/r2b.err" $r2b "no takeover"
"$CLI" record --pid $w2 -o "$T/dx" 2> "$T/busy.err" && fail "a third recorder of a recorded program was accepted"
grep -q "recorded already by process $r2b" "$T/busy.err" || { cat "$T/busy.err"; fail "busy refusal says why"; }
at_take=$(session_written "$S2")
wait_for written_at_least "$S2" $((at_take + 300)) || fail "no event after the takeover"
touch "$T/stop2"
wait $w2 || fail "workload 2 failed"
wait $r2b || { cat "$T/r2b.err"; fail "second record --pid"; }
quiet "$T/w2.err" || { cat "$T/w2.err"; fail "the program printed to stderr (2)"; }
[ "$(sed 's/[0-9][0-9]*/N/g' "$T/w2.out")" = "$(printf 'workload: wall_ns N cpu_ns N proc_cpu_ns N\nwritten: N')" ] ||
	{ cat "$T/w2.out"; fail "the program's output changed"; }
N2=$(written_of "$T/w2.out")
read -r lo2 hi2 n2 <<< "$(seqs "$T/d2")"
echo "run 2: written $N2, trace seq $lo2..$hi2 ($n2 events) over a killed and a second recorder"
[ "$hi2" = $((N2 - 1)) ] || fail "the second recorder did not get the last events ($hi2, written $N2)"
"$VERIFY" --written $((N2 - lo2)) "$T/d2" || fail "identity over the killed and the second recorder"
bt2_check "$T/d2" $((N2 - lo2))

# ---- 3. a normal stop switches the events off; record --pid again switches them on ---------
env -u TRACEBUF_SESSION "$WL" --rate 2000 --events 100000000 --until-file "$T/stop3" > "$T/w3.out" 2> "$T/w3.err" &
w3=$!
wait_for loaded $w3 || fail "workload 3 not started"
"$CLI" record --pid $w3 -o "$T/d3" 2> "$T/r3.err" &
r3=$!
wait_said "process $w3 .* attached" "$T/r3.err" $r3 "no attach (3)"
S3=$(sed -n 's/.*(session \([^;]*\);.*/\1/p' "$T/r3.err")
wait_for written_at_least "$S3" 100 || fail "no event (3)"
kill -INT $r3; wait $r3 || { cat "$T/r3.err"; fail "record --pid stopped with ^C"; }
grep -q "runs on; its events are off" "$T/r3.err" || { cat "$T/r3.err"; fail "the stop does not say the program runs on"; }
kill -0 $w3 || fail "the program died when its recorder stopped"
"$VERIFY" "$T/d3" > /dev/null || fail "trace of a stopped record --pid"
"$CLI" record --pid $w3 -o "$T/d3b" 2> "$T/r3b.err" &
r3b=$!
wait_said "taken over" "$T/r3b.err" $r3b "no takeover (3)"
dumped_at_least() { [ "$("$CLI" dump "$1" 2>/dev/null | grep -c workload:tick)" -ge "$2" ]; }
wait_for dumped_at_least "$T/d3b" 100 ||
	fail "the events switched off at the stop did not come back"
touch "$T/stop3"
wait $w3; wait $r3b || { cat "$T/r3b.err"; fail "record --pid (3b)"; }

# ---- 3b. a C++ program (spans in scope objects), when a C++ compiler is here ---------------
CXX=$(command -v g++ || command -v clang++ || true)
san=$(sed -n 's/^TB_SANITIZE:STRING=//p' "${TB_BUILD:-/nonexistent}/CMakeCache.txt" 2> /dev/null)
if [ -n "$CXX" ] && [ -n "${TB_BUILD:-}" ] && [ -n "${TB_SRC:-}" ]; then
	cat > "$T/cxx.cpp" <<'CXXEOF'
#include <cstdio>
#include <unistd.h>
#include <tracebuf/event.h>
TB_SPAN(cxx, step, (u64, n))
int main(int argc, char **argv)
{
	unsigned long n = 0;
	for (; access(argv[argc - 1], F_OK) != 0; n++) {
		TB_SPAN_SCOPE(cxx, step, n);
		usleep(500);
	}
	std::printf("written: %lu\n", n);
	return 0;
}
CXXEOF
	$CXX -std=c++17 -O2 ${san:+-fsanitize=$san} -I"$TB_SRC/include" "$T/cxx.cpp" -o "$T/cxx" -L"$TB_BUILD" -ltracebuf \
		-Wl,-rpath,"$TB_BUILD" || fail "building the C++ program"
	env -u TRACEBUF_SESSION "$T/cxx" "$T/stop7" > "$T/w7.out" 2> "$T/w7.err" &
	w7=$!
	wait_for loaded $w7 || fail "C++ program not started"
	"$CLI" record --pid $w7 -o "$T/d7" 2> "$T/r7.err" &
	r7=$!
	wait_said "process $w7 .* attached" "$T/r7.err" $r7 "no attach of the C++ program"
	S7=$(sed -n 's/.*(session \([^;]*\);.*/\1/p' "$T/r7.err")
	wait_for written_at_least "$S7" 200 || fail "no span written after the attach (C++)"
	touch "$T/stop7"; wait $w7 || fail "C++ program failed"
	wait $r7 || { cat "$T/r7.err"; fail "record --pid of the C++ program"; }
	quiet "$T/w7.err" || { cat "$T/w7.err"; fail "the C++ program printed to stderr"; }
	"$CLI" dump "$T/d7" > "$T/d7.txt" || fail "dump of the C++ program's trace"
	nb=$(grep -c 'cxx:step_begin:' "$T/d7.txt"); ne=$(grep -c 'cxx:step_end:' "$T/d7.txt")
	if command -v babeltrace2 > /dev/null; then # (tb-verify knows the workload's classes only)
		babeltrace2 "$T/d7" 2> "$T/bt7.err" | grep -c 'cxx:step_' > "$T/bt7.n" || true
		[ "$(cat "$T/bt7.n")" = $((nb + ne)) ] || { cat "$T/bt7.err"; fail "babeltrace2 reads $(cat "$T/bt7.n") C++ events, dump $((nb + ne))"; }
	fi
	echo "C++: $nb span begins, $ne ends after the attach"
	[ "$nb" -ge 100 ] && [ $((ne - nb)) -ge 0 ] && [ $((ne - nb)) -le 1 ] ||
		fail "C++ spans: $nb begins, $ne ends (an end may come without its begin: the attach between them)"
	last=$(sed -n 's/.*cxx:step_begin: { n = \([0-9]*\) }.*/\1/p' "$T/d7.txt" | tail -1)
	[ "$last" = $(($(written_of "$T/w7.out") - 1)) ] || fail "the C++ program's last span ($last) is not in the trace"
else
	echo "  (no C++ compiler: the C++ program not checked)"
fi

# ---- 4. refusals --------------------------------------------------------------------------
for bad in "--pid 0" "--pid abc" "--pid -5" "--pid 1 --attach x" "--pid 1 --session $T/x.tb" "--pid 1 -- true" \
	"--pid 1 --snapshot-dir $T/x"; do
	"$CLI" record $bad -o "$T/u" 2> "$T/u.err"; rc=$?
	[ $rc = 2 ] && grep -q -- "--pid\|--snapshot-dir" "$T/u.err" || { cat "$T/u.err"; fail "record $bad: exit $rc, want a usage error (2)"; }
done
sh -c 'exit 0' & gone=$!; wait $gone
"$CLI" record --pid $gone -o "$T/e1" 2> "$T/e1.err" && fail "a pid that does not exist was accepted"
grep -q "no such process" "$T/e1.err" || { cat "$T/e1.err"; fail "missing pid: message"; }
sleep 1000 & nolib=$!
"$CLI" record --pid $nolib -o "$T/e2" 2> "$T/e2.err" && fail "a process without libtracebuf was accepted"
grep -q "does not use libtracebuf" "$T/e2.err" || { cat "$T/e2.err"; fail "no library: message"; }
kill $nolib
"$CLI" record -q -o "$T/e3trace" -- "$WL" --rate 100 --events 100000000 --until-file "$T/stop4" > /dev/null 2>&1 &
rec=$!
child_loaded() { traced=$(pgrep -P $rec) && loaded "$traced"; }
traced=
wait_for child_loaded || fail "the workload traced under record did not start"
"$CLI" record --pid $traced -o "$T/e3" 2> "$T/e3.err" && fail "a program traced under record was accepted"
grep -q "traced already.*record --attach" "$T/e3.err" || { cat "$T/e3.err"; fail "traced program: message"; }
touch "$T/stop4"; wait $rec || fail "the recorded workload"
# a program without rseq (glibc.pthread.rseq=0) refuses an rseq session: said, with the way
# out, exit 1, nothing left; it runs on and TRACEBUF_NO_RSEQ=1 attaches it
env -u TRACEBUF_SESSION GLIBC_TUNABLES=glibc.pthread.rseq=0 "$WL" --rate 1000 --events 100000000 \
	--until-file "$T/stop6" > "$T/w6.out" 2> "$T/w6.err" &
w6=$!
wait_for loaded $w6 || fail "workload 6 not started"
# (where the recorder's own session uses no rseq, valgrind's memcheck for one, the attach
# succeeds and the recorder runs with the program: it is waited for in the background)
TRACEBUF_NO_RSEQ= "$CLI" record --pid $w6 -o "$T/e5" 2> "$T/e5.err" &
r5=$!
wait_for eval "! kill -0 $r5 2> /dev/null || grep -q 'process $w6 .* attached' '$T/e5.err'" ||
	fail "record --pid of a program without rseq neither refused nor attached"
if grep -q "process $w6 .* attached" "$T/e5.err"; then
	echo "  (the recorder's own session uses no rseq here: rseq refusal not checked)"
	touch "$T/stop6"
	wait $r5 || { cat "$T/e5.err"; fail "record --pid of a program without rseq (attached) exited $?"; }
else
	wait $r5 && fail "a refused attach exited 0"
	grep -q "process $w6 (.*) refused the session: .*rseq.*TRACEBUF_NO_RSEQ=1" "$T/e5.err" ||
		{ cat "$T/e5.err"; fail "a program without rseq: message"; }
	[ -z "$(ls "$TRACEBUF_SHM_DIR" | grep "tracebuf-pid-$w6-")" ] || fail "a refused session was left"
	TRACEBUF_NO_RSEQ=1 "$CLI" record --pid $w6 -o "$T/d6" 2> "$T/r6.err" &
	r6=$!
	wait_said "process $w6 .* attached" "$T/r6.err" $r6 "no attach with TRACEBUF_NO_RSEQ=1 after a refusal"
fi
touch "$T/stop6"; wait $w6 || fail "the program without rseq failed"
quiet "$T/w6.err" || { cat "$T/w6.err"; fail "the program without rseq printed to stderr"; }
wait

# refused ptrace access (a recorder without CAP_SYS_PTRACE, the program with it): says the pid,
# errno and what to do, and creates nothing.  Needs root and setpriv to set it up.
env -u TRACEBUF_SESSION "$WL" --rate 100 --events 100000000 --until-file "$T/stop5" > /dev/null 2>&1 &
w5=$!
wait_for loaded $w5 || fail "workload 5 not started"
cap=$(sed -n 's/^CapPrm:[[:space:]]*//p' /proc/$w5/status)
if command -v setpriv > /dev/null && setpriv --bounding-set=-sys_ptrace true 2> /dev/null &&
	[ $(( 0x$cap & (1 << 19) )) -ne 0 ]; then
	setpriv --bounding-set=-sys_ptrace "$CLI" record --pid $w5 -o "$T/e4" 2> "$T/e4.err" &&
		fail "a recorder without ptrace permission was accepted"
	grep -q "process $w5 (.*): Operation not permitted: attaching needs ptrace permission.*ptrace_scope.*PR_SET_PTRACER" "$T/e4.err" ||
		{ cat "$T/e4.err"; fail "refused ptrace access: message"; }
else
	echo "  (ptrace refusal not checked: needs root with CAP_SYS_PTRACE and setpriv)"
fi
touch "$T/stop5"; wait $w5
for e in e1 e2 e3 e4; do [ ! -e "$T/$e" ] || fail "a refused record --pid left $T/$e"; done
[ -z "$(ls "$TRACEBUF_SHM_DIR" | grep tracebuf-pid-)" ] || { ls -l "$TRACEBUF_SHM_DIR"; fail "a refused record --pid left a session"; }
echo PASS
