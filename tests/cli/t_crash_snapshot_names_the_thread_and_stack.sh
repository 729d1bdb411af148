# SPDX-License-Identifier: MIT
# t_crash_snapshot_names_the_thread_and_stack.sh - a program under the flight recorder that
# crashes in a second thread, inside main -> crash_worker -> crash_level1 -> crash_level2
# (frame pointers: tests/tools/crash_chain.c), leaves a crash snapshot whose trigger.json names
# the crashing thread (the tid the program printed, its name), the signal, its code and address,
# and the stack with crash_level2, crash_level1, crash_worker in that order, written by
# libtracebuf's crash handler (src/producer/crash.c); record's exit status is the one it had
# without the handler (139, 134).  The same for abort() (SIGABRT) and for a kill -SEGV from
# outside (SI_USER, the sender's pid).  A program's own SIGSEGV handler is kept (installed before
# the library: ours is not installed; after: it replaces ours) and runs; TRACEBUF_CRASH_HANDLER=0
# installs none.  Under AddressSanitizer (its SIGSEGV handler is there first) nothing changes for
# SIGSEGV and abort() still gets its stack.  babeltrace2 reads the snapshot with no warning;
# report and snapshots show the crash.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
. "$(dirname "$0")/../lib/flight.sh"
need_bt2
command -v babeltrace2 > /dev/null || { echo "SKIP: babeltrace2 not installed"; exit 77; }
CHAIN=${TB_CRASH_CHAIN:?}
ASAN=${TB_CRASH_CHAIN_ASAN:-}
CHAIN_IS_ASAN=0
# a TB_SANITIZE build (address or thread): the program's sanitizer has its SIGSEGV handler first
if grep -q '__asan_init\|__tsan_init' "$CHAIN"; then CHAIN_IS_ASAN=1; ASAN=$CHAIN; fi
SYMS=1
ldd "$CLI" | grep -q 'libdw' || { SYMS=0; echo "note: tracebuf built without libdw: addresses only, names not checked"; }

# check_crash SNAPDIR TID SIGNAL CODE_NAME: trigger.json names the thread, the signal and its code,
# and its stack holds crash_level2, crash_level1, crash_worker in that order
check_crash() {
	local j=$1/trigger.json
	[ "$(json_field "$j" '["trigger"]["kind"]')" = crash ] || { cat "$j"; fail "$3: kind is not crash"; }
	[ "$(json_field "$j" '["trigger"]["signal"]')" = "$3" ] || { cat "$j"; fail "$3: the signal is not named"; }
	[ "$(json_field "$j" '["trigger"]["tid"]')" = "$2" ] || { cat "$j"; fail "$3: the tid is not the crashing thread's ($2)"; }
	[ "$(json_field "$j" '["trigger"]["crash"]["thread"]')" = crash-worker ] || { cat "$j"; fail "$3: the thread's name"; }
	[ "$(json_field "$j" '["trigger"]["crash"]["code_name"]')" = "$4" ] || { cat "$j"; fail "$3: the code is not $4"; }
	[ "$SYMS" = 1 ] || return 0
	"$PY" - "$j" <<'PYEOF' || { cat "$j"; fail "$3: the stack does not hold crash_level2, crash_level1, crash_worker in that order"; }
import json, sys
st = json.load(open(sys.argv[1]))["trigger"]["crash"]["stack"]
names = [(f["symbol"] or "").split("+")[0] for f in st]
want = ["crash_level2", "crash_level1", "crash_worker"]
i = names.index(want[0])
sys.exit(0 if names[i:i + 3] == want and all(" (tb-crash-chain" in st[i + k]["symbol"] for k in range(3)) else 1)
PYEOF
}

# run_crash MODE DIR: record CMD in a flight recorder; sets rc, pid, tid
run_crash() {
	"$CLI" record -q --mode overwrite --snapshot-dir "$2" -- "$CHAIN" "$1" > "$T/$1.out" 2> "$T/$1.err"
	rc=$?
	pid=$(sed -n 's/^pid: //p' "$T/$1.out")
	tid=$(sed -n 's/^tid: //p' "$T/$1.out")
	[ -n "$tid" ] && [ "$tid" != "$pid" ] || { cat "$T/$1.out" "$T/$1.err"; fail "$1: the program did not say its worker's tid"; }
}

