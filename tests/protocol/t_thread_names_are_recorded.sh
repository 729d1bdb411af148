# SPDX-License-Identifier: MIT
# t_thread_names_are_recorded.sh - a thread's name reaches every reader, whichever way the
# program names it: before its first event (pthread_setname_np of itself), after (prctl
# PR_SET_NAME, longer than the kernel keeps), by another thread (pthread_setname_np of
# another), the main thread renamed after its first event, and a forked child that inherits
# a name.  `report` (text and JSON), the Chrome export and babeltrace2 (the
# tracebuf:thread_name events) must end with each thread's last name; a program whose
# threads keep the program's name writes no name record at all.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
PY=$(command -v python3) || { echo "SKIP: python3 (reads the JSON outputs)"; exit 77; }
TN=${TB_THREAD_NAMES:?}

"$CLI" record -q -o "$T/tr" -- "$TN" > "$T/expect" 2> "$T/err" || { cat "$T/err"; fail "record"; }
[ "$(wc -l < "$T/expect")" = 5 ] || { cat "$T/expect"; fail "the program printed 5 threads"; }

echo "== report --format json: each thread's last name"
"$CLI" report --format json "$T/tr" > "$T/r.json" || fail "report --format json"
"$PY" - "$T/r.json" "$T/expect" <<'PY' || fail "report's thread names"
import json, sys
rep = json.load(open(sys.argv[1]))
got = {t["tid"]: t["thread"] for t in rep["threads"]}
for line in open(sys.argv[2]):
    tid, name = line.split()
    if got.get(int(tid)) != name:
        sys.exit(f"tid {tid}: report says {got.get(int(tid))!r}, the program set {name!r} (all: {got})")
print("report: names ok for", len(got), "threads")
PY

echo "== report (text): the thread column"
"$CLI" report "$T/tr" > "$T/r.txt" || fail "report"
while read -r tid name; do
	grep -Eq " $tid +[0-9,]+ +[0-9,.]+ +$name\$" "$T/r.txt" || { cat "$T/r.txt"; fail "report text: tid $tid as $name"; }
done < "$T/expect"

echo "== convert --to chrome: the last thread_name of each tid"
"$CLI" convert --to chrome -o "$T/c.json" "$T/tr" > /dev/null || fail "convert --to chrome"
"$PY" - "$T/c.json" "$T/expect" <<'PY' || fail "chrome thread names"
import json, sys
doc = json.load(open(sys.argv[1]))
last = {}
for e in doc["traceEvents"]:
    if e.get("ph") == "M" and e.get("name") == "thread_name":
        last[e["tid"]] = e["args"]["name"]
for line in open(sys.argv[2]):
    tid, name = line.split()
    if last.get(int(tid)) != name:
        sys.exit(f"tid {tid}: chrome's last thread_name is {last.get(int(tid))!r}, want {name!r}")
print("chrome: names ok")
PY

echo "== babeltrace2: the tracebuf:thread_name events"
if command -v babeltrace2 > /dev/null; then
	babeltrace2 "$T/tr" > "$T/bt.txt" 2> "$T/bt.err" || { cat "$T/bt.err"; fail "babeltrace2 reads the trace"; }
	while read -r tid name; do
		# the last name record of that tid
		got=$(sed -n "s/.*tracebuf:thread_name: .*{ tid = $tid, name = \"\(.*\)\" }\$/\1/p" "$T/bt.txt" | tail -1)
		[ "$got" = "$name" ] || { grep thread_name "$T/bt.txt"; fail "babeltrace2: tid $tid named '$got', want '$name'"; }
	done < "$T/expect"
	# every tn:ev event is there: names do not displace events
	[ "$(grep -c ' tn:ev: ' "$T/bt.txt")" = 7 ] || fail "babeltrace2: 7 tn:ev events"
else
	echo "(babeltrace2 not installed: that reader not checked)"
fi

echo "== threads that keep the program's name write no name record"
"$CLI" record -q -o "$T/w" -- "$WL" --threads 2 --events 1000 > /dev/null 2> "$T/werr" || { cat "$T/werr"; fail "record workload"; }
"$CLI" dump "$T/w" > "$T/w.txt" || fail "dump"
! grep -q "tracebuf:thread_name" "$T/w.txt" || fail "unnamed threads wrote tracebuf:thread_name records"
[ "$(wc -l < "$T/w.txt")" = 2000 ] || fail "the workload's 2000 events, nothing else"
echo "ok"