one_snapshot() {
	mapfile -t snaps < <(snapshots "$1")
	[ ${#snaps[@]} -eq 1 ] || { ls "$1"; cat "$T"/*.err; fail "$2: ${#snaps[@]} snapshots (want 1)"; }
	snap=${snaps[0]}
}

if [ $CHAIN_IS_ASAN = 0 ]; then
	echo "== SIGSEGV in a second thread: its tid, SEGV_MAPERR at 0x0, the stack"
	run_crash segv "$T/segv"
	[ $rc -eq 139 ] || { cat "$T/segv.err"; fail "record exited $rc (want 139, CMD's SIGSEGV)"; }
	one_snapshot "$T/segv" segv
	check_crash "$snap" "$tid" SIGSEGV SEGV_MAPERR
	[ "$(json_field "$snap/trigger.json" '["trigger"]["crash"]["addr"]')" = 0x0 ] || fail "si_addr is not 0"
	[ "$(json_field "$snap/trigger.json" '["trigger"]["pid"]')" = "$pid" ] || fail "the pid"
	snap_events "$snap" > "$T/bt"
	grep -q "tracebuf:crash: .*signo = 11, code = 1, tid = $tid, addr = 0," "$T/bt" || fail "babeltrace2 does not show the crash event"
	grep -q 'tracebuf:crash_map: .*path = ".*tb-crash-chain"' "$T/bt" || fail "babeltrace2 does not show the program's mapping"
	"$CLI" dump "$snap/trace" | grep -q "tracebuf:crash: .*tid = $tid" || fail "dump does not show the crash event"
	"$CLI" report "$snap" > "$T/report" || fail "report of the snapshot"
	grep -q "^Snapshot 1: crash trigger 'SIGSEGV' .*thread $tid (crash-worker)" "$T/report" || { cat "$T/report"; fail "report's trigger line"; }
	grep -q "^Crash: SIGSEGV (SEGV_MAPERR) at address 0x0, in thread $tid (crash-worker) of pid $pid" "$T/report" ||
		{ cat "$T/report"; fail "report does not show the crash"; }
	[ "$SYMS" = 0 ] || grep -A1 'crash_level2+0x' "$T/report" | grep -q 'crash_level1+0x' || { cat "$T/report"; fail "report's stack"; }
	"$CLI" report --format json "$snap" > "$T/report.json" || fail "report --format json of the snapshot"
	"$PY" - "$T/report.json" "$tid" <<'PYEOF' || { cat "$T/report.json"; fail "report's JSON does not hold the crash"; }
import json, sys
c = json.load(open(sys.argv[1]))["crash"]
sys.exit(0 if c["tid"] == int(sys.argv[2]) and c["signal"] == "SIGSEGV" and c["addr"] == "0x0"
         and c["code_name"] == "SEGV_MAPERR" and len(c["stack"]) >= 3 else 1)
PYEOF
	"$CLI" snapshots "$T/segv" > "$T/list" || fail "snapshots"
	grep -q "crash: thread $tid (crash-worker), SEGV_MAPERR at 0x0" "$T/list" || { cat "$T/list"; fail "the listing does not show the crash"; }

	echo "== kill -SEGV from outside: SI_USER, the sender, the waiting thread's stack"
	"$CLI" record -q --mode overwrite --snapshot-dir "$T/kill" -- "$CHAIN" wait > "$T/wait.out" 2> "$T/wait.err" &
	rec=$!
	wait_said waiting "$T/wait.out" $rec "the program did not start waiting"
	pid=$(sed -n 's/^pid: //p' "$T/wait.out")
	tid=$(sed -n 's/^tid: //p' "$T/wait.out")
	kill -SEGV "$pid"
	wait $rec
	rc=$?
	[ $rc -eq 139 ] || { cat "$T/wait.err"; fail "kill -SEGV: record exited $rc (want 139)"; }
	one_snapshot "$T/kill" kill
	check_crash "$snap" "$tid" SIGSEGV SI_USER
	[ "$(json_field "$snap/trigger.json" '["trigger"]["crash"]["sender_pid"]')" = $$ ] || { cat "$snap/trigger.json"; fail "the sender's pid"; }
	snap_events "$snap" > /dev/null

	echo "== a program's own SIGSEGV handler: kept, and it runs"
	"$CLI" record -q --mode overwrite --snapshot-dir "$T/own" -- "$CHAIN" own > "$T/own.out" 2> "$T/own.err"
	rc=$?
	[ $rc -eq 42 ] && grep -q 'own handler ran' "$T/own.out" || { cat "$T/own.out" "$T/own.err"; fail "own handler installed in main: exit $rc"; }
	grep -q 'sigsegv at main: other' "$T/own.out" || fail "libtracebuf's handler was not there before the program's (attached)"
	"$CLI" record -q --mode overwrite --snapshot-dir "$T/own2" -- "$CHAIN" own-early > "$T/own2.out" 2> "$T/own2.err"
	rc=$?
	[ $rc -eq 42 ] && grep -q 'own handler ran' "$T/own2.out" || { cat "$T/own2.out"; fail "own handler installed first: exit $rc"; }
	grep -q 'sigsegv at main: own' "$T/own2.out" || { cat "$T/own2.out"; fail "libtracebuf replaced a handler installed before it"; }
	[ "$(snapshots "$T/own2" | wc -l)" -eq 0 ] || fail "a snapshot of a program that exited 42"

	echo "== TRACEBUF_CRASH_HANDLER=0: none installed; the crash snapshot as before (tid null)"
	TRACEBUF_CRASH_HANDLER=0 "$CLI" record -q --mode overwrite --snapshot-dir "$T/off" -- "$CHAIN" own > "$T/off.out" 2>&1
	grep -q 'sigsegv at main: default' "$T/off.out" || { cat "$T/off.out"; fail "a handler despite TRACEBUF_CRASH_HANDLER=0"; }
	TRACEBUF_CRASH_HANDLER=0 "$CLI" record -q --mode overwrite --snapshot-dir "$T/off2" -- "$CHAIN" segv > /dev/null 2>&1
	[ $? -eq 139 ] || fail "TRACEBUF_CRASH_HANDLER=0: record's exit status"
	one_snapshot "$T/off2" off
	[ "$(json_field "$snap/trigger.json" '["trigger"]["tid"]')" = None ] || { cat "$snap/trigger.json"; fail "a tid without the handler"; }
	! grep -q '"crash": {' "$snap/trigger.json" || fail "crash details without the handler"
fi

if [ $CHAIN_IS_ASAN = 0 ]; then
	echo "== record --pid: the handler is installed at the attach; the crash snapshot names the thread"
	TB_LIB=$(cd "$(dirname "$0")/../lib" && pwd)
	env -u TRACEBUF_SESSION CRASH_CHAIN_START="$T/go" "$PY" "$TB_LIB/parent.py" hold "$T/rel" \
		"$CHAIN" segv > "$T/pid.out" 2> "$T/pid.err" &
	par=$!
	wait_for grep -q '^tid: ' "$T/pid.out" || fail "the program did not start"
	pid=$(sed -n 's/^pid: //p' "$T/pid.out")
	tid=$(sed -n 's/^tid: //p' "$T/pid.out")
	"$CLI" record --pid "$pid" --mode overwrite --snapshot-dir "$T/pid" 2> "$T/rpid.err" &
	rec=$!
	wait_said "recording process $pid" "$T/rpid.err" $rec "record --pid did not start"
	touch "$T/go"
	wait $rec
	touch "$T/rel"
	wait $par
	one_snapshot "$T/pid" "record --pid"
	check_crash "$snap" "$tid" SIGSEGV SEGV_MAPERR
	snap_events "$snap" > /dev/null
fi

echo "== abort(): SIGABRT, its thread and the stack through libc's frames"
if [ $CHAIN_IS_ASAN = 0 ]; then
	run_crash abort "$T/abort"
	[ $rc -eq 134 ] || { cat "$T/abort.err"; fail "abort: record exited $rc (want 134)"; }
	one_snapshot "$T/abort" abort
	check_crash "$snap" "$tid" SIGABRT SI_TKILL
	snap_events "$snap" > /dev/null
fi

CXX_CHAIN=${TB_CRASH_CHAIN_CXX:-}
if [ -n "$CXX_CHAIN" ] && [ $CHAIN_IS_ASAN = 0 ]; then
	echo "== C++: a std::thread in app::Worker::run -> level1 -> level2(int), names demangled"
	"$CLI" record -q --mode overwrite --snapshot-dir "$T/cxx" -- "$CXX_CHAIN" > "$T/cxx.out" 2> "$T/cxx.err"
	rc=$?
	[ $rc -eq 139 ] || { cat "$T/cxx.err"; fail "C++: record exited $rc (want 139)"; }
	tid=$(sed -n 's/^tid: //p' "$T/cxx.out")
	one_snapshot "$T/cxx" "C++"
	j=$snap/trigger.json
	[ "$(json_field "$j" '["trigger"]["tid"]')" = "$tid" ] || { cat "$j"; fail "C++: the tid"; }
	if [ "$SYMS" = 1 ]; then
		"$PY" - "$j" <<'PYEOF' || { cat "$j"; fail "C++: the stack does not hold app::Worker::level2(int), level1(), run() in that order"; }
import json, sys
st = json.load(open(sys.argv[1]))["trigger"]["crash"]["stack"]
names = [(f["symbol"] or "").rsplit("+0x", 1)[0] for f in st]
want = ["app::Worker::level2(int)", "app::Worker::level1()", "app::Worker::run()"]
i = names.index(want[0]) if want[0] in names else -1
sys.exit(0 if i >= 0 and names[i:i + 3] == want else 1)
PYEOF
	fi
	snap_events "$snap" > /dev/null
elif [ $CHAIN_IS_ASAN = 0 ]; then
	echo "note: no C++ compiler here: the C++ case is not run"
fi

if [ -n "$ASAN" ]; then
	echo "== a sanitizer's SIGSEGV handler is there first: it reports and exits as without tracebuf"
	"$ASAN" segv > /dev/null 2> "$T/asan0.err"
	want=$?
	"$CLI" record -q --mode overwrite --snapshot-dir "$T/asan" -- "$ASAN" segv > /dev/null 2> "$T/asan.err"
	rc=$?
	[ $rc -eq $want ] || { cat "$T/asan.err"; fail "under ASan: record exited $rc, the program alone $want"; }
	# ASan's report (UBSan's first, in a TB_SANITIZE=address,undefined build: a store to NULL)
	said=$(grep -m1 -o 'ERROR: AddressSanitizer: SEGV on unknown address\|runtime error: store to null pointer\|ThreadSanitizer: SEGV on unknown address' "$T/asan0.err")
	[ -n "$said" ] || { cat "$T/asan0.err"; fail "the sanitized program alone did not report its crash"; }
	grep -q "$said" "$T/asan.err" || { cat "$T/asan.err"; fail "under record, the sanitizer's report ($said) is missing"; }
	[ "$(snapshots "$T/asan" | wc -l)" -eq 0 ] || fail "under ASan: a crash snapshot of an exit"
	echo "== ... and abort() (the sanitizer leaves SIGABRT alone) gets the crash handler"
	CHAIN=$ASAN run_crash abort "$T/asan_abort"
	[ $rc -eq 134 ] || { cat "$T/abort.err"; fail "ASan abort: record exited $rc (want 134)"; }
	one_snapshot "$T/asan_abort" "ASan abort"
	j=$snap/trigger.json
	[ "$(json_field "$j" '["trigger"]["tid"]')" = "$tid" ] || { cat "$j"; fail "ASan abort: the tid"; }
	[ "$SYMS" = 0 ] || grep -q '"symbol": "crash_level2+0x[0-9a-f]* (tb-crash-chain' "$j" || { cat "$j"; fail "ASan abort: the stack"; }
	snap_events "$snap" > /dev/null
else
	echo "note: no AddressSanitizer here: the ASan cases are not run"
fi
echo PASS
